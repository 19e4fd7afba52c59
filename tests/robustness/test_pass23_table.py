"""Pass 23 rows: each finding of the hostile pass, a row that failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.support import workspace_spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p23_pages_1_a_removed_spec_without_the_task_prefix_is_said_at_the_press(tmp_path, monkeypatch):
    """Was: the pass-22 check took only ids starting with `sentiment-`; a removed workspace spec `myspec` was still
    dropped from the run without a word."""
    from alict_app import runs
    from tests.test_app_explorer import start as start_app

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    mine = workspace_spec(tmp_path / "ws", "myspec")
    at = start_app()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc02", "myspec"])
    at.number_input(key="max_seeds").set_value(3)
    at.run()
    mine.unlink()
    at.button(key="run_go").click().run()
    assert not at.exception
    assert any("No longer there" in w.value and "myspec" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("Nothing run" in e.value for e in at.error)
    assert runs.list_runs("sentiment") == []


def test_p23_pages_3_an_app_press_never_adopts_a_cli_run(cli, tmp_path, own_cache):
    """Was: an app press that found a CLI run finished wrote the app's request.json (and a story the CLI was told
    not to make) into the CLI run's folder; pickers then named it after the app's request."""
    from alict_core.runner.stream import _found_finished
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    out = tmp_path / "r"
    assert cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
               str(out), "--no-story", "--quiet").code == 0
    called: list[Path] = []
    _found_finished(out, {"request.json": {"key": "app"}}, called.append)
    assert not (out / "request.json").exists() and called == []


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p23_pages_3b_an_app_run_killed_before_its_request_file_gets_it_back(monkeypatch):
    """The neighbour that must keep working: an app run whose request.json was lost to a kill gets it back."""
    from alict_app import runs
    from alict_core.lcspec import load_task_specs
    from tests.test_app_explorer import run_fake
    from tests.test_app_explorer import start as start_app

    key = run_fake(start_app(), lcs=("sentiment-lc01",))
    info = runs.run_info(key)
    (runs.run_dir(key) / "request.json").unlink()
    specs = {s.id: s for s in load_task_specs("sentiment")}
    request = runs.RunRequest(**{k: v for k, v in info["request"].items()})
    assert runs.execute(request, {lc: specs[lc] for lc in request.lc_ids}, lambda m, f: None) == key
    assert (runs.run_dir(key) / "request.json").exists()


def test_p23_pages_5_run_names_count_suite_tests_apart():
    """Was: a run of one LC and an NLPLego suite was named "2 of 1 LCs", a suite-only run "1 of 0 LCs"."""
    from alict_app.runs import lc_count

    assert lc_count(["sentiment-lc01"], ["nlplego", "sentiment-lc01"]) == "1 LCs + 1 suite test"
    assert lc_count([], ["nlplego"]) == "1 suite test"
    assert lc_count(["sentiment-lc01", "sentiment-lc05"], ["sentiment-lc01"]) == "1 of 2 LCs"
    assert lc_count(["a", "b"], None) == "2 LCs"


def test_p23_pages_2_a_cli_run_records_its_task(cli, tmp_path, own_cache, monkeypatch):
    """Was: a CLI run of LC ids without the task prefix (a workspace spec `myspec`, a suite) had no task in the app:
    shown under either task, or under neither."""
    from alict_app import runs
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    root = tmp_path / "store"
    assert cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
               str(root / "x"), "--quiet").code == 0
    meta = json.loads((root / "x" / "meta.json").read_text())
    assert meta["extra"]["task"] == "sentiment"
    summary = root / "x" / "summary.csv"
    summary.write_text(summary.read_text().replace("sentiment-lc04", "myspec"))  # an id that names no task
    monkeypatch.setattr(runs, "runs_root", lambda: root)
    monkeypatch.setattr(runs, "run_dir", lambda key: root / key)
    assert runs.run_info("x")["request"]["task"] == "sentiment"


def test_p23_pages_6_a_review_link_in_decomposed_unicode_opens_its_task(tmp_path, monkeypatch):
    """Was: `?review=cafe%CC%81` (e + a combining accent) opened another review task with a wrong warning, while
    the store finds `café` by either form."""
    from streamlit.testing.v1 import AppTest

    from alict_core.review import ReviewStore
    from alict_core.review.store import dispose_engines

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    store = ReviewStore(url)
    store.create_task("aaa first", "sentiment", {}, [])
    store.create_task("café", "sentiment", {}, [])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["review"] = "cafe\u0301"
    at.run()
    at.switch_page("pages/review.py").run()
    try:
        assert not at.exception
        assert at.selectbox(key="review").value == "café"
        assert not [w.value for w in at.warning if "is not a review task" in w.value]
    finally:
        dispose_engines()


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p23_pages_4_a_removed_lego_suite_is_said_at_the_press(tmp_path, monkeypatch):
    """Was: an NLPLego suite chosen on the Run page and removed before the press was dropped without a word."""
    import alict_core.lego.pipeline as pipeline
    from alict_app import runs
    from tests.test_app_explorer import start as start_app

    suite = tmp_path / "lego" / "cases.jsonl"
    saved = [{"path": str(suite), "label": "my lego suite"}]
    monkeypatch.setattr(pipeline, "saved_suites", lambda task: list(saved))
    at = start_app()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc02"])
    at.multiselect(key="run_lego").set_value([str(suite)])
    at.run()
    saved.clear()  # removed by another session
    at.button(key="run_go").click().run()
    assert not at.exception
    assert any("No longer saved" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("Nothing run" in e.value for e in at.error)
    assert runs.list_runs("sentiment") == []
