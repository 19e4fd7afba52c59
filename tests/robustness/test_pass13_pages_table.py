"""Hostile pass 13 table, pages (notes: attack_pass13_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]


# P13-C: a story.json contribution with fewer scores than tokens (or NaN scores), its checksum recomputed, was used:
# the Story page showed "ValueError: zip() argument 2 is shorter than argument 1" with a traceback, every card gone --

CONTRIBUTION_TAMPERS = {
    "fewer-scores-than-tokens": {"tokens": ["a", "bad", "film"], "scores": [0.1, -0.4]},
    "nan-scores": {"tokens": ["a", "bad"], "scores": [float("nan"), float("nan")]},
    "infinite-score": {"tokens": ["a", "bad"], "scores": [0.1, float("inf")]},
}


@pytest.mark.parametrize("tamper", list(CONTRIBUTION_TAMPERS))
def test_p13_c_a_story_contribution_that_does_not_fit_its_tokens_is_not_used(saved_run, tamper):
    from alict_core.report import story as core_story

    core_story.write_story(saved_run, None)
    path = core_story.story_path(saved_run)
    story = json.loads(path.read_text())
    story["contributions"]["vader:a bad film"] = CONTRIBUTION_TAMPERS[tamper]
    content = {k: v for k, v in story.items() if k not in core_story.INTEGRITY_KEYS}
    story["sha256"] = core_story._content_sha256(content)  # an editor recomputes the plain checksum
    path.write_text(json.dumps(story))
    assert core_story.read_story(saved_run) is None


def test_p13_c_an_honest_contribution_is_still_used(saved_run):
    from alict_core.explain.base import tokenize
    from alict_core.report import story as core_story

    core_story.write_story(saved_run, None)
    path = core_story.story_path(saved_run)
    story = json.loads(path.read_text())
    card = story["candidates"][0]  # an explanation of one of the run's own failures, one score per word (pass 30)
    tokens = tokenize(card["text"])
    story["contributions"][core_story.contribution_key(card["model"], card["text"])] = {
        "tokens": tokens, "scores": [0.1 * i for i in range(len(tokens))]}
    content = {k: v for k, v in story.items() if k not in core_story.INTEGRITY_KEYS}
    story["sha256"] = core_story._content_sha256(content)
    path.write_text(json.dumps(story))
    assert core_story.read_story(saved_run) is not None


# P13-B: the Specs page showed the server's absolute workspace path in its caption and after every save ------------

def test_p13_b_the_specs_page_shows_no_server_path(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    workspace = tmp_path / "server-secret-workspace"
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    at = AppTest.from_file(str(ROOT / "pages" / "specs.py"), default_timeout=180)
    at.run()
    assert not at.exception
    shown = " ".join(str(getattr(e, "value", "")) for e in [*at.caption, *at.success, *at.markdown, *at.info])
    shown = shown.replace("\\", "")  # as drawn: the markdown escapes (server\-secret) are not shown
    assert "specs/" in shown and str(workspace) not in shown and "server-secret-workspace" not in shown


# P13-D: an uploaded predictions file added without a display name was named by the server's path of its stored copy
# ("Added static:/…/cache/uploads/fc94a47bf175ecbb.csv"): the path became the model's name in runs, reports, Story --

class _Upload:
    name = "my preds.csv"

    @staticmethod
    def getvalue() -> bytes:
        return b"text,label\na good film,positive\n"


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p13_d_an_uploaded_model_is_named_by_its_file_not_a_server_path(tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))

    def uploader(*args, key=None, **kwargs):  # AppTest cannot upload: the widget's value as an upload leaves it
        st.session_state[key] = _Upload()
        return st.session_state[key]

    monkeypatch.setattr(st, "file_uploader", uploader)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.run()
    at.switch_page("pages/run.py").run()
    at.selectbox(key="um_kind").set_value("static").run()
    at.session_state["um_path"] = ""
    at.session_state["um_label"] = ""
    [button for button in at.button if button.label == "Add model"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    pending = at.session_state["um_pending"] if "um_pending" in at.session_state else None
    names = [m.get("label") for m in (at.session_state["user_models"] if "user_models" in at.session_state else [])]
    label = (pending or {}).get("label") or (names[0] if names else None)
    assert label == "static:my preds.csv", (pending, names)
    shown = " ".join(str(getattr(e, "value", "")) for e in [*at.caption, *at.success, *at.markdown, *at.info])
    assert str(tmp_path) not in shown.replace("\\", "")


# P13-A: a run killed hard whose recorded pid now belongs to another live process (a restarted server in a container
# gets the same pid) was shown "running · process alive" for ever, and attaching to it refreshed for ever ---------

def test_p13_a_a_running_run_whose_lock_is_free_is_shown_stopped(tmp_path, monkeypatch):
    import os
    import socket

    from alict_core.runner.reader import running_runs
    from alict_core.runner.stream import run_lock

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "runs" / "aaaa00000000"
    folder.mkdir(parents=True)
    (folder / "progress.json").write_text(json.dumps({
        "status": "running", "pid": os.getpid(), "host": socket.gethostname(), "run_id": "aaaa00000000",
        "n_shards": 1, "shards_done": 0, "n_cases": 10, "cases_done": 0, "started_at": 1.0, "updated_at": 2.0}))
    with run_lock(folder):  # a live writer holds it: running
        assert [r["alive"] for r in running_runs(tmp_path / "runs")] == [True]
    listed = running_runs(tmp_path / "runs")  # the writer died, its pid lives on in another process: stopped
    assert [(r["alive"], r["shown_status"]) for r in listed] == [(False, "stopped (process gone); re-run to resume")]
