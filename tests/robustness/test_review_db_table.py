"""The review database: a database of another application is refused before anything is written to it, and
read-only commands and page views never write (not even to our own database, nor create a missing one)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Callable

import pytest

from alict_core.review import ReviewStore, SamplingPlan, create_review_task
from alict_core.review.store import OWN_TABLES, dispose_engines
from alict_core.runner import build_cases
from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import review_page

POSITIVE = {"kind": "label", "labels": ["positive"], "tolerance": None}


@pytest.fixture(autouse=True)
def fresh_engines():
    dispose_engines()
    yield
    dispose_engines()


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _ours_plus(path: Path, *statements: str) -> None:
    ReviewStore(f"sqlite:///{path}")
    dispose_engines()
    _sql(path, *statements)


def _ours_without_migrations(path: Path) -> None:
    ReviewStore(f"sqlite:///{path}")
    dispose_engines()
    _sql(path, "DROP TABLE schema_migrations")


FOREIGN: dict[str, tuple[Callable[[Path], None], str]] = {  # how to make the file, what the message says
    "another-application": (lambda p: _sql(p, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)",
                                           "INSERT INTO users (email) VALUES ('a@example.org')"),
                            "not an ALiCT review database"),
    "review-tasks-of-another-shape": (lambda p: _sql(p, "CREATE TABLE review_tasks (id INTEGER PRIMARY KEY, "
                                                        "title TEXT)"), "not an ALiCT review database"),
    "rails-schema-migrations": (lambda p: _sql(p, "CREATE TABLE schema_migrations (version VARCHAR PRIMARY KEY)"),
                                "not an ALiCT review database"),
    "ours-plus-a-foreign-table": (lambda p: _ours_plus(p, "CREATE TABLE users (id INTEGER)"),
                                  "not an ALiCT review database"),
    "ours-without-schema-migrations": (_ours_without_migrations, "not an ALiCT review database"),
    "a-view-only": (lambda p: _sql(p, "CREATE TABLE t (x)", "CREATE VIEW v AS SELECT x FROM t"),
                    "not an ALiCT review database"),
    # ours plus an object added by hand: a trigger runs on our writes, a view or index is not ours to migrate
    "ours-plus-a-trigger": (lambda p: _ours_plus(p, "CREATE TRIGGER audit AFTER INSERT ON judgements BEGIN "
                                                    "DELETE FROM reviewers; END"), "the trigger 'audit' on table "
                                                                                   "'judgements'"),
    "ours-plus-a-trigger-on-a-new-task": (lambda p: _ours_plus(p, "CREATE TRIGGER t1 BEFORE INSERT ON review_tasks "
                                                                  "BEGIN SELECT 1; END"), "the trigger 't1'"),
    "ours-plus-an-index": (lambda p: _ours_plus(p, "CREATE INDEX mine ON judgements (note)"),
                           "the index 'mine' on table 'judgements'"),
    "ours-plus-a-view": (lambda p: _ours_plus(p, "CREATE VIEW everyone AS SELECT name FROM reviewers"),
                         "the view 'everyone'"),
    "ours-plus-a-column": (lambda p: _ours_plus(p, "ALTER TABLE reviewers ADD COLUMN email TEXT NOT NULL DEFAULT ''"),
                           "it holds tables reviewers"),
    "ours-plus-two-objects": (lambda p: _ours_plus(p, "CREATE VIEW v1 AS SELECT 1", "CREATE VIEW v2 AS SELECT 2"),
                              "(and 1 more)"),
    "ours-lacking-a-table-of-an-applied-step": (lambda p: _ours_plus(p, "DROP TABLE writeback_rules"),
                                                "records schema step 2 as applied but lacks its table "
                                                "'writeback_rules'"),
    "ours-lacking-judgements": (lambda p: _ours_plus(p, "DROP TABLE judgements"),
                                "records schema step 1 as applied but lacks its table 'judgements'"),
    "not-sqlite": (lambda p: p.write_text("id,name\n1,ann\n"), "not a SQLite database"),
    "a-folder": (lambda p: p.mkdir(), "is not a file"),
}


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _commands(tmp_path: Path, url: str) -> dict[str, list[str]]:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"case_id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "kind": "seed",
                                 "seed_id": "s1", "text": "a fine film", "test_type": "MFT",
                                 "expected": POSITIVE}) + "\n")
    judgements = tmp_path / "judgements.csv"
    judgements.write_text("task,case_id,text_hash,reviewer,relevance,label_score\n")
    return {
        "stats": ["review", "stats", "--db", url],
        "stats-json": ["review", "stats", "t", "--json", "--db", url],
        "export": ["review", "export", "t", "--out", str(tmp_path / "out" / "t.csv"), "--db", url],
        "import": ["review", "import", str(judgements), "--db", url],
        "sample": ["review", "sample", "--name", "n", "--task", "sentiment", "--cases", str(cases), "--size", "1",
                   "--db", url],
        "writeback": ["review", "writeback", "--task", "sentiment", "--db", url],
        "writeback-confirm": ["review", "writeback", "--task", "sentiment", "--confirm", "--by", "lead", "--db", url],
    }


COMMANDS = ["stats", "stats-json", "export", "import", "sample", "writeback", "writeback-confirm"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", list(FOREIGN))
def test_a_foreign_database_is_refused_and_left_untouched(cli, tmp_path, kind, command):
    db_dir = tmp_path / "db"
    db_dir.mkdir()
    path = db_dir / "other.sqlite"
    make, needle = FOREIGN[kind]
    make(path)
    before = _snapshot(db_dir)
    url = f"sqlite:///{path}"
    outcome = cli(*_commands(tmp_path, url)[command])
    assert_clean_error(outcome, 2, needle, str(path))
    assert "nothing was written" in outcome.err or kind in ("not-sqlite", "a-folder")
    dispose_engines()
    assert_untouched(db_dir, before)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra", [[], ["ANALYZE"], ["VACUUM"],
                                   ["DROP TABLE writeback_rules", "DELETE FROM schema_migrations WHERE version = 2"]],
                         ids=["as-made", "analyzed", "vacuumed", "an-earlier-step"])
def test_our_own_database_is_accepted(cli, tmp_path, extra):
    """SQLite's own objects (``sqlite_stat1`` of ANALYZE, autoindexes) are not foreign."""
    path = tmp_path / "review.sqlite"
    _ours_plus(path, *extra)
    outcome = cli(*_commands(tmp_path, f"sqlite:///{path}")["sample"])
    assert outcome.code == 0, outcome.err


