"""Seed defects a person catches (issue #27, P1–P10): the guards that avoid them and the checks that flag them."""

from __future__ import annotations

import pytest

from alict_core.seeds import find_seeds
from alict_core.seeds.checks import fragment_defects, seed_defects
from alict_core.seeds.fairness import identity_swaps
from alict_core.seeds.types import Seed, Segment
from alict_core.spec import get_spec
from alict_core.spec.predicates import is_clause
from alict_core.validity import validate


def replace_seed(text: str, inserted: str = "not") -> Seed:
    """A replace-rule seed whose protected span is the first target holding ``inserted``."""
    tokens = text.split()
    index = tokens.index(inserted)
    start = len(" ".join(tokens[: index - 2])) + (1 if index > 2 else 0)
    end = len(" ".join(tokens[: index + 1]))
    return Seed(id="s1", lc_id="sentiment-lc04", task="sentiment", text=text, test_type="MFT",
                expected={"kind": "one_of", "labels": ["positive", "neutral"]}, source_ids=["x"],
                rule="negate_verb", rule_kind="replace", slots={}, protected_spans=[[start, end]],
                segments=[Segment("g", "x", 0, len(text))])


def concat_seed(prefix: str, body: str, suffix: str = "", task: str = "hate_speech") -> Seed:
    text = " ".join(p for p in (prefix, body, suffix) if p)
    start = len(prefix) + 1
    spans = [[0, len(prefix)]] + ([[start + len(body) + 1, len(text)]] if suffix else [])
    return Seed(id="c1", lc_id=f"{task}-lc05", task=task, text=text, test_type="MFT",
                expected={"kind": "label", "labels": ["hateful"]}, source_ids=["x"], rule="r",
                rule_kind="concat", slots={}, protected_spans=spans,
                segments=[Segment("g", "x", start, start + len(body))])


@pytest.mark.parametrize("text, reason", [
    ("If horses could fly , this is not surely what they 'd look like .", "negation_before_adverb"),
    ("This is not ultimately a frustrating patchwork .", "negation_before_adverb"),
    ("A sometimes incisive and sensitive portrait that is not undercut by its awkward structure .",
     "negated_relative_clause"),
    ("the mediocrity that is not Kung Pow : Enter the Fist .", "negated_relative_clause"),
    ("This is not a train wreck of an action film -- a stupefying attempt by the filmmakers .",
     "negation_outside_scope"),
    ("This is not Carion 's debut feature but his script and direction hums with a confidence .",
     "negation_outside_scope"),
    ("Watchable up until the point -- that is not to say , when Carol Kane appears on the screen .",
     "negated_idiom"),
    ("you could call this How Martha Got Her Groove Back -- assuming , that is not , she ever had one .",
     "negated_idiom"),
])
def test_replace_defects_of_the_issue_are_flagged(text, reason):
    assert reason in [r for r, _ in seed_defects(replace_seed(text))]


@pytest.mark.parametrize("text", [
    "This is not so bad .", "This is not one of the biggest disappointments of the year .",
    "Of all the Halloween 's , this is not the most visually unappealing .", "This is not a superior horror flick .",
])
def test_good_negations_are_not_flagged(text):
    assert seed_defects(replace_seed(text)) == []


def test_stance_on_them_needs_a_group_in_the_post():
    bad = concat_seed("i heard that", "aw now what the trouble are ya a little butthurt", "and i also hate them .")
    good = concat_seed("people say", "muslims are taking over the city", "and i hate them too .")
    assert [r for r, _ in seed_defects(bad)] == ["stance_without_group"]
    assert seed_defects(good) == []


def test_a_template_that_needs_a_clause_flags_fragments():
    fragment = concat_seed("I do not think that", "a witty , gorgeous movie", task="sentiment")
    clause = concat_seed("I do not think that", "the film is a delight", task="sentiment")
    fragment2 = Seed(**{**vars(fragment), "id": "c2"})
    flagged = fragment_defects([fragment2, Seed(**{**vars(clause), "id": "c3"})])
    assert list(flagged) == ["c2"] and flagged["c2"][0][0] == "template_before_fragment"


