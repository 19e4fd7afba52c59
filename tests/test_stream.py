"""Streaming runs: shard layout, local == processes == run_suite, cancel and kill-and-resume, CLI options."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from alict_core.common.errors import AlictError
from alict_core.runner import RunCancelled, RunResult, build_cases, run_suite
from alict_core.runner.stream import group_by_seed, run_streaming

MODELS = ["vader", "textblob"]
REPO = Path(__file__).resolve().parent.parent
WORDS = ["good", "bad", "great", "awful", "fine", "nice", "terrible", "lovely", "boring", "wonderful"]


def small_cases(n_seeds: int = 24) -> list:
    """MFT seeds (two LCs) with two expansions each, and INV seeds with identity-swap variants, grouped by seed."""
    seeds, expansions = [], []
    for i in range(n_seeds):
        word = WORDS[i % len(WORDS)]
        lc = "LC1" if i % 3 else "LC2"
        labels = ["positive"] if i % 2 else ["negative"]
        seeds.append({"id": f"s{i}", "lc_id": lc, "task": "sentiment", "text": f"the film number {i} was {word}",
                      "test_type": "MFT", "expected": {"kind": "label", "labels": labels}})
        expansions += [{"id": f"s{i}-e{j}", "seed_id": f"s{i}", "lc_id": lc,
                        "text": f"the film number {i} was {'really' if j else 'not'} {word}"} for j in range(2)]
    for i in range(4):
        seeds.append({"id": f"inv{i}", "lc_id": "LC3", "task": "sentiment", "test_type": "INV",
                      "text": f"{'women' if i % 2 else 'muslims'} think the show is {WORDS[i]}",
                      "expected": {"kind": "label", "labels": ["positive"]}})
    return group_by_seed(build_cases(seeds, expansions))


def assert_same_run(a: Path, b: Path) -> None:
    """Every results part (every column) and summary.csv identical."""
    parts = sorted(p.name for p in (a / "results").glob("part-*.parquet"))
    assert parts and parts == sorted(p.name for p in (b / "results").glob("part-*.parquet"))
    for name in parts:
        pd.testing.assert_frame_equal(pd.read_parquet(a / "results" / name), pd.read_parquet(b / "results" / name))
    assert (a / "summary.csv").read_bytes() == (b / "summary.csv").read_bytes()


def test_sharded_run_matches_run_suite_and_loads(tmp_path):
    cases = small_cases()
    legacy = run_suite(cases, MODELS, cache_root=tmp_path / "c1")
    out = run_streaming(iter(cases), MODELS, run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c2")
    meta = json.loads((out / "meta.json").read_text())
    assert meta["layout"] == "sharded" and meta["run_id"] == legacy.run_id and meta["n_cases"] == len(cases)
    assert meta["n_shards"] == len(list((out / "results").glob("part-*.parquet"))) > 1
    progress = json.loads((out / "progress.json").read_text())
    assert progress["status"] == "done" and progress["shards_done"] == progress["n_shards"] == meta["n_shards"]
    assert progress["cases_done"] == len(cases)
    # a seed and its expansions are never split across shards
    for part in sorted((out / "cases").glob("part-*.jsonl")):
        rows = [json.loads(line) for line in part.read_text().splitlines()]
        assert {r["seed_id"] for r in rows if r["kind"] == "expansion"} <= {r["case_id"] for r in rows}
    parts = pd.concat([pd.read_parquet(p) for p in sorted((out / "results").glob("part-*.parquet"))])
    legacy_table = legacy.results_table()
    assert list(parts.columns) == list(legacy_table.columns)
    assert dict(parts.dtypes.astype(str)) == dict(legacy_table.dtypes.astype(str))
    pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv"), legacy.summary(), check_dtype=False)
    loaded = RunResult.load(out)
    assert loaded.run_id == legacy.run_id
    pd.testing.assert_frame_equal(loaded.summary(), legacy.summary())
    pd.testing.assert_frame_equal(loaded.results_table(), legacy_table)
    assert len(loaded.pass_to_fail()) == len(legacy.pass_to_fail()) > 0


def test_a_seed_reappearing_in_a_later_shard_is_refused(tmp_path):
    """Ungrouped cases (every seed, then every expansion) used to stream fine and count 0 pass-to-fail."""
    cases = build_cases(*_seed_rows())  # not grouped: the seeds first, then their expansions
    with pytest.raises(AlictError, match=r"seed 's0'.*already written to an earlier shard.*group_by_seed"):
        run_streaming(iter(cases), MODELS, run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c")
    assert not (tmp_path / "run").exists()  # no partial run
    out = run_streaming(iter(group_by_seed(cases)), MODELS, run_dir=tmp_path / "run", shard_size=10,
                        cache_root=tmp_path / "c")
    assert len(RunResult.load(out).pass_to_fail()) == len(run_suite(cases, MODELS, cache_root=tmp_path / "c")
                                                          .pass_to_fail())


def _seed_rows(n_seeds: int = 24) -> tuple[list, list]:
    seeds, expansions = [], []
    for i in range(n_seeds):
        word = WORDS[i % len(WORDS)]
        seeds.append({"id": f"s{i}", "lc_id": "LC1", "task": "sentiment", "text": f"the film number {i} was {word}",
                      "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
        expansions += [{"id": f"s{i}-e{j}", "seed_id": f"s{i}", "lc_id": "LC1",
                        "text": f"the film number {i} was {'really' if j else 'not'} {word}"} for j in range(2)]
    return seeds, expansions


def test_processes_executor_gives_the_local_results(tmp_path):
    cases = small_cases()
    local = run_streaming(cases, MODELS, run_dir=tmp_path / "local", shard_size=12, cache_root=tmp_path / "c1")
    pooled = run_streaming(cases, MODELS, run_dir=tmp_path / "pool", shard_size=12, executor="processes",
                           workers=2, cache_root=tmp_path / "c2")
    assert_same_run(local, pooled)
    meta = json.loads((pooled / "meta.json").read_text())
    assert (meta["executor"], meta["workers"]) == ("processes", 2)


def test_cancel_keeps_finished_shards_and_a_rerun_completes(tmp_path):
    cases = small_cases()
    seen: list[int] = []

    def progress(done: int, total: int, message: str) -> None:
        if total:
            seen.append(done)

    with pytest.raises(RunCancelled, match="run again to resume"):
        run_streaming(cases, MODELS, run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c",
                      progress=progress, should_stop=lambda: len(seen) > 1)
    state = json.loads((tmp_path / "run" / "progress.json").read_text())
    assert state["status"] == "cancelled" and 1 <= state["shards_done"] < state["n_shards"]
    from alict_core.runner.store import unfinished_runs

    assert [(r["run_dir"], r["alive"]) for r in unfinished_runs(tmp_path)] == [(str(tmp_path / "run"), False)]
    assert not (tmp_path / "run" / "meta.json").exists()
    kept = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run" / "results").glob("part-*.parquet")}
    assert len(kept) == state["shards_done"]
    out = run_streaming(cases, MODELS, run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c")
    assert {p: (out / "results" / p).stat().st_mtime_ns for p in kept} == kept  # finished shards not redone
    fresh = run_streaming(cases, MODELS, run_dir=tmp_path / "fresh", shard_size=10, cache_root=tmp_path / "c2")
    assert_same_run(out, fresh)


def test_a_changed_suite_does_not_reuse_shards_and_bad_inputs_are_refused(monkeypatch, tmp_path):
    cases = small_cases()
    first = run_streaming(cases, ["vader"], run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c")
    run_id = json.loads((first / "meta.json").read_text())["run_id"]
    again = run_streaming(cases[:-3], ["vader"], run_dir=tmp_path / "run", shard_size=10, cache_root=tmp_path / "c")
    assert json.loads((again / "meta.json").read_text())["run_id"] != run_id
    assert RunResult.load(again).summary().n_cases.sum() == len(cases) - 3
    with pytest.raises(AlictError, match="shard-size"):
        run_streaming(cases, ["vader"], shard_size=0)
    with pytest.raises(AlictError, match="unknown model"):
        run_streaming(cases, ["no-such-model"], run_dir=tmp_path / "x")
    with pytest.raises(AlictError, match="no test cases"):
        run_streaming([], ["vader"], run_dir=tmp_path / "empty")
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "ray", None)  # as on an install without the extra
        with pytest.raises(AlictError, match="pip install"):
            run_streaming(cases, ["vader"], executor="ray", run_dir=tmp_path / "ray")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(AlictError, match="already holds other files"):
        run_streaming(cases, ["vader"], run_dir=tmp_path / "mine", cache_root=tmp_path / "c")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


PLUGIN = textwrap.dedent("""
    from alict_core.models import MODELS

    class Broken:
        name, labels, fingerprint = "broken-plugin", ("negative", "neutral", "positive"), "broken-plugin-1"

        def predict_proba(self, texts):
            raise RuntimeError("GPU on fire")

    MODELS.add("broken-plugin", lambda **kw: Broken(), "always fails", task="sentiment")
