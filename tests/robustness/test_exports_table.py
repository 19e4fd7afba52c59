"""Exports table: every CSV the project writes or offers for download is safe to open in a spreadsheet.

Hostile case texts, model names and capabilities (OWASP "CSV injection": ``=``, ``+``, ``-``, ``@``, tab, CR)
go through a run export, the run's own summary.csv, the review export and the harden export; no cell of any
CSV may start with a formula prefix, and reading back (review import, ``csvsafe.read_csv``) gives the texts.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from alict_core.common.csvsafe import FORMULA_PREFIXES, csv_text, neutralise, read_csv, restore, write_csv
from alict_core.runner import build_cases, run_suite
from tests.robustness.support import KeywordModel

HOSTILE = ["=cmd|' /C calc'!A0", "+SUM(1,2)", "-2+3 good", "@SUM(A1:A2)", "\t=1+1 bad", "\r=1+1",
           "=HYPERLINK(\"http://evil.example\",\"click\")", "'=already quoted", "'plain quote", "-", "=",
           "a normal good film", "multi\nline =text", "ok, with comma and \"quotes\""]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def assert_spreadsheet_safe(text: str) -> None:
    """No cell starts with a formula prefix, except a plain number (``-0.5`` is a number, not a formula)."""
    for cell in _cells(text):
        assert not cell.startswith(FORMULA_PREFIXES) or _number(cell.strip()) and not cell[0].isspace(), repr(cell)


@pytest.mark.parametrize("text", HOSTILE)
def test_neutralise_is_undone_by_restore(text):
    assert restore(neutralise(text)) == text
    assert not str(neutralise(text)).startswith(FORMULA_PREFIXES)


@pytest.mark.parametrize("value", [-1, -0.5, 0, 3.25, True, None])
def test_numbers_are_never_changed(value):
    assert neutralise(value) is value


def test_csv_text_and_read_csv_round_trip(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"text": HOSTILE, "n": range(-3, len(HOSTILE) - 3), "p": [-0.25] * len(HOSTILE)})
    text = csv_text(frame)
    assert_spreadsheet_safe(text)
    assert ",-3,-0.25" in text, "numbers stay numbers"
    back = read_csv(write_csv(tmp_path / "t.csv", frame))
    assert back["text"].tolist() == HOSTILE and back["n"].tolist() == frame["n"].tolist()


def _hostile_run(tmp_path, model_name: str = "=evil()"):
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc01", "text": text, "test_type": "MFT", "capability": "@cap",
              "expected": {"kind": "label", "labels": ["positive"]}} for i, text in enumerate(HOSTILE)]
    return run_suite(build_cases(seeds), [KeywordModel(model_name)], cache_root=tmp_path / "p")


def test_run_export_and_run_summary_are_spreadsheet_safe(tmp_path):
    from alict_core.suites import export_bundle

    result = _hostile_run(tmp_path)
    folder = export_bundle(result, tmp_path / "export", "sentiment")["cases.csv"].parent
    written = sorted(p.name for p in folder.glob("*.csv"))
    assert written == ["cases.csv", "results.csv", "summary.csv"]
    for name in written:
        assert_spreadsheet_safe((folder / name).read_text(encoding="utf-8"))
    assert sorted(read_csv(folder / "cases.csv")["text"]) == sorted(HOSTILE)
    assert read_csv(folder / "summary.csv")["model"].tolist() == ["=evil()"]
    run_dir = result.save(tmp_path / "run")
    assert_spreadsheet_safe((run_dir / "summary.csv").read_text(encoding="utf-8"))
    from alict_core.runner.reader import RunReader

    assert RunReader.open(run_dir).summary()["capability"].tolist() == ["@cap"], "read back as written"


def test_review_export_is_spreadsheet_safe_and_imports_back(tmp_path, monkeypatch):
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.interchange import export_task, import_judgements
    from alict_core.review.store import dispose_engines

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    store = ReviewStore()
    try:
        cases = _hostile_run(tmp_path).case_list
        create_review_task(store, "=t", "sentiment", cases, SamplingPlan(size=len(cases), n_sets=1, k=1), [])
        form = tmp_path / "form.csv"
        export_task(store, "=t", form)
        text = form.read_bytes().decode("utf-8")
        assert_spreadsheet_safe(text)
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        assert sorted(restore(r["text"]) for r in rows) == sorted(HOSTILE)
        for row in rows:
            row.update(reviewer="'@ann", relevance="5", label_score="4")
        with form.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        assert import_judgements(store, form) == len(HOSTILE)
        assert {j["reviewer"] for j in store.judgements()} == {"@ann"}
    finally:
        dispose_engines()


def test_harden_export_is_spreadsheet_safe(tmp_path):
    from alict_core.harden.export import export_hardening_data, read_split

    run_dir = _hostile_run(tmp_path, "kw").save(tmp_path / "run")
    export_hardening_data(run_dir, tmp_path / "hx", lcs=["sentiment-lc01"], formats=("jsonl", "csv"))
    texts = []
    for split in ("train", "validation", "test"):
        text = (tmp_path / "hx" / f"{split}.csv").read_text(encoding="utf-8")
        assert_spreadsheet_safe(text)
        texts += read_csv(tmp_path / "hx" / f"{split}.csv")["text"].tolist() if text.count("\n") > 1 else []
        assert all(r["text"] in HOSTILE for r in read_split(tmp_path / "hx", split)), "JSONL keeps raw texts"
    assert sorted(texts) == sorted(HOSTILE)


def test_every_csv_writer_goes_through_csvsafe():
    """No module writes CSV but through alict_core.common.csvsafe (pandas to_csv / csv.writer / DictWriter)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    allowed = {"alict_core/common/csvsafe.py", "alict_core/data/download.py"}  # download.py: a data file, no export
    offenders = []
    for path in [*root.glob("alict_core/**/*.py"), *root.glob("alict_app/*.py"), *root.glob("pages/*.py"),
                 root / "app.py"]:
        rel = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        if rel not in allowed and any(s in source for s in (".to_csv(", "csv.writer(", "DictWriter(")):
            offenders.append(rel)
    assert offenders == []


def test_download_buttons_use_csv_text():
    import alict_app.widgets as widgets

    source = open(widgets.__file__, encoding="utf-8").read()
    assert "csv_text(frame)" in source
    assert json.loads(json.dumps(csv_text([{"a": "=1"}]))) == "a\r\n'=1\r\n"
