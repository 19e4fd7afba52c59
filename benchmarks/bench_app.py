"""App speed goals: first run < 3 s, warm page switches < 1 s (script time, measured with AppTest).

    python benchmarks/bench_app.py [--fake]
    python benchmarks/bench_app.py --switches 10 [--lcs 25 --models 3 --cases 100]

The second form (``--switches N``) loads a synthetic saved run (N LCs × M models, capability-first
titles, seeds and expansions with inserted words) into a temporary run folder and, with the instant
fake backends, switches to every page N times with warm caches; it prints the median and the maximum
switch time per page and their ratio to the 1 s goal.

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

PAGES = ("specs", "seeds", "expansions", "run", "failures", "compare", "report")
FIRST_RUN_GOAL_S = 3.0
SWITCH_GOAL_S = 1.0


def synthetic_run(root: Path, n_lcs: int, n_models: int, cases_per_lc: int, seed: int = 0) -> str:
    """Save a synthetic finished run (sentiment LC ids, seeds and expansions, random predictions) under ``root``."""
    import json
    import random

    import numpy as np

    from alict_core.runner import build_cases
    from alict_core.runner.run import ModelOutcome, RunResult
    from alict_core.spec import load_task_specs

    rng = random.Random(seed)
    shipped = [s.id for s in load_task_specs("sentiment")]
    lc_ids = (shipped + [f"sentiment-x{i:02d}" for i in range(len(shipped) + 1, n_lcs + 1)])[:n_lcs]
    words = ["not", "really", "very", "never", "quite", "so", "just", "hardly"]
    n_seeds = max(1, cases_per_lc * 3 // 10)
    seeds, expansions = [], []
    for lc in lc_ids:
        for i in range(n_seeds):
            seeds.append({"id": f"{lc}-s{i}", "lc_id": lc, "text": f"seed {i} of {lc} is fine", "test_type": "MFT",
                          "expected": {"kind": "label", "labels": ["neutral"]}, "capability": "Other",
                          "rule": f"rule{i % 3}", "slots": {"prefix": rng.choice(["I think", "They say", ""])}})
        for j in range(cases_per_lc - n_seeds):
            word = rng.choice(words)
            expansions.append({"id": f"{lc}-x{j}", "seed_id": f"{lc}-s{j % n_seeds}", "words": [word],
                               "text": f"seed {j % n_seeds} of {lc} is {word} fine ({j})"})
    cases = build_cases(seeds, expansions, variants_fn=lambda text: [])
    labels = ("negative", "neutral", "positive")
    outcomes = []
    for m in range(n_models):
        proba = np.random.default_rng(seed + m).dirichlet([1.0, 2.0, 1.0], size=len(cases))
        passed = proba.argmax(axis=1) == 1
        zeros = np.zeros(len(cases), dtype=np.int32)
        outcomes.append(ModelOutcome(f"model-{m}", f"synthetic-{m}", labels, proba, passed, zeros, zeros.copy(),
                                     [None] * len(cases)))
    result = RunResult(cases, outcomes)
    key = f"synthetic{n_lcs}x{n_models}"
    folder = root / key
    result.save(folder)
    request = {"task": "sentiment", "lc_ids": lc_ids, "models": [{"name": o.name, "kwargs": {}} for o in outcomes]}
    (folder / "request.json").write_text(json.dumps({"key": key, "request": request, "status": "done",
                                                     "started": 0, "finished": time.time()}))
    return key


def bench_switches(switches: int, n_lcs: int, n_models: int, cases_per_lc: int) -> None:
    """Median and max warm switch time per page over ``switches`` visits (synthetic run, fake backends)."""
    import statistics
    import tempfile

    from streamlit.testing.v1 import AppTest

    from alict_app import fakes, runs

    fakes.install()
    root = Path(tempfile.mkdtemp(prefix="alict-bench-runs-"))
    runs.runs_root = lambda: root  # in-process AppTest: the app reads runs from here
    key = synthetic_run(root, n_lcs, n_models, cases_per_lc)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=900)
    at.query_params["run"] = key
    at.run()
    for page in PAGES:  # warm every cache once
        at.switch_page(f"pages/{page}.py").run()
    times: dict[str, list[float]] = {page: [] for page in PAGES}
    for _ in range(switches):
        for page in PAGES:
            t0 = time.perf_counter()
            at.switch_page(f"pages/{page}.py").run()
            times[page].append(time.perf_counter() - t0)
    rows = len(runs.load_run(key).case_list) * n_models
    print(f"warm page switches, {switches} per page; run of {n_lcs} LCs × {n_models} models ({rows} case rows)")
    for page, values in times.items():
        median, worst = statistics.median(values), max(values)
        print(f"  {page:11s} median {median:5.2f} s  max {worst:5.2f} s  ratio of max to {SWITCH_GOAL_S:g} s goal: "
              f"{worst / SWITCH_GOAL_S:5.2f}")
    problems = [e.value for e in at.exception]
    if problems:
        print("exceptions:", problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="use the instant fake backends")
    parser.add_argument("--switches", type=int, default=0, help="time N warm switches per page on a synthetic run")
    parser.add_argument("--lcs", type=int, default=25, help="LCs of the synthetic run")
    parser.add_argument("--models", type=int, default=3, help="models of the synthetic run")
    parser.add_argument("--cases", type=int, default=100, help="cases per LC of the synthetic run (30 %% seeds)")
    args = parser.parse_args()
    if args.switches:
        bench_switches(args.switches, args.lcs, args.models, args.cases)
        return
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
    print(f"first run (Specs, corpus counts included): {first:6.2f} s  "
          f"ratio to {FIRST_RUN_GOAL_S:g} s goal: {first / FIRST_RUN_GOAL_S:5.2f}")
    for page, seconds in cold.items():
        print(f"cold  {page:18s} {seconds:6.2f} s")
    for page, seconds in warm.items():
        print(f"warm  {page:18s} {seconds:6.2f} s  ratio to {SWITCH_GOAL_S:g} s goal: {seconds / SWITCH_GOAL_S:5.2f}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if problems:
        print("exceptions:", problems)


if __name__ == "__main__":
    main()
