"""Split generated cases into train / validation / test so that no seed, source sentence or text crosses splits."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, TypeVar

from alict_core.common.errors import AlictError

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
                or any(s < 0 for s in shares)):
            raise AlictError(f"split ratios must be finite numbers >= 0; got {shares}")
        if abs(sum(shares) - 1.0) > 1e-6:
            raise AlictError(f"split ratios must sum to 1; got {shares}")
        if self.test <= 0:  # said only what failed ("1:0:0" was told to be >= 0 and sum to 1 too)
            raise AlictError(f"split ratios must give the test split a share (train:validation:test); got {shares}")
        if self.train <= 0:  # "0:0:1" was accepted, then refused after a whole export was written
            raise AlictError(f"split ratios must give the training split a share (train:validation:test); got "
                             f"{shares}")

    @classmethod
    def parse(cls, text: str) -> SplitRatios:
        """'8:1:1' or '0.8,0.1,0.1' → ratios normalised to sum 1."""
        parts = text.replace(",", ":").split(":")
        try:
            if any("_" in p or not p.isascii() for p in parts):  # float() reads "8_0" as 80, full-width digits
                raise ValueError(text)
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 3 or not all(math.isfinite(v) for v in values) or any(v < 0 for v in values) \
                or not max(values) > 0:
            raise AlictError(f"--split {text[:40]!r}: expected three finite non-negative numbers, not all 0, such as "
                             "8:1:1")
        values = [v / max(values) for v in values]  # 1e308:1e308:1e308 is 1:1:1 (its sum overflowed; pass 37)
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


def text_key(text: str) -> str:
    """The form two texts are compared in for leaks: case-folded, whitespace collapsed."""
    return " ".join(str(text).casefold().split())


def case_sources(case: Any) -> list[str]:
    """Corpus sentence ids a case was built from (``meta.source_ids``, recorded from its seed); [] if none."""
    meta = case.get("meta") if isinstance(case, Mapping) else getattr(case, "meta", None)
    return [str(s) for s in (meta or {}).get("source_ids") or []]


class _Components:
    """Union-find over string keys."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def split_cases(cases: Sequence[C], *, ratios: SplitRatios | None = None, seed: int = 13,
                lc_of: Any = None, seed_of: Any = None, sources_of: Any = None, text_of: Any = None,
                held_out: Callable[[C], bool] | None = None) -> dict[str, list[C]]:
    """{split: cases}, leak-free: cases that share a seed, a source sentence or a text form one group, and a
    group never crosses splits.

    Groups are joined across LCs (a source sentence used by two LCs stays on one side). Each group belongs
    to the LC most of its cases come from; per LC the groups are shuffled with ``seed`` and cut by ``ratios``.
    A group holding a case for which ``held_out(case)`` is true (built from a corpus test sentence, or equal
    to one) always goes to the test split; with more such groups than the test share, validation and then
    train get fewer. ``cases`` may be ``TestCase`` objects or dicts; ``lc_of``/``seed_of``/``sources_of``/
    ``text_of`` override how fields are read. The result does not depend on the input order.
    """
    ratios = ratios or SplitRatios()
    get_lc = lc_of or (lambda c: c["lc_id"] if isinstance(c, Mapping) else c.lc_id)
    get_seed = seed_of or (lambda c: c["seed_id"] if isinstance(c, Mapping) else c.seed_id)
    get_sources = sources_of or case_sources
    get_text = text_of or (lambda c: c["text"] if isinstance(c, Mapping) else c.text)
    links = _Components()
    for case in cases:
        node = f"seed:{get_lc(case)}:{get_seed(case)}"
        links.find(node)
        links.union(node, f"text:{text_key(get_text(case))}")
        for source in get_sources(case):
            links.union(node, f"source:{source}")
    members: dict[str, list[C]] = defaultdict(list)
    for case in cases:
        members[links.find(f"seed:{get_lc(case)}:{get_seed(case)}")].append(case)
    by_lc: dict[str, list[str]] = defaultdict(list)
    for root, items in members.items():
        lcs = Counter(str(get_lc(c)) for c in items)
        by_lc[min(lcs, key=lambda lc: (-lcs[lc], lc))].append(root)
    out: dict[str, list[C]] = {name: [] for name in SPLITS}
    for lc in sorted(by_lc):
        keys = sorted(by_lc[lc])
        random.Random(f"{seed}:{lc}").shuffle(keys)
        forced = {k for k in keys if held_out and any(held_out(c) for c in members[k])}
        free = [k for k in keys if k not in forced]
        n_train, n_val, _ = _group_counts(len(keys), ratios)
        n_train = min(n_train, len(free))
        n_val = min(n_val, len(free) - n_train)
        for i, key in enumerate(free):
            split = "train" if i < n_train else "validation" if i < n_train + n_val else "test"
            out[split].extend(members[key])
        for key in sorted(forced):
            out["test"].extend(members[key])
    return out
