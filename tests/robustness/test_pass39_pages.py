"""Pass 39 rows of the pass-38 page findings (the h3pages helper): each failed before its fix unless it says it is a
control."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.test_harden import saved_run, tiny_parent  # noqa: F401 - fixtures of the Harden page row

ROOT = Path(__file__).resolve().parents[2]


def _app(query: dict[str, str] | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def _store_run(root: Path, task: str, finished: float, models: list | None = None,
               expected: str = "positive") -> str:
    """A finished run of two seeds of LC4 in the run store ``root``, its request.json naming ``task``."""
    from alict_core.runner import build_cases, run_streaming

    refs = models or [{"name": "vader", "kwargs": {}, "label": "vader"}]
    seeds = [{"id": f"{task}-s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a good film {i} {task}",
              "test_type": "MFT", "expected": {"kind": "label", "labels": [expected], "tolerance": None}}
             for i in range(2)]
    request = {"key": f"{task}-{finished}", "status": "done", "started": 0, "finished": finished,
               "request": {"task": task, "lc_ids": ["sentiment-lc04"], "models": refs}}
    return run_streaming(build_cases(seeds), refs, root=root, extra_files={"request.json": request}).name


@pytest.fixture
def two_tasks(tmp_path, monkeypatch) -> tuple[str, str]:
    """(a hate-speech run, a newer sentiment run) in a private run store."""
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "runs"
    return _store_run(root, "hate_speech", time.time() - 100), _store_run(root, "sentiment", time.time() - 50)


def _other_task_notes(at) -> list[str]:
    return [c.value for c in at.caption if "named by the link is a run of" in c.value]


# P38-pages-3 ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["run", "run_b"])
def test_p38_pages_3_a_compare_link_to_a_run_of_the_other_task_is_said(two_tasks, side):
    """Was (low): `/compare?run=<a hate-speech run>` (sentiment shown) compared the newest sentiment run without a
    word, and `?run_b=<a hate-speech run>` turned B into run A ("Choose two different runs…"), saying at most that
    the link's model was not in the run. Compare says it as Failures and Report do (the run picker's note)."""
    hate, sentiment = two_tasks
    query = {"run": hate} if side == "run" else {"run": sentiment, "run_b": hate, "model_b": "vader"}
    at = _app(query).switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = _other_task_notes(at)
    assert len(notes) == 1 and hate in notes[0] and "Hate speech" in notes[0], [c.value for c in at.caption]
    assert not [w.value for w in at.warning if "The link's model" in w.value]  # the run is said, not the model
    at.run()  # said once: the pickers now hold what is shown
    assert not _other_task_notes(at)


def test_p38_pages_3_control_a_task_switch_on_compare_says_nothing(two_tasks):
    """Control: the run a task switch leaves behind (shown before, of the old task) is no link's: not said."""
    _hate, sentiment = two_tasks
    at = _app({"run": sentiment}).switch_page("pages/compare.py").run()
    assert not at.exception and not _other_task_notes(at)
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not _other_task_notes(at), [c.value for c in at.caption]


# P38-pages-5 ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,taken", [("hrev", "already exists (a review task of Hate speech"),
                                        ("HREV", "looks like the existing task 'hrev' (a review task of Hate speech")])
def test_p38_pages_5_a_name_taken_by_the_other_tasks_review_task_says_where(tmp_path, fresh_engines, name, taken):
    """Was (cosmetic/low): "a review task named 'hrev' already exists" while the Sentiment page's menu listed no
    'hrev' (it is Hate speech's). The refusal names that task's title."""
    from alict_core.review import ReviewError, ReviewStore, SamplingPlan, create_review_task
    from tests.robustness.support import small_cases

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    plan = SamplingPlan(size=2, n_sets=1, k=1)
    create_review_task(ReviewStore(url), "hrev", "hate_speech", small_cases(2), plan)
    with pytest.raises(ReviewError) as refused:
        create_review_task(ReviewStore(url), name, "sentiment", small_cases(2), plan)
    assert taken in str(refused.value) and "choose another name" in str(refused.value), str(refused.value)
    with pytest.raises(ReviewError) as same_task:  # control: a name of this task's own menu is said as before
        create_review_task(ReviewStore(url), name, "hate_speech", small_cases(2), plan)
    assert "(a review task of" not in str(same_task.value)


# P38-pages-7 ------------------------------------------------------------------------------------------------------

def test_p38_pages_7_the_readiness_table_follows_a_confirmed_write_back(saved_run, tiny_parent,  # noqa: F811
                                                                        tmp_path, monkeypatch, fresh_engines):
    """Was (low): the Harden page's readiness table was cached by the run's meta.json time only: after a confirmed
    write-back every visitor saw the cases rejected since (LC1 4 cases, 50 %) while retraining left them out. The
    cache is keyed by the run's files and the write-back's rejections: the next view counts without them."""
    import shutil

    from alict_core.common.config import artefact_dir
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.runner.run import RunResult

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, artefact_dir("runs") / run_id)

    def lc1_cases() -> int:
        from streamlit.testing.v1 import AppTest

        at = AppTest.from_file(str(ROOT / "pages" / "harden.py"), default_timeout=120).run()  # a new session
        assert not at.exception, [e.value for e in at.exception]
        return int(at.dataframe[0].value.set_index("lc_id").loc["toy-lc01", "n_cases"])

    before = lc1_cases()
    seed = next(c for c in RunResult.load(saved_run).case_list if c.lc_id == "toy-lc01" and c.kind == "seed")
    store = ReviewStore(url)
    task, _ = create_review_task(store, "rt", "sentiment", [seed], SamplingPlan(size=1, n_sets=1, k=1), ["ann"])
    for item in store.items(task.id):
        store.judge(item.id, "ann", relevance=1, label_score=5)  # off-topic: rejected on relevance
    store.confirm_writeback("sentiment", 1, "ann")
    assert lc1_cases() == before - 3  # the seed and its two expansions left out, as the retraining leaves them


