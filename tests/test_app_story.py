"""The Story's precomputed data (``alict_core.report.story``): written when a run finishes (app and CLI), read by the
Story page, computed and saved for a run without one, re-chosen when reviews dispute a card.

Fake backends (``tests.fakes``) on the real specs and corpus; runs go to a temporary folder.
"""

from __future__ import annotations

import json

import pytest

from alict_core.common.hashing import hash_text
from alict_core.report import story as core_story
from tests.test_app_explorer import assert_clean, run_fake, start

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py

LCS = ("sentiment-lc01", "sentiment-lc04", "sentiment-lc08")


def cards_shown(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("Expected **")]


def open_story(key: str, monkeypatch):
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")  # the app opens on the Story of ?run=
    at = start({"run": key})
    assert_clean(at)
    assert at.title[0].value == "Story"
    return at


def test_a_finished_run_carries_its_story_and_the_page_only_reads_it(monkeypatch):
    from alict_app import runs

    key = run_fake(start(), lcs=LCS)
    folder = runs.run_dir(key)
    story = core_story.read_story(folder)
    meta = json.loads((folder / "meta.json").read_text())
    assert story is not None and story["run_id"] == meta["run_id"] and story["version"] == core_story.STORY_VERSION
    assert "story.json" not in (folder / "manifest.json").read_text()  # beside the run, not part of its checksums
    failing = {c["case_id"] for c in story["candidates"]}
    assert failing and len(story["contributions"]) >= 2

    def no_computing(*_args, **_kwargs):
        raise AssertionError("the Story computed what the run precomputed")

    monkeypatch.setattr(core_story, "build_story", no_computing)
    monkeypatch.setattr(core_story, "explain_text", no_computing)
    at = open_story(key, monkeypatch)
    shown = cards_shown(at)
    assert 2 <= len(shown) <= 3 and sum('class="alict-contrib"' in m.value for m in at.markdown) == len(shown)
    assert any(c.value.startswith("¹ Word colours: LEMNA explanations (200 perturbed") for c in at.main.caption)


def test_a_run_without_a_story_gets_the_same_one_computed_and_the_view_writes_nothing(monkeypatch):
    from alict_app import runs

    key = run_fake(start(), lcs=LCS)
    path = core_story.story_path(runs.run_dir(key))
    written = json.loads(path.read_text())
    first = cards_shown(open_story(key, monkeypatch))
    path.unlink()  # a run saved before stories were precomputed
    before = sorted(p.name for p in path.parent.iterdir())
    again = open_story(key, monkeypatch)
    assert cards_shown(again) == first  # computed on the page: the same cards (explanations seeded)
    assert sorted(p.name for p in path.parent.iterdir()) == before  # a page view never writes into the run
    written["run_id"] = "another run"  # a story that is not this run's is not used: computed again
    path.write_text(json.dumps(written))
    assert cards_shown(open_story(key, monkeypatch)) == first
    assert json.loads(path.read_text())["run_id"] == "another run"  # left as it was, not used


def test_a_card_whose_label_a_reviewer_disputes_is_replaced_and_its_successor_explained():
    from alict_app import runs, story_data

    key = run_fake(start(), lcs=LCS)
    story = core_story.read_story(runs.run_dir(key))
    top, left_out = story_data.cards(key, story, set(), set())
    assert left_out == story["n_excluded"]
    first = top.iloc[0]
    disputed = {(first["case_id"], hash_text(str(first["text"])))}
    explained = len(story["contributions"])
    after, left_out_after = story_data.cards(key, story, disputed, set())
    assert first["case_id"] not in set(after["case_id"]) and left_out_after == left_out + 1
    assert all(c["tokens"] for c in after["contributions"])
    assert len(story["contributions"]) > explained  # kept in the server's copy of the story for next time
    assert len(core_story.read_story(runs.run_dir(key))["contributions"]) == explained  # the run is not written
    confirmed = {(after.iloc[-1]["case_id"], hash_text(str(after.iloc[-1]["text"])))}
    reviewed, _ = story_data.cards(key, story, disputed, confirmed)
    assert reviewed.iloc[0]["case_id"] == after.iloc[-1]["case_id"] and bool(reviewed.iloc[0]["reviewed"])


def test_the_cli_run_writes_the_story_too(tmp_path):
    from alict_core.cli import main

    out = tmp_path / "run"
    code = main(["run", "--task", "sentiment", "--models", "fake-sentiment", "--lc", "sentiment-lc04",
                 "--max-seeds", "8", "--out", str(out), "--quiet"])
    assert code in (0, 1)
    story = core_story.read_story(out)
    assert story is not None and story["candidates"], "the fake model fails some negations"
    assert set(story["contributions"]) <= {core_story.contribution_key(c["model"], c["text"])
                                           for c in story["candidates"]}
