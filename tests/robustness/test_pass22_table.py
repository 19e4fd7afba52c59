"""Pass 22 rows: each finding of the hostile pass (and the pass-21 leftovers taken up), a row that failed before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p22_left_1_a_report_download_of_a_run_removed_after_the_draw_gives_the_drawn_run(tmp_path, monkeypatch):
    """Was (pass-21 leftover): the CheckList JSON and HTML downloads re-read the run at the click; a run removed
    after the page was drawn failed the download with a server traceback and nothing in the browser."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    from alict_app import runs
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    deferred: dict[str, object] = {}
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, mimetype, coordinates, file_name=None, **more):
        deferred[str(file_name)] = data_callable
        return real(self, data_callable, mimetype, coordinates, file_name, **more)

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    key = run_fake(start_app(), lcs=("sentiment-lc04",))
    at = start_app({"run": key})
    at.switch_page("pages/report.py").run()
    assert not at.exception
    shutil.move(str(runs.run_dir(key)), str(tmp_path / "elsewhere"))
    made = {name: make() for name, make in deferred.items() if name.endswith((".html", "-checklist.json"))}
    assert len(made) == 2, sorted(deferred)
    assert all(len(text) > 200 for text in made.values())
    assert any("sentiment-lc04" in text or "LC4" in text for text in made.values())


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p22_left_1b_a_big_runs_html_download_of_a_removed_run_says_so(tmp_path):
    """The large-run HTML report reads the Parquet parts at the click: a run removed since the draw gives a page
    that says so (was: a server traceback, nothing in the browser)."""
    from alict_app import reporting, runs
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    key = run_fake(start_app(), lcs=("sentiment-lc04",))
    reader = runs.reader(key)
    assert "<html" in reporting.reader_report(reader, key).lower()
    shutil.move(str(runs.run_dir(key)), str(tmp_path / "elsewhere"))
    text = reporting.reader_report(reader, key)
    assert "removed or re-written" in text and key in text


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p22_left_2_collect_templates_pressed_for_a_removed_run_collects_nothing(tmp_path):
    """Was (pass-21 leftover): "Collect templates" pressed on the Failures page of a run removed since the draw
    collected the templates of the run the picker fell back to, which the user never saw."""
    from alict_app import runs
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    at = start_app()
    other = run_fake(at, lcs=("sentiment-lc01", "sentiment-lc05"))
    first = run_fake(at, lcs=("sentiment-lc01", "sentiment-lc05", "sentiment-lc04"))
    assert first != other
    at.switch_page("pages/failures.py").run()
    assert not at.exception
    assert [b for b in at.button if b.key == "rt_go"], "the run has failures to collect templates of"
    shutil.move(str(runs.run_dir(first)), str(tmp_path / "elsewhere"))
    next(b for b in at.button if b.key == "rt_go").click().run()
    assert not at.exception
    assert any("no longer there" in e.value for e in at.error), [e.value for e in at.error]
    assert any("shown before is no longer here" in c.value for c in at.caption), [c.value for c in at.caption]
    assert not at.dataframe or all("template" not in str(d.value.columns).lower() for d in at.dataframe)


@pytest.mark.parametrize("labels,expected,agrees", [
    (2, {"kind": "label", "labels": ["negative"]}, False),
    ([0], {"kind": "label", "labels": ["positive"]}, False),
    ([[0, 1]], {"kind": "one_of", "labels": ["neutral", "negative"]}, True),
    ("negative", {"kind": "label", "labels": ["negative"]}, True),
    ([None], {"kind": "label", "labels": ["negative"]}, True),
])
def test_p22_left_3_a_checklist_test_whose_labels_and_expected_disagree_is_refused(tmp_path, labels, expected, agrees):
    """Was (pass-21 leftover): `labels` said one label, `expected` another, and `expected` was used without a word."""
    import json

    from alict_core.suites import SuiteFormatError
    from alict_core.suites.checklist import read_checklist

    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"t": {"type": "MFT", "capability": "c", "data": ["a film"], "labels": labels,
                                       "expected": [dict(expected, tolerance=None)]}}), encoding="utf-8")
    if agrees:
        assert read_checklist(suite, "sentiment").cases[0].expected["labels"] == expected["labels"]
    else:
        with pytest.raises(SuiteFormatError, match="'labels' says .* 'expected' says"):
            read_checklist(suite, "sentiment")


