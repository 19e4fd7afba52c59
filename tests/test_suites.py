"""Suite import/export: CheckList-style JSON (plain and gzipped), HateCheck CSV, JSONL/CSV tables."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from alict_core.runner import build_cases, run_suite
from alict_core.suites import (
    SuiteFormatError,
    export_cases_csv,
    export_cases_jsonl,
    export_checklist,
    export_results,
    import_checklist,
    import_hatecheck,
    import_suite,
    to_checklist,
)

SUITE = {
    "negation": {"type": "MFT", "capability": "Negation", "description": "negated positive",
                 "data": ["not good", "never great"], "labels": 0},
    "mixed": {"type": "mft", "capability": "Vocabulary", "description": "", "data": ["good", "bad", "ok"],
              "labels": [2, 0, [1, 2]]},
    "names": {"type": "INV", "capability": "Fairness", "description": "swap names",
              "data": [["John is good", "Mary is good"], ["He is bad", "She is bad", "They are bad"], ["alone"]],
              "labels": None},
    "dir_code": {"type": "DIR", "capability": "Robustness", "description": "", "data": [["a", "b"]], "labels": None},
}

HATECHECK = (
    ",functionality,case_id,test_case,label_gold,target_ident,direction,focus_words\n"
    "0,derog_neg_emote_h,1,I hate women.,hateful,women,general,hate\n"
    "1,derog_neg_emote_h,2,I really can't stand trans people.,hateful,trans people,general,\n"
    "2,counter_quote_nh,3,\"Statements like \"\"women are scum\"\" are deeply hurtful.\",non-hateful,women,general,\n"
)


class FixedModel:
    name, labels, fingerprint = "fixed", ("non-hateful", "hateful"), "fixed-hate-test"

    def predict_proba(self, texts):
        return np.array([[0.2, 0.8] if "hate" in t else [0.9, 0.1] for t in texts])


@pytest.mark.parametrize("gz", [False, True])
def test_import_checklist_json(tmp_path, gz):
    path = tmp_path / ("suite.json.gz" if gz else "suite.json")
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            json.dump(SUITE, handle)
    else:
        path.write_text(json.dumps(SUITE))
    cases = import_suite(path, "sentiment")
    by_lc = {}
    for c in cases:
        by_lc.setdefault(c.lc_id, []).append(c)
    assert sorted(by_lc) == ["suite:mixed", "suite:names", "suite:negation"]  # DIR without expectations skipped
    negation = {"kind": "label", "labels": ["negative"], "tolerance": None}
    assert [c.expected for c in by_lc["suite:negation"]] == [negation] * 2
    assert [c.expected["labels"] for c in by_lc["suite:mixed"]] == [["positive"], ["negative"], ["neutral", "positive"]]
    assert by_lc["suite:mixed"][2].expected["kind"] == "one_of"
    names = by_lc["suite:names"]
    assert len(names) == 2 and names[1].variants == ("She is bad", "They are bad")  # the 1-element datum is dropped
    # CheckList's INV(threshold=0.1): every variant must pass, a flip within 0.1 confidence passes
    assert names[0].expected == {"kind": "invariance", "labels": [], "tolerance": 0.0, "threshold": 0.1}
    assert by_lc["suite:negation"][0].capability == "Negation"


def test_checklist_errors_name_file_and_test(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"t1": {"type": "MFT", "data": ["x"], "labels": 7}}))
    with pytest.raises(SuiteFormatError, match=r"bad.json: test 't1', item 0, field 'labels': label index 7"):
        import_checklist(bad, "sentiment")
    bad.write_text("{not json")
    with pytest.raises(SuiteFormatError, match="not valid JSON"):
        import_checklist(bad, "sentiment")
    with pytest.raises(SuiteFormatError, match="not found"):
        import_checklist(tmp_path / "nope.json", "sentiment")


def test_export_checklist_roundtrip(tmp_path):
    seeds = [
        {"id": "a1", "lc_id": "LC_A", "text": "good", "test_type": "MFT", "capability": "Vocab",
         "expected": {"kind": "label", "labels": ["positive"]}},
        {"id": "a2", "lc_id": "LC_A", "text": "great", "test_type": "MFT", "capability": "Vocab",
         "expected": {"kind": "label", "labels": ["positive"]}},
        {"id": "b1", "lc_id": "LC_B", "text": "he is nice", "test_type": "INV", "capability": "Fairness",
         "expected": {"kind": "invariance", "labels": [], "tolerance": 0.1}, "variants": ["she is nice"]},
        {"id": "c1", "lc_id": "LC_C", "text": "not bad", "test_type": "MFT",
         "expected": {"kind": "not_label", "labels": ["negative"]}},
    ]
    cases = build_cases(seeds)
    suite = to_checklist(cases, "sentiment")
    a = suite["LC_A"]
    assert (a["type"], a["capability"], a["data"], a["labels"]) == ("MFT", "Vocab", ["good", "great"], 2)
    assert suite["LC_B"]["data"] == [["he is nice", "she is nice"]] and suite["LC_B"]["labels"] is None
    assert suite["LC_C"]["labels"] is None  # not_label has no CheckList label; kept in "expected"
    path = export_checklist(cases, "sentiment", tmp_path / "out.json.gz")
    back = import_checklist(path, "sentiment", source="x")
    assert [(c.text, c.variants, c.expected["kind"], c.expected["labels"]) for c in back] == \
        [(c.text, c.variants, c.expected["kind"], c.expected["labels"]) for c in cases]


def test_import_hatecheck_and_run(tmp_path):
    path = tmp_path / "hatecheck.csv"
    path.write_text(HATECHECK)
    cases = import_hatecheck(path)
    assert [c.lc_id for c in cases] == ["hatecheck:derog_neg_emote_h"] * 2 + ["hatecheck:counter_quote_nh"]
    assert cases[2].text == 'Statements like "women are scum" are deeply hurtful.'
    assert cases[2].expected["labels"] == ["non-hateful"] and cases[0].meta["target_ident"] == "women"
    result = run_suite(cases, [FixedModel()], cache_root=tmp_path / "cache")
    summary = result.summary().set_index("lc_id")
    assert summary.loc["hatecheck:derog_neg_emote_h", "n_fail_seeds"] == 1  # "can't stand" has no 'hate'
    assert summary.loc["hatecheck:counter_quote_nh", "n_fail_seeds"] == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("functionality,case_id,test_case\nx,1,y\n")
    with pytest.raises(SuiteFormatError, match="lacks columns \\['label_gold'\\]"):
        import_hatecheck(bad)
    bad.write_text("functionality,case_id,test_case,label_gold\nx,1,y,maybe\n")
    with pytest.raises(SuiteFormatError, match="bad.csv:2, column 'label_gold': 'maybe'"):
        import_hatecheck(bad)


def test_export_tables(tmp_path):
    path = tmp_path / "hatecheck.csv"
    path.write_text(HATECHECK)
    cases = import_hatecheck(path)
    export_cases_jsonl(cases, tmp_path / "cases.jsonl")
    assert [c.text for c in import_suite(tmp_path / "cases.jsonl", "hate_speech")] == [c.text for c in cases]
    export_cases_csv(cases, tmp_path / "cases.csv")
    assert list(pd.read_csv(tmp_path / "cases.csv").text) == [c.text for c in cases]
    result = run_suite(cases, [FixedModel()], cache_root=tmp_path / "cache")
    files = export_results(result, tmp_path / "export")
    table = pd.read_csv(files["results.csv"])
    assert list(table.p_hateful) == pytest.approx([0.8, 0.1, 0.1])
    assert len(pd.read_csv(files["summary.csv"])) == 2


class ProbabilityModel:
    """Sentiment probabilities looked up by text (neutral otherwise)."""

    name, labels, fingerprint = "table", ("negative", "neutral", "positive"), "table-inv-test"
    TABLE = {"John is good": [0.1, 0.35, 0.55], "Mary is good": [0.1, 0.46, 0.44],  # flips, 0.11 less positive
             "He is fine": [0.1, 0.42, 0.48], "She is fine": [0.1, 0.47, 0.43]}  # flips, 0.05 less positive

    def predict_proba(self, texts):
        return np.array([self.TABLE.get(t, [0.2, 0.6, 0.2]) for t in texts])


def checklist_inv_passes(orig, variant, threshold):
    """CheckList's ``Expect.inv(threshold)`` on softmax confidences (checklist/expect.py), for one variant."""
    orig_pred, pred = int(np.argmax(orig)), int(np.argmax(variant))
    if pred == orig_pred:
        return True
    if threshold == 0:
        return False
    return abs(variant[orig_pred] - orig[orig_pred]) <= threshold


