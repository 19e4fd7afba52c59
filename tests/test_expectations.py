"""Typed expectations: parsing from specs and stored dicts, verdicts and descriptions."""

import numpy as np
import pytest

from alict_core.lcspec.expectations import (
    Directional,
    ExpectationError,
    Invariance,
    LabelIs,
    NotLabel,
    from_dict,
    from_spec,
    passes,
)
from alict_core.lcspec.schema import Expected

LABELS = ("negative", "neutral", "positive")


def test_label_kinds_round_trip_and_judge():
    one_of = from_spec(Expected(one_of=["positive", "neutral"]))
    assert one_of == LabelIs(("positive", "neutral")) and one_of.describe() == "positive or neutral"
    assert from_dict(one_of.to_dict()) == one_of
    assert one_of.passes("neutral") and not one_of.passes("negative")
    assert NotLabel(("hateful",)).passes("non-hateful") and not NotLabel(("hateful",)).passes("hateful")
    assert list(one_of.allowed(LABELS)) == [False, True, True]


def test_same_as_source_maps_the_source_label():
    source_map = {"positive": ["negative"], "negative": ["positive", "neutral"]}
    expected = Expected(same_as_source="polar", source_map=source_map)
    assert from_spec(expected, {"polar": "positive"}) == LabelIs(("negative",))
    assert from_spec(expected, {"polar": "negative"}).describe() == "positive or neutral"
    assert from_spec(Expected(same_as_source="polar"), {"polar": "negative"}) == LabelIs(("negative",))


def test_invariance_and_direction_evaluate_variants():
    base = np.array([0.1, 0.2, 0.7])
    variants = np.array([[0.1, 0.2, 0.7], [0.8, 0.1, 0.1]])
    outcome = Invariance(0.1).evaluate(LABELS, base, variants)
    assert (outcome.passed, outcome.n_failing, outcome.first_failing) == (False, 1, 1)
    assert Invariance(0.5).evaluate(LABELS, base, variants).passed
    up = Directional("positive", "up")
    assert not up.evaluate(LABELS, base, variants).passed
    assert Directional("negative", "up").evaluate(LABELS, base, variants).passed
    assert from_dict(up.to_dict()) == up


def test_bad_expectations_are_named():
    with pytest.raises(ExpectationError, match="seed #3"):
        from_dict({"kind": "maybe"}, "seed #3")
    with pytest.raises(ExpectationError, match="needs at least one label"):
        from_dict({"kind": "one_of", "labels": []})
    with pytest.raises(ExpectationError, match="not an MFT"):
        passes({"kind": "invariance"}, "positive")


def test_dir_is_writable_in_a_spec_and_reaches_the_seeds():
    from alict_core.data.corpus import corpus_from_records
    from alict_core.data.records import LabelledText
    from alict_core.lcspec import parse_spec_text
    from alict_core.seeds import find_seeds

    spec = parse_spec_text(
        "schema_version: 1\nid: d\ntask: sentiment\ncapability: c\ntitle: t\ndescription: d\ntest_type: DIR\n"
        "search: [{name: g, predicates: [{label: positive}]}]\n"
        "rules: [{name: r, select: g, expected: {direction: {label: positive, towards: down}}}]\n", "d.yaml")
    corpus = corpus_from_records("c", "sentiment", [LabelledText("a", "A great film .", "positive", "train",
                                                                 ("A", "great", "film", "."))])
    seed = find_seeds(spec, corpus).seeds[0]
    assert from_dict(seed.expected) == Directional("positive", "down") and seed.test_type == "DIR"
    with pytest.raises(Exception, match="test_type: DIR"):
        parse_spec_text(
            "schema_version: 1\nid: d\ntask: sentiment\ncapability: c\ntitle: t\ndescription: d\n"
            "search: [{name: g, predicates: [{label: positive}]}]\n"
            "rules: [{name: r, select: g, expected: {direction: {label: positive}}}]\n", "d.yaml")


def test_a_case_parses_its_expectation_once_and_the_expectation_makes_the_test_type():
    from alict_core.cases.testcases import TestCase
    from alict_core.lcspec.expectations import Directional, Invariance, LabelIs, NotLabel

    assert [e.test_type for e in (LabelIs(("positive",)), NotLabel(("positive",)), Invariance(),
                                  Directional("positive"))] == ["MFT", "MFT", "INV", "DIR"]
    case = TestCase("c1", "lc1", "seed", "c1", "fine .", {"kind": "label", "labels": ["positive"], "tolerance": None},
                    "MFT")
    assert case.expectation is case.expectation == LabelIs(("positive",))
    assert case.judged_expectation() == LabelIs(("positive",))
    assert "expectation" not in case.to_dict()  # the stored form is unchanged
    legacy = TestCase.from_dict({**case.to_dict(), "test_type": "INV"})  # an INV case stored with a label expectation
    assert legacy.expectation.test_type == "MFT" and legacy.judged_expectation() == Invariance()
