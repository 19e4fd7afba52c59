"""The one listing of saved run folders (alict_core.runner.store.run_folders) and the listings built on it."""

from __future__ import annotations

from pathlib import Path

from alict_core.common.jsonl import write_json
from alict_core.runner.store import list_runs, run_folders


def test_run_folders_are_the_folders_with_a_meta_json(tmp_path: Path) -> None:
    assert list(run_folders(tmp_path / "absent")) == []
    for name in ("r1", "r2", ".r3.tmp-1"):
        write_json(tmp_path / name / "meta.json", {"run_id": name, "models": [{"name": "vader"}]})
    (tmp_path / "no-meta").mkdir()
    (tmp_path / "r4").mkdir()
    (tmp_path / "r4" / "meta.json").mkdir()  # a folder named meta.json is no run
    (tmp_path / "loose.json").write_text("{}", encoding="utf-8")
    assert sorted(p.name for p in run_folders(tmp_path)) == ["r1", "r2"]
    assert sorted(p.name for p in list_runs(tmp_path)) == ["r1", "r2"]


def test_the_harden_page_lists_the_run_folders_of_the_store(tmp_path: Path, monkeypatch) -> None:
    from alict_core.harden import export

    monkeypatch.setattr("alict_core.common.config.cache_dir", lambda: tmp_path)  # a listing: the store unmade
    write_json(tmp_path / "runs" / "abc" / "meta.json", {"run_id": "abc", "models": [{"name": "vader"}]})
    write_json(tmp_path / "runs" / "bad" / "meta.json", {"run_id": "bad"})  # no models: not a finished run
    write_json(tmp_path / "runs" / ".pending" / "meta.json", {"run_id": "p", "models": []})
    rows = export.list_runs()
    assert [(r["id"], r["run_id"], r["models"]) for r in rows] == [("abc", "abc", ["vader"])]
