"""Pass 24 rows: the findings of the (short) hostile pass that were fixed, each a row that failed before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import seed_row

ROOT = Path(__file__).resolve().parents[2]


def test_p24_cli_1_a_tilde_model_path_is_guarded_like_any_other(cli, tmp_path, own_cache, monkeypatch):
    """Was: `--models static:path=~/p.jsonl --junit $HOME/p.jsonl` replaced the predictions (the guard checked the
    literal `~/...`, the loader expanded it)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    predictions = tmp_path / "home" / "p.jsonl"
    predictions.write_text('{"text": "a fine film", "label": "positive"}\n')
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "static:path=~/p.jsonl", "--lc", "4", "--seeds",
                  str(seeds), "--out", str(tmp_path / "r"), "--junit", str(predictions), "--quiet")
    assert_clean_error(outcome, 2, "is the --models file")
    assert predictions.read_text().startswith('{"text"')


def test_p24_cli_2_seeds_out_never_replaces_its_own_spec(cli, tmp_path, own_cache):
    """Was: `seeds --spec own/x.jsonl --out own` replaced the spec with seed rows."""
    own = tmp_path / "own"
    own.mkdir()
    spec = own / "sentiment-lc01.jsonl"
    spec.write_text((ROOT / "specs" / "sentiment" / "sentiment-lc01.yaml").read_text(encoding="utf-8"))
    outcome = cli("seeds", "--task", "sentiment", "--spec", str(spec), "--max", "2", "--out", str(own))
    assert_clean_error(outcome, 2, "holds the --spec file")
    assert spec.read_text().startswith("schema_version")


def test_p24_cli_3_explain_json_never_replaces_its_model_file(cli, tmp_path, own_cache):
    """Was: `explain --model sklearn:...,path=m.joblib --json m.joblib` replaced the model with the explanation."""
    model = tmp_path / "m.joblib"
    model.write_bytes(b"not really a pipeline")
    outcome = cli("explain", "--text", "a good film", "--model", f"static:path={model}", "--no-template", "--json",
                  str(model))
    assert_clean_error(outcome, 2, "is the --model file")
    assert model.read_bytes() == b"not really a pipeline"


def test_p24_cli_4_lego_out_never_holds_a_models_path(cli, tmp_path, own_cache):
    """Was: `lego --models static:path=own/cases.jsonl --out own` replaced the predictions with lego's cases."""
    own = tmp_path / "own"
    own.mkdir()
    predictions = own / "cases.jsonl"
    predictions.write_text('{"text": "I did not hate it .", "label": "positive"}\n')
    seeds = tmp_path / "l.txt"
    seeds.write_text("I did not hate it .\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--judge", "vader", "--models",
                  f"static:task=sentiment,path={predictions}", "--no-constituency", "--mlm-top-k", "0",
                  "--out", str(own))
    assert_clean_error(outcome, 2, "holds the --models file")
    assert predictions.read_text().startswith('{"text"')


def test_p24_cli_6_a_linked_input_inside_the_output_folder_is_refused(cli, tmp_path, own_cache):
    """Was: `run --suite own/cases.jsonl --out own` with cases.jsonl a link to a file outside: the link was deleted
    with the folder (the check followed it out)."""
    own = tmp_path / "own"
    own.mkdir()
    real = tmp_path / "real.jsonl"
    real.write_text(json.dumps(seed_row()) + "\n")
    (own / "cases.jsonl").symlink_to(real)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(own / "cases.jsonl"),
                  "--out", str(own), "--quiet")
    assert_clean_error(outcome, 2, "holds the --seeds file")
    assert (own / "cases.jsonl").is_symlink()


def test_p24_kill_2_4_stray_part_files_of_a_killed_run_are_kept_and_named(tmp_path):
    """Was: `part-00000 (copy).parquet` in a killed run gave exit 3 (int()) on every resume; `part-00000.x.jsonl`
    copies were sealed into the finished run, and report/compare counted their cases twice. Since pass 27 such a
    file (no name a run writes) is the user's: the resume is refused naming it, and it is kept; without it the
    resume finishes the run as a fresh one would."""
    import shutil

    from alict_core.common.errors import AlictError
    from alict_core.runner.stream import run_streaming
    from tests.robustness.support import cancelled_run
    from tests.test_stream import MODELS, assert_same_run, small_cases

    cases = small_cases()
    cancelled_run(tmp_path / "run", cases, tmp_path / "c")
    run = tmp_path / "run"
    copies = [run / "results" / "part-00000 (copy).parquet"]
    shutil.copy(run / "results" / "part-00000.parquet", copies[0])
    for folder, suffix in (("cases", ".jsonl"), ("counts", ".json"), ("results", ".parquet")):
        copies.append(run / folder / f"part-00000.x{suffix}")
        shutil.copy(run / folder / f"part-00000{suffix}", copies[-1])
    with pytest.raises(AlictError, match=r"'cases/part-00000\.x\.jsonl'"):
        run_streaming(cases, MODELS, run_dir=run, shard_size=10, cache_root=tmp_path / "c")
    assert all(copy.is_file() for copy in copies)
    for copy in copies:
        copy.unlink()
    out = run_streaming(cases, MODELS, run_dir=run, shard_size=10, cache_root=tmp_path / "c")
    assert not [p.name for p in out.rglob("part-*") if " " in p.name or ".x." in p.name]
    manifest = json.loads((out / "manifest.json").read_text())
    assert not [name for name in manifest["files"] if ".x." in name or "copy" in name]
    fresh = run_streaming(cases, MODELS, run_dir=tmp_path / "fresh", shard_size=10, cache_root=tmp_path / "c2")
    assert_same_run(out, fresh)


def test_p24_kill_1_a_checkpoint_named_with_a_superscript_digit_is_ignored(tmp_path):
    """Was: `step-²` passed str.isdigit() and failed int() (exit 3 on build and build --report)."""
    import torch

    from alict_core.training.checkpoint import Checkpoints

    folder = tmp_path / ".parser.checkpoint"
    checkpoints = Checkpoints(folder, every=1, log=lambda _: None)
    checkpoints.resume("k")
    checkpoints.save(4, {}, {"w": torch.ones(2)})
    (folder / "step-\u00b2").mkdir()
    (folder / "step-\u00b2" / "state.json").write_text("{}")
    resumed = Checkpoints(folder, every=1, log=lambda _: None).resume("k")
    assert resumed is not None and resumed.step == 4
