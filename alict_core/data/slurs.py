"""One slur matcher for every LC that requires or excludes slurs, robust to spelling.

A token is a slur when, after normalisation, it is a slur of the lexicons (HateCheck's slur list and
``slur_forms.yaml``), an inflection of one, a compound of two, or a coinage starting with a slur stem.
Normalisation: lower case, leetspeak digits read as letters, non-letters dropped; elongation allowed (a
letter may repeat more often than in the slur, never less: "niggaas" is "niggas", "con" is not "coon");
inflections -s/-z/-es/-as/-ed/-ing stripped ("retarded" is "retard"); an "h" after the first letter
ignored ("whigger" is "wigger").
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from itertools import groupby
from typing import Iterable, Sequence

from alict_core.data import lexicons

LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
NOT_LETTER = re.compile(r"[^a-z]")
SUFFIXES = ("ing", "ed", "es", "as", "s", "z")
MIN_STEM = 4  # a shorter slur ("fag", "nig", "jap") begins too many ordinary words to count as a stem
LONG = 5  # a slur this long may be elongated by a doubled letter and inflected (-ed, -ing, -es)
MIN_PART = 3  # each part of a compound of two slurs ("nig" + "nog")

Runs = tuple[tuple[str, int], ...]


def runs(word: str) -> Runs:
    """Run-length form: "nigga" -> (("n",1),("i",1),("g",2),("a",1))."""
    return tuple((letter, len(list(group))) for letter, group in groupby(word))


def normalise(token: str) -> str:
    """Lower-cased, leetspeak digits read as letters, everything but letters dropped."""
    return NOT_LETTER.sub("", token.lower().translate(LEET))


@lru_cache(maxsize=1)
def slur_forms() -> tuple[frozenset[str], frozenset[str]]:
    """(whole slurs, stems): HateCheck's single-word slurs plus ``slur_forms.yaml``, normalised."""
    import yaml

    text = resources.files("alict_core.data").joinpath("slur_forms.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    words = {normalise(t) for t in lexicons.slur_terms() if " " not in t} | {normalise(w) for w in raw["words"].split()}
    stems = {normalise(s) for s in raw["stems"].split()}
    stems |= {w for w in words if len(w) >= 6}
    return frozenset(w for w in words if w), frozenset(s for s in stems if len(s) >= MIN_STEM)


@lru_cache(maxsize=1)
def _slurs_by_skeleton() -> dict[str, list[Runs]]:
    """Letters with repeats collapsed ("nigga" -> "niga") -> the run-length forms of slurs with it."""
    index: dict[str, list[Runs]] = {}
    for word in slur_forms()[0]:
        form = runs(word)
        index.setdefault("".join(letter for letter, _ in form), []).append(form)
    return index


def _elongates(token: Runs, slur: Runs) -> bool:
    """Same letters, each run at least as long as the slur's ("niggaas" elongates "niggas").

    A single letter of a short slur counts as elongated only when it repeats three times: "woop" is not
    "wop", "woooop" is.
    """
    short = sum(n for _, n in slur) < LONG
    return len(token) == len(slur) and all(
        a == b and (m == n or (m > n and (not short or m >= 3))) for (a, m), (b, n) in zip(token, slur, strict=True)
    )


def _is_whole_slur(word: str) -> bool:
    form = runs(word)
    skeleton = "".join(letter for letter, _ in form)
    return any(_elongates(form, slur) for slur in _slurs_by_skeleton().get(skeleton, ()))


def _spellings(word: str) -> Iterable[str]:
    """The word, with "wh"/"gh" opening it read as "w"/"g", and each without an inflection suffix.

    A plural -s/-z comes off any slur; -ed/-ing/-es/-as only off a long one ("retarded", not "spiced").
    """
    bases = [word]
    if len(word) > 3 and word[:2] in ("wh", "gh"):
        bases.append(word[0] + word[2:])
    for base in bases:
        yield base
        for suffix in SUFFIXES:
            stem = base[: -len(suffix)]
            if base.endswith(suffix) and len(stem) >= (MIN_PART if suffix in ("s", "z") else LONG):
                yield stem


def _starts_with_stem(word: str) -> bool:
    collapsed = "".join(letter for letter, _ in runs(word))
    for stem in slur_forms()[1]:
        stem_collapsed = "".join(letter for letter, _ in runs(stem))
        if collapsed.startswith(stem_collapsed):
            prefix_runs = runs(word)[: len(runs(stem))]
            if all(m >= n for (_, m), (_, n) in zip(prefix_runs, runs(stem), strict=True)):
                return True
    return False


def _is_compound(word: str) -> bool:
    """Two slurs written as one word ("nignog"), or a word ending in a long slur ("sandnigger")."""
    for cut in range(MIN_PART, len(word) - MIN_PART + 1):
        head, tail = word[:cut], word[cut:]
        if any(_is_whole_slur(h) for h in _spellings(head)) and any(_is_whole_slur(t) for t in _spellings(tail)):
            return True
        if len(tail) >= 6 and any(_is_whole_slur(t) for t in _spellings(tail)):
            return True
    return False


@lru_cache(maxsize=100_000)
def is_slur(token: str) -> bool:
    """Whether one token is a slur in some spelling (see the module doc)."""
    word = normalise(token)
    if len(word) < MIN_PART:
        return False
    return any(_is_whole_slur(w) for w in _spellings(word)) or _starts_with_stem(word) or _is_compound(word)


def has_slur(lower: Sequence[str]) -> bool:
    """Whether some token is a slur in any spelling.

    A slur split into two ordinary words ("shit skin", "rag head") is not found: the halves read as their
    own words ("my shit skin" is bad skin); specs that mean those name them as phrases.
    """
    return any(is_slur(token) for token in lower)