def test_p22_left_4_link_to_this_view_never_hands_out_the_reviewer_name(tmp_path, monkeypatch):
    """Was (pass-20 leftover): the sidebar's "Link to this view" carried `reviewer=`: whoever opened a shared link
    judged under the sharer's name."""
    import re

    from streamlit.testing.v1 import AppTest

    from alict_core.review.store import dispose_engines

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["reviewer"] = "ann"
    at.query_params["lc"] = "sentiment-lc04"
    at.run()
    at.switch_page("pages/review.py").run()
    try:
        assert not at.exception
        links = [m.value for m in at.sidebar.markdown if "Link to this view" in m.value]
        assert links, [m.value[:60] for m in at.sidebar.markdown]
        href = re.search(r"\]\((\?[^)]*)\)", links[-1]).group(1)
        assert "lc=sentiment-lc04" in href and "reviewer" not in href, href
    finally:
        dispose_engines()


def test_p22_pages_1_cli_an_lc_asked_for_without_cases_is_said(cli, tmp_path, own_cache):
    """Was: `run --lc 4 --lc 5` over seeds of LC4 only ran LC4 and said nothing of LC5 (exit 0)."""
    import json

    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--lc", "5", "--seeds", str(seeds),
                  "--out", str(tmp_path / "r"), "--quiet")
    assert outcome.code == 0, outcome.err[-400:]
    assert "warning: sentiment-lc05 is not in this run: no seed in the --seeds files" in outcome.err, outcome.err
    assert "sentiment-lc04 is not in this run" not in outcome.err


def test_p22_pages_1_core_an_lc_whose_cases_were_all_rejected_is_named():
    """The plan tells why an LC asked for is not in a run: no seed, every case flagged, or (cases planned but none
    run) every case rejected by reviewers."""
    from alict_core.plan import Plan

    plan = Plan([], lc_ids=("sentiment-lc01", "sentiment-lc03", "sentiment-lc05"),
                no_cases={"sentiment-lc05": "found no seeds in the corpus"})
    assert plan.lcs_not_run(["sentiment-lc01"]) == {
        "sentiment-lc03": "every case was left out as rejected by human reviewers",
        "sentiment-lc05": "found no seeds in the corpus"}


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p22_pages_1_app_a_press_finding_a_finished_run_keeps_its_request_and_says_the_missing_lc(monkeypatch):
    """Was: a Run-page press for LC1 + an LC without cases served the LC1 run without a word, named "2 LCs", and
    rewrote that run's request.json (the earlier request's "last run of these settings" lost)."""
    from alict_app import runs
    from alict_core.lcspec import load_task_specs
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    key = run_fake(start_app(), lcs=("sentiment-lc01",))
    before = (runs.run_dir(key) / "request.json").read_bytes()
    specs = {s.id: s for s in load_task_specs("sentiment")}
    lc05 = specs["sentiment-lc05"]
    monkeypatch.setattr(runs, "plan_hooks", lambda request, progress, should_stop: __import__(
        "alict_core.plan", fromlist=["PlanHooks"]).PlanHooks(
        find_seeds=lambda spec, cap, wanted: [] if spec.id == lc05.id else real_find(spec, cap, wanted)))
    from alict_core.plan import corpus_seed_finder

    real_find = corpus_seed_finder("sentiment")
    info = runs.run_info(key)
    request = runs.RunRequest(**{**info["request"], "lc_ids": ["sentiment-lc01", "sentiment-lc05"]})
    said: dict[str, str] = {}
    again = runs.execute(request, {lc: specs[lc] for lc in request.lc_ids}, lambda m, f: None,
                         on_left_out=said.update)
    assert again == key
    assert said == {"sentiment-lc05": "found no seeds in the corpus"}
    assert (runs.run_dir(key) / "request.json").read_bytes() == before
    assert " 1 LCs " in runs.describe_run(runs.run_info(key))


