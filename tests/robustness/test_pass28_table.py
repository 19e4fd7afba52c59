"""Pass 28 rows (found by the p28cli helper, fixed by the lead): each failed before its fix."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


def _rehash(run: Path) -> None:
    """Re-seal an edited run the way a careful forger (or a repair script) would: every listed file's sha256."""
    manifest = json.loads((run / "manifest.json").read_text())
    for name in manifest["files"]:
        if (run / name).exists():
            manifest["files"][name] = hashlib.sha256((run / name).read_bytes()).hexdigest()
    (run / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("probabilities", [[float("nan"), 0.5, 0.5], [5.0, -3.0, 0.0]])
def test_p28_cli_1_a_run_with_impossible_probabilities_is_refused_or_never_exported_as_non_json(
        cli, tmp_path, saved_run, probabilities):
    """Was: a run whose results part holds probabilities that are no probabilities (NaN, 5.0, -3.0; re-sealed) was
    read as is: `report --export` wrote `"negative": NaN` into results.jsonl (not JSON; pass 17 made exports strict)
    and took the arg-max of the bad vector as the prediction beside the recorded `passed`."""
    import pandas as pd

    part = saved_run / "results" / "part-00000.parquet"
    frame = pd.read_parquet(part)
    frame["probabilities"] = [list(probabilities)] * len(frame)
    frame.to_parquet(part, index=False)
    _rehash(saved_run)
    out = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "ex"))
    if out.code == 2:
        assert_clean_error(out, 2)
        return
    assert out.code == 0, out.err[-600:]
    for line in (tmp_path / "ex" / "results.jsonl").read_text().splitlines():
        row = _strict_json(line)
        values = list(row["probabilities"].values())
        assert all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values), row


@pytest.mark.parametrize("stem", ["vader", "textblob", "minilm-sst"])
def test_p28_cli_2_a_default_model_name_of_a_registered_model_is_refused(cli, tmp_path, own_cache, stem):
    """Was: `static:path=<dir>/vader.jsonl` (no name=) ran under the default name `vader`, the file's stem: the
    run's results named a registered model (fingerprint static:…), `compare run1 sv2` printed "vader (B) vs vader
    (A) … 3 cases newly fail" and `explain --results` would load the registered VADER by that name. The same
    reference with `name=vader` is refused since pass 27 ("is the name of a registered model")."""
    from tests.robustness.support import seed_row

    predictions = tmp_path / f"{stem}.jsonl"
    predictions.write_text(json.dumps({"text": "a fine film", "negative": 0.1, "neutral": 0.1, "positive": 0.8}) + "\n")
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", f"static:path={predictions}", "--lc", "4", "--seeds",
                  str(seeds), "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, stem)
    assert not (tmp_path / "r").exists()


def test_p28_cli_3_a_deeply_nested_sst_line_is_a_data_error_not_exit_3(cli, tmp_path, monkeypatch, own_cache):
    """Was: a line of 3,000 nested brackets appended to sst/train.txt made `seeds` exit 3 ("internal error
    (RecursionError: maximum recursion depth exceeded …)"): the SST tree reader recurses per bracket and
    data/checked.py's CORRUPT tuple does not hold RecursionError (pass 26 made damaged data files one data error)."""
    import alict_core.data.corpus as corpus
    import alict_core.data.sst as sst
    from alict_core.common.config import data_dir
    from tests.robustness.test_cli_table import _data_copy

    real = (data_dir() / "sst" / "train.txt").read_bytes()
    deep = ("(2 " * 3000 + "(2 deep)" + ")" * 3000 + "\n").encode()
    monkeypatch.setenv("ALICT_DATA_DIR", str(_data_copy(tmp_path, "sst/train.txt", real + deep)))
    monkeypatch.setattr(corpus, "_LOADED", {})  # the corpus is really read again (an earlier test loaded it)
    sst._load_split.cache_clear()
    try:
        outcome = cli("seeds", "--task", "sentiment", "--lc", "1", "--max", "2", "--out", str(tmp_path / "s"))
    finally:
        sst._load_split.cache_clear()
    assert_clean_error(outcome, 2, "sst", limit_s=120)
    assert not (tmp_path / "s").exists()


def test_p28_cli_4_report_out_and_export_on_one_path_is_said_as_such(cli, tmp_path, saved_run):
    """Was: `report RUN --out P --export P` said "--export 'P' is being written by another command right now (it
    holds the folder's lock); wait until it has finished" — no other command runs (the command's own --out took the
    lock), and waiting never helps; --junit/--out on one path say "name the same file"."""
    target = tmp_path / "same"
    outcome = cli("report", str(saved_run), "--out", str(target), "--export", str(target))
    assert_clean_error(outcome, 2, "--out", "--export")
    line = [text for text in outcome.err.splitlines() if text.startswith("error:")][0]
    assert "another command" not in line


