"""Adapters from the Report page to ``alict_core.suites`` (import/export) and ``alict_core.report`` (HTML)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from alict_app.formatting import as_rows
from alict_core.common.errors import AlictError, DataNotFoundError


def as_uploaded(message: str, stored: Path, name: str) -> str:
    """``message`` about an upload kept under its content hash, naming the file the user chose instead."""
    shown = f"upload {name[:100]!r}"
    return message.replace(str(stored), shown).replace(stored.name, shown)


def import_baseline(path: Path, task: str, upload_name: str | None = None) -> pd.DataFrame:
    """A baseline suite (CheckList JSON / HateCheck CSV) as a DataFrame with a ``capability`` column; errors
    about an upload (``upload_name``: the file the user chose) name that file, not its content-hash path."""
    from alict_core.suites import export_table_problem

    if upload_name is not None and export_table_problem(path):  # this page's own downloads given back (pass 39)
        raise AlictError(f"upload {upload_name!r} is a results or summary file of this project (a download of this "
                         "page, or of `report --export`), not a suite: to compare with this run's cases, upload the "
                         "page's ⬇ CheckList JSON download; else upload a CheckList JSON or HateCheck CSV suite")
    try:
        return _import_baseline(path, task)
    except AlictError as exc:
        if upload_name is None:
            raise
        raise AlictError(as_uploaded(str(exc), Path(path), upload_name)) from None


def _import_baseline(path: Path, task: str) -> pd.DataFrame:
    if not Path(path).exists():
        raise DataNotFoundError(f"baseline suite {path} not found")
    from alict_core.suites import read_suite

    imported = read_suite(path, task)
    frame = pd.DataFrame(as_rows(imported.cases))
    if "capability" not in frame.columns:
        frame["capability"] = frame.get("lc_id", "unknown")
    from alict_core.lcspec.capabilities import capability_group, capability_name

    lc_ids = frame["lc_id"] if "lc_id" in frame.columns else frame["capability"]
    # the groups the run's summary names its capabilities by, so both sides meet per capability
    frame["capability"] = [capability_group(capability_name(str(lc), str(cap)))
                           for lc, cap in zip(lc_ids, frame["capability"], strict=True)]
    frame.attrs["skipped"] = [s.describe() for s in imported.skipped]  # shown by the page, never silent
    return frame


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
    from alict_core.suites import to_checklist

    return json.dumps(to_checklist(list(result.case_list), task), indent=2, ensure_ascii=False, default=str)


def html_report(key: str, result: Any) -> str:
    """The standalone HTML report of a run."""
    from alict_core.report import render_report

    return render_report(result, title=f"ALiCT Studio report {key}")


def reader_report(reader: Any, key: str) -> str:
    """The HTML report of a large run, read at the click; a run removed or re-written since the page was drawn gives
    a page that says so (the download has no other way to speak)."""
    try:
        from alict_core.report import render_reader_report

        return render_reader_report(reader, title=f"ALiCT Studio report {key}")
    except (AlictError, OSError, ValueError):
        return ("<!doctype html><meta charset='utf-8'><title>ALiCT Studio report</title><p>The run "
                f"{html.escape(key)} was removed or re-written after the page was drawn: reload the Report page "
                "and download again.</p>")
