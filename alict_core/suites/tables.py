"""Export a suite and its results as JSONL and CSV tables."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.csvsafe import write_csv
from alict_core.common.jsonl import write_jsonl
from alict_core.suites.schema import SuiteImport


def export_cases_jsonl(cases: Sequence[TestCase], path: Path | str) -> Path:
    write_jsonl(Path(path), (c.to_dict() for c in cases))
    return Path(path)


def import_cases_jsonl(path: Path | str) -> list[TestCase]:
    """The cases of a cases JSONL (see :func:`read_cases_jsonl`)."""
    return read_cases_jsonl(path).cases


def read_cases_jsonl(path: Path | str) -> SuiteImport:
    """Cases written by ``export_cases_jsonl``, each row validated (errors name file, line and field)."""

    from pydantic import ValidationError

    from alict_core.cases.testcases import CaseError, check_expected, check_testable, check_type_matches
    from alict_core.common.limits import limits
    from alict_core.common.schemaerrors import first_problem
    from alict_core.common.userfiles import strict_json_loads
    from alict_core.suites.schema import CaseRow, SuiteFormatError

    path = Path(path)
    if not path.is_file():
        raise SuiteFormatError(f"cases file {path.name!r} not found")
    if path.name == "cases.jsonl" and (path.parent / "trees.jsonl").is_file():  # an NLPLego folder's DIR tests
        from alict_core.common.manifest import check_lego_folder

        check_lego_folder(path.parent)
    if path.stat().st_size > limits().suite_bytes:
        raise SuiteFormatError(f"{path.name}: over the suite size limit (setting ALICT_LIMIT_SUITE_BYTES)")
    out = SuiteImport(path.name)
    seen: set[str] = set()
    line_no = 0
    try:
        with open(path, encoding="utf-8-sig") as handle:  # a byte-order mark before the first row is dropped
            for line_no, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                where = f"{path.name}:{line_no}"
                try:
                    row = CaseRow.model_validate(strict_json_loads(line))
                    expected = check_expected(row.expected, f"{where}, field 'expected'")
                except RecursionError:
                    raise SuiteFormatError(f"{where}, JSON nested too deeply to read") from None
                except ValueError as exc:
                    detail = first_problem(exc) if isinstance(exc, ValidationError) else f"not JSON ({exc})"
                    raise SuiteFormatError(f"{where}, {detail}") from None
                except CaseError as exc:
                    raise SuiteFormatError(str(exc)) from None
                if row.case_id in seen:
                    raise SuiteFormatError(f"{where}, field 'case_id': duplicate case id {row.case_id!r}")
                seen.add(row.case_id)
                data = row.model_dump()
                data["expected"] = expected
                case = TestCase.from_dict(data)
                try:  # an INV case without variants passed without testing anything; MFT judged as INV
                    check_type_matches(case.test_type, expected, where)
                    check_testable(case, where)
                except CaseError as exc:
                    raise SuiteFormatError(str(exc)) from None
                out.cases.append(case)
    except UnicodeDecodeError as exc:
        raise SuiteFormatError(f"{path.name}: not UTF-8 text (near line {line_no + 1}, byte {exc.start})") from None
    if not out.cases:
        raise SuiteFormatError(f"{path.name}: no test cases")
    _check_seed_links(out.cases, path.name)
    return out


def _check_seed_links(cases: Sequence[TestCase], name: str) -> None:
    """A seed is its own seed; an expansion of a seed in the file is of that seed's LC. An expansion paired with
    another LC's seed counted a pass-to-fail in an LC without seeds; two seeds under one seed id broke the review
    store."""
    from alict_core.suites.schema import SuiteFormatError

    seeds = {c.case_id: c.lc_id for c in cases if c.kind == "seed"}
    for case in cases:
        if case.kind == "seed" and case.seed_id != case.case_id:
            raise SuiteFormatError(f"{name}: seed {case.case_id!r:.60} names seed_id {case.seed_id!r:.60}; a seed's "
                                   "seed_id is its own case_id")
        found = seeds.get(case.seed_id) if case.kind == "expansion" else None
        if found is not None and found != case.lc_id:  # (an NLPLego case hangs on a tree node, not a seed case)
            raise SuiteFormatError(f"{name}: expansion {case.case_id!r:.60} of {case.lc_id!r:.40} hangs on seed "
                                   f"{case.seed_id!r:.60} of {found!r:.40}; an expansion is of its seed's LC")


def export_cases_csv(cases: Sequence[TestCase], path: Path | str) -> Path:
    import pandas as pd

    rows = [{"case_id": c.case_id, "lc_id": c.lc_id, "capability": c.capability, "test_type": c.test_type,
             "kind": c.kind, "seed_id": c.seed_id, "text": c.text,
             "expected": c.expected["kind"] + ":" + "|".join(c.expected["labels"]),
             "variants": " ||| ".join(c.variants)} for c in cases]
    return write_csv(path, pd.DataFrame(rows))


EXPORT_FILES = ("results.jsonl", "results.csv", "summary.csv", "summary.jsonl", "cases.jsonl", "cases.csv",
                "suite.json")


def export_bundle(result, directory: Path | str, task: str) -> dict[str, Path]:
    """Every export of a run (results, summary, cases, CheckList suite) into one folder, written whole.

    The folder is filled in a temporary sibling and swapped into place with a manifest, so a killed
    export leaves the previous export (or nothing), never a mix.
    """
    from alict_core.common.manifest import atomic_dir, write_manifest
    from alict_core.suites.checklist import export_checklist

    directory = Path(directory)
    with atomic_dir(directory, owned=EXPORT_FILES, kind="export") as tmp:  # never over a run or other artefact
        export_results(result, tmp)
        export_cases_jsonl(result.case_list, tmp / "cases.jsonl")
        export_cases_csv(result.case_list, tmp / "cases.csv")
        export_checklist(result.case_list, task, tmp / "suite.json")
        write_manifest(tmp, "export", result.run_id, len(result.case_list))
    return {name: directory / name for name in EXPORT_FILES}


def export_results(result, directory: Path | str) -> dict[str, Path]:
    """results.jsonl / results.csv (case × model) and summary.csv / summary.jsonl (LC × model)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    table = result.cases()
    flat = table.copy()
    for label in sorted({k for d in table.probabilities for k in d}):
        flat[f"p_{label}"] = table.probabilities.map(lambda d, _l=label: d.get(_l))
    flat = flat.drop(columns=["probabilities"])
    out = {"results.jsonl": directory / "results.jsonl", "results.csv": directory / "results.csv",
           "summary.csv": directory / "summary.csv", "summary.jsonl": directory / "summary.jsonl"}
    write_jsonl(out["results.jsonl"], json_records(table))
    write_csv(out["results.csv"], flat)
    summary = result.summary()
    write_csv(out["summary.csv"], summary)
    write_jsonl(out["summary.jsonl"], json_records(summary))
    return out


def json_records(frame) -> list[dict]:
    """A frame's rows as JSON-able records, a missing number as null (a bare NaN, e.g. the expansion fail rate of a
    run without expansions, is no JSON: strict parsers, JavaScript's included, refused the export)."""
    import math

    def plain(value):
        return None if isinstance(value, float) and not math.isfinite(value) else value

    return [{key: plain(value) for key, value in row.items()} for row in frame.to_dict(orient="records")]
