"""A run's results as a small JSON document for CI jobs and other tools (schema below, versioned).

Thresholds map an LC id (or ``"*"`` for every LC) to the highest fail rate allowed; an LC × model
pair whose fail rate exceeds its threshold *fails*. Pairs without a threshold never fail.

Schema ``alict-summary/1`` (:data:`SUMMARY_SCHEMA` is the same as a JSON Schema)::

    {"schema": "alict-summary/1", "run_id": str, "generated": ISO-8601 UTC, "models": [str],
     "n_cases": int, "thresholds": {lc_id | "*": float},
     "interval": str,                # how ci_low/ci_high are computed (seed-clustered, see INTERVAL_NOTE)
     "passed": bool,                 # no LC × model pair exceeds its threshold
     "n_failed": int,                # pairs above their threshold
     "results": [{"lc_id", "title", "capability", "test_type", "model", "n_cases", "n_fail", "fail_rate",
                  "ci_low", "ci_high", "n_seeds", "fail_rate_seeds", "n_expansions", "fail_rate_expansions",
                  "n_pass_to_fail", "threshold": float | null, "failed": bool, "design_effect": float | null}],
     "capabilities": [{"capability", "model", "n_lcs", "n_cases", "n_fail", "fail_rate", "ci_low", "ci_high"}],
     "skipped_tests": [{"suite", "test", "reason", "items"}],   # tests of --suite files not run (may be empty)
     "suite_import": {"files", "inv_threshold", ...} | null,      # how imported suites were scored
     "unparsed_answers": {model: int}}   # answers scored by the fallback label, not by the model (may be empty)

Rates are in [0, 1]; a rate of an empty group is null.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from alict_core.common.jsonl import atomic_path
from alict_core.lcspec.capabilities import lc_catalog
from alict_core.metrics.intervals import CLUSTER_STAT_FIELDS, clustered_interval, wilson_interval
from alict_core.runner.summary import unparsed_answers

SCHEMA_ID = "alict-summary/1"
INTERVAL_NOTE = ("ci_low/ci_high: 95 % interval of the fail rate of all cases, clustered by seed (a seed and its "
                 "expansions count as one cluster): Wilson on the design-effect-adjusted sample size; "
                 "design_effect is that adjustment (1 = no clustering)")
_RATE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_RESULT_FIELDS: dict[str, Any] = {
    "lc_id": {"type": "string"}, "title": {"type": "string"}, "capability": {"type": "string"},
    "test_type": {"type": "string"}, "model": {"type": "string"}, "n_cases": {"type": "integer", "minimum": 0},
    "n_fail": {"type": "integer", "minimum": 0}, "fail_rate": _RATE, "ci_low": _RATE, "ci_high": _RATE,
    "n_seeds": {"type": "integer", "minimum": 0}, "fail_rate_seeds": _RATE,
    "n_expansions": {"type": "integer", "minimum": 0}, "fail_rate_expansions": _RATE,
    "n_pass_to_fail": {"type": "integer", "minimum": 0}, "threshold": _RATE, "failed": {"type": "boolean"},
    "design_effect": {"type": ["number", "null"], "minimum": 1},
}
_OPTIONAL_RESULT_FIELDS = ("design_effect",)  # absent from runs summarised before seed-clustered intervals
_CAPABILITY_FIELDS: dict[str, Any] = {
    "capability": {"type": "string"}, "model": {"type": "string"}, "n_lcs": {"type": "integer", "minimum": 1},
    "n_cases": {"type": "integer", "minimum": 0}, "n_fail": {"type": "integer", "minimum": 0},
    "fail_rate": _RATE, "ci_low": _RATE, "ci_high": _RATE,
}
SUMMARY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ALiCT run summary",
    "type": "object",
    "required": ["schema", "run_id", "generated", "models", "n_cases", "thresholds", "passed", "n_failed", "results",
                 "capabilities"],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": SCHEMA_ID}, "run_id": {"type": "string"}, "generated": {"type": "string"},
        "models": {"type": "array", "items": {"type": "string"}}, "n_cases": {"type": "integer", "minimum": 0},
        "thresholds": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1}},
        "passed": {"type": "boolean"}, "n_failed": {"type": "integer", "minimum": 0},
        "interval": {"type": "string"},
        "results": {"type": "array", "items": {"type": "object",
                                               "required": [f for f in _RESULT_FIELDS
                                                            if f not in _OPTIONAL_RESULT_FIELDS],
                                               "additionalProperties": False, "properties": _RESULT_FIELDS}},
        "capabilities": {"type": "array", "items": {"type": "object", "required": list(_CAPABILITY_FIELDS),
                                                    "additionalProperties": False, "properties": _CAPABILITY_FIELDS}},
        "skipped_tests": {"type": "array", "items": {
            "type": "object", "required": ["test", "reason", "items"],
            "properties": {"suite": {"type": "string"}, "test": {"type": "string"}, "reason": {"type": "string"},
                           "items": {"type": "integer", "minimum": 0}}}},
        "suite_import": {"type": ["object", "null"], "properties": {
            "files": {"type": "array", "items": {"type": "string"}},
            "inv_threshold": {"type": "number", "minimum": 0, "maximum": 1}}},
        "unparsed_answers": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    },
}


def threshold_for(lc_id: str, thresholds: Mapping[str, float]) -> float | None:
    """The LC's own threshold, else the ``"*"`` one, else None."""
    value = thresholds.get(lc_id, thresholds.get("*"))
    return None if value is None else float(value)


