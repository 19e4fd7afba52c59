"""Pass 25 rows: the pass-24 leftovers taken up, then the findings of pass 25 that were fixed; each failed before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("where", ["data", "specs", "parses", "runs"])
def test_p24_left_1_review_db_is_never_created_in_a_store_every_command_reads(cli, tmp_path, own_cache, monkeypatch,
                                                                              where):
    """Was: `review sample --db <data folder>/review.sqlite` (or the shipped or workspace specs, a derived cache, the
    run store) created the database there."""
    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)  # a data folder of its own (never the shared one: a regression writes there)
    (data / "sst" / "train.txt").write_text("(3 (2 a) (3 good))\n")
    monkeypatch.setenv("ALICT_DATA_DIR", str(data))
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))  # its specs, not the shipped ones (a
    # regression would write into the repo)
    folder = {"data": data, "specs": tmp_path / "ws" / "specs", "parses": own_cache / "parses",
              "runs": own_cache / "runs"}[where]
    folder.mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in folder.iterdir())
    cases = tmp_path / "cases.jsonl"
    from tests.robustness.support import small_cases

    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    outcome = cli("review", "sample", "--db", f"sqlite:///{folder / 'review.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, "put the review database elsewhere")
    assert sorted(p.name for p in folder.iterdir()) == before


def test_p24_left_2_a_shard_whose_counts_and_results_both_drop_a_model_is_predicted_again(tmp_path):
    """Was: a killed run's unrecorded shard whose counts and results both lacked one of the run's two models (hashes
    recomputed) was kept: the finished run's summary had no row of that model for the shard's cases."""
    import hashlib

    import pandas as pd

    from alict_core.runner.stream import run_streaming
    from tests.robustness.support import cancelled_run
    from tests.test_stream import MODELS, assert_same_run, small_cases

    cases = small_cases()
    run = tmp_path / "run"
    cancelled_run(run, cases, tmp_path / "c")
    progress = json.loads((run / "progress.json").read_text())
    progress["parts"].pop("0")  # killed between the worker's write and the record
    (run / "progress.json").write_text(json.dumps(progress))
    results = run / "results" / "part-00000.parquet"
    table = pd.read_parquet(results)
    table[table.model == MODELS[0]].to_parquet(results)
    counts_path = run / "counts" / "part-00000.json"
    counts = json.loads(counts_path.read_text())
    counts["models"] = [m for m in counts["models"] if m["name"] == MODELS[0]]
    counts["counts"] = [row for row in counts["counts"] if row["model"] == MODELS[0]]
    counts["results_sha256"] = hashlib.sha256(results.read_bytes()).hexdigest()
    counts_path.write_text(json.dumps(counts))
    out = run_streaming(cases, MODELS, run_dir=run, shard_size=10, cache_root=tmp_path / "c")
    fresh = run_streaming(cases, MODELS, run_dir=tmp_path / "fresh", shard_size=10, cache_root=tmp_path / "c2")
    assert_same_run(out, fresh)


def test_p24_left_3_a_refused_set_claim_creates_no_reviewer(tmp_path):
    """Was: claiming a set of a task whose sets were all taken created the reviewer row anyway."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.runner import build_cases

    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "test_type": "MFT",
              "text": f"a fine film number {i}", "expected": {"kind": "label", "labels": ["positive"],
                                                               "tolerance": None}} for i in range(2)]
    store = ReviewStore(f"sqlite:///{tmp_path / 'review.sqlite'}")
    task, _ = create_review_task(store, "t", "sentiment", build_cases(seeds), SamplingPlan(n_sets=1, k=1, size=2))
    assert store.claim_set(task.id, "ann") == 0
    assert store.claim_set(task.id, "bob") is None
    assert store.find_reviewer("bob") is None
    assert store.claim_set(task.id, "Ann") is None  # ann's own set: the same reviewer in another case
    assert store.find_reviewer("ann") is not None


