"""Confidence intervals of proportions (fail rates, agreement rates): the one Wilson score helper."""

from __future__ import annotations

import math

Z_95 = 1.959964  # two-sided 95 %


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of the proportion ``successes / n`` (95 % by default), clipped to [0, 1].

    ``(nan, nan)`` when ``n == 0`` (no observations: the rate is undefined, callers show it as blank).
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
