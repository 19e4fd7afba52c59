"""HateCheck CSV import (``functionality, case_id, test_case, label_gold, ...``), validated row by row."""

from __future__ import annotations

import csv
from pathlib import Path

from pydantic import ValidationError

from alict_core.cases.testcases import TestCase
from alict_core.common.schemaerrors import first_problem
from alict_core.common.userfiles import duplicate_columns
from alict_core.suites.schema import HateCheckRow, SuiteFormatError, SuiteImport
from alict_core.tasks import HATE_SPEECH

REQUIRED = ("functionality", "case_id", "test_case", "label_gold")
GOLD = {"hateful": "hateful", "non-hateful": "non-hateful", "non_hateful": "non-hateful", "nonhateful": "non-hateful",
        "not hateful": "non-hateful", "1": "hateful", "0": "non-hateful"}


def import_hatecheck(path: Path | str, source: str = "hatecheck") -> list[TestCase]:
    """The cases of a HateCheck CSV (see :func:`read_hatecheck`)."""
    return read_hatecheck(path, source).cases


def read_hatecheck(path: Path | str, source: str = "hatecheck") -> SuiteImport:
    """Each row becomes an MFT seed case of LC ``hatecheck:<functionality>`` expecting ``label_gold``.

    Errors name the file, the line and the column: missing columns, empty or over-long texts, NUL bytes,
    unknown gold labels, duplicate case ids, non-UTF-8 text.
    """
    from alict_core.common.limits import limits

    path = Path(path)
    if not path.is_file():
        raise SuiteFormatError(f"HateCheck file {path.name!r} not found")
    if path.stat().st_size > limits().suite_bytes:
        raise SuiteFormatError(f"{path.name}: over the suite size limit (setting ALICT_LIMIT_SUITE_BYTES)")
    out = SuiteImport(source)
    seen: set[str] = set()
    said: dict[str, tuple[str, int]] = {}  # a text -> its gold label and the line that first gave it
    line_no = 1
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:  # Excel's "CSV UTF-8" starts with a BOM
            reader = csv.DictReader(handle)
            header = [h.strip() for h in (reader.fieldnames or [])]
            twice = duplicate_columns(header)
            if twice:  # DictReader would keep only the last of the two values, silently
                raise SuiteFormatError(f"{path.name}:1: the header names the column {twice[0]!r} twice")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise SuiteFormatError(f"{path.name}: HateCheck CSV lacks columns {missing} (has {header[:12]})")
            for line_no, raw in enumerate(reader, 2):
                if None in raw:
                    raise SuiteFormatError(f"{path.name}:{line_no}: more fields than the header has")
                row = {(k or "").strip(): (v if v is not None else None) for k, v in raw.items()}
                case = _case(row, f"{path.name}:{line_no}", source, line_no, seen)
                text = " ".join(case.text.split())
                gold, first = said.setdefault(text, (case.expected["labels"][0], line_no))
                if gold != case.expected["labels"][0]:  # one text, both labels: half its cases failed any model
                    raise SuiteFormatError(f"{path.name}:{line_no}, column 'label_gold': the same test_case as line "
                                           f"{first} with the other gold label ({gold} there); one text has one "
                                           "label")
                out.cases.append(case)
    except UnicodeDecodeError as exc:
        raise SuiteFormatError(f"{path.name}: not UTF-8 text (near line {line_no + 1}, byte {exc.start})") from None
    except csv.Error as exc:
        raise SuiteFormatError(f"{path.name}:{line_no + 1}: malformed CSV ({exc})") from None
    if not out.cases:
        raise SuiteFormatError(f"{path.name}: no test cases")
    if len(out.cases) > limits().suite_cases:
        raise SuiteFormatError(f"{path.name}: {len(out.cases):,} cases, over the limit "
                               "(setting ALICT_LIMIT_SUITE_CASES)")
    return out


def _case(row: dict, where: str, source: str, line_no: int, seen: set[str]) -> TestCase:
    if any(v is None for k, v in row.items() if k in REQUIRED):
        raise SuiteFormatError(f"{where}: fewer fields than the header has")
    try:
        checked = HateCheckRow.model_validate({k: row[k].strip() if k != "test_case" else row[k] for k in REQUIRED})
    except ValidationError as exc:
        raise SuiteFormatError(f"{where}, {first_problem(exc).replace('field ', 'column ', 1)}") from None
    gold = GOLD.get(checked.label_gold.lower())
    if gold is None:
        raise SuiteFormatError(f"{where}, column 'label_gold': {checked.label_gold!r} is not hateful / non-hateful")
    case_id = f"{source}-{checked.case_id or line_no}"
    if case_id in seen:
        raise SuiteFormatError(f"{where}, column 'case_id': duplicate case id {checked.case_id!r}")
    seen.add(case_id)
    extra = {k: (row.get(k) or "").strip() for k in ("target_ident", "direction", "focus_words")}
    return TestCase(
        case_id=case_id, lc_id=f"{source}:{checked.functionality}", kind="seed", seed_id=case_id,
        text=checked.test_case.strip(), expected={"kind": "label", "labels": [gold], "tolerance": None},
        test_type="MFT", capability=checked.functionality, task=HATE_SPEECH.name,
        description=extra["target_ident"] and f"target: {extra['target_ident']}",
        meta={"source": source, **{k: v for k, v in extra.items() if v}},
    )