def test_p28_cli_3_a_deeply_nested_hatexplain_split_file_is_a_data_error_not_exit_3(cli, tmp_path, monkeypatch,
                                                                                      own_cache):
    """Was: hatexplain/post_id_divisions.json of 50,000 nested brackets made `seeds --task hate_speech` exit 3
    ("internal error (RecursionError: maximum recursion depth exceeded while decoding a JSON array …)"): the data
    reader's read_json has no depth limit (user JSON got one in pass 20) and reads_data did not catch
    RecursionError."""
    import alict_core.data.corpus as corpus
    from tests.robustness.test_cli_table import _data_copy

    deep = ("[" * 50000 + "]" * 50000).encode()
    monkeypatch.setenv("ALICT_DATA_DIR", str(_data_copy(tmp_path, "hatexplain/post_id_divisions.json", deep)))
    monkeypatch.setattr(corpus, "_LOADED", {})
    outcome = cli("seeds", "--task", "hate_speech", "--lc", "1", "--max", "2", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "post_id_divisions.json", limit_s=120)


DEEP = "[" * 50000 + "]" * 50000  # a JSON document nested deeper than the parser's recursion limit


@pytest.mark.parametrize("name", ["manifest.json", "meta.json"])
def test_p28_cli_5_a_deeply_nested_run_file_is_a_damaged_run_not_exit_3(cli, tmp_path, saved_run, name):
    """Was: a run whose manifest.json (no re-hash needed) or re-sealed meta.json is JSON nested 50,000 deep made
    `report` exit 3 ("internal error (RecursionError … decoding a JSON array …)") instead of "cannot be read"."""
    (saved_run / name).write_text(DEEP)
    if name != "manifest.json":
        _rehash(saved_run)
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2)
    assert not (tmp_path / "r.html").exists()


def test_p28_cli_5_a_deeply_nested_model_store_manifest_is_a_damaged_artefact_not_exit_3(cli, own_cache):
    """Was: models/quick/parser/manifest.json nested 50,000 deep made `build --report` (and `parse`) exit 3
    (RecursionError); pass 17 made damaged model manifests one message."""
    folder = own_cache / "models" / "quick" / "parser"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(DEEP)
    outcome = cli("build", "--report")
    assert outcome.code in (0, 2), outcome.err[-600:]
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err



def test_p28_cli_5_a_deeply_nested_prediction_cache_entry_is_rebuilt_or_said_not_exit_3(cli, tmp_path, own_cache):
    """Was: the prediction cache's JSON files (<cache>/predictions/<model>/meta.json, b-*.json) nested 50,000 deep
    made the next `run` exit 3 (RecursionError); a damaged derived cache entry is rebuilt or said."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds)]
    assert cli(*argv, "--out", str(tmp_path / "r1")).code == 0
    entries = list((own_cache / "predictions").rglob("*.json"))
    assert entries
    for entry in entries:
        entry.write_text(DEEP)
    outcome = cli(*argv, "--out", str(tmp_path / "r2"))
    assert outcome.code in (0, 2), outcome.err[-600:]
    assert "internal error" not in outcome.err


def test_p28_kill_1_a_full_disk_in_a_folder_copy_is_out_of_space_not_an_internal_error(monkeypatch, capsys):
    """Was (the p28kill helper, on a real full disk): `build` copying its best model into a checkpoint with
    `shutil.copytree` got shutil.Error (no OSError) listing "[Errno 28] No space left on device": exit 3, "internal
    error … please report it", with the build's staging paths."""
    import shutil

    import alict_core.cli as cli_module

    def full(*_args, **_kwargs):
        raise shutil.Error([("/s/.best/benepar_model.bin", "/c/best/benepar_model.bin",
                             "[Errno 28] No space left on device: '/c/best/benepar_model.bin'")])

    monkeypatch.setattr(cli_module, "configure_torch", full)
    code = cli_module.main(["build", "--report"])
    err = capsys.readouterr().err
    assert code == 2 and "out of space" in err and "internal error" not in err


def test_p28_kill_2_a_rebuild_swaps_the_artefact_in_one_step(tmp_path, monkeypatch):
    """Was: `publish` swapped a rebuilt artefact in by two renames (old aside, new in): a kill or Ctrl-C between
    them left no `parser` folder, and every reader said "not built" and asked for a full rebuild of a good one."""
    from alict_core.training import staging as staging_module

    folder = tmp_path / "micro" / "parser"
    folder.mkdir(parents=True)
    (folder / "old.txt").write_text("old")
    new = staging_module.new_staging(folder)
    (new / "new.txt").write_text("new")
    renames: list[tuple[str, str]] = []
    real_rename = type(folder).rename

    def watched(self, target):
        renames.append((str(self), str(target)))
        return real_rename(self, target)

    monkeypatch.setattr(type(folder), "rename", watched)
    staging_module.publish(new, folder, {"target": "parser", "profile": "micro"})
    assert (folder / "new.txt").read_text() == "new" and not (folder / "old.txt").exists()
    assert not [pair for pair in renames if pair[0] == str(folder)]  # never moved aside by a plain rename
    assert sorted(p.name for p in folder.parent.iterdir()) == ["parser"]
