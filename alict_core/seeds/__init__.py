"""Seed generation: LC spec × annotated corpus → seed tests with provenance."""

from alict_core.seeds.engine import find_seeds, match_groups
from alict_core.seeds.fairness import identity_swaps
from alict_core.seeds.recheck import expansion_predicates_hold
from alict_core.seeds.types import Seed, SeedSet, Segment, expected_passes, expected_text

__all__ = [
    "Seed", "SeedSet", "Segment", "expansion_predicates_hold", "expected_passes", "expected_text",
    "find_seeds", "identity_swaps", "match_groups",
]
