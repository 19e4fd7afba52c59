"""Seed tests and seed sets (plain, JSON-serialisable)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_jsonl, write_jsonl
from alict_core.lcspec.expectations import ExpectationError, describe, passes


@dataclass(frozen=True)
class Segment:
    """Where a corpus sentence sits in a seed's text (character span) and which group matched it."""

    group: str
    source_id: str
    start: int
    end: int


@dataclass
class Seed:
    id: str
    lc_id: str
    task: str
    text: str
    test_type: str
    expected: dict[str, Any]
    source_ids: list[str]
    rule: str
    rule_kind: str
    slots: dict[str, str]
    protected_spans: list[list[int]] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    source_labels: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "Seed":
        row = dict(row)
        row["segments"] = [Segment(**s) for s in row.get("segments", [])]
        return cls(**row)


@dataclass
class SeedSet:
    """The seeds of one LC with the search statistics that produced them."""

    lc_id: str
    task: str
    seeds: list[Seed]
    n_matches: int
    n_candidates: int
    matches_per_group: dict[str, int]
    key: str

    def counts(self) -> dict[str, Any]:
        return {
            "lc_id": self.lc_id, "task": self.task, "matches": self.n_matches,
            "candidates": self.n_candidates, "seeds": len(self.seeds),
        }

    def to_dataframe(self):
        import pandas as pd

        rows = []
        for s in self.seeds:
            rows.append({
                "id": s.id, "text": s.text, "rule": s.rule, "expected": expected_text(s.expected),
                "source_ids": ", ".join(s.source_ids), "source_labels": ", ".join(s.source_labels),
                "slots": "; ".join(f"{k}={v}" for k, v in s.slots.items()),
            })
        return pd.DataFrame(rows, columns=["id", "text", "rule", "expected", "source_ids", "source_labels", "slots"])

    def write(self, path: Path) -> int:
        return write_jsonl(path, (s.to_dict() for s in self.seeds))

    @staticmethod
    def read_seeds(path: Path) -> list[Seed]:
        return [Seed.from_dict(row) for row in read_jsonl(path)]


def expansion_case_id(row: Any, seed_id: str) -> str:
    """The case id of an expansion row: its ``id``, else one derived from its seed and text (the same id the
    runner gives the case and the validity checks flag, so a flagged row without an ``id`` is really left out)."""
    return str(row.get("id") or f"{seed_id}-x{hash_json(str(row['text']), 10)}")


def expected_text(expected: dict[str, Any]) -> str:
    """A short human-readable form of an expected outcome (MFT, DIR or INV)."""
    return describe(expected)


def expected_passes(expected: dict[str, Any], predicted_label: str) -> bool:
    """Whether a predicted label satisfies an MFT expectation (label / one_of / not_label)."""
    try:
        return passes(expected, predicted_label)
    except ExpectationError as exc:
        raise ValueError(str(exc)) from None
