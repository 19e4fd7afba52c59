"""Hostile pass 20 table: one strict schema for every field of a seed row and an expansion row
(``alict_core/cases/rowschema.py``) and pass 20's findings; each row fails on the code before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import expansion_argv, seed_row

pytestmark = [pytest.mark.timeout(300)]


def _run_argv(tmp_path: Path, seeds: Path) -> list[str]:
    return ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
            str(tmp_path / "r")]


SEED_FIELDS = {  # was: silently coerced (variants "abc" -> three one-letter variants; 5 -> "5") or exit 3
    "variants-a-text": {"variants": "abc"},
    "variants-numbers": {"variants": [1, 2]},
    "description-a-number": {"description": 5},
    "capability-a-bool": {"capability": True},
    "meta-a-list": {"meta": [1]},
    "meta-words-a-number": {"meta": {"words": 5}},
    "rule-kind-a-number": {"rule_kind": 5},
}


@pytest.mark.parametrize("change", SEED_FIELDS.values(), ids=SEED_FIELDS.keys())
@pytest.mark.parametrize("command", ["validate", "run"])
def test_p20_schema_seed_fields_of_another_type_are_one_message(cli, tmp_path, own_cache, command, change):
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row(**change)) + "\n")
    argv = ["validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds)] if command == "validate" else \
        _run_argv(tmp_path, seeds)
    assert_clean_error(cli(*argv), 2, "s.jsonl:1", next(iter(change)))
    assert not (tmp_path / "r").exists()


EXPANSION_FIELDS = {
    "id-a-number": {"id": 5},
    "variants-a-text": {"variants": "xy"},
    "masked-text-a-number": {"masked": {"text": 3, "mask_positions": [1]}},
    "position-negative": {"masked": {"mask_positions": [-1]}},
    "seed-text-a-list": {"seed_text": ["a"]},
    "meta-a-text": {"meta": "m"},
}


@pytest.mark.parametrize("change", EXPANSION_FIELDS.values(), ids=EXPANSION_FIELDS.keys())
@pytest.mark.parametrize("command", ["validate", "run", "fidelity"])
def test_p20_schema_expansion_fields_of_another_type_are_one_message(cli, tmp_path, own_cache, command, change):
    assert_clean_error(cli(*expansion_argv(tmp_path, command, change)), 2, "x.jsonl:1", next(iter(change)))


def test_p20_schema_a_rejected_expansion_of_another_shape_is_refused_too(cli, tmp_path, own_cache):
    """A rejected row is never a case, but a field of another type still says the file is not what it claims."""
    exps = tmp_path / "x.jsonl"
    exps.write_text(json.dumps({"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04", "text": "t",
                                "accepted": False, "words": "very"}) + "\n")
    assert_clean_error(cli("fidelity", "--task", "sentiment", "--lc", "4", "--expansions", str(exps)), 2,
                       "x.jsonl:1", "words")


def test_p20_schema_rows_as_written_by_the_pipeline_are_read(cli, tmp_path, own_cache):
    """The fields every writer puts in a row (tuples from memory, nested masked) pass the schema unchanged."""
    from alict_core.cases.testcases import build_cases

    seed = seed_row(test_type="INV", expected={"kind": "invariance"}, variants=("a good film", "a fine movie"),
                     protected_spans=[(0, 1)], segments=[{"group": "g", "source_id": "x", "start": 0, "end": 4}],
                     meta={"words": ["fine"], "custom": {"any": 1}}, source_ids=("x",), slots={"adj": "fine"})
    row = {"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04", "text": "a very fine film", "accepted": True,
           "words": ["very"], "masked": {"text": "a [MASK] fine film", "mask_positions": [1], "tokens": ["a"]},
           "score": 0.5, "verdicts": {"pos": True}, "variants": ["a very good film"]}
    cases = build_cases([seed], [row])
    assert [c.kind for c in cases] == ["seed", "expansion"]
    assert cases[0].variants == ("a good film", "a fine movie")
    assert cases[1].meta["words"] == ["very"]


def test_p20_suite_case_meta_words_of_another_type_is_one_message(cli, tmp_path, own_cache):
    """Was (pass-19 leftover): a suite case whose meta.words is a number ran, and the story was skipped with
    Python's "'int' object is not iterable" in the warning."""
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps({"case_id": "c1", "lc_id": "sentiment-lc04", "kind": "seed", "seed_id": "c1",
                                 "text": "a fine film", "expected": {"kind": "label", "labels": ["positive"]},
                                 "test_type": "MFT", "task": "sentiment", "meta": {"words": 5}}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(suite), "--no-lcs", "--out",
                  str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "cases.jsonl", "meta", "words")
    assert "not iterable" not in outcome.err
    assert not (tmp_path / "r").exists()


