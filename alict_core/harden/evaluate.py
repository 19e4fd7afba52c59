"""Prove the fix: parent vs retrained version on the LC test split, the other LCs and the held-out corpus test set."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from alict_core.errors import AlictError
from alict_core.harden.export import export_settings, read_split, resolve_run, run_rows
from alict_core.harden.versions import ensure_registered, version_dir
from alict_core.jsonl import write_json

Progress = Callable[[int, int, str], None]
CASE_KEYS = ("case_id", "lc_id", "kind", "seed_id", "text", "expected", "test_type", "capability", "task", "variants",
             "description", "meta")


@dataclass
class HardenComparison:
    """Per LC fail rates before/after (with 95 % Wilson intervals) and held-out accuracy / macro-F1."""

    parent: str
    child: str
    lcs: pd.DataFrame
    heldout: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"parent": self.parent, "child": self.child, "lcs": self.lcs.to_dict(orient="records"),
                "heldout": self.heldout}

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


def _mean(frame: pd.DataFrame, column: str) -> float:
    """Case-weighted mean fail rate."""
    n = frame["n_cases"].sum()
    return float((frame[column] * frame["n_cases"]).sum() / n) if n else float("nan")


def _cases(rows: Sequence[dict[str, Any]]) -> list[Any]:
    from alict_core.runner.cases import TestCase

    return [TestCase.from_dict({k: r[k] for k in CASE_KEYS if k in r}) for r in rows]


def heldout_scores(model: Any, texts: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy and macro-F1 of a model on labelled texts (scikit-learn metrics)."""
    from sklearn.metrics import accuracy_score, f1_score

    proba = model.predict_proba(list(texts))
    predicted = [model.labels[i] for i in proba.argmax(axis=1)]
    return {"accuracy": round(float(accuracy_score(labels, predicted)), 4),
            "macro_f1": round(float(f1_score(labels, predicted, average="macro", labels=list(model.labels),
                                             zero_division=0)), 4),
            "n": len(texts)}


def evaluate_versions(parent: str, child: str, export_dir: str | Path, *, include_other_lcs: bool = True,
                      heldout: tuple[list[str], list[str]] | None = None, use_heldout: bool = True,
                      progress: Progress | None = None, save: bool = True) -> HardenComparison:
    """Run parent and child on the LC test split (never trained on) and the other LCs of the run.

    ``heldout`` (texts, labels) defaults to the task corpus's official test split.
    """
    from alict_core.models.registry import get_model
    from alict_core.runner.run import run_suite

    if not ensure_registered(child):
        raise AlictError(f"model version {child!r} not found; train one with `harden train`")
    exported = export_settings(export_dir)
    parent_model, child_model = get_model(parent), get_model(child)
    if tuple(parent_model.labels) != tuple(child_model.labels):
        raise AlictError(f"{parent!r} and {child!r} have different labels")
    trained = set(exported["lcs"])
    cases = _cases(read_split(export_dir, "test"))
    if include_other_lcs:
        _, rows = run_rows(_run_folder(exported))
        cases += _cases([r for r in rows if r["lc_id"] not in trained])
    if not cases:
        raise AlictError("the export's test split is empty: export more seeds or a larger test share")
    result = run_suite(cases, [parent_model, child_model], progress=progress)
    summary = result.summary()
    rows_out = []
    for lc in dict.fromkeys(c.lc_id for c in cases):
        before = summary[(summary.lc_id == lc) & (summary.model == parent_model.name)].iloc[0]
        after = summary[(summary.lc_id == lc) & (summary.model == child_model.name)].iloc[0]
        rows_out.append({"lc_id": lc, "trained": lc in trained, "n_cases": int(before.n_cases),
                         "fail_before": float(before.fail_rate), "ci_low_before": float(before.ci_low_all),
                         "ci_high_before": float(before.ci_high_all), "fail_after": float(after.fail_rate),
                         "ci_low_after": float(after.ci_low_all), "ci_high_after": float(after.ci_high_all),
                         "delta": float(after.fail_rate - before.fail_rate)})
    comparison = HardenComparison(parent, child, pd.DataFrame(rows_out))
    if use_heldout:
        if heldout is None:
            from alict_core.data.splits import task_splits

            task = str(getattr(child_model, "meta", {}).get("task") or _version_task(child))
            heldout = task_splits(task)["test"]
        comparison.heldout = {"parent": heldout_scores(parent_model, *heldout),
                              "child": heldout_scores(child_model, *heldout)}
    if save:
        write_json(version_dir(child) / "evaluation.json", comparison.to_dict())
    return comparison


def _run_folder(exported: dict[str, Any]) -> Path:
    """The export's run: its recorded folder when it still holds that run, else the run id in the runs store."""
    recorded = exported.get("run_dir")
    if recorded and (Path(recorded) / "meta.json").is_file():
        return Path(recorded)
    return resolve_run(exported["run_id"])


def _version_task(name: str) -> str:
    from alict_core.harden.versions import version_info

    return str(version_info(name)["task"])
