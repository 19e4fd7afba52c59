"""Sampling plans for human review (the paper's RQ2 protocol).

Size: Cochran's rule with the finite-population correction (95 % confidence, 5 % margin, p = 0.5 by
default): ``n0 = z² p (1 − p) / e²``, ``n = ceil(n0 / (1 + (n0 − 1) / N))``. For a large suite that is
≈ 384 seeds, the paper's number. Seeds are drawn per LC (proportional allocation, largest remainders,
at least one per LC while the size allows), each with one random expansion; seeds and their expansion
stay together in one of ``n_sets`` sets; each set goes to ``k`` reviewers. Every draw uses ``seed``.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.hashing import hash_json, hash_text
from alict_core.review.store import ReviewError


@dataclass(frozen=True)
class SamplingPlan:
    """How to draw a review sample; stored with the task."""

    confidence: float = 0.95
    margin: float = 0.05
    proportion: float = 0.5
    n_sets: int = 10
    k: int = 2
    seed: int = 0
    size: int | None = None  # fixed number of seeds instead of the size rule

    def __post_init__(self) -> None:
        if not 0 < self.confidence < 1 or not 0 < self.margin < 1 or not 0 < self.proportion < 1:
            raise ReviewError("confidence, margin and proportion must lie strictly between 0 and 1")
        if self.n_sets < 1 or self.k < 1:
            raise ReviewError(f"n_sets and k must be >= 1, got n_sets={self.n_sets}, k={self.k}")
        if self.size is not None and self.size < 1:
            raise ReviewError(f"size must be >= 1, got {self.size}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cochran_size(population: int, confidence: float = 0.95, margin: float = 0.05, proportion: float = 0.5) -> int:
    """Sample size for estimating a proportion (Cochran, finite-population corrected, rounded up)."""
    if population <= 0:
        return 0
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    n0 = z * z * proportion * (1 - proportion) / (margin * margin)
    return min(population, math.ceil(n0 / (1 + (n0 - 1) / population) - 1e-9))


def allocate(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Split ``total`` over strata proportionally to ``sizes`` (largest remainders; ≥ 1 each while possible)."""
    population = sum(sizes.values())
    total = min(total, population)
    if total <= 0:
        return {k: 0 for k in sizes}
    quota = {k: total * n / population for k, n in sizes.items()}
    out = {k: int(q) for k, q in quota.items()}
    if total >= len([n for n in sizes.values() if n]):
        for k, n in sizes.items():
            if n and not out[k]:
                out[k] = 1
    order = sorted(sizes, key=lambda k: (-(quota[k] - int(quota[k])), k))
    while sum(out.values()) > total:  # the ≥ 1 floor overshot: take back from the largest strata
        biggest = max((k for k in out if out[k] > 1), key=lambda k: (out[k], k))
        out[biggest] -= 1
    i = 0
    while sum(out.values()) < total:
        k = order[i % len(order)]
        if out[k] < sizes[k]:
            out[k] += 1
        i += 1
    return out


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(hash_json([seed, *parts]))


def draw_sample(cases: Sequence[TestCase], plan: SamplingPlan,
                lc_info: dict[str, tuple[str, str]] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Stratified sample of seeds (each with one random expansion) → (item dicts for the store, plan summary)."""
    seeds: dict[str, list[TestCase]] = {}
    expansions: dict[str, list[TestCase]] = {}
    for case in cases:
        if case.kind == "seed":
            seeds.setdefault(case.lc_id, []).append(case)
        else:
            expansions.setdefault(case.seed_id, []).append(case)
    population = sum(len(v) for v in seeds.values())
    if not population:
        raise ReviewError("no seed cases to sample from (the cases hold no seeds)")
    size = min(plan.size, population) if plan.size else cochran_size(population, plan.confidence, plan.margin,
                                                                    plan.proportion)
    quotas = allocate({lc: len(v) for lc, v in sorted(seeds.items())}, size)
    picked: list[tuple[TestCase, TestCase | None]] = []
    for lc in sorted(seeds):
        pool = sorted(seeds[lc], key=lambda c: c.case_id)
        for seed_case in _rng(plan.seed, "seeds", lc).sample(pool, quotas[lc]):
            options = sorted(expansions.get(seed_case.seed_id, []), key=lambda c: c.case_id)
            expansion = _rng(plan.seed, "expansion", seed_case.case_id).choice(options) if options else None
            picked.append((seed_case, expansion))
    _rng(plan.seed, "order").shuffle(picked)
    n_sets = min(plan.n_sets, len(picked))
    items: list[dict[str, Any]] = []
    positions = [0] * n_sets
    for i, (seed_case, expansion) in enumerate(picked):
        set_no = i % n_sets
        for case in [seed_case] + ([expansion] if expansion is not None else []):
            title, description = (lc_info or {}).get(case.lc_id, (case.capability or case.lc_id, case.description))
            items.append({
                "set_no": set_no, "position": positions[set_no], "case_id": case.case_id,
                "text_hash": hash_text(case.text),
                "lc_id": case.lc_id, "kind": case.kind, "seed_id": case.seed_id, "text": case.text,
                "seed_text": seed_case.text if case.kind != "seed" else None, "expected": dict(case.expected),
                "lc_title": title or case.lc_id, "lc_description": description or "",
            })
            positions[set_no] += 1
    summary = {**plan.to_dict(), "n_sets": n_sets, "population": population, "n_seeds": len(picked),
               "n_expansions": sum(1 for _, e in picked if e is not None), "per_lc": quotas}
    return items, summary


def assign_sets(n_sets: int, k: int, reviewers: Sequence[str]) -> list[tuple[int, str]]:
    """(set, reviewer) pairs giving every set ``k`` distinct reviewers, spread round-robin."""
    reviewers = list(dict.fromkeys(r.strip() for r in reviewers if r.strip()))
    if not reviewers:
        return []
    if len(reviewers) < k:
        raise ReviewError(f"{len(reviewers)} reviewer(s) named but each case needs k={k}; name at least {k} or lower k")
    if len(reviewers) > n_sets * k:  # the others were named and silently given nothing
        raise ReviewError(f"{len(reviewers)} reviewers named but {n_sets} set(s) × k={k} give only {n_sets * k} "
                          f"assignment(s): {', '.join(reviewers[n_sets * k:][:3])} would get nothing; raise --sets or "
                          "k, or name fewer reviewers")
    return [(slot // k, reviewers[slot % len(reviewers)]) for slot in range(n_sets * k)]
