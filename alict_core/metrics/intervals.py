"""Confidence intervals of proportions (fail rates, agreement rates): Wilson, and Wilson on seed-clustered cases."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

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


CLUSTER_STAT_FIELDS = ("n_groups", "sum_sq_fail", "sum_sq_cases", "sum_fail_cases")
CLUSTERED_METHOD = ("95 % Wilson interval on the design-effect-adjusted sample size (Kish effective n from the "
                    "cluster-robust variance of the ratio estimator, clusters = seed groups, t quantile with "
                    "groups − 1 degrees of freedom)")


@lru_cache(maxsize=4096)
def t_quantile(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``df`` degrees of freedom (scipy)."""
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def cluster_stats(fails: Sequence[int], sizes: Sequence[int]) -> dict[str, int]:
    """The additive statistics :func:`clustered_interval` needs, from per-group failure counts and sizes.

    Sums over groups (seed groups: a seed and its expansions) of the failures², sizes² and failures × sizes,
    plus the number of groups. They add up over disjoint sets of groups (shards, LCs of one capability).
    """
    pairs = [(int(y), int(m)) for y, m in zip(fails, sizes, strict=True) if int(m) > 0]
    return {"n_groups": len(pairs), "sum_sq_fail": sum(y * y for y, _ in pairs),
            "sum_sq_cases": sum(m * m for _, m in pairs), "sum_fail_cases": sum(y * m for y, m in pairs)}


def design_effect(n_fail: int, n: int, n_groups: int, sum_sq_fail: int, sum_sq_cases: int,
                  sum_fail_cases: int) -> float:
    """Design effect of the fail rate ``n_fail / n`` over ``n_groups`` clusters (at least 1; nan when n is 0).

    Cluster-robust (linearisation) variance of the ratio estimator ``p = Σy / Σm`` divided by the variance a
    simple random sample of ``n`` cases would have. When it cannot be estimated (``p`` is 0 or 1, or one
    group), the worst case is assumed: the groups agree fully, so the effective sample is the number of groups.
    """
    if n <= 0:
        return math.nan
    p = n_fail / n
    if n_groups < 2 or p <= 0.0 or p >= 1.0:
        return max(1.0, n / max(n_groups, 1))
    residual = sum_sq_fail - 2 * p * sum_fail_cases + p * p * sum_sq_cases  # Σ (y_i − p m_i)²
    cluster_variance = n_groups / (n_groups - 1) * max(residual, 0.0) / (n * n)
    return max(1.0, cluster_variance / (p * (1 - p) / n))


def clustered_interval(n_fail: int, n: int, n_groups: int, sum_sq_fail: int, sum_sq_cases: int,
                       sum_fail_cases: int) -> tuple[float, float]:
    """95 % interval of a fail rate whose cases come in correlated groups (a seed and its expansions).

    Why this and not a cluster bootstrap: it is closed-form and deterministic, its inputs add up over shards
    (a large run merges counts without keeping per-seed arrays), and it stays sensible with no failures,
    where a percentile bootstrap collapses to [0, 0]. The Wilson interval is computed on the Kish effective
    sample ``n / deff`` (deff from :func:`design_effect`) with the t quantile on ``groups − 1`` degrees of
    freedom (Korn & Graubard 1998). With groups of one case it is the Wilson interval. ``(nan, nan)`` when n is 0.
    """
    if n <= 0:
        return (math.nan, math.nan)
    deff = design_effect(n_fail, n, n_groups, sum_sq_fail, sum_sq_cases, sum_fail_cases)
    n_eff = n / deff
    z = t_quantile(n_groups - 1) if n_groups >= 2 else Z_95
    return wilson_interval(n_fail / n * n_eff, n_eff, z)  # type: ignore[arg-type]  # fractional counts
