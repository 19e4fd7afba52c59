"""Compare two runs (two models, or one model before and after a change) per LC and capability.

For every LC (and capability group) both sides' fail rates with 95 % Wilson intervals, the difference
``B − A`` with Newcombe's hybrid score interval, and a two-proportion z-test (``p`` and a mark:
``***`` p < 0.001, ``**`` < 0.01, ``*`` < 0.05). Cases are matched by (LC, text), so a run whose case ids
changed (an edited spec) still pairs up: :attr:`Comparison.newly_failing` lists cases that pass in A and
fail in B, :attr:`Comparison.newly_passing` the reverse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from alict_core.capabilities import lc_catalog
from alict_core.errors import AlictError
from alict_core.metrics.intervals import wilson_interval

SIDE_COLUMNS = ["lc_id", "capability", "kind", "text", "expected", "predicted", "passed"]


def two_proportion_z(fail_a: int, n_a: int, fail_b: int, n_b: int) -> tuple[float, float]:
    """(z, two-sided p) of the pooled two-proportion z-test; (0, 1) when it is undefined."""
    if n_a <= 0 or n_b <= 0:
        return 0.0, 1.0
    pooled = (fail_a + fail_b) / (n_a + n_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if se == 0:
        return 0.0, 1.0
    z = (fail_b / n_b - fail_a / n_a) / se
    return z, math.erfc(abs(z) / math.sqrt(2))


def difference_interval(fail_a: int, n_a: int, fail_b: int, n_b: int) -> tuple[float, float]:
    """95 % interval of ``rate_b − rate_a`` (Newcombe's method 10, from the two Wilson intervals)."""
    if n_a <= 0 or n_b <= 0:
        return math.nan, math.nan
    pa, pb = fail_a / n_a, fail_b / n_b
    la, ua = wilson_interval(fail_a, n_a)
    lb, ub = wilson_interval(fail_b, n_b)
    diff = pb - pa
    return diff - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2), diff + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2)


def significance_mark(p: float) -> str:
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def side_frame(result, model: str | None = None) -> pd.DataFrame:
    """One model's case table of a run (the run's only model when ``model`` is None)."""
    if model is None:
        if len(result.models) != 1:
            raise AlictError(f"the run has models {result.models}; name the one to compare")
        model = result.models[0]
    if model not in result.models:
        raise AlictError(f"model {model!r} is not in the run; its models: {', '.join(result.models)}")
    cases = result.cases()
    return cases.loc[cases["model"] == model, SIDE_COLUMNS].drop_duplicates(["lc_id", "text"]).reset_index(drop=True)


def _rate_row(key: dict, fa: int, na: int, fb: int, nb: int) -> dict:
    a_lo, a_hi = wilson_interval(fa, na)
    b_lo, b_hi = wilson_interval(fb, nb)
    d_lo, d_hi = difference_interval(fa, na, fb, nb)
    z, p = two_proportion_z(fa, na, fb, nb)
    rate_a = fa / na if na else math.nan
    rate_b = fb / nb if nb else math.nan
    return {**key, "n_a": na, "fail_a": fa, "rate_a": rate_a, "ci_low_a": a_lo, "ci_high_a": a_hi,
            "n_b": nb, "fail_b": fb, "rate_b": rate_b, "ci_low_b": b_lo, "ci_high_b": b_hi,
            "difference": rate_b - rate_a, "diff_low": d_lo, "diff_high": d_hi, "z": z, "p_value": p,
            "significance": significance_mark(p)}


@dataclass
class Comparison:
    """The result of :func:`compare_runs` (plain DataFrames; ``label_a``/``label_b`` name the sides)."""

    label_a: str
    label_b: str
    lcs: pd.DataFrame
    capabilities: pd.DataFrame
    newly_failing: pd.DataFrame
    newly_passing: pd.DataFrame

    def headline(self) -> str:
        """One plain sentence: how many LCs got significantly worse or better from A to B."""
        worse = self.lcs[(self.lcs["significance"] != "") & (self.lcs["difference"] > 0)]
        better = self.lcs[(self.lcs["significance"] != "") & (self.lcs["difference"] < 0)]
        parts = [f"{self.label_b} vs {self.label_a}: {len(worse)} LC(s) fail significantly more, "
                 f"{len(better)} significantly less"]
        if len(worse):
            top = worse.sort_values("difference", ascending=False).iloc[0]
            parts.append(f"; the largest rise is {top['lc_title']} (+{100 * top['difference']:.0f} points)")
        return "".join(parts) + f"; {len(self.newly_failing)} cases newly fail, {len(self.newly_passing)} newly pass."


def compare_frames(a: pd.DataFrame, b: pd.DataFrame, label_a: str = "A", label_b: str = "B") -> Comparison:
    """Compare two side frames (columns of :data:`SIDE_COLUMNS`)."""
    capabilities = {**dict(zip(a["lc_id"], a["capability"], strict=True)),
                    **dict(zip(b["lc_id"], b["capability"], strict=True))}
    catalog = lc_catalog(list(dict.fromkeys([*a["lc_id"], *b["lc_id"]])), capabilities)
    rows = []
    for lc, info in catalog.items():
        sa, sb = a[a["lc_id"] == lc], b[b["lc_id"] == lc]
        rows.append(_rate_row({"lc_id": lc, "lc_title": info.title, "capability": info.capability},
                              int((~sa["passed"]).sum()), len(sa), int((~sb["passed"]).sum()), len(sb)))
    lcs = pd.DataFrame(rows)
    caps = []
    for group, part in lcs.groupby("capability", sort=True):
        caps.append(_rate_row({"capability": group, "n_lcs": len(part)}, int(part["fail_a"].sum()),
                              int(part["n_a"].sum()), int(part["fail_b"].sum()), int(part["n_b"].sum())))
    paired = a.merge(b, on=["lc_id", "text"], suffixes=("_a", "_b"))
    keep = ["lc_id", "kind_b", "text", "expected_a", "predicted_a", "expected_b", "predicted_b"]
    rename = {"kind_b": "kind"}
    newly_failing = paired.loc[paired["passed_a"] & ~paired["passed_b"], keep].rename(columns=rename)
    newly_passing = paired.loc[~paired["passed_a"] & paired["passed_b"], keep].rename(columns=rename)
    for frame in (newly_failing, newly_passing):
        frame.insert(1, "lc_title", frame["lc_id"].map(lambda lc: catalog[lc].title))
    return Comparison(label_a, label_b, lcs, pd.DataFrame(caps), newly_failing.reset_index(drop=True),
                      newly_passing.reset_index(drop=True))


def compare_runs(run_a, run_b, model_a: str | None = None, model_b: str | None = None,
                 label_a: str | None = None, label_b: str | None = None) -> Comparison:
    """Compare model ``model_a`` of ``run_a`` with ``model_b`` of ``run_b`` (the same run for two models)."""
    a, b = side_frame(run_a, model_a), side_frame(run_b, model_b)
    name_a = model_a or run_a.models[0]
    name_b = model_b or run_b.models[0]
    if label_a is None or label_b is None:
        same = name_a == name_b
        label_a = label_a or (f"{name_a} (A)" if same else name_a)
        label_b = label_b or (f"{name_b} (B)" if same else name_b)
    return compare_frames(a, b, label_a, label_b)
