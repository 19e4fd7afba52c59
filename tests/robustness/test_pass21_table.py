"""Hostile pass 21 table (notes: attack_pass21_{cli,pages,kill}.md): one row per fix, each failing on the code
before it (checked on a worktree of `4799306`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import seed_row

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.parametrize("change", ["tensors", "extra"])
def test_p21_kill_2_a_checkpoint_whose_files_changed_is_not_resumed(tmp_path, change):
    """Was: a build checkpoint's tensors edited between a kill and the re-run were resumed and sealed into the
    artefact without a word (the checkpoint had a key of its settings, no hash of its files)."""
    import torch

    from alict_core.training.checkpoint import TENSORS_FILE, Checkpoints

    best = tmp_path / "best"
    best.mkdir()
    (best / "model.bin").write_text("best of step 2")
    checkpoints = Checkpoints(tmp_path / "ckpt", every=1, log=lambda _: None)
    checkpoints.resume("k")
    saved = checkpoints.save(2, {}, {"w": torch.ones(4)}, extras={"best": (best, 2)})
    target = saved / TENSORS_FILE if change == "tensors" else saved / "best" / "model.bin"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0x01
    target.write_bytes(bytes(data))
    said: list[str] = []
    assert Checkpoints(tmp_path / "ckpt", every=1, log=said.append).resume("k") is None
    assert any("changed since it was written" in line for line in said)


def test_p21_kill_1_the_build_lock_never_follows_a_link(tmp_path):
    """Was: a link at `<models>/<profile>/.<target>.lock` made `build` empty the file it led to (and a named pipe
    there: exit 3, not seekable)."""
    from alict_core.common.errors import AlictError
    from alict_core.training.staging import build_lock, lock_path

    victim = tmp_path / "victim.txt"
    victim.write_text("important data")
    folder = tmp_path / "models" / "micro" / "parser"
    folder.parent.mkdir(parents=True)
    os.symlink(victim, lock_path(folder))
    with pytest.raises(AlictError, match="not a plain file"):
        with build_lock(folder, log=lambda _: None):
            pass
    assert victim.read_text() == "important data"
    os.unlink(lock_path(folder))
    os.mkfifo(lock_path(folder))
    with pytest.raises(AlictError, match="not a plain file"):
        with build_lock(folder, log=lambda _: None):
            pass


def test_p21_kill_3_a_named_pipe_in_the_prediction_cache_is_quarantined_not_waited_on(cli, tmp_path, own_cache):
    """Was: a named pipe among a model's prediction shards hung every run of that model without a word."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--no-story"]
    assert cli(*argv, "--out", str(tmp_path / "a")).code == 0
    shards = next((own_cache / "predictions").glob("*/meta.json")).parent
    os.mkfifo(shards / "b-0000fifo0000.json")
    outcome = cli(*argv, "--out", str(tmp_path / "b"))
    assert outcome.code == 0, outcome.err
    assert "not a plain file" in outcome.err
    assert not (shards / "b-0000fifo0000.json").exists()


def test_p21_kill_4_an_export_checks_its_folder_again_at_the_swap(tmp_path):
    """Was: `report --export E` swapped its export over a file another command wrote into E meanwhile (the
    report `report --out E/r.html` wrote there was lost; both said they had written)."""
    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import atomic_dir

    target = tmp_path / "E"
    with pytest.raises(AlictError, match="already holds other files"):
        with atomic_dir(target, owned=("cases.jsonl",), kind="export") as tmp:
            (tmp / "cases.jsonl").write_text("{}\n")
            target.mkdir()
            (target / "r.html").write_text("<html>another command's report</html>")
    assert (target / "r.html").read_text().startswith("<html>")


def _run_argv(tmp_path: Path, seeds: Path, *more: str) -> list[str]:
    return ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
            str(tmp_path / "r"), *more]


def _case_row(**change) -> dict:
    return {"case_id": "c1", "lc_id": "mysuite:t1", "kind": "seed", "seed_id": "c1", "text": "This is fine .",
            "expected": {"kind": "not_label", "labels": ["negative"]}, "test_type": "MFT", "task": "sentiment",
            **change}