def test_p22_pages_2_a_review_task_name_with_a_combining_accent_is_stored_composed(tmp_path):
    """Was: the name 'e' + a combining acute was refused as having "leading or trailing spaces" (it was compared
    with its composed form)."""
    from alict_core.review import ReviewStore
    from alict_core.review.store import ReviewError, dispose_engines

    store = ReviewStore(f"sqlite:///{tmp_path / 'review.sqlite'}")
    try:
        made = store.create_task("cafe\u0301", "sentiment", {}, [])
        assert made.name == "café"
        assert store.task("cafe\u0301").id == store.task("café").id == made.id
        with pytest.raises(ReviewError, match="already exists"):
            store.create_task("café", "sentiment", {}, [])
        with pytest.raises(ReviewError, match="leading or trailing spaces"):
            store.create_task(" café", "sentiment", {}, [])
    finally:
        dispose_engines()


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p22_pages_3_an_lc_whose_spec_is_removed_before_the_press_runs_nothing(tmp_path, monkeypatch):
    """Was: an LC chosen on the Run page whose workspace spec was removed before the press was dropped without a
    word, and the run went ahead with the other LCs (or said "no test cases to run" with no reason)."""
    from alict_app import runs
    from tests.robustness.support import workspace_spec
    from tests.test_app_explorer import start as start_app

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    mine = workspace_spec(tmp_path / "ws", "sentiment-x02")
    at = start_app()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc02", "sentiment-x02"])
    at.number_input(key="max_seeds").set_value(3)
    at.run()
    assert not at.exception
    mine.unlink()
    at.button(key="run_go").click().run()
    assert not at.exception
    assert any("No longer there" in w.value and "x02" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert any("Nothing run" in e.value for e in at.error), [e.value for e in at.error]
    assert runs.list_runs("sentiment") == []


def test_p22_left_5_workspace_specs_have_a_count_limit(tmp_path, monkeypatch, cli):
    """Was (pass-20 leftover): every spec file of the workspace was read and checked on every page view and command,
    however many there were."""
    from tests.robustness.conftest import assert_clean_error
    from tests.robustness.support import workspace_spec

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    for n in range(3):
        workspace_spec(tmp_path / "ws", f"sentiment-x{n:02d}")
    monkeypatch.setenv("ALICT_LIMIT_WORKSPACE_SPECS", "2")
    assert_clean_error(cli("seeds", "--task", "sentiment", "--lc", "1", "--max", "1"), 2, "3 is over the limit of 2",
                       "ALICT_LIMIT_WORKSPACE_SPECS")
    monkeypatch.setenv("ALICT_LIMIT_WORKSPACE_SPECS", "3")
    from alict_core.lcspec import load_task_specs

    assert {"sentiment-x00", "sentiment-x02"} <= {s.id for s in load_task_specs("sentiment")}


@pytest.mark.parametrize("existing", [False, True])
def test_p22_kill_1_a_merge_writer_never_swaps_over_a_file_written_meanwhile(tmp_path, existing):
    """Was: `seeds --out SR` / `expand --out ER` (merge writers) swapped their copy in over whatever another
    command wrote into the folder meanwhile: a report, or a whole saved run (`run --out SR/r1`), was lost while
    both commands said exit 0."""
    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import atomic_dir

    target = tmp_path / "SR"
    if existing:
        target.mkdir()
        (target / "sentiment-lc02.jsonl").write_text("{}\n")
    with pytest.raises(AlictError, match="another command wrote into 'SR'"):
        with atomic_dir(target, owned=("*.jsonl",), merge=True) as tmp:
            (tmp / "sentiment-lc03.jsonl").write_text("{}\n")
            target.mkdir(exist_ok=True)
            (target / "r.html").write_text("<html>another command's report</html>")
    assert (target / "r.html").read_text().startswith("<html>")
    assert not (target / "sentiment-lc03.jsonl").exists()
    with atomic_dir(tmp_path / "quiet", owned=("*.jsonl",), merge=True) as tmp:  # nothing written meanwhile: swapped
        (tmp / "a.jsonl").write_text("{}\n")
    assert (tmp_path / "quiet" / "a.jsonl").exists()


def test_p22_kill_4_an_output_inside_a_run_being_written_is_refused(tmp_path, cli, own_cache):
    """Was: `report OTHER --out RD/r.html` while `run --out RD` was still writing RD (no manifest yet) was written
    there, and the run's manifest then sealed another run's report into it."""
    import json

    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import check_output_file

    folder = tmp_path / "RD"
    (folder / "counts").mkdir(parents=True)
    (folder / "progress.json").write_text(json.dumps({"status": "running", "run_id": "a995", "n_shards": 3,
                                                      "shards_done": 1, "parts": {"0": "x"}}))
    with pytest.raises(AlictError, match="lies inside the saved artefact"):
        check_output_file(folder / "r.html", "--out", report=True)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "progress.json").write_text('{"done": 3}')  # a user's own progress.json: no run
    check_output_file(tmp_path / "mine" / "r.html", "--out", report=True)


