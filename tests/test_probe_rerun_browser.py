"""Real browser: the sidebar's status probe resolving redraws only the Backends panel, never the page.

The probe is held by a gate (a ``sitecustomize`` on the server's path wraps ``backends._probe_built`` so it waits
for a file the test writes), so it resolves exactly when the test says, after a press drew its message. Before,
the panel's fragment ended with a full ``st.rerun()``: a message drawn only in the run of a press vanished at a
moment set by the probe (a CI flake of the review journey).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.browser_sync import CHROMIUM, WAIT, ScriptState, launch_chromium, start_app

pytestmark = [pytest.mark.slow, pytest.mark.browser]  # after the builds: a build landing reruns the page
REPO = Path(__file__).resolve().parent.parent

GATED_PROBE = '''
import os
import time

from alict_app import backends

_probe = backends._probe_built


def _gated_probe():
    while not os.path.exists(os.environ["ALICT_TEST_PROBE_GATE"]):  # the test opens the gate when it wants
        time.sleep(0.05)
    _probe()


backends._probe_built = _gated_probe
'''


def test_the_probe_resolving_redraws_the_panel_alone_and_stops_its_timer(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(GATED_PROBE)
    gate = tmp_path / "gate"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "hook"), str(REPO)]),
           "ALICT_TEST_PROBE_GATE": str(gate), "PYTHONUNBUFFERED": "1"}
    proc, base = start_app(REPO, tmp_path / "server.log", env)
    try:
        with sync_api.sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page()
            script = ScriptState(page)
            page.goto(f"{base}/?task=sentiment", timeout=WAIT)
            page.get_by_role("heading", name="LC specs").first.wait_for(timeout=WAIT)
            script.wait_idle()
            sidebar = page.locator('[data-testid="stSidebar"]')
            sidebar.get_by_text("Backends", exact=True).first.click()  # client-side: no rerun
            panel = sidebar.locator('[data-testid="stExpander"]').filter(
                has=page.get_by_text("Backends", exact=True)).first
            sync_api.expect(panel).to_contain_text("checking", timeout=WAIT)  # the gate holds the probe
            full_runs = script.full_runs_finished
            gate.write_text("open")
            deadline = time.monotonic() + WAIT / 1000
            while not script.stopped_timers and script.full_runs_finished == full_runs:  # whichever comes first
                assert time.monotonic() < deadline, "the probe never resolved on the page"
                page.wait_for_timeout(20)  # lets Playwright deliver the websocket events; the loop waits on state
            script.wait_idle()
            assert script.full_runs_finished == full_runs, "the probe resolving reran the whole page"
            assert len(script.stopped_timers) == 1  # the panel's timer, stopped by the server
            sync_api.expect(panel).not_to_contain_text("checking", timeout=WAIT)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