def test_p20_leftover_a_rerun_restores_the_story_a_kill_left_out(cli, tmp_path, own_cache):
    """Was (pass-18 leftover): killed during its story write, a run was left without story.json, and the same
    command re-run returned the finished run as is, still without it (the Story page computed it each server)."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    argv = _run_argv(tmp_path, seeds)
    assert cli(*argv).code == 0
    story = tmp_path / "r" / "story.json"
    first = json.loads(story.read_text())
    story.unlink()  # what a SIGKILL between the run's manifest and its story leaves
    again = cli(*argv)
    assert again.code == 0, again.err
    assert json.loads(story.read_text()) == first
    assert cli("report", str(tmp_path / "r"), "--out", str(tmp_path / "x.html")).code == 0  # the run still verifies


@pytest.mark.usefixtures("fake_backends")
def test_p20_pages_1_a_run_press_reruns_when_a_model_changed_under_the_same_settings(tmp_runs, tmp_path,
                                                                                    monkeypatch):
    """Was: the Run page answered a press from the last run of the same settings (its request key): a static
    predictions file rewritten (or a model retrained in place, or cases rejected by a review write-back since) was
    served the old run's numbers as "Run finished (loaded from cache)"."""
    import csv

    from streamlit.testing.v1 import AppTest

    from alict_app import runs

    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", str(tmp_path))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240)
    at.run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc04"])
    at.number_input(key="max_seeds").set_value(6)
    at.run()
    at.button(key="run_go").click().run()
    texts = runs.load_run(at.session_state["run"]).cases()["text"].tolist()
    predictions = tmp_path / "preds.csv"

    def write(label: str) -> None:
        with predictions.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["text", "label"])
            writer.writerows([text, label] for text in texts)

    def predict(label: str) -> str:
        write(label)
        at.button(key="run_go").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        return at.session_state["run"]

    at.session_state["models"] = []
    at.session_state["um_kind"] = "static"
    at.run()
    at.session_state["um_path"] = str(predictions)
    at.session_state["um_label"] = "mine"
    at.run()
    write("negative")  # the file must exist when the model is added
    at.button[[b.label for b in at.button].index("Add model")].click().run()
    first = predict("negative")
    second = predict("positive")
    assert second != first
    assert not any("loaded from cache" in s.value for s in at.success)
    failed = {rid: runs.load_run(rid).summary()["n_fail"].sum() for rid in (first, second)}
    assert failed[first] != failed[second]
    assert predict("positive") == second and any("loaded from cache" in s.value for s in at.success)


def test_p20_kill_2_a_run_swapped_in_while_it_is_read_is_read_whole(cli, tmp_path, own_cache, monkeypatch):
    """Was: a report read while `run --out X` swapped a re-written run into X mixed the two: its meta (run, models)
    of the old run, its cases and results of the new one, exit 0 (`RunResult.load` checked, then read by path)."""
    import alict_core.runner.run as run_module
    from alict_core.common.manifest import replace_dir
    from alict_core.runner.run import RunResult

    old_seeds, new_seeds = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old_seeds.write_text(json.dumps(seed_row()) + "\n")
    new_seeds.write_text(json.dumps(seed_row(expected={"kind": "label", "labels": ["negative"]})) + "\n")
    base = ["run", "--task", "sentiment", "--lc", "4"]
    assert cli(*base, "--models", "vader", "--seeds", str(old_seeds), "--out", str(tmp_path / "X")).code == 0
    assert cli(*base, "--models", "textblob", "--seeds", str(new_seeds), "--out", str(tmp_path / "Y")).code == 0
    new = RunResult.load(tmp_path / "Y")
    real_read_json, swapped = run_module.read_json, []

    def read_then_swap(path):
        value = real_read_json(path)
        if not swapped and Path(path).name == "meta.json":  # the writer's swap lands right after the meta is read
            swapped.append(True)
            replace_dir(tmp_path / "Y", tmp_path / "X")
        return value

    monkeypatch.setattr(run_module, "read_json", read_then_swap)
    read = RunResult.load(tmp_path / "X")
    assert swapped
    assert read.run_id == new.run_id and [o.name for o in read.outcomes] == ["textblob"]
    assert [o.passed.tolist() for o in read.outcomes] == [o.passed.tolist() for o in new.outcomes]
    assert [c.expected for c in read.case_list] == [c.expected for c in new.case_list]


