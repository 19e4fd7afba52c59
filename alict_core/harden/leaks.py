"""Leak check: no text hardening trains on may equal, or share a source sentence with, a text it is evaluated on.

Run before every retraining (and again before every evaluation). Evaluation texts are the LC test split
(each case's text and its INV/DIR variants) and the corpus test split; a training case leaks when its text
equals one of them (case-folded, whitespace collapsed) or when one of its source sentences is a source of an
LC test case or is itself a corpus test sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from alict_core.common.errors import AlictError
from alict_core.harden.split import case_sources, text_key


class LeakError(AlictError):
    """Training data overlaps evaluation data; the message gives the counts."""


@dataclass
class LeakReport:
    """Training texts that equal an evaluation text / share a source sentence with one (a text may do both)."""

    n_training: int
    n_evaluation: int
    equal_text: int = 0
    shared_source: int = 0
    leaking: int = 0
    examples: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"n_training": self.n_training, "n_evaluation": self.n_evaluation, "equal_text": self.equal_text,
                "shared_source": self.shared_source, "leaking": self.leaking}

    def message(self, where: str) -> str:
        shown = "; ".join(repr(e) for e in self.examples[:3])
        return (f"{where}: {self.leaking} of {self.n_training} training texts leak into the evaluation data "
                f"({self.equal_text} equal an evaluation text, {self.shared_source} share a source sentence with "
                f"one; e.g. {shown}); re-export the cases with `harden export` (its split keeps every source "
                "sentence on one side) and train on that export")


def find_leaks(training: Sequence[Mapping[str, Any]], evaluation: Sequence[Mapping[str, Any]], *,
               heldout_texts: Iterable[str] = (),
               source_split: Callable[[str], str | None] | None = None) -> LeakReport:
    """Count the training rows (dicts with ``text`` and ``meta.source_ids``) that leak into ``evaluation``
    rows (same form, ``variants`` included) or into the corpus test split (``heldout_texts``, and every source
    id for which ``source_split`` answers "test")."""
    eval_texts = {text_key(t) for t in heldout_texts}
    eval_sources: set[str] = set()
    for row in evaluation:
        eval_texts.update(text_key(t) for t in [row["text"], *(row.get("variants") or [])])
        eval_sources.update(case_sources(row))
    report = LeakReport(n_training=len(training), n_evaluation=len(eval_texts))
    for row in training:
        equal = text_key(row["text"]) in eval_texts
        sources = case_sources(row)
        shared = any(s in eval_sources or (source_split is not None and source_split(s) == "test") for s in sources)
        report.equal_text += equal
        report.shared_source += shared
        if equal or shared:
            report.leaking += 1
            report.examples.append(str(row["text"]))
    return report


def overlapping(rows: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Per row: does its text (or a variant) equal a ``reference`` text, or does it share a source sentence
    with a ``reference`` row?"""
    texts = {text_key(r["text"]) for r in reference}
    sources = {s for r in reference for s in case_sources(r)}
    return [any(text_key(t) in texts for t in [row["text"], *(row.get("variants") or [])])
            or any(s in sources for s in case_sources(row)) for row in rows]


def check_no_leaks(training: Sequence[Mapping[str, Any]], evaluation: Sequence[Mapping[str, Any]], *, where: str,
                   heldout_texts: Iterable[str] = (),
                   source_split: Callable[[str], str | None] | None = None) -> LeakReport:
    """:func:`find_leaks`, raising :class:`LeakError` with the counts unless nothing leaks."""
    report = find_leaks(training, evaluation, heldout_texts=heldout_texts, source_split=source_split)
    if report.leaking:
        raise LeakError(report.message(where))
    return report


def heldout_without_training(heldout: tuple[Sequence[str], Sequence[str]],
                             training_texts: Iterable[str]) -> tuple[list[str], list[str], int]:
    """(texts, labels, n dropped): the corpus test split minus texts equal to a training text (SST and
    HateXplain repeat a few sentences across their official splits)."""
    seen = {text_key(t) for t in training_texts}
    keep = [(t, y) for t, y in zip(heldout[0], heldout[1], strict=True) if text_key(t) not in seen]
    return [t for t, _ in keep], [y for _, y in keep], len(heldout[0]) - len(keep)
