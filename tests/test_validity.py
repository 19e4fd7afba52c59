"""Validity checks: each defect flagged on generated text, never on the corpus's own wording."""

from __future__ import annotations

from alict_core.seeds.types import Seed, Segment
from alict_core.validity import format_summary, text_defects, validate


def reasons(text, bases=(), cased=True):
    return [r for r, _ in text_defects(text, bases, cased=cased)]


def test_each_generated_defect_is_flagged():
    assert reasons("This is not not Chabrol 's best .") == ["double_negation", "repeated_word"]
    assert reasons("This is not n't my favorite .") == ["double_negation"]
    assert reasons("I liked the the film .") == ["repeated_word"]
    assert reasons("I thought that it was good . ? yes") == ["two_final_marks"]
    assert reasons("It was good , . But now I hate it .") == ["stray_punctuation"]
    assert reasons("It opens Friday . the film is a delight .") == ["lower_case_after_period"]
    assert reasons("It opens Friday  now .") == ["stray_space"]


def test_english_and_corpus_wording_are_not_flagged():
    assert reasons("Do I think that that is terrible ? no .") == []  # "that that" is English; "? no" an answer
    assert reasons("Do I agree that we did n't ? no .") == []
    corpus = "The the Beatles tribute is wow ! ! fun ."
    assert reasons("I thought that " + corpus, [corpus]) == []  # the corpus's own defects are not ours
    assert reasons("people say they left . however i hate them .", cased=False) == []  # HateXplain is lower-cased


def seed(sid, text, lc="lc", segments=None, protected=()):
    segments = segments if segments is not None else [Segment("g", "s" + sid, 0, len(text))]
    return Seed(sid, lc, "sentiment", text, "MFT", {"kind": "label", "labels": ["neutral"], "tolerance": None},
                [s.source_id for s in segments], "r", "replace", {}, [list(p) for p in protected], segments)


def test_validate_counts_per_lc_and_reason_and_checks_rule_text():
    negated = "This is not n't good ."
    seeds = [
        seed("1", "It is fine ."), seed("2", "it is  good ."), seed("3", "It is fine ."),
        seed("4", negated, protected=[(0, len("This is not"))]),  # the rule's "not" is judged, the corpus part not
    ]
    expansions = [{"id": "x1", "seed_id": "1", "text": "It is fine fine .", "accepted": True},
                  {"id": "x2", "seed_id": "1", "text": "It is a fine .", "accepted": False}]
    report = validate(seeds, expansions, task="sentiment")
    assert report.counts() == {"lc": {"double_negation": 1, "duplicate": 1, "repeated_word": 1, "stray_space": 1}}
    assert report.flagged_ids == {"2", "3", "4", "x1"}
    assert report.summary()[0]["seeds"] == 4 and report.summary()[0]["expansions"] == 1
    assert "duplicate=1" in format_summary(report)
