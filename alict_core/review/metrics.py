"""Validity metrics of reviewed cases, as the paper defines them (TOSEM §4, Eq. 7), and reviewer agreement.

* ``human_label``: the 1–5 sentiment / hatefulness score as a label — sentiment 1–2 negative, 3 neutral,
  4–5 positive; hate speech 1–2 non-hateful, 4–5 hateful, 3 undecided (None: agrees with no label).
* The unit is the **case**: each reviewer counts once per case (their latest judgement), a case's value is
  the mean over its reviewers, and every metric is the mean over cases — k reviewers per case do not
  inflate n (``n`` is the number of cases).
* LabelCons = mean over cases of the share of a case's reviewers whose human label satisfies the case's
  expected label (label / one_of / not_label expectations; INV/DIR cases without labels are left out).
* LCRel = mean normalised relevance, ExpValidity = mean normalised validity (expansions only), with
  ``Norm(s) = (s − 1) / 4`` mapping 1..5 onto 0..1, averaged per case first.
* Intervals: 95 % Wilson score intervals over the cases (the per-case values summed as fractional successes).
* Agreement: Cohen's κ (scikit-learn's ``cohen_kappa_score``) for **every pair** of reviewers over the cases
  both judged, reported as the mean over the pairs where it is defined, with the pair count; κ is
  undefined (nan, as scikit-learn) when both raters use one and the same category, and an all-undefined
  result is reported as "undefined", never as 1.0. Krippendorff's α (the ``krippendorff`` package) over all
  reviewers at once — nominal for labels, ordinal for relevance.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Literal, Mapping, Sequence

from alict_core.metrics.intervals import wilson_interval
from alict_core.seeds.types import expected_passes
from alict_core.tasks import SENTIMENT

LABEL_KINDS = ("label", "one_of", "not_label")


def human_label(task: str, score: int) -> str | None:
    """The label a reviewer's 1–5 sentiment/hatefulness score stands for (None: undecided)."""
    if task == SENTIMENT.name:
        return "negative" if score <= 2 else "neutral" if score == 3 else "positive"
    return "non-hateful" if score <= 2 else "hateful" if score >= 4 else None


def norm(score: int) -> float:
    """A 1–5 score on 0..1."""
    return (score - 1) / 4


def label_consistent(task: str, expected: Mapping[str, Any], score: int) -> bool | None:
    """Whether the reviewer's label satisfies the expectation (None: the expectation has no label)."""
    if expected.get("kind") not in LABEL_KINDS:
        return None
    label = human_label(task, score)
    return label is not None and expected_passes(dict(expected), label)


def _rate(values: Sequence[float]) -> dict[str, Any]:
    n = len(values)
    if not n:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    total = float(sum(values))
    low, high = wilson_interval(total, n)  # type: ignore[arg-type]  # fractional successes for means
    return {"value": total / n, "ci_low": low, "ci_high": high, "n": n}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def per_case(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Per (case id, text hash): one judgement per reviewer (the latest when a reviewer judged it twice)."""
    grouped: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for row in rows:
        mine = grouped[(row["case_id"], row["text_hash"])]
        previous = mine.get(row["reviewer"])
        if previous is None or str(row.get("updated_at") or "") >= str(previous.get("updated_at") or ""):
            mine[row["reviewer"]] = row
    return {key: list(by_reviewer.values()) for key, by_reviewer in grouped.items()}


def validity_metrics(rows: Iterable[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """LabelCons, LCRel and ExpValidity (value, 95 % interval, n = cases) of judgement rows of one suite task."""
    rows = list(rows)
    cons: list[float] = []
    rel: list[float] = []
    val: list[float] = []
    for judged in per_case(rows).values():
        verdicts = [label_consistent(task, j["expected"], int(j["label_score"])) for j in judged]
        if verdicts[0] is not None:
            cons.append(_mean([float(bool(v)) for v in verdicts]))
        rel.append(_mean([norm(int(j["relevance"])) for j in judged]))
        validity = [norm(int(j["validity"])) for j in judged
                    if j["kind"] == "expansion" and j.get("validity") is not None]
        if validity:
            val.append(_mean(validity))
    return {"label_cons": _rate(cons), "lc_rel": _rate(rel), "exp_validity": _rate(val),
            "n_cases": len({(r["case_id"], r["text_hash"]) for r in rows}), "n_judgements": len(rows)}


def cohen_kappa(first: Sequence[Any], second: Sequence[Any]) -> float | None:
    """Cohen's κ of two raters' categorical labels (scikit-learn); None without pairs, nan where undefined
    (both raters always give one and the same category: chance agreement is 1)."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    if len({*first, *second}) == 1:
        return math.nan  # scikit-learn gives nan here too (0/0), with a warning
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score([str(x) for x in first], [str(x) for x in second]))


