"""Compare two runs (two models, or one model before and after a change) per LC and capability.

Both sides ran the same cases, so the comparison is **paired** and **clustered by seed**:

* Cases are matched by (LC, text), so a run whose case ids changed (an edited spec) still pairs up.
  :attr:`Comparison.newly_failing` lists cases that pass in A and fail in B, :attr:`Comparison.newly_passing`
  the reverse (the discordant pairs).
* A seed and its expansions share their outcome, so the unit of the test is the **seed group**: per group the
  net discordance ``d = newly failing − newly passing``; the test is the exact two-sided sign (binomial) test
  of the groups with ``d > 0`` against those with ``d < 0`` (``scipy.stats.binomtest``, p = ½). With groups of
  one case it is McNemar's exact test; unlike the pooled two-proportion z-test it does not count a seed's
  expansions as independent evidence, nor ignore that both sides saw the same cases.
* ``difference`` is B − A on the paired cases, with a seed-clustered 95 % interval (cluster-robust variance of
  the mean paired difference, t quantile on groups − 1 degrees of freedom); ``rate_a``/``rate_b`` are each
  side's fail rate on all its cases with the seed-clustered interval of ``runner.summary``.
* Many LCs are tested at once, so p-values are corrected across LCs (and separately across capabilities) with
  ``statsmodels.stats.multitest.multipletests``: ``p_bh`` (Benjamini–Hochberg, false-discovery rate) drives the
  significance marks for browsing (``*`` q < 0.05, ``**`` < 0.01, ``***`` < 0.001); ``p_holm`` (Holm,
  family-wise error) drives ``regression``, the CI gate of ``compare --fail-on-regression``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from alict_core.common.errors import AlictError
from alict_core.lcspec.capabilities import lc_catalog
from alict_core.metrics.intervals import cluster_stats, clustered_interval, t_quantile, wilson_interval
from alict_core.runner.summary import unparsed_answers

SIDE_COLUMNS = ["lc_id", "capability", "kind", "seed_id", "text", "expected", "predicted", "passed"]
ALPHA = 0.05
BROWSING_CORRECTION = "Benjamini–Hochberg (false-discovery rate) across LCs"
GATE_CORRECTION = "Holm (family-wise error) across LCs"
TEST_NAME = "exact sign test on seed groups' net discordance (McNemar's exact test for one-case groups)"


def difference_interval(fail_a: int, n_a: int, fail_b: int, n_b: int) -> tuple[float, float]:
    """95 % interval of ``rate_b − rate_a`` of two independent samples (Newcombe's method 10).

    Used only where the sides share no case (nothing to pair).
    """
    if n_a <= 0 or n_b <= 0:
        return math.nan, math.nan
    pa, pb = fail_a / n_a, fail_b / n_b
    la, ua = wilson_interval(fail_a, n_a)
    lb, ub = wilson_interval(fail_b, n_b)
    diff = pb - pa
    return diff - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2), diff + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2)


def paired_sign_test(worse: np.ndarray, better: np.ndarray) -> float:
    """Two-sided p of the exact sign test on seed groups: ``worse[k]``/``better[k]`` are group k's cases that
    newly fail / newly pass. 1.0 when no group changed."""
    net = np.asarray(worse, dtype=np.int64) - np.asarray(better, dtype=np.int64)
    up, down = int((net > 0).sum()), int((net < 0).sum())
    return _sign_test_p(up, up + down)


@lru_cache(maxsize=65_536)
def _sign_test_p(up: int, total: int) -> float:
    """Two-sided exact binomial p of ``up`` successes in ``total`` trials at ½ (1.0 when total is 0)."""
    if total == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(up, total, 0.5).pvalue)


def paired_difference_interval(worse: np.ndarray, better: np.ndarray, sizes: np.ndarray) -> tuple[float, float]:
    """Seed-clustered 95 % interval of the paired difference ``Σ(worse − better) / Σ sizes`` (nan with < 2 groups)."""
    net = np.asarray(worse, dtype=float) - np.asarray(better, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    n, groups = sizes.sum(), len(sizes)
    if groups < 2 or n <= 0:
        return math.nan, math.nan
    diff = net.sum() / n
    variance = groups / (groups - 1) * float(((net - diff * sizes) ** 2).sum()) / (n * n)
    half = t_quantile(groups - 1) * math.sqrt(variance)
    return max(-1.0, diff - half), min(1.0, diff + half)


def adjusted(p_values: pd.Series, method: str) -> pd.Series:
    """``p_values`` corrected for multiplicity (``"holm"`` or ``"fdr_bh"``); NaN (no test) stays NaN."""
    from statsmodels.stats.multitest import multipletests

    out = pd.Series(np.nan, index=p_values.index, dtype=float)
    tested = p_values.notna()
    if tested.any():
        out[tested] = multipletests(p_values[tested].to_numpy(dtype=float), method=method)[1]
    return out


def significance_mark(p: float) -> str:
    return "" if not p == p else "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < ALPHA else ""


def side_frame(result, model: str | None = None) -> pd.DataFrame:
    """One model's case table of a run (the run's only model when ``model`` is None)."""
    if model is None:
        if len(result.models) != 1:
            raise AlictError(f"the run has models {result.models}; name the one to compare")
        model = result.models[0]
    if model not in result.models:
        from alict_core.models.refs import redacted  # a model spec given as a name may hold a key (pass 39)

        raise AlictError(f"model {redacted(model)[:120]!r} is not in the run; its models: {', '.join(result.models)}")
    return model_side(result.cases(), model)


def model_side(cases: pd.DataFrame, model: str) -> pd.DataFrame:
    """The side frame of ``model`` from a case × model table: every case counts (the run's own rates; a text
    given twice in an LC is paired by its occurrence in ``compare_frames``)."""
    return cases.loc[cases["model"] == model, SIDE_COLUMNS].reset_index(drop=True)


def _side_rate(side: pd.DataFrame) -> tuple[int, int, float, float, float]:
    """(fails, cases, rate, ci_low, ci_high) of one side, the interval clustered by seed."""
    failed = ~side["passed"].astype(bool)
    n, fails = len(side), int(failed.sum())
    per_group = failed.groupby([side["lc_id"], side["seed_id"]], sort=False).agg(["sum", "count"])
    low, high = clustered_interval(fails, n, **cluster_stats(per_group["sum"], per_group["count"]))
    return fails, n, fails / n if n else math.nan, low, high


def _groups(paired: pd.DataFrame) -> pd.DataFrame:
    """Per seed group of paired cases: newly failing, newly passing and paired cases."""
    worse = paired["passed_a"] & ~paired["passed_b"]
    better = ~paired["passed_a"] & paired["passed_b"]
    frame = pd.DataFrame({"lc_id": paired["lc_id"], "group": paired["seed_id_a"], "worse": worse.astype(int),
                          "better": better.astype(int), "size": 1})
    return frame.groupby(["lc_id", "group"], sort=False)[["worse", "better", "size"]].sum().reset_index()


def _row(key: dict, side_a: pd.DataFrame, side_b: pd.DataFrame, groups: pd.DataFrame) -> dict:
    fa, na, rate_a, a_lo, a_hi = _side_rate(side_a)
    fb, nb, rate_b, b_lo, b_hi = _side_rate(side_b)
    n_paired = int(groups["size"].sum())
    worse, better = int(groups["worse"].sum()), int(groups["better"].sum())
    if n_paired:
        difference = (worse - better) / n_paired
        d_lo, d_hi = paired_difference_interval(groups["worse"], groups["better"], groups["size"])
        p = paired_sign_test(groups["worse"], groups["better"])
    else:  # nothing in common: the unpaired difference, no test
        difference = rate_b - rate_a
        d_lo, d_hi = difference_interval(fa, na, fb, nb)
        p = math.nan
    return {**key, "n_a": na, "fail_a": fa, "rate_a": rate_a, "ci_low_a": a_lo, "ci_high_a": a_hi,
            "n_b": nb, "fail_b": fb, "rate_b": rate_b, "ci_low_b": b_lo, "ci_high_b": b_hi,
            "n_paired": n_paired, "newly_failing": worse, "newly_passing": better,
            "seed_groups": len(groups), "difference": difference, "diff_low": d_lo, "diff_high": d_hi,
            "p_value": p}


def _corrected(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame.assign(p_holm=pd.Series(dtype=float), p_bh=pd.Series(dtype=float),
                            significance=pd.Series(dtype=str), regression=pd.Series(dtype=bool))
    frame["p_holm"] = adjusted(frame["p_value"], "holm")
    frame["p_bh"] = adjusted(frame["p_value"], "fdr_bh")
    frame["significance"] = frame["p_bh"].map(significance_mark)
    frame["regression"] = (frame["p_holm"] < ALPHA) & (frame["difference"] > 0)
    return frame


@dataclass
class Comparison:
    """The result of :func:`compare_runs` (plain DataFrames; ``label_a``/``label_b`` name the sides).

    ``lcs`` and ``capabilities``: ``p_value`` (paired, seed-clustered), ``p_holm``, ``p_bh``, ``significance``
    (marks from ``p_bh``) and ``regression`` (``p_holm`` < 0.05 and B fails more). ``note``: said first when
    both sides are the same run and model. ``unparsed_a``/``unparsed_b``: answers of each side's model that could
    not be parsed (its run's ``unparsed_answers``): those cases were scored as its fallback label.
    """

    label_a: str
    label_b: str
    lcs: pd.DataFrame
    capabilities: pd.DataFrame
    newly_failing: pd.DataFrame
    newly_passing: pd.DataFrame
    note: str = ""
    test: str = TEST_NAME
    correction: str = BROWSING_CORRECTION
    gate_correction: str = GATE_CORRECTION
    unparsed_a: int = 0
    unparsed_b: int = 0

    def unparsed_warning(self) -> str:
        """Each side's answers that could not be parsed, and what that means for the changed cases ("" if none):
        a chat model that stopped answering was counted as newly passing without a word (pass 38)."""
        sides = [(label, n) for label, n in ((self.label_a, self.unparsed_a), (self.label_b, self.unparsed_b)) if n]
        if not sides:
            return ""
        said = "; ".join(f"{label}: {n} answer(s) could not be parsed" for label, n in sides)
        return (f"Warning: {said}. Those cases were scored as the model's fallback label, not by its answers: cases "
                "among them that newly fail or newly pass are no change of the model.")

    def regressions(self) -> pd.DataFrame:
        """LCs that fail significantly more often in B after Holm's correction (the CI gate)."""
        return self.lcs[self.lcs["regression"].astype(bool)] if len(self.lcs) else self.lcs

    def headline(self) -> str:
        """Plain sentences: how many LCs got significantly worse or better from A to B, and under which correction."""
        marked = self.lcs["significance"] != "" if len(self.lcs) else pd.Series(dtype=bool)
        worse = self.lcs[marked & (self.lcs["difference"] > 0)] if len(self.lcs) else self.lcs
        better = self.lcs[marked & (self.lcs["difference"] < 0)] if len(self.lcs) else self.lcs
        parts = [self.note + " " if self.note else "",
                 f"{self.label_b} vs {self.label_a}: {len(worse)} LC(s) fail significantly more, "
                 f"{len(better)} significantly less ({self.correction}, q < {ALPHA})"]
        if len(worse):
            top = worse.sort_values("difference", ascending=False).iloc[0]
            parts.append(f"; the largest rise is {top['lc_title']} (+{100 * top['difference']:.0f} points)")
        parts.append(f"; {len(self.regressions())} regression(s) under {self.gate_correction}")
        warning = self.unparsed_warning()
        return ("".join(parts) + f"; {len(self.newly_failing)} cases newly fail, {len(self.newly_passing)} newly pass."
                + (f" {warning}" if warning else ""))


def compare_frames(a: pd.DataFrame, b: pd.DataFrame, label_a: str = "A", label_b: str = "B",
                   note: str = "", unparsed: tuple[int, int] = (0, 0)) -> Comparison:
    """Compare two side frames (columns of :data:`SIDE_COLUMNS`); ``unparsed``: each side's model's answers that
    could not be parsed (``side_unparsed``)."""
    capabilities = {**dict(zip(a["lc_id"], a["capability"], strict=True)),
                    **dict(zip(b["lc_id"], b["capability"], strict=True))}
    catalog = lc_catalog(list(dict.fromkeys([*a["lc_id"], *b["lc_id"]])), capabilities)
    # the k-th case of a text in an LC pairs with the k-th on the other side (the rates were of deduplicated cases,
    # not the runs' own: two cases of one text with opposite labels counted as one)
    a = a.assign(occurrence=a.groupby(["lc_id", "text"]).cumcount())
    b = b.assign(occurrence=b.groupby(["lc_id", "text"]).cumcount())
    paired = a.merge(b, on=["lc_id", "text", "occurrence"], suffixes=("_a", "_b"))
    groups = _groups(paired)
    rows = []
    for lc, info in catalog.items():
        rows.append(_row({"lc_id": lc, "lc_title": info.title, "capability": info.capability},
                         a[a["lc_id"] == lc], b[b["lc_id"] == lc], groups[groups["lc_id"] == lc]))
    lcs = _corrected(pd.DataFrame(rows))
    caps = []
    group_capability = groups["lc_id"].map(lambda lc: catalog[lc].capability)
    for capability in sorted({info.capability for info in catalog.values()}):
        members = [lc for lc, info in catalog.items() if info.capability == capability]
        caps.append(_row({"capability": capability, "n_lcs": len(members)}, a[a["lc_id"].isin(members)],
                         b[b["lc_id"].isin(members)], groups[group_capability == capability]))
    keep = ["lc_id", "kind_b", "text", "expected_a", "predicted_a", "expected_b", "predicted_b"]
    rename = {"kind_b": "kind"}
    newly_failing = paired.loc[paired["passed_a"] & ~paired["passed_b"], keep].rename(columns=rename)
    newly_passing = paired.loc[~paired["passed_a"] & paired["passed_b"], keep].rename(columns=rename)
    for frame in (newly_failing, newly_passing):
        frame.insert(1, "lc_title", frame["lc_id"].map(lambda lc: catalog[lc].title))
    return Comparison(label_a, label_b, lcs, _corrected(pd.DataFrame(caps)), newly_failing.reset_index(drop=True),
                      newly_passing.reset_index(drop=True), note, unparsed_a=unparsed[0], unparsed_b=unparsed[1])


def side_unparsed(result, model: str) -> int:
    """How many answers of ``model`` in run ``result`` could not be parsed (scored as its fallback label)."""
    return unparsed_answers(getattr(result, "extra", None)).get(model, 0)


def run_tasks(result) -> set[str]:
    """The tasks a run's cases name (empty when none does)."""
    return {str(c.task) for c in result.case_list if c.task}


def check_same_task(tasks_a: set[str], tasks_b: set[str]) -> None:
    """Refuse to compare runs of different tasks (their LCs and labels mean different things)."""
    if tasks_a and tasks_b and tasks_a != tasks_b:
        raise AlictError(f"run A is of task {', '.join(sorted(tasks_a))} and run B of task "
                         f"{', '.join(sorted(tasks_b))}: compare two runs of one task")


def compare_runs(run_a, run_b, model_a: str | None = None, model_b: str | None = None,
                 label_a: str | None = None, label_b: str | None = None) -> Comparison:
    """Compare model ``model_a`` of ``run_a`` with ``model_b`` of ``run_b`` (the same run for two models)."""
    check_same_task(run_tasks(run_a), run_tasks(run_b))
    a, b = side_frame(run_a, model_a), side_frame(run_b, model_b)
    name_a = model_a or run_a.models[0]
    name_b = model_b or run_b.models[0]
    if label_a is None or label_b is None:
        same = name_a == name_b
        label_a = label_a or (f"{name_a} (A)" if same else name_a)
        label_b = label_b or (f"{name_b} (B)" if same else name_b)
    lcs_a, lcs_b = set(a["lc_id"]), set(b["lc_id"])
    if lcs_a and lcs_b and not lcs_a & lcs_b:  # nothing pairs: every number would compare different tests
        raise AlictError(f"run A ({', '.join(sorted(lcs_a))}) and run B ({', '.join(sorted(lcs_b))}) share no LC: "
                         "nothing to compare; run the same LCs on both sides")
    note = runs_note(run_a, run_b, name_a, name_b, (lcs_a, lcs_b))
    return compare_frames(a, b, label_a, label_b, note, (side_unparsed(run_a, name_a), side_unparsed(run_b, name_b)))


def runs_note(run_a, run_b, name_a: str, name_b: str, lcs: tuple[set[str], set[str]]) -> str:
    """What a comparison of model ``name_a`` of ``run_a`` with ``name_b`` of ``run_b`` says first ("" if nothing):
    LCs held by one side only (``lcs``: each side's LC ids), the same run and model, one service asked twice (its
    answers may have changed), or one model (by its fingerprint). The CLI and the Compare page say the same."""
    lcs_a, lcs_b = lcs
    note = ""
    if lcs_a != lcs_b:
        sides = (("A", lcs_a - lcs_b), ("B", lcs_b - lcs_a))
        only = [f"only in {side}: {', '.join(sorted(held))}" for side, held in sides if held]
        note = f"The runs hold different LCs ({'; '.join(only)}); those LCs have no paired cases. "
    if run_a.run_id == run_b.run_id and name_a == name_b:
        note += (f"A and B are the same run ({run_a.run_id}) and the same model ({name_a}): every case agrees, "
                 "so nothing can differ.")
    else:
        outcome_a = run_a.outcomes[run_a.models.index(name_a)]
        outcome_b = run_b.outcomes[run_b.models.index(name_b)]
        fingerprint_a, fingerprint_b = outcome_a.fingerprint, outcome_b.fingerprint
        if fingerprint_a == fingerprint_b and (outcome_a.answers_change or outcome_b.answers_change):
            note += (f"A and B ({name_a}, {name_b}) asked the same service in one run: differences come from the "
                     "service's own answers (asked separately)." if run_a.run_id == run_b.run_id else
                     f"A and B asked the same service ({name_a}) in two runs: its answers may have changed between "
                     "them (a redeploy), so differences can come from the service as well as from the cases.")
        elif fingerprint_a == fingerprint_b:
            note += (f"A and B are the same model (fingerprint {fingerprint_a}); differences come only from the "
                     "cases or expectations.")
    return note
