"""Per LC × model counts and the summary table built from them (one counting path for every run layout).

``RunResult.summary`` counts a run held in memory; a sharded run (``runner.stream``) counts each shard the
same way and merges the counts, so both give the same table with the same 95 % Wilson intervals.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from alict_core.metrics.intervals import wilson_interval

SUMMARY_COLUMNS = ["lc_id", "capability", "test_type", "model", "n_seeds", "n_expansions", "n_fail_seeds",
                   "fail_rate_seeds", "ci_low", "ci_high", "n_fail_expansions", "fail_rate_expansions",
                   "ci_low_expansions", "ci_high_expansions", "n_cases", "n_fail", "fail_rate", "ci_low_all",
                   "ci_high_all", "n_pass_to_fail", "n_fail_to_pass"]
COUNT_FIELDS = ("n_seeds", "n_expansions", "n_fail_seeds", "n_fail_expansions", "n_pass_to_fail", "n_fail_to_pass")


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
                total[name] += int(row[name])
    return [{"lc_id": lc, "capability": lcs[lc][0], "test_type": lcs[lc][1], "model": model,
             **totals.get((model, lc), dict.fromkeys(COUNT_FIELDS, 0))}
            for model in models for lc in lcs]


def summary_frame(counts: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The summary table: counts, fail rates of seeds, expansions and all cases with Wilson intervals, pairs.

    ``capability`` holds the capability's name (``capabilities.capability_name``), never the LC id of a shipped LC."""
    from alict_core.capabilities import capability_name

    rows = []
    for c in counts:
        ns, ne, a, b = (int(c[k]) for k in ("n_seeds", "n_expansions", "n_fail_seeds", "n_fail_expansions"))
        lo, hi = wilson_interval(a, ns)
        elo, ehi = wilson_interval(b, ne)
        alo, ahi = wilson_interval(a + b, ns + ne)
        rows.append((c["lc_id"], capability_name(c["lc_id"], c["capability"]), c["test_type"], c["model"], ns, ne, a,
                     a / ns if ns else np.nan,
                     lo, hi, b, b / ne if ne else np.nan, elo, ehi, ns + ne, a + b,
                     (a + b) / (ns + ne) if ns + ne else np.nan, alo, ahi,
                     int(c["n_pass_to_fail"]), int(c["n_fail_to_pass"])))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
