"""Real-browser journeys across pages (headless Chromium against a started Streamlit server).

The server runs ``app.py`` with the instant fake backends and a private run store holding one sentiment run
(seeds and expansions, ``fake-sentiment``) and one hate-speech run (seeds, ``fake-hate``), made before it
starts. Covered: a task switch on every page (each page follows the task: no run of the other task, run
names not ids, models under test kept per task), "Link to this view" reopened in a fresh browser context
shows the same view, and the Failures page's pass-to-fail note and headline agree with the case list.
Needs Debian's chromium and the ``playwright`` package (skipped otherwise), like tests/test_browser.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser_sync import ScriptState
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, free_port, no_exception, see, wait_healthy, wait_idle

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parent.parent
TASK_LABELS = {"sentiment": "Sentiment (SST)", "hate_speech": "Hate speech (HateXplain)"}
NAV = ["Specs", "Seeds", "Expansions", "Adjunct trees", "Run", "Failures", "Compare", "Report", "Review", "Harden"]
RUN_PAGES = ("Failures", "Report")  # pages that show one run of the task


def make_runs(root: Path) -> dict[str, dict]:
    """One small finished run per task with the fake models: {task: {"key", "name", "cases"}}."""
    import fakes

    from alict_app import runs
    from alict_core.lcspec import load_task_specs

    uninstall = fakes.install()
    saved = runs.runs_root
    runs.runs_root = lambda: root
    made = {}
    try:
        for task, model, expand in (("sentiment", "fake-sentiment", True), ("hate_speech", "fake-hate", False)):
            specs = {s.id: s for s in load_task_specs(task)}
            # 10 sentiment seeds: the tenth of LC1 ("But this is Lohman 's film .") takes the attested
            # "is [indeed] ..." that the keyword model reads as praise (tests/fakes.py): a real pass-to-fail pair
            request = runs.RunRequest(task=task, lc_ids=list(specs)[:2], max_seeds=10 if expand else 6, expand=expand,
                                      models=[{"name": model, "kwargs": {}, "label": model}],
                                      parser="fake-parser" if expand else None, mlm="fake-mlm" if expand else None)
            key = runs.execute(request, specs, lambda message, fraction: None)
            info = runs.run_info(key)
            if expand:
                assert len(runs.load_run(key).pass_to_fail()) > 0, "the fake backends accepted no failing expansion"
            made[task] = {"key": key, "name": runs.describe_run(info), "frame": runs.load_run(key).cases()}
    finally:
        runs.runs_root = saved
        uninstall()
    return made


def start_server(runs_root: Path, log: Path, review_db: str, **env_extra: str) -> tuple[subprocess.Popen, str]:
    """``tests/fake_streamlit.py`` on a free port with the run store ``runs_root`` and review store ``review_db``;
    (process, url) once healthy."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ALICT_TORCH_THREADS": "1", "ALICT_TEST_RUNS_DIR": str(runs_root),
           "ALICT_REVIEW_DB_URL": review_db, **env_extra}
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "fake_streamlit.py"), "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout=120)
    except BaseException:
        stop(proc)
        raise
    return proc, url


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def made_runs(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium chromium-driver")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    root = tmp_path_factory.mktemp("runs")
    review_db = f"sqlite:///{tmp_path_factory.mktemp('review') / 'review.sqlite'}"  # never the shared review store
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALICT_REVIEW_DB_URL", review_db)
        made = make_runs(root)
    made["review_db"] = review_db
    return root, made


@pytest.fixture(scope="module")
def app(made_runs, tmp_path_factory):
    root, made = made_runs
    workspace = tmp_path_factory.mktemp("workspace")
    proc, url = start_server(root, tmp_path_factory.mktemp("streamlit") / "server.log", made["review_db"],
                             ALICT_WORKSPACE_DIR=str(workspace))
    try:
        backends_seen = warm_up(url)
        yield {"url": url, "runs": made, "backends": backends_seen, "workspace": workspace}
    finally:
        stop(proc)


def warm_up(url: str) -> list[str]:
    """Open the app's root once (until app.py has run in the process, Streamlit serves a deep link such as
    /failures in its legacy multipage mode, without app.py's navigation and sidebar); open the Backends panel
    of this first session and, without any click, wait until its background check has resolved every row.
    Returns the states the panel showed."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = chromium.new_page(viewport={"width": 1400, "height": 1100})
        ScriptState(page)
        page.goto(url + "/?task=sentiment")
        page.get_by_role("heading", name="LC specs").first.wait_for(state="visible", timeout=180_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Backends", exact=True).first.click()  # expanding is client-side: no rerun
        panel = sidebar.locator('[data-testid="stExpander"]').filter(
            has=page.get_by_text("Backends", exact=True)).first
        page.wait_for_function(  # the three rows shown, none of them "checking"
            """el => { const rows = el.innerText.match(/(models|mlm|parser) — [a-z ]+/g) || [];
                       return rows.length === 3 && !rows.some(r => r.endsWith('checking')); }""",
            arg=panel.element_handle(), timeout=180_000)
        states = re.findall(r"(models|mlm|parser) — ([a-z ]+)", panel.inner_text())
        chromium.close()
    return [f"{what}: {state}" for what, state in states]


@pytest.fixture()
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


def open_page(browser, url: str, ready: str = "failing cases"):
    """Open ``url`` in a fresh browser context and wait until ``ready`` is shown and the script is idle."""
    page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
    ScriptState(page)
    page.goto(url)
    see(page, ready)
    wait_idle(page)
    return page


def go_to(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title, exact=True).first.click()
    page.get_by_role("heading", name=re.compile(title if title != "Specs" else "LC specs")).first.wait_for(
        state="visible", timeout=120_000)
    wait_idle(page)


def choose(page, label: str, option: str, where: str = "body") -> None:
    """Pick ``option`` in the selectbox labelled ``label``."""
    page.locator(where).get_by_role("combobox", name=label).first.click()
    page.get_by_role("option", name=option, exact=True).first.click()
    wait_idle(page)


CORPUS = {"sentiment": "Corpus: Stanford Sentiment Treebank (SST)", "hate_speech": "Corpus: HateXplain"}


def script_done(page, timeout: float = 300_000) -> None:
    """Wait until the app's script is idle (``ScriptState``: the websocket messages; the app root's
    ``data-test-script-state`` still read 'notRunning' before the rerun an action asked for had started)."""
    wait_idle(page, timeout)


def switch_task(page, task: str) -> None:
    """Pick ``task`` in the sidebar and wait until the page was drawn for it: the sidebar names the task's corpus
    (so the new run has started) and then the script has finished."""
    choose(page, "Task", TASK_LABELS[task], where='[data-testid="stSidebar"]')
    page.locator('[data-testid="stSidebar"]').get_by_text(CORPUS[task]).first.wait_for(state="visible",
                                                                                       timeout=120_000)
    script_done(page)
    wait_idle(page)


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def selected_run(page) -> str:
    return page.get_by_role("combobox", name="Run").first.input_value()


def models_under_test(page) -> list[str]:
    """The chips of the sidebar's "Models under test", once drawn (the sidebar can finish after the main area)."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first
    box.locator("[data-tag]").first.wait_for(state="visible", timeout=120_000)
    script_done(page)
    return [tag.get_attribute("aria-label") for tag in box.locator("[data-tag]").all()]


