"""AppTest of the Review page: judge five cases with the keyboard buttons, reload, resume at case six."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from alict_core.review import ReviewStore, SamplingPlan, create_review_task
from alict_core.review.store import dispose_engines
from alict_core.runner import build_cases

pytestmark = pytest.mark.usefixtures("fake_backends")  # tests/app_fixtures.py

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 180


@pytest.fixture
def review_task(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film number {i}",
              "test_type": "MFT", "expected": expected} for i in range(6)]
    expansions = [{"id": f"s{i}-x", "seed_id": f"s{i}", "text": f"a truly fine film number {i}"} for i in range(6)]
    store = ReviewStore()
    task, _ = create_review_task(store, "pilot", "sentiment", build_cases(seeds, expansions),
                                 SamplingPlan(n_sets=1, k=2, size=6), reviewers=["ann", "bob"])
    yield store, task
    dispose_engines()


def open_review(reviewer: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["review"] = "pilot"
    at.query_params["reviewer"] = reviewer
    at.run()
    at.switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def case_header(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Case "))


def test_judge_five_with_keys_reload_and_resume(review_task):
    store, task = review_task
    at = open_review("ann")
    assert case_header(at).startswith("**Case 1 of 12**")
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "probabilit" not in shown.lower() and "predicted" not in shown.lower()  # no model output (no anchoring)
    assert "**Negated negative should be positive or neutral**" in [m.value for m in at.markdown]  # the LC's title
    for n in range(5):
        item = store.items(task.id)[n]
        keys = ["relevance", "label"] + (["validity"] if item.kind == "expansion" else [])
        for step, value in zip(keys, (5, 4, 3), strict=False):
            button = at.button(key=f"review_{step}_{value}")
            assert button.proto.shortcut == str(value)  # the 1–5 keys press these buttons
            button.click().run()
            assert not at.exception, [e.value for e in at.exception]
        assert case_header(at).startswith(f"**Case {n + 2} of 12**")
    rows = store.judgements(task.id, reviewer="ann")
    assert len(rows) == 5 and {r["relevance"] for r in rows} == {5} and {r["label_score"] for r in rows} == {4}
    assert all((r["validity"] == 3) == (r["kind"] == "expansion") for r in rows)

    again = open_review("ann")  # a reload: a new session with the same URL
    assert case_header(again).startswith("**Case 6 of 12**")
    # the reviewer's bar (the sidebar may show a model build's bar too)
    assert [p.proto.text for p in again.get("progress") if p.proto.text.startswith("ann:")] == [
        "ann: 5 of 12 cases judged"]
    overall = again.dataframe[0].value.set_index("cases")
    assert overall.loc["overall", "LCRel"].startswith("1.000 [") and overall.loc["overall", "LCRel"].endswith("(n=5)")
    assert any(m.value.startswith("**Write-back off**") and "0 case(s)" in m.value for m in again.markdown)
    again.button(key="review_back").click().run()  # ← back shows the saved judgement of case 5
    assert case_header(again).startswith("**Case 5 of 12**")
    assert any("Saved: relevance 5, label 4" in c.value for c in again.caption)

    other = open_review("bob")  # the second reviewer starts at the beginning of the same set
    assert case_header(other).startswith("**Case 1 of 12**")


def test_skip_to_the_end_then_finish_and_take_another_set(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    expected = {"kind": "label", "labels": ["neutral"], "tolerance": None}
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"this is not a film {i}",
              "test_type": "MFT", "expected": expected} for i in range(2)]
    create_review_task(ReviewStore(), "pilot", "sentiment", build_cases(seeds), SamplingPlan(n_sets=2, k=1, size=2))
    try:
        at = open_review("ann")  # a page view claims nothing: ann has no set until she asks for one
        assert not any(m.value.startswith("**Case ") for m in at.markdown)
        assert [r.name for r in ReviewStore().tasks()] == ["pilot"] and ReviewStore().find_reviewer("ann") is None
        at.button(key="review_claim").click().run()  # the click claims set 1 (one case)
        assert case_header(at).startswith("**Case 1 of 1**")
        at.button(key="review_next").click().run()
        assert any("1 skipped case(s) still to judge" in i.value for i in at.info)
        at.button(key="review_first_open").click().run()
        at.button(key="review_relevance_4").click().run()
        at.button(key="review_label_3").click().run()
        assert any("All your cases are judged" in s.value for s in at.success)
        at.button(key="review_back_end").click().run()  # ← from the end: the judged case with its scores
        assert any("Saved: relevance 4, label 3" in c.value for c in at.caption)
        at.button(key="review_next").click().run()
        next(b for b in at.button if b.label == "Take another set").click().run()
        assert case_header(at).startswith("**Case 2 of 2**")  # the second set, at its first case
        assert not at.exception
    finally:
        dispose_engines()


def create_task_from_a_run(tmp_path, monkeypatch, name: str) -> AppTest:
    """A run of two sentiment seeds (vader) in a private store, then "Create review task" ``name`` (1 set, 1 reviewer
    per case) pressed on the Review page by ann; the AppTest after that press."""
    import time

    from alict_core.runner import run_streaming

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a good film number {i}",
              "test_type": "MFT", "expected": expected} for i in range(2)]
    request = {"key": name, "status": "done", "started": 0, "finished": time.time(),
               "request": {"task": "sentiment", "lc_ids": ["sentiment-lc04"],
                           "models": [{"name": "vader", "kwargs": {}, "label": "vader"}]}}
    run_streaming(build_cases(seeds), ["vader"], root=tmp_path / "cache" / "runs",
                  extra_files={"request.json": request})
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["reviewer"] = "ann"
    at.run()
    at.switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    next(t for t in at.text_input if t.label == "Review task name").set_value(name)
    next(n for n in at.number_input if n.label == "Sets").set_value(1)
    next(n for n in at.number_input if n.label == "Reviewers per case").set_value(1)
    next(b for b in at.button if b.label == "Create review task").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_press_outcome_stays_on_a_rerun_from_elsewhere(tmp_path, monkeypatch):
    """Creating a task and a refused claim say so, and a rerun from elsewhere (the sidebar's status probe resolving,
    a build landing) keeps the message: drawn only in the press's run, it was wiped under load (a browser test
    waited for it in vain)."""
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    try:
        at = create_task_from_a_run(tmp_path, monkeypatch, "kept")
        created = "Review task 'kept': 2 seeds + 0 expansions in 1 sets, sampled from run "
        assert any(s.value.startswith(created) for s in at.success), [s.value for s in at.success]
        at.run()  # a rerun from elsewhere
        assert any(s.value.startswith(created) for s in at.success), [s.value for s in at.success]

        at.button(key="review_claim").click().run()  # ann takes the only set
        at.text_input(key="reviewer").set_value("bob").run()
        at.button(key="review_claim").click().run()  # bob: no set left
        refused = "Every set of this task already has its reviewers; ask for another task."
        assert any(i.value == refused for i in at.info), [i.value for i in at.info]
        at.run()  # a rerun from elsewhere
        assert any(i.value == refused for i in at.info), [i.value for i in at.info]
        assert not at.exception, [e.value for e in at.exception]
    finally:
        dispose_engines()


@pytest.fixture
def triggers_reset_beside_each_press(monkeypatch):
    """Every run has its buttons' triggers reset right after the browser's message is applied, as a run ending beside
    it does on a loaded server: with Streamlit's fast reruns a press's run starts while the previous run (a timed
    fragment's, e.g. the sidebar's Backends panel) is still ending, and that run's end resets every trigger to False.
    A press read from a button's return value is then lost; one noted by the button's ``on_click`` is not (Streamlit
    runs callbacks while it applies the message)."""
    from streamlit.runtime.state.session_state import SessionState

    apply = SessionState.on_script_will_rerun

    def apply_then_reset(self, *args, **kwargs):
        apply(self, *args, **kwargs)
        self._reset_triggers()  # what the other run's on_script_finished does, a moment later

    monkeypatch.setattr(SessionState, "on_script_will_rerun", apply_then_reset)


def test_presses_hold_when_a_run_ending_beside_them_resets_the_triggers(tmp_path, monkeypatch,
                                                                        triggers_reset_beside_each_press):
    """Create a task, take a set, confirm the write-back without and then with the tick: every press has its outcome
    though each run's triggers are reset beside it (a browser test waited for the tick warning in vain under load)."""
    import sqlite3

    path = tmp_path / "review.sqlite"
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    try:
        at = create_task_from_a_run(tmp_path, monkeypatch, "held")
        assert any(s.value.startswith("Review task 'held'") for s in at.success), [s.value for s in at.success]

        at.button(key="review_claim").click().run()
        assert case_header(at).startswith("**Case 1 of 2**"), [m.value for m in at.markdown]
        at.button(key="review_relevance_4").click().run()  # a judgement: the write-back confirmation is shown
        at.button(key="review_label_1").click().run()

        at.button(key="review_writeback_confirm_sentiment").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("Tick the box" in w.value for w in at.warning), [w.value for w in at.warning]
        at.checkbox(key="review_writeback_sure_sentiment").check()
        at.button(key="review_writeback_confirm_sentiment").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert not any("Tick the box" in w.value for w in at.warning), [w.value for w in at.warning]
        assert any("**Write-back on**" in m.value for m in at.markdown)
        dispose_engines()
        conn = sqlite3.connect(path)
        try:
            assert [row[0] for row in conn.execute("SELECT confirmed_by FROM writeback_rules")] == ["ann"]
        finally:
            conn.close()
    finally:
        dispose_engines()


def test_a_press_no_completed_run_took_is_forgotten(review_task):
    """A press noted for a button the run did not draw ("Take another set" while ann still has cases to judge) is
    dropped when the run completes: it never fires later, when that button is drawn."""
    from alict_app.presses import PRESSES

    at = open_review("ann")
    at.session_state[PRESSES] = {"review_another::pilot": True, "run_go": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[PRESSES] == {}
    assert case_header(at).startswith("**Case 1 of 12**")  # ann's one set, as it was: nothing claimed