def test_p23_left_1_writeback_preview_says_which_rule_is_in_force(cli, review_db):
    """Was: `review writeback --min-agreeing 3` (no --confirm) over a confirmed rule of 2 printed "ON; rule: at least
    3" and "are left out of", as if the previewed rule were in force."""
    url, _ = review_db
    assert cli("review", "writeback", "--db", url, "--task", "sentiment", "--confirm", "--by", "ann").code == 0
    shown = cli("review", "writeback", "--db", url, "--task", "sentiment", "--min-agreeing", "3")
    assert shown.code == 0, shown.err
    assert "rule in force: at least 2 agreeing reviewers; previewing at least 3" in shown.out
    assert "would be left out of" in shown.out and "are left out of" not in shown.out
    plain = cli("review", "writeback", "--db", url, "--task", "sentiment")
    assert "rule: at least 2 agreeing reviewers" in plain.out and "previewing" not in plain.out


def test_p22_left_1_a_batch_size_limit_below_the_default_is_the_default(cli, tmp_path, own_cache, monkeypatch):
    """Was: ALICT_LIMIT_BATCH_SIZE=10 refused every `run` that gave no --batch-size, naming a 64 never given."""
    from tests.robustness.support import seed_row

    monkeypatch.setenv("ALICT_LIMIT_BATCH_SIZE", "10")
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet"]
    assert cli(*argv, "--out", str(tmp_path / "r")).code == 0
    assert_clean_error(cli(*argv, "--out", str(tmp_path / "r2"), "--batch-size", "20"), 2, "20 is out of range [1, 10]")


def test_p25_cli_1_an_output_under_a_folder_whose_name_is_not_utf8_is_refused(cli, tmp_path, own_cache, monkeypatch):
    """Was: `run --out rX` from a folder whose name is not UTF-8 (or `--out link/rX`, the link leading into one) gave
    exit 3 after the work (the run lock's name, then Parquet, took the path as text)."""
    import os

    from tests.robustness.support import seed_row

    odd = Path(os.fsdecode(bytes(tmp_path) + b"/cw\xffd"))
    odd.mkdir()
    (odd / "s.jsonl").write_text(json.dumps(seed_row()) + "\n")
    (tmp_path / "link").symlink_to(odd)
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--quiet"]
    monkeypatch.chdir(odd)
    assert_clean_error(cli(*argv, "--seeds", "s.jsonl", "--out", "rX"), 2, "not valid UTF-8")
    monkeypatch.chdir(tmp_path)
    assert_clean_error(cli(*argv, "--seeds", "link/s.jsonl", "--out", "link/rV"), 2, "lies under a folder")
    assert sorted(p.name for p in odd.iterdir()) == ["s.jsonl"]
    monkeypatch.chdir(odd)  # reading from there and writing elsewhere is fine
    assert cli(*argv, "--seeds", "s.jsonl", "--out", str(tmp_path / "r")).code == 0


def test_p25_pages_1_a_user_model_display_name_with_a_comma_is_refused():
    """Was: a user model named "my,model" was added; a shared Failures view's model filter (comma-joined in the URL)
    reopened with the filter empty, and the run's name read "vader, my,model"."""
    from alict_app.user_models import default_label, user_model_problem

    assert "comma" in (user_model_problem({}, "my,model") or "")
    label = default_label("static", "/data/p,q.jsonl")  # a path with a comma gets a hashed name
    assert "," not in label and user_model_problem({}, label) is None


