"""Real browser: on the Review page the number keys 1–5 score a case and ← goes back (headless Chromium)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from alict_core.review import ReviewStore, SamplingPlan, create_review_task
from alict_core.review.store import dispose_engines
from alict_core.runner import build_cases
from tests.browser_sync import CHROMIUM, ScriptState, launch_chromium, start_app

pytestmark = [pytest.mark.slow, pytest.mark.browser]
REPO = Path(__file__).resolve().parent.parent


def test_number_keys_judge_cases(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film number {i}",
              "test_type": "MFT", "expected": expected} for i in range(3)]
    store = ReviewStore(url)
    task, _ = create_review_task(store, "keys", "sentiment", build_cases(seeds), SamplingPlan(n_sets=1, k=1, size=3))
    env = {**os.environ, "ALICT_REVIEW_DB_URL": url, "PYTHONUNBUFFERED": "1"}
    proc, base = start_app(REPO, tmp_path / "server.log", env)
    try:
        with sync_api.sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page()
            script = ScriptState(page)  # a key pressed while the script reruns can be lost: wait until idle

            def press(key: str) -> None:
                script.wait_idle()
                page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page
                page.keyboard.press(key)

            page.goto(f"{base}/review?review=keys&reviewer=ann", timeout=120_000)
            page.get_by_role("button", name="Start reviewing (take a set)").click(timeout=120_000)  # views never claim
            page.get_by_text("Case 1 of 3").first.wait_for(timeout=120_000)
            page.get_by_text("(1/2; press 1–5)").first.wait_for()
            press("5")  # relevance 5 → the label question
            page.get_by_text("(2/2; press 1–5)").first.wait_for(timeout=60_000)
            press("4")  # label 4 → saved, next case
            page.get_by_text("Case 2 of 3").first.wait_for(timeout=60_000)
            press("ArrowLeft")
            page.get_by_text("Saved: relevance 5, label 4").first.wait_for(timeout=60_000)
            browser.close()
        rows = ReviewStore(url).judgements(task.id)
        assert [(r["reviewer"], r["relevance"], r["label_score"]) for r in rows] == [("ann", 5, 4)]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        dispose_engines()