def test_every_page_follows_the_task_switch(app, browser):
    """Switch the sidebar task to hate speech on each page: no page keeps the sentiment run (nor its id), the
    run pages show the hate-speech run by name, and the models under test are the task's own, never empty;
    switching back brings the sentiment run and its models back."""
    sentiment, hate = app["runs"]["sentiment"], app["runs"]["hate_speech"]
    page = open_page(browser, app["url"] + "/failures?task=sentiment")
    assert selected_run(page) == sentiment["name"]
    sentiment_models = models_under_test(page)
    assert sentiment_models
    for title in NAV:
        go_to(page, title)
        switch_task(page, "hate_speech")
        no_exception(page)
        text = main_text(page)
        assert sentiment["key"] not in text and sentiment["key"][:8] not in text, title
        hate_models = models_under_test(page)
        assert hate_models and not set(hate_models) & set(sentiment_models), (title, hate_models)
        if title in RUN_PAGES:
            assert selected_run(page) == hate["name"], title
            assert hate["key"] not in text, title  # the run is shown by its name, not its raw id
        if title == "Adjunct trees":
            assert "no test" not in text or "Models under test" in text
        switch_task(page, "sentiment")
        no_exception(page)
        assert models_under_test(page) == sentiment_models, title  # each task keeps its own choice
        if title in RUN_PAGES:
            assert selected_run(page) == sentiment["name"], title
    page.context.close()


def link_holds(page, part: str, timeout: float = 60_000) -> None:
    """Wait until the sidebar's "Link to this view" contains ``part`` (fails after ``timeout`` ms)."""
    page.wait_for_function(
        """part => [...document.querySelectorAll('a')].some(
               a => a.textContent.includes('Link to this view') && (a.getAttribute('href') || '').includes(part))""",
        arg=part, timeout=timeout)


def test_link_to_this_view_reopens_the_same_view(app, browser):
    """The sidebar link holds the view after the last interaction; opened in a fresh context it shows it."""
    page = open_page(browser, app["url"] + "/failures?task=sentiment")
    page.get_by_text("both", exact=True).first.click()  # Show: fails → both
    see(page, "all cases")
    wait_idle(page)
    choose(page, "Group by", "model")
    see(page, "of the model 'fake-sentiment'")  # the grouped headline
    wait_idle(page)
    link_holds(page, "group=model")  # without a further click: the link follows the last interaction
    link = page.get_by_role("link", name="Link to this view").first.get_attribute("href")
    assert "outcome=all" in link and "group=model" in link, link
    assert f"run={app['runs']['sentiment']['key']}" in link
    listed = next(line for line in main_text(page).splitlines() if line.endswith("all cases"))
    other = open_page(browser, app["url"] + "/failures" + link, ready="all cases")
    no_exception(other)
    assert other.get_by_role("radio", name="both").first.is_checked()
    assert selected_run(other) == app["runs"]["sentiment"]["name"]
    assert listed in main_text(other).splitlines()
    again = other.get_by_role("link", name="Link to this view").first.get_attribute("href")
    assert again == link
    page.context.close()
    other.context.close()


