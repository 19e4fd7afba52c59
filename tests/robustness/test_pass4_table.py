"""Hostile pass 4 table (notes: attack_pass4.md): saved runs read by review sampling and the large-run pages are
verified first; a run file that is a pipe, device or folder is named as such (never opened, never waited on);
`review sample` names a task mismatch; `review stats` counts sampled, unjudged cases.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from pathlib import Path
from typing import Callable

import pytest

from alict_core.common.manifest import CorruptArtefactError, verify_file, write_file_manifest
from alict_core.review.store import dispose_engines
from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import small_cases

# a pipe opened for reading blocks: a regression fails, never hangs the suite
pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("fresh_engines")]


def _first(folder: Path, pattern: str) -> Path:
    return sorted(folder.glob(pattern))[0]


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.with_name("nowhere"))


def _edited_text(path: Path) -> None:
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["text"] = "=HYPERLINK(\"http://x\")"
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")


SPECIAL = [  # (file of the run, how it is replaced, needle)
    ("results/part-*.parquet", _fifo, "is a named pipe (FIFO), not a regular file"),
    ("cases/part-*.jsonl", _fifo, "is a named pipe (FIFO), not a regular file"),
    ("meta.json", _fifo, "is a named pipe (FIFO), not a regular file"),
    ("manifest.json", _fifo, "manifest.json is a named pipe (FIFO), not a regular file"),
    ("results/part-*.parquet", _folder, "is a folder, not a regular file"),
    ("counts/part-*.json", _dangling, "is a link that leads nowhere"),
]


@pytest.mark.parametrize("pattern,replace,needle", SPECIAL,
                         ids=["results-fifo", "cases-fifo", "meta-fifo", "manifest-fifo", "part-folder", "dangling"])
@pytest.mark.parametrize("command", ["report", "compare", "review-sample"])
def test_a_run_file_that_is_no_regular_file_is_named_never_read(cli, tmp_path, saved_run, pattern, replace, needle,
                                                               command):
    replace(_first(saved_run, pattern))
    argv = {"report": ["report", str(saved_run), "--out", str(tmp_path / "r.html")],
            "compare": ["compare", str(saved_run), str(saved_run)],
            "review-sample": ["review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(saved_run),
                              "--size", "2", "--sets", "1", "--k", "1", "--db",
                              f"sqlite:///{tmp_path / 'review.sqlite'}"]}[command]
    assert_clean_error(cli(*argv), 2, needle)  # a pipe opened for reading would block: the limit catches a hang
    assert not (tmp_path / "r.html").exists()
    assert not (tmp_path / "review.sqlite").exists() or not _tasks(tmp_path / "review.sqlite")


def test_verify_file_names_a_pipe(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n")
    write_file_manifest(path, "x", "k", 1)
    _fifo(path)
    with pytest.raises(CorruptArtefactError, match="is a named pipe"):
        verify_file(path, "x")


def _tasks(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT name FROM review_tasks").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


TAMPERED: list[tuple[str, Callable[[Path], None], str]] = [
    ("cases/part-*.jsonl", _edited_text, "does not match its checksum"),
    ("results/part-*.parquet", lambda p: p.write_bytes(b"PAR1 garbage PAR1"), "does not match its checksum"),
    ("manifest.json", lambda p: p.unlink(), "is not finished (no manifest)"),
]


@pytest.mark.parametrize("pattern,tamper,needle", TAMPERED, ids=["cases-edited", "results-garbage", "no-manifest"])
def test_review_sample_refuses_a_tampered_run(cli, tmp_path, saved_run, pattern, tamper, needle):
    tamper(_first(saved_run, pattern))
    db = tmp_path / "review.sqlite"
    outcome = cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(saved_run), "--size", "2",
                  "--sets", "1", "--k", "1", "--db", f"sqlite:///{db}")
    assert_clean_error(outcome, 2, needle)
    assert not db.exists() or not _tasks(db)


def test_review_sample_of_a_run_of_another_task_names_both_tasks(cli, tmp_path, saved_run):
    db = tmp_path / "review.sqlite"
    outcome = cli("review", "sample", "--name", "t", "--task", "hate_speech", "--cases", str(saved_run), "--size",
                  "2", "--sets", "1", "--k", "1", "--db", f"sqlite:///{db}")
    assert_clean_error(outcome, 2, "the cases are of task sentiment, not hate_speech")
    assert not db.exists() or not _tasks(db)


def test_review_stats_right_after_sampling_counts_the_sampled_cases(cli, tmp_path, saved_run):
    db = f"sqlite:///{tmp_path / 'review.sqlite'}"
    assert cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(saved_run), "--size", "3",
               "--sets", "1", "--k", "1", "--db", db).code == 0
    text = cli("review", "stats", "t", "--db", db)
    assert text.code == 0, text.err
    assert "t (sentiment): 3 cases sampled, 0 of them judged (0 judgements by 0 reviewer(s))" in text.out
    as_json = cli("review", "stats", "t", "--json", "--db", db)
    stats = json.loads(as_json.out)["t"]
    assert (stats["n_sampled"], stats["n_cases"], stats["n_judgements"]) == (3, 0, 0)


def test_the_large_run_pages_verify_a_finished_run(tmp_path, monkeypatch, saved_run):
    """The app reads runs over BIG_ROWS through RunReader (aggregates): a finished one is verified first."""
    from alict_app import runs

    monkeypatch.setattr(runs, "runs_root", lambda: tmp_path)
    runs._reader.clear()
    assert runs._reader(saved_run.name, 1.0).n_rows() == 8
    _edited_text(_first(saved_run, "cases/part-*.jsonl"))
    with pytest.raises(CorruptArtefactError, match="does not match its checksum"):
        runs._reader(saved_run.name, 2.0)


NOT_UTF8 = [  # (argv with raw bytes that are not UTF-8, as a shell passes them; Python reads them as surrogates)
    (["review", "stats", "\udcff"], "argument #3 '\\xff' is not valid UTF-8"),
    (["report", "RUN", "--title", "\udcff"], "argument #4 '\\xff' is not valid UTF-8"),
    (["run", "--task", "sentiment", "--lc", "4", "--models", "vader", "--out", "OUT\udcfe"], "is not valid UTF-8"),
    (["parse", "--text", "caf\udce9 is good"], "argument #3 'caf\\xe9 is good' is not valid UTF-8"),
    (["review", "sample", "--task", "sentiment", "--name", "t\udcff"], "is not valid UTF-8"),
]


@pytest.mark.parametrize("argv,needle", NOT_UTF8, ids=["stats", "title", "run-out", "parse", "sample-name"])
def test_arguments_that_are_not_utf8_are_one_message(cli, tmp_path, saved_run, argv, needle):
    argv = [a.replace("RUN", str(saved_run)).replace("OUT", str(tmp_path / "o")) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert_clean_error(cli(*argv), 2, needle, "give arguments, names and paths in UTF-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_setting_that_is_not_utf8_is_one_message(cli, monkeypatch):
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", "/tmp/w\udcff")
    assert_clean_error(cli("seeds", "--task", "sentiment", "--lc", "4"), 2,
                       "$ALICT_WORKSPACE_DIR '/tmp/w\\xff' is not valid UTF-8")


def _expansions_of_another_task(tmp_path: Path) -> Path:
    path = tmp_path / "exp" / "sentiment-lc04.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"lc_id": "sentiment-lc04", "seed_id": "s1", "text": "a fine film indeed",
                                "accepted": True}) + "\n")
    return path.parent


MISMATCHED = [  # (argv naming hate_speech with inputs of sentiment, needle); rows were dropped without a word
    (["run", "--task", "hate_speech", "--lc", "1", "--models", "profanity-check", "--max-seeds", "1", "--expansions",
      "EXP", "--out", "OUT"], "--expansions sentiment-lc04.jsonl:1: lc_id 'sentiment-lc04' is not an LC of task"),
    (["validate", "--task", "hate_speech", "--lc", "1", "--max-seeds", "1", "--expansions", "EXP"],
     "--expansions sentiment-lc04.jsonl:1: lc_id 'sentiment-lc04' is not an LC of task 'hate_speech'"),
    (["fidelity", "--task", "hate_speech", "--lc", "1", "--expansions", "EXP"],
     "--expansions sentiment-lc04.jsonl:1: lc_id 'sentiment-lc04' is not an LC of task 'hate_speech'"),
    (["lego", "--task", "hate_speech", "--seeds", "SEEDS", "--out", "OUT"],
     "seeds.jsonl:1: the seed is of task 'sentiment', not 'hate_speech'"),
    (["explain", "--results", "RUN", "--lc", "1", "--model", "profanity-check"],
     "model 'profanity-check' is for task hate_speech, but the run's LC sentiment-lc01 is of task sentiment"),
]


@pytest.mark.parametrize("argv,needle", MISMATCHED, ids=["run-expansions", "validate-expansions",
                                                         "fidelity-expansions", "lego-seeds", "explain-model"])
def test_inputs_of_another_task_are_refused(cli, tmp_path, saved_run, argv, needle):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment",
                                 "text": "a fine film"}) + "\n")
    values = {"EXP": str(_expansions_of_another_task(tmp_path)), "OUT": str(tmp_path / "out"), "SEEDS": str(seeds),
              "RUN": str(saved_run)}
    assert_clean_error(cli(*[values.get(a, a) for a in argv]), 2, needle, limit_s=60)
    assert not (tmp_path / "out").exists()


def _judged_database(tmp_path: Path) -> Path:
    """A review database with one task of 2 sentiment seeds, both judged by one reviewer."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task

    path = tmp_path / "review.sqlite"
    store = ReviewStore(f"sqlite:///{path}")
    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(2)]
    create_review_task(store, "t", "sentiment", cases, SamplingPlan(size=2, n_sets=1, k=1), ["ann"])
    for item in store.items(store.task("t").id):
        store.judge(item.id, "ann", relevance=4, label_score=5)
    dispose_engines()
    return path


