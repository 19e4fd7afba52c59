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


def export_table_problem(path: str | Path) -> str | None:
    """Why a CSV file is no suite when it is one of this project's own export tables (``cases.csv``, ``results.csv``
    of ``report --export``: tables to read, which a run cannot take back), else None. Only the first line is read;
    an unreadable file is left to the reader that opens it."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096).decode("utf-8-sig", errors="replace")
    except OSError:
        return None
    if first.strip().split(",")[:2] != list(EXPORT_TABLE_COLUMNS):
        return None
    return (f"{Path(path).name} is a table of this project's own export (`report --export`), not a suite; give "
            "the cases.jsonl written beside it, which holds the same cases in full")


def suite_kind(path: str | Path, task: str) -> str:
    """The suite format of ``path`` by its name (``hatecheck``, ``cases``, ``checklist``), or SuiteFormatError."""
    name = str(path).lower()
    if name.endswith(".csv"):
        problem = export_table_problem(path)
        if problem:  # was "HateCheck suites are for task hate_speech" / "HateCheck CSV lacks columns"
            raise SuiteFormatError(problem)
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
