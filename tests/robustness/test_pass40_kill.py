"""Pass 39 rows of the kill/fault helper and two CLI findings (fixed by the h6kill helper): each failed before its fix,
unless marked as a control."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

KILLED_WRITER = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")  # the transaction spills into the file: a kill leaves a hot journal
conn.execute("BEGIN")
conn.execute("CREATE TABLE t(x)")
conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _hot_journal(path: Path) -> Path:
    """A new SQLite file whose first writer was killed inside its transaction (what a killed first `review sample`
    leaves): the file and its hot rollback journal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], check=False)
    journal = Path(f"{path}-journal")
    assert journal.is_file() and journal.stat().st_size > 0
    return journal


def test_p39_kill_4_a_review_commands_roll_back_a_killed_writers_hot_journal(cli, tmp_path, fresh_engines):
    """Was (medium): every open said "review database … is not a SQLite database (attempt to write a readonly
    database); give --db … a new file", for ever. SQLite's crash recovery now runs (one short open with write access
    rolls the unfinished write back, said as a warning) and the command goes on."""
    path = tmp_path / "review.sqlite"
    journal = _hot_journal(path)
    url = f"sqlite:///{path}"
    stats = cli("review", "stats", "--db", url)  # a read-only command
    assert "not a SQLite database" not in stats.err, stats.err
    assert "rolled back the unfinished write of a process that was killed" in stats.err, stats.err
    assert stats.code == 2 and "no review tasks yet" in stats.err, stats.err
    assert not journal.exists()
    cases = tmp_path / "cases.jsonl"
    from tests.robustness.support import small_cases

    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    _hot_journal(tmp_path / "second.sqlite")  # a writing command on another killed database
    sampled = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'second.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert sampled.code == 0 and "review task 't'" in sampled.out, sampled.err


def test_p39_kill_4_b_a_report_reading_rejections_is_not_blocked(cli, tmp_path, run_store, fresh_engines,
                                                                  monkeypatch):
    """Was: `run` and `report` (which read the reviewers' rejections from the default database) failed exit 2 with
    "not a SQLite database" after a killed `review sample`; now the journal is rolled back and they run."""
    monkeypatch.delenv("ALICT_REVIEW_DB_URL", raising=False)  # the default database, under the cache
    journal = _hot_journal(run_store.parent / "review" / "review.sqlite")
    outcome = cli("report", next(run_store.iterdir()).name, "--out", str(tmp_path / "r.html"), "--summary-json",
                  str(tmp_path / "s.json"))
    assert outcome.code == 0, outcome.err
    assert (tmp_path / "s.json").is_file() and not journal.exists()


def test_p39_kill_4_c_without_write_access_one_message_and_runs_go_on_without_rejections(
        cli, tmp_path, run_store, fresh_engines, monkeypatch):
    """Where the journal cannot be rolled back (no write access): a read-only command says what and where in one
    message (never "not a SQLite database"), and a report goes on without rejections, saying so."""
    from alict_core.review import store

    monkeypatch.delenv("ALICT_REVIEW_DB_URL", raising=False)  # the default database, under the cache
    journal = _hot_journal(run_store.parent / "review" / "review.sqlite")
    real_connect = sqlite3.connect

    def read_only_disk(database, *args, **kwargs):  # this process may not write the file (a read-only mount)
        if "mode=rw" in str(database):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(store.sqlite3, "connect", read_only_disk)
    stats = cli("review", "stats")
    assert stats.code == 2 and "unfinished write of a process that was killed" in stats.err, stats.err
    assert "not a SQLite database" not in stats.err and str(journal) in stats.err
    outcome = cli("report", next(run_store.iterdir()).name, "--out", str(tmp_path / "r.html"), "--summary-json",
                  str(tmp_path / "s.json"))
    assert outcome.code == 0, outcome.err
    assert "goes on without the reviewers' rejections" in outcome.err, outcome.err