""")


def test_processes_workers_import_plugins_and_a_model_error_is_one_message(tmp_path, monkeypatch):
    (tmp_path / "stream_plugin_models.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))  # spawned workers inherit sys.path; only they import the plugin

    with pytest.raises(AlictError, match="broken-plugin.*GPU on fire"):
        run_streaming(small_cases(), ["broken-plugin"], run_dir=tmp_path / "run", executor="processes", workers=2,
                      shard_size=10, cache_root=tmp_path / "c", plugins=["stream_plugin_models"])
    assert not (tmp_path / "run").exists()  # no finished shard: nothing left behind


def test_two_threads_running_one_run_take_turns(tmp_path):
    import threading

    cases = small_cases()
    outcomes: dict[str, object] = {}

    def go(name: str) -> None:
        try:
            outcomes[name] = run_streaming(cases, MODELS, root=tmp_path / "runs", shard_size=10,
                                           cache_root=tmp_path / "c", extra_files={"request.json": {"who": name}})
        except Exception as exc:  # reported below
            outcomes[name] = exc

    threads = [threading.Thread(target=go, args=(n,)) for n in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert outcomes["a"] == outcomes["b"] and isinstance(outcomes["a"], Path), outcomes
    folder = outcomes["a"]
    assert json.loads((folder / "request.json").read_text())["who"] in "ab"
    assert RunResult.load(folder).summary().n_cases.sum() == len(cases) * len(MODELS)  # manifest verifies


def test_cli_run_options(tmp_path, capsys, monkeypatch):
    from alict_core.cli import main

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment",
                                         "text": f"the staff was {w}", "test_type": "MFT",
                                         "expected": {"kind": "label", "labels": ["positive"]}}) + "\n"
                             for i, w in enumerate(WORDS)))
    base = ["run", "--task", "sentiment", "--models", "vader", "--lc", "LC4", "--seeds", str(seeds), "--quiet",
            "--keep-flagged"]
    assert main([*base, "--out", str(tmp_path / "run"), "--shard-size", "4"]) == 0
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert (meta["n_cases"], meta["n_shards"], meta["executor"]) == (len(WORDS), 3, "local")
    assert "3 shard(s) on local" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main([*base, "--shard-size", "0"])
    assert exit_info.value.code == 2 and "out of range" in capsys.readouterr().err
    assert main([*base, "--ray-address", "127.0.0.1:6379"]) != 0
    assert "--ray-address needs --executor ray" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as on an install without the extra
    assert main([*base, "--executor", "ray"]) != 0
    assert ".[ray]" in capsys.readouterr().err


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from alict_core.models import MODELS
    from alict_core.runner import build_cases
    from alict_core.runner.stream import run_streaming

    class Slow:
        name, labels, fingerprint = "slow-kw", ("negative", "neutral", "positive"), "slow-kw-test-1"
        def predict_proba(self, texts):
            time.sleep(float(sys.argv[3]))
            out = np.full((len(texts), 3), 0.1)
            for i, t in enumerate(texts):
                out[i, 0 if "bad" in t else 2 if "good" in t else 1] = 0.8
            return out

    if __name__ == "__main__":
        MODELS.add("slow-kw", lambda **kw: Slow(), "test model", task="sentiment")
        seeds = [{"id": f"s{i}", "lc_id": "LC", "text": f"text {i} is {'good' if i % 3 else 'bad'}",
                  "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}} for i in range(40)]
        expansions = [{"id": f"s{i}-e", "seed_id": f"s{i}", "lc_id": "LC", "text": f"text {i} is not bad"}
                      for i in range(0, 40, 2)]
        from alict_core.runner.stream import group_by_seed
        cases = group_by_seed(build_cases(seeds, expansions))
        out = run_streaming(iter(cases), ["slow-kw"], run_dir=Path(sys.argv[1]), shard_size=8, batch_size=4,
                            cache_root=Path(sys.argv[2]))
        print("DONE", out)
""")


