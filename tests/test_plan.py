"""The one conductor (``alict_core.plan``): the CLI's ``run`` and the app's Run page plan the same cases through it,
and the model references they take are parsed once, with every kind's parameters read from its registry entry."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from alict_core.common.errors import AlictError
from alict_core.plan import Plan, PlanHooks, PlanOptions, make_plan

LC = "sentiment-lc04"


def cli_args(*argv: str) -> argparse.Namespace:
    """The Namespace ``run`` receives for ``argv`` (the real parser)."""
    from alict_core.cli import build_parser

    return build_parser().parse_args(["run", "--task", "sentiment", "--models", "vader", *argv])


def case_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_cli_run_and_an_app_run_of_one_request_plan_and_run_the_same_cases(tmp_path, monkeypatch):
    """One small real run (LC4, five seeds, VADER) from the command line and from the app's Run page: the same cases
    (ids, texts, expectations, meta) in the same order, the same predictions and validity record.

    Was: the app's seeds were ``Seed`` objects, so its cases named their LC id as capability and carried no
    description, where the CLI's took the spec's (the summary's capability column differed too)."""
    import pandas as pd

    from alict_app import runs
    from alict_app.spec_store import task_specs
    from alict_core.cli import main

    out = tmp_path / "cli"
    assert main(["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--max-seeds", "5", "--no-story",
                 "--quiet", "--out", str(out)]) == 0
    monkeypatch.setattr(runs, "runs_root", lambda: tmp_path / "app")
    (tmp_path / "app").mkdir()
    spec = next(s for s in task_specs("sentiment") if s.id == LC)
    request = runs.RunRequest(task="sentiment", lc_ids=[LC], models=[{"name": "vader", "kwargs": {}, "label": "vader"}],
                              max_seeds=5)
    app = tmp_path / "app" / runs.execute(request, {LC: spec}, lambda message, fraction: None)
    cli_cases, app_cases = (case_rows(folder / "cases" / "part-00000.jsonl") for folder in (out, app))
    assert len(cli_cases) == 5
    assert app_cases == cli_cases
    assert {r["capability"] for r in app_cases} == {spec.capability} and {r["description"] for r in app_cases} == {
        spec.description}
    summaries = [pd.read_csv(folder / "summary.csv") for folder in (out, app)]
    pd.testing.assert_frame_equal(summaries[0], summaries[1])
    extra = [json.loads((folder / "meta.json").read_text())["extra"] for folder in (out, app)]
    assert extra[0] == extra[1] and list(extra[0]) == ["task", "validity"]
    assert extra[0]["validity"]["kept_flagged"] is False
    from alict_core.models.refs import ModelRef

    # the Failures and Story pages load a run's model again by its name in the run, as a ModelRef
    assert runs.run_model_ref(app.name, "vader") == ModelRef("vader", {}, "vader")
    assert runs.run_model_ref(app.name, "textblob") == ModelRef("textblob")  # not in the request: as registered


def test_the_plan_of_cli_options_equals_the_plan_of_app_shaped_input():
    """``run``'s options through ``plan_options`` and the app's shape (its specs and its own seed search) give one
    plan: same cases, same validity record; the Namespace is read, never changed."""
    from alict_core.commands.run import plan_options
    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec import get_spec
    from alict_core.seeds import find_seeds

    args = cli_args("--lc", "lc04", "--max-seeds", "4")
    before = vars(args).copy()
    from_cli = make_plan(plan_options(args))
    assert vars(args) == before and not hasattr(args, "validity") and not hasattr(args, "suite_import")
    spec = get_spec("sentiment", LC)
    corpus = load_corpus("sentiment")
    seen: list[tuple[str, int]] = []
    hooks = PlanHooks(find_seeds=lambda s, cap, wanted: list(find_seeds(s, corpus, max_seeds=cap).seeds),
                      before_lc=lambda index, count, s: seen.append((s.id, count)))
    from_app = make_plan(PlanOptions(task="sentiment", max_seeds=4), specs={LC: spec}, hooks=hooks)
    assert seen == [(LC, 1)]
    assert [c.to_dict() for c in from_app.cases] == [c.to_dict() for c in from_cli.cases]
    assert {c.capability for c in from_app.cases} == {spec.capability}
    assert len(from_cli.cases) == 4 and {c.lc_id for c in from_cli.cases} == {LC}
    assert from_app.validity == from_cli.validity and from_cli.suite_import is None and from_cli.skipped == []
    assert from_cli.run_extra() == {"task": "sentiment", "validity": from_cli.validity}


def test_expansions_of_a_suite_keep_their_validity_record_and_the_suite_its_import_record(tmp_path):
    """``--no-lcs --suite S --expansions E``: the suite's cases, then its accepted expansions; the records the run
    keeps (suite import, validity of the expansions) come back on the plan, in the order the run stores them."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"case_id": f"c{i}", "lc_id": "mine", "kind": "seed", "seed_id": f"c{i}",
                                         "text": text, "expected": {"kind": "label", "labels": ["positive"]},
                                         "test_type": "MFT", "capability": "Vocabulary"}) + "\n"
                         for i, text in enumerate(["a good film", "a fine story"])))
    expansions = tmp_path / "exp.jsonl"
    expansions.write_text(json.dumps({"id": "c0-e1", "seed_id": "c0", "lc_id": "mine", "text": "a really good film",
                                      "accepted": True, "words": ["really"]}) + "\n")
    plan = make_plan(PlanOptions(task="sentiment", no_lcs=True, suites=(str(suite),),
                                 expansion_files=(str(expansions),)))
    assert [c.case_id for c in plan.cases][:2] == ["c0", "c1"] and len(plan.cases) == 3
    assert plan.cases[2].text == "a really good film" and plan.cases[2].kind == "expansion"
    assert plan.suite_import == {"files": ["suite.jsonl"], "inv_threshold": 0.1}
    assert plan.validity is not None and list(plan.run_extra()) == ["task", "validity", "suite_import"]


def test_the_run_command_refuses_an_empty_plan_with_one_message(tmp_path, capsys):
    from alict_core.cli import main

    empty = tmp_path / "seeds.jsonl"
    empty.write_text("")
    assert main(["run", "--task", "sentiment", "--models", "vader", "--seeds", str(empty), "--quiet",
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "no test cases" in err and "Traceback" not in err and not (tmp_path / "out").exists()


def test_options_are_a_frozen_record():
    options = PlanOptions(task="sentiment")
    with pytest.raises(AttributeError):
        options.task = "hate_speech"  # type: ignore[misc]
    assert Plan([]).run_extra() == {}


# ---------------------------------------------------------------- ModelRef
def test_model_refs_are_parsed_once_into_typed_records():
    from alict_core.models.refs import ModelRef, model_refs, parse_model_refs

    refs = parse_model_refs("vader,http:url=http://127.0.0.1:8000/p,name=mine,openai-chat:base_url=http://h/v1,model=m")
    assert refs == [ModelRef("vader"), ModelRef("http", {"url": "http://127.0.0.1:8000/p", "name": "mine"}),
                    ModelRef("openai-chat", {"base_url": "http://h/v1", "model": "m"})]
    assert [r.run_name() for r in refs] == ["vader", "mine", "chat:m"]
    checked = model_refs("vader,textblob:name=tb", "sentiment")
    assert [r.to_dict() for r in checked] == [{"name": "vader", "kwargs": {}},
                                             {"name": "textblob", "kwargs": {"name": "tb"}}]
    assert ModelRef.from_dict({"name": "hf", "kwargs": {"model_id": "x"}, "label": "mine"}) == \
        ModelRef("hf", {"model_id": "x"}, "mine")
    for text, needle in [("vader,,textblob", "empty entry"), ("name=x", "no model before it"),
                         ("vader,vader", "names 'vader' twice"), ("minilm-hatexplain", "is for task hate_speech"),
                         ("hf:task=sentiment", "give model_id=<hub id or local folder>"),
                         ("openai-chat:base_url=http://h/v1", "give model=<model name>")]:
        with pytest.raises(AlictError, match=needle):
            model_refs(text, "sentiment")
    mine = ModelRef("static", {"path": "p.jsonl", "task": "sentiment", "name": "stored"}, "stored")
    assert mine.answers_to("stored") and mine.answers_to("static") and not mine.answers_to("p")
    assert mine.run_name() == "stored" and ModelRef("static", {"path": "/w/p.jsonl"}).run_name() == "p"
    for bad in ({"kwargs": {}}, {"name": "vader", "kwargs": ["x"]}, "vader"):
        with pytest.raises(AlictError):
            ModelRef.from_dict(bad)  # type: ignore[arg-type]


def test_the_form_the_cli_and_the_trust_check_read_one_registry_entry(monkeypatch):
    """The kinds a user may add and their parameters live on the model registry entries: the Run page's form shows
    those fields, the CLI asks for the required ones, the trust check allows exactly those (plus task and name)."""
    from alict_core.common.registry import Param
    from alict_core.common.trust import TrustError
    from alict_core.models.refs import browser_model_kwargs, model_refs, user_kinds
    from alict_core.models.registry import MODELS

    kinds = user_kinds()
    assert list(kinds) == ["hf", "http", "openai-chat", "static", "sklearn"]  # the form's order
    assert [p.name for p in kinds["openai-chat"].params] == ["base_url", "model"]
    source = (Path(__file__).resolve().parent.parent / "pages" / "run.py").read_text(encoding="utf-8")
    assert "USER_KINDS" not in source and "user_kinds()" in source
    with pytest.raises(TrustError, match=r"takes only \['base_url', 'model', 'name', 'task'\]"):
        browser_model_kwargs("openai-chat", {"base_url": "http://h/v1", "headers": "x"})
    # a parameter added to the entry is asked for by the CLI and allowed by the trust check at once
    entry = MODELS.entry("http")
    monkeypatch.setattr(entry, "params", (*entry.params, Param("token_env", "variable holding the token")))
    with pytest.raises(AlictError, match="give token_env=<variable holding the token>"):
        model_refs("http:url=http://127.0.0.1:9/p", "sentiment")
    with pytest.raises(TrustError, match="token_env") as refused:
        browser_model_kwargs("http", {"url": "http://127.0.0.1:9/p", "token_env": "T", "bogus": 1})
    assert "'bogus'" in str(refused.value) and "got ['bogus']" in str(refused.value)