def test_p25_pages_2_a_spec_save_past_the_workspace_limit_is_refused(tmp_path, monkeypatch):
    """Was: the Specs page's Save wrote a spec past ALICT_LIMIT_WORKSPACE_SPECS; every later load of the task
    refused the whole folder, so every page of the task showed only that error and nothing could undo it."""
    from alict_core.common.errors import SpecError
    from alict_core.lcspec.loader import load_task_specs
    from alict_core.lcspec.workspace import save_spec_text
    from tests.robustness.support import workspace_spec

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    monkeypatch.setenv("ALICT_LIMIT_WORKSPACE_SPECS", "2")
    first = workspace_spec(tmp_path / "ws", "sentiment-lc01")
    text = first.read_text(encoding="utf-8")
    save_spec_text(first.parent, "sentiment-mine1.yaml", text.replace("sentiment-lc01", "sentiment-mine1"))
    with pytest.raises(SpecError, match="over the limit of 2"):
        save_spec_text(first.parent, "sentiment-mine2.yaml", text.replace("sentiment-lc01", "sentiment-mine2"))
    with pytest.raises(SpecError, match="over the limit of 2"):  # pass 26: "Overwrite if it exists" ticked
        save_spec_text(first.parent, "sentiment-mine2.yaml", text.replace("sentiment-lc01", "sentiment-mine2"),
                       overwrite=True)
    assert sorted(p.name for p in first.parent.iterdir()) == ["sentiment-lc01.yaml", "sentiment-mine1.yaml"]
    save_spec_text(first.parent, "sentiment-mine1.yaml", text.replace("sentiment-lc01", "sentiment-mine1"),
                   overwrite=True)
    assert {"sentiment-lc01", "sentiment-mine1"} <= {spec.id for spec in load_task_specs("sentiment")}


@pytest.mark.parametrize("items", [["my,model", "vader"], ["Zork, Quux"], ["100%,2C", "%2C", "a%25b"], ["plain"]])
def test_p25_pages_1_list_filters_in_a_link_keep_items_with_commas(items):
    """Was: list filters were comma-joined in the URL; a capability "Zork, Quux" (free text in a spec) or a model
    "my,model" came back from "Link to this view" as two unknown items: the filter empty, a wider view, no note."""
    from alict_app.view_state import decode_list, encode_list

    assert decode_list(encode_list(items)) == items
    assert decode_list("vader,textblob") == ["vader", "textblob"]  # links made before stay as they were


def test_p25_pages_3_a_run_is_called_finished_only_once_it_opens(tmp_path, own_cache, monkeypatch):
    """Was: "Runs in progress" said "Finished: open Failures or Report" for the seconds between the run's "done"
    status and its meta.json; Failures opened then said the run was not a finished run and showed another."""
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from alict_app import run_monitor

        run_monitor._attached("0123456789abcdef")

    from alict_app import run_monitor

    folder = own_cache / "runs" / "0123456789abcdef"
    folder.mkdir(parents=True)
    (folder / "progress.json").write_text(json.dumps({"run_id": "0123456789abcdef", "status": "done", "n_shards": 1,
                                                      "shards_done": 1, "n_cases": 2, "cases_done": 2}))
    monkeypatch.setattr(run_monitor, "writer_alive", lambda progress, folder: True)  # its writer finishing
    at = AppTest.from_function(page, default_timeout=60).run()
    assert not at.exception and not at.success
    assert any("Finishing" in info.value for info in at.info)
    monkeypatch.setattr(run_monitor, "writer_alive", lambda progress, folder: False)  # pass 26: its writer died
    at.run()
    assert not at.info and any("Stopped while finishing" in w.value for w in at.warning)
    (folder / "meta.json").write_text(json.dumps({"run_id": "0123456789abcdef"}))
    at.run()
    assert [s.value for s in at.success] == ["Finished: open **Failures** or **Report**."]


@pytest.mark.parametrize("held", ["own files", "a link", "a built artefact with a file of mine"])
def test_p25_cli_2_build_never_replaces_a_folder_it_did_not_build(cli, tmp_path, own_cache, held):
    """Was: `build parser --profile micro --out bo` with bo/micro/parser a user's folder swapped it aside and deleted
    it (mine.txt gone, exit 0); a link there was renamed aside; a file added to a built artefact went with it."""
    from alict_core.models.artefacts import FORMAT, MANIFEST

    target = tmp_path / "bo" / "micro" / "parser"
    mine = tmp_path / "mine"
    mine.mkdir()
    if held == "a link":
        target.parent.mkdir(parents=True)
        target.symlink_to(mine)
    else:
        target.mkdir(parents=True)
    if held == "a built artefact with a file of mine":
        (target / "weights.bin").write_bytes(b"w")
        import hashlib

        (target / MANIFEST).write_text(json.dumps({"format": FORMAT, "target": "parser", "profile": "micro",
                                                   "files": {"weights.bin": hashlib.sha256(b"w").hexdigest()}}))
    (mine / "mine.txt").write_text("precious")
    if held != "a link":
        (target / "mine.txt").write_text("precious")
    before = sorted(p.name for p in target.parent.iterdir())
    outcome = cli("build", "parser", "--profile", "micro", "--out", str(tmp_path / "bo"), "--no-wait")
    assert_clean_error(outcome, 2, str(target))
    assert sorted(p.name for p in target.parent.iterdir()) == before
    assert (target / "mine.txt").read_text() == "precious"


