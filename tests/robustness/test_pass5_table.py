"""Hostile pass 5 table (notes: attack_pass5.md): hand-edited hardening exports, foreign --hf-dir folders,
`report <run id>` of the run store, the Story of a run edited after its story was written, and review database
URLs a driver refuses.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from alict_core.common.errors import AlictError
from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("fresh_engines")]


GOOD_EXPORT: dict[str, Any] = {
    "run_id": "c3c18cd2cc2d58f4", "run_dir": "/nowhere/run", "lcs": ["sentiment-lc01"], "ratios": [0.8, 0.1, 0.1],
    "seed": 13, "grouping": "seed+source+text, corpus-test sources to test", "data_hash": "5d3fa8cb27abb08b",
    "counts": {"train": {"sentiment-lc01": 15}, "validation": {"sentiment-lc01": 2}, "test": {"sentiment-lc01": 12}},
    "untrainable": {}, "formats": ["jsonl"],
}
ROW = {"case_id": "c1", "lc_id": "sentiment-lc01", "kind": "seed", "seed_id": "c1", "text": "a good film",
       "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}, "test_type": "MFT",
       "capability": "Vocabulary", "task": "sentiment", "variants": [], "description": "", "meta": {},
       "split": "train", "label": "positive", "allowed_labels": ["positive"], "source_ids": []}


def _export(folder: Path, **changes: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    record = {**GOOD_EXPORT, **changes}
    (folder / "export.json").write_text(json.dumps({k: v for k, v in record.items() if v is not ...}))
    for split in ("train", "validation", "test"):
        row = {**ROW, "case_id": f"c-{split}", "text": f"a good {split} film", "split": split}
        (folder / f"{split}.jsonl").write_text(json.dumps(row) + "\n")
    return folder


EXPORT_RECORDS = [  # (change to export.json, needle)
    ({"lcs": 5}, "field 'lcs'"),
    ({"lcs": []}, "field 'lcs'"),
    ({"run_id": ...}, "field 'run_id'"),
    ({"run_id": "../../etc"}, "field 'run_id'"),
    ({"data_hash": [1, 2]}, "field 'data_hash'"),
    ({"counts": {"test": {"sentiment-lc01": True}}}, "field 'counts.test'"),
    ({"counts": "many"}, "field 'counts'"),
]


@pytest.mark.parametrize("change,needle", EXPORT_RECORDS,
                         ids=["lcs-int", "lcs-empty", "run-id-missing", "run-id-path", "data-hash-list",
                              "count-bool", "counts-text"])
def test_a_hand_edited_export_json_is_refused_field_by_field(tmp_path, change, needle):
    """Training and evaluation read run_id, lcs, data_hash and counts: an edited type was a TypeError (exit 3)
    or a bool counted as 1 test case."""
    from alict_core.harden.export import export_settings

    with pytest.raises(AlictError, match=needle):
        export_settings(_export(tmp_path / "ex", **change))


def test_harden_train_of_an_export_json_with_lcs_a_number_is_one_message(cli, tmp_path):
    """Was: exit 3 `TypeError: 'int' object is not iterable` after the model was loaded (35 s)."""
    export = _export(tmp_path / "ex", lcs=5)
    outcome = cli("harden", "train", "--export", str(export), "--model", "minilm-sst", "--min-test-cases", "1")
    assert_clean_error(outcome, 2, "export.json: field 'lcs'", "harden export")


@pytest.mark.parametrize("given,needle", [("file", "is not a folder"), ("empty", "is not a hardening export")],
                         ids=["a-file", "no-export-json"])
def test_an_export_folder_that_is_none_is_named(cli, tmp_path, given, needle):
    """Was: "export settings 'export.json' not found" (neither the folder nor what is wrong named)."""
    path = tmp_path / "given"
    if given == "file":
        path.write_text("x")
    else:
        path.mkdir()
    outcome = cli("harden", "train", "--export", str(path), "--model", "minilm-sst")
    assert_clean_error(outcome, 2, str(path), needle)


@pytest.mark.parametrize("step", ["train", "fix"])
def test_an_hf_dir_that_holds_no_model_is_one_message(cli, tmp_path, step):
    """Was (train): exit 3 `ValueError: Couldn't instantiate the backend tokenizer` after the export was read."""
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a model")
    export = _export(tmp_path / "ex")
    where = ["--export", str(export)] if step == "train" else ["--run", str(tmp_path / "run"), "--lcs", "1",
                                                               "--out", str(tmp_path / "out")]
    outcome = cli("harden", step, *where, "--model", "hf", "--hf-dir", str(foreign), "--task", "sentiment")
    assert_clean_error(outcome, 2, "is not a Hugging Face model folder (no config.json)")
    assert not (tmp_path / "out").exists()


def test_an_hf_dir_whose_files_do_not_load_is_one_message(tmp_path):
    """A folder with a config.json but no weights: the loader's refusal is the setting's fault, not ALiCT's."""
    from alict_core.training.retrain import retrain_hf

    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    export = _export(tmp_path / "ex")
    with pytest.raises(AlictError, match="cannot be loaded as a Hugging Face sequence classifier"):
        retrain_hf("hf", folder, "sentiment", export, original=(["a film"], ["neutral"]), heldout=(["x"], ["neutral"]),
                   min_test_cases=1)


@pytest.fixture
def store(run_store) -> Path:
    """A private run store holding ``saved_run`` under its own id."""
    return run_store


def test_report_takes_a_run_id_of_the_store(cli, tmp_path, store):
    """Was: "saved run '<id>' not found" for every id (the argument was read as a folder path only)."""
    run_id = next(store.iterdir()).name
    outcome = cli("report", run_id, "--out", str(tmp_path / "r.html"))
    assert outcome.code == 0, outcome.err
    assert (tmp_path / "r.html").read_text().rstrip().endswith("</html>")


