"""``sample_per_lc``: about a fixed number of cases per LC for expensive models (TOSEM RQ4), drawn as whole
seed groups (a seed with all its expansions) by a seeded RNG.

Whole groups keep pass-to-fail countable (an expansion is only compared with its own seed) and keep the
seed-clustered intervals honest; sampling seeds and expansions apart left most sampled expansions without
their seed.
"""

from __future__ import annotations

import random
from typing import Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json


def sample_per_lc(cases: Sequence[TestCase], n: int, seed: int = 0) -> list[TestCase]:
    """Whole seed groups of each LC, in a seeded random order, while they fit in ``n`` cases; order as given.

    Groups are taken in random order until the next one would pass ``n`` (the first group is always taken, so
    an LC whose first drawn group is larger than ``n`` keeps that one group). Expansions group by ``seed_id``.
    """
    if n < 1:
        raise AlictError(f"--sample-per-lc must be >= 1, got {n}")
    by_lc: dict[str, dict[str, list[int]]] = {}
    for i, case in enumerate(cases):
        by_lc.setdefault(case.lc_id, {}).setdefault(case.seed_id, []).append(i)
    keep: set[int] = set()
    for lc, groups in by_lc.items():
        order = sorted(groups)  # a stable order before shuffling: the draw does not depend on the input order
        random.Random(hash_json([seed, lc])).shuffle(order)
        taken = 0
        for seed_id in order:
            size = len(groups[seed_id])
            if taken and taken + size > n:
                break
            keep.update(groups[seed_id])
            taken += size
    return [case for i, case in enumerate(cases) if i in keep]
