"""Typed records of expansion: the seed fields expansion reads, and one candidate expansion row.

Seeds reach expansion as ``Seed`` objects or plain dicts (suites, tests): :meth:`SeedFields.of` reads either once.
An expansions artefact stores one :meth:`ExpansionRow.to_dict` per line (the keys and their order are the
artefact format).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alict_core.expansion.constraints.fill_checks import field_of


@dataclass(frozen=True)
class SeedFields:
    """What expansion needs of a seed, read once from a ``Seed`` or its dict."""

    id: str
    lc_id: str
    task: str
    text: str

    @classmethod
    def of(cls, seed: Any, lc_id: str = "", task: str = "") -> "SeedFields":
        """``seed``'s fields; ``lc_id`` and ``task`` stand in where the seed has none (the spec's)."""
        return cls(id=str(field_of(seed, "id")), lc_id=str(field_of(seed, "lc_id", lc_id) or lc_id),
                   task=str(field_of(seed, "task", task) or task), text=str(field_of(seed, "text")))


@dataclass(frozen=True)
class ExpansionRow:
    """One candidate expansion of a seed, accepted or not, with every check's verdict and reason."""

    id: str
    seed_id: str
    lc_id: str
    task: str
    seed_text: str
    text: str
    accepted: bool
    words: list[str]
    score: float
    verdicts: dict[str, bool | None]
    reasons: dict[str, str]
    masked: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The stored row (keys in artefact order)."""
        return {"id": self.id, "seed_id": self.seed_id, "lc_id": self.lc_id, "task": self.task,
                "seed_text": self.seed_text, "text": self.text, "accepted": self.accepted, "words": list(self.words),
                "score": self.score, "verdicts": dict(self.verdicts), "reasons": dict(self.reasons),
                "masked": dict(self.masked)}
