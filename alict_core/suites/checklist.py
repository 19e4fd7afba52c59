"""CheckList-style suite JSON: ``{test_name: {type, capability, description, data, labels}}`` (also .gz)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Sequence

from alict_core.data.records import TASK_LABELS
from alict_core.errors import AlictError
from alict_core.hashing import hash_json
from alict_core.jsonl import atomic_path
from alict_core.runner.cases import TestCase


class SuiteFormatError(AlictError):
    """An imported suite file is malformed (the message names file and test)."""


def _open_text(path: Path, mode: str = "rt"):
    return gzip.open(path, mode, encoding="utf-8") if path.suffix == ".gz" else open(path, mode, encoding="utf-8")


def _label_index(expected: dict, labels: Sequence[str]) -> int | list[int] | None:
    if expected["kind"] == "label" and len(expected["labels"]) == 1:
        return labels.index(expected["labels"][0])
    if expected["kind"] == "one_of":
        return [labels.index(v) for v in expected["labels"]]
    return None


def to_checklist(cases: Sequence[TestCase], task: str) -> dict[str, dict[str, Any]]:
    """Group cases into CheckList tests: one test per LC and test type (MFT with a shared label → int
    labels; mixed labels → a per-datum list; INV/DIR data are ``[text, *variants]``)."""
    labels = TASK_LABELS[task]
    tests: dict[str, dict[str, Any]] = {}
    for case in cases:
        entry = tests.setdefault(case.lc_id, {
            "type": case.test_type, "capability": case.capability, "description": case.description or case.lc_id,
            "data": [], "labels": [], "expected": [], "case_ids": [],
        })
        entry["data"].append(case.texts() if case.test_type in ("INV", "DIR") else case.text)
        entry["labels"].append(_label_index(case.expected, labels) if case.test_type == "MFT" else None)
        entry["expected"].append(case.expected)
        entry["case_ids"].append(case.case_id)
    for entry in tests.values():
        distinct = {json.dumps(v) for v in entry["labels"]}
        if entry["type"] != "MFT" or all(v is None for v in entry["labels"]):
            entry["labels"] = None
        elif len(distinct) == 1 and isinstance(entry["labels"][0], int):
            entry["labels"] = entry["labels"][0]
    return tests


def export_checklist(cases: Sequence[TestCase], task: str, path: Path | str) -> Path:
    """Write the suite as CheckList-style JSON (gzipped when the name ends in .gz), atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with (gzip.open(tmp, "wt", encoding="utf-8") if path.suffix == ".gz" else open(tmp, "w", encoding="utf-8")) as handle:
            json.dump(to_checklist(cases, task), handle, ensure_ascii=False, indent=1)
    return path


def _expected_from_label(value: Any, labels: Sequence[str], where: str) -> dict:
    def name(v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise SuiteFormatError(f"{where}: label {v!r} must be an index or a label name")
        if isinstance(v, int):
            if not 0 <= v < len(labels):
                raise SuiteFormatError(f"{where}: label index {v} out of range for labels {tuple(labels)}")
            return labels[v]
        if v not in labels:
            raise SuiteFormatError(f"{where}: label {v!r} is not one of {tuple(labels)}")
        return v

    if isinstance(value, list):
        return {"kind": "one_of", "labels": [name(v) for v in value], "tolerance": None}
    return {"kind": "label", "labels": [name(value)], "tolerance": None}


def import_checklist(path: Path | str, task: str, source: str | None = None) -> list[TestCase]:
    """Read a CheckList-style suite (JSON or JSON.gz) into test cases; each test becomes an LC
    ``<source>:<test name>``. MFT needs labels (int, list per datum, or list of allowed labels);
    INV data are lists ``[text, variant, ...]`` (tolerance 0, as in CheckList); DIR needs an
    ``expected`` entry per datum (as this project exports) and is otherwise skipped."""
    path = Path(path)
    if not path.is_file():
        raise SuiteFormatError(f"suite file {path} not found")
    try:
        with _open_text(path) as handle:
            suite = json.load(handle)
    except (OSError, ValueError) as exc:
        raise SuiteFormatError(f"{path}: not valid JSON{' (gzip)' if path.suffix == '.gz' else ''}: {exc}") from exc
    if not isinstance(suite, dict):
        raise SuiteFormatError(f"{path}: top level must be an object {{test_name: test}}")
    labels = TASK_LABELS[task]
    source = source or path.name.split(".")[0]
    cases: list[TestCase] = []
    for test_name, test in suite.items():
        where = f"{path}: test {test_name!r}"
        if not isinstance(test, dict) or "data" not in test:
            raise SuiteFormatError(f"{where}: needs 'data'")
        test_type = str(test.get("type", "MFT")).upper()
        if test_type not in ("MFT", "INV", "DIR"):
            raise SuiteFormatError(f"{where}: type must be MFT, INV or DIR, got {test.get('type')!r}")
        lc = f"{source}:{test_name}"
        data, raw_labels = list(test["data"]), test.get("labels")
        expected_list = test.get("expected")
        for i, datum in enumerate(data):
            at = f"{where}, datum {i}"
            if test_type == "MFT":
                if isinstance(datum, list):
                    raise SuiteFormatError(f"{at}: MFT data must be strings")
                if expected_list:
                    expected = expected_list[i]
                elif raw_labels is None:
                    raise SuiteFormatError(f"{where}: MFT test without labels")
                else:
                    # CheckList: one label for all data, or one label (or list of allowed labels) per datum
                    per_datum = isinstance(raw_labels, list) and len(raw_labels) == len(data)
                    expected = _expected_from_label(raw_labels[i] if per_datum else raw_labels, labels, at)
                texts, variants = str(datum), ()
            else:
                items = datum if isinstance(datum, list) else [datum]
                if len(items) < 2 and test_type == "INV":
                    continue  # nothing to compare
                texts, variants = str(items[0]), tuple(str(v) for v in items[1:])
                if test_type == "INV":
                    expected = (expected_list[i] if expected_list else {"kind": "invariance", "labels": [], "tolerance": 0.0})
                elif expected_list:
                    expected = expected_list[i]
                else:
                    continue  # DIR expectations are code in CheckList (not serialisable): skip
            case_id = (test.get("case_ids") or [None] * len(data))[i] or f"{lc}-{i}-{hash_json(datum, 8)}"
            cases.append(TestCase(case_id=str(case_id), lc_id=lc, kind="seed", seed_id=str(case_id), text=texts,
                                  expected=dict(expected), test_type=test_type,
                                  capability=str(test.get("capability") or source), task=task, variants=variants,
                                  description=str(test.get("description", "")), meta={"source": source}))
    return cases
