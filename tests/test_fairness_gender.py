"""Fairness swaps (``identity_swaps``): a surname that is an identity adjective, and gender terms beside
gendered nouns of the same gender (issue #27, H4)."""

from __future__ import annotations

from alict_core.seeds.fairness import adjective_as_name, identity_swaps, plural_forms


def test_capitalised_adjective_without_person_noun_is_a_name() -> None:
    tokens = "Black directs the film and gives him a small part .".split()
    assert adjective_as_name(tokens, 0)
    assert identity_swaps(" ".join(tokens)) == []  # "him" may refer to Black: no pronoun swap
    assert not adjective_as_name("Black people built the town .".split(), 0)


def test_gender_term_beside_a_same_gender_noun_is_kept() -> None:
    assert identity_swaps("the film follows four women and their sisters .") == []
    assert identity_swaps("a female lead plays the aunt .") == []


def test_gender_term_without_a_gendered_noun_is_swapped() -> None:
    variants = identity_swaps("a film about women on a trip .")
    assert "a film about muslims on a trip ." in variants
    assert identity_swaps("women argue while he watches .")  # a pronoun alone does not block the swap


def test_plural_forms() -> None:
    assert {"women", "wives", "ladies", "actresses", "daughters"} <= plural_forms(
        frozenset({"woman", "wife", "lady", "actress", "daughter"}))


def test_only_generic_group_terms_are_swapped():
    """Issue 27 ninth pass: a term for particular people or a pronoun gives no variant."""
    assert identity_swaps("a witty film about what gay men want from love .")
    assert identity_swaps("a story every woman will recognise .")
    assert identity_swaps("a female director shot it with great care .") == []
    assert identity_swaps("the gangster treats his women badly .") == []
    assert identity_swaps("all four women give superb performances .") == []
    assert identity_swaps("a male hip hop fantasy , loud and dull .") == []
    assert identity_swaps("She is a great actor .") == []
