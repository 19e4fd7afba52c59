"""Large runs in the app: first render of the Failures and Report pages on a 1M-case sharded run (goal < 3 s).

    python benchmarks/bench_bigrun.py [--cases 1000000] [--models 1] [--shard-size 50000]

Writes a synthetic sharded run folder (``tests/sharded_run.py``: results/part-*.parquet, progress.json,
summary.csv, meta.json) into a temporary run store, then times with AppTest, in-process: the first render of the
Failures page (aggregates, heatmap, the first page of failing rows), a second page of rows, and the Report page.
Also times ``RunReader`` calls on their own and the HTML report. Prints seconds, the ratio to the 3 s goal
(ratio < 1 meets it) and the peak RSS. Script time, not browser paint: the browser adds its own constant.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

GOAL_S = 3.0


def timed(label: str, step, goal: float | None = GOAL_S):
    started = time.perf_counter()
    value = step()
    seconds = time.perf_counter() - started
    ratio = f"  ratio {seconds / goal:.2f}" if goal else ""
    print(f"{label:<44} {seconds:7.2f} s{ratio}", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=1)
    parser.add_argument("--shard-size", type=int, default=50_000)
    args = parser.parse_args()

    from sharded_run import write_sharded_run

    from alict_core.report import render_reader_report
    from alict_core.runner.reader import RowFilter, RunReader

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        models = tuple(f"m{i + 1}" for i in range(args.models))
        counts = timed(f"write {args.cases:,} cases × {args.models} model(s)", lambda: write_sharded_run(
            root / "bigbench", args.cases, shard_size=args.shard_size, models=models), goal=None)
        print(f"  {counts['n_rows']:,} rows in {counts['n_shards']} parts")
        reader = RunReader.open(root / "bigbench")
        timed("reader: aggregate table (cube)", reader.cube)
        timed("reader: count failing rows", lambda: reader.count(RowFilter(outcome="fails")))
        timed("reader: failing rows 50,000–50,100", lambda: reader.page(RowFilter(outcome="fails"), 50_000, 100))
        timed("reader: pass-to-fail count (per-part join)", lambda: reader.count(RowFilter(pass_to_fail=True)))
        html = timed("HTML report (summary + sample)", lambda: render_reader_report(reader))
        print(f"  report size {len(html) / 1024:.0f} KB")

        from streamlit.testing.v1 import AppTest

        from alict_app import runs

        runs.runs_root = lambda: root  # the app's run store: the temporary one
        at = timed("app start (home page)", lambda: AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
                   .run(), goal=None)
        at.query_params["run"] = "bigbench"
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
        at.query_params["run"] = "bigbench"
        at.run()
        at.switch_page("pages/failures.py")
        timed("Failures page, first render (cold)", at.run)
        assert not at.exception, [e.value for e in at.exception]
        at.number_input(key="big_page").set_value(2)
        timed("Failures page, next page of rows", at.run)
        at.switch_page("pages/report.py")
        timed("Report page, first render (cold)", at.run)
        assert not at.exception, [e.value for e in at.exception]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
