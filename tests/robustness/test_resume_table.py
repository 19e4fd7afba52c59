"""Resume and re-run of streaming runs over damaged parts: the totals are always a clean run's totals.

An unfinished run (cancelled after some shards) or a finished one is damaged one way per row, then run again
with the same inputs. The result must equal a run that was never damaged (summary.csv byte for byte, every
results part), pass its own manifest check, and keep the undamaged shards (not predicted again).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest

from alict_core.runner import RunCancelled, RunResult, build_cases
from alict_core.runner.stream import group_by_seed, pending_dir, run_streaming
from tests.robustness.conftest import assert_clean_error

MODELS = ["vader"]
SHARD = 6
WORDS = ["good", "bad", "great", "awful", "fine", "nice", "terrible", "lovely"]


def cases() -> list:
    """Four shards of MFT seeds with one expansion each (a seed and its expansion share a shard)."""
    seeds = [{"id": f"s{i}", "lc_id": "LC1" if i % 2 else "LC2", "task": "sentiment",
              "text": f"the film number {i} was {WORDS[i % len(WORDS)]}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive" if i % 3 else "negative"]}} for i in range(12)]
    expansions = [{"id": f"s{i}-e", "seed_id": f"s{i}", "lc_id": seeds[i]["lc_id"],
                   "text": f"the film number {i} was not {WORDS[i % len(WORDS)]}"} for i in range(12)]
    return group_by_seed(build_cases(seeds, expansions))


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A run that was never damaged: what every repaired or resumed run must equal."""
    root = tmp_path_factory.mktemp("clean")
    return run_streaming(cases(), MODELS, run_dir=root / "run", shard_size=SHARD, cache_root=root / "cache")


def assert_equals_clean(run_dir: Path, clean: Path) -> None:
    assert (run_dir / "summary.csv").read_bytes() == (clean / "summary.csv").read_bytes()
    parts = sorted(p.name for p in (clean / "results").glob("part-*.parquet"))
    assert parts == sorted(p.name for p in (run_dir / "results").glob("part-*.parquet"))
    for name in parts:
        pd.testing.assert_frame_equal(pd.read_parquet(run_dir / "results" / name),
                                      pd.read_parquet(clean / "results" / name))
    loaded = RunResult.load(run_dir)  # verifies the manifest
    pd.testing.assert_frame_equal(loaded.summary(), RunResult.load(clean).summary())


def _tamper_counts(run_dir: Path, shard: int) -> None:
    """The reported example: the numbers of one LC changed, the checksums inside left as they were."""
    path = run_dir / "counts" / f"part-{shard:05d}.json"
    counts = json.loads(path.read_text())
    counts["counts"][0]["n_seeds"] += 6
    counts["counts"][0]["n_fail_seeds"] += 6
    path.write_text(json.dumps(counts))


def _part(folder: str, suffix: str) -> Callable[[Path, int], Path]:
    return lambda run_dir, shard: run_dir / folder / f"part-{shard:05d}{suffix}"


COUNTS, RESULTS, CASES = _part("counts", ".json"), _part("results", ".parquet"), _part("cases", ".jsonl")
DAMAGES: dict[str, Callable[[Path, int], None]] = {
    "counts-numbers-changed": _tamper_counts,
    "counts-garbage": lambda d, s: COUNTS(d, s).write_text("{not json"),
    "counts-empty-object": lambda d, s: COUNTS(d, s).write_text("{}"),
    "counts-deleted": lambda d, s: COUNTS(d, s).unlink(),
    "counts-of-another-shard": lambda d, s: COUNTS(d, s).write_bytes(COUNTS(d, 0).read_bytes()),
    "results-garbage": lambda d, s: RESULTS(d, s).write_bytes(b"PAR1 garbage PAR1"),
    "results-truncated": lambda d, s: RESULTS(d, s).write_bytes(RESULTS(d, s).read_bytes()[:200]),
    "results-deleted": lambda d, s: RESULTS(d, s).unlink(),
    "results-of-another-shard": lambda d, s: RESULTS(d, s).write_bytes(RESULTS(d, 0).read_bytes()),
    "cases-edited": lambda d, s: CASES(d, s).write_text(CASES(d, s).read_text().replace("film", "movie")),
    "cases-deleted": lambda d, s: CASES(d, s).unlink(),
}


