"""HTML report, and the run / report CLI commands (including --fail-threshold gating)."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from alict_core.cli import main
from alict_core.report import fail_rate_svg, render_report, write_report
from alict_core.runner import RunResult, build_cases, run_suite


class Keyword:
    name, labels, fingerprint = "kw", ("negative", "neutral", "positive"), "kw-report-test"

    def predict_proba(self, texts):
        return np.array([[0.8, 0.1, 0.1] if "bad" in t else [0.1, 0.1, 0.8] for t in texts])


def _result(tmp_path):
    seeds = [{"id": "s1", "lc_id": "LC_neg", "text": "not bad <b>at</b> all", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}},
             {"id": "s2", "lc_id": "LC_neg", "text": "good", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}},
             {"id": "s3", "lc_id": "LC_fair", "text": "he is good", "test_type": "INV",
              "expected": {"kind": "invariance", "labels": [], "tolerance": 0.1}, "variants": ["she is bad"]}]
    exps = [{"id": "e1", "seed_id": "s2", "text": "good but bad", "accepted": True}]
    return run_suite(build_cases(seeds, exps), [Keyword()], cache_root=tmp_path / "cache")


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_report_is_self_contained_and_escaped(tmp_path):
    result = _result(tmp_path)
    page = render_report(result, metrics=pd.DataFrame([{"lc_id": "ALL", "kind": "all", "n": 4, "self_bleu": 0.1}]),
                         accuracies={"kw": {"task": "sentiment", "test": {"accuracy": 0.8, "macro_f1": 0.7}}})
    parsed = _Collect()
    parsed.feed(page)
    assert "script" not in parsed.tags and "svg" in parsed.tags
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<b>at</b>" not in page and "not bad &lt;b&gt;at&lt;/b&gt; all" in page  # texts are escaped
    text = " ".join(parsed.text)
    assert "LC_neg" in text and "LC_fair" in text and "good but bad" in text and "she is bad" in text
    assert "80.0%" in text  # accuracy table
    path = write_report(result, tmp_path / "r.html")
    assert path.read_text(encoding="utf-8") .startswith("<!doctype html>")


def test_svg_bars_scale_with_fail_rate():
    summary = pd.DataFrame(
        [{"lc_id": "A", "model": "m", "fail_rate": 0.5}, {"lc_id": "B", "model": "m", "fail_rate": 0.0}]
    )
    svg = fail_rate_svg(summary, width=660)  # plot width 660 - 260 - 70 = 330
    assert 'width="165.0"' in svg and "50.0%" in svg and "0.0%" in svg


SUITE = {"negation": {"type": "MFT", "capability": "Negation", "description": "", "labels": 0,
                      "data": ["This is not good.", "I do not like it at all."]},
         "positive": {"type": "MFT", "capability": "Vocabulary", "description": "", "labels": 2,
                      "data": ["What a wonderful, beautiful film.", "I love this great movie."]}}


def test_cli_run_report_and_gating(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    out = tmp_path / "run"
    base = ["run", "--task", "sentiment", "--models", "vader,textblob", "--no-lcs", "--suite", str(suite),
            "--out", str(out), "--quiet"]
    assert main(base + ["--fail-threshold", "*=1.0", "--report", str(tmp_path / "r.html")]) == 0
    printed = capsys.readouterr().out
    assert "suite:negation" in printed and (tmp_path / "r.html").exists()
    summary = RunResult.load(out).summary().set_index(["lc_id", "model"])
    assert summary.loc[("suite:positive", "vader"), "fail_rate"] == 0.0
    worst = summary.fail_rate.max()
    assert worst > 0  # lexicons miss at least one negation
    assert main(base + ["--fail-threshold", f"*={worst - 0.01:.2f}"]) == 1
    assert "FAIL: " in capsys.readouterr().err
    assert main(base + ["--fail-threshold", "suite:positive=0"]) == 0
    assert main(base + ["--fail-threshold", "nope=0.1"]) == 2
    assert "not run" in capsys.readouterr().err
    assert main(["run", "--task", "sentiment", "--models", "hatesonar", "--no-lcs", "--suite", str(suite)]) == 2
    assert "is for task hate_speech" in capsys.readouterr().err
    export = tmp_path / "export"
    assert main(["report", str(out), "--out", str(tmp_path / "again.html"), "--export", str(export), "--metrics"]) == 0
    expected_files = {"results.csv", "results.jsonl", "summary.csv", "cases.jsonl", "suite.json"}
    assert {p.name for p in export.iterdir()} >= expected_files
    exported = json.loads((export / "suite.json").read_text())
    assert exported["suite:negation"]["labels"] == 0 and exported["suite:negation"]["data"] == SUITE["negation"]["data"]


@pytest.mark.slow
def test_cli_runs_real_lc_seeds(tmp_path):
    # uses the real cache directory: the annotated corpus is cached there (annotating afresh takes minutes)
    from alict_core.lcspec import load_task_specs

    lc = load_task_specs("sentiment")[0].id
    assert main(["run", "--task", "sentiment", "--models", "vader", "--lc", lc, "--max-seeds", "5",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 0
    summary = RunResult.load(tmp_path / "run").summary()
    assert list(summary.lc_id) == [lc] and 0 < summary.n_seeds.iloc[0] <= 5


def test_cli_expansions_bring_their_seeds(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    from alict_core.lcspec import load_task_specs

    lc = next(s.id for s in load_task_specs("sentiment") if s.test_type == "MFT")
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": lc, "task": "sentiment", "text": text,
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i, text in enumerate(["A wonderful film.", "A great movie.", "I love it."])))
    exps = tmp_path / "exp.jsonl"
    exps.write_text(
        json.dumps({"id": "x1", "seed_id": "s2", "lc_id": lc, "text": "I really hate it.", "accepted": True}) + "\n"
        + json.dumps({"id": "x2", "seed_id": "s1", "lc_id": lc, "text": "rejected", "accepted": False}) + "\n"
    )
    out = tmp_path / "run"
    assert main(["run", "--task", "sentiment", "--models", "vader", "--lc", lc, "--seeds", str(seeds),
                 "--max-seeds", "1", "--expansions", str(exps), "--out", str(out), "--quiet"]) == 0
    result = RunResult.load(out)
    assert sorted(c.case_id for c in result.case_list) == ["s0", "s2", "x1"]  # s2 kept for its expansion
    p2f = result.pass_to_fail()
    assert list(p2f.case_id) == ["x1"] and p2f.seed_text[0] == "I love it."
