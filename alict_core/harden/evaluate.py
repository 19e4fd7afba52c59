"""Prove the fix: parent vs retrained version on the LC test split, the other LCs and the corpus test split.

Both models score exactly the same cases, so before/after is compared as ``compare`` compares two runs: per
LC the paired, seed-clustered test of :mod:`alict_core.analysis.compare` (exact sign test on seed groups' net
discordance), Holm's correction across the LCs for the "got worse" flag, and the seed-clustered interval of
the paired difference. Corpus test accuracy: McNemar's exact test on the same texts (groups of one text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from alict_core.common.errors import AlictError
from alict_core.common.jsonl import write_json
from alict_core.harden.export import export_settings, read_split, resolve_run, run_rows
from alict_core.harden.versions import ensure_registered, version_dir
from alict_core.tasks import TASKS

Progress = Callable[[int, int, str], None]
CASE_KEYS = ("case_id", "lc_id", "kind", "seed_id", "text", "expected", "test_type", "capability", "task", "variants",
             "description", "meta")


HELDOUT_TEST = "McNemar's exact test on the same corpus test texts"


def paired_tests() -> dict[str, str]:
    """What the before/after tests are (saved with every comparison, shown by the CLI and the page)."""
    from alict_core.analysis.compare import ALPHA, GATE_CORRECTION, TEST_NAME

    return {"lcs": f"paired, seed-clustered {TEST_NAME}",
            "correction": f"{GATE_CORRECTION}: an LC got worse when its Holm-adjusted p < {ALPHA}",
            "heldout": HELDOUT_TEST}


@dataclass
class HardenComparison:
    """Per LC fail rates before/after (seed-clustered 95 % intervals), the paired test of the change (``p_value``,
    ``p_holm``, ``regression``: Holm-adjusted p < 0.05 and the fail rate rose, with the paired difference's
    interval ``diff_low``/``diff_high``) and held-out accuracy / macro-F1 with McNemar's test (``heldout_test``)."""

    parent: str
    child: str
    lcs: pd.DataFrame
    heldout: dict[str, dict[str, float]] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)  # leak check counts and what was left out, and why
    heldout_test: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"parent": self.parent, "child": self.child, "lcs": self.lcs.to_dict(orient="records"),
               "heldout": self.heldout, "heldout_test": self.heldout_test, "tests": paired_tests(),
               "checks": self.checks}
        return out | {"regressions": regressions(out)}

    def headline(self) -> str:
        trained = self.lcs[self.lcs.trained]
        others = self.lcs[~self.lcs.trained]
        parts = [f"{self.child}: fail rate on the trained LCs' test split "
                 f"{_mean(trained, 'fail_before'):.1%} → {_mean(trained, 'fail_after'):.1%}"]
        if len(others):
            parts.append(f"other LCs {_mean(others, 'fail_before'):.1%} → {_mean(others, 'fail_after'):.1%}")
        if self.heldout:
            before, after = self.heldout.get("parent", {}), self.heldout.get("child", {})
            parts.append(f"held-out accuracy {before.get('accuracy', float('nan')):.3f} → "
                         f"{after.get('accuracy', float('nan')):.3f}")
        return "; ".join(parts)


def _interval(low: Any, high: Any) -> tuple[float, float] | None:
    return None if low is None or high is None or low != low or high != high else (float(low), float(high))


