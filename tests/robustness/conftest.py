"""Fixtures of the robustness tables: run the CLI in-process and check its one-line outcome."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from alict_core.cli import main


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float  # wall clock
    cpu_seconds: float = 0.0  # this process's CPU time: the work done, whatever else the machine runs

WALL_FACTOR = 10  # a refusal may wait this many times its CPU limit for a loaded machine's cores, never longer


@pytest.fixture(scope="session")
def warm_imports():
    """Import every command module once, so timings measure the command, not the first import of torch."""
    from alict_core.cli import build_parser

    build_parser()


@pytest.fixture
def cli(capsys, warm_imports):
    """``cli(*argv)`` -> Outcome (exit code, stdout, stderr, seconds), never raising."""

    def call(*argv: str) -> Outcome:
        capsys.readouterr()
        started, cpu_started = time.monotonic(), time.process_time()
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's --help
            code = int(exc.code or 0)
        seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err, seconds, cpu_seconds)

    return call


def assert_clean_error(outcome: Outcome, code: int, *needles: str, limit_s: float = 10.0) -> None:
    """Exit ``code``, one ``error:`` line on stderr naming every needle, no traceback, within ``limit_s`` of CPU
    time (the refusal comes before the heavy work; CPU time, not the wall clock, so a loaded machine does not fail
    it: a busy loop beside it once made a 7 s refusal take 75 s) and ``WALL_FACTOR`` × ``limit_s`` of wall clock
    (a refusal that waits on something, e.g. a network timeout, still fails)."""
    lines = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    assert outcome.code == code, (outcome.code, outcome.err[-600:])
    assert len(lines) == 1, outcome.err[-600:]
    assert "Traceback" not in outcome.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert outcome.cpu_seconds < limit_s, ("CPU seconds", outcome.cpu_seconds, "wall", outcome.seconds)
    assert outcome.seconds < WALL_FACTOR * limit_s, ("wall seconds", outcome.seconds)


@pytest.fixture
def fresh_engines():
    """No review-store engine of an earlier test (its database gone) is reused, and none is left behind."""
    from alict_core.review.store import dispose_engines

    dispose_engines()
    yield
    dispose_engines()


@pytest.fixture
def saved_run(tmp_path) -> Path:
    """A finished sharded run of 8 sentiment seeds (vader), with its manifest."""
    import dataclasses

    from alict_core.runner import run_streaming
    from alict_core.runner.stream import group_by_seed
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(8)]
    return run_streaming(group_by_seed(cases), ["vader"], run_dir=tmp_path / "run", shard_size=4,
                         cache_root=tmp_path / "pred")


@pytest.fixture
def run_store(tmp_path, monkeypatch, saved_run) -> Path:
    """A private run store (``ALICT_CACHE_DIR`` under tmp_path) holding ``saved_run`` under its own id."""
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    runs = tmp_path / "cache" / "runs"
    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, runs / run_id)
    return runs


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def review_db(cli, tmp_path) -> tuple[str, Path]:
    """A SQLite review database with one task 't' of 3 sentiment seeds, and its exported judgement form (JSONL)."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    assert cli("review", "sample", "--db", url, "--name", "t", "--task", "sentiment", "--cases", str(cases),
               "--size", "3", "--sets", "1", "--k", "1").code == 0
    form = tmp_path / "form.jsonl"
    assert cli("review", "export", "--db", url, "t", "--out", str(form)).code == 0
    return url, form
