"""Validation rule 3 of expansion: the LC's structural predicates still hold on an expanded seed.

What is re-checked, and on what: every corpus sentence of the seed (its ``segments``) is located in the
expanded text (insertions inside it are attributed to it) and its search group's predicates are
re-checked on that segment in context — length, lexicon classes, words, phrases, anchors — as the
method requires of every expansion. ``length`` counts the segment's tokens only (the corpus part with
its insertions), never the rule-inserted text around it, so LC3's "< 20" still holds on the sentence
that came from the corpus. ``label`` is not re-checked (unknown for new text; the expected outcome is
inherited from the seed). Rule-inserted text is never part of a segment.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from alict_core.data.annotate import annotate_text
from alict_core.lcspec.predicates import first_failing
from alict_core.lcspec.schema import LCSpec
from alict_core.seeds.types import Seed

NOT_RECHECKED = ("label",)


def _token_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Token indices [a, b) of a character span of a single-space-joined text."""
    a = text[:start].count(" ") if start else 0
    b = a + len(text[start:end].split())
    return a, b


def segment_token_spans(seed: Seed, expanded_tokens: list[str]) -> list[tuple[int, int]]:
    """Token spans of each seed segment inside the expanded tokens (insertions inside a segment join it)."""
    seed_tokens = seed.text.split()
    mapping: dict[int, int] = {}
    for block in SequenceMatcher(a=seed_tokens, b=expanded_tokens, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            mapping[block.a + k] = block.b + k
    spans = []
    for segment in seed.segments:
        a, b = _token_span(seed.text, segment.start, segment.end)
        mapped = [mapping[i] for i in range(a, b) if i in mapping]
        spans.append((min(mapped), max(mapped) + 1) if mapped else (0, 0))
    return spans


def expansion_predicates_hold(spec: LCSpec, seed: Seed, expanded_text: str, annotation=None) -> tuple[bool, str]:
    """(ok, reason): whether each source segment of the expanded seed still satisfies its group.

    ``annotation``: the expanded text's ``Annotation`` when the caller already has it (batched tagging).
    """
    tokens = expanded_text.split()
    annotation = annotation if annotation is not None else annotate_text(expanded_text)
    for segment, (a, b) in zip(seed.segments, segment_token_spans(seed, tokens), strict=True):
        if a == b:
            return False, f"source sentence of group {segment.group!r} not found in the expansion"
        lower = [t.lower() for t in tokens[a:b]]
        classes = frozenset().union(*annotation.classes[a:b])
        tags = annotation.tags[a:b]
        failing = first_failing(spec.group(segment.group), lower, classes, skip=NOT_RECHECKED, tags=tags)
        if failing is not None:
            value = failing.model_dump(exclude_none=True)[failing.kind]
            return False, f"group {segment.group!r}: predicate {failing.kind} {value} fails"
    return True, "all predicates of the source groups hold on the corpus part (label is not re-checked)"
