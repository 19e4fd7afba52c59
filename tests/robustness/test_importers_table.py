"""Importer robustness table: each malformed suite is one SuiteFormatError naming file, test and field."""

from __future__ import annotations

import gzip
import json

import pytest

from alict_core.suites import SuiteFormatError, read_suite

GOOD_MFT = {"type": "MFT", "capability": "Vocab", "data": ["a good film", "a bad film"], "labels": 2}

CHECKLIST_BAD = [  # (suite object, needles)
    ({"t": {**GOOD_MFT, "data": "a good film"}}, ["test 't'", "field 'data'", "valid list"]),
    ({"t": {**GOOD_MFT, "labels": [2, 0, 1]}}, ["test 't'", "field 'labels'", "3 labels for 2 data items"]),
    ({"t": {**GOOD_MFT, "labels": [2]}}, ["field 'labels'", "1 labels for 2 data items"]),
    ({"t": {**GOOD_MFT, "labels": 7}}, ["item 0", "label index 7 out of range"]),
    ({"t": {**GOOD_MFT, "labels": "great"}}, ["label 'great' is not one of"]),
    ({"t": {**GOOD_MFT, "labels": True}}, ["field 'labels'"]),
    ({"t": {**GOOD_MFT, "labels": None}}, ["an MFT test needs labels"]),
    ({"t": {**GOOD_MFT, "data": [1, 2]}}, ["field 'data"]),
    ({"t": {**GOOD_MFT, "data": [None, "x"]}}, ["field 'data"]),
    ({"t": {**GOOD_MFT, "data": ["", "x"]}}, ["empty text"]),
    ({"t": {**GOOD_MFT, "data": ["a\x00b", "x"]}}, ["NUL"]),
    ({"t": {**GOOD_MFT, "data": ["x" * 10_001, "x"]}}, ["10,001 characters"]),
    ({"t": {**GOOD_MFT, "data": []}}, ["has no items"]),
    ({"t": {**GOOD_MFT, "data": {"a": 1}}}, ["field 'data'"]),
    ({"t": {**GOOD_MFT, "data": [["a", "b"], "c"]}}, ["item 0", "an MFT item must be one text"]),
    ({"t": {**GOOD_MFT, "type": "XYZ"}}, ["field 'type'"]),
    ({"t": {**GOOD_MFT, "type": 3}}, ["field 'type'"]),
    ({"t": {**GOOD_MFT, "expected": [{"kind": "maybe", "labels": ["positive"]}] * 2}},
     ["expected.kind must be one of"]),
    ({"t": {**GOOD_MFT, "expected": [{"kind": "label", "labels": ["positive"]}]}},
     ["field 'expected'", "1 entries for 2"]),
    ({"t": {**GOOD_MFT, "expected": [{"kind": "label", "labels": ["joyful"]}] * 2}}, ["label 'joyful' is not one of"]),
    ({"t": {**GOOD_MFT, "case_ids": ["a", "a"]}}, ["duplicate case id 'a'"]),
    ({"t": {**GOOD_MFT, "case_ids": ["a"]}}, ["field 'case_ids'", "1 entries for 2"]),
    ({"t": {**GOOD_MFT, "case_ids": [1, 2]}}, ["field 'case_ids"]),
    ({"t": {**GOOD_MFT, "capability": ["x"]}}, ["field 'capability'"]),
    ({"t": {"type": "INV", "data": ["a text", "b text"]}}, ["an INV item must be a list"]),
    ({"t": {"type": "INV", "data": [["a", 3]]}}, ["field 'data"]),
    ({"t": {"type": "DIR", "data": [["a", "b"]], "expected": [{"kind": "direction", "labels": ["positive"],
                                                             "direction": "sideways"}]}}, ["direction must be"]),
    ({"t": "not a test"}, ["test 't'", "must be an object"]),
    ({"t": {"type": "MFT"}}, ["field 'data'", "is missing"]),
    ([GOOD_MFT], ["top level must be an object"]),
    ({}, ["the suite has no tests"]),
    (None, ["top level must be an object"]),
    (42, ["top level must be an object"]),
    ({"t": {"type": "DIR", "data": [["a", "b"]]}}, ["no test could be imported", "DIR test"]),
    ({"t": {"type": "INV", "data": [["only one"]]}}, ["no test could be imported", "without variants"]),
]


