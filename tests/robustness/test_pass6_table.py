"""Hostile pass 6 table (notes: attack_pass6.md): pass 5's leftovers (run-store folders that hold another run on
the pages, `compare` of run ids, artefact files that are not regular files, the short-split refusal of
`harden train` before any model loads) and the findings of pass 6.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from alict_core.common.errors import AlictError
from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("fresh_engines")]

COPY = "f" * 16  # a hand copy of a store run under another name: its meta.json still names the original's id


@pytest.fixture
def store(run_store, saved_run) -> Path:
    """A private run store holding ``saved_run`` under its own id and a hand copy of it named ``COPY``."""
    shutil.copytree(saved_run, run_store / COPY)
    return run_store


def _original(store: Path) -> str:
    return next(p.name for p in store.iterdir() if p.name != COPY)


# Leftover 1: the pages (and `report` without a run) listed a copied store folder as a run of its own ------------


def test_the_run_store_lists_no_folder_that_holds_another_run(store):
    """Was: the copy listed as a second run (`report` with no run reported the newest folder, a copy too)."""
    from alict_core.runner.store import copied_from, list_runs

    assert [p.name for p in list_runs()] == [_original(store)]
    assert copied_from(store / COPY) == _original(store)


def test_the_pages_run_list_skips_a_copied_folder_and_names_it(store):
    """Was: Failures / Report / Compare / Harden / Review listed the copy as a run (the original's data under an
    id it does not hold), while `report <copy>` was refused."""
    from alict_app import runs

    runs._run_info_at.clear()
    assert [r["key"] for r in runs.list_runs()] == [_original(store)]
    assert runs.copied_runs() == {COPY: _original(store)}
    with pytest.raises(AlictError, match=f"holds run '{_original(store)}' \\(its meta.json\\), not this id"):
        runs.resolve(COPY)
    assert not runs.is_done(COPY)
    assert runs.is_done(_original(store))


@pytest.mark.usefixtures("fake_backends")
def test_a_page_linked_to_a_copied_folder_says_it_is_not_listed(store):
    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parents[2] / "app.py")
    at = AppTest.from_file(app, default_timeout=180)
    at.query_params["run"] = COPY
    at.query_params["task"] = "sentiment"
    at.run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(str(c.value) for c in at.caption)
    assert f"{COPY} holds run {_original(store)}" in captions, captions
    assert all(COPY not in str(box.options) for box in at.selectbox)


# Leftover 2: `compare` took run folders only ---------------------------------------------------------------------


def test_compare_takes_run_ids_of_the_store(cli, store):
    """Was: "run directory <id> not found" for every id (`report`, `explain --results`, `harden --run` take ids)."""
    run_id = _original(store)
    outcome = cli("compare", run_id, run_id)
    assert outcome.code == 0, outcome.err
    assert "A = vader (A), B = vader (B)" in outcome.out


@pytest.mark.parametrize("side", ["a", "b"])
@pytest.mark.parametrize("given,needle", [("0123456789abcdef", "not found: give a run folder"),
                                          (COPY, "(its meta.json), not this id")], ids=["unknown-id", "copied"])
def test_compare_of_a_bad_run_id_is_one_message(cli, store, tmp_path, side, given, needle):
    run_id = _original(store)
    argv = [given, run_id] if side == "a" else [run_id, given]
    outcome = cli("compare", *argv, "--json", str(tmp_path / "c.json"))
    assert_clean_error(outcome, 2, repr(given), needle)
    assert not (tmp_path / "c.json").exists()


# Leftover 3: an artefact's manifest (or file) that is a pipe was "not built" / "missing" -----------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("pipe", ["manifest.json", "metrics.json"])
def test_build_report_names_an_artefact_file_that_is_not_a_regular_file(cli, tmp_path, pipe):
    """Was: a FIFO manifest.json reported as "no model artefact is built", a FIFO metrics.json as "missing"."""
    folder = tmp_path / "models" / "micro" / "parser"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"target": "parser", "profile": "micro",
                                                      "files": {"metrics.json": "0" * 64}}))
    (folder / "metrics.json").write_text("{}")
    (folder / pipe).unlink()
    os.mkfifo(folder / pipe)
    outcome = cli("build", "--report", "--out", str(tmp_path / "models"))
    assert outcome.code == 0, outcome.err
    assert f"BROKEN: artefact {folder}: {pipe} is not a regular file" in outcome.out, outcome.out
    assert "alict build parser --profile micro" in outcome.out
    assert outcome.cpu_seconds < 10


# Leftover 4: `harden train` refused a short test split only after the model loaded -------------------------------


def _short_export(folder: Path) -> Path:
    from tests.robustness.test_pass5_table import _export

    counts = {"train": {"sentiment-lc01": 15}, "validation": {"sentiment-lc01": 2}, "test": {"sentiment-lc01": 2}}
    return _export(folder, counts=counts)


def test_harden_train_refuses_a_short_split_before_loading_the_model(cli, tmp_path, monkeypatch):
    """Was: the refusal came after the model was loaded and the leak check ran (~20 s)."""
    import alict_core.models.registry as registry

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before the split size was checked")

    monkeypatch.setattr(registry, "get_model", no_model)
    outcome = cli("harden", "train", "--export", str(_short_export(tmp_path / "ex")), "--model", "minilm-sst")
    assert_clean_error(outcome, 2, "the test split of sentiment-lc01 holds 2 cases, under the minimum of 10")


def test_harden_train_hf_refuses_a_short_split_before_the_leak_check(cli, tmp_path, monkeypatch):
    """Was: torch and transformers imported, the corpus read and the leak check run before the refusal."""
    import alict_core.training.retrain as training

    def no_leak_check(*args, **kwargs):
        raise AssertionError("the leak check ran before the split size was checked")

    monkeypatch.setattr(training, "leak_check", no_leak_check)
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    outcome = cli("harden", "train", "--export", str(_short_export(tmp_path / "ex")), "--model", "hf", "--hf-dir",
                  str(folder), "--task", "sentiment")
    assert_clean_error(outcome, 2, "the test split of sentiment-lc01 holds 2 cases")


# Pass 6 findings: the review store against a real PostgreSQL server (and its SQLite neighbours) ----------------

PG_URL = os.environ.get("ALICT_TEST_REVIEW_PG_URL")  # scripts/with_postgres.sh starts a throw-away server
needs_postgres = pytest.mark.skipif(not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)")


@pytest.fixture
def empty_postgres():
    """The scratch PostgreSQL database, emptied (its public schema dropped and made again)."""
    import sqlalchemy as sa

    engine = sa.create_engine(str(PG_URL))
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA public CASCADE"))
        conn.execute(sa.text("CREATE SCHEMA public"))
    engine.dispose()
    yield str(PG_URL)
    from alict_core.review.store import dispose_engines

    dispose_engines()


@needs_postgres
def test_a_first_use_that_meets_a_migration_half_way_is_not_called_foreign(empty_postgres, monkeypatch):
    """Was (4 `review sample` at once on an empty database): "is not an ALiCT review database (it records schema
    step 1 as applied but lacks its table 'reviewers')": the tables were read before another writer's migration
    committed, its recorded steps after. Here that writer commits right after the tables are listed."""
    import sqlalchemy as sa

    from alict_core.review import store

    engine = sa.create_engine(empty_postgres)
    store.SchemaMigration.__table__.create(engine)  # the other writer's first step: its bookkeeping table
    real_inspect = store.inspect

    class MigratedRightAfter:
        def __init__(self, target):
            self.inspector = real_inspect(target)

        def get_table_names(self):
            names = self.inspector.get_table_names()
            store.migrate(engine)  # the other writer commits its steps now
            return names

        def __getattr__(self, name):
            return getattr(self.inspector, name)

    monkeypatch.setattr(store, "inspect", MigratedRightAfter)
    schema = store.existing_tables(empty_postgres, engine)
    monkeypatch.setattr(store, "inspect", real_inspect)
    assert store.check_schema(schema, empty_postgres) is True
    engine.dispose()


@needs_postgres
def test_concurrent_first_uses_of_an_empty_postgres_database_all_succeed(empty_postgres):
    """Four first uses at once: every one migrates or finds the schema; none fails (an advisory lock serialises
    the migrations)."""
    from concurrent.futures import ThreadPoolExecutor

    import sqlalchemy as sa

    from alict_core.review import store

    engines = [sa.create_engine(empty_postgres) for _ in range(4)]
    try:
        with ThreadPoolExecutor(4) as pool:
            versions = list(pool.map(store.migrate, engines))
    finally:
        for engine in engines:
            engine.dispose()
    assert versions == [store.SCHEMA_VERSION] * 4


def _foreign_migrations_sqlite(path: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, name TEXT, applied_at TEXT)")
    conn.execute("INSERT INTO schema_migrations VALUES ('20240101120000', 'create_users', '2024-01-01')")
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


@pytest.mark.parametrize("command", ["stats", "sample"])
def test_another_tools_schema_migrations_table_is_refused_untouched(cli, tmp_path, saved_run, command):
    """Was: exit 3 `TypeError: '>' not supported between 'str' and 'int'` (its text versions compared with
    ALiCT's step numbers), and `review sample` first created every ALiCT table in that database."""
    url = _foreign_migrations_sqlite(tmp_path / "other.sqlite")
    before = (tmp_path / "other.sqlite").read_bytes()
    argv = ["review", "stats", "t", "--db", url] if command == "stats" else [
        "review", "sample", "--db", url, "--name", "t", "--task", "sentiment", "--cases", str(saved_run)]
    assert_clean_error(cli(*argv), 2, "is not an ALiCT review database",
                       "its schema_migrations records version '20240101120000'")
    assert (tmp_path / "other.sqlite").read_bytes() == before


@needs_postgres
def test_another_tools_schema_migrations_table_is_refused_on_postgres(cli, empty_postgres):
    import sqlalchemy as sa

    engine = sa.create_engine(empty_postgres)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, name TEXT, "
                             "applied_at TIMESTAMPTZ)"))
        conn.execute(sa.text("INSERT INTO schema_migrations VALUES ('9', 'x', now())"))
    engine.dispose()
    assert_clean_error(cli("review", "stats", "t", "--db", empty_postgres), 2,
                       "its schema_migrations records version '9'")


