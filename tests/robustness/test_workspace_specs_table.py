"""Workspace spec files table: a spec saved as ``*.yml`` (or ``*.YAML``) is a spec for every reader of the
workspace folder — the loader (CLI and library), the app's spec store and its editor — never silently ignored;
two files of one spec id (``x.yaml`` and ``x.yml``) are one message naming both, and nothing is written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from alict_core.common import config
from tests.robustness.conftest import assert_clean_error

LC4 = "sentiment/sentiment-lc04.yaml"
MARK = "edited in the workspace"


def _text(source: str = LC4, spec_id: str | None = None) -> str:
    """LC4's spec with ``MARK`` in its description (and another id when given)."""
    data = yaml.safe_load((config.SPECS_DIR / source).read_text(encoding="utf-8"))
    data["description"] = f"{MARK}. {data['description']}"
    if spec_id:
        data["id"] = spec_id
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    path = tmp_path / "ws" / "specs" / "sentiment"
    path.mkdir(parents=True)
    return path


READ = [  # (files written into the workspace folder, spec id that must come from the workspace, its file)
    ({"sentiment-lc04.yml": _text()}, "sentiment-lc04", "sentiment-lc04.yml"),
    ({"sentiment-lc04.YAML": _text()}, "sentiment-lc04", "sentiment-lc04.YAML"),
    ({"sentiment-lc04.Yml": _text()}, "sentiment-lc04", "sentiment-lc04.Yml"),
    ({"sentiment-x07.yml": _text(spec_id="sentiment-x07")}, "sentiment-x07", "sentiment-x07.yml"),
    ({"sentiment-lc04.yaml": _text(), "notes.txt": "my notes", "sentiment-lc04.yaml.bak": "old",
      ".sentiment-lc04.yml.1a2b.tmp": "half written"}, "sentiment-lc04", "sentiment-lc04.yaml"),
]


@pytest.mark.parametrize("files,spec_id,source", READ,
                         ids=["yml-override", "upper-case", "mixed-case", "yml-new-lc", "yaml-with-stray-files"])
def test_a_workspace_spec_is_read_whatever_its_yaml_extension(folder, files, spec_id, source):
    from alict_core.lcspec import get_spec, load_task_specs, spec_path

    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    specs = load_task_specs("sentiment")
    ids = [s.id for s in specs]
    assert len(ids) == len(set(ids)) and "sentiment-lc04" in ids
    assert MARK in get_spec("sentiment", spec_id).description
    assert spec_path("sentiment", spec_id) == folder / source


TWICE = [  # (files, needles)
    ({"sentiment-lc04.yaml": _text(), "sentiment-lc04.yml": _text()},
     ["sentiment-lc04.yaml and sentiment-lc04.yml both hold spec 'sentiment-lc04'", "keep one"]),
    ({"sentiment-x07.yml": _text(spec_id="sentiment-x07"), "sentiment-x07.YAML": _text(spec_id="sentiment-x07")},
     ["sentiment-x07.YAML and sentiment-x07.yml both hold spec 'sentiment-x07'"]),
    ({"sentiment-lc04.yml": _text(spec_id="sentiment-lc05")},
     ["sentiment-lc04.yml", "holds spec id 'sentiment-lc05'"]),
]


@pytest.mark.parametrize("files,needles", TWICE, ids=["yaml-and-yml", "yml-and-upper-yaml", "yml-misnamed"])
def test_two_files_of_one_spec_are_one_message(cli, tmp_path, folder, files, needles):
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, *needles)
    assert not (tmp_path / "s").exists()


def test_the_app_editor_saves_over_and_discards_the_yml_file(folder):
    """The editor saved x.yaml beside the user's x.yml (two files of one spec); it saves over the one there."""
    from alict_app import spec_store, specs_io
    from alict_core.lcspec import get_spec

    (folder / "sentiment-lc04.yml").write_text(_text(), encoding="utf-8")
    spec = get_spec("sentiment", "4")
    assert spec_store.is_user_spec(spec) and spec_store.spec_source(spec) == folder / "sentiment-lc04.yml"
    assert MARK in spec_store.spec_text(spec)
    saved = specs_io.save_spec_text(folder, "sentiment-lc04", _text().replace(MARK, "saved again"), overwrite=True)
    assert saved == folder / "sentiment-lc04.yml"
    assert sorted(p.name for p in folder.iterdir()) == ["sentiment-lc04.yml"]
    assert "saved again" in get_spec("sentiment", "4").description
    assert spec_store.discard_user_copy(get_spec("sentiment", "4")) == folder / "sentiment-lc04.yml"
    assert list(folder.iterdir()) == [] and MARK not in get_spec("sentiment", "4").description


def test_a_new_spec_is_saved_as_yaml(folder):
    from alict_app import specs_io

    assert specs_io.spec_target(folder, "sentiment-x08.yml") == Path(folder).resolve() / "sentiment-x08.yaml"


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("files", [{"sentiment-lc04.yml": _text()},
                                   {"sentiment-lc04.yaml": _text(), "sentiment-lc04.yml": _text()}],
                         ids=["yml", "yaml-and-yml"])
def test_the_specs_page_reads_a_yml_spec_and_names_two_files_of_one(folder, files):
    from streamlit.testing.v1 import AppTest

    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["lc"] = "sentiment-lc04"
    at.run()
    at.switch_page("pages/specs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # the text shown (values drawn escaped)
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors
    if len(files) > 1:
        assert any("sentiment-lc04.yaml and sentiment-lc04.yml both hold spec" in e for e in errors), errors
    else:
        assert not errors
        shown = " ".join(str(getattr(el, "value", "")) for el in [*at.caption, *at.markdown])
        assert "your workspace copy" in shown
