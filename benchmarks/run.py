"""Runner benchmarks: throughput vs. a raw batched forward, cached re-run speed-up, 100k-case memory.

    python benchmarks/run.py [--model minilm-sst] [--n 1000] [--big 100000]

Prints ratios (goals: runner/raw throughput >= 0.85, cached re-run speed-up >= 50x, bounded memory).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BIG_SCRIPT = """
import json, sys, time
from pathlib import Path
import numpy as np
from alict_core.runner import TestCase, run_suite

class Cheap:
    name, labels, fingerprint = "cheap", ("negative", "neutral", "positive"), "cheap-bench"
    def predict_proba(self, texts):
        h = np.array([hash(t) % 1000 for t in texts], dtype=np.float64)
        p = np.stack([h, 1000 - h, np.full_like(h, 500)], 1) + 1
        return p / p.sum(1, keepdims=True)

n = int(sys.argv[1])
cases = [TestCase(case_id=f"c{i}", lc_id=f"LC{i % 10}", kind="seed" if i % 5 == 0 else "expansion",
                  seed_id=f"c{i - i % 5}", text=f"synthetic test sentence number {i} with some words",
                  expected={"kind": "label", "labels": ["positive"], "tolerance": None}, test_type="MFT")
         for i in range(n)]
start = time.perf_counter()
result = run_suite(cases, [Cheap()], batch_size=256, cache_root=Path(sys.argv[2]))
summary = result.summary()
cold = time.perf_counter() - start
start = time.perf_counter()
run_suite(cases, [Cheap()], batch_size=256, cache_root=Path(sys.argv[2])).summary()
warm = time.perf_counter() - start
# VmHWM: peak resident set of this address space (ru_maxrss would include the parent's peak before exec)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"cases": n, "cold_s": round(cold, 2), "warm_s": round(warm, 2), "peak_rss_mb": round(hwm / 1024, 1)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None, help="registered model (default: minilm-sst if built, else vader)")
    parser.add_argument("--n", type=int, default=1000, help="cases for the throughput benchmark")
    parser.add_argument("--big", type=int, default=100_000, help="cases for the memory benchmark (0 to skip)")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    from alict_core.data.sst import load_sst_sentences
    from alict_core.models import get_model
    from alict_core.models.artefacts import is_built
    from alict_core.runner import build_cases, run_suite

    name = args.model or ("minilm-sst" if is_built("classifiers") else "vader")
    model = get_model(name)
    texts = list(dict.fromkeys(r.text for r in load_sst_sentences(("test", "dev"))))[: args.n]
    seeds = [{"id": f"s{i}", "lc_id": f"LC{i % 5}", "text": t, "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}} for i, t in enumerate(texts)]
    cases = build_cases(seeds)
    model.predict_proba(texts[:8])  # warm-up (lazy init, thread pools)

    start = time.perf_counter()
    for i in range(0, len(texts), args.batch_size):
        model.predict_proba(texts[i : i + args.batch_size])
    raw = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run_suite(cases, [model], batch_size=args.batch_size, cache_root=Path(tmp))
        result.summary()
        cold = time.perf_counter() - start
        start = time.perf_counter()
        again = run_suite(cases, [model], batch_size=args.batch_size, cache_root=Path(tmp))
        again.summary()
        warm = time.perf_counter() - start
    print(f"model {name}: {len(texts)} texts, batch {args.batch_size}")
    print(f"raw batched forward   {raw:8.2f}s  ({len(texts) / raw:7.1f} texts/s)")
    print(f"runner, cold cache    {cold:8.2f}s  ({len(texts) / cold:7.1f} texts/s)")
    print(f"runner, cached re-run {warm:8.2f}s")
    print(f"throughput ratio runner/raw = {raw / cold:.3f}  (goal >= 0.85)")
    print(f"cached re-run speed-up      = {cold / warm:.1f}x  (goal >= 50x)")
    if args.big:
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([sys.executable, "-c", BIG_SCRIPT, str(args.big), tmp], capture_output=True, text=True,
                                 cwd=Path(__file__).resolve().parent.parent)
            if out.returncode:
                print(out.stderr[-2000:])
            else:
                big = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{big['cases']} cases (cheap model): cold {big['cold_s']}s, cached {big['warm_s']}s, "
                      f"peak RSS {big['peak_rss_mb']} MB")
    print(f"(this process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
