"""AppTest: the trust model seen from the browser (a pickle model needs the operator's ALICT_PICKLE_DIRS)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_trust import make_pipeline_file

from alict_app import fakes, runs
from alict_core.trust import HOSTS_ENV, PICKLE_DIRS_ENV

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(autouse=True)
def app_env(tmp_path, monkeypatch):
    uninstall = fakes.install()
    root = tmp_path / "app-runs"
    root.mkdir()
    monkeypatch.setattr(runs, "runs_root", lambda: root)
    monkeypatch.delenv(PICKLE_DIRS_ENV, raising=False)
    monkeypatch.delenv(HOSTS_ENV, raising=False)
    yield
    uninstall()


def add_model(at: AppTest, kind: str, fields: dict[str, str], label: str) -> AppTest:
    at.selectbox(key="um_kind").set_value(kind).run()
    for field, value in fields.items():
        at.text_input(key=f"um_{field}").set_value(value)
    at.text_input(key="um_label").set_value(label)
    return next(b for b in at.button if b.label == "Add model").click().run()


def test_browser_cannot_add_a_pickle_model_without_the_server_setting(tmp_path, monkeypatch):
    path = make_pipeline_file(tmp_path / "pipe.joblib")
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/run.py").run()
    add_model(at, "sklearn", {"path": str(path)}, "pickled")
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(PICKLE_DIRS_ENV in e and "Traceback" not in e for e in errors), errors
    assert not at.session_state["user_models"] if "user_models" in at.session_state else True
    add_model(at, "http", {"url": "http://169.254.169.254/latest/meta-data/"}, "metadata")
    assert any("metadata" in e.value for e in at.error)
    monkeypatch.setenv(PICKLE_DIRS_ENV, str(tmp_path))  # the operator allows this folder
    add_model(at, "sklearn", {"path": str(path)}, "pickled")
    assert not at.exception and any("Added pickled" in s.value for s in at.success)
    assert [m["label"] for m in at.session_state["user_models"]] == ["pickled"]
    assert "trusted" not in at.session_state["user_models"][0]["kwargs"]  # granted on the server, per use


def run_lc_session(results: dict, name: str) -> None:
    try:
        _run_lc_session(results, name)
    except BaseException as exc:  # noqa: BLE001 - a thread's failure must reach the test's assertion
        results[name] = ([f"session {name} raised {type(exc).__name__}: {exc}"], [], None)


def _run_lc_session(results: dict, name: str) -> None:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc04"])
    at.number_input(key="max_seeds").set_value(15)
    at.run()
    at.button(key="run_go").click().run()
    results[name] = (list(at.exception), [e.value for e in at.error], at.dataframe[0].value if at.dataframe else None)


def test_two_sessions_run_the_same_lc_at_once():
    import threading

    from streamlit.testing.v1.util import patch_config_options

    results: dict = {}
    threads = [threading.Thread(target=run_lc_session, args=(results, n)) for n in ("a", "b")]
    # each AppTest.run patches streamlit's config.get_option and restores what it saw: two sessions in threads
    # would switch "global.appTest" off under each other (widgets then miss their test hooks) without this
    with patch_config_options({"global.appTest": True}):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
    assert set(results) == {"a", "b"}
    for exceptions, errors, summary in results.values():
        assert not exceptions and not errors, (exceptions, errors)
        assert summary is not None and list(summary["model"]) == ["fake-sentiment"]
    run_lc_session(results, "serial")  # a third, alone, reads the finished run: same numbers
    for name in ("a", "b"):
        assert results[name][2].equals(results["serial"][2])
