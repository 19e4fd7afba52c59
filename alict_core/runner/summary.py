"""Per LC × model counts and the summary table built from them (one counting path for every run layout).

``RunResult.summary`` counts a run held in memory; a sharded run (``runner.stream``) counts each shard the
same way and merges the counts, so both give the same table with the same intervals.

Intervals: the seed fail rate (one case per seed, independent) keeps the exact-style 95 % Wilson interval. The
expansion and all-case fail rates count cases that repeat their seed's outcome, so their 95 % intervals treat
each seed group (a seed and its expansions) as one cluster: Wilson on the design-effect-adjusted sample size
(:func:`alict_core.metrics.intervals.clustered_interval`). The additive per-group statistics it needs are
count fields too, so shards and LCs merge by summing (a seed group never spans two shards).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from alict_core.metrics.intervals import CLUSTER_STAT_FIELDS, clustered_interval, design_effect, wilson_interval

CLUSTER_FIELDS_ALL = CLUSTER_STAT_FIELDS  # seed groups of all cases (a seed and its expansions)
CLUSTER_FIELDS_EXPANSIONS = tuple(f"{name}_expansions" for name in CLUSTER_STAT_FIELDS)  # expansions of a seed
SUMMARY_COLUMNS = ["lc_id", "capability", "test_type", "model", "n_seeds", "n_expansions", "n_fail_seeds",
                   "fail_rate_seeds", "ci_low", "ci_high", "n_fail_expansions", "fail_rate_expansions",
                   "ci_low_expansions", "ci_high_expansions", "n_cases", "n_fail", "fail_rate", "ci_low_all",
                   "ci_high_all", "n_pass_to_fail", "n_fail_to_pass", "design_effect_expansions", "design_effect",
                   *CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL]
COUNT_FIELDS = ("n_seeds", "n_expansions", "n_fail_seeds", "n_fail_expansions", "n_pass_to_fail", "n_fail_to_pass",
                *CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL)


def for_display(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary without the additive seed-group statistics (kept in summary.csv for merging, noise on screen)."""
    return summary.drop(columns=[*CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL], errors="ignore")


def group_statistics(lc: np.ndarray, group: np.ndarray, seed: np.ndarray, failed: np.ndarray,
                     n_lc: int) -> dict[str, np.ndarray]:
    """Per LC (codes ``0..n_lc-1``), the cluster fields of :data:`COUNT_FIELDS` from per-case arrays.

    ``group`` numbers each case's seed group (codes ``0..G-1``, a group inside one LC); ``seed`` flags seeds.
    """
    out: dict[str, np.ndarray] = {}
    if not len(group):
        return {name: np.zeros(n_lc, dtype=np.int64) for name in (*CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL)}
    n_groups = int(group.max()) + 1
    group_lc = np.zeros(n_groups, dtype=np.int64)
    group_lc[group] = lc
    failed = failed.astype(np.int64)
    expansion = (~seed.astype(bool)).astype(np.int64)
    for fields, weight in ((CLUSTER_FIELDS_ALL, np.ones_like(failed)), (CLUSTER_FIELDS_EXPANSIONS, expansion)):
        size = np.bincount(group, weights=weight, minlength=n_groups).astype(np.int64)
        fails = np.bincount(group, weights=failed * weight, minlength=n_groups).astype(np.int64)
        values = ((size > 0).astype(np.int64), fails * fails, size * size, fails * size)
        for name, value in zip(fields, values, strict=True):
            out[name] = np.bincount(group_lc, weights=value, minlength=n_lc).astype(np.int64)
    return out


def merge_counts(parts: Iterable[Iterable[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Sum count rows (``lc_id``, ``capability``, ``test_type``, ``model`` + ``COUNT_FIELDS``) of several parts.

    Models keep the order they first appear in, LCs too; capability and test type come from the first part
    holding the LC — the order and values ``RunResult.summary`` gives for the concatenated cases.
    """
    models: dict[str, None] = {}
    lcs: dict[str, tuple[str, str]] = {}
    totals: dict[tuple[str, str], dict[str, int]] = {}
    for rows in parts:
        for row in rows:
            models.setdefault(row["model"], None)
            lcs.setdefault(row["lc_id"], (row["capability"], row["test_type"]))
            total = totals.setdefault((row["model"], row["lc_id"]), dict.fromkeys(COUNT_FIELDS, 0))
            for name in COUNT_FIELDS:
                total[name] += int(row.get(name, 0))  # shards counted before seed groups: 0 groups (widest)
    return [{"lc_id": lc, "capability": lcs[lc][0], "test_type": lcs[lc][1], "model": model,
             **totals.get((model, lc), dict.fromkeys(COUNT_FIELDS, 0))}
            for model in models for lc in lcs]


def summary_frame(counts: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The summary table: counts, fail rates of seeds (Wilson), expansions and all cases (seed-clustered), pairs.

    ``capability`` holds the capability's name (``capabilities.capability_name``), never the LC id of a shipped LC."""
    from alict_core.lcspec.capabilities import capability_name

    rows = []
    for c in counts:
        ns, ne, a, b = (int(c[k]) for k in ("n_seeds", "n_expansions", "n_fail_seeds", "n_fail_expansions"))
        stats_e = [int(c[k]) for k in CLUSTER_FIELDS_EXPANSIONS]
        stats_a = [int(c[k]) for k in CLUSTER_FIELDS_ALL]
        lo, hi = wilson_interval(a, ns)
        elo, ehi = clustered_interval(b, ne, *stats_e)
        alo, ahi = clustered_interval(a + b, ns + ne, *stats_a)
        rows.append((c["lc_id"], capability_name(c["lc_id"], c["capability"]), c["test_type"], c["model"], ns, ne, a,
                     a / ns if ns else np.nan,
                     lo, hi, b, b / ne if ne else np.nan, elo, ehi, ns + ne, a + b,
                     (a + b) / (ns + ne) if ns + ne else np.nan, alo, ahi,
                     int(c["n_pass_to_fail"]), int(c["n_fail_to_pass"]), design_effect(b, ne, *stats_e),
                     design_effect(a + b, ns + ne, *stats_a), *stats_e, *stats_a))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def unparsed_answers(extra: Mapping[str, Any] | None) -> dict[str, int]:
    """Per model, how many of its answers could not be parsed (meta.json ``extra.unparsed_answers``; {} when none).

    Those cases were scored as the model's fallback label, not by an answer of the model: every reader of a run
    (summary JSON, JUnit, HTML report, ``compare``, the app's pages) says them through this one function. Entries
    that are not counts (a hand-edited meta.json) and zero counts are left out."""
    counts = (extra or {}).get("unparsed_answers") if isinstance(extra, Mapping) else None
    if not isinstance(counts, Mapping):
        return {}
    return {str(model): int(count) for model, count in sorted(counts.items(), key=lambda item: str(item[0]))
            if isinstance(count, int) and not isinstance(count, bool) and count > 0}


def unparsed_sentence(model: str, count: int) -> str:
    """One plain sentence on a model's unparsed answers (the same words on every page and output)."""
    return (f"{model}: {count} answer(s) could not be parsed; those cases were scored as the model's fallback label, "
            "not by its answers, so their passes and failures say nothing about it")