@pytest.mark.parametrize("where", ["seeds", "suite", "expansion"])
def test_p21_cli_5_an_mft_case_with_variants_is_refused(cli, tmp_path, own_cache, where):
    """Was: an MFT case with variants ran them through the model and never judged them ("1 variant, 0 failing")."""
    seeds = tmp_path / "s.jsonl"
    variants = {"variants": ["This is horrible awful disgusting ."]}
    seeds.write_text(json.dumps(seed_row(**(variants if where == "seeds" else {}))) + "\n")
    if where == "suite":
        suite = tmp_path / "cases.jsonl"
        suite.write_text(json.dumps(_case_row(**variants)) + "\n")
        argv = ["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--out",
                str(tmp_path / "r")]
    elif where == "expansion":
        exps = tmp_path / "x.jsonl"
        exps.write_text(json.dumps({"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04", "text": "a very fine film",
                                    "accepted": True, **variants}) + "\n")
        argv = _run_argv(tmp_path, seeds, "--expansions", str(exps))
    else:
        argv = _run_argv(tmp_path, seeds)
    assert_clean_error(cli(*argv), 2, "an MFT test is judged on its text alone")
    assert not (tmp_path / "r").exists()


def test_p21_cli_2_suite_cases_of_a_run_lc_are_not_merged_into_it(cli, tmp_path, own_cache):
    """Was: `run --lc 4 --seeds S --suite <cases of sentiment-lc04>` merged the suite's cases into LC4's rate."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps(_case_row(lc_id="sentiment-lc04", case_id="x1", seed_id="x1",
                                          capability="Negation")) + "\n")
    assert_clean_error(cli(*_run_argv(tmp_path, seeds, "--suite", str(suite))), 2, "would be merged")


@pytest.mark.parametrize("given", [["--seeds"], ["--lc", "4"]])
def test_p21_cli_8_no_lcs_with_lc_options_is_refused(cli, tmp_path, own_cache, given):
    """Was: `run --no-lcs --seeds S --suite T` ran the suite alone; the seeds (or --lc) were ignored, unsaid."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps(_case_row()) + "\n")
    extra = [given[0], str(seeds)] if given == ["--seeds"] else given
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", *extra, "--suite", str(suite),
                  "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "--no-lcs runs only the --suite files")


def test_p21_cli_6_a_runs_exported_cases_are_no_expansions(cli, tmp_path, own_cache):
    """Was: a run's exported cases.jsonl given as --expansions made each seed an expansion of itself."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    exps = tmp_path / "cases.jsonl"
    exps.write_text(json.dumps({**_case_row(lc_id="sentiment-lc04", case_id="s1", seed_id="s1",
                                            text="a fine film")}) + "\n")
    assert_clean_error(cli(*_run_argv(tmp_path, seeds, "--expansions", str(exps), "--keep-flagged")), 2,
                       "cases.jsonl:1", "not an expansion row")


@pytest.mark.parametrize("row", [{"negative": 0.9, "neutral": 0.05, "positive": 0.05, "label": "neutral"},
                                 {"negative": 0.9, "label": "neutral"}], ids=["both", "partial-columns"])
def test_p21_cli_3_a_prediction_row_with_columns_and_a_label_is_refused(cli, tmp_path, own_cache, row):
    """Was: the columns silently won over a contradicting label (or a partial row's label over its column)."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"text": "a fine film", **row}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", f"static:path={predictions}", "--lc", "4", "--seeds",
                  str(seeds), "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "p.jsonl:1")


def test_p21_cli_9_an_upper_case_gzip_suite_is_read(cli, tmp_path, own_cache):
    """Was: `--suite UP.JSON.GZ` was refused as "not UTF-8 text" (the gzip check was case-sensitive)."""
    import gzip

    suite = tmp_path / "UP.JSON.GZ"
    with gzip.open(suite, "wt") as handle:
        json.dump({"t1": {"type": "MFT", "capability": "Vocab", "data": ["good film"], "labels": 2}}, handle)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--out",
                  str(tmp_path / "r"))
    assert outcome.code == 0, outcome.err