def pairwise_kappa(units: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any]:
    """Cohen's κ for every pair of reviewers over the units both judged: the mean over defined pairs and counts.

    ``value`` is None when no pair shares a unit, nan when every pair's κ is undefined."""
    raters = sorted({r for v in units.values() for r in v})
    kappas: list[float] = []
    undefined = 0
    for i, a in enumerate(raters):
        for b in raters[i + 1:]:
            shared = [v for v in units.values() if a in v and b in v]
            kappa = cohen_kappa([v[a] for v in shared], [v[b] for v in shared]) if shared else None
            if kappa is None:
                continue
            if math.isnan(kappa):
                undefined += 1
            else:
                kappas.append(kappa)
    value = _mean(kappas) if kappas else (math.nan if undefined else None)
    return {"value": value, "pairs": len(kappas), "undefined_pairs": undefined}


def krippendorff_alpha(units: Mapping[Any, Mapping[str, Any]], level: Literal["nominal", "ordinal", "interval"]
                       ) -> float | None:
    """Krippendorff's α of ``{unit: {reviewer: value}}`` (``level``: nominal / ordinal / interval)."""
    import krippendorff
    import numpy as np

    if sum(len(v) >= 2 for v in units.values()) == 0:
        return None
    raters = sorted({r for v in units.values() for r in v})
    values = sorted({x for v in units.values() for x in v.values()}, key=str)
    if len(values) < 2:
        return None
    code = {v: i for i, v in enumerate(values)} if level == "nominal" else None
    data = np.full((len(raters), len(units)), np.nan)
    for j, judged in enumerate(units.values()):
        for r, value in judged.items():
            data[raters.index(r), j] = code[value] if code is not None else float(value)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement=level,
                               value_domain=list(range(len(values))) if code is not None else None)
    return None if math.isnan(alpha) else float(alpha)


def agreement(rows: Iterable[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """Inter-reviewer agreement over cases judged by ≥ 2 reviewers (every reviewer pair; see the module doc).

    ``cohen_kappa_label``: mean pairwise κ, None when undefined (``cohen_kappa_label_undefined`` then says why),
    so JSON output stays valid.
    """
    labels: dict[Any, dict[str, Any]] = defaultdict(dict)
    relevance: dict[Any, dict[str, Any]] = defaultdict(dict)
    for key, judged in per_case(rows).items():
        for row in judged:
            labels[key][row["reviewer"]] = human_label(task, int(row["label_score"])) or "undecided"
            relevance[key][row["reviewer"]] = int(row["relevance"])
    shared = {k: v for k, v in labels.items() if len(v) >= 2}
    kappa = pairwise_kappa(shared)
    undefined = None
    if kappa["value"] is not None and math.isnan(kappa["value"]):
        undefined = (f"undefined: in each of the {kappa['undefined_pairs']} reviewer pair(s) both reviewers gave "
                     "one and the same label to every shared case (chance agreement is 1; scikit-learn gives nan)")
    return {
        "n_shared": len(shared), "max_reviewers": max((len(v) for v in labels.values()), default=0),
        "cohen_kappa_label": None if undefined else kappa["value"],
        "cohen_kappa_label_undefined": undefined,
        "cohen_kappa_pairs": kappa["pairs"], "cohen_kappa_undefined_pairs": kappa["undefined_pairs"],
        "cohen_kappa_method": "mean of Cohen's kappa over every reviewer pair (cases both judged)",
        "krippendorff_alpha_label": krippendorff_alpha(shared, "nominal") if shared else None,
        "krippendorff_alpha_relevance":
            krippendorff_alpha({k: relevance[k] for k in shared}, "ordinal") if shared else None,
    }


def describe_kappa(agree: Mapping[str, Any]) -> str:
    """Cohen's κ of :func:`agreement` in words: the mean over reviewer pairs, or why it is undefined."""
    if agree.get("cohen_kappa_label_undefined"):
        return f"Cohen's kappa (label) {agree['cohen_kappa_label_undefined']}"
    if agree.get("cohen_kappa_label") is None:
        return "Cohen's kappa (label) – (no case judged by two reviewers)"
    return (f"Cohen's kappa (label) {agree['cohen_kappa_label']:.3f} "
            f"(mean over {agree['cohen_kappa_pairs']} reviewer pair(s))")


def task_stats(rows: Sequence[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """All metrics of one review task: overall, seeds vs expansions, per LC (× kind), and agreement."""
    rows = list(rows)
    by_kind = {kind: [r for r in rows if r["kind"] == kind] for kind in ("seed", "expansion")}
    per_lc: dict[str, dict[str, Any]] = {}
    for lc in sorted({r["lc_id"] for r in rows}):
        lc_rows = [r for r in rows if r["lc_id"] == lc]
        per_lc[lc] = {"all": validity_metrics(lc_rows, task),
                      **{kind: validity_metrics([r for r in lc_rows if r["kind"] == kind], task) for kind in by_kind}}
    return {
        "n_judgements": len(rows), "n_cases": len(per_case(rows)), "reviewers": sorted({r["reviewer"] for r in rows}),
        "overall": validity_metrics(rows, task),
        **{kind: validity_metrics(part, task) for kind, part in by_kind.items()},
        "per_lc": per_lc, "agreement": agreement(rows, task),
    }
