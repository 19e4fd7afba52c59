"""Hostile pass 14's minor findings (notes: attack_pass14_cli.md, "minor"): one row each, each failing on the code
before its fix."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240)]


def _checklist(path, names):
    suite = {name: {"type": "mft", "capability": "x", "data": ["a good film", "a bad film"], "labels": [1, 0]}
             for name in names}
    path.write_text(json.dumps(suite), encoding="utf-8")
    return path


# M1: `report A --out B/report.html` wrote run A's report as run B's own report -------------------------------

def test_m1_a_report_never_lands_in_another_runs_folder(cli, run_store, tmp_path):
    original = next(run_store.iterdir())
    other = run_store / "other-run"
    shutil.copytree(original, other)
    report = other / "report.html"
    report.write_text("B's own report", encoding="utf-8")
    outcome = cli("report", str(original), "--out", str(report))
    assert_clean_error(outcome, 2, "another run", "other-run")
    assert report.read_text(encoding="utf-8") == "B's own report"
    assert cli("report", str(original), "--out", str(original / "report.html")).code == 0  # its own: as before


# M2: `build --out` had no check of the folder (a file, a saved run, inside the model store) ------------------

@pytest.mark.parametrize("where", ["file", "run", "inside-store", "review-store"])
def test_m2_build_out_is_checked_before_the_build(cli, run_store, tmp_path, where):
    cache = tmp_path / "cache"
    target = {"file": tmp_path / "models.txt", "run": next(run_store.iterdir()),
              "inside-store": cache / "models" / "quick" / "parser",
              "review-store": cache / "review" / "models"}[where]
    if where == "file":
        target.write_text("not a folder", encoding="utf-8")
    before = sorted(p.name for p in target.iterdir()) if target.is_dir() else None
    outcome = cli("build", "mlm", "--profile", "micro", "--out", str(target))
    assert_clean_error(outcome, 2, "--out")
    assert (sorted(p.name for p in target.iterdir()) if target.is_dir() else None) == before


# M3: CheckList test names that show alike ("t1" / "t1 ") became two LCs that read as one; "" became "c9:" -----

@pytest.mark.parametrize("names,needle", [(["t1", "t1 "], "looks the same"), (["t1", "\uff541"], "looks the same"),
                                          (["t1", "  "], "empty")])
def test_m3_checklist_names_that_show_alike_are_refused(tmp_path, names, needle):
    from alict_core.suites.checklist import read_checklist
    from alict_core.suites.schema import SuiteFormatError

    with pytest.raises(SuiteFormatError, match=needle):
        read_checklist(_checklist(tmp_path / "c9.json", names), task="sentiment")


def test_m3_distinct_names_still_load(tmp_path):
    from alict_core.suites.checklist import read_checklist

    out = read_checklist(_checklist(tmp_path / "c9.json", ["t1", "T1", "t2"]), task="sentiment")
    assert sorted({case.lc_id for case in out.cases}) == ["c9:T1", "c9:t1", "c9:t2"]


# M4: a folder put in place of a shard's sidecar failed every re-run of the key --------------------------------

def test_m4_a_folder_in_place_of_a_shard_sidecar_is_computed_again(tmp_path):
    from alict_core.executors.shards import companion_path, part_finished, seal_part

    parts = tmp_path / "k.shards"
    parts.mkdir()
    part = parts / "part-00000.jsonl"
    part.write_text('{"seed": 0}\n', encoding="utf-8")
    seal_part(part)
    companion_path(part).mkdir()
    (companion_path(part) / "x").write_text("stray", encoding="utf-8")
    assert not part_finished(part)  # damaged: computed again, not an error on every re-run
    assert not part.exists() and not companion_path(part).exists()


# M5: `review stats|export --db sqlite:///<missing file>` read as an empty store ("0 tasks") -------------------

@pytest.mark.parametrize("command", [["stats"], ["export", "any", "--out", "x.csv"]])
def test_m5_a_read_only_review_command_names_a_missing_database(cli, tmp_path, fresh_engines, command):
    missing = tmp_path / "typo.sqlite"
    outcome = cli("review", *command, "--db", f"sqlite:///{missing}")
    assert_clean_error(outcome, 2, "no such SQLite file", "typo.sqlite")
    assert not missing.exists()
