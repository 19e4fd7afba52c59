"""App speed goals: first run < 3 s, warm page switches < 1 s (script time, measured with AppTest).

    python benchmarks/bench_app.py [--fake]

Runs the app in-process on the embedded defaults (``--fake``: the instant test backends), visits every
page cold, runs the default models on two LCs, then times each page again with warm caches. Prints the
time and its ratio to the goal (ratio < 1 meets the goal) and the process's peak RSS.
The browser-side figures (first paint, page switches) come from ``tests/test_browser.py``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PAGES = ("specs", "seeds", "expansions", "run", "failures", "report")
FIRST_RUN_GOAL_S = 3.0
SWITCH_GOAL_S = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="use the instant fake backends")
    args = parser.parse_args()
    from streamlit.testing.v1 import AppTest

    if args.fake:
        from alict_app import fakes

        fakes.install()
    started = time.perf_counter()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=900).run()
    first = time.perf_counter() - started
    if args.fake:
        at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
        at.switch_page("pages/expansions.py").run()
        at.selectbox(key="parser_name").set_value("fake-parser")
        at.selectbox(key="mlm_name").set_value("fake-mlm")
    cold = {}
    for page in PAGES:
        t0 = time.perf_counter()
        at.switch_page(f"pages/{page}.py").run()
        cold[page] = time.perf_counter() - t0
        if page == "run":
            at.multiselect(key="run_lcs").set_value(["sentiment-lc01", "sentiment-lc04"]).run()
            t0 = time.perf_counter()
            at.button(key="run_go").click().run()
            cold["run (executing)"] = time.perf_counter() - t0
    warm = {}
    for page in PAGES:
        t0 = time.perf_counter()
        at.switch_page(f"pages/{page}.py").run()
        warm[page] = time.perf_counter() - t0
    problems = [e.value for e in at.exception]
    print(f"first run (Specs, corpus counts included): {first:6.2f} s  ratio to {FIRST_RUN_GOAL_S:g} s goal: {first / FIRST_RUN_GOAL_S:5.2f}")
    for page, seconds in cold.items():
        print(f"cold  {page:18s} {seconds:6.2f} s")
    for page, seconds in warm.items():
        print(f"warm  {page:18s} {seconds:6.2f} s  ratio to {SWITCH_GOAL_S:g} s goal: {seconds / SWITCH_GOAL_S:5.2f}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if problems:
        print("exceptions:", problems)


if __name__ == "__main__":
    main()
