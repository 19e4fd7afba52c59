"""Adapters from the Report page to ``alict_core.suites`` (import/export) and ``alict_core.report`` (HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from alict_app.core import core_attr

SUITES = "alict_core.suites"
SUITES_HINT = "suite import/export (issue #4) has not landed"
REPORT_HINT = "the HTML report (issue #4) has not landed"


def import_baseline(path: Path, task: str) -> pd.DataFrame:
    """A baseline suite (CheckList JSON / HateCheck CSV) as a DataFrame with a ``capability`` column."""
    if not Path(path).exists():
        from alict_core.errors import DataNotFoundError

        raise DataNotFoundError(f"baseline suite {path} not found")
    from alict_core.suites import read_suite

    imported = read_suite(path, task)
    frame = pd.DataFrame([_row(t) for t in imported.cases])
    if "capability" not in frame.columns:
        frame["capability"] = frame.get("lc_id", "unknown")
    frame.attrs["skipped"] = [s.describe() for s in imported.skipped]  # shown by the page, never silent
    return frame


def _row(item: Any) -> dict[str, Any]:
    from alict_app.services import as_row

    return as_row(item)


def side_by_side(summary: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """Per capability: ALiCT's test count and pooled fail rate next to the baseline suite's test count."""
    if len(summary) and "capability" in summary:
        grouped = summary.groupby("capability")
        ours = pd.DataFrame({"alict_tests": grouped["n_cases"].sum()})
        if "n_fail" in summary:
            ours["alict_fail_rate"] = grouped["n_fail"].sum() / ours["alict_tests"].clip(lower=1)
    else:
        ours = pd.DataFrame(columns=["alict_tests", "alict_fail_rate"])
    theirs = baseline.groupby("capability").size().rename("baseline_tests").to_frame()
    if "failed" in baseline.columns:
        theirs["baseline_fail_rate"] = baseline.groupby("capability")["failed"].mean()
    table = ours.join(theirs, how="outer")
    table.index.name = "capability"
    return table.reset_index()


def checklist_json(result: Any, task: str) -> str:
    """The run's cases as a CheckList-style suite (JSON text)."""
    import json

    to_checklist = core_attr(SUITES, "to_checklist", SUITES_HINT)
    return json.dumps(to_checklist(list(result.case_list), task), indent=2, ensure_ascii=False, default=str)


HTML_RENDERERS = ("render_html", "html_report", "render_report")


def html_available() -> bool:
    from alict_app.core import has_core

    return any(has_core("alict_core.report", name) for name in HTML_RENDERERS)


def html_report(key: str, result: Any) -> str:
    """The standalone HTML report of a run."""
    from alict_app.core import has_core

    name = next((n for n in HTML_RENDERERS if has_core("alict_core.report", n)), HTML_RENDERERS[0])
    render = core_attr("alict_core.report", name, REPORT_HINT)
    return render(result, title=f"ALiCT Studio report {key}")
