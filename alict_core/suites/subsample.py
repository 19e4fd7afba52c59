"""``--max-seeds N`` on an imported suite: a seeded random sample of N items per test, stratified by label.

Peer suites list their items in template order (CheckList: the first few hundred items of a test often all
carry one label), so the first N items are not a sample of the test. Each test (LC) keeps N items drawn
without replacement by a seeded RNG, split over its labels in proportion to their counts (largest
remainders; every label present keeps at least one item while N allows). INV/DIR items form one stratum.
The kept items stay in file order.
"""

from __future__ import annotations

import json
import random
from typing import Any, Sequence

from alict_core.common.hashing import hash_json

SAMPLING = "seeded random sample per test, stratified by expected label (never the first N)"


def label_stratum(case: Any) -> str:
    """The stratum of an imported case: its expected labels (MFT), else its test type."""
    expected = dict(case.expected or {})
    if expected.get("kind") in ("label", "one_of", "not_label"):
        return json.dumps([expected["kind"], sorted(expected.get("labels") or [])])
    return str(case.test_type)


def proportional(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Split ``total`` over strata in proportion to ``sizes`` (largest remainders, ≥ 1 each while possible)."""
    population = sum(sizes.values())
    if total >= population:
        return dict(sizes)
    quota = {k: total * n / population for k, n in sizes.items()}
    out = {k: int(q) for k, q in quota.items()}
    if total >= len(sizes):
        out = {k: max(v, 1) for k, v in out.items()}
    while sum(out.values()) > total:  # the ≥ 1 floor overshot: take from the largest
        out[max((k for k in out if out[k] > 1), key=lambda k: (out[k], k))] -= 1
    for k in sorted(sizes, key=lambda k: (-(quota[k] - int(quota[k])), k)) * 2:
        if sum(out.values()) >= total:
            break
        if out[k] < sizes[k]:
            out[k] += 1
    return out


def subsample_suite(cases: Sequence[Any], max_items: int, seed: int = 0) -> list[Any]:
    """At most ``max_items`` cases per LC (test): seeded, random, stratified by label; file order kept."""
    by_lc: dict[str, dict[str, list[int]]] = {}
    for i, case in enumerate(cases):
        by_lc.setdefault(case.lc_id, {}).setdefault(label_stratum(case), []).append(i)
    keep: set[int] = set()
    for lc, strata in by_lc.items():
        quotas = proportional({k: len(v) for k, v in strata.items()}, max_items)
        for stratum in sorted(strata):
            rng = random.Random(hash_json([seed, lc, stratum]))
            keep.update(rng.sample(strata[stratum], quotas[stratum]))
    return [case for i, case in enumerate(cases) if i in keep]