@pytest.mark.parametrize("held", ["summary.csv/mine.txt", "results/mine.xlsx", "cases/part-00000.jsonl/mine.txt"])
def test_p25_cli_3_a_replaced_folder_never_takes_user_files_named_like_its_own(cli, tmp_path, own_cache, held):
    """Was: `report RUN --export ue` with ue/summary.csv a user's folder, and `run --out ro` with ro/results/mine.xlsx,
    replaced the folder (exit 0) and the user's files went with it: only the top-level names were compared."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    run = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet",
           "--no-story"]
    assert cli(*run, "--out", str(tmp_path / "r")).code == 0
    for folder, argv in (("ue", ["report", str(tmp_path / "r"), "--out", str(tmp_path / "u.html"), "--export"]),
                         ("ro", [*run, "--out"])):
        mine = tmp_path / folder / held
        mine.parent.mkdir(parents=True)
        mine.write_text("precious")
        outcome = cli(*argv, str(tmp_path / folder))
        if folder == "ue" and held.startswith(("results/", "cases/")):
            assert outcome.code == 2  # not an export's name at all
        else:
            assert_clean_error(outcome, 2, "already holds other files")
        assert mine.read_text() == "precious"


def test_p25_cli_3_harden_overwrite_never_takes_a_folder_named_like_a_split(tmp_path):
    """Was: `harden export --out ho --overwrite` with ho/train.jsonl a user's folder deleted it with the export."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import _check_only_export_files

    (tmp_path / "ho" / "train.jsonl").mkdir(parents=True)
    (tmp_path / "ho" / "train.jsonl" / "mine.txt").write_text("precious")
    with pytest.raises(AlictError, match="train.jsonl"):
        _check_only_export_files(tmp_path / "ho")
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "train.jsonl").write_text("{}\n")
    _check_only_export_files(tmp_path / "ok")


@pytest.mark.parametrize("group", [".hidden", "../evil", "x" * 300, "..", "."])
def test_p25_cli_4_suite_group_files_are_never_hidden_or_overlong(tmp_path, group):
    """Was: a suite group ".hidden" (or "../evil") was written by `expand --suite --out xs` as a hidden file, and the
    same command again was refused ("already holds other files"); a 300-character group failed naming the staging
    folder."""
    from alict_core.commands.expand import OUT_FILES
    from alict_core.common.manifest import check_mergeable, lc_file_name

    name = lc_file_name(group)
    assert not name.startswith(".") and "/" not in name and len(name) <= 126
    (tmp_path / "xs").mkdir()
    (tmp_path / "xs" / name).write_text("{}\n")
    (tmp_path / "xs" / name.replace(".jsonl", ".meta.json")).write_text("{}\n")
    check_mergeable(tmp_path / "xs", OUT_FILES)


@pytest.mark.parametrize("existed", [True, False])
def test_p25_kill_3_a_run_stopped_before_its_first_shard_keeps_a_folder_the_user_gave(tmp_path, existed):
    """Was: a run stopped or failed before its first shard (Ctrl-C, out of space) removed its --out folder even when
    the user had made it beforehand (`--out .` deleted the working folder)."""
    from alict_core.runner import RunCancelled
    from alict_core.runner.stream import run_streaming
    from tests.test_stream import MODELS, small_cases

    out = tmp_path / "E7"
    if existed:
        out.mkdir()
    with pytest.raises(RunCancelled):
        run_streaming(small_cases(), MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c",
                      should_stop=lambda: True)
    assert out.is_dir() == existed
    if existed:
        assert list(out.iterdir()) == []