@pytest.mark.parametrize("part", ["results/part-00000.parquet", "counts/part-00000.json"])
def test_p20_kill_5_a_part_linked_out_of_its_run_is_repaired_not_kept(cli, tmp_path, own_cache, part):
    """Was: a run whose part was a link to an identical file outside was "repaired" by `run` (exit 0, "saved") with
    the link kept, so `report` refused it again at every re-run."""
    import shutil

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    argv = _run_argv(tmp_path, seeds)
    assert cli(*argv).code == 0
    linked = tmp_path / "r" / part
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy2(linked, outside / linked.name)
    linked.unlink()
    linked.symlink_to(outside / linked.name)
    assert_clean_error(cli("report", str(tmp_path / "r"), "--out", str(tmp_path / "a.html")), 2, "outside")
    assert cli(*argv).code == 0
    assert not linked.is_symlink()
    assert cli("report", str(tmp_path / "r"), "--out", str(tmp_path / "b.html")).code == 0


def test_p20_kill_3_a_named_pipe_as_a_lock_file_is_one_message(cli, tmp_path, own_cache):
    """Was: a named pipe at the output's lock file made `run --out` wait for ever without a word."""
    import hashlib
    import os

    from alict_core.common.manifest import named_dir

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    out = tmp_path / "r"
    key = hashlib.sha256(os.fsencode(named_dir(out).resolve())).hexdigest()[:24]
    (own_cache / "locks").mkdir(parents=True)
    os.mkfifo(own_cache / "locks" / f"out-{key}.lock")
    assert_clean_error(cli(*_run_argv(tmp_path, seeds)), 2, "lock file", "not a plain file")


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
@pytest.mark.parametrize("asked,needle", [({"run_b": "0000000000000000"}, "The link's run"),
                                          ({"model_a": "no-such-model"}, "The link's model")],
                         ids=["unknown-run-b", "unknown-model-a"])
def test_p20_pages_6_a_compare_link_naming_what_is_not_there_is_said(asked, needle):
    """Was: a Compare link whose run_b or model was unknown (a deleted run, a short id) compared run A's models with
    each other, without a word."""
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    key = run_fake(start_app(), lcs=("sentiment-lc04",))
    at = start_app({"run": key, **asked})
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert any(needle in w.value for w in at.warning), [w.value for w in at.warning]
    at.run()  # said once: the pickers now hold what is shown
    assert not any(needle in w.value for w in at.warning)


def test_p20_rows_followup_a_checklist_item_expectation_of_another_type_is_refused(cli, tmp_path, own_cache):
    """Was: an MFT CheckList test whose per-item expected was a direction or invariance passed without variants."""
    suite = tmp_path / "clx.json"
    suite.write_text(json.dumps({"t1": {"type": "MFT", "capability": "Vocab", "data": ["good film", "bad film"],
                                        "expected": [{"kind": "direction", "labels": ["positive"]},
                                                     {"kind": "invariance"}]}}))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(suite), "--no-lcs", "--out",
                  str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "clx.json", "does not match")
    assert not (tmp_path / "r").exists()


def _inv_seed(**change) -> dict:
    return seed_row(**{"id": "w1", "lc_id": "sentiment-lc11", "text": "women think the show is good",
                        "test_type": "INV", "expected": {"kind": "invariance"}, **change})