def test_p39_kill_1_a_full_output_disk_without_a_file_name_names_the_output(
        cli, tmp_path, saved_run, monkeypatch):
    """Was (low): a write()/flush() ENOSPC (no file name: every file body, pyarrow) on a full --export disk beside a
    cache with room said "out of space while writing (No space left on device): free disk space …" without any
    place. The output the command names on the full disk is said now."""
    import shutil
    from collections import namedtuple

    from alict_core.common import faults
    from alict_core.suites import tables

    full = tmp_path / "full"
    full.mkdir()
    usage = namedtuple("usage", "total used free")
    real_usage = shutil.disk_usage

    def disk_usage(path):
        return usage(1 << 20, 1 << 20, 0) if str(path).startswith(str(full)) else real_usage(path)

    def no_space(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write() says it: no file name

    monkeypatch.setattr(faults.shutil, "disk_usage", disk_usage)
    monkeypatch.setattr(tables, "export_results", no_space)
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"), "--export", str(full / "e"))
    assert outcome.code == 2, outcome.err
    assert f"out of space while writing the output {str(full / 'e')!r}" in outcome.err, outcome.err
    assert "finished batches are reused" not in outcome.err


def _pending_rewrite(root: Path) -> Path:
    """A re-write of run folder ``root/o2`` in ``root/.o2.pending`` whose files look eight days old."""
    pending = root / ".o2.pending"
    pending.mkdir(parents=True)
    (root / "o2").mkdir()
    (pending / "progress.json").write_text(json.dumps({"run_id": "0123456789abcdef", "shard_size": 3}))
    old = time.time() - 8 * 24 * 3600
    for path in (pending / "progress.json", pending):
        os.utime(path, (old, old))
    return pending


def test_p39_kill_6_a_a_live_rewrite_is_never_removed_however_old_it_looks(tmp_path, own_cache):
    """Was (low): `clean_pending` (every `run` into the same parent folder) removed a LIVE re-write's pending
    folder when its files looked a week old (a clock step, a writer stopped with Ctrl-Z): it never asked whether a
    writer held the run. A pending whose run lock is held is kept now."""
    from alict_core.runner.folders import clean_pending
    from alict_core.runner.stream import run_lock

    pending = _pending_rewrite(tmp_path / "w")
    from alict_core.runner.store import writer_holds_lock

    with run_lock(tmp_path / "w" / "o2"):  # the re-write's writer
        clean_pending(tmp_path / "w", held=writer_holds_lock)  # as run_streaming calls it
    assert pending.is_dir()


def test_p39_kill_6_b_control_an_abandoned_rewrite_is_still_removed(tmp_path, own_cache):
    """Control: a week-old re-write nobody holds is still removed."""
    from alict_core.runner.folders import clean_pending

    pending = _pending_rewrite(tmp_path / "w")
    clean_pending(tmp_path / "w")
    assert not pending.exists()


def test_p39_kill_8_a_files_put_into_the_run_folder_during_a_rewrite_are_kept(tmp_path, saved_run):
    """Was (low-medium): a user's notes put into a `run --out` folder while its re-write ran were deleted at the
    swap, exit 0 (the "holds other files" check was made at the start only). The folder is checked again right
    before the swap: refused in one message, the notes kept and the finished new run kept beside it, which the
    same command, run again once the notes are moved out, puts in place."""
    from alict_core.common.errors import AlictError
    from alict_core.runner import run_streaming
    from alict_core.runner.stream import group_by_seed
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(6, label="negative")]
    notes = saved_run / "my-notes.txt"

    def user_drops_notes(done, total, message):
        if total and not notes.exists():
            notes.write_text("notes")

    with pytest.raises(AlictError, match="my-notes.txt") as raised:
        run_streaming(group_by_seed(cases), ["vader"], run_dir=saved_run, shard_size=3,
                      cache_root=tmp_path / "pred", progress=user_drops_notes)
    assert "finished new run is kept" in str(raised.value)
    pending = saved_run.with_name(f".{saved_run.name}.pending")
    assert notes.read_text() == "notes" and (pending / "manifest.json").is_file()
    notes.unlink()
    folder = run_streaming(group_by_seed(cases), ["vader"], run_dir=saved_run, shard_size=3,
                           cache_root=tmp_path / "pred")
    assert json.loads((folder / "meta.json").read_text())["n_cases"] == 6 and not pending.exists()


