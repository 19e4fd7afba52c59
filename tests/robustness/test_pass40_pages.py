"""Pass 40 rows of the pass-39 page findings (the h5pages helper): each failed before its fix unless it says it is a
control."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.robustness.test_pass39_pages import _app, _store_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def compared_runs(tmp_path, monkeypatch, fake_backends) -> dict[str, str]:
    """Two older sentiment runs of vader (A and B), a newer one of another model and a hate-speech run."""
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    root, now = tmp_path / "cache" / "runs", time.time()
    fake = [{"name": "fake-sentiment", "kwargs": {}, "label": "fake-sentiment"}]
    return {"a": _store_run(root, "sentiment", now - 300),
            "b": _store_run(root, "sentiment", now - 200, expected="negative"),
            "hate": _store_run(root, "hate_speech", now - 150),
            "newest": _store_run(root, "sentiment", now - 100, fake)}


# P39-pages-6 ------------------------------------------------------------------------------------------------------

def test_p39_pages_6_compare_keeps_side_a_across_a_task_round_trip(compared_runs):
    """Was (low-medium): after Sentiment → Hate speech → Sentiment, Compare's side A became the task's newest run (the
    side's widget still held the other task's run), with a false "The link's model … is not in this run"; the
    replaced run became the session's run on Failures too. Side A returns to the run it showed, without a note."""
    runs = compared_runs
    at = _app({"run": runs["a"], "run_b": runs["b"], "model_a": "vader", "model_b": "vader"})
    at = at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"] == runs["a"]
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"] == runs["a"], (at.session_state["run"], runs)
    assert at.session_state["run_b"] == runs["b"]
    assert not [w.value for w in at.warning if "The link's model" in w.value], [w.value for w in at.warning]
    assert not [c.value for c in at.caption if "named by the link" in c.value]
    at.switch_page("pages/failures.py").run()
    assert at.session_state["run"] == runs["a"]


def _two_asks(cli, tmp_path, cache: Path) -> tuple[str, str, str]:
    """Two runs (ids) of one HTTP endpoint `svc` on three seeds, the service "redeployed" between them, and its
    URL."""
    from tests.robustness.test_pass37_table import _Redeployable
    from tests.robustness.test_pass39_endpoint import _seeds, _store_runs

    service = _Redeployable("positive")
    seeds, model = _seeds(tmp_path, 3), f"http:url={service.url},name=svc"
    try:
        assert cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet",
                   "--no-story").code == 0
        [first] = _store_runs(cache)
        service.label = "negative"
        assert cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet",
                   "--no-story").code in (0, 1)
    finally:
        service.close()
    [second] = [run for run in _store_runs(cache) if run != first]
    return first.name, second.name, service.url


# P39-pages-1 ------------------------------------------------------------------------------------------------------

def test_p39_pages_1_compare_page_says_two_asks_of_one_service(cli, tmp_path, own_cache):
    """Was (low-medium): the Compare page showed two asks of one endpoint as a model change (the CLI's note "A and B
    asked the same service …" never reached the page). The page says the core's note first."""
    first, second, _url = _two_asks(cli, tmp_path, own_cache)
    at = _app({"run": first, "run_b": second, "model_a": "svc", "model_b": "svc"})
    at = at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown).replace("\\", "")  # Markdown escapes of literal()
    assert "A and B asked the same service (svc) in two runs" in said, said[-600:]


# P39-pages-4 ------------------------------------------------------------------------------------------------------

