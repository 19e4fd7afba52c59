"""AppTest: the trust model seen from the browser (a pickle model needs the operator's ALICT_PICKLE_DIRS)."""

from __future__ import annotations

import re
from pathlib import Path

import fakes
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_trust import make_pipeline_file

from alict_app import runs
from alict_core.common.trust import HOSTS_ENV, PICKLE_DIRS_ENV

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
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # the text shown (values drawn escaped)
    assert any(PICKLE_DIRS_ENV in e and "Traceback" not in e for e in errors), errors
    assert not at.session_state["user_models"] if "user_models" in at.session_state else True
    add_model(at, "http", {"url": "http://169.254.169.254/latest/meta-data/"}, "metadata")
    assert any("metadata" in e.value for e in at.error)
    monkeypatch.setenv(PICKLE_DIRS_ENV, str(tmp_path))  # the operator allows this folder
    add_model(at, "sklearn", {"path": str(path)}, "pickled")
    assert not at.exception and any("Added pickled" in s.value for s in at.success)
    assert [m["label"] for m in at.session_state["user_models"]] == ["pickled"]
    assert "trusted" not in at.session_state["user_models"][0]["kwargs"]  # granted on the server, per use


def test_the_add_a_model_form_shows_the_registry_entries_kinds_and_parameters():
    """The Run page's form offers the model kinds a user may add and, for each, the fields its registry entry
    names (title, parameter names and hints): nothing written a second time in the page."""
    from alict_core.models.refs import user_kinds

    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/run.py").run()
    kinds = user_kinds()
    assert list(at.selectbox(key="um_kind").options) == [entry.tags["user_kind"] for entry in kinds.values()]
    for name, entry in kinds.items():
        at.selectbox(key="um_kind").set_value(name).run()
        fields = {box.label: box.placeholder for box in at.text_input if box.key.startswith("um_") and
                  box.key != "um_label"}
        assert fields == {p.name: p.hint for p in entry.params}, name


def run_lc_session() -> tuple[list, list[str], object]:
    """One browser session runs sentiment-lc04 (15 seeds) with the fake model: (exceptions, errors, summary)."""
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc04"])
    at.number_input(key="max_seeds").set_value(15)
    at.run()
    at.button(key="run_go").click().run()
    return list(at.exception), [e.value for e in at.error], at.dataframe[0].value if at.dataframe else None


def test_two_sessions_run_the_same_lc_at_once():
    """Two sessions press Run on the same LC at once: the app's run path (runs.execute, what the Run button calls)
    in two threads that a barrier holds until both are inside it, so the runs overlap on every schedule; both
    finish with the same summary, and a browser session (AppTest, alone: Streamlit's test runtime is not
    thread-safe) shows the same numbers."""
    import threading

    from alict_app import spec_store

    specs = {s.id: s for s in spec_store.task_specs("sentiment")}
    request = runs.RunRequest(task="sentiment", lc_ids=["sentiment-lc04"],
                              models=[{"name": "fake-sentiment", "kwargs": {}, "label": "fake-sentiment"}],
                              max_seeds=15, spec_keys={"sentiment-lc04": spec_store.spec_key(specs["sentiment-lc04"])})
    both_inside = threading.Barrier(2, timeout=120)
    outcomes: dict[str, object] = {}

    def session(name: str) -> None:
        entered = threading.Event()

        def progress(message: str, fraction: float) -> None:
            if not entered.is_set():  # the first progress call: this session is inside execute
                entered.set()
                both_inside.wait()

        try:
            outcomes[name] = runs.execute(request, specs, progress)
        except BaseException as exc:  # noqa: BLE001 - a thread's failure must reach the test's assertion
            outcomes[name] = exc

    threads = [threading.Thread(target=session, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert not any(thread.is_alive() for thread in threads)
    assert all(isinstance(outcomes[name], str) for name in ("a", "b")), outcomes
    summaries = [runs.run_frames(str(outcomes[name]))["summary"] for name in ("a", "b")]
    assert list(summaries[0]["model"]) == ["fake-sentiment"] and summaries[0].equals(summaries[1])
    exceptions, errors, shown = run_lc_session()
    assert not exceptions and not errors, (exceptions, errors)
    assert shown is not None
    shared = [c for c in summaries[0].columns if c in shown.columns]  # the page adds the LC title, hides raw sums
    assert {"lc_id", "model", "n_fail", "fail_rate", "ci_low_all"} <= set(shared)
    pd.testing.assert_frame_equal(shown[shared].reset_index(drop=True), summaries[0][shared].reset_index(drop=True),
                                  check_dtype=False)
