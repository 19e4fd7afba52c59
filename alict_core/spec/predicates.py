"""Evaluate spec predicates on annotated texts (corpus sentences or expanded test sentences)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence

from alict_core.spec.schema import ClassSet, LengthPredicate, Predicate, SearchGroup

_CLITIC = re.compile(r"(?i)^(.+?)(n't|'s|'re|'ll|'ve|'d|'m)$")
_PUNCT = re.compile(r"^([\"(\[{`]*)(.*?)([\"')\]}.,!?;:]*)$")


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[str, ...]:
    """PTB-style tokens as in SST ("don't." -> "do", "n't", "."), for rule strings and phrases."""
    tokens: list[str] = []
    for chunk in text.split():
        parts = _PUNCT.match(chunk)
        assert parts is not None  # every part of the pattern is optional, so any whitespace-free chunk matches
        lead, core, trail = parts.groups()
        tokens.extend(lead)
        clitic = _CLITIC.match(core) if core else None
        if clitic and clitic.group(1).lower() not in ("", "'"):
            tokens.extend([clitic.group(1), clitic.group(2)])
        elif core:
            tokens.append(core)
        tokens.extend(trail)
    return tuple(tokens)


@lru_cache(maxsize=4096)
def lower_tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in tokenize(text))


def length_holds(p: LengthPredicate, n: int) -> bool:
    return (
        (p.lt is None or n < p.lt) and (p.le is None or n <= p.le) and (p.gt is None or n > p.gt)
        and (p.ge is None or n >= p.ge) and (p.eq is None or n == p.eq)
    )


def set_semantics(spec: ClassSet, present: set[str] | frozenset[str]) -> bool:
    """include/exclude × any/all over a set of present names."""
    hits = [value in present for value in spec.values]
    if spec.include is not None:
        return any(hits) if spec.mode == "any" else all(hits)
    return not any(hits) if spec.mode == "any" else not all(hits)


def contains_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(tuple(tokens[i : i + n]) == tuple(phrase) for i in range(len(tokens) - n + 1)) if n else False


def phrases_hold(spec: ClassSet, tokens: Sequence[str]) -> bool:
    present = {value for value in spec.values if contains_phrase(tokens, lower_tokens(value))}
    return set_semantics(spec, present)


def predicate_holds(
    predicate: Predicate, lower: Sequence[str], classes: frozenset[str], label: str | None
) -> bool:
    """One predicate on lower-cased tokens, their lexicon classes and (when known) the label.

    The fields are tried in ``Predicate.kind`` order; exactly one is set.
    """
    if (length := predicate.length) is not None:
        return length_holds(length, len(lower))
    if (labels := predicate.label) is not None:
        return label is None or label in labels
    if (lexicon := predicate.lexicon) is not None:
        return set_semantics(lexicon, classes)
    if (words := predicate.words) is not None:
        return set_semantics(words, set(lower))
    if (phrases := predicate.phrases) is not None:
        return phrases_hold(phrases, lower)
    if (starts := predicate.starts_with) is not None:
        return any(tuple(lower[: len(p)]) == p for p in map(lower_tokens, starts))
    if (ends := predicate.ends_with) is not None:
        n = len(lower)
        return any(len(p) <= n and tuple(lower[n - len(p) :]) == p for p in map(lower_tokens, ends))
    raise AssertionError(predicate.kind)


def compile_predicate(predicate: Predicate) -> Callable[[Sequence[str], frozenset[str], str | None], bool]:
    """A fast closure for one predicate (kind dispatch and phrase tokenisation done once)."""
    if (length := predicate.length) is not None:
        return lambda lower, classes, label: length_holds(length, len(lower))
    if predicate.label is not None:
        labels = frozenset(predicate.label)
        return lambda lower, classes, label: label is None or label in labels
    if (spec := predicate.lexicon) is not None:
        return lambda lower, classes, label: set_semantics(spec, classes)
    return lambda lower, classes, label: predicate_holds(predicate, lower, classes, label)


def group_matcher(group: SearchGroup) -> Callable[[object], bool]:
    """``matches(item)``: whether a corpus item satisfies the group's split filter and every predicate."""
    checks = [compile_predicate(p) for p in group.predicates]
    splits = frozenset(group.split) if group.split is not None else None

    def matches(item) -> bool:
        if splits is not None and item.split not in splits:
            return False
        return all(check(item.lower, item.class_set, item.label) for check in checks)

    return matches


def group_matches(group: SearchGroup, item) -> bool:
    """Whether a corpus item satisfies every predicate of a search group (and its split filter)."""
    return group_matcher(group)(item)


def first_failing(
    group: SearchGroup, lower: Sequence[str], classes: frozenset[str], skip: tuple[str, ...] = ()
) -> Predicate | None:
    """The first predicate of ``group`` that fails on a text (label unknown), ignoring kinds in ``skip``."""
    for predicate in group.predicates:
        if predicate.kind in skip:
            continue
        if not predicate_holds(predicate, lower, classes, None):
            return predicate
    return None