def regressions(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What got worse after hardening, from a comparison's ``to_dict()``: each LC whose fail rate rose, and
    corpus test accuracy or macro-F1 that fell; each with before, after, delta, the delta's paired 95 % interval
    (None where there is none: macro-F1), the paired test's ``p_value`` (and ``p_holm`` for LCs), and ``clear``:
    an LC's Holm-adjusted p < 0.05 (the ``regression`` flag), accuracy's McNemar p < 0.05."""
    from alict_core.analysis.compare import ALPHA

    out = []
    for row in result.get("lcs") or []:
        if row["fail_after"] > row["fail_before"]:
            out.append({"what": row["lc_id"], "measure": "fail rate", "trained": bool(row.get("trained")),
                        "before": row["fail_before"], "after": row["fail_after"],
                        "delta": row["fail_after"] - row["fail_before"],
                        "ci": _interval(row.get("diff_low"), row.get("diff_high")),
                        "p_value": row.get("p_value"), "p_holm": row.get("p_holm"),
                        "clear": bool(row.get("regression"))})
    before, after = (result.get("heldout") or {}).get("parent"), (result.get("heldout") or {}).get("child")
    paired = result.get("heldout_test") or {}
    if before and after:
        for measure in ("accuracy", "macro_f1"):
            if after.get(measure, 0.0) < before.get(measure, 0.0):
                accuracy = measure == "accuracy"
                p = paired.get("p_value") if accuracy else None
                out.append({"what": "corpus test split", "measure": measure.replace("_", "-"), "trained": False,
                            "before": before[measure], "after": after[measure],
                            "delta": after[measure] - before[measure],
                            "ci": _interval(paired.get("diff_low"), paired.get("diff_high")) if accuracy else None,
                            "p_value": p, "p_holm": None, "clear": bool(p is not None and p < ALPHA)})
    return out


def regression_text(item: Mapping[str, Any]) -> str:
    """'sentiment-lc04: fail rate 50.0% → 75.0% (+25.0 points, 95 % CI -5.0 to +55.0, paired p = 0.031,
    Holm p = 0.063)' and the like."""
    percent = item["measure"] == "fail rate"
    value = (lambda v: f"{v:.1%}") if percent else (lambda v: f"{v:.3f}")
    delta = f"{item['delta'] * 100:+.1f} points" if percent or item["measure"] == "accuracy" else \
        f"{item['delta']:+.3f}"
    ci = item.get("ci")
    interval = f", 95 % CI {ci[0] * 100:+.1f} to {ci[1] * 100:+.1f}" if ci else ""
    tests = "".join(f", {name} p {_p(item[key])}" for key, name in (("p_value", "paired"), ("p_holm", "Holm"))
                    if item.get(key) is not None)
    return (f"{item['what']}: {item['measure']} {value(item['before'])} → {value(item['after'])} "
            f"({delta}{interval}{tests})")


def regression_note(item: Mapping[str, Any]) -> str:
    """Why a listed change is not a clear regression ('' when it is, or when no test applies: macro-F1)."""
    if item["clear"] or item.get("p_value") is None:
        return ""
    if item.get("p_holm") is not None:
        return "not significant after Holm's correction across the LCs"
    return "not significant (McNemar's exact test)"


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


def paired_lc_tests(result: Any, parent: str, child: str) -> pd.DataFrame:
    """Per LC of a run holding both models: ``compare``'s paired, seed-clustered test of child vs parent on the
    same cases, with Holm's correction across the LCs (columns of ``Comparison.lcs``)."""
    from alict_core.analysis.compare import compare_frames, side_frame

    return compare_frames(side_frame(result, parent), side_frame(result, child), parent, child).lcs


def heldout_paired_test(correct_before: Any, correct_after: Any) -> dict[str, float]:
    """McNemar's exact test of accuracy on the same texts (``compare``'s sign test with one text per group) and
    the paired 95 % interval of the accuracy change."""
    import numpy as np

    from alict_core.analysis.compare import paired_difference_interval, paired_sign_test

    before, after = np.asarray(correct_before, dtype=bool), np.asarray(correct_after, dtype=bool)
    newly_wrong, newly_right = (before & ~after).astype(int), (~before & after).astype(int)
    low, high = paired_difference_interval(newly_right, newly_wrong, np.ones(len(before)))
    return {"newly_wrong": int(newly_wrong.sum()), "newly_right": int(newly_right.sum()),
            "p_value": paired_sign_test(newly_wrong, newly_right), "diff_low": float(low), "diff_high": float(high)}


def _mean(frame: pd.DataFrame, column: str) -> float:
    """Case-weighted mean fail rate."""
    n = frame["n_cases"].sum()
    return float((frame[column] * frame["n_cases"]).sum() / n) if n else float("nan")


def _cases(rows: Sequence[dict[str, Any]]) -> list[Any]:
    from alict_core.cases.testcases import TestCase

    return [TestCase.from_dict({k: r[k] for k in CASE_KEYS if k in r}) for r in rows]


