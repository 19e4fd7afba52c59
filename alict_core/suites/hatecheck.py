"""HateCheck CSV import (``functionality, case_id, test_case, label_gold, ...``)."""

from __future__ import annotations

import csv
from pathlib import Path

from alict_core.runner.cases import TestCase
from alict_core.suites.checklist import SuiteFormatError

REQUIRED = ("functionality", "case_id", "test_case", "label_gold")
GOLD = {"hateful": "hateful", "non-hateful": "non-hateful", "non_hateful": "non-hateful", "nonhateful": "non-hateful",
        "not hateful": "non-hateful", "1": "hateful", "0": "non-hateful"}


def import_hatecheck(path: Path | str, source: str = "hatecheck") -> list[TestCase]:
    """Each row becomes an MFT seed case of LC ``hatecheck:<functionality>`` expecting ``label_gold``."""
    path = Path(path)
    if not path.is_file():
        raise SuiteFormatError(f"HateCheck file {path} not found")
    cases: list[TestCase] = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise SuiteFormatError(f"{path}: HateCheck CSV lacks columns {missing} (has {header})")
        for line_no, row in enumerate(reader, 2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            gold = GOLD.get(row["label_gold"].lower())
            if gold is None:
                raise SuiteFormatError(f"{path}:{line_no}: label_gold {row['label_gold']!r} is not hateful / non-hateful")
            if not row["test_case"]:
                raise SuiteFormatError(f"{path}:{line_no}: empty test_case")
            case_id = f"{source}-{row['case_id'] or line_no}"
            lc = f"{source}:{row['functionality']}"
            cases.append(TestCase(
                case_id=case_id, lc_id=lc, kind="seed", seed_id=case_id, text=row["test_case"],
                expected={"kind": "label", "labels": [gold], "tolerance": None}, test_type="MFT",
                capability=row.get("functionality", source), task="hate_speech",
                description=row.get("target_ident", "") and f"target: {row['target_ident']}",
                meta={"source": source, **{k: row[k] for k in ("target_ident", "direction", "focus_words") if row.get(k)}},
            ))
    if not cases:
        raise SuiteFormatError(f"{path}: no test cases")
    return cases