@pytest.mark.parametrize("case", ["copied-folder", "unknown-id"])
def test_report_of_a_store_id_says_what_is_wrong(cli, tmp_path, store, case):
    run_id = next(store.iterdir()).name
    given = "f" * 16
    if case == "copied-folder":  # a hand-copied run folder: its meta.json names the run it was copied from
        shutil.copytree(store / run_id, store / given)
        needle = f"holds run '{run_id}' (its meta.json), not this id"
    else:
        needle = "not found: give a run folder"
    assert_clean_error(cli("report", given, "--out", str(tmp_path / "r.html")), 2, needle)
    assert not (tmp_path / "r.html").exists()


def _edit_a_case(run: Path) -> None:
    part = sorted(run.glob("cases/part-*.jsonl"))[0]
    lines = part.read_text().splitlines()
    row = json.loads(lines[0])
    row["text"] = "a different text"
    part.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")


def test_the_story_of_a_run_edited_after_its_story_is_refused(saved_run):
    """Was: the stored story.json served (its own checksum and the manifest's hold) while every other reader
    refused the edited run."""
    from alict_core.report.story import read_story, write_story

    write_story(saved_run, None)  # the run's own story (its fail rates are checked against summary.csv on read)
    assert read_story(saved_run) is not None
    _edit_a_case(saved_run)
    with pytest.raises(AlictError, match="does not match its checksum"):
        read_story(saved_run)


def test_the_story_pages_cache_key_changes_when_a_part_is_edited(saved_run):
    """The Story page keeps one story per run and stamp: an edit of a data part must make it read (and verify)
    the run again, not serve the story it read before."""
    from alict_app.runs import folder_stamp as _stamp

    before = _stamp(saved_run)
    _edit_a_case(saved_run)
    assert _stamp(saved_run) != before


REVIEW_URLS = [  # (URL, needle, text that must not appear)
    ("postgresql://" + "a" * 100_000 + "/x", "characters) ($ALICT_REVIEW_DB_URL", "a" * 300),
    ("postgresql://u:secretpw@127.0.0.1:abc/x", "u:***@127.0.0.1:abc", "secretpw"),
]


@pytest.mark.parametrize("url,needle,hidden", REVIEW_URLS, ids=["host-100k", "port-not-a-number"])
@pytest.mark.parametrize("how", ["env", "db"])
def test_a_review_database_url_a_driver_refuses_is_one_message(cli, tmp_path, monkeypatch, url, needle, hidden,
                                                              how):
    """Was: exit 3 (`UnicodeError: encoding with 'idna' codec failed`, `ValueError: invalid literal for int()`)."""
    argv = ["review", "stats", "t"]
    if how == "env":
        monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    else:
        argv += ["--db", url]
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, "cannot open the review database", "$ALICT_REVIEW_DB_URL or --db", needle)
    assert hidden not in outcome.err


def test_nothing_is_written_for_a_refused_review_url(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", "postgresql://u@127.0.0.1:abc/x")
    assert cli("review", "stats", "t").code == 2
    assert list(tmp_path.iterdir()) == []



def test_build_without_a_target_is_one_error_line(cli):
    """Was: a plain line on stdout with exit 2 (no `error:` line on stderr, unlike every other refusal)."""
    assert_clean_error(cli("build"), 2, "name a target")


def test_harden_export_of_a_store_id_whose_folder_holds_another_run_is_refused(cli, tmp_path, store):
    """Was: exit 0, the copied folder exported under the id it does not hold (as `report <id>` now says)."""
    run_id = next(store.iterdir()).name
    shutil.copytree(store / run_id, store / ("f" * 16))
    outcome = cli("harden", "export", "--run", "f" * 16, "--lcs", "sentiment-lc01", "--out", str(tmp_path / "ex"))
    assert_clean_error(outcome, 2, f"holds run '{run_id}' (its meta.json)")
    assert not (tmp_path / "ex").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs procfs (a folder that takes no new folder)")
def test_harden_export_to_a_folder_that_takes_no_new_folder_names_out(cli, saved_run):
    """Was: "cannot access '/proc/.x.tmp-6e06…': No such file or directory" (the hidden staging folder named)."""
    outcome = cli("harden", "export", "--run", str(saved_run), "--lcs", "sentiment-lc01", "--out", "/proc/x")
    assert_clean_error(outcome, 2, "--out '/proc/x' cannot be written", limit_s=60)
    assert ".tmp-" not in outcome.err


def test_harden_fix_of_lcs_of_another_task_than_the_models_writes_nothing(cli, tmp_path, saved_run):
    """Was: the export written to --out, then training refused ("training labels ['hateful'] are not labels of
    'minilm-sst'", 26 s)."""
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    out = tmp_path / "out"
    outcome = cli("harden", "fix", "--run", str(saved_run), "--lcs", "sentiment-lc01", "--out", str(out), "--model",
                  "hf", "--hf-dir", str(folder), "--task", "hate_speech", "--min-test-cases", "1")
    assert_clean_error(outcome, 2, "is for task hate_speech, but the LCs 'sentiment-lc01'", "of task sentiment",
                       limit_s=60)
    assert not out.exists()


def test_explain_results_of_a_store_id_whose_folder_holds_another_run_is_refused(cli, store):
    """Was: exit 0, the copied folder explained under the id it does not hold."""
    run_id = next(store.iterdir()).name
    shutil.copytree(store / run_id, store / ("f" * 16))
    assert_clean_error(cli("explain", "--results", "f" * 16, "--lc", "1"), 2, f"holds run '{run_id}' (its meta.json)")