def test_p25_kill_1_an_error_after_the_seal_leaves_the_finished_run_readable(cli, tmp_path):
    """Was: an error (out of space writing request.json) or Ctrl-C after the manifest rewrote the sealed
    progress.json as failed/cancelled: report, compare, review and harden refused the run as changed."""
    import errno

    from alict_core.runner.stream import run_streaming
    from tests.test_stream import MODELS, small_cases

    def no_space() -> dict:
        raise OSError(errno.ENOSPC, "No space left on device")

    out = tmp_path / "run"
    with pytest.raises(OSError):
        run_streaming(small_cases(), MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c",
                      extra_files={"request.json": no_space})
    assert json.loads((out / "progress.json").read_text())["status"] == "done"
    outcome = cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert outcome.code == 0, outcome.err[-400:]


def test_p25_kill_2_process_workers_end_with_their_killed_run(tmp_path):
    """Was: SIGKILL of a `run --executor processes` left its workers running for minutes (models loaded); one wrote
    its shard 80 s later into a folder another run had taken over."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "worker.pid"
    script = ("from alict_core.executors.processes import ProcessExecutor\n"
              "from tests.robustness.support import SleepyWorker\n"
              "pool = ProcessExecutor(workers=1)\n"
              f"list(pool.map_shards(SleepyWorker, {{}}, [{{'pid_file': {str(pid_file)!r}, 'seconds': 120}}]))\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 90
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        worker = int(pid_file.read_text())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    deadline = time.monotonic() + 15
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    still = alive(worker)
    if still:
        os.kill(worker, signal.SIGKILL)
    assert not still, "the worker outlived its killed run"


@pytest.mark.parametrize("body", [b'{"probabilities": [[true, false, false]]}', b'{"probabilities": [["0.5", 0, 0.5]]}',
                                  b'{"probabilities": [{"positive": true}]}', b'{"probabilities": [[null, 0, 1]]}'])
def test_p25_cli_5_http_probabilities_must_be_json_numbers(body):
    """Was: an HTTP model's `[[true, false, false]]` (and `"0.5"`) was read as probabilities 1.0, 0.0, 0.0: a
    bool (or a text) where a number is meant, never said."""
    from alict_core.common.errors import ModelError
    from alict_core.models.remote import HttpJsonModel
    from tests.robustness.test_endpoints_table import InternalService

    service = InternalService(200, body, "application/json")
    try:
        model = HttpJsonModel(service.url, "sentiment", retries=0, backoff=0)
        with pytest.raises(ModelError, match="not a list of numbers"):
            model.predict_proba(["a text"])
    finally:
        service.close()


@pytest.mark.parametrize("label,ok", [("1", True), ("0", True), ("7", False), ("", False)])
def test_p25_cli_6_a_damaged_hatexplain_label_is_a_data_error(tmp_path, monkeypatch, label, ok):
    """Was: a HateXplain label other than "1" (a damaged "7", an empty field) was read as non-hateful."""
    from alict_core.data.checked import CorruptDataError
    from alict_core.data.hatexplain import load_hatexplain

    folder = tmp_path / "data" / "hatexplain"
    folder.mkdir(parents=True)
    (folder / "hatexplain.csv").write_text(f",text,label,category,id\np1_twitter,some words here,{label},0,0\n")
    (folder / "post_id_divisions.json").write_text(json.dumps({"train": ["p1_twitter"], "val": [], "test": []}))
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    if ok:
        assert [row.label for row in load_hatexplain()] == ["hateful" if label == "1" else "non-hateful"]
    else:
        with pytest.raises(CorruptDataError, match="is not 0 or 1"):
            load_hatexplain()


def test_p25_cli_7_a_folder_holding_the_run_store_is_said_to_hold_it(tmp_path, own_cache):
    """Was: `harden export --out /tmp` said "'/tmp' lies in the run store '/tmp/.../runs'" (it holds it)."""
    from alict_core.commands.args import refuse_in_run_store
    from alict_core.common.errors import AlictError

    with pytest.raises(AlictError, match="holds the run store"):
        refuse_in_run_store(tmp_path, "--out")
    with pytest.raises(AlictError, match="lies in the run store"):
        refuse_in_run_store(own_cache / "runs" / "x", "--out")


def test_p25_kill_4_a_finished_builds_leftover_checkpoint_is_not_resumable(tmp_path):
    """Was: a build killed after its artefact was swapped in, before its checkpoint was removed, was listed by
    `build --report` as "resumable: parser stopped after step 4" although the parser was built."""
    import os
    import time

    import torch

    from alict_core.training.checkpoint import Checkpoints, checkpoint_dir, pending

    built = tmp_path / "quick" / "parser"
    checkpoints = Checkpoints(checkpoint_dir(built), every=1, log=lambda _: None)
    checkpoints.resume("k")
    checkpoints.save(4, {}, {"w": torch.ones(2)})
    assert [row["step"] for row in pending(tmp_path) if row["target"] == "parser"] == [4]
    built.mkdir(parents=True)
    (built / "manifest.json").write_text("{}")
    later = time.time() + 5
    os.utime(built / "manifest.json", (later, later))
    assert not [row for row in pending(tmp_path) if row["target"] == "parser"]


def test_p20_left_1_the_apps_run_reader_is_read_again_after_a_swap(tmp_path):
    """Was: the app's sharded-run reader was keyed on mtimes only; a folder swapped in by a re-write of the run with
    the same mtimes kept being served from the old folder's reader."""
    import os
    import shutil

    from alict_app.runs import _stamp

    folder = tmp_path / "run"
    (folder / "results").mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    (folder / "progress.json").write_text("{}")
    before = _stamp(folder)
    copy = tmp_path / ".run.pending"
    shutil.copytree(folder, copy, copy_function=shutil.copy2)
    for path in (copy / "meta.json", copy / "progress.json", copy / "results"):
        source = folder / path.relative_to(copy)
        os.utime(path, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns))
    shutil.rmtree(folder)
    copy.rename(folder)
    assert _stamp(folder) != before


