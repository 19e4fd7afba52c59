"""Suite import / export: CheckList-style JSON (also .gz), HateCheck CSV, JSONL/CSV tables."""

from pathlib import Path

from alict_core.suites.checklist import SuiteFormatError, export_checklist, import_checklist, to_checklist
from alict_core.suites.hatecheck import import_hatecheck
from alict_core.suites.tables import export_bundle, export_cases_csv, export_cases_jsonl, export_results, import_cases_jsonl


def import_suite(path: str | Path, task: str) -> list:
    """Import by file type: ``.csv`` HateCheck, ``.jsonl`` this project's cases, ``.json``/``.json.gz`` CheckList."""
    name = str(path).lower()
    if name.endswith(".csv"):
        return import_hatecheck(path)
    if name.endswith(".jsonl"):
        return import_cases_jsonl(path)
    if name.endswith(".json") or name.endswith(".json.gz") or name.endswith(".gz"):
        return import_checklist(path, task)
    raise SuiteFormatError(f"{path}: unknown suite format; use .json / .json.gz (CheckList), .csv (HateCheck) or .jsonl")


__all__ = ["SuiteFormatError", "export_bundle", "export_cases_csv", "export_cases_jsonl", "export_checklist", "export_results",
           "import_cases_jsonl", "import_checklist", "import_hatecheck", "import_suite", "to_checklist"]