def _seeds_without_task(path: Path, task: str) -> Path:
    seeds = [{"id": f"h{i}", "lc_id": f"{task}-lc01", "text": f"I love all people {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["non-hateful" if task == "hate_speech" else "positive"]}}
             for i in range(4)]
    path.write_text("".join(json.dumps(seed) + "\n" for seed in seeds))
    return path


def test_p39_cli_9_a_review_sample_refuses_a_run_of_another_task_whose_cases_carry_no_task(
        cli, tmp_path, own_cache, fresh_engines):
    """Was (medium-low): `review sample --task sentiment` took a hate_speech run whose cases (hand-written --seeds)
    carry no `task` field, by default (the newest run of any task) or by id: a sentiment review task of hate_speech
    posts. The run's recorded task and its LC ids are consulted now, and the default is the newest run of --task."""
    seeds = _seeds_without_task(tmp_path / "hseeds.jsonl", "hate_speech")
    made = cli("run", "--task", "hate_speech", "--models", "hatesonar", "--seeds", str(seeds), "--no-story", "--quiet")
    if made.code != 0:
        pytest.skip(f"hatesonar not available here: {made.err[-200:]}")
    url = f"sqlite:///{tmp_path / 'rv.sqlite'}"
    by_default = cli("review", "sample", "--task", "sentiment", "--name", "d1", "--db", url)
    assert by_default.code == 2 and "no saved run of task sentiment" in by_default.err, by_default.err
    run_dir = next((own_cache / "runs").iterdir())
    for given in (run_dir.name, str(run_dir)):
        by_id = cli("review", "sample", "--task", "sentiment", "--name", "d3", "--db", url, "--cases", given)
        assert by_id.code == 2 and "the cases are of task hate_speech, not sentiment" in by_id.err, by_id.err
    assert not (tmp_path / "rv.sqlite").exists()
    right = cli("review", "sample", "--task", "hate_speech", "--name", "e1", "--db", url, "--size", "2",
                "--sets", "1", "--k", "1")
    assert right.code == 0, right.err  # control: the run's own task


def test_p39_cli_9_b_a_cases_file_without_task_is_read_by_its_lc_ids(cli, tmp_path, fresh_engines):
    """A cases file without `task` whose LC ids name another task is refused too (it counted as any task)."""
    from tests.robustness.support import build_cases

    seeds = _seeds_without_task(tmp_path / "hseeds.jsonl", "hate_speech")
    cases = build_cases([json.loads(line) for line in seeds.read_text().splitlines()])
    assert all(case.task is None for case in cases)
    file = tmp_path / "cases.jsonl"
    file.write_text("".join(json.dumps({k: v for k, v in case.to_dict().items() if k != "task"}) + "\n"
                            for case in cases))
    url = f"sqlite:///{tmp_path / 'rv.sqlite'}"
    refused = cli("review", "sample", "--task", "sentiment", "--name", "d1", "--db", url, "--cases", str(file))
    assert refused.code == 2 and "the cases are of task hate_speech, not sentiment" in refused.err, refused.err
    taken = cli("review", "sample", "--task", "hate_speech", "--name", "d2", "--db", url, "--cases", str(file),
                "--size", "2", "--sets", "1", "--k", "1")
    assert taken.code == 0, taken.err  # control: its own task


@pytest.mark.parametrize("name", ["summary.csv", "results.jsonl", "summary.jsonl", "manifest.json"])
def test_p39_cli_5_a_every_export_file_given_as_suite_is_said_as_the_projects_export(cli, tmp_path, saved_run, name):
    """Was (cosmetic-low): the cases.csv fix missed the export's other files: `--suite ex/summary.csv` said
    "HateCheck suites are for task hate_speech", results.jsonl "field 'expected' … (and 7 more problems)",
    manifest.json "test 'extra', field 'data': is missing". Each is named as the project's own export now."""
    exported = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "ex"))
    assert exported.code == 0, exported.err
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(tmp_path / "ex" / name),
                  "--no-lcs", "--no-story", "--quiet", "--out", str(tmp_path / "sx"))
    assert outcome.code == 2 and f"{name} is a" in outcome.err and "of this project's own export" in outcome.err, \
        outcome.err
    assert "give the cases.jsonl written beside it" in outcome.err
