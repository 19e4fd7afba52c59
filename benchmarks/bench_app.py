"""App speed in a real browser: first paint and warm page switches beside an empty Streamlit page.

    python benchmarks/bench_app.py [--repeats 10] [--pages failures,run] [--seed 0] [--no-rss] [--settle 40]
    python benchmarks/bench_app.py --apptest [--fake]            script time in-process (AppTest)
    python benchmarks/bench_app.py --switches 10 [--lcs 25 --models 3 --cases 100]

The default form starts ``streamlit run app.py`` (the user's cache, models and runs) and, side by side,
a one-line Streamlit app of two empty pages in a temporary folder, and drives headless Chromium
(/usr/bin/chromium) against both. It prints medians of ``--repeats`` of: first paint of ``/`` and
``/failures`` (a fresh browser context: navigation start → the page's title visible), and warm page
switches (sidebar link click → the page's title visible and the script idle, every page visited once
before), each beside the empty app's figure and their ratio (the machine's load cancels out of the
ratio); each page's first open in the server (the visit that loads what it needs, once); task switches (the
sidebar's Task menu → the sidebar names the task's corpus and the script idle) on Specs and Failures where
asked for, the server's first one (cold) apart; then the app server's RSS after visiting the pages (every page
unless ``--pages``) on both tasks. ``/proc/loadavg`` is printed at the start and the end. The order of the
trials is shuffled with ``--seed`` (deterministic).

``--apptest`` runs the app in-process on the embedded defaults (``--fake``: the instant test backends),
visits every page cold, runs the default models on two LCs, then times each page's script again with
warm caches. ``--switches N`` loads a synthetic saved run (N LCs × M models) with the fake backends and
times N warm script runs per page (median, maximum, ratio to the 1 s goal).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the fake backends (tests/fakes.py)

PAGES = ("specs", "seeds", "expansions", "run", "failures", "compare", "report")
FIRST_RUN_GOAL_S = 3.0
SWITCH_GOAL_S = 1.0


def synthetic_run(root: Path, n_lcs: int, n_models: int, cases_per_lc: int, seed: int = 0) -> str:
    """Save a synthetic finished run (sentiment LC ids, seeds and expansions, random predictions) under ``root``."""
    import json
    import random

    import numpy as np

    from alict_core.lcspec import load_task_specs
    from alict_core.runner import build_cases
    from alict_core.runner.run import ModelOutcome, RunResult

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

    import fakes
    from streamlit.testing.v1 import AppTest

    from alict_app import runs

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

# --- the real-browser benchmark -------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# url path → (sidebar link, page title); the order of app.py's navigation
APP_PAGES = {"specs": ("Specs", "LC specs"), "seeds": ("Seeds", "Seeds"), "expansions": ("Expansions", "Expansions"),
             "lego": ("Adjunct trees", "Adjunct trees"), "run": ("Run", "Run"), "failures": ("Failures", "Failures"),
             "compare": ("Compare", "Compare"), "report": ("Report", "Report"), "review": ("Review", "Review"),
             "harden": ("Harden", "Harden")}
TASKS = ("sentiment", "hate_speech")
TASK_TITLES = {"sentiment": "Sentiment (SST)", "hate_speech": "Hate speech (HateXplain)"}  # the sidebar's menu
CORPUS_NAMES = {"sentiment": "Stanford Sentiment Treebank (SST)", "hate_speech": "HateXplain"}  # its caption
TASK_SWITCH_PAGES = ("specs", "failures")  # the task switch is timed on these, where asked for (Specs counts seeds)
EMPTY_APP = ('import streamlit as st; st.navigation([st.Page(lambda: st.title("Alpha"), title="Alpha", '
             'url_path="alpha", default=True), st.Page(lambda: st.title("Beta"), title="Beta", '
             'url_path="beta")]).run()\n')
EMPTY_PAGES = {"alpha": ("Alpha", "Alpha"), "beta": ("Beta", "Beta")}
FIRST_PAINT_GOAL_S = 1.5
BROWSER_SWITCH_GOAL_S = 0.5
WAIT_MS = 300_000  # a cold page on two loaded cores (the Expansions page loads a parser and a masked LM)


class ScriptTracker:
    """Whether a page's Streamlit script is running, and how many runs finished, from the app's websocket."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.running = True
        self.finished = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: bytes | str) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.running = True
        elif kind == "session_status_changed":
            self.running = msg.session_status_changed.script_is_running
        elif kind == "script_finished":
            self.running = False
            self.finished += 1

    def wait_idle_after(self, finished_before: int, timeout_ms: float = WAIT_MS) -> None:
        """Wait until a script run finished after ``finished_before`` runs and no run is under way."""
        deadline = time.monotonic() + timeout_ms / 1000
        while self.running or self.finished <= finished_before:
            if time.monotonic() > deadline:
                raise TimeoutError("the app's script did not finish")
            self.page.wait_for_timeout(10)  # lets Playwright deliver the websocket events