def test_p21_cli_7_seeds_all_with_max_is_refused(cli, tmp_path, own_cache):
    """Was: `seeds --all --max 3` wrote every candidate; --max was ignored without a word."""
    outcome = cli("seeds", "--task", "sentiment", "--lc", "1", "--all", "--max", "3", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "--all", "--max")
    assert not (tmp_path / "s").exists()


def test_p21_kill_6_a_safetensors_out_of_space_error_is_one_message(cli, monkeypatch):
    """Was: safetensors' own "File too large (os error 27)" during `build` was exit 3, an internal error."""
    import alict_core.cli as cli_module

    def full(args):
        raise Exception("Error while serializing: I/O error: File too large (os error 27)")

    monkeypatch.setattr(cli_module, "check_settings", lambda: full(None))
    assert_clean_error(cli("data", "info"), 2, "out of space while writing")


def test_p21_kill_5_a_runs_own_report_waits_for_a_rewrite_of_the_run(cli, tmp_path, own_cache, monkeypatch):
    """Was: `report X --out X/report.html` racing `run --out X` left the old run's report in the new run's folder.
    The report now reads and writes under the run's lock, so the re-write waits for it (and the report is of the
    run it read)."""
    import alict_core.runner.stream as stream

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    assert cli(*_run_argv(tmp_path, seeds)).code == 0
    held: list[Path] = []
    real = stream.run_lock

    def spy(folder):
        held.append(Path(folder))
        return real(folder)

    monkeypatch.setattr(stream, "run_lock", spy)
    assert cli("report", str(tmp_path / "r"), "--out", str(tmp_path / "r" / "report.html")).code == 0
    assert held == [tmp_path / "r"]


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p21_pages_2_a_compare_link_naming_an_unknown_run_a_is_said():
    """Was: `/compare?run=<unknown>` compared the newest run instead, without a word (the pass-20 note covered only
    run_b and the models)."""
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    run_fake(start_app(), lcs=("sentiment-lc04",))
    at = start_app({"run": "deadbeefdeadbeef"})
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert any("The link's run" in w.value and "deadbeef" in w.value for w in at.warning), [w.value for w in at.warning]


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p21_pages_4_a_review_task_is_never_sampled_from_a_run_the_user_did_not_pick(tmp_path, monkeypatch):
    """Was: the run picked in "New review task", removed before the submit, was replaced by the newest run, and the
    task was sampled (written) from that run."""
    import shutil

    from alict_app import runs
    from alict_core.review import ReviewStore
    from alict_core.review.store import dispose_engines
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    first = run_fake(start_app(), lcs=("sentiment-lc04",))
    run_fake(start_app(), lcs=("sentiment-lc01",))
    at = start_app()
    at.switch_page("pages/review.py").run()
    menu = next(s for s in at.selectbox if s.key == "review_create_run_sentiment")
    menu.set_value(first)  # inside the form: sent with the submit
    at.text_input[[t.label for t in at.text_input].index("Review task name")].set_value("moved")
    shutil.move(str(runs.run_dir(first)), str(tmp_path / "elsewhere"))
    at.button[[b.label for b in at.button].index("Create review task")].click().run()
    try:
        assert not at.exception
        assert any("no longer there" in e.value for e in at.error), [s.value for s in at.success]
        assert [t.name for t in ReviewStore().tasks("sentiment")] == []
    finally:
        dispose_engines()


def test_p21_pages_1_lego_previews_write_no_prediction_shards(tmp_path, monkeypatch):
    """Was: each sentence typed on the Adjunct trees page wrote a prediction shard to the disk cache (page views
    grew the disk without bound): its previews run with ``memory_only``."""
    from alict_core.cases.testcases import build_cases
    from alict_core.runner.run import run_suite

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    cases = build_cases([seed_row()])
    result = run_suite(cases, ["vader"], memory_only=True)
    assert len(result.outcomes) == 1
    assert not list((tmp_path / "cache").rglob("b-*.json"))
    import inspect

    import alict_app.lego_panels as panels

    assert "memory_only=True" in inspect.getsource(panels)  # the page's call
