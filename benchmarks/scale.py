"""Scale benchmarks for streaming runs (issue #16); prints ratios, never asserts.

    python benchmarks/scale.py [--sizes 10000,100000,1000000] [--quick] [--lc sentiment-lc01]

(1) memory vs suite size: peak RSS of ``run_streaming`` (local executor) on synthetic cases of one LC
    (``alict_core.suites.synthetic``) with a lexicon model (vader) at every size, and with the MiniLM
    classifier (minilm-sst) at the sizes ≤ 100k; ratio vs the smallest size (goal ≤ 1.5×).
(2) throughput: ``processes`` and ``ray`` with 2 workers vs ``local``, and ``ray`` with 1 worker vs ``local``
    (overhead goal ≤ 15 %), on ``--throughput-n`` cases of ``--throughput-model``.
(3) per-case cost of each model (worker-seconds per case in steady state) → the simulated multi-node plan of
    docs/SCALING.md (``--plan``).

Every measurement runs in a fresh subprocess (its own peak RSS: ``VmHWM`` from /proc, falling back to
``ru_maxrss``), with a cold prediction cache and a run folder in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from alict_core.runner.stream import run_streaming
from alict_core.suites.synthetic import base_cases, iter_synthetic_cases

args = json.loads(sys.argv[1])
bases = base_cases(args["task"], args["lc"], seed=0)
marks = []
def progress(done, total, message):
    if total:
        marks.append((time.perf_counter(), done))
start = time.perf_counter()
folder = run_streaming(iter_synthetic_cases(args["task"], args["lc"], args["n"], seed=0, bases=bases),
                       [args["model"]], run_dir=Path(args["tmp"]) / "run", shard_size=args["shard_size"],
                       executor=args["executor"], workers=args["workers"], batch_size=args["batch_size"],
                       cache_root=Path(args["tmp"]) / "cache", progress=progress)
seconds = time.perf_counter() - start
try:
    hwm_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
except (OSError, StopIteration):
    hwm_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
done = [m for m in marks if m[1] > 0]
steady = None
if len(done) >= 2 and done[-1][0] > done[0][0]:  # after the first shard: workers started, models loaded
    steady = (done[-1][1] - done[0][1]) / (done[-1][0] - done[0][0])
print(json.dumps({"n": args["n"], "seconds": round(seconds, 2), "peak_rss_mb": round(hwm_kb / 1024, 1),
                  "cases_per_s": round(args["n"] / seconds, 1),
                  "steady_cases_per_s": round(steady, 1) if steady else None,
                  "shards": len(list((folder / "results").glob("part-*.parquet")))}))
"""


