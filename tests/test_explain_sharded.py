"""Sharded explanation of an LC's failures: same pairs as explain_lc_failures, resumable, executors agree."""

from __future__ import annotations

import pytest
from test_explain_template import FILLER, Negation, _saved_run

from alict_core.cli import main
from alict_core.common.errors import AlictError
from alict_core.explain import ExplainError, explain_lc_failures, sharded
from alict_core.explain.sharded import explain_failures_sharded
from alict_core.models import MODELS

OPTIONS = {"seed": 0, "vocabulary": FILLER, "method": "lime", "template_samples": 200}


class Fingerprinted(Negation):
    name = "negation-sharded"
    fingerprint = "negation-sharded-v1"


def without_calls(pair: dict) -> dict:
    return {k: {**v, "model_calls": None} if isinstance(v, dict) and "model_calls" in v else v for k, v in pair.items()}


@pytest.fixture
def models(tmp_path, monkeypatch):
    from alict_core.common.config import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "alict-cache"))
    MODELS.add("negation-fiction", lambda **_: Negation(), "test model", task="sentiment", offline=True)
    MODELS.add("negation-sharded", lambda **_: Fingerprinted(), "test model", task="sentiment", offline=True)
    yield
    MODELS.remove("negation-fiction")
    MODELS.remove("negation-sharded")


def test_sharded_pairs_equal_the_in_memory_ones(tmp_path, models):
    run_dir = _saved_run(tmp_path)
    expected = explain_lc_failures(run_dir, "LC1", cache=False, **OPTIONS)
    seen = []
    result = explain_failures_sharded(run_dir, "LC1", shard_size=1, cache=False, resume=False, out_dir=tmp_path / "out",
                                      progress=lambda done, total, stage: seen.append((done, total)), **OPTIONS)
    assert result.pairs == len(expected) == 2 and result.model == "negation-fiction"
    # model_calls counts texts not yet in the model cache, which is per shard (so executors and resumes agree)
    assert [without_calls(p.to_dict()) for p in result.iter_pairs()] == [without_calls(p.to_dict()) for p in expected]
    assert seen == [(0, 2), (1, 2), (2, 2)] and not result.path.with_suffix(".shards").exists()
    empty = explain_failures_sharded(run_dir, "LC2", out_dir=tmp_path / "out", **OPTIONS)
    assert empty.pairs == 0 and list(empty.iter_pairs()) == []
    with pytest.raises(ExplainError, match="LC 'LC9' is not in this run"):
        explain_failures_sharded(run_dir, "LC9", out_dir=tmp_path / "out")


def test_finished_shards_are_kept_and_the_rest_resumes(tmp_path, models, monkeypatch):
    from alict_core.runner import build_cases, run_suite

    seeds = [{"id": "LC1-s1", "lc_id": "LC1", "text": "the plot is enthralling", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}},
             {"id": "LC1-s2", "lc_id": "LC1", "text": "this story is enthralling", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}}]
    expansions = [{"seed_id": "LC1-s1", "text": "the plot is not enthralling"},
                  {"seed_id": "LC1-s2", "text": "this story is not so enthralling"}]
    twin = run_suite(build_cases(seeds, expansions), [Fingerprinted()], cache_root=tmp_path / "c2").save(
        tmp_path / "run2")

    class Stop(Exception):
        pass

    def stop_after_first(done, total, stage):
        if done == 1:
            raise Stop

    options = {**OPTIONS, "cache": False}  # no per-pair cache: only the shard parts can save work
    with pytest.raises(Stop):
        explain_failures_sharded(twin, "LC1", shard_size=1, out_dir=tmp_path / "out", progress=stop_after_first,
                                 **options)
    parts = list((tmp_path / "out").glob("*.shards/part-*.jsonl"))
    assert len(parts) == 1
    done = []
    real_call = sharded.ExplainShardWorker.__call__
    monkeypatch.setattr(sharded.ExplainShardWorker, "__call__",
                        lambda self, task: done.append(task["index"]) or real_call(self, task))
    resumed = explain_failures_sharded(twin, "LC1", shard_size=1, out_dir=tmp_path / "out", **options)
    assert resumed.pairs == 2 and done == [1]  # shard 0 was finished before the stop
    fresh = explain_failures_sharded(twin, "LC1", shard_size=1, out_dir=tmp_path / "fresh", **options)
    assert resumed.path.read_text() == fresh.path.read_text() and done == [1, 0, 1]
    again = explain_failures_sharded(twin, "LC1", shard_size=1, out_dir=tmp_path / "out", **options)
    assert done == [1, 0, 1] and again.path == resumed.path  # the finished artefact is reused
    from alict_core.common.manifest import file_manifest_path

    assert file_manifest_path(again.path).exists()
    again.path.write_text("tampered\n")  # a changed artefact is quarantined and recomputed, never served
    redone = explain_failures_sharded(twin, "LC1", shard_size=1, out_dir=tmp_path / "out", **options)
    assert done == [1, 0, 1, 0, 1] and redone.path.read_text() == fresh.path.read_text()