TAMPERED_DB = [  # (SQL run on the database outside ALiCT, needle); each was counted (or exit 3) before
    ("UPDATE judgements SET relevance = 99", "relevance must be an integer from 1 to 5, got 99"),
    ("UPDATE judgements SET label_score = -7", "label score must be an integer from 1 to 5, got -7"),
    ("UPDATE judgements SET label_score = 'abc'", "label score must be an integer from 1 to 5, got 'abc'"),
    ("UPDATE judgements SET relevance = 4.5", "relevance must be an integer from 1 to 5, got 4.5"),
    ("UPDATE judgements SET validity = 9", "a seed has no validity score, got 9"),
    ("UPDATE review_items SET kind = 'weird'", "its item's kind 'weird'"),
    ("UPDATE review_tasks SET suite_task = 'bogus'", "'bogus'"),
    ("UPDATE review_tasks SET plan = 'not json'", "the review database holds damaged review tasks"),
    ("UPDATE review_items SET expected = '[1'", "the review database holds damaged"),
    ("UPDATE review_items SET expected = '" + "[" * 100_000 + "]" * 100_000 + "'",
     "the review database holds damaged judgements (RecursionError"),
    ("UPDATE review_tasks SET plan = '" + "[" * 100_000 + "]" * 100_000 + "'",
     "the review database holds damaged review tasks (RecursionError"),
]


