"""Real-browser test of the "Adjunct trees" page: `streamlit run` headless + headless Chromium.

Types a seed, waits for the derivation tree (a plotly chart) and the node table with its template row.
Needs Debian's chromium and the `playwright` package (skipped otherwise), like tests/test_browser.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser_sync import ScriptState
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, free_port, no_exception, see, wait_healthy, wait_idle

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parent.parent
SEED = "Sadly, the very long film bored the critics in Cannes."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium chromium-driver")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    port = free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ALICT_TORCH_THREADS": "1"}
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.port",
                str(port),
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=REPO,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_adjunct_trees_page_renders_a_tree_in_a_real_browser(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        ScriptState(page)
        page.goto(server + "/lego?task=sentiment")
        page.get_by_role("heading", name="Adjunct trees").first.wait_for(state="visible", timeout=120_000)
        wait_idle(page)
        box = page.get_by_label("… or type a sentence")
        box.fill(SEED)
        box.press("Enter")
        wait_idle(page)
        see(page, "[1] the [2] film bored the critics [3].")
        see(page, "Derivation tree (")
        plot = page.locator(".js-plotly-plot")
        plot.first.wait_for(state="visible", timeout=60_000)
        assert plot.count() == 1
        assert plot.first.locator("text", has_text="template").count() == 1  # the root's marker label
        assert plot.first.locator("text", has_text="+ Sadly").count() >= 1  # a level-1 node
        no_exception(page)
        page.screenshot(path=str(tmp_path / "lego.png"), full_page=True)
        browser.close()
