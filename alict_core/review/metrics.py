"""Validity metrics of reviewed cases, as the paper defines them (TOSEM §4, Eq. 7), and reviewer agreement.

* ``human_label``: the 1–5 sentiment / hatefulness score as a label — sentiment 1–2 negative, 3 neutral,
  4–5 positive; hate speech 1–2 non-hateful, 4–5 hateful, 3 undecided (None: agrees with no label).
* LabelCons = share of judgements whose human label satisfies the case's expected label (label / one_of /
  not_label expectations; INV/DIR cases without labels are left out).
* LCRel = mean normalised relevance, ExpValidity = mean normalised validity (expansions only), with
  ``Norm(s) = (s − 1) / 4`` mapping 1..5 onto 0..1.
* Intervals: 95 % Wilson score intervals (for the two means, of the summed normalised scores as
  fractional successes). The unit is one judgement; with k reviewers per case every case weighs k.
* Agreement: Cohen's κ on the human labels of cases with ≥ 2 judgements (first two reviewers by name),
  Krippendorff's α (the ``krippendorff`` package) over all reviewers — nominal for labels, ordinal for
  relevance.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Literal, Mapping, Sequence

from alict_core.metrics.intervals import wilson_interval
from alict_core.seeds.types import expected_passes

LABEL_KINDS = ("label", "one_of", "not_label")


def human_label(task: str, score: int) -> str | None:
    """The label a reviewer's 1–5 sentiment/hatefulness score stands for (None: undecided)."""
    if task == "sentiment":
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


def validity_metrics(rows: Iterable[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """LabelCons, LCRel and ExpValidity (value, 95 % interval, n) of judgement rows of one suite task."""
    rows = list(rows)
    cons: list[float] = []
    rel: list[float] = []
    val: list[float] = []
    for row in rows:
        ok = label_consistent(task, row["expected"], int(row["label_score"]))
        if ok is not None:
            cons.append(float(ok))
        rel.append(norm(int(row["relevance"])))
        if row["kind"] == "expansion" and row.get("validity") is not None:
            val.append(norm(int(row["validity"])))
    return {"label_cons": _rate(cons), "lc_rel": _rate(rel), "exp_validity": _rate(val),
            "n_cases": len({(r["case_id"], r["text_hash"]) for r in rows})}


def cohen_kappa(first: Sequence[Any], second: Sequence[Any]) -> float | None:
    """Cohen's κ of two raters' categorical labels (None when undefined: no pairs)."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    categories = sorted({*first, *second}, key=str)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    expected = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in categories)
    if expected == 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1 - expected)


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
    """Inter-reviewer agreement over cases judged by ≥ 2 reviewers."""
    labels: dict[Any, dict[str, Any]] = defaultdict(dict)
    relevance: dict[Any, dict[str, Any]] = defaultdict(dict)
    for row in rows:
        key = (row["case_id"], row["text_hash"])
        labels[key][row["reviewer"]] = human_label(task, int(row["label_score"])) or "undecided"
        relevance[key][row["reviewer"]] = int(row["relevance"])
    shared = {k: v for k, v in labels.items() if len(v) >= 2}
    pairs = [[v[r] for r in sorted(v)[:2]] for v in shared.values()]
    n_raters = max((len(v) for v in labels.values()), default=0)
    return {
        "n_shared": len(shared), "max_reviewers": n_raters,
        "cohen_kappa_label": cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]) if pairs else None,
        "krippendorff_alpha_label": krippendorff_alpha(shared, "nominal") if shared else None,
        "krippendorff_alpha_relevance":
            krippendorff_alpha({k: relevance[k] for k in shared}, "ordinal") if shared else None,
    }


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
        "n_judgements": len(rows), "reviewers": sorted({r["reviewer"] for r in rows}),
        "overall": validity_metrics(rows, task),
        **{kind: validity_metrics(part, task) for kind, part in by_kind.items()},
        "per_lc": per_lc, "agreement": agreement(rows, task),
    }