@pytest.mark.parametrize("sql,needle", TAMPERED_DB, ids=["rel99", "label-negative", "label-text", "rel-float",
                                                         "validity-on-seed", "kind", "task", "plan", "expected",
                                                         "expected-deep", "plan-deep"])
@pytest.mark.parametrize("command", ["stats", "export", "writeback"])
def test_a_review_database_changed_outside_is_refused_not_counted(cli, tmp_path, sql, needle, command):
    path = _judged_database(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()
    url = f"sqlite:///{path}"
    argv = {"stats": ["review", "stats", "t", "--db", url],
            "export": ["review", "export", "t", "--judgements", "--db", url, "--out", str(tmp_path / "x.csv")],
            "writeback": ["review", "writeback", "--task", "sentiment", "--db", url]}[command]
    outcome = cli(*argv)
    if command == "writeback" and "SET plan" in sql:
        assert outcome.code == 0, outcome.err  # a plan the write-back never reads
        return  # (a task of no known task is refused: pass 14 A — it was left out of the write-back without a word)
    assert_clean_error(outcome, 2, needle, "changed outside ALiCT")
    assert not (tmp_path / "x.csv").exists()


def test_a_story_json_that_is_a_pipe_is_not_waited_on(saved_run):
    """The Story page reads story.json beside the run (outside its manifest): a pipe there hung the page."""
    from alict_core.report.story import read_story

    story = saved_run / "story.json"
    if story.exists():
        story.unlink()
    os.mkfifo(story)
    assert read_story(saved_run) is None  # computed again from the verified run


def test_a_running_run_whose_progress_is_a_pipe_is_not_waited_on(tmp_path, saved_run):
    """Every page and `report`/`review sample` without a run list the store's unfinished runs (progress.json)."""
    from alict_core.runner.store import unfinished_runs

    running = tmp_path / "store" / "0123456789abcdef"
    running.mkdir(parents=True)
    os.mkfifo(running / "progress.json")
    assert unfinished_runs(tmp_path / "store") == []


@pytest.mark.parametrize("reader", ["read_json", "read_jsonl", "iter_jsonl"])
def test_the_artefact_readers_name_a_pipe(tmp_path, reader):
    from alict_core.common import jsonl

    os.mkfifo(tmp_path / "x.json")
    with pytest.raises(jsonl.NotARegularFileError, match="is a named pipe"):
        list(getattr(jsonl, reader)(tmp_path / "x.json"))


SETTINGS = [  # ($variable, value, needle): int() reads "1_0" as 10 and "１０" as 10; a bad cache size was exit 3
    ("ALICT_MODEL_CACHE_SIZE", "x", "ALICT_MODEL_CACHE_SIZE='x' must be a whole number from 1 to 1024"),
    ("ALICT_MODEL_CACHE_SIZE", "2.5", "must be a whole number from 1 to 1024"),
    ("ALICT_TORCH_THREADS", "\uff12", "ALICT_TORCH_THREADS='\uff12' must be a whole number from 1 to 1024"),
    ("ALICT_TORCH_THREADS", "1_0", "must be a whole number from 1 to 1024"),
    ("ALICT_LIMIT_MAX_SEEDS", "1_0", "ALICT_LIMIT_MAX_SEEDS='1_0' must be a positive whole number"),
    ("ALICT_LIMIT_MAX_SEEDS", "\uff11\uff10", "must be a positive whole number"),
]


def _read_setting(variable: str) -> None:
    from alict_core.common.limits import Limits, setting_number
    from alict_core.common.runtime import torch_threads

    if variable == "ALICT_MODEL_CACHE_SIZE":
        setting_number(variable, 8, 1, 1024, whole=True)  # what models/registry.py reads at import
    elif variable == "ALICT_TORCH_THREADS":
        torch_threads()
    else:
        Limits.from_env()


@pytest.mark.parametrize("variable,value,needle", SETTINGS, ids=["cache-x", "cache-float", "threads-wide",
                                                                 "threads-underscore", "limit-underscore",
                                                                 "limit-wide"])
def test_numeric_settings_take_plain_digits_only(monkeypatch, variable, value, needle):
    from alict_core.common.errors import AlictError

    monkeypatch.setenv(variable, value)
    with pytest.raises(AlictError) as raised:
        _read_setting(variable)
    assert needle in str(raised.value)


@pytest.mark.parametrize("value", ["nan", "-1", "1_0", "inf"])
def test_the_online_probe_timeout_is_checked(monkeypatch, value):
    from alict_core.common.errors import AlictError
    from alict_core.common.limits import setting_number

    monkeypatch.setenv("ALICT_ONLINE_TIMEOUT", value)
    with pytest.raises(AlictError, match="ALICT_ONLINE_TIMEOUT=.* must be a number from 0.1 to 60"):
        setting_number("ALICT_ONLINE_TIMEOUT", 1.5, 0.1, 60)


def test_a_bad_model_cache_size_is_one_message_on_the_cli():
    import subprocess
    import sys

    argv = [sys.executable, "-m", "alict_core", "explain", "--text", "a good film", "--model", "vader"]
    done = subprocess.run(argv, text=True, capture_output=True, env={**os.environ, "ALICT_MODEL_CACHE_SIZE": "x"},
                          timeout=120)
    assert done.returncode == 2, done.stderr[-400:]
    assert "ALICT_MODEL_CACHE_SIZE='x' must be a whole number" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["run", "validate"])