def test_bad_options_fail_before_any_work(tmp_path, models):
    run_dir = _saved_run(tmp_path)
    with pytest.raises(ExplainError, match="shard_size"):
        explain_failures_sharded(run_dir, "LC1", shard_size=0, out_dir=tmp_path / "out")
    with pytest.raises(ExplainError, match="unknown option"):
        explain_failures_sharded(run_dir, "LC1", out_dir=tmp_path / "out", bogus=1)
    with pytest.raises(AlictError, match="unknown executor"):
        explain_failures_sharded(run_dir, "LC1", executor="nope", out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_flags_reach_the_sharded_explainer(tmp_path, models, capsys, monkeypatch):
    import alict_core.explain.template as template_module
    from alict_core.explain import Vocabulary

    monkeypatch.setattr(
        template_module, "default_vocabulary", lambda labels, with_pos=False: Vocabulary.from_words(FILLER)
    )
    run_dir = _saved_run(tmp_path)
    assert main(["explain", "--results", str(run_dir), "--lc", "LC1", "--method", "lime", "--template-samples",
                 "200", "--executor", "local", "--workers", "1", "--shard-size", "1"]) == 0
    assert capsys.readouterr().out.count("== pair") == 2
    with pytest.raises(SystemExit):
        main(["explain", "--results", str(run_dir), "--lc", "LC1", "--workers", "0"])
    assert "--workers: 0 is out of range" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.no_models  # VADER is a pip package, not a built model: runs beside the quick build
def test_vader_pairs_with_two_processes_equal_local(tmp_path, monkeypatch):
    """A real registered model (VADER) in spawned workers explains the same pairs as the local executor."""
    pytest.importorskip("alict_core.executors.processes", reason="the processes executor is not merged yet")
    from alict_core.common.config import CACHE_ENV
    from alict_core.models import get_model
    from alict_core.runner import build_cases, run_suite

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "alict-cache"))
    expected = {"kind": "label", "labels": ["positive"]}
    seeds = [{"id": f"LC1-s{i}", "lc_id": "LC1", "text": text, "test_type": "MFT", "expected": expected}
             for i, text in enumerate(["the plot is good", "this story is great", "the film is nice"])]
    expansions = [{"seed_id": "LC1-s0", "text": "the plot is not good"},
                  {"seed_id": "LC1-s1", "text": "this story is not great"},
                  {"seed_id": "LC1-s2", "text": "the film is not nice"}]
    run = run_suite(build_cases(seeds, expansions), [get_model("vader")], cache_root=tmp_path / "c")
    options = {**OPTIONS, "cache": False, "resume": False, "shard_size": 1}
    local = explain_failures_sharded(run, "LC1", out_dir=tmp_path / "local", **options)
    pooled = explain_failures_sharded(run, "LC1", out_dir=tmp_path / "pool", executor="processes", workers=2,
                                      **options)
    assert local.pairs == 3 and pooled.path.read_text() == local.path.read_text()


KILLED_SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from test_explain_sharded import OPTIONS, Fingerprinted
from alict_core.explain.sharded import explain_failures_sharded
from alict_core.models import MODELS


class Slow(Fingerprinted):
    def predict_proba(self, texts):
        time.sleep(0.1)
        return super().predict_proba(texts)


MODELS.add("negation-sharded", lambda **_: Slow(), "test model", task="sentiment", offline=True)
explain_failures_sharded({run!r}, "LC1", shard_size=1, out_dir={out!r}, cache=False, **OPTIONS)
"""


def _twin_run(tmp_path):
    from alict_core.runner import build_cases, run_suite

    expected = {"kind": "label", "labels": ["positive"]}
    seeds = [{"id": f"LC1-s{i}", "lc_id": "LC1", "text": text, "test_type": "MFT", "expected": expected}
             for i, text in enumerate(["the plot is enthralling", "this story is enthralling", "it is enthralling"])]
    expansions = [{"seed_id": "LC1-s0", "text": "the plot is not enthralling"},
                  {"seed_id": "LC1-s1", "text": "this story is not so enthralling"},
                  {"seed_id": "LC1-s2", "text": "it is not very enthralling"}]
    return run_suite(build_cases(seeds, expansions), [Fingerprinted()], cache_root=tmp_path / "c").save(
        tmp_path / "run")


def test_a_killed_explain_resumes_after_its_last_finished_shard(tmp_path, models, monkeypatch):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    run_dir = _twin_run(tmp_path)
    script = KILLED_SCRIPT.format(tests=str(Path(__file__).parent), run=str(run_dir), out=str(tmp_path / "out"))
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "out").glob("*.shards/part-00000.jsonl.sha256")):  # sealed: finished (a part
            # without its seal yet is computed again, so a kill between the two made the count flaky under load)
            assert proc.poll() is None, "the explain subprocess ended before it was killed"
            assert time.monotonic() < deadline, "no finished shard within 120 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finished = {int(p.name.split("-")[1].split(".")[0]) for p in (tmp_path / "out").glob("*.shards/part-*.jsonl")
                if p.with_name(p.name + ".sha256").is_file()}
    assert 1 <= len(finished) < 3 and not list((tmp_path / "out").glob("*.jsonl"))
    done = []
    real_call = sharded.ExplainShardWorker.__call__
    monkeypatch.setattr(sharded.ExplainShardWorker, "__call__",
                        lambda self, task: done.append(task["index"]) or real_call(self, task))
    resumed = explain_failures_sharded(run_dir, "LC1", shard_size=1, out_dir=tmp_path / "out", cache=False, **OPTIONS)
    assert sorted(done) == sorted({0, 1, 2} - finished)
    fresh = explain_failures_sharded(run_dir, "LC1", shard_size=1, out_dir=tmp_path / "fresh", cache=False,
                                     **OPTIONS)
    assert resumed.pairs == 3 and resumed.path.read_text() == fresh.path.read_text()
