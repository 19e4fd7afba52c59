"""The one pronoun swap table (data) and the fairness INV variants built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from alict_core.data.lexicons import pronoun_swap_table, pronoun_terms
from alict_core.seeds.fairness import identity_swaps, swap_pronouns

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text, swapped", [
    ("I keep treating her as a friend", "I keep treating him as a friend"),
    ("her film was great", "his film was great"),
    ("His film was great", "Her film was great"),
    ("I love her", "I love him"),
    ("give her the book", "give him the book"),
    ("the idea was his .", "the idea was hers ."),
    ("his idea , not hers", "her idea , not his"),
    ("He told her that his mother liked her cooking", "She told him that her mother liked his cooking"),
    ("she hurt herself", "he hurt himself"),
    ("through the prism of his or her own beliefs", "through the prism of her or his own beliefs"),
    ("the core of his being", "the core of her being"),
    ("grief drives her , love", "grief drives him , love"),
])
def test_pronouns_swap_by_their_role(text, swapped):
    assert " ".join(swap_pronouns(text.split())) == swapped


def test_the_table_is_symmetric_and_feeds_the_pronoun_class():
    table = pronoun_swap_table()
    male, female = set(table.groups["male"]), set(table.groups["female"])
    for word, other in table.swap.items():
        assert {word, other} & male and {word, other} & female
    for options in table.ambiguous.values():
        assert set(options) == {"determiner", "pronoun"}
    assert pronoun_terms() == frozenset(male | female)
    assert {"no", "on", "off", "'s", "n't"} <= table.not_noun_phrase_start  # words YAML 1.1 would misread


def test_identity_swaps_add_no_pronoun_variant():
    variants = identity_swaps("Immigrants are treating her as a guest")
    assert "Immigrants are treating him as a guest" not in variants  # ninth pass: pronouns are not swapped
    assert not any("treating his as" in v for v in variants)
    assert identity_swaps("a film about nothing") == []


def test_no_second_pronoun_table_in_code():
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "alict_core").rglob("*.py")
            if '"himself"' in p.read_text(encoding="utf-8")]
    assert hits == []
