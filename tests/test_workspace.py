"""User spec workspace: built-in specs are read-only defaults; the workspace overrides and extends them."""

from __future__ import annotations

import pytest

from alict_core.common import config
from alict_core.lcspec import get_spec, load_task_specs, spec_files, spec_path, workspace_spec_dir


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(config.WORKSPACE_ENV, str(tmp_path / "ws"))
    return tmp_path / "ws"


def test_workspace_dir_follows_the_environment_and_defaults_under_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(config.WORKSPACE_ENV, str(tmp_path / "mine"))
    assert workspace_spec_dir("sentiment") == tmp_path / "mine" / "specs" / "sentiment"
    monkeypatch.delenv(config.WORKSPACE_ENV)
    monkeypatch.setenv(config.CACHE_ENV, str(tmp_path / "cache"))
    assert workspace_spec_dir("hate_speech") == tmp_path / "cache" / "workspace" / "specs" / "hate_speech"
    assert not (tmp_path / "cache" / "workspace").exists()  # only saving creates it


def test_builtin_specs_are_the_checkouts_top_level_specs_folder():
    """In a checkout the built-ins are ``specs/`` beside the package (the wheel maps them to alict_core/builtin_specs:
    tests/test_packaging.py)."""
    assert config.SPECS_DIR == config.REPO_ROOT / "specs"
    assert len(list((config.SPECS_DIR / "sentiment").glob("*.yaml"))) == 12
    assert len(list((config.SPECS_DIR / "hate_speech").glob("*.yaml"))) == 14


def test_a_workspace_spec_overrides_the_builtin_and_a_new_one_is_added(workspace):
    builtin = {s.id: s for s in load_task_specs("sentiment")}
    folder = workspace / "specs" / "sentiment"
    folder.mkdir(parents=True)
    text = (config.SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text(encoding="utf-8")
    edited = text.replace("description:", "notes: my copy\ndescription:", 1)
    (folder / "sentiment-lc04.yaml").write_text(edited, encoding="utf-8")
    (folder / "sentiment-lc99.yaml").write_text(text.replace("sentiment-lc04", "sentiment-lc99"), encoding="utf-8")

    specs = {s.id: s for s in load_task_specs("sentiment")}
    assert set(specs) == set(builtin) | {"sentiment-lc99"}
    assert specs["sentiment-lc04"] != builtin["sentiment-lc04"]
    assert spec_path("sentiment", "sentiment-lc04") == folder / "sentiment-lc04.yaml"
    assert spec_path("sentiment", "sentiment-lc01").parent == config.SPECS_DIR / "sentiment"
    assert get_spec("sentiment", "lc99").id == "sentiment-lc99"
    assert [p.name for p in spec_files("sentiment")] == sorted(p.name for p in spec_files("sentiment"))
    assert (config.SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text(encoding="utf-8") == text
