"""Repeated names table: a list option naming one model, LC, file, format or threshold twice (or holding an
empty entry among its names, or a model with a blank name) is one message before any work: no case built, no
seed read, nothing written.

Before, ``run --models vader,vader`` was refused only after the cases were built, ``--lc 4 --lc lc04`` and
``--seeds f --seeds f`` were merged or ran twice without a word, and the last of two ``--fail-threshold`` for
one LC silently won.
"""

from __future__ import annotations

import json

import pytest

from tests.robustness.conftest import assert_clean_error

RUN = ["run", "--task", "sentiment", "--max-seeds", "2", "--quiet", "--out", "{tmp}/out"]
HTTP = "http:url=http://127.0.0.1:9/predict"

ROWS = [  # (id, argv, needles)
    ("models-twice", [*RUN, "--models", "vader,vader", "--lc", "4"], ["--models names 'vader' twice"]),
    ("models-twice-padded", [*RUN, "--models", "vader, vader ", "--lc", "4"], ["--models names 'vader' twice"]),
    ("models-three", [*RUN, "--models", "textblob,vader,textblob", "--lc", "4"], ["--models names 'textblob' twice"]),
    ("http-twice", [*RUN, "--models", f"{HTTP},{HTTP}", "--lc", "4"], ["--models names", "twice"]),
    ("same-name", [*RUN, "--models", "vader:name=m,textblob:name=m", "--lc", "4"],
     ["two models would both be named 'm'", "name=..."]),
    ("static-same-stem", [*RUN, "--models", "static:path=a/p.csv,static:path=b/p.csv", "--lc", "4"],
     ["two models would both be named 'p'"]),
    ("models-empty-entry", [*RUN, "--models", "vader,,textblob", "--lc", "4"], ["--models", "empty entry"]),
    ("model-name-empty", [*RUN, "--models", "vader:name=", "--lc", "4"], ["name=''", "1–200 printable"]),
    ("model-name-blank", [*RUN, "--models", "vader:name= ", "--lc", "4"], ["name=''", "1–200 printable"]),
    ("model-name-control", [*RUN, "--models", "vader:name=a\x07b", "--lc", "4"], ["1–200 printable"]),
    ("model-name-long", [*RUN, "--models", "vader:name=" + "m" * 201, "--lc", "4"], ["1–200 printable"]),
    ("lc-twice", [*RUN, "--models", "vader", "--lc", "4", "--lc", "4"], ["--lc names '4' twice"]),
    ("lc-aliases", [*RUN, "--models", "vader", "--lc", "4", "--lc", "sentiment-lc04"],
     ["--lc names 'sentiment-lc04' twice", "are the same"]),
    ("seeds-twice", [*RUN, "--models", "vader", "--lc", "4", "--seeds", "{tmp}/s.jsonl", "--seeds",
                     "{tmp}/./s.jsonl"], ["--seeds names", "twice"]),
    ("suite-twice", [*RUN, "--models", "vader", "--no-lcs", "--suite", "{tmp}/s.jsonl", "--suite", "{tmp}/s.jsonl"],
     ["--suite names", "twice"]),
    ("expansions-twice", [*RUN, "--models", "vader", "--lc", "4", "--expansions", "{tmp}/s.jsonl", "{tmp}/s.jsonl"],
     ["--expansions names", "twice"]),
    ("threshold-twice", [*RUN, "--models", "vader", "--lc", "4", "--fail-threshold", "LC4=0.1", "--fail-threshold",
                         "LC4=0.9"], ["--fail-threshold names LC 'LC4' twice"]),
    ("threshold-aliases", [*RUN, "--models", "vader", "--lc", "4", "--fail-threshold", "LC4=0.1",
                           "--fail-threshold", "sentiment-lc04=0.9"], ["--fail-threshold names", "are the same"]),
    ("seeds-lc-twice", ["seeds", "--task", "sentiment", "--lc", "lc04", "--lc", "LC4", "--out", "{tmp}/out"],
     ["--lc names 'LC4' twice"]),
    ("seeds-spec-twice", ["seeds", "--task", "sentiment", "--spec", "{tmp}/x.yaml", "--spec", "{tmp}/x.yaml",
                          "--out", "{tmp}/out"], ["--spec names", "twice"]),
    ("validate-lc-twice", ["validate", "--task", "sentiment", "--lc", "5", "--lc", "05"], ["--lc names", "twice"]),
    ("expand-lc-twice", ["expand", "--task", "sentiment", "--lc", "4", "--lc", "4", "--out", "{tmp}/out"],
     ["--lc names", "twice"]),
    ("fidelity-lc-twice", ["fidelity", "--task", "sentiment", "--lc", "4", "--lc", "lc4"], ["--lc names", "twice"]),
    ("lego-models-twice", ["lego", "--task", "sentiment", "--seeds", "{tmp}/never-read.txt", "--models",
                           "vader,vader", "--out", "{tmp}/out"], ["--models names 'vader' twice"]),
    ("harden-lcs-empty-entry", ["harden", "export", "--run", "{tmp}/run", "--lcs", "lc01,,lc02", "--out",
                                "{tmp}/out"], ["--lcs", "empty entry"]),
    ("harden-lcs-twice", ["harden", "export", "--run", "{tmp}/run", "--lcs", "lc01,lc01", "--out", "{tmp}/out"],
     ["--lcs names 'lc01' twice"]),
    ("harden-lcs-aliases", ["harden", "export", "--run", "{tmp}/run", "--lcs", "sentiment-lc01,lc1", "--out",
                            "{tmp}/out"], ["--lcs names 'lc1' twice", "are the same"]),
    ("harden-formats-twice", ["harden", "export", "--run", "{tmp}/run", "--lcs", "lc01", "--formats", "csv,csv",
                              "--out", "{tmp}/out"], ["--formats names 'csv' twice"]),
]


