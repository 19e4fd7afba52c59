"""CheckList-style suite JSON: ``{test_name: {type, capability, description, data, labels}}`` (also .gz)."""

from __future__ import annotations

import gzip
import json
import logging
import unicodedata
from pathlib import Path
from typing import Any, Sequence

from pydantic import ValidationError

from alict_core.cases.testcases import TestCase, check_type_matches
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import atomic_path
from alict_core.common.schemaerrors import first_problem
from alict_core.common.textsafe import control_char, printable
from alict_core.common.userfiles import strict_json_loads
from alict_core.data.records import TASK_LABELS
from alict_core.suites.schema import CheckListTest, Skipped, SuiteFormatError, SuiteImport

log = logging.getLogger("alict_core")
CHECKLIST_INV_THRESHOLD = 0.1  # CheckList's ``INV(..., threshold=0.1)`` default


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
        opened = gzip.open(tmp, "wt", encoding="utf-8") if path.suffix == ".gz" else open(tmp, "w", encoding="utf-8")
        with opened as handle:
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


def import_checklist(path: Path | str, task: str, source: str | None = None,
                     inv_threshold: float = CHECKLIST_INV_THRESHOLD) -> list[TestCase]:
    """The cases of a CheckList-style suite (see :func:`read_checklist`); skipped tests are logged."""
    return read_checklist(path, task, source, inv_threshold).cases