def _probas(models: Sequence[Any], texts: Sequence[str]) -> list[Any]:
    """Each model's probabilities on ``texts``; embedded models sharing one encoder encode the texts once."""
    encoders = {getattr(getattr(m, "encoder", None), "fingerprint", None) for m in models}
    if len(encoders) == 1 and None not in encoders and all(hasattr(m, "proba_from_embeddings") for m in models):
        emb = models[0].embed(list(texts))
        return [m.proba_from_embeddings(emb) for m in models]
    return [m.predict_proba(list(texts)) for m in models]


def _predicted(model: Any, proba: Any) -> list[str]:
    return [model.labels[i] for i in proba.argmax(axis=1)]


def heldout_scores(model: Any, texts: Sequence[str], labels: Sequence[str], proba: Any = None) -> dict[str, float]:
    """Accuracy and macro-F1 of a model on labelled texts (scikit-learn metrics); ``proba``: its
    probabilities on ``texts`` when already computed."""
    from sklearn.metrics import accuracy_score, f1_score

    proba = model.predict_proba(list(texts)) if proba is None else proba
    predicted = _predicted(model, proba)
    return {"accuracy": round(float(accuracy_score(labels, predicted)), 4),
            "macro_f1": round(float(f1_score(labels, predicted, average="macro", labels=list(model.labels),
                                             zero_division=0)), 4),
            "n": len(texts)}


def evaluate_versions(parent: str, child: str, export_dir: str | Path, *, include_other_lcs: bool = True,
                      heldout: tuple[list[str], list[str]] | None = None, use_heldout: bool = True,
                      original: tuple[list[str], list[str]] | None = None,
                      progress: Progress | None = None, save: bool = True) -> HardenComparison:
    """Run parent and child on exactly the same cases: (b) the LC test split of the export the child was
    trained on, the other LCs of the run (less any case sharing a text or source sentence with the LC
    training split) and (a) the corpus test split (less any text equal to a training text).

    The leak check runs first (refusing with counts). When ``parent`` is the child's recorded parent, the
    parent is loaded as it was retrained from (a Hugging Face version: its recorded folder).
    ``heldout`` (texts, labels) defaults to the task corpus's official test split, ``original`` (the
    retraining's original data, for the de-duplication of (a)) to its training split.
    """
    from alict_core.data.splits import source_split_lookup
    from alict_core.harden.leaks import check_no_leaks, heldout_without_training, overlapping
    from alict_core.harden.versions import parent_model as recorded_parent
    from alict_core.harden.versions import version_info
    from alict_core.models.registry import get_model
    from alict_core.runner.run import run_suite

    if not ensure_registered(child):
        raise AlictError(f"model version {child!r} not found; train one with `harden train`")
    exported = export_settings(export_dir)
    info = version_info(child)
    if info.get("data_hash") != exported.get("data_hash"):
        raise AlictError(f"version {child!r} was not trained on the export {export_dir} (its split differs): "
                         "evaluate it on the export it was trained on")
    task = str(info["task"])
    parent_model = recorded_parent(child) if parent == info["parent"] else get_model(parent)
    child_model = get_model(child)
    if tuple(parent_model.labels) != tuple(child_model.labels):
        raise AlictError(f"{parent!r} and {child!r} have different labels")
    trained = set(exported["lcs"])
    train_rows, test_rows = read_split(export_dir, "train"), read_split(export_dir, "test")
    if use_heldout and heldout is None:
        from alict_core.data.splits import task_splits

        heldout = task_splits(task)["test"]
    split_of = source_split_lookup(task) if task in TASKS else None
    leaks = check_no_leaks(train_rows, test_rows, where=f"export {export_dir}",
                           heldout_texts=heldout[0] if use_heldout and heldout else (), source_split=split_of)
    cases = _cases(test_rows)
    excluded_other = 0
    if include_other_lcs:
        _, rows = run_rows(_run_folder(exported))
        others = [r for r in rows if r["lc_id"] not in trained]
        kept = [r for r, overlaps in zip(others, overlapping(others, train_rows), strict=True) if not overlaps]
        excluded_other = len(others) - len(kept)
        cases += _cases(kept)
    if not cases:
        raise AlictError("the export's test split is empty: export more seeds or a larger test share")
    from alict_core.review.writeback import RejectionFilter

    result = run_suite(cases, [parent_model, child_model], progress=progress, exclude=RejectionFilter())
    summary = result.summary()
    paired = paired_lc_tests(result, parent_model.name, child_model.name).set_index("lc_id")
    rows_out = _lc_rows(cases, summary, paired, parent_model.name, child_model.name, trained)
    comparison = HardenComparison(parent, child, pd.DataFrame(rows_out),
                                  checks={"leak_check": leaks.to_dict(),
                                          "other_lc_cases_excluded_for_overlap": excluded_other})
    if use_heldout and heldout is not None:
        if original is None:
            from alict_core.data.splits import task_splits

            original = task_splits(task)["train"]
        texts, labels, dropped = heldout_without_training(heldout, [*original[0], *(r["text"] for r in train_rows)])
        if not texts:
            raise AlictError("every held-out text is also a training text: nothing is left to evaluate on")
        comparison.checks["heldout_texts_excluded_as_training_texts"] = dropped
        before, after = _probas([parent_model, child_model], texts)
        comparison.heldout = {"parent": heldout_scores(parent_model, texts, labels, before),
                              "child": heldout_scores(child_model, texts, labels, after)}
        comparison.heldout_test = heldout_paired_test(
            [p == y for p, y in zip(_predicted(parent_model, before), labels, strict=True)],
            [p == y for p, y in zip(_predicted(child_model, after), labels, strict=True)])
    if save:
        write_json(version_dir(child) / "evaluation.json", comparison.to_dict())
    return comparison


