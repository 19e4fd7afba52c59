"""The one slur matcher (``alict_core.data.slurs``) and the ``lexicon: slur`` predicate that uses it."""

from __future__ import annotations

import pytest

from alict_core.data.slurs import has_slur, is_slur, normalise
from alict_core.lcspec.predicates import lexicon_holds, predicate_holds
from alict_core.lcspec.schema import Predicate


@pytest.mark.parametrize("token", [
    "faggot", "FAGGOT", "f4gg0t", "faggooot", "faggots", "faggotz",  # case, leetspeak, elongation, plural
    "retard", "retarded", "retarding",  # inflections of a long slur
    "kyke", "kykes", "spicks",  # the project's slur forms with plurals
    "trannyism", "faggotish",  # coinages on a slur stem
    "spicnog",  # two slurs written as one word
    "whore",
])
def test_slur_spellings_are_found(token: str) -> None:
    assert is_slur(token)


@pytest.mark.parametrize("token", [
    "con", "woop", "whoops", "spiced", "spices", "japan", "nigeria", "night", "homer", "cuckoo",
    "wore", "shit", "skin", "bitchy", "queen", "a",
])
def test_ordinary_words_are_not_slurs(token: str) -> None:
    assert not is_slur(token)


def test_elongation_needs_three_letters_on_a_short_slur() -> None:
    assert not is_slur("coon".replace("oo", "o"))  # "con": fewer letters than the slur
    assert is_slur("cooon")
    assert not is_slur("spiic")  # one extra letter in a four-letter slur is a different word
    assert is_slur("spiiic")


def test_wh_opening_reads_as_w() -> None:
    assert is_slur("wigger") and is_slur("whigger")


def test_normalise() -> None:
    assert normalise("N1gg-3r!") == "nigger"


def test_split_ordinary_words_are_not_a_slur() -> None:
    assert not has_slur(("my", "shit", "skin", "is", "dry"))
    assert has_slur(("those", "retarded", "people"))


def test_lexicon_predicate_uses_the_matcher() -> None:
    exclude = Predicate.model_validate({"lexicon": {"exclude": ["slur"], "mode": "any"}})
    include = Predicate.model_validate({"lexicon": {"include": ["slur"], "mode": "any"}})
    lower = ("they", "are", "faggotz")
    assert not predicate_holds(exclude, lower, frozenset(), None)
    assert predicate_holds(include, lower, frozenset(), None)
    assert predicate_holds(exclude, ("they", "are", "nice"), frozenset(), None)
    assert lexicon_holds(include.lexicon, frozenset({"slur"}), ("x",))  # type: ignore[arg-type]


@pytest.mark.parametrize("tags, lower, expected", [
    (["NN", "VBZ", "DT", "NN"], ["love", "is", "a", "bitch"], False),  # a bare abstract noun
    (["PRP", "VBZ", "DT", "JJ", "NN"], ["it", "is", "a", "real", "bitch"], False),
    (["PRP", "VBP", "DT", "NN", "IN", "JJ", "NNS"], ["i", "am", "a", "slut", "for", "spicy", "noodles"], False),
    (["PRP$", "NN", "VBZ", "DT", "NN"], ["my", "boss", "is", "a", "bitch"], True),  # a person with "my"
    (["PRP", "VBZ", "DT", "NN"], ["she", "is", "a", "bitch"], True),
    (["NN", "VBD", "DT", "NN"], ["frost", "retarded", "the", "growth"], False),  # a verb, not a slur
    (["PRP", "VBD", "RB", "VBD"], ["he", "is", "so", "retarded"], True),  # mis-tagged as a verb: still a slur
    (["PRP", "VBZ", "DT", "NN", "IN", "VBG", "PRP"], ["he", "is", "a", "faggot", "for", "saying", "it"], True),
    # ninth pass: a reclaimed identity adjective, a verb, a thing, a group or a side is not a person
    (["DT", "JJ", "NN", "VBZ", "JJ"], ["the", "queer", "bookshop", "is", "lovely"], False),
    (["PRP", "VBP", "DT", "NN"], ["you", "are", "a", "queer"], True),  # the insult noun
    (["NNS", "MD", "VB", "DT", "NN"], ["taxes", "will", "cripple", "the", "town"], False),
    (["DT", "RBS", "JJ", "NN", "RB"], ["the", "most", "retarded", "plan", "ever"], False),
    (["JJ", "NNS", "VBP", "JJ"], ["retarded", "people", "are", "happy"], False),
    (["DT", "NN", "VBZ", "JJ"], ["the", "right", "is", "retarded"], False),
    (["NNP", "VBZ", "DT", "NN"], ["karma", "is", "a", "bitch"], False),  # a tagger's NNP that is an English noun
    (["NNP", "VBZ", "DT", "NN"], ["zorblax", "is", "a", "bitch"], True),  # a name
    (["DT", "NNS", "VBP", "JJ"], ["those", "sluts", "are", "loud"], False),  # plural: a group
])
def test_slur_names_person(tags, lower, expected) -> None:
    from alict_core.lcspec.predicates import slur_names_person

    assert slur_names_person(tags, lower) is expected
    predicate = Predicate.model_validate({"slur_names_person": True})
    assert predicate_holds(predicate, lower, frozenset(), None, tags) is expected
