"""Seed-generation benchmark: cold annotation of both corpora, warm seed generation for all 25 LCs.

Usage: python benchmarks/seeds.py [--cold]
  --cold  also time the one-off spaCy annotation (in a temporary cache directory).
Prints per-LC seed counts next to TOSEM Table 8/9 and the timings (goal: warm < 10 s for all 25 LCs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LOAD_CORPORA = "from alict_core.data.corpus import load_corpus; load_corpus('sentiment'); load_corpus('hate_speech')"

WARM = """
import time
t0 = time.perf_counter()
from alict_core.data.corpus import load_corpus
from alict_core.seeds import find_seeds
from alict_core.lcspec import load_task_specs
total = 0
for task in ("sentiment", "hate_speech"):
    corpus = load_corpus(task)
    for spec in load_task_specs(task):
        total += len(find_seeds(spec, corpus).seeds)
print(f"{time.perf_counter() - t0:.2f} {total}")
"""


def cold_annotation_seconds() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ALICT_CACHE_DIR": tmp}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", LOAD_CORPORA], env=env, check=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    if args.cold:
        print(f"cold annotation of SST + HateXplain: {cold_annotation_seconds():.1f} s")
    subprocess.run([sys.executable, "-c", LOAD_CORPORA], check=True)
    out = subprocess.run([sys.executable, "-c", WARM], check=True, capture_output=True, text=True).stdout.split()
    print(f"warm seed generation, every LC (the paper's 25 and the extensions), fresh process "
          f"(imports + cache reads included): {out[0]} s, {out[1]} seeds (goal < 10 s)")

    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec import load_task_specs
    from alict_core.seeds import find_seeds

    print(f"\n{'LC':<18}{'matches':>9}{'candidates (all)':>18}{'paper seeds':>13}")
    for task in ("sentiment", "hate_speech"):
        corpus = load_corpus(task)
        for spec in load_task_specs(task):  # paper counts from each spec's `paper:` block (TOSEM Tables 8/9)
            result = find_seeds(spec, corpus, max_seeds=1)
            paper = spec.paper.seeds if spec.paper and spec.paper.seeds is not None else "-"
            print(f"{spec.id:<18}{result.n_matches:>9}{result.n_candidates:>18}{paper:>13}")


if __name__ == "__main__":
    main()