def test_p20_rows_followup_validate_refuses_an_inv_seed_with_nothing_to_compare(cli, tmp_path, own_cache):
    """Was: `validate` said "0 flagged" for an INV seed without variants that `run` refused."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(_inv_seed(text="my sister liked the film")) + "\n")
    assert_clean_error(cli("validate", "--task", "sentiment", "--lc", "11", "--seeds", str(seeds)), 2,
                       "an INV test", "has none")


def test_p20_rows_followup_an_inv_expansion_without_variants_is_left_out_not_the_run(cli, tmp_path, own_cache):
    """An expansion whose insertion left no identity term to swap ("the women") tests nothing: it is left out with a
    warning; the seed still runs (the first fix refused the whole run for it)."""
    seeds, exps = tmp_path / "s.jsonl", tmp_path / "x.jsonl"
    seeds.write_text(json.dumps(_inv_seed()) + "\n")
    exps.write_text(json.dumps({"id": "e1", "seed_id": "w1", "lc_id": "sentiment-lc11", "task": "sentiment",
                                "text": "the women think the show is good", "accepted": True}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "11", "--seeds", str(seeds),
                  "--expansions", str(exps), "--out", str(tmp_path / "r"))
    assert outcome.code == 0, outcome.err
    assert "left out" in outcome.err and "no variants" in outcome.err
    from alict_core.runner.run import RunResult

    assert [c.kind for c in RunResult.load(tmp_path / "r").case_list] == ["seed"]


@pytest.mark.usefixtures("fake_backends")
def test_p20_pages_4_re_scoring_a_judged_case_keeps_its_note(tmp_path, monkeypatch):
    """Was: in a later session, "← Back" to a judged case showed its scores but an empty Note field, and scoring it
    again replaced the saved note with nothing."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import dispose_engines
    from alict_core.runner import build_cases
    from tests.test_review_app import open_review

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film number {i}",
              "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}} for i in range(3)]
    store = ReviewStore()
    task, _ = create_review_task(store, "pilot", "sentiment", build_cases(seeds),
                                 SamplingPlan(n_sets=1, k=1, size=3), reviewers=["cara"])
    try:
        at = open_review("cara")
        first = store.items(task.id)[0]
        at.text_input(key=f"review_note_{first.id}").set_value("IMPORTANT: see ticket 42").run()
        for step, value in (("relevance", 2), ("label", 1)):
            at.button(key=f"review_{step}_{value}").click().run()
        assert store.judgements(task.id, reviewer="cara")[0]["note"] == "IMPORTANT: see ticket 42"
        later = open_review("cara")  # a new session
        later.button(key="review_back").click().run()
        assert later.text_input(key=f"review_note_{first.id}").value == "IMPORTANT: see ticket 42"
        for step, value in (("relevance", 3), ("label", 2)):
            later.button(key=f"review_{step}_{value}").click().run()
        saved = store.judgements(task.id, reviewer="cara")[0]
        assert (saved["relevance"], saved["note"]) == (3, "IMPORTANT: see ticket 42")
    finally:
        dispose_engines()


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p20_pages_2_a_user_model_of_one_task_keeps_the_other_tasks_model_of_that_name():
    """Was: adding "mine" under hate speech silently removed the sentiment model "mine"."""
    from tests.test_app_explorer import start as start_app

    at = start_app()
    at.session_state["user_models"] = [{"name": "vader", "kwargs": {}, "label": "mine", "task": "sentiment"}]
    at.session_state["um_pending"] = {"name": "profanity-check", "kwargs": {}, "label": "mine",
                                      "task": "hate_speech"}
    at.switch_page("pages/run.py").run()
    assert not at.exception
    assert sorted(m["task"] for m in at.session_state["user_models"]) == ["hate_speech", "sentiment"]