def _cancelled_run(run_dir: Path, cache: Path, shards: int = 2) -> dict:
    """A run stopped after ``shards`` finished shards (of 4); its progress.json."""
    seen: list[int] = []

    def progress(done: int, total: int, message: str) -> None:
        if total and "done" in message:
            seen.append(done)

    with pytest.raises(RunCancelled):
        run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=cache, progress=progress,
                      should_stop=lambda: len(seen) >= shards)
    state = json.loads((run_dir / "progress.json").read_text())
    assert state["status"] == "cancelled" and state["shards_done"] >= shards and state["n_shards"] == 4, state
    return state


def _mtimes(run_dir: Path, shards: list[int]) -> dict[int, int]:
    return {s: RESULTS(run_dir, s).stat().st_mtime_ns for s in shards}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_resume_over_a_damaged_shard_gives_the_clean_totals(tmp_path, clean, damage, caplog):
    run_dir = tmp_path / "run"
    _cancelled_run(run_dir, tmp_path / "cache")
    DAMAGES[damage](run_dir, 1)
    kept = _mtimes(run_dir, [0])
    with caplog.at_level(logging.WARNING, logger="alict_core"):
        run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=tmp_path / "cache")
    assert_equals_clean(run_dir, clean)
    assert _mtimes(run_dir, [0]) == kept  # the undamaged shard was kept, not predicted again


def test_a_shard_the_run_never_recorded_is_kept_only_when_its_counts_hold(tmp_path, clean):
    """Killed between a worker's write and the run's record: the counts are recomputed from the parts."""
    run_dir = tmp_path / "run"
    state = _cancelled_run(run_dir, tmp_path / "cache")
    state["parts"].pop("1")
    (run_dir / "progress.json").write_text(json.dumps(state))
    kept = _mtimes(run_dir, [0, 1])
    run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=tmp_path / "cache")
    assert_equals_clean(run_dir, clean)
    assert _mtimes(run_dir, [0, 1]) == kept  # its counts hold: kept

    again = tmp_path / "again"  # the same, but its counts were changed too: predicted again
    state = _cancelled_run(again, tmp_path / "cache")
    state["parts"].pop("1")
    (again / "progress.json").write_text(json.dumps(state))
    _tamper_counts(again, 1)
    run_streaming(cases(), MODELS, run_dir=again, shard_size=SHARD, cache_root=tmp_path / "cache")
    assert_equals_clean(again, clean)


@pytest.mark.parametrize("progress", ["garbage", "deleted", "no-ledger", "ledger-of-garbage"])
def test_resume_with_a_damaged_progress_file_recomputes(tmp_path, clean, progress):
    run_dir = tmp_path / "run"
    state = _cancelled_run(run_dir, tmp_path / "cache")
    path = run_dir / "progress.json"
    if progress == "garbage":
        path.write_text("[1, 2")
    elif progress == "deleted":
        path.unlink()
    elif progress == "no-ledger":
        state.pop("parts")
        _tamper_counts(run_dir, 0)
        path.write_text(json.dumps(state))
    else:
        state["parts"] = {"0": 5, "1": None, "x": "y"}
        path.write_text(json.dumps(state))
    run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=tmp_path / "cache")
    assert_equals_clean(run_dir, clean)