def test_p39_pages_4_a_link_to_the_other_tasks_review_task_is_said_when_this_task_has_none(tmp_path, monkeypatch,
                                                                                          fresh_engines):
    """Was (low): `/review?task=hate_speech&review=<a sentiment review task>` said only "No review tasks for Hate
    speech … yet." (the other task's note came after that early return), as if the link were broken. The link's task
    is named whether or not this task has review tasks of its own."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from tests.robustness.support import small_cases

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    create_review_task(ReviewStore(url), "rev1", "sentiment", small_cases(3), SamplingPlan(size=3, n_sets=1, k=1))
    at = _app({"task": "hate_speech", "review": "rev1", "reviewer": "bob"}).switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning if "is a review task of" in w.value]
    assert warnings and "Sentiment" in warnings[0] and "has no review task yet" in warnings[0], \
        [w.value for w in at.warning]
    assert any("No review tasks for" in i.value for i in at.info)


def _run_page_with_endpoint(url: str):
    """A session on the Run page with LC04 (4 seeds) and only the HTTP endpoint `svc` at ``url``."""
    from tests.test_trust_app import add_model

    at = _app()
    at.sidebar.multiselect(key="models").set_value([]).run()
    at.switch_page("pages/run.py").run()
    add_model(at, "http", {"url": url}, "svc")
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="run_lcs").set_value(["sentiment-lc04"])
    at.number_input(key="max_seeds").set_value(4)
    return at.run()


# P39-pages-2 ------------------------------------------------------------------------------------------------------

def test_p39_pages_2_a_view_of_the_run_page_keeps_this_sessions_run(tmp_runs, monkeypatch):
    """Was (low-medium): after visitor B's ask of the same endpoint settings, a mere view of visitor A's Run page
    ("Last run of these settings: … <B's run>") made B's run A's run on Failures and Report, without a word. A page
    view never moves the session's run; the box shows A's own ask."""
    from tests.robustness.test_pass37_table import _Redeployable

    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    service = _Redeployable("positive")
    try:
        first = _run_page_with_endpoint(service.url)
        first.button(key="run_go").click().run()
        assert not first.exception, [e.value for e in first.exception]
        mine = first.session_state["run"]
        service.label = "negative"  # redeployed, then another visitor asks it with the same settings
        other = _run_page_with_endpoint(service.url)
        other.button(key="run_go").click().run()
        theirs = other.session_state["run"]
        assert theirs != mine
        first.switch_page("pages/report.py").run()
        first.switch_page("pages/run.py").run()  # a view, no press
    finally:
        service.close()
    assert not first.exception, [e.value for e in first.exception]
    boxes = [i.value for i in first.info if "Last run of these settings" in i.value]
    assert boxes and mine[:8] in boxes[0] and theirs[:8] not in boxes[0], boxes
    assert first.session_state["run"] == mine
    first.switch_page("pages/failures.py").run()
    assert first.session_state["run"] == mine


# P39-pages-3 ------------------------------------------------------------------------------------------------------

def test_p39_pages_3_a_cancelled_endpoint_run_does_not_promise_cached_batches(tmp_runs, monkeypatch):
    """Was (low): "Run cancelled. Finished batches are cached: running again resumes." for a run of an endpoint,
    whose answers are never cached (every text of an unfinished shard is asked again). The note and the Cancel help
    say what is kept for an endpoint."""
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    at = _run_page_with_endpoint("http://127.0.0.1:9/predict")
    assert "an endpoint's answers of an unfinished shard are not" in at.button(key="run_cancel").help
    at.session_state["cancel_run"] = True
    at.run()
    notes = [w.value for w in at.warning if "Run cancelled" in w.value]
    assert notes and "Finished batches are cached" not in notes[0] and "asked again" in notes[0], notes
    assert "svc" in notes[0]


def test_p39_pages_3_control_a_cancelled_run_of_a_local_model_keeps_its_note(tmp_runs, fake_backends):
    """Control: a run of a local model keeps "Finished batches are cached: running again resumes."."""
    at = _app()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.session_state["cancel_run"] = True
    at.run()
    said = [w.value.replace("\\", "") for w in at.warning]  # Markdown escapes of literal()
    assert any("Finished batches are cached: running again resumes." in w for w in said), said


def test_p39_pages_3_the_core_stop_of_an_uncached_model_does_not_say_cached(fake_backends):
    """Was: the core's stop inside a model's texts said "N of M new texts predicted and cached; run again to resume"
    for a model whose answers are kept in memory only (an endpoint's, or one without a fingerprint)."""
    from alict_core.models.registry import get_model
    from alict_core.runner import RunCancelled
    from alict_core.runner.memory_cache import MemoryPredictionCache
    from alict_core.runner.run import predict_cached
    from tests.robustness.support import small_cases

    model = get_model("fake-sentiment")
    with pytest.raises(RunCancelled) as stopped:
        predict_cached(model, [c.text for c in small_cases(3)], should_stop=lambda: True,
                       cache=MemoryPredictionCache(model.labels))
    assert "not cached" in str(stopped.value) and "predicted and cached" not in str(stopped.value), str(stopped.value)


# P39-pages-5 ------------------------------------------------------------------------------------------------------

def _explain_note(key: str, ref_json: str) -> None:
    from alict_app import case_explainer

    case_explainer.changed_since_run(key, "svc", ref_json)


def test_p39_pages_5_explaining_an_endpoint_case_says_the_service_answers_now(cli, tmp_path, own_cache, monkeypatch):
    """Was (low-medium): "Explain this case" of an endpoint's run asked the service as it answers now (after a
    redeploy: "label kept: positive" beside the run's negative) with no word; the changed-model warning compares
    fingerprints, which an endpoint keeps across a redeploy. The explainer says it asks the service again."""
    import json

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    first, _second, url = _two_asks(cli, tmp_path, own_cache)
    meta = json.loads((own_cache / "runs" / first / "meta.json").read_text())
    assert [m.get("answers_change") for m in meta["models"]] == [True]
    ref = {"name": "http", "kwargs": {"url": url, "name": "svc", "task": "sentiment"},
           "label": "svc"}
    at = AppTest.from_function(_explain_note, args=(first, json.dumps(ref, sort_keys=True))).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in at.warning]
    assert any("is a service (an endpoint)" in w and "as it answers now" in w for w in said), said


