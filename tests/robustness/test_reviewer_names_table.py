"""Reviewer names table: every command and page taking a reviewer's (or a confirmer's) name refuses a blank,
padded-to-nothing, over-long or control-character name, and a name given twice, with one message before any
work; nothing is recorded (no write-back rule, no review task, no reviewer).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from alict_core.review import ReviewStore, SamplingPlan, create_review_task
from alict_core.review.store import ReviewError, dispose_engines
from alict_core.runner import build_cases
from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import review_page

POSITIVE = {"kind": "label", "labels": ["positive"], "tolerance": None}


@pytest.fixture(autouse=True)
def fresh_engines():
    dispose_engines()
    yield
    dispose_engines()


def _cases(n: int = 4):
    return build_cases([{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film {i}",
                         "test_type": "MFT", "expected": POSITIVE} for i in range(n)])


def _rows(path: Path, table: str) -> list[tuple]:
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        conn.close()


WRITEBACK_BY = [  # (argv after `review writeback --task sentiment`, needles)
    (["--confirm", "--by", ""], ["--by (who confirms) must be 1–100 characters"]),
    (["--confirm", "--by", "   "], ["--by (who confirms) must be 1–100 characters"]),
    (["--confirm", "--by", "\t"], ["--by (who confirms) must be 1–100 characters"]),
    (["--confirm", "--by", "le\x00ad"], ["--by (who confirms)", "control characters"]),
    (["--confirm", "--by", "le\nad"], ["--by (who confirms)", "control characters"]),
    (["--confirm", "--by", "x" * 101], ["--by (who confirms) must be 1–100 characters"]),
    (["--by", "lead"], ["--by names who confirms", "with --confirm"]),
    (["--revoke", "--by", "lead"], ["--by names who confirms", "with --confirm"]),
]


@pytest.mark.parametrize("argv,needles", WRITEBACK_BY,
                         ids=["empty", "blank", "tab", "nul", "newline", "long", "without-confirm", "with-revoke"])
def test_writeback_by_bad_names_are_refused(cli, tmp_path, argv, needles):
    path = tmp_path / "review.sqlite"
    outcome = cli("review", "writeback", "--task", "sentiment", "--db", f"sqlite:///{path}", *argv)
    assert_clean_error(outcome, 2, *needles)
    assert not path.exists(), "refused before the database is opened"


def test_writeback_by_a_good_name_is_recorded_stripped(cli, tmp_path):
    path = tmp_path / "review.sqlite"
    ReviewStore(f"sqlite:///{path}")  # a write-back rule needs an existing database
    dispose_engines()
    outcome = cli("review", "writeback", "--task", "sentiment", "--db", f"sqlite:///{path}", "--confirm",
                  "--by", "  lead  ")
    assert outcome.code == 0, outcome.err
    dispose_engines()
    assert [row[3] for row in _rows(path, "writeback_rules")] == ["lead"]


REVIEWERS = [  # (--reviewers, needles)
    (" ", ["a reviewer name in --reviewers must be 1–100 characters"]),
    ("ann,,bob", ["a reviewer name in --reviewers must be 1–100 characters"]),
    ("ann, ", ["a reviewer name in --reviewers must be 1–100 characters"]),
    ("ann,b\tob", ["a reviewer name in --reviewers", "control characters"]),
    ("ann," + "x" * 101, ["a reviewer name in --reviewers must be 1–100 characters"]),
    ("ann,ann", ["--reviewers name reviewer 'ann' twice"]),
    ("ann, ann ", ["--reviewers name reviewer 'ann' twice"]),
    ("a,A", ["--reviewers name reviewer 'a' twice (also as 'A'", "differ only in case"]),
    ("Ann,bob,ANN ", ["--reviewers name reviewer 'Ann' twice (also as 'ANN'"]),
    ("straße,STRASSE", ["--reviewers name reviewer 'straße' twice (also as 'STRASSE'"]),
]


@pytest.mark.parametrize("reviewers,needles", REVIEWERS,
                         ids=["blank", "empty-entry", "trailing-blank", "tab", "long", "twice", "twice-padded",
                              "case-variant", "case-variant-padded", "casefold"])
def test_review_sample_bad_reviewers_are_refused(cli, tmp_path, reviewers, needles):
    path = tmp_path / "review.sqlite"
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in _cases()))
    outcome = cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(cases), "--size", "4",
                  "--sets", "1", "--k", "2", "--reviewers", reviewers, "--db", f"sqlite:///{path}")
    assert_clean_error(outcome, 2, *needles)
    assert not path.exists(), "refused before the database is opened"


LIBRARY = [  # (call(store), needle)
    (lambda store: store.confirm_writeback("sentiment", 2, ""), "the name of who confirms must be 1–100"),
    (lambda store: store.confirm_writeback("sentiment", 2, " \t "), "the name of who confirms must be 1–100"),
    (lambda store: store.confirm_writeback("sentiment", 2, "a" * 101), "the name of who confirms must be 1–100"),
    (lambda store: store.confirm_writeback("sentiment", 2, "a\x1bb"), "control characters"),
    (lambda store: create_review_task(store, "t2", "sentiment", _cases(), SamplingPlan(size=4, n_sets=2, k=1),
                                      ["ann", "ann"]), "name reviewer 'ann' twice"),
    (lambda store: create_review_task(store, "t2", "sentiment", _cases(), SamplingPlan(size=4, n_sets=2, k=1),
                                      ["ann", " "]), "must be 1–100 characters"),
    (lambda store: store.claim_set(store.task("t").id, "  "), "reviewer name must be 1–100"),
    (lambda store: store.judge(store.items(store.task("t").id)[0].id, "", relevance=4, label_score=4),
     "reviewer name must be 1–100"),
]


@pytest.mark.parametrize("call,needle", LIBRARY, ids=["confirm-empty", "confirm-blank", "confirm-long",
                                                      "confirm-escape", "sample-twice", "sample-blank", "claim-blank",
                                                      "judge-empty"])
def test_library_refuses_bad_reviewer_names_and_records_nothing(tmp_path, call, needle):
    path = tmp_path / "review.sqlite"
    store = ReviewStore(f"sqlite:///{path}")
    create_review_task(store, "t", "sentiment", _cases(), SamplingPlan(size=4, n_sets=1, k=1))
    before = {table: _rows(path, table) for table in ("writeback_rules", "review_tasks", "reviewers", "judgements")}
    with pytest.raises(ReviewError, match=needle):
        call(store)
    dispose_engines()
    assert {table: _rows(path, table) for table in before} == before


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("reviewer,recorded", [(" ", None), ("lead", "lead")], ids=["no-name", "named"])
def test_the_review_page_confirms_only_with_a_name(tmp_path, monkeypatch, reviewer, recorded):
    """The page's write-back confirmation records the name typed in "Your name": without one it cannot confirm."""

    path = tmp_path / "review.sqlite"
    store = ReviewStore(f"sqlite:///{path}")
    task, _ = create_review_task(store, "t", "sentiment", _cases(), SamplingPlan(size=4, n_sets=1, k=1))
    store.judge(store.items(task.id)[0].id, "ann", relevance=4, label_score=4)
    dispose_engines()
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    at = review_page("t", reviewer)
    at.checkbox(key="review_writeback_sure_sentiment").check()  # in the confirmation form: sent with its button
    button = at.button(key="review_writeback_confirm_sentiment")
    assert not at.exception, [e.value for e in at.exception]
    assert button.disabled == (recorded is None)
    if recorded is not None:
        button.click().run()
        assert not at.exception, [e.value for e in at.exception]
    dispose_engines()
    assert [row[3] for row in _rows(path, "writeback_rules")] == ([recorded] if recorded else [])


