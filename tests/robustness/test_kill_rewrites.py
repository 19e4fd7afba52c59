"""SIGKILL while a folder is re-written: a streaming run over a finished one, `seeds --out`, a hardening export.

Afterwards the folder is the old one or the new one (whole, verified), never a mix; a killed re-write of a
finished run resumes in its staging folder and replaces the old run only when finished.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from alict_core.runner import RunResult

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import dataclasses, itertools, sys, threading, time
    from pathlib import Path
    import numpy as np

    what, out, cache, delay = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4])
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else None

    class Slow:
        labels = ("negative", "neutral", "positive")

        def __init__(self):
            self.name, self.fingerprint = "kw-slow", "kw-slow-robustness-1"

        calls = 0

        def predict_proba(self, texts):
            Slow.calls += 1
            if delay < 0 and Slow.calls > -delay:
                threading.Event().wait()  # a fixed kill point: the writer stops here until it is killed
            time.sleep(max(delay, 0.0))
            out = np.full((len(texts), 3), 0.1)
            for i, t in enumerate(texts):
                out[i, 0 if "bad" in t else 2 if "good" in t else 1] = 0.8
            return out

    def stream_inputs():
        from alict_core.common.hashing import hash_json
        from alict_core.models import MODELS
        from alict_core.runner.stream import group_by_seed
        from tests.robustness.support import small_cases

        MODELS.add("kw-slow", lambda **kw: Slow(), "robustness test model", task="sentiment")
        inputs = [group_by_seed(small_cases(30, "positive")),  # the second inputs share no text with the first
                  group_by_seed([dataclasses.replace(c, text="again " + c.text) for c in small_cases(40, "negative")])]
        ids = [hash_json({"cases": [hash_json(c.to_dict()) for c in cs], "models": ["kw-slow-robustness-1|kw-slow"]})
               for cs in inputs]
        return inputs, ids

    if what == "stream":
        from alict_core.runner.stream import run_streaming
        inputs, ids = stream_inputs()
        print("READY", *ids, flush=True)
        order = [int(c) for c in sys.argv[6]] if len(sys.argv) > 6 else None
        for i in itertools.count():
            if limit is not None and i >= limit:
                break
            k = order[i] if order else i % 2
            run_streaming(inputs[k], ["kw-slow"], run_dir=out, shard_size=5, batch_size=2, cache_root=cache)
            print("SAVED", ids[k], flush=True)
    elif what == "seeds":
        from alict_core.cli import main
        from alict_core.data.corpus import load_corpus
        load_corpus("sentiment")  # kills land in the writes, not in loading the corpus
        print("READY", flush=True)
        import contextlib, io
        for i in itertools.count():
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(["seeds", "--task", "sentiment", "--lc", "1", "--lc", "4", "--lc", "5",
                             "--max", str(3 + 2 * (i % 2)), "--out", str(out), "--json"])
            assert code == 0
            print("SAVED", 3 + 2 * (i % 2), flush=True)
    else:  # harden
        from alict_core.harden.export import export_hardening_data
        from alict_core.harden.split import SplitRatios
        from alict_core.runner import run_suite
        from tests.robustness.support import KeywordModel, small_cases

        run_dir = run_suite(small_cases(40), [KeywordModel()], cache_root=cache).save(out.parent / "hrun")
        print("READY", flush=True)
        for i in itertools.count():
            seed = 1 + i % 2
            export_hardening_data(run_dir, out, ratios=SplitRatios(0.6, 0.2, 0.2), seed=seed, overwrite=True,
                                  formats=("jsonl", "csv"))
            print("SAVED", seed, flush=True)
""")


def _writer(tmp_path: Path, *args: str) -> subprocess.Popen:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, str(script), *args], env=env, stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)


def _ready(proc: subprocess.Popen) -> list[str]:
    line = proc.stdout.readline().split()
    assert line[:1] == ["READY"], line
    return line[1:]


