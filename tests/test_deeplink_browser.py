"""A deep link opened as a fresh server's very first request shows the app's page, not Streamlit's legacy one.

Until ``app.py`` has called ``st.navigation`` once in a process, Streamlit serves ``/failures`` from the
``pages/`` folder alone (its legacy multipage mode: no sidebar of the app, a navigation of every file there).
The server here has served nothing before the link; the page must be the app's Failures page with the link's
run and view. Uses the fake backends and a private run store (tests/test_journeys_browser.py).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser_sync import ScriptState
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, no_exception
from tests.test_journeys_browser import made_runs, selected_run, start_server, stop  # noqa: F401 - fixture

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.no_models]  # fake backends: runs beside the build

APP_NAV = ["Specs", "Seeds", "Expansions", "Adjunct trees", "Run", "Failures", "Compare", "Report", "Review",
           "Harden"]


def test_deep_link_as_the_first_request_of_a_fresh_server(made_runs, tmp_path):  # noqa: F811 - the fixture
    from playwright.sync_api import expect, sync_playwright

    root, made = made_runs
    run = made["sentiment"]
    proc, url = start_server(root, tmp_path / "server.log", made["review_db"],
                             ALICT_WORKSPACE_DIR=str(tmp_path / "workspace"))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            script = ScriptState(page)
            query = {"task": "sentiment", "run": run["key"], "outcome": "all"}
            page.goto(f"{url}/failures?{urlencode(query)}")
            page.get_by_role("heading", name="Failures", exact=True).first.wait_for(state="visible",
                                                                                  timeout=180_000)
            page.get_by_text("all cases").first.wait_for(state="visible", timeout=180_000)
            script.wait_idle()
            no_exception(page)
            nav = page.locator('[data-testid="stSidebarNav"]')
            links = [text.strip() for text in nav.get_by_role("link").all_inner_texts()]
            assert [name for name in APP_NAV if any(text.endswith(name) for text in links)] == APP_NAV, links
            assert not any(text.lower().endswith(("story", "app")) for text in links), links  # not the folder's
            sidebar = page.locator('[data-testid="stSidebar"]')
            expect(sidebar.get_by_role("combobox", name="Task")).to_have_count(1, timeout=60_000)  # app.py's sidebar
            expect(sidebar.get_by_text("Corpus: Stanford Sentiment Treebank (SST)")).to_be_visible(timeout=60_000)
            assert selected_run(page) == run["name"]
            both = page.get_by_role("radiogroup").get_by_role("radio", name="both")
            expect(both.first).to_be_checked(timeout=60_000)  # the link's outcome=all, not the default "fails"
            assert f"run={run['key']}" in page.url and "/failures" in page.url
            browser.close()
    finally:
        stop(proc)