@pytest.mark.parametrize("edit", ["best", "lr_scale", "list", "step_null", "unsealed"])
def test_p22_kill_2_3_an_edited_or_malformed_checkpoint_state_is_never_resumed(tmp_path, edit):
    """Was: state.json was outside the checkpoint's hashes (an edited best dev score or learning-rate scale was
    resumed and sealed into a different model without a word), and a state.json that was a list, or had a null
    step, failed every later build with exit 3 (AttributeError / TypeError) and was never removed."""
    import json

    import torch

    from alict_core.training.checkpoint import STATE_FILE, Checkpoints

    checkpoints = Checkpoints(tmp_path / "ckpt", every=1, log=lambda _: None)
    checkpoints.resume("k")
    state = {"best": {"dev": 0.2, "step": 1}, "lr_scale": 1.0, "history": [[1, 0.5]]}
    saved = checkpoints.save(2, state, {"w": torch.ones(4)})
    resumed = Checkpoints(tmp_path / "ckpt", every=1, log=lambda _: None).resume("k")
    assert resumed is not None and resumed.step == 2 and resumed.state["best"] == {"dev": 0.2, "step": 1}
    record = json.loads((saved / STATE_FILE).read_text())
    if edit == "best":
        record["best"] = {"dev": 0.99, "step": 3}
    elif edit == "lr_scale":
        record["lr_scale"] = 0.0
    elif edit == "step_null":
        record["step"] = None
    elif edit == "unsealed":
        record.pop("sealed")
    else:
        record = []
    (saved / STATE_FILE).write_text(json.dumps(record))
    said: list[str] = []
    assert Checkpoints(tmp_path / "ckpt", every=1, log=said.append).resume("k") is None
    assert said and not saved.exists()


