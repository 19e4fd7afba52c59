"""The named E-pattern checks of ``validate`` on issue 27's own examples (and valid modifier insertions)."""

from __future__ import annotations

import pytest

from alict_core.cases.expansion_patterns import PATTERN_REASONS, expansion_pattern_defects
from alict_core.cases.validity import validate
from alict_core.data.annotate import annotate_token_lists

# (seed, expansion, inserted positions, the reason expected); the bold words of the issue are inserted
FLAGGED = [
    ("he tells us a story about the war .", "he tells to us a story about the war .", [2],
     "preposition_before_non_np"),
    ("the thrills pop up every few minutes .", "the thrills of pop up every few minutes .", [2],
     "preposition_before_non_np"),
    ("it already has one strike against it .", "it and i already has one strike against it .", [1, 2],
     "and_pronoun_after_pronoun"),
    ("the film is rich with human events .", "the film is rich with the human events .", [5],
     "article_before_bare_noun"),
    ("it does not count for very little .", "it does not count for very a little .", [6], "article_before_non_noun"),
    ("you do not have to be mentally ill to enjoy it .", "you do not have to be a mentally ill to enjoy it .", [6],
     "article_before_non_noun"),
    ("the plot works well enough .", "the plot works well and enough .", [4], "conjunction_inside_phrase"),
    ("a story of brothers and sisters .", "a story of brothers and the sisters .", [5], "determiner_in_one_conjunct"),
    ("and vice versa .", "and vice to versa .", [2], "broken_idiom"),
    ("a gorgeous , somnolent show .", "a gorgeous , and somnolent show .", [3], "comma_and_between_adjectives"),
    ("directed by Peter Jackson .", "directed by the Peter Jackson .", [2], "article_before_name"),
    ("but he would have done well .", "but that he would have done well .", [1], "stray_that"),
]
VALID = [
    ("a gorgeous film .", "a gorgeous new film .", [2]),
    ("the movie is very funny .", "the movie is also very funny .", [3]),
    ("it is a great movie about love .", "it is a great american movie about love .", [4]),
    ("a story of brothers and sisters .", "a story of young brothers and sisters .", [3]),
    ("he wants to make a film .", "he wants to make a horror film .", [5]),
]


def _defects(seed: str, text: str, positions: list[int]) -> list[tuple[str, str]]:
    tags = annotate_token_lists([text.split()])[0].tags
    return expansion_pattern_defects(text.split(), tags, positions, seed.split())


@pytest.mark.parametrize("seed,text,positions,reason", FLAGGED, ids=[r for *_, r in FLAGGED])
def test_each_pattern_flags_the_issues_example(seed, text, positions, reason):
    reasons = [r for r, _ in _defects(seed, text, positions)]
    assert reasons == [reason]


def test_every_pattern_has_an_example():
    assert {r for *_, r in FLAGGED} == set(PATTERN_REASONS)


@pytest.mark.parametrize("seed,text,positions", VALID)
def test_modifier_insertions_a_reader_accepts_are_not_flagged(seed, text, positions):
    assert _defects(seed, text, positions) == []


def test_validate_reports_pattern_flags_per_lc_and_reason():
    from alict_core.lcspec import load_task_specs

    specs = {s.id: s for s in load_task_specs("sentiment")}
    lc = next(iter(specs))
    seeds = [{"id": "s1", "lc_id": lc, "task": "sentiment", "text": "and vice versa ."}]
    rows = [{"id": "x1", "seed_id": "s1", "accepted": True, "text": "and vice to versa .", "words": ["to"],
             "masked": {"mask_positions": [2]}},
            {"id": "x2", "seed_id": "s1", "accepted": False, "text": "and vice of versa .", "words": ["of"],
             "masked": {"mask_positions": [2]}}]
    report = validate(seeds, rows, task="sentiment", specs=specs, check_lc=False)
    assert report.counts()[lc]["broken_idiom"] == 1  # the rejected row is not checked
    assert [f.case_id for f in report.flags if f.reason == "broken_idiom"] == ["x1"]