def measure(n: int, model: str, *, task: str, lc: str, executor: str = "local", workers: int = 1,
            shard_size: int = 10_000, batch_size: int = 64, timeout: int = 3600) -> dict | None:
    """One run in a fresh subprocess; its figures, or None (the error is printed)."""
    with tempfile.TemporaryDirectory(prefix="alict-scale-") as tmp:
        spec = {"n": n, "model": model, "task": task, "lc": lc, "executor": executor, "workers": workers,
                "shard_size": shard_size, "batch_size": batch_size, "tmp": tmp}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        try:
            out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                                 cwd=ROOT, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"  {executor}×{workers} {model} n={n}: timed out after {timeout}s")
            return None
    if out.returncode:
        print(f"  {executor}×{workers} {model} n={n} failed:\n{out.stderr[-1500:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def memory(sizes: list[int], args: argparse.Namespace) -> None:
    print("(1) peak RSS of run_streaming (local executor) vs suite size; goal ≤ 1.5× the smallest")
    for model, limit in (("vader", max(sizes)), ("minilm-sst", args.minilm_max)):
        first = None
        for n in [s for s in sizes if s <= limit]:
            got = measure(n, model, task=args.task, lc=args.lc, shard_size=args.shard_size)
            if got is None:
                continue
            first = first or got
            print(f"  {model:11s} {n:>9,d} cases: peak {got['peak_rss_mb']:7.1f} MB  "
                  f"ratio {got['peak_rss_mb'] / first['peak_rss_mb']:.2f}×  ({got['seconds']:.1f} s, "
                  f"{got['cases_per_s']:.0f} cases/s, {got['shards']} shards)")


def throughput(args: argparse.Namespace) -> dict[str, dict]:
    print(f"(2) throughput on {args.throughput_n:,d} cases of {args.throughput_model} "
          f"(shards of {args.throughput_shard}); wall time of the whole run, worker start and model loads included")
    runs = {}
    for executor, workers in (("local", 1), ("processes", 2), ("ray", 2), ("ray", 1)):
        got = measure(args.throughput_n, args.throughput_model, task=args.task, lc=args.lc, executor=executor,
                      workers=workers, shard_size=args.throughput_shard)
        if got is not None:
            runs[f"{executor}×{workers}"] = got
    base = runs.get("local×1")
    for key, got in runs.items():
        line = f"  {key:12s} wall {got['seconds']:7.1f} s  {got['cases_per_s']:7.1f} cases/s"
        if key == "local×1" and got.get("steady_cases_per_s"):
            line += f"  (steady after the first shard {got['steady_cases_per_s']:.1f} cases/s)"
        if base and key != "local×1":
            line += f"  speed-up vs local {base['seconds'] / got['seconds']:.2f}×"
        print(line)
    if base and "ray×1" in runs:
        ray1 = runs["ray×1"]
        print(f"  ray×1 overhead vs local: {ray1['seconds'] / base['seconds'] - 1:+.1%} (goal ≤ +15 %)")
    print("  (executors compare by wall time: Ray Data hands results back in bursts, so per-shard rates mislead)")
    return runs


def plan(args: argparse.Namespace) -> None:
    """(3) per-case cost here → the simulated 4-node plan (figures and assumptions as in docs/SCALING.md)."""
    print(f"(3) per-case cost (local executor, 1 worker, steady state, {args.plan_n:,d} cases)")
    costs = {}
    for model in ("vader", "minilm-sst"):
        got = measure(args.plan_n, model, task=args.task, lc=args.lc, shard_size=max(1, args.plan_n // 4))
        if got and got.get("steady_cases_per_s"):
            costs[model] = 1.0 / got["steady_cases_per_s"]
            print(f"  {model:11s} {costs[model] * 1000:7.2f} ms per case per CPU worker")
    if "minilm-sst" not in costs:
        return
    suite = {"sentiment LC (paper)": 533_575, "hate speech suite (paper)": 1_600_000}
    base_cost = costs["minilm-sst"]
    print(f"  simulated plan: 4 nodes × {args.gpu_workers} GPU actors; MiniLM cost here "
          f"{base_cost * 1000:.2f} ms/case/CPU core, model cost ×{args.model_factor} for a base-size transformer, "
          f"GPU speed-up ×{args.gpu_speedup} per actor (assumptions, see docs/SCALING.md)")
    actors = 4 * args.gpu_workers
    per_case_gpu = base_cost * args.model_factor / args.gpu_speedup
    for name, n in suite.items():
        hours = n * args.models * per_case_gpu / actors / 3600
        shards = max(actors * 4, -(-n // 10_000))
        print(f"  {name:27s} {n:>9,d} cases × {args.models} models: ≈ {hours:.2f} h on {actors} actors, "
              f"shard size {-(-n // shards):,d} ({shards} shards, ≥ 4 per actor)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="suite sizes for (1), comma-separated")
    parser.add_argument("--quick", action="store_true", help="sizes 2000,20000 (MiniLM 2000), 1000 throughput cases")
    parser.add_argument("--task", default="sentiment")
    parser.add_argument("--lc", default="sentiment-lc01", help="the LC whose seeds the synthetic cases come from")
    parser.add_argument("--shard-size", type=int, default=10_000)
    parser.add_argument("--minilm-max", type=int, default=100_000, help="largest size run with minilm-sst in (1)")
    parser.add_argument("--throughput-n", type=int, default=4000)
    parser.add_argument("--throughput-model", default="minilm-sst")
    parser.add_argument("--throughput-shard", type=int, default=250)
    parser.add_argument("--plan-n", type=int, default=2000)
    parser.add_argument("--gpu-workers", type=int, default=1, help="GPU actors per node in the simulated plan")
    parser.add_argument("--models", type=int, default=4, help="models in the simulated plan")
    parser.add_argument("--model-factor", type=float, default=8.0,
                        help="cost of a base-size transformer vs MiniLM-L6 (2× the layers, 2× the width ≈ 8× FLOPs)")
    parser.add_argument("--gpu-speedup", type=float, default=100.0, help="one GPU actor vs one CPU core")
    parser.add_argument("--skip", default="", help="parts to skip: memory,throughput,plan")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.minilm_max, args.throughput_n, args.plan_n = "2000,20000", 2000, 1000, 1000
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    skip = set(args.skip.split(","))
    if "memory" not in skip:
        memory(sizes, args)
    if "throughput" not in skip:
        throughput(args)
    if "plan" not in skip:
        plan(args)


if __name__ == "__main__":
    main()
