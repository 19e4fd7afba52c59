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
    variants = identity_swaps("the film follows four women on a trip .")
    assert "the film follows four muslims on a trip ." in variants
    assert identity_swaps("the women argue while he watches .")  # a pronoun alone does not block the swap


def test_plural_forms() -> None:
    assert {"women", "wives", "ladies", "actresses", "daughters"} <= plural_forms(
        frozenset({"woman", "wife", "lady", "actress", "daughter"}))