def test_a_database_server_that_never_answers_is_one_message_not_a_hang(tmp_path):
    """Was: `review stats --db postgresql+psycopg://…` of a port that accepts connections but never answers hung
    (killed after 100 s); a connect timeout (10 s unless the URL sets connect_timeout) ends it."""
    import socket
    import subprocess
    import sys

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # the kernel completes the handshake; nothing ever answers
    port = listener.getsockname()[1]
    try:
        done = subprocess.run([sys.executable, "-m", "alict_core", "review", "stats", "t", "--db",
                               f"postgresql+psycopg://u@127.0.0.1:{port}/x"], capture_output=True, text=True,
                              timeout=90, cwd=Path(__file__).resolve().parents[2],
                              env={**os.environ, "ALICT_CACHE_DIR": str(tmp_path)})
    finally:
        listener.close()
    assert done.returncode == 2, done.stderr[-500:]
    assert "Traceback" not in done.stderr
    assert "cannot open the review database" in done.stderr and "timeout" in done.stderr


def test_a_task_of_the_same_name_created_meanwhile_is_said_as_such(tmp_path, monkeypatch):
    """Was (3 `review sample --name dup` at once on PostgreSQL): "database … cannot be used (duplicate key value
    violates unique constraint "review_tasks_name_key"); if it is another application's database …"."""
    import alict_core.review.store as store_module
    from alict_core.review.store import ReviewError, ReviewStore

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    store, other = ReviewStore(url), ReviewStore(url)
    real_lock = store_module._lock_task_names
    made: list[bool] = []

    def lock_after_another_writer_created_it(s):  # between the first check and the locked one
        if not made:
            made.append(True)
            other.create_task("dup", "sentiment", {}, [])
        real_lock(s)

    monkeypatch.setattr(store_module, "_lock_task_names", lock_after_another_writer_created_it)
    with pytest.raises(ReviewError, match="a review task named 'dup' already exists"):
        store.create_task("dup", "sentiment", {}, [], assignments=[(0, "ann")])
    assert [task.name for task in store.tasks()] == ["dup"]