@pytest.mark.usefixtures("fake_backends")
def test_the_review_page_does_not_confirm_without_the_tick(tmp_path, monkeypatch):
    """Pressing "Confirm write-back" with the box unticked says so and records no rule."""
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "review.sqlite"
    store = ReviewStore(f"sqlite:///{path}")
    task, _ = create_review_task(store, "t", "sentiment", _cases(), SamplingPlan(size=4, n_sets=1, k=1))
    store.judge(store.items(task.id)[0].id, "ann", relevance=4, label_score=4)
    dispose_engines()
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["review"] = "t"
    at.query_params["reviewer"] = "lead"
    at.run()
    at.switch_page("pages/review.py").run()
    at.button(key="review_writeback_confirm_sentiment").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Tick the box" in w.value for w in at.warning), [w.value for w in at.warning]
    at.run()  # a rerun from elsewhere (the sidebar's probe resolving) keeps the message: it was wiped under load
    assert any("Tick the box" in w.value for w in at.warning), [w.value for w in at.warning]
    dispose_engines()
    assert _rows(path, "writeback_rules") == []
    at.checkbox(key="review_writeback_sure_sentiment").check()
    at.button(key="review_writeback_confirm_sentiment").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Tick the box" in w.value for w in at.warning), [w.value for w in at.warning]
    dispose_engines()
    assert [row[3] for row in _rows(path, "writeback_rules")] == ["lead"]


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("reviewer", ["a\x07b", "ann\u202e"], ids=["bell", "right-to-left-override"])
def test_the_review_page_refuses_a_name_with_control_characters_before_any_click(tmp_path, monkeypatch, reviewer):

    path = tmp_path / "review.sqlite"
    store = ReviewStore(f"sqlite:///{path}")
    create_review_task(store, "t", "sentiment", _cases(), SamplingPlan(size=4, n_sets=1, k=1))
    dispose_engines()
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    at = review_page("t", reviewer)
    assert not at.exception, [e.value for e in at.exception]
    assert any("your name" in e.value and "control characters" in e.value for e in at.error), \
        [e.value for e in at.error]
    assert "review_claim" not in [b.key for b in at.button], "no button that would create the reviewer"
    dispose_engines()
    assert _rows(path, "reviewers") == []