FINISHED_DAMAGES = {
    **{name: DAMAGES[name] for name in ("counts-numbers-changed", "results-garbage", "results-deleted",
                                        "cases-edited", "counts-deleted")},
    "summary-edited": lambda d, s: (d / "summary.csv").write_text((d / "summary.csv").read_text() + "LC9,x\n"),
    "manifest-deleted": lambda d, s: (d / "manifest.json").unlink(),
    "manifest-garbage": lambda d, s: (d / "manifest.json").write_text("nope"),
    "meta-garbage": lambda d, s: (d / "meta.json").write_text("{"),
    "progress-deleted": lambda d, s: (d / "progress.json").unlink(),
}


@pytest.mark.parametrize("damage", list(FINISHED_DAMAGES))
def test_a_damaged_finished_run_is_verified_and_repaired(tmp_path, clean, damage, caplog):
    """Re-running a finished run over a damaged part never reports it complete as it is."""
    run_dir = run_streaming(cases(), MODELS, run_dir=tmp_path / "run", shard_size=SHARD,
                            cache_root=tmp_path / "cache")
    FINISHED_DAMAGES[damage](run_dir, 2)
    with caplog.at_level(logging.WARNING, logger="alict_core"):
        out = run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=tmp_path / "cache")
    assert out == run_dir
    assert_equals_clean(run_dir, clean)
    assert not pending_dir(run_dir).exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_an_intact_finished_run_is_returned_untouched(tmp_path):
    run_dir = run_streaming(cases(), MODELS, run_dir=tmp_path / "run", shard_size=SHARD, cache_root=tmp_path / "c")
    before = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()}
    run_streaming(cases(), MODELS, run_dir=run_dir, shard_size=SHARD, cache_root=tmp_path / "c")
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()} == before


def test_the_cli_reports_the_repaired_totals(tmp_path, cli, clean):
    """`run` over a finished run whose counts and a results part were damaged: exit 0 with the clean totals."""
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment",
                                         "text": f"the staff was {w}", "test_type": "MFT",
                                         "expected": {"kind": "label", "labels": ["positive"]}}) + "\n"
                             for i, w in enumerate(WORDS)))
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "LC4", "--seeds", str(seeds), "--quiet",
            "--keep-flagged", "--shard-size", "3", "--out", str(tmp_path / "run")]
    first = cli(*argv)
    assert first.code == 0, first.err
    _tamper_counts(tmp_path / "run", 1)
    RESULTS(tmp_path / "run", 2).write_bytes(b"garbage")
    again = cli(*argv)
    assert again.code == 0, again.err
    assert again.out.splitlines()[:-1] == first.out.splitlines()[:-1]  # the same table of totals
    assert "recomputing" in again.err
    report = cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "r.html"))
    assert report.code == 0, report.err  # the run passes its own check


@pytest.mark.parametrize("damage", ["results-garbage", "counts-numbers-changed", "summary-edited"])
def test_report_of_a_large_damaged_run_is_refused(tmp_path, cli, monkeypatch, damage):
    """The aggregate path of `report` (runs over LARGE_ROWS) checks the manifest as `RunResult.load` does."""
    from alict_core.common.manifest import write_manifest
    from alict_core.runner import reader
    from tests.sharded_run import write_sharded_run

    run_dir = tmp_path / "run"
    write_sharded_run(run_dir, 4_000, shard_size=1_000)
    (run_dir / "counts").mkdir(exist_ok=True)
    (run_dir / "counts" / "part-00001.json").write_text(json.dumps({"counts": [{"n_seeds": 1, "n_fail_seeds": 0}]}))
    write_manifest(run_dir, "run", "synthetic", 8_000)
    monkeypatch.setattr(reader, "LARGE_ROWS", 1_000)
    assert cli("report", str(run_dir), "--out", str(tmp_path / "ok.html")).code == 0
    {**DAMAGES, **FINISHED_DAMAGES}[damage](run_dir, 1)
    outcome = cli("report", str(run_dir), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "run 'run'", "does not match its checksum")
    assert not (tmp_path / "r.html").exists()