def test_sigkill_after_first_shard_resumes_and_matches(tmp_path):
    script = tmp_path / "stream_kill.py"
    script.write_text(KILL_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(script), str(run_dir), str(tmp_path / "c1"), "0.2"], env=env)
    deadline = time.time() + 120
    progress = run_dir / "progress.json"
    while time.time() < deadline and not (progress.exists() and json.loads(progress.read_text())["shards_done"]):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    state = json.loads(progress.read_text())
    assert state["status"] == "running" and 1 <= state["shards_done"] < state["n_shards"], state
    from alict_core.runner.store import unfinished_runs

    assert [r["alive"] for r in unfinished_runs(tmp_path)] == [False]  # killed: shown as interrupted
    kept = {p.name: p.stat().st_mtime_ns for p in (run_dir / "results").glob("part-*.parquet")}
    assert len(kept) >= 1 and not (run_dir / "meta.json").exists()
    resumed = subprocess.run([sys.executable, str(script), str(run_dir), str(tmp_path / "c1"), "0"], env=env,
                             capture_output=True, text=True, timeout=300)
    assert "DONE" in resumed.stdout, resumed.stderr
    assert {p: (run_dir / "results" / p).stat().st_mtime_ns for p in kept} == kept  # not redone
    whole = subprocess.run([sys.executable, str(script), str(tmp_path / "whole"), str(tmp_path / "c2"), "0"],
                           env=env, capture_output=True, text=True, timeout=300)
    assert "DONE" in whole.stdout, whole.stderr
    assert_same_run(run_dir, tmp_path / "whole")
    assert json.loads((run_dir / "meta.json").read_text())["run_id"] == \
        json.loads((tmp_path / "whole" / "meta.json").read_text())["run_id"]
