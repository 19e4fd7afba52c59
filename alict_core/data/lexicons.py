"""Term lists: HateCheck identity terms and slurs, pronouns, HurtLex, and the profanity list.

Profanity list: ``better-profanity``'s bundled word list (``profanity_wordlist.txt``) minus
``NOT_PROFANITY``: identity words and ordinary words that list also carries (``gay``, ``god``,
``kill``, ``stupid``, ``sex`` ...), so the predicate matches swear words, not topics. HurtLex is
loaded separately (``hurtlex()``) for its categories; it is not mixed into the profanity list.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Sequence

from alict_core.data.checked import reads_data
from alict_core.data.files import data_file

NOT_PROFANITY = frozenset({
    "gay", "gays", "lesbian", "lesbians", "homosexual", "transsexual", "god", "kill", "killed", "stupid",
    "nazi", "nazis", "fat", "sex", "sexy", "sexual", "hell", "lmao", "lmfao", "rape", "raped", "rapist",
    "drunk", "ugly", "kinky", "dope", "idiot", "dumb", "crazy", "hate", "muslim", "jew", "jews", "black",
    "white", "weed", "naked", "nude", "strip", "hardcore", "porn", "vagina", "penis", "breasts", "boobs",
})


def split_terms(value: str) -> list[str]:
    """Split a HateCheck comma list, stripping the space after each comma (the original kept it)."""
    return [term.strip() for term in value.split(",") if term.strip()]


@lru_cache(maxsize=1)
@reads_data("hatecheck/template_placeholders.csv")  # damaged: one data error, not exit 3
def hatecheck_placeholders() -> dict[str, list[str]]:
    """HateCheck placeholder -> term list, e.g. ``"IDENTITY_P" -> ["women", "trans people", ...]``."""
    table = {}
    with open(data_file("hatecheck/template_placeholders.csv"), encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            table[row["Placeholder"].strip("[]")] = split_terms(row["Values"])
    return table


@dataclass(frozen=True)
class IdentityGroup:
    """One HateCheck identity group with its singular, plural and adjective forms."""

    name: str
    singular: str
    plural: str
    adjective: str


@lru_cache(maxsize=1)
@reads_data("hatecheck/template_placeholders.csv")  # damaged: one data error, not exit 3
def identity_groups() -> tuple[IdentityGroup, ...]:
    table = hatecheck_placeholders()
    rows = zip(table["IDENTITY_S"], table["IDENTITY_P"], table["IDENTITY_A"], strict=True)
    return tuple(IdentityGroup(adj.lower(), s.lower(), p.lower(), adj.lower()) for s, p, adj in rows)


@lru_cache(maxsize=1)
def identity_terms() -> frozenset[str]:
    """Every identity term (single words and multi-word phrases), lower-cased."""
    terms = set()
    for group in identity_groups():
        terms.update({group.singular, group.plural, group.adjective})
    return frozenset(terms)


@lru_cache(maxsize=1)
def slur_terms() -> frozenset[str]:
    table = hatecheck_placeholders()
    return frozenset(t.lower() for t in table["SLUR_S"] + table["SLUR_P"])


@dataclass(frozen=True)
class PronounSwapTable:
    """Gendered pronouns and their swaps (``pronoun_swaps.yaml``)."""

    groups: dict[str, tuple[str, ...]]
    swap: dict[str, str]
    ambiguous: dict[str, dict[str, str]]  # word -> {"determiner": ..., "pronoun": ...}
    not_noun_phrase_start: frozenset[str]
    skip_before_next: frozenset[str]  # opening brackets and quotes between the word and what follows
    coordinated_determiners: frozenset[str]  # "his or her own": "or"/"and" + one of these

    def counterpart(self, word: str, following: Sequence[str] = ()) -> str | None:
        """The swap of a lower-cased ``word`` given the tokens after it (None: not a gendered pronoun)."""
        if word in self.swap:
            return self.swap[word]
        options = self.ambiguous.get(word)
        if options is None:
            return None
        rest = [t.lower() for t in following]
        while rest and rest[0] in self.skip_before_next:
            rest = rest[1:]
        follows = rest[0] if rest else ""
        starts_noun_phrase = any(c.isalnum() for c in follows) and follows not in self.not_noun_phrase_start
        coordinated = follows in ("and", "or") and len(rest) > 1 and rest[1] in self.coordinated_determiners
        return options["determiner" if starts_noun_phrase or coordinated else "pronoun"]


@lru_cache(maxsize=1)
def pronoun_swap_table() -> PronounSwapTable:
    """The one pronoun table (package data ``alict_core/data/pronoun_swaps.yaml``)."""
    import yaml

    text = resources.files("alict_core.data").joinpath("pronoun_swaps.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    return PronounSwapTable(
        groups={name: tuple(words) for name, words in raw["groups"].items()},
        swap=dict(raw["swap"]),
        ambiguous={word: dict(options) for word, options in raw["ambiguous"].items()},
        not_noun_phrase_start=frozenset(raw["not_noun_phrase_start"].lower().split()),
        skip_before_next=frozenset(raw["skip_before_next"].split()),
        coordinated_determiners=frozenset(raw["coordinated_determiners"].split()),
    )


@lru_cache(maxsize=1)
def pronoun_terms() -> frozenset[str]:
    return frozenset(p for group in pronoun_swap_table().groups.values() for p in group)


@lru_cache(maxsize=1)
def hurtlex() -> dict[str, frozenset[str]]:
    """HurtLex lemma (lower-cased) -> set of its categories."""
    table: dict[str, set[str]] = {}
    with open(data_file("hurtlex/hurtlex_EN.tsv"), encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            table.setdefault(row["lemma"].lower(), set()).add(row["category"])
    return {k: frozenset(v) for k, v in table.items()}


@lru_cache(maxsize=1)
def profanity_terms() -> frozenset[str]:
    """better-profanity's word list without the ordinary words in NOT_PROFANITY (see module doc)."""
    try:
        text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        from alict_core.common.errors import AlictError

        raise AlictError(
            "the profanity list needs the better-profanity package: pip install -r requirements.txt"
        ) from exc
    words = {line.strip().lower() for line in text.splitlines() if line.strip()}
    return frozenset(words - NOT_PROFANITY - set(identity_terms()))
