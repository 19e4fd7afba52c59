"""Real browser (headless Chromium): the review loop end to end.

A sharded run in the app's run store → "Create review task" from it on the Review page → two reviewers judge
every case with the number keys → the page's statistics say what the write-back would exclude → the
confirmation turns it on → a later run leaves out only the case both reviewers rejected (and its expansion),
not the one a single reviewer rejected.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from alict_core.review.store import dispose_engines
from alict_core.review.writeback import RejectionFilter
from alict_core.runner import build_cases, run_streaming
from alict_core.runner.stream import group_by_seed
from tests.browser_sync import CHROMIUM, ScriptState, launch_chromium, start_app

pytestmark = [pytest.mark.slow, pytest.mark.browser]
REPO = Path(__file__).resolve().parent.parent
WAIT = 120_000  # ms: a cold Streamlit page on two loaded cores
POSITIVE = {"kind": "label", "labels": ["positive"], "tolerance": None}
WORDS = ("zero", "one", "two")
SEEDS = [{"id": f"sentiment-lc04-s{i}", "lc_id": "sentiment-lc04", "task": "sentiment",
          "text": f"a good film number {w}", "test_type": "MFT", "expected": POSITIVE} for i, w in enumerate(WORDS)]
EXPANSIONS = [{"id": f"sentiment-lc04-s{i}-x0", "seed_id": f"sentiment-lc04-s{i}",
               "text": f"a really good film number {w}"} for i, w in enumerate(WORDS)]
BOTH_REJECT = "a good film number zero"  # ann and bob: the label is wrong → rejected under the default rule (2)
ANN_REJECTS = "a good film number one"  # only ann: one reviewer never rejects a case alone
STEP_BUTTONS = ("strongly not relevant", "strongly negative", "strongly not consistent")  # relevance, label, validity


def case_ids(folder: Path) -> set[str]:
    return {json.loads(line)["case_id"] for part in (folder / "cases").glob("part-*.jsonl")
            for line in part.read_text(encoding="utf-8").splitlines()}


def show_page(page, tmp_path: Path) -> None:
    """On a failure: the page's text, its inputs and the server's log, printed (pytest shows them) and kept."""
    inputs = page.evaluate("[...document.querySelectorAll('input, textarea')].map(e => e.value)")
    text = page.inner_text("body") + f"\ninputs: {inputs}"
    (tmp_path / "page.txt").write_text(text)
    script = ScriptState.of(page)
    lines = sorted(script.trace + script.clicks(), key=lambda line: float(line.split()[0]))
    timers = ("auto=True", "fragments=['", "script_finished 3")  # the sidebar's timed fragment runs: only the last
    trace = "\n".join([line for line in lines[:-20] if not any(t in line for t in timers)][-60:] + lines[-20:])
    print("== page at the failure\n" + text + "\n== server log\n" + (tmp_path / "server.log").read_text()[-4000:]
          + "\n== script runs (websocket)\n" + trace)


def judge_everything(page, script: ScriptState, base: str, reviewer: str, n_items: int) -> None:
    """Judge every case of the reviewer's queue with the keys 1–5 (label 1 where this reviewer rejects)."""
    page.goto(f"{base}/review?review=journey&reviewer={reviewer}", timeout=WAIT)
    page.get_by_role("button", name="Start reviewing (take a set)").click(timeout=WAIT)  # a view never claims
    for i in range(1, n_items + 1):
        page.get_by_text(f"Case {i} of {n_items}").first.wait_for(timeout=WAIT)
        script.wait_idle()
        line = page.locator("p", has_text=f"Case {i} of {n_items}").first.inner_text()  # "Case i of n · set 1 · seed"
        kind = "expansion" if line.strip().endswith("expansion") else "seed"
        text = page.locator("h3", has_text="film").first.inner_text().strip()
        rejects = text == BOTH_REJECT or (reviewer == "ann" and text == ANN_REJECTS)
        keys = ["5", "1" if rejects else "5"] + (["5"] if kind == "expansion" else [])
        for step, (key, first_caption) in enumerate(zip(keys, STEP_BUTTONS, strict=False), start=1):
            page.get_by_text(f"({step}/{len(keys)}; press 1–5)").first.wait_for(timeout=WAIT)
            # this step's buttons (and so their keys) are mounted: consecutive steps never share captions
            page.get_by_role("button", name=first_caption).wait_for(timeout=WAIT)
            script.wait_idle()
            page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page
            page.keyboard.press(key)
    page.get_by_text("All your cases are judged").first.wait_for(timeout=WAIT)


