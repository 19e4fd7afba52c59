"""Hostile pass 7 table (notes: attack_pass7.md): pass 6's leftovers (a review database another session holds
locked; DNS rebinding against the endpoint allow-list) and the findings of pass 7.
"""

from __future__ import annotations

import csv
import os
import sqlite3
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("fresh_engines")]

PG_URL = os.environ.get("ALICT_TEST_REVIEW_PG_URL")  # scripts/with_postgres.sh starts a throw-away server
needs_postgres = pytest.mark.skipif(not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)")


# Leftover 1: a review database another session holds locked made `review import` (and the page) wait forever ---

def _judged_form(cli, tmp_path: Path, url: str, saved_run: Path) -> Path:
    """A review task 't' in ``url`` and its export with every row judged by 'ann'."""
    assert cli("review", "sample", "--db", url, "--name", "t", "--task", "sentiment", "--cases", str(saved_run),
               "--reviewers", "ann", "--k", "1").code == 0
    form = tmp_path / "t.csv"
    assert cli("review", "export", "t", "--db", url, "--out", str(form)).code == 0
    with form.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row.update(reviewer="ann", relevance="5", label_score="4")
    with form.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return form


def test_a_sqlite_review_database_held_locked_is_one_message_not_a_long_wait(cli, tmp_path, saved_run, monkeypatch):
    """Was: `review import` beside a program holding the SQLite database locked (BEGIN EXCLUSIVE) waited its 30 s
    busy timeout eight times over per statement (retrying): minutes, then "cannot be used (database is locked); if
    it is another application's database …". Now one wait, then one message naming the lock."""
    from alict_core.review import store

    db = tmp_path / "review.sqlite"
    url = f"sqlite:///{db}"
    form = _judged_form(cli, tmp_path, url, saved_run)
    store.dispose_engines()
    monkeypatch.setattr(store, "LOCK_TIMEOUT_S", 1, raising=False)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        outcome = cli("review", "import", str(form), "--db", url)
    finally:
        holder.rollback()
        holder.close()
    assert_clean_error(outcome, 2, "another session holds a lock on it", "database is locked", "nothing of it saved")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM judgements").fetchone() == (0,)


@needs_postgres
def test_a_postgres_table_held_locked_is_one_message_not_a_hang(cli, tmp_path, saved_run, monkeypatch):
    """Was: `review import` (and `review stats`, the Review page) waited without end while another session held
    `LOCK TABLE judgements` (no lock_timeout). Now each connection sets lock_timeout (LOCK_TIMEOUT_S)."""
    import sqlalchemy as sa

    from alict_core.review import store

    engine = sa.create_engine(str(PG_URL))
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA public CASCADE"))
        conn.execute(sa.text("CREATE SCHEMA public"))
    form = _judged_form(cli, tmp_path, str(PG_URL), saved_run)
    store.dispose_engines()
    monkeypatch.setattr(store, "LOCK_TIMEOUT_S", 1, raising=False)
    holder = engine.connect()
    holder.execute(sa.text("LOCK TABLE judgements"))
    try:
        imported = cli("review", "import", str(form), "--db", str(PG_URL))
        stats = cli("review", "stats", "t", "--db", str(PG_URL))
    finally:
        holder.rollback()
        holder.close()
    for outcome in (imported, stats):
        assert_clean_error(outcome, 2, "another session holds a lock on it", "lock timeout")
    with engine.connect() as conn:
        assert conn.scalar(sa.text("SELECT count(*) FROM judgements")) == 0
    engine.dispose()