def start_server(script: Path, log: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``streamlit run script`` headless on a free port; (process, base URL) once healthy (120 s at most)."""
    import socket
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script.name, "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=script.parent, stdout=handle, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                return proc, base
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.terminate()
                raise RuntimeError(f"{script.name} did not start; see {log}") from None
            time.sleep(0.2)


def wait_title(page: Any, title: str) -> None:
    page.get_by_role("heading", name=title, exact=True).first.wait_for(state="visible", timeout=WAIT_MS)


def first_paint(browser: Any, url: str, title: str) -> float:
    """Seconds from navigation start in a fresh browser context (a new session) to the page's title visible."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        tracker = ScriptTracker(page)
        started = time.perf_counter()
        page.goto(url, wait_until="commit")
        wait_title(page, title)
        painted = time.perf_counter() - started
        tracker.wait_idle_after(0)  # the server is idle again before the next trial
        return painted
    finally:
        context.close()


class BrowserSession:
    """One browser tab on one app: page switches through the sidebar, timed to the title and the script idle."""

    def __init__(self, browser: Any, url: str, title: str, pages: dict[str, tuple[str, str]]) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.tracker = ScriptTracker(self.page)
        self.pages = pages
        self.page.goto(url)
        wait_title(self.page, title)
        self.tracker.wait_idle_after(0)
        self.current = ""

    def switch(self, name: str) -> float:
        link, title = self.pages[name]
        before = self.tracker.finished
        nav = self.page.locator('[data-testid="stSidebarNav"]')
        started = time.perf_counter()
        nav.get_by_role("link", name=link).first.click()
        wait_title(self.page, title)
        self.tracker.wait_idle_after(before)
        self.current = name
        return time.perf_counter() - started

    def switch_task(self, task: str) -> float:
        """Pick ``task`` in the sidebar's Task menu; seconds to the sidebar naming its corpus and the script idle."""
        before = self.tracker.finished
        sidebar = self.page.locator('[data-testid="stSidebar"]')
        started = time.perf_counter()
        sidebar.get_by_role("combobox", name="Task").first.click()
        self.page.get_by_role("option", name=TASK_TITLES[task], exact=True).first.click()
        sidebar.get_by_text(f"Corpus: {CORPUS_NAMES[task]}").first.wait_for(state="visible", timeout=WAIT_MS)
        self.tracker.wait_idle_after(before)
        return time.perf_counter() - started

    def close(self) -> None:
        self.context.close()


def ordered(rng: Any, names: Sequence[str], current: str) -> list[str]:
    """``names`` in a seeded random order that does not start on the current page."""
    order = list(names)
    rng.shuffle(order)
    if len(order) > 1 and order[0] == current:
        order.append(order.pop(0))
    return order


def median_line(label: str, values: list[float], empty: list[float], goal: float) -> str:
    import statistics

    app, base = statistics.median(values), statistics.median(empty)
    return (f"  {label:24s} {app:6.2f} s   empty page {base:5.2f} s   ratio {app / base:5.1f}   "
            f"goal {goal:g} s {'met' if app < goal else 'missed'}")


def bench_browser(repeats: int, pages: list[str], seed: int, rss: bool, settle_s: float = 0.0) -> None:
    """Medians of ``repeats`` first paints and warm switches, app beside the empty app; then the server's RSS."""
    import os
    import random
    import shutil
    import tempfile

    import psutil
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise SystemExit("/usr/bin/chromium is absent: apt-get install -y chromium")
    rng = random.Random(seed)
    print(f"/proc/loadavg at the start: {Path('/proc/loadavg').read_text().strip()}")
    scratch = Path(tempfile.mkdtemp(prefix="alict-bench-browser-"))
    (scratch / "empty").mkdir()
    empty_script = scratch / "empty" / "empty_app.py"
    empty_script.write_text(EMPTY_APP)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ALICT_TORCH_THREADS": "1"}
    app_proc, app_url = start_server(REPO / "app.py", scratch / "app.log", env)
    empty_proc, empty_url = start_server(empty_script, scratch / "empty.log", env)
    paints: dict[str, list[float]] = {"/": [], "/failures": [], "empty": []}
    switches: dict[str, list[float]] = {name: [] for name in pages}
    empty_switches: list[float] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            first_paint(browser, app_url + "/", APP_PAGES["specs"][1])  # warm-up: imports, corpus, caches
            first_paint(browser, app_url + "/failures", APP_PAGES["failures"][1])
            app = BrowserSession(browser, app_url + "/", APP_PAGES["specs"][1], APP_PAGES)
            app.current = "specs"
            app.page.wait_for_timeout(settle_s * 1000)  # --settle: the server's background work done first
            first_open = {name: app.switch(name)  # every page once: warm caches, models loaded
                          for name in ordered(rng, pages, app.current)}
            empty = BrowserSession(browser, empty_url + "/", "Alpha", EMPTY_PAGES)
            empty.current = "alpha"
            for repeat in range(repeats):
                trials = [("/", app_url + "/", APP_PAGES["specs"][1]),
                          ("/failures", app_url + "/failures", APP_PAGES["failures"][1]),
                          ("empty", empty_url + "/", "Alpha")]
                rng.shuffle(trials)
                for label, url, title in trials:
                    paints[label].append(first_paint(browser, url, title))
                for name in ordered(rng, pages, app.current):
                    switches[name].append(app.switch(name))
                    empty_switches.append(empty.switch("beta" if empty.current == "alpha" else "alpha"))
                print(f"repeat {repeat + 1}/{repeats} done", file=sys.stderr, flush=True)
            task_pages = [name for name in TASK_SWITCH_PAGES if name in pages]  # only the pages asked for
            task_switches: dict[str, list[float]] = {name: [] for name in task_pages}
            first_task_switch = None
            for name in task_pages:
                app.switch(name)
                for _ in range(repeats):
                    to_hate = app.switch_task("hate_speech")
                    if first_task_switch is None:  # the server's first hate-speech session: cold caches
                        first_task_switch = (name, to_hate)
                    else:
                        task_switches[name].append(to_hate)
                    task_switches[name].append(app.switch_task("sentiment"))
            app.close()
            empty.close()
            print(f"/proc/loadavg at the end: {Path('/proc/loadavg').read_text().strip()}")
            print(f"medians of {repeats} (app beside a one-line empty Streamlit app, same browser, same machine)")
            print("first paint (fresh session: navigation start → page title visible)")
            for label in ("/", "/failures"):
                print(median_line(label, paints[label], paints["empty"], FIRST_PAINT_GOAL_S))
            print("warm page switch (sidebar click → page title visible and script idle)")
            for name in pages:
                print(median_line(APP_PAGES[name][0], switches[name], empty_switches, BROWSER_SWITCH_GOAL_S))
            print("first open of each page in this server (once; loads what the page needs, e.g. the parser and MLM)")
            for name, seconds in first_open.items():
                print(f"  {APP_PAGES[name][0]:24s} {seconds:6.2f} s")
            if first_task_switch is not None:
                print("task switch (sidebar Task menu → the sidebar names the task's corpus and the script is idle)")
                name, seconds = first_task_switch
                print(f"  {APP_PAGES[name][0] + ', first (cold)':24s} {seconds:6.2f} s")
            for name, values in task_switches.items():
                if values:
                    label = f"{APP_PAGES[name][0]} (both ways)"
                    print(median_line(label, values, empty_switches, BROWSER_SWITCH_GOAL_S))
            if rss:
                for task in TASKS:  # the pages on both tasks, each task in a fresh session opened on it
                    walk = BrowserSession(browser, f"{app_url}/?task={task}", APP_PAGES["specs"][1], APP_PAGES)
                    walk.current = "specs"
                    for name in ordered(rng, pages, walk.current):
                        walk.switch(name)
                    walk.close()
                server = psutil.Process(app_proc.pid)
                children = sum(child.memory_info().rss for child in server.children(recursive=True))
                which = "every page" if set(pages) == set(APP_PAGES) else f"Specs, {', '.join(pages)}"
                print(f"app server RSS after {which} on both tasks: {server.memory_info().rss / 2**20:.0f} MB"
                      f" (child processes: {children / 2**20:.0f} MB)")
            browser.close()
    except BaseException:
        print(f"server logs kept in {scratch}", file=sys.stderr)
        raise
    finally:
        for proc in (app_proc, empty_proc):
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    shutil.rmtree(scratch, ignore_errors=True)  # the servers' logs, once every figure is printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", action="store_true", help="use the instant fake backends")
    parser.add_argument("--switches", type=int, default=0, help="time N warm switches per page on a synthetic run")
    parser.add_argument("--lcs", type=int, default=25, help="LCs of the synthetic run")
    parser.add_argument("--models", type=int, default=3, help="models of the synthetic run")
    parser.add_argument("--cases", type=int, default=100, help="cases per LC of the synthetic run (30 %% seeds)")
    parser.add_argument("--apptest", action="store_true", help="time page scripts in-process (AppTest)")
    parser.add_argument("--repeats", type=int, default=10, help="browser trials per figure (medians of these)")
    parser.add_argument("--pages", default=",".join(APP_PAGES),
                        help=f"comma-separated pages whose warm switch is timed (of {', '.join(APP_PAGES)})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the trials' order")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to wait on the first page before the pages' first opens (a user reading it)")
    parser.add_argument("--no-rss", action="store_true", help="skip visiting the pages on both tasks for the RSS")
    args = parser.parse_args()
    if args.switches:
        bench_switches(args.switches, args.lcs, args.models, args.cases)
        return
    if not args.apptest:
        pages = [name.strip() for name in args.pages.split(",") if name.strip()]
        unknown = [name for name in pages if name not in APP_PAGES]
        if unknown or not pages or args.repeats < 1:
            parser.error(f"--pages takes names of {', '.join(APP_PAGES)} (got {args.pages!r}); --repeats ≥ 1")
        bench_browser(args.repeats, pages, args.seed, rss=not args.no_rss, settle_s=max(0.0, args.settle))
        return
    from streamlit.testing.v1 import AppTest

    if args.fake:
        import fakes

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
