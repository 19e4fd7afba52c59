"""Fixtures of the robustness tables: run the CLI in-process and check its one-line outcome."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from alict_core.cli import main


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float


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
        started = time.monotonic()
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's --help
            code = int(exc.code or 0)
        seconds = time.monotonic() - started
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err, seconds)

    return call


def assert_clean_error(outcome: Outcome, code: int, *needles: str, limit_s: float = 10.0) -> None:
    """Exit ``code``, one ``error:`` line on stderr naming every needle, no traceback, within ``limit_s``."""
    lines = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    assert outcome.code == code, (outcome.code, outcome.err[-600:])
    assert len(lines) == 1, outcome.err[-600:]
    assert "Traceback" not in outcome.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert outcome.seconds < limit_s, outcome.seconds