# Pass 6 findings: the Run page's "Add your own model" form (a hostile browser sends any field) -----------------


def _add_user_model(tmp_path, monkeypatch, label: str, path: str | None = None):
    from streamlit.testing.v1 import AppTest

    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "preds.csv").write_text("text,label\na good film,positive\n")
    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", str(root))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.run()
    at.switch_page("pages/run.py").run()
    at.selectbox(key="um_kind").set_value("static").run()
    at.session_state["um_path"] = path if path is not None else str(root / "preds.csv")
    at.session_state["um_label"] = label
    [button for button in at.button if button.label == "Add model"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
@pytest.mark.parametrize("label,path,needle", [
    ("vader", None, "'vader' is the name of a registered model"),
    ("a\x00<b>x</b>", None, "holds control characters"),
], ids=["registered-name", "control-characters"])
def test_a_user_model_the_run_page_cannot_tell_apart_or_show_is_refused(tmp_path, monkeypatch, label, path, needle):
    """Was: a stored-predictions model added under the display name 'vader' (beside the registered vader: two
    models of one name in a run's results), or under a name with a NUL."""
    at = _add_user_model(tmp_path, monkeypatch, label, path)
    errors = [re.sub(r"\\(.)", r"\1", str(e.value)) for e in at.error]  # the text shown (values drawn escaped)
    assert any(needle in e for e in errors), errors
    assert not at.session_state["user_models"] if "user_models" in at.session_state else True
    assert all(len(e) < 500 for e in errors), [len(e) for e in errors]


@pytest.mark.parametrize("command", ["report", "explain"])
def test_a_run_id_too_long_for_the_file_system_is_said_to_be_no_valid_name(cli, tmp_path, store, command):
    """Was: "cannot access 'xxx…(300)': File name too long" (the OS error of the folder check, not what is wrong)."""
    given = "x" * 300
    argv = ["report", given, "--out", str(tmp_path / "r.html")] if command == "report" else [
        "explain", "--results", given, "--lc", "1"]
    assert_clean_error(cli(*argv), 2, "is not a valid name", "at most 128 characters")