@pytest.mark.parametrize("suite,needles", CHECKLIST_BAD, ids=[f"checklist-{i}" for i in range(len(CHECKLIST_BAD))])
def test_checklist_bad(tmp_path, suite, needles):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    with pytest.raises(SuiteFormatError) as info:
        read_suite(path, "sentiment")
    message = str(info.value)
    assert "suite.json" in message and "\n" not in message and str(tmp_path) not in message
    for needle in needles:
        assert needle in message, (needle, message)


FILE_BAD = [  # (file name, bytes, needles)
    ("s.json", b"{not json", ["not valid JSON"]),
    ("s.json", b"", ["not valid JSON"]),
    ("s.json", b"\xff\xfe{\x00}\x00", ["not UTF-8"]),
    ("s.json.gz", gzip.compress(json.dumps({"t": GOOD_MFT}).encode())[:20], ["gzip"]),
    ("s.json.gz", b"plain text, not gzip", ["gzip"]),
    ("s.csv", b"functionality,case_id,test_case\nx,1,y\n", ["lacks columns ['label_gold']"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,y,maybe\n", ["s.csv:2", "'label_gold'", "'maybe'"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,,hateful\n", ["s.csv:2", "'test_case'", "empty text"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,a\x00b,hateful\n", ["s.csv:2", "NUL"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,y,hateful\nx,1,z,hateful\n", ["s.csv:3", "duplicate"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,y\n", ["s.csv:2", "fewer fields"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,y,hateful,extra\n", ["s.csv:2", "more fields"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\n,1,y,hateful\n", ["'functionality'", "is empty"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\nx,1,caf\xe9,hateful\n", ["not UTF-8"]),
    ("s.csv", b"functionality,case_id,test_case,label_gold\n", ["no test cases"]),
    ("s.csv", b"", ["lacks columns"]),
    # hostile pass 2: a column named twice (DictReader kept the last: 'non-hateful' read over 'hateful', exit 0)
    ("s.csv", b"functionality,case_id,test_case,label_gold,label_gold\nx,1,y,hateful,non-hateful\n",
     ["s.csv:1", "names the column 'label_gold' twice"]),
    ("s.jsonl", b'{"case_id": "a"}\n', ["s.jsonl:1", "is missing"]),
    ("s.jsonl", b"not json\n", ["s.jsonl:1", "not JSON"]),
    ("s.jsonl", b"[1, 2]\n", ["s.jsonl:1"]),
    ("s.jsonl", b"", ["no test cases"]),
    ("s.txt", b"anything", ["unknown suite format"]),
    ("s.json", b'{"t": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ["nested too deeply"]),
    ("s.json.gz", gzip.compress(b'{"t": ' + b"{\"a\": " * 50_000 + b"1" + b"}" * 50_001), ["nested too deeply"]),
    ("s.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", ["s.jsonl:1"]),
    # hostile pass 3: a key given twice in one JSON object (json.load kept the last, silently; exit 0)
    ("s.json", b'{"t": {"type": "MFT", "capability": "Vocab", "data": ["a good film"], "labels": 2, "labels": 0}}',
     ["not valid JSON", "duplicate key 'labels'"]),
    ("s.json", b'{"t": {"type": "MFT", "capability": "Vocab", "data": ["a good film"], "labels": 2}, "t": {}}',
     ["not valid JSON", "duplicate key 't'"]),
    ("s.jsonl", b'{"case_id": "c1", "lc_id": "LC1", "kind": "seed", "seed_id": "c1", "text": "a good film", '
     b'"text": "a bad film", "expected": {"kind": "label", "labels": ["positive"]}, "test_type": "MFT"}\n',
     ["s.jsonl:1", "duplicate key 'text'"]),
]


@pytest.mark.parametrize("name,data,needles", FILE_BAD, ids=[f"file-{i}-{n}" for i, (n, _, _) in enumerate(FILE_BAD)])
def test_file_bad(tmp_path, name, data, needles):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(SuiteFormatError) as info:
        read_suite(path, "hate_speech" if name.endswith(".csv") else "sentiment")
    message = str(info.value)
    assert "\n" not in message and str(tmp_path) not in message
    for needle in needles:
        assert needle in message, (needle, message)


def _case_row(**change):
    row = {"case_id": "c1", "lc_id": "LC1", "kind": "seed", "seed_id": "c1", "text": "a good film",
           "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}, "test_type": "MFT"}
    row.update(change)
    return row


JSONL_BAD = [
    (_case_row(text=5), ["field 'text'"]),
    (_case_row(text=""), ["empty text"]),
    (_case_row(test_type="XYZ"), ["field 'test_type'"]),
    (_case_row(kind="other"), ["field 'kind'"]),
    (_case_row(expected={"kind": "whatever"}), ["expected.kind must be one of"]),
    (_case_row(expected={"kind": "label", "labels": []}), ["needs at least one label"]),
    (_case_row(variants="abc"), ["field 'variants'"]),
    (_case_row(surprise=1), ["field 'surprise'", "not a known field"]),
]


@pytest.mark.parametrize("row,needles", JSONL_BAD, ids=[f"jsonl-{i}" for i in range(len(JSONL_BAD))])
def test_cases_jsonl_bad(tmp_path, row, needles):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(SuiteFormatError) as info:
        read_suite(path, "sentiment")
    for needle in ["cases.jsonl:1", *needles]:
        assert needle in str(info.value), (needle, str(info.value))


def test_duplicate_case_ids_in_jsonl(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(_case_row()) + "\n" + json.dumps(_case_row(text="another")) + "\n")
    with pytest.raises(SuiteFormatError, match="cases.jsonl:2, field 'case_id': duplicate"):
        read_suite(path, "sentiment")


def test_skipped_tests_are_listed_and_strict_refuses_them(tmp_path, cli):
    suite = {"mft": GOOD_MFT, "dir": {"type": "DIR", "data": [["a", "b"]]},
             "inv": {"type": "INV", "data": [["he is fine", "she is fine"], ["alone"]]}}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    imported = read_suite(path, "sentiment")
    assert len(imported.cases) == 3
    assert {(s.test, s.items) for s in imported.skipped} == {("dir", 1), ("inv", 1)}
    with pytest.raises(SuiteFormatError, match="--strict and 2 test"):
        read_suite(path, "sentiment", strict=True)
    from tests.robustness.conftest import assert_clean_error

    argv = ["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(path), "--quiet",
            "--out", str(tmp_path / "run")]
    outcome = cli(*argv)
    assert outcome.code == 0, outcome.err
    assert "skipped suite.json: dir: DIR test" in outcome.out and "without variants" in outcome.out
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert {s["test"] for s in meta["extra"]["skipped_tests"]} == {"dir", "inv"}
    assert_clean_error(cli(*argv, "--strict"), 2, "--strict")


def test_mft_labels_forms_are_read_as_checklist_does(tmp_path):
    suite = {"one": {**GOOD_MFT, "labels": 0}, "per": {**GOOD_MFT, "labels": [2, 0]},
             "names": {**GOOD_MFT, "labels": ["positive", [0, 1]]}}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    cases = {c.case_id.split("-")[0]: c for c in read_suite(path, "sentiment").cases}
    expected = [(c.lc_id, c.expected["kind"], tuple(c.expected["labels"])) for c in read_suite(path, "sentiment").cases]
    assert expected == [("suite:one", "label", ("negative",)), ("suite:one", "label", ("negative",)),
                        ("suite:per", "label", ("positive",)), ("suite:per", "label", ("negative",)),
                        ("suite:names", "label", ("positive",)), ("suite:names", "one_of", ("negative", "neutral"))]
    assert cases


def test_app_baseline_import_lists_skipped_tests(tmp_path):
    from alict_app import reporting

    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"mft": GOOD_MFT, "dir": {"type": "DIR", "data": [["a", "b"]]}}))
    frame = reporting.import_baseline(path, "sentiment")
    assert len(frame) == 2
    assert frame.attrs["skipped"] == ["dir: DIR test whose expectation is Python code in CheckList (1 item)"]


STATIC_BAD = [  # (file name, bytes, needles)
    ("p.jsonl", b"\xff\xfe", ["p.jsonl", "not UTF-8"]),
    ("p.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", ["p.jsonl:1", "nested too deeply"]),
    ("p.jsonl", b'{"text": "a", "negative": true, "neutral": 0, "positive": 0}\n', ["p.jsonl:1", "must be numbers"]),
    ("p.jsonl", b'{"text": "a", "negative": NaN, "neutral": 0, "positive": 0}\n', ["not valid JSON", "NaN"]),
    ("p.jsonl", b'{"text": "a", "negative": 1e999, "neutral": 0, "positive": 0}\n', ["finite"]),
    ("p.jsonl", b'{"text": "a", "negative": -1, "neutral": 0, "positive": 2}\n', ["finite and >= 0"]),
    ("p.jsonl", b'{"text": "a", "label": true}\n', ["label must be a label name or index"]),
    ("p.jsonl", b'{"text": "a", "label": ["positive"]}\n', ["label must be a label name or index"]),
    ("p.jsonl", b'{"text": 5, "label": "positive"}\n', ["p.jsonl:1", "text field 'text'"]),
    ("p.jsonl", b'{"label": "positive"}\n', ["text field 'text'"]),
    ("p.jsonl", b'["a", "positive"]\n', ["expected a JSON object"]),
    ("p.csv", b"text,label\na,positive\nb\n", ["p.csv:3", "fewer fields"]),
    ("p.csv", b"text,label\n" + b"x" * 140_000 + b",positive\n", ["p.csv:2", "131,072"]),
    ("p.csv", b"text,negative,neutral,positive\na,nan,0,1\n", ["finite"]),
    ("p.csv", b"text,negative,neutral,positive\na,x,0,1\n", ["must be numbers"]),
    ("p.csv", b"text,label\ncaf\xe9,positive\n", ["not UTF-8"]),
    # hostile pass 3: a text twice with another answer (the last kept, silently), digits int()/float() read but
    # nobody types as numbers (Arabic-Indic and full-width label indexes, full-width or '_' probabilities)
    ("p.jsonl", b'{"text": "a", "label": "negative"}\n{"text": "b", "label": "positive"}\n'
                b'{"text": "a", "label": "positive"}\n', ["p.jsonl:3", "'a'", "p.jsonl:1", "another prediction"]),
    ("p.csv", b"text,label\na,negative\na,0\na,positive\n", ["p.csv:4", "p.csv:2", "another prediction"]),
    ("p.jsonl", '{"text": "a", "label": "\u0662"}\n'.encode(), ["p.jsonl:1", "is not one of"]),
    ("p.jsonl", '{"text": "a", "label": "\uff12"}\n'.encode(), ["p.jsonl:1", "is not one of"]),
    ("p.csv", "text,negative,neutral,positive\na,\uff10.\uff11,0,0.9\n".encode(), ["p.csv:2", "must be numbers"]),
    ("p.csv", b"text,negative,neutral,positive\na,0_1,0,0.9\n", ["p.csv:2", "must be numbers"]),
]


@pytest.mark.parametrize("name,data,needles", STATIC_BAD, ids=[f"static-{i}-{n}" for i, (n, _, _) in
                                                                enumerate(STATIC_BAD)])
def test_static_predictions_bad(tmp_path, name, data, needles):
    from alict_core.common.errors import ModelError
    from alict_core.models.static import StaticPredictionsModel

    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        StaticPredictionsModel(path, "sentiment")
    message = str(info.value)
    assert "\n" not in message and str(tmp_path) not in message, message
    for needle in needles:
        assert needle in message, (needle, message)


def test_static_predictions_over_the_size_limit(tmp_path, monkeypatch):
    from alict_core.common.errors import ModelError
    from alict_core.models.static import StaticPredictionsModel

    monkeypatch.setenv("ALICT_LIMIT_SUITE_BYTES", "10")
    path = tmp_path / "p.csv"
    path.write_text("text,label\na good film,positive\n")
    with pytest.raises(ModelError, match="ALICT_LIMIT_SUITE_BYTES"):
        StaticPredictionsModel(path, "sentiment")


@pytest.mark.parametrize("padding", [2_000, 50_000], ids=["over-the-limit", "far-over"])
def test_gzip_suite_is_held_to_the_size_limit_once_decompressed(tmp_path, monkeypatch, padding):
    """Hostile pass 3: the size limit was checked on the compressed file only; a 29 KB `.json.gz` holding 30 MB
    (any ratio up to ~1000:1: a 100 MB file could hold 100 GB) was read whole into memory and imported, exit 0."""
    monkeypatch.setenv("ALICT_LIMIT_SUITE_BYTES", "1000")
    body = json.dumps({"t": GOOD_MFT})[:-1] + " " * padding + "}"
    path = tmp_path / "s.json.gz"
    path.write_bytes(gzip.compress(body.encode()))
    assert path.stat().st_size < 1000
    with pytest.raises(SuiteFormatError) as info:
        read_suite(path, "sentiment")
    assert "once decompressed" in str(info.value) and "ALICT_LIMIT_SUITE_BYTES" in str(info.value)


def test_gzip_suite_within_the_limit_still_reads(tmp_path):
    path = tmp_path / "s.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"t": GOOD_MFT}).encode()))
    assert len(read_suite(path, "sentiment").cases) == 2