def test_p22_kill_5_a_recorded_shard_whose_counts_and_record_were_both_edited_is_redone(tmp_path):
    """Was: a killed run's counts file edited and its checksum written into progress.json was kept on resume: the
    run's summary said a fail rate of 1.0 where its results (and report) said 0.333."""
    import json

    from alict_core.common.manifest import sha256_file
    from alict_core.runner.stream import run_streaming
    from tests.robustness.support import cancelled_run
    from tests.test_stream import MODELS, assert_same_run, small_cases

    cases = small_cases()
    cancelled_run(tmp_path / "run", cases, tmp_path / "c")
    progress = tmp_path / "run" / "progress.json"
    state = json.loads(progress.read_text())
    shard = sorted(state["parts"])[0]
    counts_path = tmp_path / "run" / "counts" / f"part-{int(shard):05d}.json"
    counts = json.loads(counts_path.read_text())
    first = counts["counts"][0]
    key = next(k for k in first if k.startswith("n_fail"))
    first[key] = int(first[key]) + 2
    counts_path.write_text(json.dumps(counts))
    state["parts"][shard] = sha256_file(counts_path)
    progress.write_text(json.dumps(state))
    out = run_streaming(cases, MODELS, run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c")
    fresh = run_streaming(cases, MODELS, run_dir=tmp_path / "fresh", shard_size=10, cache_root=tmp_path / "c2")
    assert_same_run(out, fresh)
    assert (out / "summary.csv").read_text() == (fresh / "summary.csv").read_text()


def test_p22_cli_3_an_expansions_folder_reads_upper_case_jsonl_files(tmp_path):
    """Was: `--expansions DIR` read DIR/a.jsonl and silently left out DIR/B.JSONL (read when given as a file)."""
    import json

    from alict_core.plan.inputs import read_expansion_rows

    folder = tmp_path / "exd"
    folder.mkdir()
    for name, text in (("a.jsonl", "a very fine film"), ("B.JSONL", "a truly fine film")):
        (folder / name).write_text(json.dumps({"id": name, "seed_id": "s1", "lc_id": "sentiment-lc04",
                                               "text": text, "accepted": True}) + "\n")
    rows = read_expansion_rows([str(folder)], "sentiment")
    assert sorted(r["text"] for r in rows) == ["a truly fine film", "a very fine film"]


def test_p22_cli_4_an_output_in_a_folder_that_takes_no_file_names_the_folder_not_the_staging_file(cli):
    """Was: `--json /proc/e.json` said "cannot access '/proc/.e.json.<hex>.tmp'" (a hidden staging name)."""
    from tests.robustness.conftest import assert_clean_error

    outcome = cli("explain", "--text", "good film .", "--model", "vader", "--no-template", "--json", "/proc/e.json")
    assert_clean_error(outcome, 2, "cannot write into the folder '/proc'", limit_s=60)
    assert ".tmp" not in outcome.err


@pytest.mark.parametrize("lc_id,capability,needle", [
    ("sentiment-lc04", "Vocabulary", "but is a Vocabulary MFT case"),
    ("hate_speech-lc01", "Vocabulary", "an LC id of the hate_speech task"),
    ("Sentiment-LC01", "Vocabulary", "only looks like the LC"),
    ("sentiment-lc01 ", "Vocabulary", "only looks like the LC"),
])
def test_p22_cli_2_a_suite_case_claiming_an_lc_it_is_not_is_refused(cli, tmp_path, own_cache, lc_id, capability,
                                                                    needle):
    """Was: a hand-made Vocabulary case under `sentiment-lc04` (an LC the run did not select) was reported under
    LC4's Negation title; another task's LC id and look-alike ids were run as LCs of their own."""
    import json

    from tests.robustness.conftest import assert_clean_error
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row(lc_id="sentiment-lc01", expected={"kind": "label", "labels": ["neutral"],
                                                                             "tolerance": None})) + "\n")
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps({"case_id": "c1", "lc_id": lc_id, "kind": "seed", "seed_id": "c1",
                                 "capability": capability, "test_type": "MFT", "task": "sentiment", "text": "good",
                                 "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--seeds", str(seeds), "--suite",
                  str(suite), "--out", str(tmp_path / "r"), "--quiet")
    assert_clean_error(outcome, 2, needle)
    assert not (tmp_path / "r").exists()


def test_p22_cli_2_an_exported_runs_cases_still_run_as_a_suite(cli, tmp_path, own_cache):
    """The neighbour that must keep working: a run's exported cases, run again alone as a suite (--no-lcs)."""
    import json

    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    first = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
                str(tmp_path / "r"), "--quiet")
    assert first.code == 0, first.err[-300:]
    assert cli("report", str(tmp_path / "r"), "--export", str(tmp_path / "e"), "--out",
               str(tmp_path / "report.html")).code == 0
    again = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite",
                str(tmp_path / "e" / "cases.jsonl"), "--out", str(tmp_path / "r2"), "--quiet")
    assert again.code == 0, again.err[-400:]


