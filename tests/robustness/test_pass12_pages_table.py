"""Hostile pass 12 table, pages (notes: attack_pass12_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]


# P12-D: a stop (the app's Cancel, a task or page switch: Streamlit ends the script at its next progress call) on a
# resuming run's first progress call left progress.json "running" with the server's live pid: a phantom run ------

class ScriptStopped(BaseException):
    """What Streamlit raises in a page's script when the user cancels, switches task or page (not an Exception)."""


def test_p12_d_a_stop_on_the_resume_call_leaves_no_running_run(tmp_path):
    from alict_core.runner import run_streaming
    from alict_core.runner.stream import group_by_seed
    from alict_core.runner.store import unfinished_runs
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(8)]

    def stop_on(prefix: str):
        def progress(done: int, total: int, message: str = "") -> None:
            if message.startswith(prefix):
                raise ScriptStopped(message)
        return progress

    def run(progress) -> None:
        with pytest.raises(ScriptStopped):
            run_streaming(group_by_seed(cases), ["vader"], root=tmp_path / "runs", shard_size=4,
                          cache_root=tmp_path / "pred", progress=progress)

    run(stop_on("shard 1/2 done"))  # one shard finished: a run to resume
    run(stop_on("resuming after"))  # stopped at once when resumed
    found = unfinished_runs(tmp_path / "runs")
    assert [(p["status"], p["shards_done"]) for p in found] == [("failed", 1)], found