# P38-pages-8 ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,fields", [
    ("http", {"url": "http://u:PASSWD99@127.0.0.1:9/cls"}),
    ("openai-chat", {"base_url": "http://u:PASSWD99@127.0.0.1:9/v1", "model": "m"}),
    ("openai-chat", {"base_url": "http://127.0.0.1:9/v1?key=PASSWD99", "model": "m"}),
], ids=["http-userinfo", "chat-userinfo", "chat-query"])
def test_p38_pages_8_an_endpoint_refusal_on_the_run_page_gives_advice_the_browser_can_follow(
        fake_backends, tmp_runs, monkeypatch, kind, fields):
    """Was (low/cosmetic): the Run page said "give them as the model's api_key (openai-chat) or as a header (http:
    headers=X-Api-Key:…)" or "pass api_key instead": the form has no api_key or header field. It says that the form
    takes none and that such an endpoint is run from the command line."""
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    at = _app().switch_page("pages/run.py").run()
    at.selectbox(key="um_kind").set_value(kind).run()
    for field, value in fields.items():
        at.text_input(key=f"um_{field}").set_value(value)
    at.text_input(key="um_label").set_value("ep")
    next(b for b in at.button if b.label == "Add model").click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "form takes no key" in errors[0] and "command line" in errors[0], errors
    assert "pass api_key instead" not in errors[0] and "PASSWD99" not in errors[0]


def test_p38_pages_8_control_the_cli_keeps_its_advice(cli):
    """Control: the command line, which takes `api_key=` and `headers=`, is still told to use them."""
    outcome = cli("explain", "--text", "a fine film", "--model",
                  "openai-chat:base_url=http://127.0.0.1:9/v1?key=x,model=m,task=sentiment")
    assert outcome.code == 2 and "pass api_key instead" in outcome.err, outcome.err


# P38-pages-9 ------------------------------------------------------------------------------------------------------

def test_p38_pages_9_the_demo_story_of_an_endpoint_run_points_to_no_run_page(tmp_path, monkeypatch):
    """Was (cosmetic/low): the demo-mode Story of a run with a browser-added endpoint said "add it on the Run page
    (Add your own model, with its URL) to explain its cases here": demo mode has no Run page. It says that the
    model is a service whose cases the demo does not explain (and still sends it nothing)."""
    from tests.robustness.test_pass37_table import _Redeployable

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")
    service = _Redeployable("positive")
    try:
        ref = {"name": "http", "kwargs": {"url": service.url, "task": "sentiment", "name": "ep"}, "label": "ep"}
        key = _store_run(tmp_path / "cache" / "runs", "sentiment", time.time(), [ref], expected="negative")
        asked = len(service.texts_asked)
        at = _app({"run": key})
    finally:
        service.close()
    assert not at.exception, [e.value for e in at.exception]
    notes = [c.value for c in at.caption if c.value.startswith("No word colours")]
    assert notes and "not explained in the demo" in notes[0] and "Run page" not in notes[0], notes
    assert len(service.texts_asked) == asked  # nothing sent to the service


# Pass 38 (docs/ROBUSTNESS.md): the waiting note in the Run page's progress bar ------------------------------------

def test_p38_the_lock_wait_is_said_in_a_line_of_its_own(fake_backends, tmp_runs, monkeypatch):
    """Was: "waiting for another writer of this run" was only the tail of the bar's text ("running the models:
    0/30 cases (waiting for …) · 30 % · … so far · ETA …"), cut off in the bar. It is the bar's text alone, said in a
    line under the bar while it lasts, and kept as how long the run waited."""
    import streamlit

    from alict_core.runner import stream
    from tests.test_app import run_with_fake_model, start

    held = [True]  # another writer holds the run's lock at the first look, then lets it go
    monkeypatch.setattr(stream, "writer_holds_lock", lambda folder: held.pop() if held else False)
    texts: list[str] = []
    real_progress = streamlit.progress

    def recording(value, text=None, **kwargs):
        bar = real_progress(value, text=text, **kwargs)
        original = bar.progress

        def progress(value, text=None, **kw):
            texts.append(str(text))
            return original(value, text=text, **kw)

        bar.progress = progress
        return bar

    monkeypatch.setattr(streamlit, "progress", recording)
    at = run_with_fake_model(start(), lcs=("sentiment-lc04",))
    assert not at.exception, [e.value for e in at.exception]
    assert any(text.startswith("waiting for another writer of this run ·") for text in texts), texts
    assert any("waited" in c.value and "for it" in c.value for c in at.caption), [c.value for c in at.caption]
