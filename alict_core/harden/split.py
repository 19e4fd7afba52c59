"""Split generated cases into train / validation / test by seed, so a seed's expansions never cross splits."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TypeVar

from alict_core.errors import AlictError

SPLITS = ("train", "validation", "test")
C = TypeVar("C")


@dataclass(frozen=True)
class SplitRatios:
    """Shares of seed groups per split (the paper's Auto-CheckList retraining used 8:1:1)."""

    train: float = 0.8
    validation: float = 0.1
    test: float = 0.1

    def __post_init__(self) -> None:
        shares = (self.train, self.validation, self.test)
        if (not all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) for s in shares)
                or any(s < 0 for s in shares) or abs(sum(shares) - 1.0) > 1e-6 or self.test <= 0):
            raise AlictError(f"split ratios must be >= 0, sum to 1 and give the test split a share; got {shares}")

    @classmethod
    def parse(cls, text: str) -> SplitRatios:
        """'8:1:1' or '0.8,0.1,0.1' → ratios normalised to sum 1."""
        parts = text.replace(",", ":").split(":")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 3 or not all(math.isfinite(v) for v in values) or sum(values) <= 0 \
                or any(v < 0 for v in values):
            raise AlictError(f"--split {text[:40]!r}: expected three finite non-negative numbers such as 8:1:1")
        total = sum(values)
        return cls(*(v / total for v in values))


def training_label(expected: Mapping[str, Any]) -> str | None:
    """The single label a classifier can be trained on, or None (one-of, not-label, INV and DIR cases)."""
    labels = expected.get("labels") or []
    if expected.get("kind") == "label" and len(labels) == 1:
        return str(labels[0])
    return None


def training_labels(expected: Mapping[str, Any]) -> list[str]:
    """Labels a classifier may be trained towards: the label of an MFT case, or each allowed label of a
    one-of case (trained with weight 1/k each, i.e. towards a uniform target over them); none for
    not-label, INV and DIR cases."""
    labels = [str(v) for v in expected.get("labels") or []]
    return labels if expected.get("kind") in ("label", "one_of") else []


def _group_counts(n_groups: int, ratios: SplitRatios) -> tuple[int, int, int]:
    """Groups per split: largest-remainder rounding, at least one test group when there are two or more."""
    raw = [n_groups * r for r in (ratios.train, ratios.validation, ratios.test)]
    counts = [int(x) for x in raw]
    for i in sorted(range(3), key=lambda i: raw[i] - counts[i], reverse=True)[: n_groups - sum(counts)]:
        counts[i] += 1
    if n_groups >= 2 and counts[2] == 0:
        donor = 0 if counts[0] >= counts[1] else 1
        counts[donor] -= 1
        counts[2] += 1
    return counts[0], counts[1], counts[2]


def split_cases(cases: Sequence[C], *, ratios: SplitRatios | None = None, seed: int = 13,
                lc_of: Any = None, seed_of: Any = None) -> dict[str, list[C]]:
    """{split: cases}: per LC, seed groups are shuffled with ``seed`` and cut by ``ratios``.

    ``cases`` may be ``TestCase`` objects or dicts (``lc_id``/``seed_id`` keys); ``lc_of``/``seed_of``
    override how the LC and seed id are read. The result does not depend on the input order.
    """
    ratios = ratios or SplitRatios()
    get_lc = lc_of or (lambda c: c["lc_id"] if isinstance(c, Mapping) else c.lc_id)
    get_seed = seed_of or (lambda c: c["seed_id"] if isinstance(c, Mapping) else c.seed_id)
    groups: dict[str, dict[str, list[C]]] = defaultdict(lambda: defaultdict(list))
    for case in cases:
        groups[str(get_lc(case))][str(get_seed(case))].append(case)
    out: dict[str, list[C]] = {name: [] for name in SPLITS}
    for lc in sorted(groups):
        keys = sorted(groups[lc])
        random.Random(f"{seed}:{lc}").shuffle(keys)
        n_train, n_val, _ = _group_counts(len(keys), ratios)
        for i, key in enumerate(keys):
            split = "train" if i < n_train else "validation" if i < n_train + n_val else "test"
            out[split].extend(groups[lc][key])
    return out