def _saved(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline().split()
    assert line[:1] == ["SAVED"], line
    return line[1]


def _kill(proc: subprocess.Popen, seconds: float) -> None:
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def _allowed_leftover(name: str) -> bool:
    return ".tmp-" in name or ".old-" in name or name.endswith(".pending")


def test_killed_rewrite_of_a_finished_run_leaves_it_whole_and_resumes(tmp_path):
    """Deterministic point: killed after the re-write finished a shard; the old run is intact, then resumed."""
    out, cache = tmp_path / "runs" / "r", tmp_path / "cache"
    first = _writer(tmp_path, "stream", str(out), str(cache), "0", "1", "0")
    ids = _ready(first)
    assert _saved(first) == ids[0]
    first.wait()
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    proc = _writer(tmp_path, "stream", str(out), str(cache), "-3", "1", "1")  # the other inputs; stops in shard 2
    _ready(proc)
    progress = out.with_name(".r.pending") / "progress.json"
    deadline = time.time() + 120
    while time.time() < deadline and not (progress.exists() and json.loads(progress.read_text())["shards_done"]):
        time.sleep(0.05)  # polls the writer's progress file; the writer itself stops at a fixed point
    _kill(proc, 0)
    state = json.loads(progress.read_text())
    assert state["run_id"] == ids[1] and 1 <= state["shards_done"] < state["n_shards"], state
    assert RunResult.load(out).run_id == ids[0]  # the old run, whole and verified
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    from alict_core.runner.store import list_runs

    assert [p.name for p in list_runs(out.parent)] == ["r"]  # the staging folder is never listed
    kept = {p.name: p.stat().st_mtime_ns for p in (progress.parent / "results").glob("part-*.parquet")}

    resumed = _writer(tmp_path, "stream", str(out), str(cache), "0", "1", "1")
    _ready(resumed)
    assert _saved(resumed) == ids[1]
    resumed.wait()
    assert RunResult.load(out).run_id == ids[1]
    assert {name: (out / "results" / name).stat().st_mtime_ns for name in kept} == kept  # resumed, not redone
    assert not _leftovers(out.parent)


@pytest.mark.parametrize("seed", [5, pytest.param(11, marks=pytest.mark.slow_full)])  # make test: one seed
def test_sigkill_at_random_points_of_run_rewrites(tmp_path, seed):
    """Random points (cases staged, shards predicted, counts merged, the swap): old or new run, never a mix."""
    rng = random.Random(seed)
    out, cache = tmp_path / "runs" / "r", tmp_path / "cache"
    ids: list[str] = []
    for attempt in range(5):
        proc = _writer(tmp_path, "stream", str(out), str(cache), "0.01" if attempt % 2 else "0")
        ids = _ready(proc)
        if attempt == 0:
            assert _saved(proc) == ids[0]  # a finished run to re-write
        _kill(proc, rng.uniform(0.05, 1.5))
        loaded = RunResult.load(out)  # verifies the manifest: one consistent run
        assert loaded.run_id in ids and len(loaded.case_list) in (30, 40)
        assert all(_allowed_leftover(name) for name in _leftovers(out.parent)), _leftovers(out.parent)
    proc = _writer(tmp_path, "stream", str(out), str(cache), "0", "2", "10")  # both inputs, to the end
    _ready(proc)
    assert [_saved(proc), _saved(proc)] == [ids[1], ids[0]]
    proc.wait()
    assert RunResult.load(out).run_id == ids[0]
    assert not [name for name in _leftovers(out.parent) if not name.startswith((".r.tmp-", ".stream.tmp-"))]


def test_sigkill_while_seeds_rewrites_its_folder(tmp_path, sentiment_corpus):
    """`seeds --out` writes every LC's file at once: after a kill all files come from one run (3 or 5 seeds)."""
    rng = random.Random(7)
    out = tmp_path / "seeds"
    for _attempt in range(4):
        proc = _writer(tmp_path, "seeds", str(out), str(tmp_path / "cache"), "0")
        _ready(proc)
        if not out.exists():
            assert _saved(proc) == "3"
        _kill(proc, rng.uniform(0.1, 2.5))
        sizes = {p.name: len(p.read_text().splitlines()) for p in out.glob("*.jsonl")}
        assert len(sizes) == 3 and len(set(sizes.values())) == 1, sizes  # one generation, never a mix
        assert all(_allowed_leftover(name) for name in _leftovers(tmp_path) if name != "writer.py")


def test_sigkill_while_a_hardening_export_is_rewritten(tmp_path):
    rng = random.Random(3)
    out = tmp_path / "export"
    seeds: set[int] = set()
    for _attempt in range(4):
        proc = _writer(tmp_path, "harden", str(out), str(tmp_path / "cache"), "0")
        _ready(proc)
        if not out.exists():
            _saved(proc)
        _kill(proc, rng.uniform(0.02, 0.6))
        settings = json.loads((out / "export.json").read_text())
        seeds.add(settings["seed"])
        rows = sum(len((out / f"{split}.jsonl").read_text().splitlines()) for split in ("train", "validation", "test"))
        assert rows == sum(settings["counts"][split][lc] for split in settings["counts"]
                           for lc in settings["counts"][split])  # the files are the ones export.json describes
        assert all(_allowed_leftover(name) for name in _leftovers(tmp_path))
    assert seeds <= {1, 2}


def test_listings_ignore_a_save_in_progress(tmp_path, monkeypatch):
    """A lego save staged (or killed) in ``.<key>.tmp-*`` is never offered as a suite."""
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    from alict_core.common.config import artefact_dir
    from alict_core.lego.pipeline import saved_suites

    for name in ("k1", ".k2.tmp-abc", ".k1.tmp-old-def"):
        folder = artefact_dir("lego") / name
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text(json.dumps({"task": "sentiment", "trees": 1, "dir_tests": 2}))
        (folder / "cases.jsonl").write_text("")
    assert [Path(row["path"]).parent.name for row in saved_suites("sentiment")] == ["k1"]


def test_merges_into_one_folder_take_turns(tmp_path, monkeypatch):
    """Hostile pass 2: `seeds --out D --lc 4` and `seeds --out D --lc 5` at once both said "seeds written", and D
    held only one LC's file (each merged a copy of D and swapped it in; the last swap won). A merge now holds the
    folder's lock from its copy to its swap: a second writer cannot take it meanwhile, and after the first one it
    copies the first one's files too."""
    import fcntl

    from alict_core.common.manifest import atomic_dir, folder_lock_file

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "seeds"
    with atomic_dir(out, owned=("*.jsonl",), merge=True) as staging:
        (staging / "sentiment-lc04.jsonl").write_text("{}\n")
        with open(folder_lock_file(out), "a") as other:  # a second writer's try, without waiting
            with pytest.raises(BlockingIOError):
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    with atomic_dir(out, owned=("*.jsonl",), merge=True) as staging:
        (staging / "sentiment-lc05.jsonl").write_text("{}\n")
    assert sorted(p.name for p in out.iterdir()) == ["sentiment-lc04.jsonl", "sentiment-lc05.jsonl"]