def check_inv_threshold(value: object) -> float:
    """An INV confidence threshold: a number from 0 to 1 (SuiteFormatError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise SuiteFormatError(f"the INV threshold must be a number from 0 to 1, got {value!r}")
    return float(value)


def read_checklist(path: Path | str, task: str, source: str | None = None,
                   inv_threshold: float = CHECKLIST_INV_THRESHOLD) -> SuiteImport:
    """Read and validate a CheckList-style suite (JSON or JSON.gz); each test becomes LC ``<source>:<test>``.

    MFT needs ``labels`` (one label for all data, or exactly one per datum: an index, a name, or a list of
    allowed ones) or an ``expected`` entry per datum; INV data are lists ``[text, variant, ...]`` scored as
    CheckList scores ``INV(threshold=0.1)``: every variant must keep the original's predicted label, except that
    a variant whose probability of that label stays within ``inv_threshold`` (default 0.1, CheckList's) of the
    original's passes; DIR needs an ``expected`` entry per datum (as this project exports).
    Skipped, with the reason: DIR tests without expectations (Python code in CheckList) and INV items
    without variants. Everything else that does not fit is one SuiteFormatError naming file, test, field.
    """
    path = Path(path)
    inv_threshold = check_inv_threshold(inv_threshold)
    suite = _read_json(path)
    if not isinstance(suite, dict):
        raise SuiteFormatError(f"{path.name}: top level must be an object {{test_name: test}}, "
                               f"got {type(suite).__name__}")
    if not suite:
        raise SuiteFormatError(f"{path.name}: the suite has no tests")
    labels = TASK_LABELS[task]
    source = source or path.name.split(".")[0]
    if control_char(source):  # the prefix of every LC id of the suite, printed and stored: as a test name is
        raise SuiteFormatError(f"{printable(path.name)}: the suite's name holds a control character "
                               f"({control_char(source)}); rename the file")
    out = SuiteImport(source)
    seen_ids: set[str] = set()
    shown: dict[str, str] = {}  # a name as the CLI and pages show it (NFKC, spaces collapsed) -> the name in the file
    for test_name, raw in suite.items():
        where = f"{path.name}: test {test_name!r}"
        if not test_name.strip():
            raise SuiteFormatError(f"{where}: the test name is empty; every test needs a name (it becomes its LC)")
        looks = " ".join(unicodedata.normalize("NFKC", test_name).split())
        if looks in shown:  # "t1" and "t1 " would read as one LC with two sets of results
            raise SuiteFormatError(f"{where}: looks the same as test {shown[looks]!r} once shown; give each test a "
                                   "distinct name")
        shown[looks] = test_name
        if not isinstance(raw, dict):
            raise SuiteFormatError(f"{where}: must be an object with 'data', got {type(raw).__name__}")
        if control_char(test_name):  # the test name is the LC id the CLI prints: no terminal escapes in it
            raise SuiteFormatError(f"{where}: the test name contains the control character {control_char(test_name)} "
                                   "(names may not hold control or bidi characters)")
        try:
            test = CheckListTest.model_validate(raw)
        except ValidationError as exc:
            raise SuiteFormatError(f"{where}, {first_problem(exc)}") from None
        out.cases.extend(_test_cases(test, test_name, where, labels, task, source, out, seen_ids, inv_threshold))
    if not out.cases:
        raise SuiteFormatError(f"{path.name}: no test could be imported ("
                               + "; ".join(s.describe() for s in out.skipped) + ")")
    for skip in out.skipped:
        log.warning("%s: skipped %s", path.name, skip.describe())
    return out


def _read_json(path: Path) -> Any:
    from alict_core.common.limits import limits

    if not path.is_file():
        raise SuiteFormatError(f"suite file {path.name!r} not found")
    top = limits().suite_bytes
    if path.stat().st_size > top:
        raise SuiteFormatError(f"{path.name}: {path.stat().st_size:,} bytes, over the suite size limit "
                               f"(setting ALICT_LIMIT_SUITE_BYTES)")
    gz = " (gzip)" if path.suffix.lower() == ".gz" else ""
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as handle:
            data = handle.read(top + 1)  # bounded: a small gzip file can hold a thousand times its size
        if len(data) > top:
            raise SuiteFormatError(f"{path.name}: over {top:,} bytes once decompressed, over the suite size limit "
                                   "(setting ALICT_LIMIT_SUITE_BYTES)")
        return strict_json_loads(data.decode("utf-8"))  # a key twice, NaN, a lone surrogate, too deep: refused
    except UnicodeDecodeError as exc:
        raise SuiteFormatError(f"{path.name}: not UTF-8 text{gz} (byte {exc.start})") from None
    except RecursionError:
        raise SuiteFormatError(f"{path.name}: JSON nested too deeply to read{gz}") from None
    except (OSError, EOFError, ValueError) as exc:
        reason = "truncated or not gzip" if gz and not isinstance(exc, json.JSONDecodeError) else str(exc)
        raise SuiteFormatError(f"{path.name}: not valid JSON{gz}: {reason}") from None


def _test_cases(test: CheckListTest, test_name: str, where: str, labels: Sequence[str], task: str, source: str,
                out: SuiteImport, seen_ids: set[str], inv_threshold: float) -> list[TestCase]:
    from alict_core.cases.testcases import CaseError, check_expected

    n = len(test.data)
    for name, values in (("expected", test.expected), ("case_ids", test.case_ids)):
        if values is not None and len(values) != n:
            raise SuiteFormatError(f"{where}, field {name!r}: {len(values)} entries for {n} data items")
    if isinstance(test.labels, list) and len(test.labels) != n:
        raise SuiteFormatError(f"{where}, field 'labels': {len(test.labels)} labels for {n} data items "
                               "(give one label for all items, or exactly one per item)")
    if test.type == "DIR" and test.expected is None:
        out.skipped.append(Skipped(test_name, "DIR test whose expectation is Python code in CheckList", n))
        return []
    if test.type == "MFT" and test.expected is None and test.labels is None:
        raise SuiteFormatError(f"{where}, field 'labels': an MFT test needs labels (or 'expected')")
    lc = f"{source}:{test_name}"
    cases: list[TestCase] = []
    no_variants = 0
    variants: tuple[str, ...]
    for i, datum in enumerate(test.data):
        at = f"{where}, item {i}"
        if test.type == "MFT":
            if isinstance(datum, list):
                raise SuiteFormatError(f"{at}, field 'data': an MFT item must be one text, got a list")
            text, variants = datum, ()
        else:
            if not isinstance(datum, list):
                raise SuiteFormatError(f"{at}, field 'data': an {test.type} item must be a list [text, variant, ...]")
            if len(datum) < 2:
                no_variants += 1
                continue
            text, variants = datum[0], tuple(datum[1:])
        try:
            if test.expected is not None:
                expected = check_expected(test.expected[i], f"{at}, field 'expected'")
            elif test.type == "INV":
                expected = {"kind": "invariance", "labels": [], "tolerance": 0.0, "threshold": inv_threshold}
            else:
                value = test.labels[i] if isinstance(test.labels, list) else test.labels
                expected = _expected_from_label(value, labels, f"{at}, field 'labels'")
            _check_labels(expected, labels, f"{at}, field 'expected'")
            if test.expected is not None and test.type == "MFT" and test.labels is not None:
                _check_labels_agree(test.labels[i] if isinstance(test.labels, list) else test.labels,
                                    expected, labels, at)
            check_type_matches(test.type, expected, f"{at}, field 'expected'")  # an MFT test's per-item direction
        except CaseError as exc:  # or invariance expectation was judged as such, without variants: passed
            raise SuiteFormatError(str(exc)) from None
        case_id = test.case_ids[i] if test.case_ids else f"{lc}-{i}-{hash_json(datum, 8)}"
        if case_id in seen_ids:
            raise SuiteFormatError(f"{at}, field 'case_ids': duplicate case id {case_id!r}")
        seen_ids.add(case_id)
        cases.append(TestCase(case_id=case_id, lc_id=lc, kind="seed", seed_id=case_id, text=text,
                              expected=dict(expected), test_type=test.type, capability=test.capability or source,
                              task=task, variants=variants, description=test.description or "",
                              meta={"source": source}))
    if no_variants:
        out.skipped.append(Skipped(test_name, f"{test.type} item without variants (nothing to compare)", no_variants))
    return cases


def _check_labels(expected: dict, labels: Sequence[str], where: str) -> None:
    unknown = [name for name in expected.get("labels") or [] if name not in labels]
    if unknown:
        raise SuiteFormatError(f"{where}: label {unknown[0]!r} is not one of {tuple(labels)}")


def _check_labels_agree(value: Any, expected: dict, labels: Sequence[str], where: str) -> None:
    """A test giving both ``labels`` and ``expected`` (as this project exports) must say the same in both: a
    disagreement was settled silently by ``expected`` (the file was edited in one place)."""
    if value is None:  # an item whose expectation is no label (this project writes null there)
        return
    said = _expected_from_label(value, labels, f"{where}, field 'labels'")
    if said["kind"] != expected.get("kind") or sorted(said["labels"]) != sorted(expected.get("labels") or []):
        raise SuiteFormatError(f"{where}: field 'labels' says {'/'.join(said['labels'])} but field 'expected' says "
                               f"{expected.get('kind')} {'/'.join(map(str, expected.get('labels') or []))}; the two "
                               "must agree (or give one of them)")
