"""SIGKILL while a run is re-saved or an export is written: afterwards the old or the new state, never a mix."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from alict_core.common.manifest import verify_dir
from alict_core.runner import RunResult

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys, itertools
    from pathlib import Path
    from alict_core.runner import run_suite
    from alict_core.suites import export_bundle
    from tests.robustness.support import KeywordModel, small_cases

    what, out, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    results = [run_suite(small_cases(n, label), [KeywordModel()], cache_root=cache)
               for n, label in ((30, "positive"), (40, "negative"))]
    print("READY", results[0].run_id, results[1].run_id, flush=True)
    for i in itertools.count():
        result = results[i % 2]
        if what == "run":
            result.save(out)
        else:
            export_bundle(result, out, "sentiment")
        print("SAVED", result.run_id, flush=True)
""")


def _start(tmp_path: Path, what: str, out: Path) -> tuple[subprocess.Popen, list[str]]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(script), what, str(out), str(tmp_path / "cache")], env=env,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    ready = proc.stdout.readline().split()
    assert ready[:1] == ["READY"], ready
    first = proc.stdout.readline().split()  # one complete save: the kill below hits a re-save
    assert first[:1] == ["SAVED"], first
    return proc, ready[1:]


def _kill_at_random(proc: subprocess.Popen, rng: random.Random) -> None:
    time.sleep(rng.uniform(0.05, 0.8))
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("what", ["run", "export"])
def test_sigkill_leaves_old_or_new(tmp_path, what):
    rng = random.Random(21)
    out = tmp_path / "out"
    seen_ids: set[str] = set()
    for _attempt in range(4):
        proc, ids = _start(tmp_path, what, out)
        _kill_at_random(proc, rng)
        if what == "run":
            loaded = RunResult.load(out)  # verifies the manifest: one consistent run
            assert loaded.run_id in ids
            seen_ids.add(loaded.run_id)
            assert len(loaded.case_list) in (30, 40)
        else:
            manifest = verify_dir(out, "export")
            assert manifest.key in ids
            seen_ids.add(manifest.key)
        leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(".")]
        assert all(".tmp-" in name or ".old-" in name for name in leftovers)
    assert seen_ids <= set(ids)


def test_listing_ignores_temporary_folders(tmp_path):
    from alict_core.runner.store import list_runs

    proc, ids = _start(tmp_path, "run", tmp_path / "runs" / "r1")
    _kill_at_random(proc, random.Random(3))
    names = [p.name for p in list_runs(tmp_path / "runs")]
    assert names == ["r1"]


def test_app_run_list_ignores_a_run_being_saved(tmp_path, monkeypatch):
    from alict_app import runs

    monkeypatch.setattr(runs, "runs_root", lambda: tmp_path)
    done = {"key": "k1", "status": "done", "finished": 1,  # a request of the shape the app writes (pass 11, P11-4)
            "request": {"task": "sentiment", "lc_ids": ["sentiment-lc01"], "models": [{"name": "vader"}]}}
    for folder in ("k1", ".k1.tmp-abc", ".k2.tmp-def"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "request.json").write_text(__import__("json").dumps(done))
        (tmp_path / folder / "meta.json").write_text("{}")
    assert [r["key"] for r in runs.list_runs()] == ["k1"]