def _rate(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else round(number, 6)


def lc_results(summary: pd.DataFrame, thresholds: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """One dict per LC × model of a ``RunResult.summary()`` table, with title, group, threshold and verdict."""
    thresholds = thresholds or {}
    if summary.empty:
        return []
    catalog = lc_catalog(summary["lc_id"], dict(zip(summary["lc_id"], summary["capability"], strict=True)))
    rows = []
    for row in summary.itertuples(index=False):
        limit = threshold_for(row.lc_id, thresholds)
        rate = _rate(row.fail_rate)
        rows.append({
            "lc_id": row.lc_id, "title": catalog[row.lc_id].title, "capability": catalog[row.lc_id].capability,
            "test_type": str(row.test_type), "model": str(row.model), "n_cases": int(row.n_cases),
            "n_fail": int(row.n_fail), "fail_rate": rate, "ci_low": _rate(row.ci_low_all),
            "ci_high": _rate(row.ci_high_all),
            "n_seeds": int(row.n_seeds), "fail_rate_seeds": _rate(row.fail_rate_seeds),
            "n_expansions": int(row.n_expansions), "fail_rate_expansions": _rate(row.fail_rate_expansions),
            "n_pass_to_fail": int(row.n_pass_to_fail), "threshold": limit,
            "failed": bool(limit is not None and rate is not None and rate > limit),
            **({"design_effect": _rate(row.design_effect)} if hasattr(row, "design_effect") else {}),
        })
    return rows


def capability_results(results: list[dict[str, Any]], summary: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Fail rates per capability group × model, pooled over the group's LCs.

    The interval is seed-clustered (``clustered_interval``) from the LCs' seed-group statistics in ``summary``
    (the table ``results`` was made from, row for row); without them (a summary saved before they existed)
    it is the Wilson interval of the pooled counts.
    """
    pooled: dict[tuple[str, str], dict[str, int]] = {}
    stats: dict[tuple[str, str], list[int]] = {}
    has_stats = summary is not None and all(c in summary.columns for c in CLUSTER_STAT_FIELDS)
    rows = summary.itertuples(index=False) if summary is not None and has_stats else iter(())
    for r in results:
        key = (r["capability"], r["model"])
        entry = pooled.setdefault(key, {"n_lcs": 0, "n_cases": 0, "n_fail": 0})
        entry["n_lcs"] += 1
        entry["n_cases"] += r["n_cases"]
        entry["n_fail"] += r["n_fail"]
        row = next(rows, None)
        if row is not None:
            total = stats.setdefault(key, [0] * len(CLUSTER_STAT_FIELDS))
            for i, name in enumerate(CLUSTER_STAT_FIELDS):
                total[i] += int(getattr(row, name))
    out = []
    for (capability, model), e in sorted(pooled.items()):
        if has_stats:
            lo, hi = clustered_interval(e["n_fail"], e["n_cases"], *stats[(capability, model)])
        else:
            lo, hi = wilson_interval(e["n_fail"], e["n_cases"])
        out.append({"capability": capability, "model": model, **e,
                    "fail_rate": _rate(e["n_fail"] / e["n_cases"]) if e["n_cases"] else None,
                    "ci_low": _rate(lo), "ci_high": _rate(hi)})
    return out


def summary_document(result, thresholds: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The ``alict-summary/1`` document of a run."""
    thresholds = dict(thresholds or {})
    summary = result.summary()
    results = lc_results(summary, thresholds)
    failed = sum(r["failed"] for r in results)
    extra = dict(getattr(result, "extra", None) or {})
    return {
        "schema": SCHEMA_ID, "run_id": result.run_id,
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "models": list(result.models), "n_cases": result.n_cases,
        "thresholds": {k: float(v) for k, v in thresholds.items()}, "passed": failed == 0, "n_failed": failed,
        "interval": INTERVAL_NOTE, "results": results, "capabilities": capability_results(results, summary),
        "skipped_tests": list(extra.get("skipped_tests") or []), "suite_import": extra.get("suite_import"),
        # answers scored by the fallback label, not the model's (a model that refused every case "passed")
        "unparsed_answers": unparsed_answers(extra),
    }


def write_summary_json(result, path: Path | str, thresholds: Mapping[str, float] | None = None) -> Path:
    """Write the summary document atomically; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(summary_document(result, thresholds), indent=2) + "\n", encoding="utf-8")
    return path