def _lc_rows(cases: list[Any], summary: pd.DataFrame, paired: pd.DataFrame, parent_name: str, child_name: str,
             trained: set[str]) -> list[dict[str, Any]]:
    """Per LC of the cases (in their order): both fail rates with their intervals and the paired test."""
    rows_out = []
    for lc in dict.fromkeys(c.lc_id for c in cases):
        before = summary[(summary.lc_id == lc) & (summary.model == parent_name)].iloc[0]
        after = summary[(summary.lc_id == lc) & (summary.model == child_name)].iloc[0]
        test = paired.loc[lc]
        rows_out.append({"lc_id": lc, "trained": lc in trained, "n_cases": int(before.n_cases),
                         "fail_before": float(before.fail_rate), "ci_low_before": float(before.ci_low_all),
                         "ci_high_before": float(before.ci_high_all), "fail_after": float(after.fail_rate),
                         "ci_low_after": float(after.ci_low_all), "ci_high_after": float(after.ci_high_all),
                         "delta": float(after.fail_rate - before.fail_rate),
                         "newly_failing": int(test.newly_failing), "newly_passing": int(test.newly_passing),
                         "seed_groups": int(test.seed_groups), "diff_low": float(test.diff_low),
                         "diff_high": float(test.diff_high), "p_value": float(test.p_value),
                         "p_holm": float(test.p_holm), "regression": bool(test.regression)})
    return rows_out


def _run_folder(exported: dict[str, Any]) -> Path:
    """The export's run: its recorded folder when it still holds that run, else the run id in the runs store."""
    from alict_core.common.jsonl import read_json

    recorded = exported.get("run_dir")
    if recorded and (Path(recorded) / "meta.json").is_file():
        try:
            meta = read_json(Path(recorded) / "meta.json")
            held = str(meta.get("run_id") or Path(recorded).name) if isinstance(meta, dict) else None
        except (OSError, ValueError):
            held = None
        if held == exported["run_id"]:  # a run re-run into the same --out since holds other cases: never read as it
            return Path(recorded)
    try:
        return resolve_run(exported["run_id"])
    except AlictError:
        raise AlictError(f"the export's run {exported['run_id']!r} is no longer in its folder {recorded!r} (another "
                         "run was saved there since) nor in the runs store: export the hardening set again from "
                         "the run you want") from None