def test_p23_left_1_lego_parser_with_no_constituency_is_refused(cli, tmp_path, own_cache):
    """Was: `lego --no-constituency --parser X` ran without a word about the parser it never used."""
    seeds = tmp_path / "l.txt"
    seeds.write_text("I did not hate it .\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--judge", "vader", "--no-constituency",
                  "--parser", "benepar", "--mlm-top-k", "0", "--out", str(tmp_path / "o"))
    assert_clean_error(outcome, 2, "--no-constituency")
    assert not (tmp_path / "o").exists()


def test_p26_kill_2_a_resumed_run_stopped_before_its_first_shard_keeps_a_folder_the_user_gave(tmp_path, monkeypatch):
    """Was: a run into a folder the user made, killed before its first shard, then resumed and stopped before its
    first shard again, deleted the user's folder (the resume took the folder for the run's own)."""
    from alict_core.runner import RunCancelled, stream
    from tests.test_stream import MODELS, small_cases

    out = tmp_path / "U"
    out.mkdir()
    with monkeypatch.context() as killed:  # no clean-up ran: as a SIGKILL leaves it
        killed.setattr(stream, "_end_unfinished", lambda *args, **kwargs: None)
        with pytest.raises(RunCancelled):
            stream.run_streaming(small_cases(), MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c",
                                 should_stop=lambda: True)
    assert json.loads((out / "progress.json").read_text())["folder_made"] is False
    with pytest.raises(RunCancelled):
        stream.run_streaming(small_cases(), MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c",
                             should_stop=lambda: True)
    assert out.is_dir() and list(out.iterdir()) == []


def test_p26_kill_1_a_replaced_folder_keeps_its_permissions(tmp_path):
    """Was: `run --out U2` into a user's private 0700 folder (or a shared setgid 2770 one) swapped in a 0755 folder:
    the results readable by every user of the machine."""
    import stat

    from alict_core.runner.stream import run_streaming
    from tests.test_stream import MODELS, small_cases

    out = tmp_path / "U2"
    out.mkdir()
    out.chmod(0o700)
    run_streaming(small_cases(), MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c")
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    run_streaming(small_cases()[:-2], MODELS, run_dir=out, shard_size=10, cache_root=tmp_path / "c")  # re-written
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
