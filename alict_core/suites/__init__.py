"""Suite import / export: CheckList-style JSON (also .gz), HateCheck CSV, JSONL/CSV tables."""

import logging
import os
from pathlib import Path

from alict_core.suites.checklist import (
    CHECKLIST_INV_THRESHOLD,
    export_checklist,
    import_checklist,
    read_checklist,
    to_checklist,
)
from alict_core.suites.hatecheck import import_hatecheck, read_hatecheck
from alict_core.suites.schema import Skipped, SuiteFormatError, SuiteImport
from alict_core.suites.tables import (
    export_bundle,
    export_cases_csv,
    export_cases_jsonl,
    export_results,
    import_cases_jsonl,
    read_cases_jsonl,
)
from alict_core.tasks import HATE_SPEECH

EXPORT_TABLE_COLUMNS = ("case_id", "lc_id")  # the first columns of `report --export`'s cases.csv / results.csv
SUMMARY_TABLE_COLUMNS = ("lc_id", "capability", "test_type", "model")  # ... and of its summary.csv
RESULT_ROW_KEYS = frozenset({"case_id", "model", "predicted", "passed"})  # a row of its results.jsonl
SUMMARY_ROW_KEYS = frozenset({"lc_id", "model", "n_seeds", "n_cases", "fail_rate"})  # a row of its summary.jsonl


def _first_line(path: str | Path) -> str | None:
    """The file's first line as text (at most 64 KiB), or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.readline(65536).decode("utf-8-sig", errors="replace")
    except OSError:
        return None


def _is_export_file(path: str | Path, first: str) -> bool:
    """Whether ``first`` (the file's first line) is that of a file ``report --export`` writes that is no suite: its
    cases/results/summary tables, results/summary JSONL or its manifest.json."""
    import json

    columns = first.strip().split(",")
    if columns[:2] == list(EXPORT_TABLE_COLUMNS) or columns[:4] == list(SUMMARY_TABLE_COLUMNS):
        return True
    try:
        row = json.loads(first) if first.lstrip().startswith("{") else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep: left to the reader's own message
        row = None
    if isinstance(row, dict) and (RESULT_ROW_KEYS <= row.keys() or SUMMARY_ROW_KEYS <= row.keys()):
        return True
    if Path(path).name.lower() == "manifest.json":
        from alict_core.common.manifest import artefact_kind

        return artefact_kind(Path(path).parent) is not None  # this project's manifest of a run or export
    return False


def export_table_problem(path: str | Path) -> str | None:
    """Why a file is no suite when it is one of this project's own export files other than its suites (``cases.csv``,
    ``results.csv``, ``summary.csv``, ``results.jsonl``, ``summary.jsonl``, ``manifest.json`` of ``report --export``:
    files to read, which a run cannot take back; the CSV tables alone were said so, the others as a HateCheck or
    CheckList file with dozens of problems: pass 39), else None. Only the first line is read; an unreadable file is
    left to the reader that opens it."""
    first = _first_line(path)
    if first is None or not _is_export_file(path, first):
        return None
    what = "table" if Path(path).suffix.lower() == ".csv" else "file"
    return (f"{Path(path).name} is a {what} of this project's own export (`report --export`), not a suite; give "
            "the cases.jsonl written beside it, which holds the same cases in full")


def suite_kind(path: str | Path, task: str) -> str:
    """The suite format of ``path`` by its name (``hatecheck``, ``cases``, ``checklist``), or SuiteFormatError."""
    name = str(path).lower()
    problem = export_table_problem(path)
    if problem:  # was "HateCheck suites are for task hate_speech" / "HateCheck CSV lacks columns" / "(and 32 more
        raise SuiteFormatError(problem)  # problems)"
    if name.endswith(".csv"):
        if task != HATE_SPEECH.name:
            raise SuiteFormatError(f"{Path(path).name}: HateCheck suites are for task {HATE_SPEECH.name}, not {task}")
        return "hatecheck"
    if name.endswith(".jsonl"):
        return "cases"
    if name.endswith(".json") or name.endswith(".json.gz") or name.endswith(".gz"):
        return "checklist"
    raise SuiteFormatError(f"{Path(path).name}: unknown suite format; use .json / .json.gz (CheckList), "
                           ".csv (HateCheck) or .jsonl")


def check_suite_path(path: str | Path, task: str, what: str = "--suite") -> None:
    """A suite file's format (by name) and presence, checked before any work (a missing one was said only after
    every LC's seed search)."""
    suite_kind(path, task)
    if not os.path.lexists(path):
        raise SuiteFormatError(f"{what} {str(path)!r} not found")
    if not Path(path).is_file():
        raise SuiteFormatError(f"{what} {str(path)!r} is not a file")


def read_suite(path: str | Path, task: str, strict: bool = False,
               inv_threshold: float = CHECKLIST_INV_THRESHOLD) -> SuiteImport:
    """Import by file type (``.csv`` HateCheck, ``.jsonl`` this project's cases, ``.json``/``.json.gz``
    CheckList), validated; ``strict`` turns any skipped test into an error; ``inv_threshold``: CheckList INV
    tests' confidence threshold (default 0.1, as CheckList)."""
    kind = suite_kind(path, task)
    if kind == "hatecheck":
        imported = read_hatecheck(path)
    elif kind == "cases":
        imported = read_cases_jsonl(path)
        other = next((c for c in imported.cases if c.task not in (None, "", task)), None)
        if other is not None:  # run and stored as of that task in a run of this one
            raise SuiteFormatError(f"{Path(path).name}: case {other.case_id!r:.60} names task {other.task!r:.40}, "
                                   f"not {task}")
    else:
        imported = read_checklist(path, task, inv_threshold=inv_threshold)
    if strict and imported.skipped:
        raise SuiteFormatError(f"{Path(path).name}: --strict and {len(imported.skipped)} test(s) cannot be imported: "
                               + "; ".join(s.describe() for s in imported.skipped))
    return imported


def import_suite(path: str | Path, task: str) -> list:
    """The cases of a suite (see :func:`read_suite`); skipped tests are logged as warnings."""
    return read_suite(path, task).cases


__all__ = ["CHECKLIST_INV_THRESHOLD", "check_suite_path", "export_table_problem", "suite_kind",
           "Skipped", "SuiteFormatError", "SuiteImport", "export_bundle", "export_cases_csv", "export_cases_jsonl",
           "export_checklist", "export_results", "import_cases_jsonl", "import_checklist", "import_hatecheck",
           "import_suite", "read_cases_jsonl", "read_checklist", "read_hatecheck", "read_suite", "to_checklist"]

logging.getLogger("alict_core").addHandler(logging.NullHandler())
