"""Yield and speed of the expansion acceptance policy, and a seeded sample of accepted expansions to judge.

    python benchmarks/expand_policy.py [--task sentiment] [--seeds 10] [--sample 40] [--sample-seed 27] [--out DIR]

For the first ``--seeds`` seeds of every LC: fills, accepted, accepted per seed and seconds per LC, fills and
accepted per inserted POS, the expand() wall time against the raw MLM forward on every masked sentence
Algorithm 1 yields; writes ``DIR/sample.csv`` (a seeded random sample of accepted expansions with an empty
``valid`` column for a reader) and ``DIR/accepted.jsonl``. Uses only what every version of ``expand()`` has,
so the same script measures an older checkout (``PYTHONPATH=<old checkout> python benchmarks/expand_policy.py``)
on the same seeds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

if "alict_core" not in sys.modules:  # run from a checkout without installing (PYTHONPATH wins when set)
    sys.path.append(str(Path(__file__).resolve().parent.parent))


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--task", default="sentiment")
    args.add_argument("--seeds", type=int, default=10, help="seeds per LC")
    args.add_argument("--sample", type=int, default=40, help="accepted expansions to sample for judging")
    args.add_argument("--sample-seed", type=int, default=27)
    args.add_argument("--out", default=None, help="folder for sample.csv and accepted.jsonl (default: a temp dir)")
    opts = args.parse_args()

    from alict_core.common.csvsafe import write_csv_rows
    from alict_core.data.corpus import load_corpus
    from alict_core.expansion import expand
    from alict_core.expansion.constraints.fill_checks import masked_tokens
    from alict_core.expansion.search import default_masker
    from alict_core.lcspec import load_task_specs
    from alict_core.mlm import get_suggester
    from alict_core.parsing import get_parser
    from alict_core.seeds import find_seeds

    out = Path(opts.out or tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(opts.task)
    parser, suggester, masker = get_parser(), get_suggester(), default_masker()
    jobs = [(spec, find_seeds(spec, corpus).seeds[: opts.seeds]) for spec in load_task_specs(opts.task)]
    jobs = [(spec, seeds) for spec, seeds in jobs if seeds]
    expand(jobs[0][1][:1], jobs[0][0], parser, suggester, use_cache=False, out_dir=out / "cache")  # warm-up

    accepted, per_pos, lines = [], {}, []
    started = time.perf_counter()
    for spec, seeds in jobs:
        t = time.perf_counter()
        result = expand(seeds, spec, parser, suggester, use_cache=False, out_dir=out / "cache")
        seconds = time.perf_counter() - t
        rows = result.accepted()
        accepted += rows
        for row in result.rows:
            pos = "+".join((row.get("masked") or {}).get("mask_tags") or []) or "?"
            entry = per_pos.setdefault(pos, [0, 0])
            entry[0] += 1
            entry[1] += int(bool(row["accepted"]))
        lines.append((spec.id, len(seeds), len(result.rows), len(rows), len({r["seed_id"] for r in rows}), seconds))
    wall = time.perf_counter() - started

    texts = []
    for _spec, seeds in jobs:
        for seed, tree in zip(seeds, parser.parse_batch([s.text.split() for s in seeds]), strict=True):
            texts += [" ".join(masked_tokens(m)[0]) for m in masker(seed.id, tree, 5, 2)]
    raw = float("inf")
    forward = getattr(suggester, "forward_only", None)
    for _ in range(2 if forward else 0):
        t = time.perf_counter()
        forward(texts)  # type: ignore[misc]
        raw = min(raw, time.perf_counter() - t)

    print(f"{'lc':<18}{'seeds':>6}{'fills':>7}{'accepted':>9}{'per seed':>9}{'seeds+':>7}{'s':>7}")
    for lc, n, fills, acc, expanded, seconds in lines:
        print(f"{lc:<18}{n:>6}{fills:>7}{acc:>9}{acc / n:>9.2f}{expanded:>7}{seconds:>7.1f}")
    n_seeds = sum(line[1] for line in lines)
    print(f"{'all':<18}{n_seeds:>6}{sum(x[2] for x in lines):>7}{len(accepted):>9}"
          f"{len(accepted) / max(n_seeds, 1):>9.2f}{sum(x[4] for x in lines):>7}{wall:>7.1f}")
    print(f"\n  {'inserted POS':<14}{'fills':>7}{'accepted':>9}")
    for pos, (fills, acc) in sorted(per_pos.items(), key=lambda kv: -kv[1][0]):
        print(f"  {pos:<14}{fills:>7}{acc:>9}")
    if forward:
        print(f"\nexpand() {wall:.1f} s; raw MLM forward on all {len(texts)} Algorithm-1 masked sentences {raw:.1f} s; "
              f"ratio {wall / raw:.2f}")

    keep = ("id", "lc_id", "seed_id", "seed_text", "text", "words", "score")
    with open(out / "accepted.jsonl", "w", encoding="utf-8") as handle:
        for row in accepted:
            handle.write(json.dumps({k: row[k] for k in keep} | {"pos": row["masked"].get("mask_tags")}) + "\n")
    sample = random.Random(opts.sample_seed).sample(accepted, min(opts.sample, len(accepted)))
    columns = ["id", "lc_id", "inserted", "pos", "seed_text", "text", "valid"]
    write_csv_rows(out / "sample.csv", ({"id": row["id"], "lc_id": row["lc_id"], "inserted": " ".join(row["words"]),
                                         "pos": "+".join(row["masked"].get("mask_tags") or []),
                                         "seed_text": row["seed_text"], "text": row["text"], "valid": ""}
                                        for row in sample), columns)  # the one formula-safe CSV writer
    print(f"\nsample of {len(sample)} accepted expansions to judge: {out / 'sample.csv'}")


if __name__ == "__main__":
    main()
