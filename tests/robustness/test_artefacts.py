"""Stored artefacts are verified on read: a bad one is reported, quarantined and rebuilt, never served."""

from __future__ import annotations

import json

import pytest

from alict_core.common.manifest import CorruptArtefactError, verify_dir
from alict_core.runner import RunResult, run_suite
from tests.robustness.support import KeywordModel, small_cases


def _shards(root):
    return sorted(root.glob("*/b-*.json"))


def _tamper_plausible(path):
    data = json.loads(path.read_text())
    data["p"] = [list(reversed(row)) for row in data["p"]]  # still probabilities summing to 1
    path.write_text(json.dumps(data))


def _truncate(path):
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _garbage(path):
    path.write_bytes(b"\x00\xff garbage")


def _empty(path):
    path.write_bytes(b"")


def _nan(path):
    data = json.loads(path.read_text())
    data["p"][0][0] = float("nan")
    path.write_text(json.dumps(data))


def _wrong_width(path):
    data = json.loads(path.read_text())
    data["p"] = [row[:2] for row in data["p"]]
    path.write_text(json.dumps(data))


def _legacy(path):
    data = json.loads(path.read_text())
    path.write_text(json.dumps({"h": data["h"], "p": data["p"]}))


def _other_key(path):
    data = json.loads(path.read_text())
    data["key"] = "0" * 16
    path.write_text(json.dumps(data))


TAMPERS = [_tamper_plausible, _truncate, _garbage, _empty, _nan, _wrong_width, _legacy, _other_key]


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda f: f.__name__.strip("_"))
def test_tampered_shard_is_quarantined_and_rebuilt(tmp_path, tamper, caplog):
    cases = small_cases(8)
    cache = tmp_path / "predictions"
    clean = run_suite(cases, [KeywordModel()], batch_size=4, cache_root=cache).summary()
    shards = _shards(cache)
    assert len(shards) == 2
    tamper(shards[0])
    model = KeywordModel()
    again = run_suite(cases, [model], batch_size=4, cache_root=cache).summary()
    assert again.fail_rate.tolist() == clean.fail_rate.tolist()
    assert len(model.seen) == 4, "only the quarantined batch is predicted again"
    moved = list((tmp_path / "quarantine" / "predictions").iterdir())
    assert len(moved) == 1
    assert any("prediction shard" in r.getMessage() for r in caplog.records)
    assert str(tmp_path) not in " ".join(r.getMessage() for r in caplog.records), "no server paths in messages"
    third = KeywordModel()
    run_suite(cases, [third], batch_size=4, cache_root=cache)
    assert third.seen == [], "the rebuilt shard is served from the cache afterwards"


def test_saved_run_has_a_verified_manifest(tmp_path):
    result = run_suite(small_cases(6), [KeywordModel()], cache_root=tmp_path / "p")
    out = result.save(tmp_path / "run")
    manifest = verify_dir(out, "run", result.run_id)
    assert manifest.rows == 6 and "results.parquet" in manifest.files
    assert RunResult.load(out).summary().fail_rate.tolist() == result.summary().fail_rate.tolist()


@pytest.mark.parametrize("victim", ["results.parquet", "cases.jsonl", "meta.json", "summary.csv"])
def test_tampered_run_file_is_refused_with_one_line(tmp_path, victim):
    result = run_suite(small_cases(6), [KeywordModel()], cache_root=tmp_path / "p")
    out = result.save(tmp_path / "run")
    path = out / victim
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(CorruptArtefactError) as info:
        RunResult.load(out)
    message = str(info.value)
    assert victim in message and "\n" not in message and str(tmp_path) not in message
