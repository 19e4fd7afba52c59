"""Real-browser journey of the Harden page's guards (headless Chromium against a started Streamlit server).

The server runs ``app.py`` with the fake backends plus the toy hardening world (``tests/harden_toy.py``: a tiny
retrainable classifier and its toy corpus) in a private cache holding one toy run: a negation LC it always
fails with 60 seeds (a test split of 18 cases), one it always fails with 15 seeds (a test split of 3, under the
minimum of 10) and a positive LC it never fails. The journey: only the first is preselected and the table
says why not the others; adding the small one warns, and retraining is refused with the LC, its test split's
size and the minimum; retraining the first shows one overall progress bar with an ETA and flags the LC that
got worse in red with its delta and interval.
Needs Debian's chromium and the ``playwright`` package (skipped otherwise), like tests/test_browser.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser_sync import ScriptState
from tests.harden_toy import MODEL, register, unregister, write_head
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, see, wait_idle
from tests.test_journeys_browser import go_to, script_done, start_server, stop

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.no_models]  # fake backends: runs beside the build

NEGATED = ("the film", "the cast", "the plot", "the music", "the script", "the score", "the acting", "the story",
           "the ending", "the pacing", "the dialogue", "the visuals")
FEW = ("the song", "the album", "the band")
WORDS = ("good", "great", "lovely", "fine", "superb")


def toy_cases() -> list:
    """toy-lc01: 60 negated seeds (expected negative); toy-lc03: 15 more; toy-lc02: the 60 seeds without "not"
    (expected positive); each seed with two expansions, every text distinct, one source sentence per seed."""
    from alict_core.cases.testcases import TestCase

    cases = []
    for lc, subjects, verb, label, base in (("toy-lc01", NEGATED, "is not", "negative", 0),
                                            ("toy-lc02", NEGATED, "is", "positive", 100),
                                            ("toy-lc03", FEW, "is not", "negative", 200)):
        for s, (subject, word) in enumerate((a, w) for a in subjects for w in WORDS):
            seed_id = f"{lc}-s{s}"
            for j, text in enumerate((f"{subject} {verb} {word}", f"{subject} {verb} {word} today",
                                      f"{subject} {verb} {word} here")):
                cases.append(TestCase(case_id=f"{seed_id}-{j}", lc_id=lc, kind="seed" if j == 0 else "expansion",
                                      seed_id=seed_id, text=text, expected={"kind": "label", "labels": [label]},
                                      test_type="MFT", capability="Negation", task="sentiment",
                                      meta={"rule": "toy", "source_ids": [f"sst-train-{base + s}"]}))
    return cases


@pytest.fixture(scope="module")
def harden_app(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium chromium-driver")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    from alict_core.runner.run import run_suite

    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALICT_CACHE_DIR", str(cache))
        register(write_head(cache / MODEL))
        try:
            result = run_suite(toy_cases(), [MODEL], cache_root=tmp_path_factory.mktemp("predictions"))
            result.save(cache / "runs" / result.run_id)
        finally:
            unregister()
    review_db = f"sqlite:///{tmp_path_factory.mktemp('review') / 'review.sqlite'}"
    proc, url = start_server(cache / "runs", tmp_path_factory.mktemp("streamlit") / "server.log", review_db,
                             ALICT_CACHE_DIR=str(cache), ALICT_TEST_PLUGIN="tests.harden_toy",
                             ALICT_WORKSPACE_DIR=str(tmp_path_factory.mktemp("workspace")))
    try:
        yield {"url": url, "cache": cache}
    finally:
        stop(proc)


def chips(page) -> list[str]:
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="LCs to train on").first
    return [t.strip() for t in box.locator("[data-tag]").all_inner_texts()]


def table_text(page) -> str:
    """The readiness table's cells (a canvas grid: read through its accessible copy)."""
    from playwright.sync_api import expect

    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.wait_for(state="visible", timeout=120_000)
    cells = grid.locator("table").first if grid.locator("table").count() else grid
    expect(cells).to_contain_text(re.compile(r"toy-lc0\d"), timeout=120_000)  # the copy fills after the grid draws
    return cells.text_content() or ""  # the accessible copy is not rendered: its innerText can be empty


def test_harden_preselects_ready_lcs_refuses_a_small_test_split_and_flags_what_got_worse(harden_app):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = chromium.new_page(viewport={"width": 1400, "height": 1100})
        ScriptState(page)
        page.goto(harden_app["url"] + "/?task=sentiment")
        page.get_by_role("heading", name="LC specs").first.wait_for(state="visible", timeout=180_000)
        script_done(page)
        go_to(page, "Harden")
        see(page, "LCs to train on")
        assert chips(page) == ["toy-lc01"]  # fails, trainable, a test split of 18: the only one preselected
        cells = table_text(page)
        assert "its test split holds 3 cases, under the minimum of 10" in cells, cells
        assert "the model fails only 0% of it" in cells, cells

        combo = page.get_by_role("combobox", name=re.compile("LCs to train on")).first
        combo.click()
        page.get_by_role("option", name="toy-lc03", exact=True).first.click()
        page.keyboard.press("Escape")
        message = "the test split of toy-lc03 holds 3 cases, under the minimum of 10 per trained LC"
        see(page, message)  # warned before anything runs
        script_done(page)
        page.get_by_role("button", name="Retrain and compare").click()
        alert = page.locator('[data-testid="stAlertContentError"]').filter(has_text=message).first
        alert.wait_for(state="visible", timeout=120_000)
        script_done(page)
        exports = Path(harden_app["cache"]) / "harden"
        assert not exports.exists() or not any(exports.iterdir())  # refused before the export was written

        box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="LCs to train on").first
        remove = box.get_by_role("button", name="Remove toy-lc03", exact=True)
        remove.click()
        remove.wait_for(state="detached", timeout=120_000)
        script_done(page)
        expect(box.locator("[data-tag]")).to_have_count(1, timeout=120_000)
        page.get_by_role("button", name="Retrain and compare").click()
        see(page, "ETA")  # one overall bar: step, share, time so far, ETA
        see(page, "Worse after hardening", timeout=300_000)
        script_done(page)
        wait_idle(page)
        worse = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="Worse after hardening").first
        text = worse.inner_text()
        assert re.search(r"toy-lc02: fail rate 0\.0% → \d+\.\d% \(\+\d+\.\d points, 95 % CI \+", text), text
        coloured = page.locator("span.stMarkdownColoredText")
        heading = coloured.filter(has_text="Worse after hardening (1):").first.evaluate("e => e.style.color")
        line = coloured.filter(has_text="toy-lc02: fail rate 0.0% →").first.evaluate("e => e.style.color")
        assert line == heading and line.startswith("rgb("), (line, heading)  # both Streamlit's :red[] colour
        bar = page.locator('[data-testid="stProgress"]').first.text_content()  # in the collapsed status box
        assert bar.startswith("step 3 of 3, testing") and "ETA 0 s" in bar, bar
        chromium.close()
