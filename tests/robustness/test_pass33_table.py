"""Pass 33 rows (the p33cli, p33pages and p33kill helpers; fixed by the lead): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("test, said", [
    ({"type": "INV", "expcted": [{"kind": "invariance", "tolerance": 1.0}],
      "data": [["the movie is good", "the movie is terrible"]]}, "expcted"),
    ({"type": "INV", "threshold": 0.9, "data": [["the movie is good", "the movie is terrible"]]}, "threshold"),
    ({"type": "INV", "labels": 1, "data": [["the movie is good", "the movie is terrible"]]}, "no labels"),
    ({"type": "DIR", "labels": 0, "data": [["the movie is good", "the movie is terrible"]]}, "no labels")])
def test_p33_cli_1_a_checklist_test_with_a_field_it_does_not_read_is_refused(cli, tmp_path, test, said):
    """Was (the p33cli helper): a CheckList JSON test read its known fields only (`extra="ignore"`): `"expcted"` ran as
    the default INV (fail rate 1.0 instead of 0.0, exit 0), a test-level `threshold` was dropped, and the labels of an
    INV or DIR test were ignored, beside the pass-32 strict expectation fields."""
    suite = tmp_path / "c.json"
    suite.write_text(json.dumps({"t1": test}))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite),
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, said)
    assert not (tmp_path / "run").exists()


def test_p33_kill_1_a_review_database_in_a_read_only_folder_is_not_called_damaged(tmp_path, monkeypatch):
    """Was (the p33kill helper, a read-only bind mount): `review stats` of a healthy review database (WAL mode: even a
    read needs its -shm file beside it) said "is not a SQLite database (unable to open database file); give --db ... a
    new file": the file was blamed and replacing it advised."""
    import sqlite3

    import alict_core.review.store as store

    database = tmp_path / "r.sqlite"
    sqlite3.connect(database).close()

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    real_access = store.os.access
    monkeypatch.setattr(store.sqlite3, "connect", refuse)
    monkeypatch.setattr(store.os, "access", lambda path, mode: False if Path(path) == tmp_path else
                        real_access(path, mode))
    with pytest.raises(store.ReviewError) as refused:
        store.existing_tables(f"sqlite:///{database}")
    assert "read-only" in str(refused.value) and "not a SQLite database" not in str(refused.value)


def _app():
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240).run()


def test_p33_pages_1_two_endpoints_told_apart_by_their_query_only_are_not_merged(own_cache, monkeypatch):
    """Was (the p33pages helper): `…/predict?model=bert` then `…/predict?model=roberta`, no display names: both said
    "Added http:http://127.0.0.1:18933/predict" and the second replaced the first without a word (the pass-32 default
    name leaves the query out); two OpenAI-compatible models of one base_url the same."""
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    at = _app()
    at.switch_page("pages/run.py").run()
    for url in ("http://127.0.0.1:9/predict?model=bert", "http://127.0.0.1:9/predict?model=roberta"):
        at.selectbox(key="um_kind").set_value("http").run()
        at.text_input(key="um_url").input(url)
        next(b for b in at.button if b.label == "Add model").click().run()
    assert not at.exception
    assert [m["kwargs"]["url"] for m in at.session_state["user_models"]] == ["http://127.0.0.1:9/predict?model=bert"]
    assert any("already has this default name" in e.value for e in at.error)


def test_p33_pages_2_the_lcs_to_run_come_back_after_a_task_round_trip(own_cache):
    """Was (the p33pages helper): "LCs to run" = [sentiment-lc04], sidebar task to Hate speech (its Run page showed no
    LC chosen) and back to Sentiment: no LC chosen either."""
    at = _app()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc04"]).run()
    sentiment_models = at.sidebar.multiselect(key="models").value
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    assert at.multiselect(key="run_lcs").value and all(lc.startswith("hate_speech") for lc in
                                                       at.multiselect(key="run_lcs").value)
    assert at.sidebar.multiselect(key="models").value  # the task's default models (the kept copy of the other
    # task's emptied "Models under test" in the slow browser journey when ensure_choices began to keep)
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert not at.exception and at.multiselect(key="run_lcs").value == ["sentiment-lc04"]
    assert at.sidebar.multiselect(key="models").value == sentiment_models


@pytest.mark.parametrize("address", ["127.0.0.1:1 ", "127.0.0.1:\uff11"])
def test_p33_cli_2_a_ray_port_that_is_no_plain_number_is_refused_not_retried(address, monkeypatch):
    """Was (the p33cli helper): `--ray-address '127.0.0.1:1 '` (a pasted space; RAY_ADDRESS the same) skipped the
    reachability check (the port is not ASCII digits), and Ray, which reads `int('1 ')`, retried the dead address for
    minutes (killed by `timeout 120`). The executor reads the address without its space; a port Ray would read but
    the check would not is refused."""
    import alict_core.executors.ray_executor as ray_executor
    from alict_core.common.errors import AlictError

    with pytest.raises(AlictError, match="not a number"):
        ray_executor.check_reachable(address, timeout=2)
    monkeypatch.setattr(ray_executor, "_ray", lambda: None)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1 ")
    assert ray_executor.RayExecutor().address == "127.0.0.1:1"


@pytest.mark.parametrize("address", ["ray://127.0.0.1:1?token=SECRETQ", "ray://127.0.0.1:1/SECRETPATH#SECRETF"])
def test_p33_cli_3_a_ray_address_never_prints_its_query_path_or_fragment(address):
    """Was (the p33cli helper): `--ray-address 'ray://127.0.0.1:1?token=SECRETQ'` was echoed whole in the error."""
    from alict_core.common.errors import AlictError
    from alict_core.executors.ray_executor import check_reachable

    with pytest.raises(AlictError) as refused:
        check_reachable(address, timeout=2)
    assert "SECRET" not in str(refused.value) and "127.0.0.1:1" in str(refused.value)


def test_p33_cli_4_a_review_database_url_ending_in_a_slash_is_refused(cli, tmp_path, fresh_engines):
    """Was (the p33cli helper, cosmetic): `review sample --db sqlite:///<path>/rv.sqlite/` created `rv.sqlite` (the
    slash dropped without a word), where output files ending in '/' are refused since pass 32."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'rv.sqlite'}/", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, "ends with '/'")
    assert not (tmp_path / "rv.sqlite").exists()


def test_p33_pages_3_the_hashed_default_name_of_a_long_endpoint_url_is_not_of_its_token():
    """Was (the p33pages helper): a URL too long for a display name was named `http:<sha256 of the whole URL>[:12]`,
    token included: with a known URL prefix a short token could be confirmed offline from the shared run's name."""
    from alict_app.user_models import default_label

    base = "http://127.0.0.1:18933/" + "p" * 120
    assert default_label("http", base + "?token=1234") == default_label("http", base + "?token=9999") \
        == default_label("http", base)


@pytest.mark.parametrize("model", ["http:url=http://[::1:9/p,task=sentiment", "http:url=http://[zz]:9/p,task=sentiment",
                                   "openai-chat:base_url=http://[::1/v1,model=x,task=sentiment"])
def test_p33_cli_5_an_endpoint_url_with_a_broken_ipv6_host_is_said_in_words(cli, model):
    """Was (the p33cli helper): `--models 'http:url=http://[::1:9/p,…'` ended in "internal error (ValueError: Invalid
    IPv6 URL)", exit 3 (also `explain --model`, `lego --judge`, an openai-chat base_url): urlsplit's error was not
    caught where a bad port is."""
    outcome = cli("explain", "--text", "a fine film", "--model", model)
    assert_clean_error(outcome, 2, "cannot be read")