def test_run_review_task_two_reviewers_confirm_and_a_later_run_excludes_only_agreed(tmp_path, monkeypatch):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    env = {**os.environ, "ALICT_REVIEW_DB_URL": url, "ALICT_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONUNBUFFERED": "1"}
    for key in ("ALICT_REVIEW_DB_URL", "ALICT_CACHE_DIR"):  # this process runs and reads the same stores
        monkeypatch.setenv(key, env[key])
    runs_root = tmp_path / "cache" / "runs"
    cases = group_by_seed(build_cases(SEEDS, EXPANSIONS))  # a seed and its expansions one after the other
    request = {"key": "journey", "status": "done", "started": 0, "finished": time.time(),
               "request": {"task": "sentiment", "lc_ids": ["sentiment-lc04"],
                           "models": [{"name": "vader", "kwargs": {}, "label": "vader"}]}}
    first = run_streaming(cases, ["vader"], root=runs_root, shard_size=2, extra_files={"request.json": request})
    assert not (first / "cases.jsonl").exists() and len(list((first / "cases").glob("part-*.jsonl"))) > 1  # sharded

    proc, base = start_app(REPO, tmp_path / "server.log", env)
    try:
        with sync_api.sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page()
            script = ScriptState(page)
            # 1. a review task from the (sharded) run, on the page
            page.goto(f"{base}/review", timeout=WAIT)
            page.get_by_label("Review task name").wait_for(timeout=WAIT)
            page.get_by_label("Review task name").fill("journey")
            page.get_by_label("Sets").fill("1")
            page.get_by_role("button", name="Create review task").click()
            page.get_by_text("Review task 'journey': 3 seeds + 3 expansions in 1 sets, sampled from run",
                             exact=False).first.wait_for(timeout=WAIT)
            # 2. two reviewers judge every case with the keys
            try:
                judge_everything(page, script, base, "ann", 6)
                judge_everything(page, script, base, "bob", 6)
            except Exception:
                show_page(page, tmp_path)
                raise
            try:
                # 3. the statistics say what the write-back would exclude, and nothing is excluded yet
                page.get_by_text("Validity of this task so far").first.click()
                page.get_by_text("12 judgements of 6 cases by 2 reviewer(s)").first.wait_for(timeout=WAIT)
                page.get_by_text("Write-back off").first.wait_for(timeout=WAIT)
                excluded = "1 case(s), and every expansion of the 1 rejected seed(s)"
                page.get_by_text(excluded).first.wait_for(timeout=WAIT)
                unconfirmed = run_streaming(cases, ["vader"], root=runs_root, shard_size=2, exclude=RejectionFilter())
                assert case_ids(unconfirmed) == {c.case_id for c in cases}
                # 4. the confirmation turns the write-back on: not without the tick; ticked once, the tick holds
                script.wait_idle()
                confirm = page.get_by_role("button", name="Confirm write-back")
                script.note("click Confirm write-back")
                confirm.click()
                script.note("clicked")
                page.get_by_text("Tick the box above to confirm").first.wait_for(timeout=WAIT)
                script.wait_idle()
                page.get_by_text("Write-back off").first.wait_for(timeout=WAIT)
                tick = "Leave these 1 case(s) out of every later Sentiment (SST) run"
                sure = page.get_by_role("checkbox", name=tick)
                sync_api.expect(sure).not_to_be_checked()
                page.get_by_text(tick).first.click()  # its label
                sync_api.expect(sure).to_be_checked()
                script.wait_idle()
                assert sure.is_checked()  # ticked once, it holds: in the form a tick makes no rerun that could undo it
                page.get_by_role("button", name="Confirm write-back").click()
                page.get_by_text("Write-back on").first.wait_for(timeout=WAIT)
            except Exception:
                show_page(page, tmp_path)
                raise
            browser.close()
        # 5. a later run leaves out the agreed rejection and its expansion, nothing else
        later = run_streaming(cases, ["vader"], root=runs_root, shard_size=2, exclude=RejectionFilter())
        assert case_ids(later) == {c.case_id for c in cases} - {"sentiment-lc04-s0", "sentiment-lc04-s0-x0"}
        assert json.loads((later / "meta.json").read_text())["extra"]["review_excluded"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        dispose_engines()
