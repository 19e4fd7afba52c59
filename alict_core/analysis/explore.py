"""The failure explorer's data: one row per case × model with capability-first labels, templates and
inserted words; filters; fail rates per group with a plain headline; the most striking failures.

Pure pandas over a :class:`~alict_core.runner.RunResult` (no UI). Columns of :func:`explorer_frame`:
``case_id, lc_id, lc_title, lc_label, capability, test_type, kind, seed_id, text, expected, model,
predicted, confidence, passed, failed, template, inserted_word, seed_text, pass_to_fail`` (plus
``validity``, filled by a review store when one is given).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from alict_core.lcspec.capabilities import lc_catalog
from alict_core.metrics.intervals import CLUSTER_STAT_FIELDS, cluster_stats, clustered_interval, wilson_interval
from alict_core.runner.reader import RowFilter

GROUP_BY = {"inserted word": "inserted_word", "template": "template", "LC": "lc_label", "capability": "capability",
            "model": "model", "test type": "test_type"}
# LC ids -> reviewed validity per LC (share of its cases a reviewer judged valid); LCs without reviews are left out
ValidityLookup = Callable[[Sequence[str]], Mapping[str, float]]
_validity_lookup: ValidityLookup | None = None


def set_validity_lookup(lookup: ValidityLookup | None) -> None:
    """Hook for the review store: where the ``validity`` column comes from (None: left empty)."""
    global _validity_lookup
    _validity_lookup = lookup


def case_template(meta: Mapping[str, Any] | None) -> str:
    """The rule part of a seed: rule name and the literals it placed (prefix/infix/postfix, replacements)."""
    meta = meta or {}
    rule = str(meta.get("rule") or "")
    slots = meta.get("slots") or {}
    literals = " … ".join(str(v) for v in slots.values() if v) if isinstance(slots, Mapping) else ""
    if rule and literals:
        return f"{rule}: {literals}"
    return rule or literals


def inserted_word(meta: Mapping[str, Any] | None) -> str:
    """The word(s) an expansion inserted (joined by a space; "" for seeds); for HateCheck cases the focus words."""
    meta = meta or {}
    words = meta.get("words") or meta.get("focus_words") or []
    return str(words) if isinstance(words, str) else " ".join(str(w) for w in words)


def explorer_frame(result: Any, validity: ValidityLookup | None = None) -> pd.DataFrame:
    """The case × model table of a run with everything the explorer filters, groups and shows.

    ``validity`` (default: the lookup given to :func:`set_validity_lookup`) fills the ``validity`` column.
    """
    validity = validity or _validity_lookup
    table = result.cases()
    if table.empty:
        return table.assign(failed=pd.Series(dtype=bool))
    cases = result.case_list
    per_case = pd.DataFrame({
        "case_id": [c.case_id for c in cases],
        "template": [case_template(c.meta) for c in cases],
        "inserted_word": [inserted_word(c.meta) for c in cases],
    })
    per_case = per_case.drop_duplicates("case_id")  # imported suites may repeat an id; the first wins
    seed_template = dict(zip(per_case["case_id"], per_case["template"], strict=True))
    seed_of = {c.case_id: c.seed_id for c in reversed(cases)}
    # an expansion belongs to its seed's template
    per_case["template"] = [t or seed_template.get(seed_of[i], "")
                            for i, t in zip(per_case["case_id"], per_case["template"], strict=True)]
    seed_text = {c.case_id: c.text for c in cases if c.kind == "seed"}
    frame = table.merge(per_case, on="case_id", how="left", validate="many_to_one")
    catalog = lc_catalog(frame["lc_id"], dict(zip(frame["lc_id"], frame["capability"], strict=True)))
    frame["capability"] = frame["lc_id"].map(lambda lc: catalog[lc].capability)
    frame.insert(frame.columns.get_loc("lc_id") + 1, "lc_title", frame["lc_id"].map(lambda lc: catalog[lc].title))
    frame.insert(frame.columns.get_loc("lc_title") + 1, "lc_label", frame["lc_id"].map(lambda lc: catalog[lc].label))
    frame["failed"] = ~frame["passed"].astype(bool)
    frame["confidence"] = [max(p.values()) if isinstance(p, Mapping) and p else np.nan for p in frame["probabilities"]]
    frame["seed_text"] = frame["seed_id"].map(seed_text).fillna("")
    frame["pass_to_fail"] = _pass_to_fail(frame)
    frame["validity"] = frame["lc_id"].map(dict(validity(sorted(catalog)))) if validity else np.nan
    return frame


def _pass_to_fail(frame: pd.DataFrame) -> pd.Series:
    """True for an expansion that fails while its seed passes (same model)."""
    passing_seed = (frame["kind"] == "seed") & ~frame["failed"]
    passed = set(zip(frame.loc[passing_seed, "case_id"], frame.loc[passing_seed, "model"], strict=True))
    keys = zip(frame["seed_id"], frame["model"], strict=True)
    flags = [bool(f) and k == "expansion" and key in passed for f, k, key in zip(frame["failed"], frame["kind"], keys,
                                                                                strict=True)]
    return pd.Series(flags, index=frame.index, dtype=bool)


@dataclass(frozen=True)
class Filters(RowFilter):
    """What the explorer shows: a :class:`RowFilter` that shows the failing cases unless told otherwise."""

    outcome: str = "fails"  # "fails" | "passes" | "all"


def apply_filters(frame: pd.DataFrame, filters: RowFilter) -> pd.DataFrame:
    """The rows of ``frame`` that every given filter keeps."""
    mask = pd.Series(True, index=frame.index)
    for column, values in (("capability", filters.capabilities), ("lc_id", filters.lcs), ("model", filters.models),
                           ("test_type", filters.test_types), ("kind", filters.kinds)):
        if values:
            mask &= frame[column].isin(values)
    if filters.outcome == "fails":
        mask &= frame["failed"]
    elif filters.outcome == "passes":
        mask &= ~frame["failed"]
    if filters.template:
        mask &= frame["template"] == filters.template
    if filters.word:
        mask &= frame["inserted_word"] == filters.word
    if filters.pass_to_fail:
        mask &= frame["pass_to_fail"]
    return frame[mask]


def group_rates(frame: pd.DataFrame, by: str, min_cases: int = 1) -> pd.DataFrame:
    """Fail rate per value of column ``by`` (all outcomes of ``frame`` count): n, n_fail, rate, 95 % CI.

    The interval is clustered by seed (``clustered_interval``: a seed's cases, its expansions and every model's
    outcome on them, count as one cluster) when ``frame`` has ``lc_id`` and ``seed_id``; else Wilson on cases.
    Sorted by fail rate, then size; rows with an empty key (seeds when grouping by inserted word) are left out.
    """
    columns = [by, "n_cases", "n_fail", "fail_rate", "ci_low", "ci_high"]
    keyed = frame[frame[by].astype(str) != ""] if by in frame else frame.iloc[0:0]
    if keyed.empty:
        return pd.DataFrame(columns=columns)
    grouped = keyed.groupby(by, sort=False)["failed"].agg(["size", "sum"]).reset_index()
    grouped.columns = [by, "n_cases", "n_fail"]
    grouped = grouped[grouped["n_cases"] >= min_cases]
    if {"lc_id", "seed_id"} <= set(keyed.columns):
        keys = list(dict.fromkeys([by, "lc_id", "seed_id"]))
        per_seed = keyed.groupby(keys, sort=False)["failed"].agg(["sum", "size"])
        bounds = []
        for key, f, n in zip(grouped[by], grouped["n_fail"], grouped["n_cases"], strict=True):
            seeds = per_seed.loc[key]
            bounds.append(clustered_interval(int(f), int(n), **cluster_stats(seeds["sum"], seeds["size"])))
    else:
        bounds = [wilson_interval(int(f), int(n)) for f, n in zip(grouped["n_fail"], grouped["n_cases"], strict=True)]
    grouped["fail_rate"] = grouped["n_fail"] / grouped["n_cases"]
    grouped["ci_low"] = [lo for lo, _ in bounds]
    grouped["ci_high"] = [hi for _, hi in bounds]
    return grouped.sort_values(["fail_rate", "n_cases"], ascending=[False, False], ignore_index=True)[columns]


def counted_group_rates(counts: pd.DataFrame, by: str) -> pd.DataFrame:
    """:func:`group_rates` from counts: per value of ``by``, summed ``n``/``n_fail`` and seed-group statistics.

    ``counts`` has ``by``, ``n``, ``n_fail`` and ``CLUSTER_STAT_FIELDS`` per disjoint set of seed groups (e.g.
    ``RunReader.cluster_counts`` per LC); they add up, so the interval is the same seed-clustered interval.
    """
    columns = [by, "n_cases", "n_fail", "fail_rate", "ci_low", "ci_high"]
    if counts.empty:
        return pd.DataFrame(columns=columns)
    grouped = counts.groupby(by, sort=False)[["n", "n_fail", *CLUSTER_STAT_FIELDS]].sum().reset_index()
    bounds = [clustered_interval(int(row.n_fail), int(row.n), **{f: int(getattr(row, f)) for f in CLUSTER_STAT_FIELDS})
              for row in grouped.itertuples(index=False)]
    grouped = grouped.rename(columns={"n": "n_cases"})
    grouped["fail_rate"] = grouped["n_fail"] / grouped["n_cases"]
    grouped["ci_low"] = [lo for lo, _ in bounds]
    grouped["ci_high"] = [hi for _, hi in bounds]
    return grouped.sort_values(["fail_rate", "n_cases"], ascending=[False, False], ignore_index=True)[columns]


def headline(rates: pd.DataFrame, by: str, models: Sequence[str] = ()) -> str:
    """One plain sentence about the worst group.

    E.g. "The models fail 78 % of the 40 cases whose inserted word is 'not' (95 % CI 63–88 %)."
    """
    if rates.empty:
        return "No cases to group."
    top = rates.iloc[0]
    who = f"{models[0]} fails" if len(models) == 1 else "The models fail"
    what = {"inserted_word": "whose inserted word is", "template": "built by the template", "lc_label": "of the LC",
            "capability": "of the capability", "model": "of the model",
            "test_type": "of test type"}.get(by, f"with {by}")
    return (f"{who} {100 * float(top['fail_rate']):.0f} % of the {int(top['n_cases'])} cases {what} "
            f"'{top[by]}' (95 % CI {100 * float(top['ci_low']):.0f}–{100 * float(top['ci_high']):.0f} %).")


def lc_model_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Fail rate per LC × model with capability-first labels (heatmap input), LCs in capability order."""
    columns = ["lc_id", "lc_title", "lc_label", "capability", "model", "n_cases", "n_fail", "fail_rate", "validity"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    keys = ["lc_id", "lc_title", "lc_label", "capability", "model"]
    grouped = frame.groupby(keys, sort=False).agg(n_cases=("failed", "size"), n_fail=("failed", "sum"),
                                                  validity=("validity", "first")).reset_index()
    grouped["fail_rate"] = grouped["n_fail"] / grouped["n_cases"]
    return grouped.sort_values(["capability", "lc_id", "model"], ignore_index=True)[columns]


def striking_failures(frame: pd.DataFrame, per_model: int = 3) -> pd.DataFrame:
    """The most striking failures per model: confident wrong predictions, one per LC, pass-to-fail pairs first.

    An expansion that fails while its seed passes (same model) shows the weakness most plainly; then
    the model's confidence in its wrong label decides.
    """
    failed = frame[frame["failed"]]
    if failed.empty:
        return failed
    ranked = failed.sort_values(["model", "pass_to_fail", "confidence"],
                                                          ascending=[True, False, False])
    picked = ranked.drop_duplicates(["model", "lc_id"]).groupby("model", sort=False).head(per_model)
    return picked.reset_index(drop=True)


def distinct_values(frame: pd.DataFrame, column: str, limit: int = 500) -> list[str]:
    """Non-empty values of a column, most frequent first (for filter menus)."""
    if column not in frame or frame.empty:
        return []
    counts = frame.loc[frame[column].astype(str) != "", column].astype(str).value_counts()
    return list(counts.index[:limit])


def options(values: Iterable[str]) -> list[str]:
    """Sorted distinct non-empty strings."""
    return sorted({str(v) for v in values if str(v)})


def pass_to_fail_candidates(frame: pd.DataFrame) -> pd.Series:
    """True for an expansion whose seed passes (same model): the rows that can be pass-to-fail, whose failures are
    exactly the ``pass_to_fail`` rows (a fail rate over them matches a pass-to-fail list)."""
    passing_seed = (frame["kind"] == "seed") & ~frame["failed"]
    passed = set(zip(frame.loc[passing_seed, "case_id"], frame.loc[passing_seed, "model"], strict=True))
    flags = [k == "expansion" and key in passed
             for k, key in zip(frame["kind"], zip(frame["seed_id"], frame["model"], strict=True), strict=True)]
    return pd.Series(flags, index=frame.index, dtype=bool)


PLAIN_CAPABILITIES = {  # capability groups in words a stakeholder reads without the paper at hand
    "Vocabulary": "Word meaning", "Negation": "Negation (not, never)", "Temporal": "Time (then vs now)",
    "SRL": "Whose opinion counts", "Questions": "Questions", "Opinion": "Opinions", "Coreference": "Who is meant",
    "Taxonomy": "Kinds of things", "Fairness": "Fairness to groups", "Identity terms": "Mentions of groups",
    "Counter speech": "Speaking against hate", "Hate/Slur": "Slurs and hateful words", "Robustness": "Typos and noise",
    "Other": "Other",
}


def plain_capability(group: str) -> str:
    """A capability group in plain words (no abbreviations such as SRL)."""
    return PLAIN_CAPABILITIES.get(group, group)


def trustworthy_failures(frame: pd.DataFrame, *, excluded: Iterable[str] = (), reviewed: Iterable[str] = (),
                         per_model: int = 3) -> pd.DataFrame:
    """The failures a stakeholder can trust, per model: one per LC, at most ``per_model``.

    ``excluded``: case ids to leave out (flagged by the validity checks, or whose expected label a reviewer
    disputed). ``reviewed``: case ids reviewers confirmed; they come first (column ``reviewed``). Then
    pass-to-fail expansions (the seed passes, the expansion fails), then the model's confidence. An expansion
    whose seed also fails is shown as a sentence of its own (``show_seed`` False), never as a flip."""
    excluded, reviewed = set(excluded), set(reviewed)
    failed = frame[frame["failed"] & ~frame["case_id"].isin(excluded)]
    if failed.empty:
        return failed.assign(reviewed=pd.Series(dtype=bool), show_seed=pd.Series(dtype=bool))
    ranked = failed.assign(reviewed=failed["case_id"].isin(reviewed),
                           show_seed=failed["pass_to_fail"].astype(bool))
    ranked = ranked.sort_values(["model", "reviewed", "pass_to_fail", "confidence"],
                                ascending=[True, False, False, False])
    picked = ranked.drop_duplicates(["model", "lc_id"]).groupby("model", sort=False).head(per_model)
    return picked.reset_index(drop=True)
