"""``sample_per_lc``: a fixed number of cases per LC for expensive models (TOSEM RQ4), stratified by
kind (seed / expansion, in proportion to how many of each the LC has) and seeded."""

from __future__ import annotations

import random
from typing import Sequence

from alict_core.hashing import hash_json
from alict_core.runner.cases import TestCase


def stratum_sizes(n: int, n_seeds: int, n_expansions: int) -> tuple[int, int]:
    """How many seeds and expansions of an LC to draw for ``n`` cases (proportional, each kind kept when present)."""
    total = n_seeds + n_expansions
    if total <= n:
        return n_seeds, n_expansions
    seeds = round(n * n_seeds / total)
    if n_seeds and n_expansions and n >= 2:
        seeds = min(max(seeds, 1), n - 1)
    seeds = min(seeds, n_seeds)
    return seeds, min(n - seeds, n_expansions)


def sample_per_lc(cases: Sequence[TestCase], n: int, seed: int = 0) -> list[TestCase]:
    """At most ``n`` cases of each LC, drawn without replacement by a seeded RNG; order as given."""
    if n < 1:
        from alict_core.errors import AlictError

        raise AlictError(f"--sample-per-lc must be >= 1, got {n}")
    by_lc: dict[str, dict[str, list[int]]] = {}
    for i, case in enumerate(cases):
        by_lc.setdefault(case.lc_id, {"seed": [], "expansion": []}).setdefault(case.kind, []).append(i)
    keep: set[int] = set()
    for lc, kinds in by_lc.items():
        seeds, expansions = kinds.get("seed", []), kinds.get("expansion", [])
        n_seeds, n_expansions = stratum_sizes(n, len(seeds), len(expansions))
        rng = random.Random(hash_json([seed, lc]))
        keep.update(rng.sample(seeds, n_seeds))
        keep.update(rng.sample(expansions, n_expansions))
    return [case for i, case in enumerate(cases) if i in keep]