def test_p22_cli_d_a_model_argument_given_twice_is_refused(cli, tmp_path):
    """Was: `static:path=a.jsonl,path=b.jsonl`: the second path silently won."""
    from tests.robustness.conftest import assert_clean_error

    outcome = cli("run", "--task", "sentiment", "--models", "static:path=a.jsonl,path=b.jsonl", "--lc", "4",
                  "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "'path' is given twice")


def test_p22_cli_g_a_hatecheck_text_with_both_gold_labels_is_refused(tmp_path):
    """Was: the same test_case labelled hateful on one line and non-hateful on another was run (fail rate 0.5 for
    any model)."""
    from alict_core.suites import SuiteFormatError
    from alict_core.suites.hatecheck import read_hatecheck

    csv_file = tmp_path / "hc.csv"
    csv_file.write_text("functionality,case_id,test_case,label_gold\nf1,1,I hate them,hateful\n"
                        "f1,2,I love them,non-hateful\nf2,3,I  hate them,non-hateful\n", encoding="utf-8")
    with pytest.raises(SuiteFormatError, match="hc.csv:4.*the same test_case as line 2"):
        read_hatecheck(csv_file)


def test_p22_cli_c_lego_seeds_with_one_text_under_two_ids_are_said(tmp_path, caplog):
    """Was: two seed ids with one text gave one tree; the second id was dropped without a word."""
    import json
    import logging

    from alict_core.lego.pipeline import seeds_from_file

    seeds = tmp_path / "s.jsonl"
    seeds.write_text("".join(json.dumps({"id": i, "text": "the film was fine ."}) + "\n" for i in ("a", "b")))
    with caplog.at_level(logging.WARNING, logger="alict_core"):
        kept = seeds_from_file(seeds)
    assert [s.id for s in kept] == ["a"]
    assert any("seed 'b' is seed 'a''s text" in r.getMessage() for r in caplog.records), caplog.text


def test_p22_cli_dash_an_output_named_dash_is_refused(cli, tmp_path, own_cache):
    """Was: `--summary-json -` wrote a file named "-" where standard output was meant."""
    from tests.robustness.conftest import assert_clean_error

    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--max-seeds", "1",
                  "--summary-json", "-", "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "--summary-json '-'")
    assert not (tmp_path / "r").exists()


def test_p22_cli_1_validate_says_an_lc_without_seeds(cli, tmp_path, own_cache):
    """`validate --lc 4 --lc 5` over seeds of LC4 only: LC5 is said, as `run` says it."""
    import json

    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    outcome = cli("validate", "--task", "sentiment", "--lc", "4", "--lc", "5", "--seeds", str(seeds))
    assert outcome.code == 0, outcome.err[-300:]
    assert "warning: sentiment-lc05 has no seed in the --seeds files" in outcome.err


def test_p22_cli_b_an_expansion_made_from_another_seed_text_is_refused(cli, tmp_path, own_cache):
    """Was (pass-22 low): an expansion row whose `seed_text` is not its seed's text (another seed under the same id)
    was attached to that seed without a check."""
    from tests.robustness.conftest import assert_clean_error
    from tests.robustness.support import expansion_argv

    outcome = cli(*expansion_argv(tmp_path, "run", {"seed_text": "an awful film"}))
    assert_clean_error(outcome, 2, "was made from the text 'an awful film'")
    assert not (tmp_path / "r").exists()
    same = cli(*expansion_argv(tmp_path, "validate", {"seed_text": "a  fine film"}))  # spacing aside: its seed
    assert same.code == 0, same.err[-300:]


def test_p22_cli_minor_a_misspelled_limit_setting_is_refused(cli, monkeypatch):
    """Was (pass-22 minor): `ALICT_LIMIT_MAX_SEED=5` (a misspelling) was ignored; the default stayed in force."""
    from tests.robustness.conftest import assert_clean_error

    monkeypatch.setenv("ALICT_LIMIT_MAX_SEED", "5")
    assert_clean_error(cli("seeds", "--task", "sentiment", "--lc", "4", "--max", "1"), 2,
                       "ALICT_LIMIT_MAX_SEED is no setting", "ALICT_LIMIT_MAX_SEEDS")


def test_p22_cli_e_build_report_keeps_to_the_profile_asked_for(cli, own_cache):
    """Was (pass-22 low): `build --report --profile full` listed the quick artefacts (--profile was ignored)."""
    full = cli("build", "--report", "--profile", "full")
    assert full.code == 0 and "quick" not in full.out.split("default models:")[0], full.out[:400]
    assert "no model artefact of the full profile is built" in full.out
    every = cli("build", "--report")
    assert every.code == 0 and "quick" in every.out


def test_p22_left_6_discard_my_copy_asks_first(tmp_path, monkeypatch):
    """Was (pass-20 leftover): "Discard my copy" deleted a workspace-only spec in one click (no built-in to go back
    to: the spec was gone)."""
    from streamlit.testing.v1 import AppTest

    from tests.robustness.support import workspace_spec

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    root = Path(__file__).resolve().parents[2]
    mine = workspace_spec(tmp_path / "ws", "sentiment-x02")
    at = AppTest.from_file(str(root / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.query_params["lc"] = "sentiment-x02"
    at.run()
    at.switch_page("pages/specs.py").run()
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    assert at.button(key=f"discard::{editor.key}").disabled
    sure = at.checkbox(key=f"discard_ok::{editor.key}")
    assert "no built-in has this id" in sure.label
    sure.check().run()
    at.button(key=f"discard::{editor.key}").click().run()
    assert not at.exception and not mine.exists()
