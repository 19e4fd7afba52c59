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
        lead, core, trail = _PUNCT.match(chunk).groups()
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
    """One predicate on lower-cased tokens, their lexicon classes and (when known) the label."""
    kind = predicate.kind
    if kind == "length":
        return length_holds(predicate.length, len(lower))
    if kind == "label":
        return label is None or label in predicate.label
    if kind == "lexicon":
        return set_semantics(predicate.lexicon, classes)
    if kind == "words":
        return set_semantics(predicate.words, set(lower))
    if kind == "phrases":
        return phrases_hold(predicate.phrases, lower)
    if kind == "starts_with":
        return any(tuple(lower[: len(p)]) == p for p in map(lower_tokens, predicate.starts_with))
    if kind == "ends_with":
        return any(len(p) <= len(lower) and tuple(lower[len(lower) - len(p) :]) == p for p in map(lower_tokens, predicate.ends_with))
    raise AssertionError(kind)


def compile_predicate(predicate: Predicate) -> Callable[[Sequence[str], frozenset[str], str | None], bool]:
    """A fast closure for one predicate (kind dispatch and phrase tokenisation done once)."""
    kind = predicate.kind
    if kind == "label":
        labels = frozenset(predicate.label)
        return lambda lower, classes, label: label is None or label in labels
    if kind == "length":
        bounds = predicate.length
        return lambda lower, classes, label: length_holds(bounds, len(lower))
    if kind == "lexicon":
        spec = predicate.lexicon
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


def first_failing(group: SearchGroup, lower: Sequence[str], classes: frozenset[str], skip: tuple[str, ...] = ()) -> Predicate | None:
    """The first predicate of ``group`` that fails on a text (label unknown), ignoring kinds in ``skip``."""
    for predicate in group.predicates:
        if predicate.kind in skip:
            continue
        if not predicate_holds(predicate, lower, classes, None):
            return predicate
    return None
