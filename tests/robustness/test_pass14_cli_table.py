"""Hostile pass 14 (CLI) table (notes: attack_pass14_cli.md): one row per finding fixed, each failing on the code
before its fix."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.timeout(240)]


# C: a killed expand resumed with another --shard-size took the finished parts of the old size as the new shards ---

def test_c_a_resume_with_another_shard_size_computes_every_shard_again(tmp_path):
    """Was: 10 seeds cut in shards of 1, parts 0-2 finished, then resumed with --shard-size 2: parts 0-2 were taken
    as the new shards 0-2 (seeds 0-5), only shards 3-4 ran, and the artefact (cached after) held 7 of 10 seeds."""
    from alict_core.executors.shards import pending_shards, seal_part

    parts = tmp_path / "k.shards"
    rows = [{"id": i} for i in range(10)]
    first = pending_shards(parts, rows, 1, "seeds", dict)
    assert len(first) == 10
    for task in first[:3]:  # three shards finished before the kill
        (parts / f"part-{task['index']:05d}.jsonl").write_text(f'{{"seed": {task["index"]}}}\\n')
        seal_part(parts / f"part-{task['index']:05d}.jsonl")
    assert len(pending_shards(parts, rows, 1, "seeds", dict)) == 7  # same size: the finished parts are kept
    resumed = pending_shards(parts, rows, 2, "seeds", dict)
    assert [t["index"] for t in resumed] == [0, 1, 2, 3, 4]  # another size: every shard runs again


# B: an output replaced a SQLite database's write-ahead log (committed judgements not yet checkpointed were lost) ---

@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_b_an_output_never_replaces_a_databases_journal(tmp_path, suffix):
    import sqlite3

    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import check_output_file

    database = tmp_path / "wal.sqlite"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE t (x)")
    journal = tmp_path / f"wal.sqlite{suffix}"
    journal.write_bytes(b"committed pages")
    with pytest.raises(AlictError, match="write-ahead log"):
        check_output_file(journal, "--summary-json")
    check_output_file(tmp_path / "other.json-wal", "--summary-json")  # no database beside it: an ordinary name


# D: a SQLite URL with a query string: readers looked for a file named "...sqlite?timeout=5" ---------------------

def test_d_a_sqlite_url_with_options_names_its_file():
    from alict_core.review.store import sqlite_path

    assert str(sqlite_path("sqlite:////data/rv.sqlite?timeout=5")) == "/data/rv.sqlite"
    assert str(sqlite_path("sqlite:///file:/data/rv.sqlite?mode=rw&uri=true")) == "/data/rv.sqlite"
    assert str(sqlite_path("sqlite:///rel.sqlite")) == "rel.sqlite"
    assert sqlite_path("sqlite://") is None and sqlite_path("postgresql://u@h/db") is None


# A: judgements that point at no reviewer or item (or tasks of no known task) were dropped by the joins -----------

@pytest.mark.parametrize("damage", ["UPDATE judgements SET reviewer_id = 999 WHERE id = (SELECT MIN(id) FROM "
                                    "judgements)",
                                    "UPDATE judgements SET item_id = 999 WHERE id = (SELECT MIN(id) FROM judgements)",
                                    "UPDATE review_tasks SET suite_task = 'bogus'"])
def test_a_orphaned_judgements_are_one_message(cli, tmp_path, damage):
    import sqlite3

    from tests.robustness.conftest import assert_clean_error
    from tests.robustness.test_pass13_cli_table import judged_sqlite

    url, _ = judged_sqlite(cli, tmp_path)
    with sqlite3.connect(tmp_path / "review.sqlite") as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(damage)
    assert_clean_error(cli("review", "stats", "t", "--db", url), 2, "damaged")
