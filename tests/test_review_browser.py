"""Real browser: on the Review page the number keys 1–5 score a case and ← goes back (headless Chromium)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from alict_core.review import ReviewStore, SamplingPlan, create_review_task
from alict_core.review.store import dispose_engines
from alict_core.runner import build_cases
from tests.browser_sync import ScriptState

pytestmark = [pytest.mark.slow, pytest.mark.browser]
REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    port = free_port()
    env = {**os.environ, "ALICT_REVIEW_DB_URL": url, "PYTHONUNBUFFERED": "1"}
    with open(tmp_path / "server.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                    break
            except OSError:
                assert time.time() < deadline and proc.poll() is None, "streamlit did not start"
                time.sleep(0.3)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                         args=["--no-sandbox", "--disable-dev-shm-usage"])
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