@pytest.fixture
def no_work(monkeypatch):
    """Any of these is work: reaching one turns the refusal into an internal error (exit 3), failing the row."""
    import alict_core.commands.run as run_command
    import alict_core.plan as plan
    from alict_core.lego import pipeline

    def started(*args, **kwargs):
        raise AssertionError("work started before the repeated name was refused")

    monkeypatch.setattr(run_command, "make_plan", started)
    monkeypatch.setattr(plan, "lc_seeds", started)
    monkeypatch.setattr(plan.inputs, "lc_seeds", started)
    monkeypatch.setattr(pipeline, "seeds_from_file", started)


@pytest.mark.parametrize("argv,needles", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_name_given_twice_is_refused_before_any_work(cli, tmp_path, monkeypatch, no_work, argv, needles):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "s1", "lc_id": "sentiment-lc04", "text": "a film",
                                                  "test_type": "MFT"}) + "\n")
    if "harden" in argv:
        run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    before = sorted(p.name for p in tmp_path.iterdir())
    outcome = cli(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert_clean_error(outcome, 2, *needles, limit_s=60)
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written"


@pytest.mark.parametrize("argv", [
    ["--models", "vader,textblob", "--lc", "4", "--lc", "5"],
    ["--models", "vader:name=a,vader:name=b", "--lc", "4"],
], ids=["different-models-and-lcs", "one-model-twice-by-two-names"])
def test_distinct_names_still_run(cli, tmp_path, monkeypatch, argv):
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    outcome = cli("run", "--task", "sentiment", "--max-seeds", "2", "--quiet", "--out", str(tmp_path / "out"), *argv)
    assert outcome.code == 0, outcome.err[-600:]


def test_library_export_refuses_an_lc_or_format_twice(tmp_path):
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import export_hardening_data
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    with pytest.raises(AlictError, match="names 'lc01' twice"):
        export_hardening_data(run_dir, tmp_path / "a", lcs=["sentiment-lc01", "lc01"])
    with pytest.raises(AlictError, match="names 'jsonl' twice"):
        export_hardening_data(run_dir, tmp_path / "b", lcs=["sentiment-lc01"], formats=("jsonl", "jsonl"))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_two_spec_files_of_one_lc_are_refused(cli, tmp_path, monkeypatch):
    """``seeds --spec a.yaml --spec b.yaml`` with one spec id in both searched the LC twice and kept one."""
    from alict_core.common import config

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    text = (config.SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text(encoding="utf-8")
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b.yml").write_text(text, encoding="utf-8")
    outcome = cli("seeds", "--task", "sentiment", "--spec", str(tmp_path / "a.yaml"), "--spec",
                  str(tmp_path / "b.yml"), "--max", "2", "--out", str(tmp_path / "out"))
    assert_clean_error(outcome, 2, "b.yml", "a.yaml", "both hold spec 'sentiment-lc04'")
    assert not (tmp_path / "out").exists()
