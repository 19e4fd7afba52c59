"""Sharded expansion: same rows and counts as expand(), resumes after a SIGKILL, executors agree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from expansion_fakes import CHECK, MASKER, MLM, PARSER, SPEC, FixedSuggester, register, seeds, unregister

from alict_core.common.errors import AlictError
from alict_core.executors.shards import shard_folder
from alict_core.expansion import ExpansionError, ExpansionSet, expand
from alict_core.expansion.sharded import MASKERS, PREDICATE_CHECKS, expand_sharded, merge_counts
from alict_core.mlm import get_suggester
from alict_core.parsing import get_parser

OPTIONS = {"parser": PARSER, "mlm": MLM, "masker": MASKER, "predicate_check": CHECK, "top_k_words": 6}


@pytest.fixture(autouse=True)
def fakes():
    register()
    FixedSuggester.delay_s = 0.0
    yield
    unregister()


def unsharded(n_seeds: int, out_dir: Path) -> ExpansionSet:
    return expand(seeds(n_seeds), SPEC, get_parser(PARSER), get_suggester(MLM), masker=MASKERS.create(MASKER),
                  predicate_check=PREDICATE_CHECKS.create(CHECK), top_k_words=6, out_dir=out_dir)


def test_shards_concatenate_to_the_unsharded_artefact(tmp_path):
    whole = unsharded(7, tmp_path / "whole")
    stages = []
    summary = expand_sharded(seeds(7), SPEC, shard_size=2, out_dir=tmp_path / "sharded",
                             progress=lambda done, total, stage: stages.append((done, total, stage)), **OPTIONS)
    assert summary.key == whole.key and summary.path.name == whole.path.name
    loaded = ExpansionSet.from_jsonl(summary.path)  # today's reader
    assert loaded.rows == whole.rows and summary.rows == len(whole.rows) > 0
    assert summary.counts == whole.counts == loaded.counts
    assert stages[0] == (0, 4, "shards") and stages[-1] == (4, 4, "shards")
    assert not shard_folder(summary.path).exists()  # parts removed once the artefact is whole


def test_second_call_reads_the_artefact(tmp_path):
    first = expand_sharded(seeds(3), SPEC, shard_size=1, out_dir=tmp_path, **OPTIONS)
    calls = FixedSuggester.calls
    again = expand_sharded(seeds(3), SPEC, shard_size=1, out_dir=tmp_path, **OPTIONS)
    assert FixedSuggester.calls == calls and again.counts == first.counts and again.rows == first.rows
    # the whole-suite expand() reads the sharded artefact too (same key)
    assert unsharded(3, tmp_path).rows == list(first.iter_rows())


def test_finished_parts_are_reused_and_a_half_written_shard_redone(tmp_path):
    reference = expand_sharded(seeds(5), SPEC, shard_size=2, out_dir=tmp_path / "ref", **OPTIONS)
    parts = shard_folder(reference.path.parent.parent / "resume" / reference.path.name)

    class Stop(Exception):
        pass

    def stop_after_first(done, total, stage):
        if done == 1:
            raise Stop

    with pytest.raises(Stop):
        expand_sharded(seeds(5), SPEC, shard_size=2, out_dir=tmp_path / "resume", progress=stop_after_first,
                       **OPTIONS)
    assert sorted(p.name for p in parts.glob("part-*.jsonl")) == ["part-00000.jsonl"]
    calls = FixedSuggester.calls
    resumed = expand_sharded(seeds(5), SPEC, shard_size=2, out_dir=tmp_path / "resume", **OPTIONS)
    assert FixedSuggester.calls == calls + 4  # shards 1 and 2 only: a fill call and a neighbour-likelihood round each
    assert resumed.path.read_bytes() == reference.path.read_bytes() and resumed.counts == reference.counts


SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from expansion_fakes import CHECK, MASKER, MLM, PARSER, SPEC, FixedSuggester, register, seeds
from alict_core.expansion.sharded import expand_sharded
register()
FixedSuggester.delay_s = 0.4
expand_sharded(seeds(6), SPEC, shard_size=1, out_dir={out!r}, parser=PARSER, mlm=MLM, masker=MASKER,
               predicate_check=CHECK, top_k_words=6)
"""