# P39-pages-7 ------------------------------------------------------------------------------------------------------

def _result_box(key: str) -> None:
    from alict_app import run_view

    run_view.show_result(key, "new")


def test_p39_pages_7_cases_left_out_by_the_review_write_back_are_said(tmp_path, monkeypatch):
    """Was (low): a run that left out cases rejected in review (meta `review_excluded`) said so only in the CLI and
    the HTML report: the Run page's result and the Report page showed 9 seeds of the 10 asked without a word."""
    from streamlit.testing.v1 import AppTest

    from alict_core.runner import build_cases, run_streaming

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a good film {i}",
              "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}}
             for i in range(3)]
    request = {"key": "k", "status": "done", "started": 0, "finished": time.time(),
               "request": {"task": "sentiment", "lc_ids": ["sentiment-lc04"],
                           "models": [{"name": "vader", "kwargs": {}, "label": "vader"}]}}
    key = run_streaming(build_cases(seeds), ["vader"], root=tmp_path / "cache" / "runs",
                        extra={"review_excluded": 2}, extra_files={"request.json": request}).name
    box = AppTest.from_function(_result_box, args=(key,)).run()
    assert not box.exception, [e.value for e in box.exception]
    assert any("2 case(s) rejected by human reviewers were left out" in c.value for c in box.caption), \
        [c.value for c in box.caption]
    report = _app({"run": key}).switch_page("pages/report.py").run()
    assert not report.exception, [e.value for e in report.exception]
    assert any("2 case(s) rejected by human reviewers were left out" in c.value for c in report.caption)


def test_p39_pages_6_compare_keeps_side_a_when_b_linked_a_run_of_the_other_task(compared_runs):
    """Was (low-medium, the other-task note's case): `?run=<A>&run_b=<a hate-speech run>`, then a task round trip:
    side A became the task's newest run with "The link's model … is not in this run". A keeps its run."""
    runs = compared_runs
    at = _app({"run": runs["a"], "run_b": runs["hate"], "model_a": "vader", "model_b": "vader"})
    at = at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"] == runs["a"], (at.session_state["run"], runs)
    assert not [w.value for w in at.warning if "The link's model" in w.value], [w.value for w in at.warning]
