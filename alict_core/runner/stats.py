"""Small statistics for results: the Wilson score interval of a fail rate."""

from __future__ import annotations

import math


def wilson_interval(failures: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95 % Wilson score interval of ``failures / n`` (``(nan, nan)`` when n == 0)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = failures / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