def test_a_killed_expand_resumes_after_its_last_finished_shard(tmp_path):
    reference = expand_sharded(seeds(6), SPEC, shard_size=1, out_dir=tmp_path / "ref", **OPTIONS)
    out = tmp_path / "killed"
    parts = shard_folder(out / reference.path.name)
    script = SCRIPT.format(tests=str(Path(__file__).parent), out=str(out))
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        deadline = time.monotonic() + 120
        while not (parts / "part-00001.jsonl").exists():
            assert proc.poll() is None, "the expand subprocess ended before it was killed"
            assert time.monotonic() < deadline, "no finished shard within 120 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finished = sorted(p.name for p in parts.glob("part-*.jsonl"))
    assert 2 <= len(finished) < 6 and not (out / reference.path.name).exists()
    calls = FixedSuggester.calls
    resumed = expand_sharded(seeds(6), SPEC, shard_size=1, out_dir=out, **OPTIONS)
    assert FixedSuggester.calls - calls <= 2 * (6 - len(finished))  # per shard: fills + a neighbour-likelihood round
    assert resumed.path.read_bytes() == reference.path.read_bytes() and resumed.counts == reference.counts


def test_bad_settings_and_executors_fail_with_one_message(tmp_path):
    with pytest.raises(ExpansionError, match="shard_size"):
        expand_sharded(seeds(2), SPEC, shard_size=0, out_dir=tmp_path, **OPTIONS)
    with pytest.raises(AlictError, match="unknown executor 'nope'"):
        expand_sharded(seeds(2), SPEC, executor="nope", out_dir=tmp_path, **OPTIONS)
    with pytest.raises(AlictError, match="--workers"):
        expand_sharded(seeds(2), SPEC, workers=0, out_dir=tmp_path, **OPTIONS)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_no_seeds_give_an_empty_artefact_with_zero_counts(tmp_path):
    summary = expand_sharded([], SPEC, out_dir=tmp_path, **OPTIONS)
    assert summary.rows == 0 and summary.counts["LC1"]["seeds"] == 0


def test_merge_counts_adds_numbers_and_rejection_tallies():
    total: dict = {}
    merge_counts(total, {"LC1": {"seeds": 2, "accepted": 1, "rejected": {"pos": 2}}})
    merge_counts(total, {"LC1": {"seeds": 3, "accepted": 0, "rejected": {"cap": 1, "pos": 1}}})
    assert total == {"LC1": {"seeds": 5, "accepted": 1, "rejected": {"cap": 1, "pos": 3}}}


def test_cli_names_an_executor_that_is_not_installed(tmp_path, capsys, monkeypatch):
    from alict_core.cli import main
    from alict_core.executors import base

    monkeypatch.setitem(base.PLUGIN_MODULES, "ray", "alict_core.executors.not_a_module")
    monkeypatch.setattr(base.EXECUTORS, "_entries", {k: v for k, v in base.EXECUTORS._entries.items() if k != "ray"})
    code = main(["expand", "--task", "sentiment", "--lc", "sentiment-lc02", "--executor", "ray",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code != 0 and "executor 'ray' is not available" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_real_models_processes_equal_local(tmp_path):
    """The offline parser and MiniLM suggester on 4 real seeds: 2 worker processes write the local artefact."""
    pytest.importorskip("alict_core.executors.processes", reason="the processes executor is not merged yet")
    from alict_core import parsing
    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec import get_spec
    from alict_core.seeds import find_seeds

    try:
        parsing.get_parser()
    except Exception as exc:  # noqa: BLE001 - models that are not built are a skip, with their message
        pytest.skip(f"parser not available: {exc}")
    spec = get_spec("sentiment", "sentiment-lc02")
    real = find_seeds(spec, load_corpus("sentiment")).seeds[:4]
    options = {"parser": parsing.DEFAULT_PARSER, "mlm": "minilm-offline", "shard_size": 2}
    local = expand_sharded(real, spec, out_dir=tmp_path / "local", **options)
    pooled = expand_sharded(real, spec, out_dir=tmp_path / "processes", executor="processes", workers=2, **options)
    assert local.rows > 0 and pooled.key == local.key and pooled.counts == local.counts
    assert pooled.path.read_bytes() == local.path.read_bytes()