def assert_untouched(folder: Path, before: dict[str, str]) -> None:
    """Not one byte of the database written; no side file, except the empty WAL (and its index) that SQLite
    itself adds for any reader of a database already in WAL mode."""
    after = _snapshot(folder)
    assert {name: after.get(name) for name in before} == before
    for name in set(after) - set(before):
        database = folder / name.rsplit("-", 1)[0]
        in_wal_mode = database.is_file() and database.read_bytes()[18:19] == b"\x02"  # header: write version 2
        assert name.endswith(("-shm", "-wal")) and in_wal_mode, name
        assert not name.endswith("-wal") or (folder / name).stat().st_size == 0, name


def _task_db(path: Path) -> str:
    url = f"sqlite:///{path}"
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film {i}",
              "test_type": "MFT", "expected": POSITIVE} for i in range(4)]
    store = ReviewStore(url)
    task, _ = create_review_task(store, "t", "sentiment", build_cases(seeds), SamplingPlan(n_sets=2, k=1, size=4))
    assert store.claim_set(task.id, "ann") == 0  # set 1 is still open
    store.judge(store.items(task.id)[0].id, "ann", relevance=4, label_score=4)
    dispose_engines()  # checkpointed: the whole database is in the main file
    return url


@pytest.mark.parametrize("command", ["stats", "stats-json", "export"])
def test_read_only_commands_never_write_to_our_database(cli, tmp_path, command):
    db_dir = tmp_path / "db"
    db_dir.mkdir()
    url = _task_db(db_dir / "review.sqlite")
    before = (db_dir / "review.sqlite").read_bytes()
    outcome = cli(*_commands(tmp_path, url)[command])
    assert outcome.code == 0, outcome.err
    dispose_engines()
    assert (db_dir / "review.sqlite").read_bytes() == before
    wal = db_dir / "review.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0


@pytest.mark.parametrize("command,needle", [("stats", "no review tasks yet"), ("stats-json", "no review task named"),
                                            ("export", "no review task named")])
@pytest.mark.parametrize("state", ["missing", "empty-file"])
def test_read_only_commands_never_create_a_database(cli, tmp_path, command, needle, state):
    path = tmp_path / "db" / "review.sqlite"
    if state == "empty-file":
        path.parent.mkdir()
        path.write_bytes(b"")
    outcome = cli(*_commands(tmp_path, f"sqlite:///{path}")[command])
    # a missing file is named as such (pass 14, M5: it read as an empty store); an empty one reads as one
    assert_clean_error(outcome, 2, "no such SQLite file" if state == "missing" else needle)
    assert (path.read_bytes() == b"") if state == "empty-file" else not path.parent.exists()


def test_writing_commands_migrate_an_empty_database(cli, tmp_path):
    path = tmp_path / "review.sqlite"
    path.write_bytes(b"")  # an empty file is an empty SQLite database: ours to set up
    outcome = cli(*_commands(tmp_path, f"sqlite:///{path}")["sample"])
    assert outcome.code == 0, outcome.err
    dispose_engines()
    conn = sqlite3.connect(path)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == set(OWN_TABLES)


def test_a_run_refuses_a_foreign_review_database_without_writing(cli, tmp_path, monkeypatch):
    """Runs read the review database (rejected cases): a foreign one is refused, never migrated."""
    path = tmp_path / "other.sqlite"
    FOREIGN["another-application"][0](path)
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a fine film",
                                 "test_type": "MFT", "expected": POSITIVE}) + "\n")
    before = _snapshot(tmp_path)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet",
                  "--keep-flagged", "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "not an ALiCT review database", limit_s=60)
    dispose_engines()
    assert_untouched(tmp_path, before)
    assert not (tmp_path / "run").exists()


def _counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in OWN_TABLES}
    finally:
        conn.close()


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("reviewer", ["zed", "ann"])
def test_opening_a_shared_review_link_writes_nothing(tmp_path, monkeypatch, reviewer):
    """``?review=t&reviewer=zed``: no reviewer created, no set claimed, until a click asks for one."""

    path = tmp_path / "review.sqlite"
    url = _task_db(path)
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    before = _counts(path)
    at = review_page("t", reviewer)
    assert not at.exception, [e.value for e in at.exception]
    dispose_engines()
    assert _counts(path) == before
    if reviewer == "zed":
        at.button(key="review_claim").click().run()  # the click claims a set
        dispose_engines()
        assert _counts(path)["assignments"] == before["assignments"] + 1
        assert _counts(path)["reviewers"] == before["reviewers"] + 1


@pytest.mark.usefixtures("fake_backends")
def test_the_review_page_over_a_foreign_database_is_one_message(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "other.sqlite"
    FOREIGN["another-application"][0](path)
    before = _snapshot(tmp_path)
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("not an ALiCT review database" in e.value for e in at.error), [e.value for e in at.error]
    dispose_engines()
    assert_untouched(tmp_path, before)
