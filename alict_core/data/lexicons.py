"""Term lists: HateCheck identity terms and slurs, pronouns, HurtLex, and the profanity list.

Profanity list: ``better-profanity``'s bundled word list (``profanity_wordlist.txt``, 835 entries), plus
the HurtLex English entries of the categories ``asf`` (female genitalia), ``asm`` (male genitalia),
``pr`` (words related to prostitution) and ``om`` (homosexuality slurs) when their level is
``conservative`` — so the profanity predicate matches real swear words, not every HurtLex term.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from alict_core.config import data_file

PRONOUNS = {
    "male": ("he", "him", "his", "himself"),
    "female": ("she", "her", "hers", "herself"),
}
PROFANITY_HURTLEX_CATEGORIES = ("asf", "asm", "pr", "om")


def split_terms(value: str) -> list[str]:
    """Split a HateCheck comma list, stripping the space after each comma (the original kept it)."""
    return [term.strip() for term in value.split(",") if term.strip()]


@lru_cache(maxsize=1)
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
def identity_groups() -> tuple[IdentityGroup, ...]:
    table = hatecheck_placeholders()
    rows = zip(table["IDENTITY_S"], table["IDENTITY_P"], table["IDENTITY_A"])
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


@lru_cache(maxsize=1)
def pronoun_terms() -> frozenset[str]:
    return frozenset(p for group in PRONOUNS.values() for p in group)


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
    """better-profanity's word list plus conservative HurtLex sexual/slur categories (see module doc)."""
    words: set[str] = set()
    try:
        text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
        words.update(line.strip().lower() for line in text.splitlines() if line.strip())
    except (ModuleNotFoundError, FileNotFoundError):
        pass
    with open(data_file("hurtlex/hurtlex_EN.tsv"), encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["category"] in PROFANITY_HURTLEX_CATEGORIES and row["level"] == "conservative":
                words.add(row["lemma"].lower())
    return frozenset(words)