def test_seed_rows_naming_another_task_are_refused(cli, tmp_path, command):
    """A row of an LC of the task but `"task": "hate_speech"` was stored as a hate-speech case of a sentiment run."""
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"id": "s1", "lc_id": "sentiment-lc04", "task": "hate_speech", "text": "not bad",
                                 "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}}) + "\n")
    extra = ["--models", "vader", "--out", str(tmp_path / "out")] if command == "run" else []
    outcome = cli(command, "--task", "sentiment", "--lc", "4", "--seeds", str(seeds), *extra)
    assert_clean_error(outcome, 2, "seeds.jsonl:1: the seed names task 'hate_speech', not 'sentiment'")
    assert not (tmp_path / "out").exists()


PROGRESS = [  # a running run's progress.json as written by hand: the Run page said "Unexpected error … ValueError"
    {"status": "running", "pid": "x", "n_cases": "many", "shards_done": -5},
    {"status": "running", "n_shards": 1e309, "cases_done": True, "started_at": "yesterday", "models": "vader"},
    {"n_cases": [1], "updated_at": float("nan"), "models": [1, None]},
]


@pytest.mark.parametrize("progress", PROGRESS, ids=["texts", "huge-and-bool", "lists-and-nan"])
def test_a_progress_file_of_wrong_types_reads_as_a_stopped_run(tmp_path, progress):
    from alict_core.runner.reader import running_runs

    running = tmp_path / "0123456789abcdef"
    running.mkdir()
    (running / "progress.json").write_text(json.dumps(progress))
    (view,) = running_runs(tmp_path)
    assert (view["n_cases"], view["cases_done"]) == (0, 0) and 0.0 <= view["fraction"] <= 1.0
    assert all(isinstance(m, str) for m in view["models"])


def test_a_progress_file_nested_too_deep_is_skipped(tmp_path):
    from alict_core.runner.reader import running_runs

    running = tmp_path / "0123456789abcdef"
    running.mkdir()
    (running / "progress.json").write_text("[" * 100_000 + "]" * 100_000)
    assert running_runs(tmp_path) == []
