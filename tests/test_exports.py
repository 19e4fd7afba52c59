"""CI exports: JUnit XML (validated against the common JUnit schema), the JSON summary (against its
JSON Schema), the `run`/`report` options that write them and the `compare` command."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import xmlschema
from junitparser import Failure, JUnitXml

from alict_core.cli import main
from alict_core.report.junit import junit_xml, write_junit
from alict_core.report.summary import SUMMARY_SCHEMA, summary_document, write_summary_json
from alict_core.runner import build_cases, run_suite

JUNIT_XSD = Path(__file__).parent / "fixtures" / "junit.xsd"
POSITIVE = {"kind": "label", "labels": ["positive"]}


class Keyword:
    labels = ("negative", "neutral", "positive")

    def __init__(self, name: str, keywords: set[str]) -> None:
        self.name, self.fingerprint, self.keywords = name, f"kw-exports-{name}", keywords

    def predict_proba(self, texts):
        return np.array([[0.8, 0.1, 0.1] if self.keywords & set(t.lower().split()) else [0.1, 0.1, 0.8] for t in texts])


SEEDS = [{"id": f"a{i}", "lc_id": "sentiment-lc06", "text": t, "test_type": "MFT", "expected": POSITIVE}
         for i, t in enumerate(["it was not bad", "not a boring minute", "never dull", "a fine film"])]
SEEDS += [{"id": f"b{i}", "lc_id": "sentiment-lc02", "text": t, "test_type": "MFT", "expected": POSITIVE}
          for i, t in enumerate(["a great film", "lovely acting", "so bad it is good", "a treat"])]


@pytest.fixture
def result(tmp_path):
    models = [Keyword("strict", {"not", "bad", "never"}), Keyword("lenient", {"awful"})]
    return run_suite(build_cases(SEEDS), models, cache_root=tmp_path / "cache")


def test_junit_validates_and_fails_exactly_the_pairs_above_threshold(result, tmp_path):
    rates = result.summary().set_index(["lc_id", "model"])["fail_rate"]
    assert rates[("sentiment-lc06", "strict")] == 0.75 and rates[("sentiment-lc02", "strict")] == 0.25
    thresholds = {"*": 0.5, "sentiment-lc02": 0.2}
    path = write_junit(result, tmp_path / "junit.xml", thresholds)
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(path))  # raises on any violation
    failing = set()
    total = 0
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            total += 1
            if any(isinstance(r, Failure) for r in case.result):
                failing.add((case.classname.split(".")[1], case.name.rsplit("[", 1)[1].rstrip("]")))
    expected = {(model, lc) for (lc, model), rate in rates.items()
                if rate > thresholds.get(lc, thresholds["*"])}
    assert total == 4 and failing == expected == {("strict", "sentiment-lc06"), ("strict", "sentiment-lc02")}
    text = path.read_text(encoding="utf-8")
    assert "Negation of negative at the end, should be positive or neutral [sentiment-lc06]" in text


def test_junit_without_thresholds_fails_nothing(result):
    assert "<failure" not in junit_xml(result) and "no threshold" in junit_xml(result)


def test_summary_json_follows_its_schema(result, tmp_path):
    path = write_summary_json(result, tmp_path / "s" / "summary.json", {"*": 0.5})
    document = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(document, SUMMARY_SCHEMA)
    assert document["passed"] is False and document["n_failed"] == 1
    failed = [(r["lc_id"], r["model"]) for r in document["results"] if r["failed"]]
    assert failed == [("sentiment-lc06", "strict")]
    caps = {(c["capability"], c["model"]): c for c in document["capabilities"]}
    assert caps[("Negation", "strict")]["fail_rate"] == 0.75 and caps[("Vocabulary", "lenient")]["n_lcs"] == 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "extra": 1}, SUMMARY_SCHEMA)
    assert summary_document(result)["passed"] is True  # no thresholds: nothing fails


def test_cli_run_report_and_compare_write_ci_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({**s, "task": "sentiment"}) + "\n" for s in SEEDS))
    out = tmp_path / "run"
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.json"
    code = main(["run", "--task", "sentiment", "--models", "vader,textblob", "--lc", "sentiment-lc06", "--lc",
                 "sentiment-lc02", "--seeds", str(seeds), "--out", str(out), "--quiet", "--fail-threshold", "*=0.0",
                 "--junit", str(junit), "--summary-json", str(summary)])
    document = json.loads(summary.read_text())
    jsonschema.validate(document, SUMMARY_SCHEMA)
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(junit))
    assert code == (1 if document["n_failed"] else 0)
    assert junit.read_text().count("<failure") == document["n_failed"]
    again = tmp_path / "again.xml"
    assert main(["report", str(out), "--out", str(tmp_path / "r.html"), "--junit", str(again),
                 "--fail-threshold", "*=1.0"]) == 0
    assert "<failure" not in again.read_text()
    capsys.readouterr()
    assert main(["compare", str(out), "--model-a", "vader", "--model-b", "textblob", "--json",
                 str(tmp_path / "cmp.json")]) == 0
    printed = capsys.readouterr().out
    assert "A = vader, B = textblob" in printed and "sentiment-lc06" in printed
    compared = json.loads((tmp_path / "cmp.json").read_text())
    assert {row["lc_id"] for row in compared["lcs"]} == {"sentiment-lc06", "sentiment-lc02"}
    assert main(["compare", str(out)]) == 2  # two models: which one?
    assert "name the one to compare" in capsys.readouterr().err


def test_html_report_names_lcs_by_capability_and_title(result):
    from alict_core.report import render_report

    page = render_report(result)
    assert "Negation · Negation of negative at the end, should be positive or neutral" in page
    assert "<title>sentiment-lc06</title>" in page  # the id on hover
    assert page.index("Vocabulary · Short sentences") < page.index("Negation · Negation of negative")  # group order


def test_compare_refuses_runs_of_different_tasks_and_says_when_both_sides_are_one_run(tmp_path, capsys):
    model = Keyword("kw", {"not", "bad"})
    runs = {}
    for task in ("sentiment", "hate-speech"):
        cases = build_cases([{**s, "task": task} for s in SEEDS])
        runs[task] = run_suite(cases, [model], cache_root=tmp_path / "cache").save(tmp_path / task)
    capsys.readouterr()
    assert main(["compare", str(runs["sentiment"]), str(runs["hate-speech"])]) == 2
    err = capsys.readouterr().err
    assert "run A is of task sentiment and run B of task hate-speech: compare two runs of one task" in err
    assert "Traceback" not in err
    assert main(["compare", str(runs["sentiment"]), str(runs["sentiment"]), "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert "A and B are the same run" in out and "the same model (kw)" in out


def test_regression_gate_uses_holm_and_does_not_trip_for_two_equally_good_models():
    """25 LCs, two models with the same fail rate (independent, seed-clustered outcomes): some LC has an
    uncorrected p < 0.05 (the gate used to trip on that), Holm's correction keeps the gate closed."""
    import pandas as pd

    from alict_core.analysis.compare import compare_frames

    rng = np.random.default_rng(7)
    rows = []
    for lc in range(25):
        for g in range(40):
            for k in range(4):
                rows.append({"lc_id": f"sentiment-lc{lc:02d}", "capability": "Vocabulary",
                             "kind": "seed" if k == 0 else "expansion", "seed_id": f"l{lc}s{g}",
                             "text": f"case {lc}-{g}-{k}", "expected": "positive", "predicted": "positive"})
    frame = pd.DataFrame(rows)

    def side() -> pd.DataFrame:
        seed_fails = rng.random(len(frame) // 4) < 0.3
        repeat = rng.random(len(frame)) < 0.9
        fails = np.where(repeat, np.repeat(seed_fails, 4), rng.random(len(frame)) < 0.3)
        return frame.assign(passed=~fails)

    comparison = compare_frames(side(), side())
    lcs = comparison.lcs
    assert (lcs["p_value"] < 0.05).any()  # uncorrected, one LC looks significant
    assert comparison.regressions().empty and (lcs["p_holm"] >= 0.05).all()
    assert "Holm" in comparison.headline() and "Benjamini–Hochberg" in comparison.headline()