def test_pass_to_fail_note_and_headline_match_the_list(app, browser):
    """A run with expansions never says "run with expansions"; with "pass-to-fail only" the grouped headline
    counts the failures the case list shows."""
    page = open_page(browser, app["url"] + "/failures?task=sentiment")
    text = main_text(page)
    assert "Include expansions" not in text and "run with expansions" not in text
    assert "pass-to-fail pairs" in text
    choose(page, "Group by", "model")
    see(page, "of the model 'fake-sentiment'")
    page.get_by_text("pass-to-fail only", exact=True).first.click()
    link_holds(page, "p2f=1")
    wait_idle(page)
    no_exception(page)
    lines = main_text(page).splitlines()
    listed = int(next(line for line in lines if line.endswith("failing cases")).split()[0])
    headline = next(line for line in lines if "% of the" in line or line.startswith("No cases to group"))
    if headline.startswith("No cases"):
        assert listed == 0
    else:
        rate, n = re.search(r"fails (\d+) % of the (\d+) cases", headline).groups()
        assert round(int(rate) * int(n) / 100) == listed, (headline, listed)
    page.context.close()


def test_backends_resolve_without_a_click(app):
    """The first session's Backends panel left "checking" on its own (see ``warm_up``) for all three targets."""
    assert sorted(line.split(":")[0] for line in app["backends"]) == ["mlm", "models", "parser"], app["backends"]
    assert not any(line.endswith("checking") for line in app["backends"])


def test_page_details_in_a_real_browser(app, browser):
    """Run: a size estimate before starting, the LCs named by title. Expansions: the masked-LM menu offers only what
    can load offline. Hate speech: a content note before case text. Specs: a saved spec is listed at once."""
    page = open_page(browser, app["url"] + "/run?task=sentiment", ready="LCs to run")
    see(page, "Size: ")
    chips = page.locator('[data-testid="stMultiSelect"]').filter(has_text="LCs to run").first.locator("[data-tag]")
    assert chips.count() > 0 and all(" — " in c for c in chips.all_inner_texts())  # each LC by its title, not a bare id
    assert re.search(r"Size: \d+ LCs × up to [\d,]+ seeds = up to [\d,]+ cases × \d model\(s\) = up to [\d,]+ "
                     r"predictions", main_text(page))
    go_to(page, "Expansions")
    box = page.get_by_role("combobox", name="Masked LM").first
    box.wait_for(state="visible", timeout=120_000)
    box.click()
    offered = [o.inner_text().strip() for o in page.get_by_role("option").all()]
    page.keyboard.press("Escape")
    assert "minilm-offline" in offered and "bert-base-uncased" not in offered and "roberta-base" not in offered
    go_to(page, "Failures")
    switch_task(page, "hate_speech")
    note = page.get_by_text("Content note:").first
    note.wait_for(state="visible", timeout=60_000)
    first_case = page.get_by_text("failing cases").first
    assert note.bounding_box()["y"] < first_case.bounding_box()["y"]  # before the cases
    switch_task(page, "sentiment")
    assert page.get_by_text("Content note:").count() == 0
    go_to(page, "Specs")
    see(page, "Spec is valid")
    wait_idle(page)
    page.get_by_role("button", name="💾 Save spec").first.click()
    page.get_by_text(re.compile(r"^Saved .*\.yaml to your workspace")).first.wait_for(state="visible", timeout=120_000)
    wait_idle(page)
    assert list(Path(app["workspace"]).rglob("*.yaml"))  # written to the workspace
    see(page, "Showing your workspace copy")  # the list and the editor read the saved copy without leaving
    no_exception(page)
    page.context.close()


def test_story_on_both_tasks_in_demo_mode(made_runs, browser, tmp_path):
    """Demo mode opens on the Story: on each task it shows that task's run by name, headlines with n and a 95 %
    interval, no LC id and no "SRL"; on hate speech a content note comes before the first card."""
    root, made = made_runs
    proc, url = start_server(root, tmp_path / "demo.log", made["review_db"], ALICT_DEMO_MODE="1")
    try:
        page = open_page(browser, url + "/?task=sentiment", ready="Word colours")
        for task in ("sentiment", "hate_speech"):
            if task != "sentiment":
                switch_task(page, task)
                see(page, "Word colours")
            no_exception(page)
            text = main_text(page)
            assert selected_run(page) == made[task]["name"]
            assert re.search(r"Fails \d+% of \d+ \(95 % CI \d+%–\d+%\) test cases\.", text), text[:800]
            assert not re.search(r"(sentiment|hate_speech)-lc\d", text) and "SRL" not in text
            other = made["hate_speech" if task == "sentiment" else "sentiment"]
            assert other["key"][:8] not in text
            if task == "hate_speech":
                note, card = page.get_by_text("Content note:").first, page.get_by_text("Expected ").first
                assert note.bounding_box()["y"] < card.bounding_box()["y"]
        page.context.close()
    finally:
        stop(proc)