@pytest.mark.usefixtures("fake_backends")
def test_p20_pages_6b_a_review_link_naming_an_unknown_task_is_said(tmp_path, monkeypatch):
    """Was: `?review=<unknown>&reviewer=dan` opened another review task without a word, ready to take a set."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import dispose_engines
    from alict_core.runner import build_cases

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    seeds = [{"id": "s0", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a fine film",
              "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}}]
    store = ReviewStore()
    create_review_task(store, "other", "sentiment", build_cases(seeds), SamplingPlan(n_sets=1, k=1, size=1),
                       reviewers=["dan"])
    from streamlit.testing.v1 import AppTest

    from tests.test_review_app import APP

    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["review"] = "pilot"  # no such task
    at.query_params["reviewer"] = "dan"
    at.run()
    at.switch_page("pages/review.py").run()
    try:
        assert not at.exception
        assert any("is not a review task" in w.value for w in at.warning), [w.value for w in at.warning]
    finally:
        dispose_engines()


def test_p20_pages_1c_a_hardening_export_leaves_out_cases_rejected_in_review(cli, tmp_path, own_cache, monkeypatch):
    """Was: `harden export` of a run from before a confirmed write-back exported the cases reviewers rejected."""
    import alict_core.review.writeback as writeback
    from alict_core.harden.export import run_rows

    seeds = tmp_path / "s.jsonl"
    seeds.write_text("".join(json.dumps(seed_row(id=f"s{i}", text=f"a fine film number {i}")) + "\n"
                             for i in range(3)))
    assert cli(*_run_argv(tmp_path, seeds)).code == 0
    monkeypatch.setattr(writeback.RejectionFilter, "__call__", lambda self, case: case.case_id == "s1")
    _, rows = run_rows(tmp_path / "r")
    assert sorted(r["case_id"] for r in rows) == ["s0", "s2"]


def _suite_file(tmp_path: Path) -> Path:
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps({"case_id": "c1", "lc_id": "mine:t1", "kind": "seed", "seed_id": "c1",
                                 "text": "a fine film", "expected": {"kind": "label", "labels": ["positive"]},
                                 "test_type": "MFT", "task": "sentiment"}) + "\n")
    return suite


def test_p20_leftover_suite_expansions_that_no_suite_case_takes_are_said(cli, tmp_path, own_cache):
    """Was (pass-20 rows leftover): `run --suite S --no-lcs --expansions E` whose rows hang on no case of S ran
    the suite alone, exit 0, without a word."""
    exps = tmp_path / "x.jsonl"
    exps.write_text(json.dumps({"id": "e1", "seed_id": "nosuch", "lc_id": "mine:t1", "task": "sentiment",
                                "text": "a very fine film", "accepted": True}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(_suite_file(tmp_path)),
                  "--no-lcs", "--expansions", str(exps), "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "none of the 1 accepted row(s) of the suites' tests", "nosuch")
    assert not (tmp_path / "r").exists()


def test_p20_leftover_reviewers_who_would_get_nothing_are_said():
    """Was: `review sample --reviewers a,b,c,d,e,f --k 2 --sets 1` assigned a and b; c to f got nothing, unsaid."""
    from alict_core.review.sampling import assign_sets
    from alict_core.review.store import ReviewError

    with pytest.raises(ReviewError, match="c, d, e would get nothing"):
        assign_sets(1, 2, ["a", "b", "c", "d", "e", "f"])
    assert assign_sets(2, 2, ["a", "b", "c", "d"]) == [(0, "a"), (0, "b"), (1, "c"), (1, "d")]


def test_p20_leftover_an_address_with_a_name_after_percent_is_a_name_never_looked_up(monkeypatch):
    """Was: "10.0.0.1%x.evil.example" counted as an address written out and reached getaddrinfo from the browser."""
    import socket

    from alict_core.common.trust import TrustError, check_endpoint

    def no_lookup(*args, **kwargs):
        raise AssertionError(f"looked up {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    with pytest.raises(TrustError):
        check_endpoint("http://10.0.0.1%25x.evil.example:8080/p", loopback=False)


@pytest.mark.parametrize("value", [4.0, 3.9999999999999999, 5e0])
def test_p20_leftover_a_json_score_written_as_a_fraction_is_refused_as_csv_refuses_it(value):
    """Was: `review import` of JSON 4.0 (or 5e0, or 3.9999999999999999) stored score 4; CSV "4.0" was refused."""
    from alict_core.review.store import ReviewError, check_score

    with pytest.raises(ReviewError, match="must be an integer from 1 to 5"):
        check_score("relevance", value)
    assert check_score("relevance", 4) == 4 and check_score("relevance", " 4 ") == 4
