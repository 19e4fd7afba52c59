"""Hostile pass 14 table, pages (notes: attack_pass14_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.timeout(240)]


def _duplicate_row(story: dict) -> None:  # a fake row of the same LC and model before the true one
    story["rates"].insert(0, {**story["rates"][0], "n_cases": 100_000, "n_fail": 0, "fail_rate": 0.0})


def _rate_off_its_counts(story: dict) -> None:  # counts as summary.csv says, the rate the page ranks by made up
    story["rates"][0]["fail_rate"] = 0.0 if story["rates"][0]["n_fail"] else 1.0


@pytest.mark.parametrize("tamper", [_duplicate_row, _rate_off_its_counts], ids=["duplicate-row", "rate-off-counts"])
def test_p14_a_b_story_rates_must_be_one_row_each_and_agree_with_their_counts(saved_run, tamper):
    from alict_core.report import story as core_story

    core_story.write_story(saved_run, None)
    assert core_story.read_story(saved_run) is not None  # the honest story is used
    path = core_story.story_path(saved_run)
    story = json.loads(path.read_text())
    tamper(story)
    content = {k: v for k, v in story.items() if k not in core_story.INTEGRITY_KEYS}
    story["sha256"] = core_story._content_sha256(content)
    path.write_text(json.dumps(story))
    assert core_story.read_story(saved_run) is None