@pytest.mark.parametrize("threshold", [0.0, 0.1, 0.2])
def test_checklist_inv_is_scored_as_checklist_scores_it(tmp_path, threshold):
    path = tmp_path / "inv.json"
    path.write_text(json.dumps({"names": {"type": "INV", "capability": "Fairness",
                                          "data": [["John is good", "Mary is good"], ["He is fine", "She is fine"]]}}))
    kwargs = {} if threshold == 0.1 else {"inv_threshold": threshold}  # 0.1 is the default
    cases = import_checklist(path, "sentiment", **kwargs)
    result = run_suite(cases, [ProbabilityModel()], cache_root=tmp_path / "cache")
    table = ProbabilityModel.TABLE
    expected = [checklist_inv_passes(np.array(table[c.text]), np.array(table[c.variants[0]]), threshold)
                for c in cases]
    assert list(result.outcomes[0].passed) == expected
    assert expected == {0.0: [False, False], 0.1: [False, True], 0.2: [True, True]}[threshold]
    with pytest.raises(SuiteFormatError, match="INV threshold must be a number from 0 to 1"):
        import_checklist(path, "sentiment", inv_threshold=1.5)


def test_subsample_suite_is_seeded_random_and_stratified_by_label():
    from alict_core.suites.subsample import subsample_suite

    seeds = [{"id": f"t{i}", "lc_id": "suite:t", "text": f"text {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["negative" if i < 300 else "positive"]}}
             for i in range(400)]  # template order: the first 300 all carry one label
    cases = build_cases(seeds)
    picked = subsample_suite(cases, 40, seed=1)
    labels = [c.expected["labels"][0] for c in picked]
    assert len(picked) == 40 and labels.count("negative") == 30 and labels.count("positive") == 10
    assert [c.case_id for c in picked] != [c.case_id for c in cases[:40]]  # not the first N
    assert [c.case_id for c in subsample_suite(cases, 40, seed=1)] == [c.case_id for c in picked]  # seeded
    assert [c.case_id for c in subsample_suite(cases, 40, seed=2)] != [c.case_id for c in picked]
    few = subsample_suite(build_cases(seeds[295:]), 4, seed=0)  # 5 negative, 100 positive: each label kept
    assert {c.expected["labels"][0] for c in few} == {"negative", "positive"}
    assert len(subsample_suite(cases, 1000)) == 400


def test_run_suite_max_seeds_and_skipped_tests_in_every_report(tmp_path, monkeypatch, capsys):
    from alict_core.cli import main
    from alict_core.report.summary import SUMMARY_SCHEMA

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    suite = {"ordered": {"type": "MFT", "capability": "Vocabulary",
                         "data": [f"a good film {i}" for i in range(30)] + [f"a bad film {i}" for i in range(10)],
                         "labels": [2] * 30 + [0] * 10},
             **{k: SUITE[k] for k in ("names", "dir_code")}}
    path = tmp_path / "cl.json"
    path.write_text(json.dumps(suite))
    out, report, summary = tmp_path / "run", tmp_path / "report.html", tmp_path / "summary.json"
    assert main(["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(path), "--quiet",
                 "--max-seeds", "8", "--sample-seed", "3", "--out", str(out), "--report", str(report),
                 "--summary-json", str(summary), "--junit", str(tmp_path / "junit.xml")]) == 0
    assert "skipped cl.json: dir_code" in capsys.readouterr().out
    rows = [json.loads(line) for part in sorted((out / "cases").glob("part-*.jsonl"))
            for line in part.read_text().splitlines()]
    ordered = [r for r in rows if r["lc_id"] == "cl:ordered"]
    assert len(ordered) == 8 and sum(r["expected"]["labels"] == ["negative"] for r in ordered) == 2  # 30:10 → 6:2
    document = json.loads(summary.read_text())
    import jsonschema

    jsonschema.validate(document, SUMMARY_SCHEMA)
    assert sorted(s["test"] for s in document["skipped_tests"]) == ["dir_code", "names"]
    assert document["suite_import"]["inv_threshold"] == 0.1 and document["suite_import"]["max_items_per_test"] == 8
    page = report.read_text()
    assert "Imported suites" in page and "dir_code" in page and "DIR test whose expectation is Python code" in page
    assert "within 0.1 of the original" in page and "never the first N" in page
    import xmlschema
    from junitparser import JUnitXml

    xmlschema.XMLSchema(str(Path(__file__).parent / "fixtures" / "junit.xsd")).validate(str(tmp_path / "junit.xml"))
    junit_suite = next(iter(JUnitXml.fromfile(str(tmp_path / "junit.xml"))))
    assert sum(p.name == "skipped_test" and "dir_code" in p.value for p in junit_suite.properties()) == 1
    with pytest.raises(SystemExit) as refused:  # the option's range check (argparse), before any work
        main(["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(path), "--quiet",
              "--inv-threshold", "2", "--out", str(tmp_path / "bad")])
    assert refused.value.code == 2 and "--inv-threshold: 2 is out of range [0.0, 1.0]" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