@pytest.mark.parametrize("tags, lower, expected", [
    (["DT", "NN", "VBZ", "DT", "NN"], ["the", "film", "is", "a", "delight"], True),
    (["DT", "NN", "WDT", "VBZ", "JJ"], ["a", "film", "that", "is", "funny"], False),
    (["CC", "PRP", "VBZ", "JJ"], ["but", "it", "is", "good"], False),
    (["VBZ", "DT", "NN"], ["offers", "a", "lot"], False),
    (["DT", "JJ", ",", "JJ", "NN"], ["a", "witty", ",", "gorgeous", "movie"], False),
    (["RB", "JJ", "IN", "PRP", "VBP"], ["so", "awful", "that", "you", "hope"], False),
    (["IN", "PRP", "VBP", "PRP", ",", "PRP", "MD", "VB"], ["if", "you", "like", "it", ",", "you", "'ll", "love"],
     True),
])
def test_clause_reading(tags, lower, expected):
    assert is_clause(tags, lower) is expected


def test_shipped_negation_specs_give_no_flagged_seed(sentiment_corpus):
    for lc in ("LC4", "LC5", "x01"):
        seeds = find_seeds(get_spec("sentiment", lc), sentiment_corpus, max_seeds=None).seeds
        assert seeds, lc
        report = validate(seeds, task="sentiment")
        assert not [f for f in report.flags if f.reason.startswith(("negat", "negated"))], (lc, report.flags[:3])
        assert not any(" that is not " in s.text and not s.text.lower().startswith("that") and
                       s.text.split(" that is not ")[0].split()[-1].isalpha() for s in seeds), lc


def test_sentiment_lc07_keeps_the_positive_in_the_negation_scope(sentiment_corpus):
    seeds = find_seeds(get_spec("sentiment", "LC7"), sentiment_corpus, max_seeds=40).seeds
    assert seeds and all(", given that " in s.text and " , that " in s.text for s in seeds)
    report = validate(seeds, task="sentiment")
    # the tagger reads a sentence in the corpus and the same words inside the template a little differently
    # ("Plays like ..." NNS at the start of a sentence, VBZ after "that"): the check may still catch a few
    assert len([f for f in report.flags if f.reason == "template_before_fragment"]) <= len(seeds) // 10


def test_hate_stance_lcs_name_a_group_and_reject_plain_slurs(hate_corpus):
    from alict_core.data.annotate import term_classes

    for lc in ("LC5", "LC6"):
        seeds = find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=200).seeds
        assert seeds
        assert not [f for f in validate(seeds, task="hate_speech", check_seed_clauses=False).flags
                    if f.reason == "stance_without_group"]
        for seed in (s for s in seeds if s.expected["labels"] == ["non-hateful"] and "hateful" in s.source_labels):
            body = seed.text[seed.segments[0].start : seed.segments[0].end].split()
            assert not any("slur" in marks for marks in term_classes(body)), seed.text


def test_identity_terms_carry_no_polarity(hate_corpus):
    """'gay' is not SentiWordNet's 'merry': an identity term is never a positive word (hate LC7, LC12)."""
    for item in hate_corpus.items[:3000]:
        for classes in item.annotation.classes:
            if "identity" in classes:
                assert not any(c.startswith(("positive_", "negative_")) for c in classes), item.text


@pytest.mark.parametrize("text, kept", [
    ("The men and women of the unit are great .", "men and women"),
    ("Shot in black and white , it looks great .", "black and white"),
])
def test_identity_swaps_keep_fixed_pairs(text, kept):
    assert all(kept in variant for variant in identity_swaps(text))


def test_pronouns_after_a_named_antecedent_are_not_swapped():
    assert identity_swaps("Mr. Broomfield turns the camera on himself and his family .") == []
    assert identity_swaps("The film gives Nicholson a role , and he knows it .") == []
    assert "He is a great actor ." in identity_swaps("She is a great actor .")
