"""The review store: reviewers, review tasks, their sampled cases, assignments and judgements.

SQLAlchemy 2 over a SQLite file in WAL mode by default (``<cache dir>/review/review.sqlite``), or any URL
in ``$ALICT_REVIEW_DB_URL`` (e.g. ``postgresql+psycopg://user@host/alict``). The schema is versioned:
``schema_migrations`` records every applied step of ``MIGRATIONS``, and opening a store applies the
missing ones. Every judgement is committed on its own (an upsert keyed by item × reviewer), so a killed
app loses nothing that was saved and two sessions never duplicate a judgement.

The schema is checked before anything is written: migrations run only on an empty database or one holding
this schema; a database of another application is refused with one message and left untouched. A read-only
store (``ReviewStore(read_only=True)``: ``review stats``/``export``, page views, the write-back into runs)
never writes: SQLite is opened with ``mode=ro``, nothing is migrated, and a missing or empty database reads
as one with no review tasks (it is not created). The one exception is SQLite's own crash recovery: a database a
killed writer left mid-write (a hot rollback journal, which a ``mode=ro`` open cannot read) is rolled back to its
last commit by a short open with write access, as SQLite does on any such open, and a warning says so.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar
from urllib.parse import quote, unquote, urlparse

from sqlalchemy import (
    JSON,
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import QueuePool, StaticPool

from alict_core.common.errors import AlictError
from alict_core.common.manifest import names_folder
from alict_core.common.textsafe import control_char, invisible_char, lookalike_key, looks_alike, mixed_scripts
from alict_core.tasks import TASK_NAMES, TASKS

logger = logging.getLogger(__name__)

DB_URL_ENV = "ALICT_REVIEW_DB_URL"
CONNECT_TIMEOUT_S = 10  # seconds a database server may take to answer a connection (the URL's connect_timeout wins)
LOCK_TIMEOUT_S = 30  # seconds a statement waits for a lock another session holds (PostgreSQL lock_timeout, SQLite
# busy_timeout); then one message, not an endless wait
SCORE_RANGE = (1, 5)
T = TypeVar("T")


class ReviewError(AlictError):
    """A review request is invalid (unknown task or reviewer, score out of range, bad import row ...)."""


class DatabaseLockedError(ReviewError):
    """Another session held a lock on the review database for longer than a statement may wait."""


class HotJournalError(ReviewError):
    """A SQLite review database a killed writer left mid-write that this process may not roll back (no write
    access to the file or its folder)."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


DAMAGED_TEXT = ("the review database holds a damaged row: a {kind} value where a text is kept; it was changed "
                "outside ALiCT: restore a copy or use another review database ($ALICT_REVIEW_DB_URL or --db)")


class _CheckedString(TypeDecorator[str]):
    """A text column read back as text only: SQLite keeps any value in any column (a BLOB written into a
    reviewer's name broke `review stats` and `import` with a TypeError, and was exported as "b'ABC'")."""

    impl = String
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        raise ReviewError(DAMAGED_TEXT.format(kind=type(value).__name__))


class _CheckedText(_CheckedString):
    impl = Text
    cache_ok = True


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON}


class SchemaMigration(Base):
    __tablename__ = "schema_migrations"
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(_CheckedString(200))
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Reviewer(Base):
    __tablename__ = "reviewers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(_CheckedString(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class ReviewTask(Base):
    """One sampling plan over one suite (the cases of one NLP task)."""

    __tablename__ = "review_tasks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(_CheckedString(200), unique=True)
    suite_task: Mapped[str] = mapped_column(_CheckedString(50), index=True)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class ReviewItem(Base):
    """One sampled case (a seed or one expansion of it), in one set of a task."""

    __tablename__ = "review_items"
    __table_args__ = (UniqueConstraint("task_id", "case_id", "text_hash"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id", ondelete="CASCADE"), index=True)
    set_no: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    case_id: Mapped[str] = mapped_column(_CheckedString(200), index=True)
    text_hash: Mapped[str] = mapped_column(_CheckedString(32))
    lc_id: Mapped[str] = mapped_column(_CheckedString(100), index=True)
    kind: Mapped[str] = mapped_column(_CheckedString(20))  # "seed" | "expansion"
    seed_id: Mapped[str] = mapped_column(_CheckedString(200))
    text: Mapped[str] = mapped_column(_CheckedText)
    seed_text: Mapped[str | None] = mapped_column(_CheckedText, nullable=True)
    expected: Mapped[dict[str, Any]] = mapped_column(JSON)
    lc_title: Mapped[str] = mapped_column(_CheckedText, default="")
    lc_description: Mapped[str] = mapped_column(_CheckedText, default="")


class Assignment(Base):
    """A reviewer's claim on one set of a task (each set gets ``plan["k"]`` reviewers)."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("task_id", "set_no", "reviewer_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("review_tasks.id", ondelete="CASCADE"), index=True)
    set_no: Mapped[int] = mapped_column(Integer)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("reviewers.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Judgement(Base):
    """One reviewer's 1–5 scores of one item: LC relevance, sentiment/hatefulness, (expansions) label holds."""

    __tablename__ = "judgements"
    __table_args__ = (UniqueConstraint("item_id", "reviewer_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("review_items.id", ondelete="CASCADE"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("reviewers.id"), index=True)
    relevance: Mapped[int] = mapped_column(Integer)
    label_score: Mapped[int] = mapped_column(Integer)
    validity: Mapped[int | None] = mapped_column(Integer, nullable=True)
    note: Mapped[str] = mapped_column(_CheckedText, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class WritebackRule(Base):
    """A suite task's confirmed write-back: from then on runs leave out cases at least ``min_agreeing`` reviewers
    rejected (see ``alict_core.review.writeback``). Absent: judgements are shown but exclude nothing."""

    __tablename__ = "writeback_rules"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite_task: Mapped[str] = mapped_column(_CheckedString(50), unique=True)
    min_agreeing: Mapped[int] = mapped_column(Integer)
    confirmed_by: Mapped[str] = mapped_column(_CheckedString(100), default="")
    confirmed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


# The tables each step creates: a database recording a step as applied must hold them.
STEP_TABLES: dict[int, tuple[str, ...]] = {
    1: tuple(model.__tablename__ for model in (Reviewer, ReviewTask, ReviewItem, Assignment, Judgement)),
    2: (WritebackRule.__tablename__,),
}


def _create_step(conn: Connection, step: int) -> None:
    Base.metadata.create_all(conn, tables=[Base.metadata.tables[name] for name in STEP_TABLES[step]])


def _migration_1(conn: Connection) -> None:
    _create_step(conn, 1)


def _migration_2(conn: Connection) -> None:
    _create_step(conn, 2)


# Append new steps (never edit applied ones): (version, name, function applying it on a connection).
MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "reviewers, tasks, items, assignments, judgements", _migration_1),
    (2, "write-back rules (confirmation, minimum agreeing reviewers)", _migration_2),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def default_url() -> str:
    """``$ALICT_REVIEW_DB_URL``, else a SQLite file under the cache directory."""
    from alict_core.common.config import cache_dir, env_setting

    configured = env_setting(DB_URL_ENV, "a database URL")  # set but empty: refused, not the default database
    if configured is not None:
        return configured

    return f"sqlite:///{cache_dir() / 'review' / 'review.sqlite'}"


SECRET_OPTION = re.compile(r"pass|secret|token|key", re.IGNORECASE)  # libpq's password=, sslpassword=, passfile=


def safe_url(url: str) -> str:
    """The URL with any password masked (for messages), at most 200 characters: the user's password and every option
    that may hold a secret (``?password=``, which libpq takes, was printed in clear)."""
    try:
        parsed = make_url(url)
        secret = {key: "***" for key in parsed.query if SECRET_OPTION.search(key)}
        shown = parsed.update_query_dict(secret).render_as_string(hide_password=True).replace("%2A%2A%2A", "***")
    except (ArgumentError, ValueError):  # ValueError: a port that is no number
        masked = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)  # a password masked here too
        masked = re.sub(r"([?&][^=&]*(?:pass|secret|token|key)[^=&]*=)[^&]*", r"\1***", masked, flags=re.IGNORECASE)
        return repr(masked[:100])
    return shown if len(shown) <= 200 else f"{shown[:200]}… ({len(shown):,} characters)"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases or in-memory SQLite)."""
    if not url.startswith("sqlite"):
        return None
    try:  # the URL's own reading: "?timeout=5" is a driver option, not part of the file name (pass 14, D)
        parsed = make_url(url)
    except ArgumentError:
        return None
    path = parsed.database or ""
    if _uri_mode(parsed) and path.startswith("file:"):
        path = unquote(urlparse(path).path)  # sqlite3's URI form: file:/path?mode=rw
    return Path(path) if path and path != ":memory:" else None


def _uri_mode(parsed: URL) -> bool:
    """Whether the driver opens the URL's file as a SQLite URI, read as SQLAlchemy itself reads ``uri=`` (``yes``,
    ``on``, `` true`` and a repeated option all count: only "true"/"1" did, and ``?uri=yes`` then took a smuggled
    ``mode=memory`` past the checks). An unreadable value counts as URI mode (``check_sqlite_url`` refuses it)."""
    if "uri" not in parsed.query:
        return False
    try:
        return bool(SQLiteDialect_pysqlite().create_connect_args(parsed)[1].get("uri", False))
    except (TypeError, ValueError):
        return True


def _make_engine(url: str, read_only: bool = False) -> Engine:
    path = sqlite_path(url)
    if path is not None:
        if read_only:  # mode=ro: SQLite itself refuses any write (and never creates the file)
            uri = f"file:{quote(str(path.resolve()))}?mode=ro"
            engine = create_engine("sqlite://", poolclass=QueuePool, creator=lambda: sqlite3.connect(
                uri, uri=True, check_same_thread=False, timeout=LOCK_TIMEOUT_S))  # a file: pooled like one
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": LOCK_TIMEOUT_S})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            if not read_only:
                _enter_wal(cursor)  # readers never block the writer; a kill keeps commits
                cursor.execute("PRAGMA synchronous=NORMAL")  # durable across process kills in WAL mode
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(LOCK_TIMEOUT_S * 1000)}")
            cursor.close()

        _name_lock_waits(engine, url, f"in {LOCK_TIMEOUT_S} s")
        return engine
    if url.startswith("sqlite"):
        raise ReviewError(f"review database {url!r}: use a SQLite file URL (sqlite:///path/review.sqlite)")
    parsed = make_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() in ("postgresql", "mysql", "mariadb") and "connect_timeout" not in parsed.query:
        connect_args["connect_timeout"] = CONNECT_TIMEOUT_S  # a server that never answers: a message, not a hang
    engine = create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    if engine.dialect.name == "postgresql":  # a session holding a lock (``LOCK TABLE judgements`` left open)
        # made every command and page wait for it without end
        own_timeout = "lock_timeout" in str(parsed.query.get("options", ""))
        if not own_timeout:
            @event.listens_for(engine, "connect")
            def _lock_timeout(dbapi_conn: Any, _record: Any) -> None:
                cursor = dbapi_conn.cursor()
                cursor.execute(f"SET lock_timeout = {int(LOCK_TIMEOUT_S * 1000)}")
                cursor.close()
                dbapi_conn.commit()  # a SET in a transaction that is rolled back would be undone

        _name_lock_waits(engine, url, "within the URL's lock_timeout" if own_timeout else f"in {LOCK_TIMEOUT_S} s")
    return engine


def _enter_wal(cursor: sqlite3.Cursor) -> None:
    """Switch the file to WAL (kept in the file), waiting for other sessions like any statement does. SQLite
    refuses the switch at once, without its busy handler, while another connection switches or migrates: two of
    four first uses of a new file at once failed "database is locked" (CI). Retried for ``LOCK_TIMEOUT_S``."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _is_lock_wait(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def _is_lock_wait(exc: BaseException | None) -> bool:
    """A statement ended by a lock another session holds: PostgreSQL's lock_not_available (lock_timeout), SQLite's
    busy/locked database (busy_timeout, or at once where waiting would deadlock)."""
    if getattr(exc, "sqlstate", None) == "55P03":
        return True
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _lock_message(url: str, waited: str, exc: BaseException) -> str:
    return (f"review database {safe_url(url)}: another session holds a lock on it and did not release it {waited} "
            f"({str(exc).splitlines()[0][:160]}); the transaction was rolled back (nothing of it saved); try again "
            "when that session has finished")


def _name_lock_waits(engine: Engine, url: str, waited: str) -> None:
    """A statement a lock ended is one DatabaseLockedError naming the database, on every command and page."""
    @event.listens_for(engine, "handle_error")
    def _lock_wait_ended(context: Any) -> None:
        if _is_lock_wait(context.original_exception):
            raise DatabaseLockedError(_lock_message(url, waited, context.original_exception))


OWN_TABLES: dict[str, set[str]] = {table.name: {column.name for column in table.columns}
                                   for table in Base.metadata.sorted_tables}
# (kind, name) of every other schema object this project creates: the indexes of its tables. SQLite's own
# objects (``sqlite_autoindex_*`` of unique constraints, ``sqlite_sequence`` ...) are not counted.
OWN_OBJECTS: set[tuple[str, str]] = {("index", str(index.name)) for table in Base.metadata.sorted_tables
                                     for index in table.indexes}


@dataclass(frozen=True)
class Schema:
    """What a database holds: table → column names, and its other objects as (kind, name, table)."""

    tables: dict[str, set[str]]
    objects: frozenset[tuple[str, str, str]] = frozenset()
    applied: frozenset[int] = frozenset()  # the steps ``schema_migrations`` records
    odd_steps: tuple[str, ...] = ()  # versions it records that are no step number (another tool's migrations)


def _applied(rows: Iterable[Any]) -> tuple[frozenset[int], tuple[str, ...]]:
    """(step numbers, other recorded versions shown as text) of ``schema_migrations`` rows."""
    values = [row[0] for row in rows]
    steps = frozenset(v for v in values if isinstance(v, int) and not isinstance(v, bool))
    return steps, tuple(sorted(repr(v) for v in values if not isinstance(v, int) or isinstance(v, bool)))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (none when there is no such table)."""
    return {row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))}


def _read_sqlite_schema(path: Path) -> Schema:
    """The schema of a SQLite file, read in one snapshot through a ``mode=ro`` open (which never writes)."""
    conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=LOCK_TIMEOUT_S)
    try:
        conn.execute("BEGIN")  # one snapshot: a writer migrating meanwhile (a new database's first use)
        steps, odd = _applied(conn.execute("SELECT version FROM schema_migrations")) \
            if "version" in _columns(conn, "schema_migrations") else (frozenset(), ())
        rows = conn.execute("SELECT type, name, tbl_name FROM sqlite_master").fetchall()
        names = [name for kind, name, _ in rows if kind == "table"]
        tables = {name: _columns(conn, name) for name in names}
        conn.rollback()
        return Schema(tables, frozenset((kind, name, table) for kind, name, table in rows if kind != "table"),
                      steps, odd)
    finally:
        conn.close()


def _unreadable(url: str, path: Path, exc: sqlite3.DatabaseError) -> ReviewError:
    """Why a SQLite file could not be read, as the one message naming what the user can change."""
    if _is_lock_wait(exc):  # a database in rollback-journal mode that another program holds locked
        return DatabaseLockedError(_lock_message(url, f"in {LOCK_TIMEOUT_S} s", exc))
    if "disk i/o error" in str(exc).lower() or "disk is full" in str(exc).lower():  # not the file's fault
        return ReviewError(f"review database {safe_url(url)} could not be read ({exc}): the disk is full, a "
                           "file-size limit was hit or the disk fails; free space and run the command "
                           "again (the database was opened read-only and is unchanged)")
    if "unable to open" in str(exc).lower() and not os.access(path.parent, os.W_OK):  # a healthy database
        # in WAL mode needs its -shm file beside it, even to be read: the folder, not the file, is at fault
        return ReviewError(f"review database {safe_url(url)} cannot be opened: its folder {str(path.parent)!r} "
                           "is read-only (SQLite keeps a shared-memory file beside the database); make the "
                           "folder writable or copy the database elsewhere")
    if "malformed" in str(exc).lower():  # a damaged database (own or not), never "another application's"
        return ReviewError(f"review database {safe_url(url)} is damaged ({exc}); restore it from a backup, or "
                           "give --db (or $ALICT_REVIEW_DB_URL) another database")
    return ReviewError(f"review database {safe_url(url)} is not a SQLite database ({exc}); "
                       "give --db (or $ALICT_REVIEW_DB_URL) a new file or an ALiCT review database")


def _hot_journal(exc: BaseException, path: Path) -> bool:
    """Whether a ``mode=ro`` open failed on a hot rollback journal: a writer was killed inside a write transaction
    (SQLite checked that no live writer holds it); only an open with write access can roll it back."""
    code = getattr(exc, "sqlite_errorcode", 0) or 0
    return code == sqlite3.SQLITE_READONLY_ROLLBACK or (
        code & 0xFF == sqlite3.SQLITE_READONLY and Path(f"{path}-journal").exists())


def _recover_hot_journal(url: str, path: Path) -> None:
    """Roll back the unfinished write a killed writer left (SQLite's own crash recovery, done by any open with write
    access: the database returns to its last commit, nothing committed is lost), and say so. HotJournalError when
    this process may not write the file or its folder."""
    journal = f"{path}-journal"
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=rw", uri=True, timeout=LOCK_TIMEOUT_S)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the first read rolls the journal back
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if _is_lock_wait(exc):
            raise DatabaseLockedError(_lock_message(url, f"in {LOCK_TIMEOUT_S} s", exc)) from None
        raise HotJournalError(
            f"review database {safe_url(url)} holds an unfinished write of a process that was killed (its rollback "
            f"journal {journal!r} is beside it) and cannot be read until that write is rolled back, which needs "
            f"write access to the file and its folder {str(path.parent)!r} ({exc}); make them writable and run the "
            "command again (any ALiCT command that opens the database rolls it back; nothing committed is "
            "lost)") from None
    logger.warning("review database %s: rolled back the unfinished write of a process that was killed (its "
                   "rollback journal %r; SQLite's crash recovery: nothing committed was lost)", safe_url(url), journal)


def existing_tables(url: str, engine: Engine | None = None) -> Schema:
    """The tables (with columns) and other objects (indexes, views, triggers) of the database at ``url``, read
    without writing (a missing SQLite file: none). A SQLite file a killed writer left mid-write (a hot journal,
    which a ``mode=ro`` open cannot read) is first rolled back to its last commit, as SQLite itself does on any
    open with write access; it was reported as "not a SQLite database" and blocked every run (pass 39)."""
    path = sqlite_path(url)
    if path is not None:
        if not path.exists():
            return Schema({})
        if not path.is_file():
            raise ReviewError(f"review database {safe_url(url)} is not a file")
        try:
            return _read_sqlite_schema(path)
        except sqlite3.DatabaseError as exc:
            if not _hot_journal(exc, path):
                raise _unreadable(url, path, exc) from None
        _recover_hot_journal(url, path)
        try:
            return _read_sqlite_schema(path)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(url, path, exc) from None
    engine = engine if engine is not None else _make_engine(url)
    applied, odd = _applied_steps(engine)  # read before the tables: a step recorded then has its tables committed (a
    inspector = inspect(engine)       # writer migrating meanwhile adds tables, never a step without its tables)
    tables = {name: {column["name"] for column in inspector.get_columns(name)} for name in inspector.get_table_names()}
    objects = {("view", name, name) for name in inspector.get_view_names()}
    if engine.dialect.name in ("postgresql", "mysql", "mariadb"):
        from sqlalchemy import text

        with engine.connect() as connection:  # reads only; this project creates no trigger
            schema = "current_schema()" if engine.dialect.name == "postgresql" else "database()"
            objects |= {("trigger", str(name), str(table)) for name, table in connection.execute(text(
                "SELECT trigger_name, event_object_table FROM information_schema.triggers "
                f"WHERE event_object_schema = {schema}"))}
    return Schema(tables, frozenset(objects), applied, odd)


def _applied_steps(engine: Engine) -> tuple[frozenset[int], tuple[str, ...]]:
    """The steps ``schema_migrations`` records (none when it has no such table or column), read only."""
    from sqlalchemy import text

    inspector = inspect(engine)
    if not inspector.has_table("schema_migrations") or "version" not in {
            column["name"] for column in inspector.get_columns("schema_migrations")}:
        return frozenset(), ()
    with engine.connect() as connection:
        return _applied(connection.execute(text("SELECT version FROM schema_migrations")))


def check_schema(schema: Schema, url: str) -> bool:
    """True for this project's schema (or an earlier step of it), False for an empty database; ReviewError
    (naming the database and the first object that is not ours) for any other: another application's, or ours
    with a table, column, index, view or trigger added by hand. Nothing is written to it."""
    tables = {name: columns for name, columns in schema.tables.items() if not name.startswith("sqlite_")}
    objects = sorted((kind, name, table) for kind, name, table in schema.objects if not name.startswith("sqlite_"))
    if not tables and not objects:
        return False
    foreign = sorted(name for name in tables if name not in OWN_TABLES)
    unlike = sorted(name for name, columns in tables.items() if name in OWN_TABLES and OWN_TABLES[name] != columns)
    strange = [(kind, name, table) for kind, name, table in objects
               if (kind, name) not in OWN_OBJECTS or table not in OWN_TABLES]
    problem = None
    if foreign or unlike or "schema_migrations" not in tables:
        problem = f"it holds tables {', '.join((foreign or unlike or sorted(tables))[:5])}"
    elif strange:
        kind, name, table = strange[0]
        problem = f"it holds the {kind} {name!r}" + (f" on table {table!r}" if table != name else "") + \
            ", which ALiCT does not create" + (f" (and {len(strange) - 1} more)" if len(strange) > 1 else "")
    if not problem and schema.odd_steps:  # e.g. another framework's schema_migrations (text versions)
        problem = (f"its schema_migrations records version {schema.odd_steps[0]}, not a step number of ALiCT's "
                   "migrations")
    lacking = [(step, table) for step in sorted(schema.applied) for table in STEP_TABLES.get(step, ())
               if table not in tables]
    if not problem and lacking:  # a table dropped by hand: every use of it would fail half-way
        step, table = lacking[0]
        problem = f"it records schema step {step} as applied but lacks its table {table!r}"
    if problem:
        raise ReviewError(f"review database {safe_url(url)} is not an ALiCT review database ({problem}); nothing "
                          "was written to it; give --db (or $ALICT_REVIEW_DB_URL) a new file or an ALiCT review "
                          "database")
    return True


def _empty_engine() -> Engine:
    """An in-memory database with the schema and no rows: what a read of a missing or empty database sees."""
    engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    migrate(engine)
    return engine


MIGRATION_LOCK = 0x414C69435452  # PostgreSQL advisory lock key of the review schema's migrations ("ALiCTR")
REVIEWER_LOCK = MIGRATION_LOCK + 1  # ... and of the creation of reviewers
TASK_NAME_LOCK = MIGRATION_LOCK + 2  # ... and of the creation of review tasks


def _lock_reviewers(s: Session) -> None:
    """Serialise the creation of reviewers until ``s`` ends its transaction, across sessions and processes: 'ann'
    and 'ANN' used for the first time at the same moment both found no reviewer of their (case-folded) name and
    both were created (the unique constraint is on the exact name). PostgreSQL: a transaction advisory lock;
    SQLite: a write that matches nothing takes the database's write lock first (before any read, so a writer
    waiting for it reads what the other one committed)."""
    dialect = s.get_bind().dialect.name
    if dialect == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": REVIEWER_LOCK})
    else:
        s.execute(update(Reviewer).where(Reviewer.id < 0).values(name=Reviewer.name))


def _lock_task_names(s: Session) -> None:
    """Serialise the creation of review tasks until ``s`` ends its transaction: 't-1' and 'T1' created at the same
    moment both found no look-alike and both were stored (the unique constraint is on the exact name). As
    ``_lock_reviewers``: a PostgreSQL transaction advisory lock, SQLite's write lock taken before any read."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": TASK_NAME_LOCK})
    else:
        s.execute(update(ReviewTask).where(ReviewTask.id < 0).values(name=ReviewTask.name))


def _of_other_task(suite_task: Any, own: str | None) -> str:
    """' (a review task of <its task's title>)' when an existing task belongs to another suite task than ``own``:
    the name is refused while that task's menu lists no such task (pass 38)."""
    if own is None or suite_task == own or not isinstance(suite_task, str):
        return ""
    title = TASKS[suite_task].title if suite_task in TASKS else repr(suite_task[:40])
    return f" (a review task of {title})"


def _check_new_task_name(s: Session, name: str, suite_task: str | None = None) -> None:
    """ReviewError when a task of this name, or of a look-alike one, exists (said with its task when that is not
    ``suite_task``)."""
    taken = s.execute(select(ReviewTask.id, ReviewTask.suite_task).where(ReviewTask.name == name)).first()
    if taken is not None:
        raise ReviewError(f"a review task named {name!r} already exists{_of_other_task(taken[1], suite_task)}; "
                          "choose another name")
    # 'T1', 'ｔ1', 't‐1' beside 't1', 't-1'; 'rɑce' (a Latin alpha) beside 'race': a link could go to either
    alike = next(((other, task) for other, task in s.execute(select(ReviewTask.name, ReviewTask.suite_task))
                  if isinstance(other, str) and looks_alike(other, name)), None)
    if alike is not None:
        raise ReviewError(f"review task name {name!r} looks like the existing task {alike[0]!r}"
                          f"{_of_other_task(alike[1], suite_task)} (it differs only in case, character width, a dash "
                          "or space, or letters that look alike); choose another name")


def _refuse_look_alike_reviewer(s: Session, name: str) -> None:
    """ReviewError (the transaction rolled back) when a stored reviewer's name looks like ``name`` ('ɑnn' with a Latin
    alpha beside 'ann': two people no one can tell apart); call it under ``_lock_reviewers`` before creating one."""
    with damaged_rows("reviewers"):
        alike = next((r.name for r in s.scalars(select(Reviewer).order_by(Reviewer.id)) if looks_alike(r.name, name)),
                     None)
    if alike is not None:
        s.rollback()
        raise ReviewError(f"reviewer name {name!r} looks like the existing reviewer {alike!r}; use {alike!r} or a "
                          "name that reads apart")


def _lock_task(s: Session, task_id: int) -> None:
    """Serialise the claims of one task's sets until ``s`` ends its transaction: two reviewers claiming at the same
    instant both counted the set as open and both got it (a k = 1 set reviewed twice). PostgreSQL: the task's row
    locked (``FOR UPDATE``; later reads of the transaction see what the other committed); SQLite: a write that
    matches nothing takes the database's write lock before any read."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(ReviewTask.id).where(ReviewTask.id == task_id).with_for_update())
    else:
        s.execute(update(ReviewTask).where(ReviewTask.id < 0).values(name=ReviewTask.name))


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """Serialise migrations across processes: on PostgreSQL a session advisory lock (two first uses of an empty
    database raced to create the same tables); SQLite's migration is one ``BEGIN IMMEDIATE`` transaction."""
    if engine.dialect.name != "postgresql":
        yield
        return
    from sqlalchemy import text

    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()


def migrate(engine: Engine) -> int:
    """Apply the missing steps of ``MIGRATIONS``; return the schema version.

    SQLite: all of them in one ``BEGIN IMMEDIATE`` transaction (SQLite's DDL is transactional). Two first uses of a
    new file at once both found a table missing and one failed creating it ("table schema_migrations already
    exists"), and a reader meanwhile saw a step recorded without its tables; now the second waits for the first,
    and a reader sees no schema or all of it. PostgreSQL: each step in its own transaction, under an advisory lock."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            _apply_missing(conn)
            conn.commit()
        return schema_version(engine)
    with _migration_lock(engine):
        return _migrate(engine)


def _apply_missing(conn: Connection) -> None:
    """The missing steps and their ``schema_migrations`` rows, on one connection in one transaction."""
    SchemaMigration.__table__.create(conn, checkfirst=True)  # type: ignore[attr-defined]
    done = set(conn.scalars(select(SchemaMigration.version)))
    for version, name, apply in MIGRATIONS:
        if version not in done:
            apply(conn)
            conn.execute(SchemaMigration.__table__.insert().values(version=version, name=name, applied_at=_now()))  # type: ignore[attr-defined]


def _migrate(engine: Engine) -> int:
    SchemaMigration.__table__.create(engine, checkfirst=True)  # type: ignore[attr-defined]
    with engine.begin() as conn:
        done = set(conn.scalars(select(SchemaMigration.version)))
    for version, name, apply in MIGRATIONS:
        if version in done:
            continue
        try:
            with engine.begin() as conn:
                apply(conn)
                conn.execute(SchemaMigration.__table__.insert().values(version=version, name=name, applied_at=_now()))  # type: ignore[attr-defined]
        except IntegrityError:  # another process applied it first
            continue
    return schema_version(engine)


def schema_version(engine: Engine) -> int:
    """The applied schema version (read only); ReviewError when it is newer than this ALiCT's."""
    with engine.connect() as conn:
        current = conn.scalar(select(func.max(SchemaMigration.version))) or 0
    if current > SCHEMA_VERSION:
        raise ReviewError(f"review database schema version {current} is newer than this ALiCT's "
                          f"({SCHEMA_VERSION}); upgrade ALiCT")
    return int(current)


_ENGINES: dict[str, Engine] = {}
_LOCK = threading.Lock()
_MAX_ENGINES = 8


SQLITE_URL_OPTIONS = frozenset({"uri", "timeout"})  # the SQLite URL options whose meaning is kept
MAX_SQLITE_TIMEOUT_S = 3600  # a `?timeout=1e308` was taken: a lock was then waited on without end


def _check_sqlite_file(url: str) -> None:
    """Refuse a SQLite file name with a control character, a '..' out of a missing folder, or a leading '~'."""
    path = sqlite_path(url)
    bad = control_char(str(path)) if path is not None else None
    if bad is not None:  # '%00' decoded: a NUL in a file name was an internal error (os.path: embedded null byte)
        raise ReviewError(f"review database {safe_url(url)}: the file name holds the control character {bad}; give "
                          "a plain file name")
    missing = next((Path(*path.parts[:index]) for index, part in enumerate(path.parts)
                    if part == ".." and index and not Path(*path.parts[:index]).is_dir()), None) if path else None
    if missing is not None:  # 'new/../r.sqlite' created the folder 'new' (as --out refuses since pass 20)
        raise ReviewError(f"review database {safe_url(url)}: the path steps back ('..') out of {str(missing)!r}, "
                          "which is not an existing folder; give the path without it")
    if path is not None and path.parts and path.parts[0].startswith("~"):
        raise ReviewError(f"review database {safe_url(url)}: '~' is not expanded in a database URL; write the full "
                          "path (sqlite:////home/me/review.sqlite)")


def check_sqlite_url(url: str) -> None:
    """Refuse a SQLite URL whose file starts with ``~`` (never expanded in a URL: a folder named ``~`` was created in
    the working folder) or that carries an option the driver does not take (``?mode=ro`` printed SQLAlchemy's
    warning with its source line and wrote the database all the same: read-only is ``file:…?mode=ro&uri=true``)."""
    if "\x00" in unquote(url):  # libpq cut its settings at a NUL (port, sslmode dropped); SQLite: exit 3
        raise ReviewError(f"review database {safe_url(url)}: the URL holds a NUL character (%00); give it without")
    if not url.startswith("sqlite"):
        return
    try:
        parsed = make_url(url)
    except ArgumentError:
        return  # said by the engine's own check
    repeated = sorted(key for key, value in parsed.query.items() if isinstance(value, tuple))
    if repeated:  # `uri=x&uri=y` is a tuple the driver reads as true, `timeout=1&timeout=2` one it cannot read
        raise ReviewError(f"review database {safe_url(url)}: option(s) {', '.join(repeated)} given more than once")
    uri = parsed.query.get("uri")
    if uri is not None and str(uri).strip().lower() not in ("true", "false", "1", "0"):
        raise ReviewError(f"review database {safe_url(url)}: uri={str(uri)[:40]!r}; write uri=true or leave it out")
    database = parsed.database or ""
    if database and names_folder(database):  # 'review.sqlite/' (or '/.') made a file 'review.sqlite' without a word
        raise ReviewError(f"review database {safe_url(url)}: the file name ends with '/', '/.' or '/..'; give the "
                          "file itself")
    if _uri_mode(parsed) and database.startswith("file:"):
        inner = urlparse(database)  # options smuggled into the file URI (`a.sqlite%3Fmode%3Dmemory`): a task was
        if inner.query or inner.fragment or any(sign in unquote(inner.path) for sign in "?#"):  # saved in memory
            raise ReviewError(f"review database {safe_url(url)}: a file: URI with options of its own; give the "
                              "plain file (sqlite:////path/review.sqlite)")
    _check_sqlite_file(url)
    timeout = parsed.query.get("timeout")
    if timeout is not None:
        try:
            ok = 0 <= float(str(timeout)) <= MAX_SQLITE_TIMEOUT_S  # NaN compares False
        except ValueError:
            ok = False
        if not ok:
            raise ReviewError(f"review database {safe_url(url)}: timeout={str(timeout)[:40]!r} is not a number of "
                              f"seconds from 0 to {MAX_SQLITE_TIMEOUT_S}")
    unknown = sorted(set(parsed.query) - SQLITE_URL_OPTIONS)
    if unknown:
        raise ReviewError(f"review database {safe_url(url)}: unknown SQLite URL option(s) {', '.join(unknown)}; a "
                          "read-only database is opened by the read-only commands themselves")


def _open_failure(url: str, exc: BaseException) -> str:
    """Why a database URL could not be opened, in words (not the driver's, where they mislead)."""
    reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    if "://" not in url:  # a plain path, the obvious first try
        return "it is no database URL; a SQLite file is written sqlite:////absolute/path/review.sqlite"
    if isinstance(exc, ValueError) and "invalid literal for int()" in reason:  # '[::1:5' read as host:port
        return "its host or port cannot be read (an IPv6 host is written in brackets: [::1]:5432)"
    return reason


def engine_for(url: str | None = None, read_only: bool = False) -> Engine:
    """The engine of ``url`` (default ``default_url()``), schema-checked (and, unless ``read_only``, migrated)
    once per process (bounded cache). A read-only engine of a missing or empty database is an empty in-memory
    one, never cached (the database may be created later)."""
    url = url or default_url()
    check_sqlite_url(url)
    key = f"{'ro' if read_only else 'rw'}:{url}"
    with _LOCK:
        if key in _ENGINES:
            return _ENGINES[key]
        engine = None
        try:
            if sqlite_path(url) is None:
                engine = _make_engine(url)  # connects lazily: inspecting it writes nothing
            if not check_schema(existing_tables(url, engine), url) and read_only:
                if engine is not None:
                    engine.dispose()
                return _empty_engine()
            if engine is None:
                engine = _make_engine(url, read_only)
            if read_only:
                version = schema_version(engine)
                if version < SCHEMA_VERSION:
                    raise ReviewError(f"review database {safe_url(url)} has schema version {version}, older than "
                                      f"this ALiCT's ({SCHEMA_VERSION}); a writing command (`review sample`, "
                                      "`review import`) upgrades it")
            else:
                migrate(engine)
        except (ArgumentError, NoSuchModuleError, DBAPIError, ImportError, ValueError) as exc:
            # ValueError: a driver's refusal of the URL itself (UnicodeError of a host name too long for IDNA,
            # a port that is no number): the setting is at fault, not ALiCT
            if engine is not None:
                engine.dispose()
            path = sqlite_path(url)
            if path is not None and "unable to open" in str(exc) and not os.access(_nearest_folder(path), os.W_OK):
                raise ReviewError(f"cannot create the review database {safe_url(url)} (${DB_URL_ENV} or --db): its "
                                  f"folder {str(_nearest_folder(path))!r} is read-only; give a database in a "
                                  "writable folder") from None
            reason = _open_failure(url, exc)
            raise ReviewError(f"cannot open the review database {safe_url(url)} (${DB_URL_ENV} or --db): "
                              f"{reason}") from None
        except ReviewError:
            if engine is not None:
                engine.dispose()
            raise
        if len(_ENGINES) >= _MAX_ENGINES:
            _ENGINES.pop(next(iter(_ENGINES))).dispose()
        _ENGINES[key] = engine
        return engine


def _nearest_folder(path: Path) -> Path:
    """The nearest existing folder at or above ``path``'s folder."""
    folder = path.parent.absolute()
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def dispose_engines() -> None:
    """Close every cached engine (tests; switching databases)."""
    with _LOCK:
        for engine in _ENGINES.values():
            engine.dispose()
        _ENGINES.clear()


def retrying(fn: Callable[[], T], attempts: int = 8) -> T:
    """Run ``fn`` again when SQLite reports a busy database at once (two writers' transactions crossed, where
    waiting would deadlock). A lock that was waited for in full (``LOCK_TIMEOUT_S``) is not waited for again: eight
    more waits made `review import` beside a program holding the database locked a four-minute hang."""
    for attempt in range(attempts):
        started = time.monotonic()
        try:
            return fn()
        except (DatabaseLockedError, OperationalError) as exc:
            at_once = time.monotonic() - started < LOCK_TIMEOUT_S / 2
            if not (isinstance(exc, DatabaseLockedError) or _is_lock_wait(exc.orig)) or not at_once \
                    or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def check_score(name: str, value: Any, *, optional: bool = False, where: str = "") -> int | None:
    """A 1–5 score as int (None allowed when ``optional``); ReviewError naming the field otherwise."""
    if value is None or value == "":
        if optional:
            return None
        raise ReviewError(f"{where}{name} is required (an integer from 1 to 5)")
    if isinstance(value, (bool, float)):  # JSON true is not a score of 1; 4.0 (or 3.9999999999999999) is no
        raise ReviewError(f"{where}{name} must be an integer from 1 to 5, got {_shown(value)}")  # integer: CSV's
        # "4.0" was refused
    if isinstance(value, str) and (not value.strip().isascii() or "_" in value):  # int() reads full-width
        # and other digits, and "0_4" as 4
        raise ReviewError(f"{where}{name} must be an integer from 1 to 5, got {_shown(value)}")
    try:
        score = int(value)
        whole = score == float(value)  # float() of a 400-digit JSON integer overflows: a bad score, not a crash
    except (TypeError, ValueError, OverflowError):
        raise ReviewError(f"{where}{name} must be an integer from 1 to 5, got {str(value)[:40]!r}") from None
    if not whole or not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
        raise ReviewError(f"{where}{name} must be an integer from 1 to 5, got {_shown(value)}")
    return score


def _shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut to 40 characters (a 400-digit score was echoed in full)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


STORED_TASKS = TASK_NAMES
MAX_MIN_AGREEING = 100  # the largest confirmed "at least N agreeing reviewers" rule


@contextmanager
def damaged_rows(what: str) -> Iterator[None]:
    """A row the ORM cannot load (a JSON column that is not JSON, a text where a number is kept) is one message."""
    try:
        yield
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        raise ReviewError(f"the review database holds damaged {what} ({type(exc).__name__}: {str(exc)[:80]}); it was "
                          "changed outside ALiCT: restore a copy or use another review database "
                          "($ALICT_REVIEW_DB_URL or --db)") from None


def check_stored_judgement(j: Any, item: Any, task_name: str, suite: str) -> None:
    """A judgement as read back holds what :meth:`ReviewStore.judge` stores (scores 1–5 ints, validity only and
    always on an expansion, a known task and kind); a row changed outside ALiCT is refused, never counted."""
    where = f"the review database holds a damaged judgement (id {j.id} of task {task_name!r}): "
    try:
        if suite not in STORED_TASKS:
            raise ReviewError(f"its task is {suite!r}, not one of {', '.join(STORED_TASKS)}")
        if item.kind not in ("seed", "expansion") or not isinstance(item.expected, dict):
            raise ReviewError(f"its item's kind {item.kind!r} or expectation is not one ALiCT writes")
        for name, value in (("relevance", j.relevance), ("label score", j.label_score)):
            if isinstance(value, float):  # SQLite keeps 4.5 in an INTEGER column
                raise ReviewError(f"{name} must be an integer from 1 to 5, got {value!r}")
            check_score(name, value)
        if item.kind == "expansion":
            check_score("validity", j.validity)
        elif j.validity is not None:
            raise ReviewError(f"a seed has no validity score, got {j.validity!r}")
    except ReviewError as exc:
        raise ReviewError(f"{where}{exc}; it was changed outside ALiCT: restore a copy or use another review "
                          "database ($ALICT_REVIEW_DB_URL or --db)") from None


def check_name(name: str | None, what: str, longest: int) -> str:
    """A task or reviewer name, stripped and in Unicode's composed form (NFC: 'e' + a combining accent is stored
    as 'é'): 1 to ``longest`` printable characters (no NUL or line breaks)."""
    name = unicodedata.normalize("NFC", (name or "").strip())
    if not name or len(name) > longest:
        raise ReviewError(f"{what} must be 1–{longest} characters, got {name[:40]!r}")
    if not name.isprintable():
        raise ReviewError(f"{what} {name[:40]!r} holds control characters")
    invisible = invisible_char(name)
    if invisible:  # 'ann' + U+3164 (a Hangul filler) looks like 'ann' everywhere
        raise ReviewError(f"{what} {name[:40]!r} holds a character that draws as nothing ({invisible})")
    mixed = mixed_scripts(name)
    if mixed:  # 'аnn' with a Cyrillic 'а' looks like 'ann' in every menu, link and table
        raise ReviewError(f"{what} {name[:40]!r} mixes the {' and '.join(mixed)} scripts (letters that look alike); "
                          "write it in one script")
    return name


def reviewer_key(name: str) -> str:
    """The key under which two reviewer names are one reviewer: Unicode-normalised (NFKC) and case-folded, so
    'Amélie' typed on two keyboards (composed, or e + a combining accent), full-width 'ａｎｎ' and 'ANN', 'Straße'
    and 'STRASSE' are each one person (they were two reviewers: one set assigned twice to one visible name)."""
    return lookalike_key(name)  # 'ann‐b' (U+2010) is 'ann-b'


NOTE_CHARS = 2000  # the longest note kept
NOTE_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # control characters but tab and line breaks


def check_note(note: Any, where: str = "") -> str:
    """A reviewer's note: at most ``NOTE_CHARS`` characters, no NUL or other control character but tab and line
    breaks (a NUL was stored by SQLite and refused by PostgreSQL, blamed on the database; a long note was cut
    silently on the page where an import refused it)."""
    text = "" if note is None else str(note)
    if len(text) > NOTE_CHARS:
        raise ReviewError(f"{where}note longer than {NOTE_CHARS} characters ({len(text)}); shorten it")
    found = NOTE_CONTROLS.search(text)
    if found:
        raise ReviewError(f"{where}note holds a control character ({found.group()!r} at character "
                          f"{found.start() + 1}); remove it")
    return text


def check_reviewers(names: Iterable[str], what: str = "reviewer names") -> list[str]:
    """Reviewer names, each checked by :func:`check_name`, none blank and none twice, also not in another case (a
    duplicate would claim two places of one set, or be dropped without a word)."""
    checked: dict[str, str] = {}  # case-folded name → name as given; ordered, with set-speed lookups
    for name in names:
        name = check_name(name, f"a reviewer name in {what}", 100)
        key = reviewer_key(name)  # 'ann' and 'Ann' read as one person on a form and in a spreadsheet
        if key in checked:
            if checked[key] == name:
                raise ReviewError(f"{what} name reviewer {name!r} twice; name each reviewer once")
            raise ReviewError(f"{what} name reviewer {checked[key]!r} twice (also as {name!r}: names that differ "
                              "only in case are one reviewer); name each reviewer once")
        alike = next((other for other in checked.values() if looks_alike(other, name)), None)
        if alike is not None:  # 'ann' and 'ɑnn' (a Latin alpha): two reviewers no one can tell apart
            raise ReviewError(f"{what}: reviewer {name!r} looks like reviewer {alike!r}; give names that read apart")
        checked[key] = name
    return list(checked.values())


def check_task_name(name: str) -> str:
    """A review task's name, composed (NFC) as every lookup of it is; ReviewError when it is no name."""
    checked = check_name(name, "review task name", 200)
    if name != name.strip():
        raise ReviewError(f"review task name {name!r} has leading or trailing spaces")
    return checked


class ReviewStore:
    """Operations on one review database; thread-safe (one short session per call)."""

    def __init__(self, url: str | None = None, read_only: bool = False) -> None:
        self.url = url or default_url()
        self.read_only = read_only
        self.engine = engine_for(self.url, read_only)

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # reviewers -----------------------------------------------------------------------------------------
    @staticmethod
    def _named(s: Session, name: str) -> Reviewer | None:
        """The reviewer of that name or of the same name in another case (names that differ only in case are one
        reviewer, as ``check_reviewers`` says: 'ANN' was stored beside 'ann', one person counted twice)."""
        with damaged_rows("reviewers"):  # a date or name changed outside ALiCT is one message, not a ValueError
            found = s.scalar(select(Reviewer).where(Reviewer.name == name))
            if found is None:
                key = reviewer_key(name)
                found = next((r for r in s.scalars(select(Reviewer).order_by(Reviewer.id))
                              if reviewer_key(r.name) == key), None)
        return found

    def find_reviewer(self, name: str) -> Reviewer | None:
        """The reviewer of that name (in any case), or None (never creates one: reads stay reads)."""
        with self.session() as s:
            return self._named(s, (name or "").strip())

    def reviewer(self, name: str) -> Reviewer:
        """The reviewer of that name, created on first use (names only; no passwords)."""
        name = check_name(name, "reviewer name", 100)
        if self.read_only:
            found = self.find_reviewer(name)
            if found is None:
                raise ReviewError(f"no reviewer named {name!r}")
            return found

        def get_or_create() -> Reviewer:
            with self.session() as s:
                found = self._named(s, name)  # the usual case: no lock taken
                if found is not None:
                    return found
                s.rollback()
                _lock_reviewers(s)  # then look again under the lock, which the commit releases
                found = self._named(s, name)
                if found is not None:
                    s.commit()
                    return found
                _refuse_look_alike_reviewer(s, name)
                try:
                    s.add(Reviewer(name=name))
                    s.commit()
                except IntegrityError:
                    s.rollback()
                found = self._named(s, name)
                if found is None:
                    raise AssertionError(f"reviewer {name!r} neither found nor created")
                return found

        return retrying(get_or_create)

    def _reviewer_in(self, s: Session, name: str) -> Reviewer:
        """The reviewer ``name``, created in ``s``'s transaction (under ``_lock_reviewers``) when there is none."""
        found = self._named(s, name)
        if found is None:
            _refuse_look_alike_reviewer(s, name)
            found = Reviewer(name=name)
            s.add(found)
            s.flush()
        return found

    # tasks ---------------------------------------------------------------------------------------------
    def tasks(self, suite_task: str | None = None) -> list[ReviewTask]:
        with self.session() as s, damaged_rows("review tasks"):
            query = select(ReviewTask).order_by(ReviewTask.id)
            if suite_task:
                query = query.where(ReviewTask.suite_task == suite_task)
            return list(s.scalars(query))

    def task(self, name: str) -> ReviewTask:
        name = unicodedata.normalize("NFC", name)  # 'e' + a combining accent names the task stored as 'é'
        with self.session() as s, damaged_rows("review tasks"):
            found = s.scalar(select(ReviewTask).where(ReviewTask.name == name))
        if found is None:
            known = ", ".join(t.name for t in self.tasks()) or "none yet (run `review sample`)"
            raise ReviewError(f"no review task named {name!r}; review tasks: {known}")
        return found

    def create_task(self, name: str, suite_task: str, plan: dict[str, Any], items: Sequence[dict[str, Any]],
                    assignments: Iterable[tuple[int, str]] = ()) -> ReviewTask:
        """Store a sampled task with its items (dicts of ``ReviewItem`` fields) and (set, reviewer) assignments."""
        name = check_task_name(name)
        assignments = list(assignments)
        for _, reviewer in assignments:
            check_name(reviewer, "reviewer name", 100)
        with self.session() as s:
            _check_new_task_name(s, name, suite_task)  # at once, before the locks
        with self.session() as s:
            _lock_task_names(s)  # the check and the inserts in one transaction that no other creator interleaves
            _lock_reviewers(s)  # new reviewers are created in it too: a refused task leaves none behind
            _check_new_task_name(s, name, suite_task)
            reviewers = {r: self._reviewer_in(s, r).id for r in dict.fromkeys(r for _, r in assignments)}
            task = ReviewTask(name=name, suite_task=suite_task, plan=dict(plan))
            s.add(task)
            try:
                s.flush()
            except IntegrityError:  # a writer that does not take the lock (an older version) stored it meanwhile
                raise ReviewError(f"a review task named {name!r} already exists; choose another name") from None
            s.add_all(ReviewItem(task_id=task.id, **item) for item in items)
            s.add_all(Assignment(task_id=task.id, set_no=set_no, reviewer_id=reviewers[r]) for set_no, r in assignments)
            s.commit()
            return task

    def items(self, task_id: int, set_nos: Iterable[int] | None = None) -> list[ReviewItem]:
        with self.session() as s, damaged_rows("review items"):
            query = select(ReviewItem).where(ReviewItem.task_id == task_id)
            if set_nos is not None:
                query = query.where(ReviewItem.set_no.in_(list(set_nos)))
            return list(s.scalars(query.order_by(ReviewItem.set_no, ReviewItem.position)))

    def count_items(self, task_id: int) -> int:
        """How many cases the task sampled (judged or not)."""
        with self.session() as s:
            return int(s.scalar(select(func.count()).select_from(ReviewItem).where(ReviewItem.task_id == task_id))
                       or 0)

    # assignments ---------------------------------------------------------------------------------------
    def assigned_sets(self, task_id: int, reviewer: str) -> list[int]:
        found = self.find_reviewer(reviewer)
        if found is None:
            return []
        rid = found.id
        with self.session() as s:
            return sorted(s.scalars(select(Assignment.set_no).where(Assignment.task_id == task_id,
                                                                     Assignment.reviewer_id == rid)))

    def claim_set(self, task_id: int, reviewer: str) -> int | None:
        """Assign the reviewer the lowest set that still needs reviewers and is not theirs; None when none does.
        A new reviewer is created with the claim, in its transaction: a refused claim leaves no reviewer behind."""
        reviewer = check_name(reviewer, "reviewer name", 100)
        if self.read_only:
            raise ReviewError("this review store is open read-only: no set can be claimed")
        with self.session() as s:
            task = s.get(ReviewTask, task_id)
            if task is None:
                raise ReviewError(f"no review task with id {task_id}")
            k, n_sets = int(task.plan.get("k", 2)), int(task.plan.get("n_sets", 1))

        def claim() -> int | None:
            with self.session() as s:
                _lock_task(s, task_id)  # count and insert as one step: the set's count cannot change in between
                found = self._named(s, reviewer)
                rid = found.id if found is not None else None
                counts = dict(s.execute(select(Assignment.set_no, func.count()).where(Assignment.task_id == task_id)
                                        .group_by(Assignment.set_no)).tuples().all())
                mine = set(s.scalars(select(Assignment.set_no).where(Assignment.task_id == task_id,
                                                                      Assignment.reviewer_id == rid)))
                open_sets = [n for n in range(n_sets) if n not in mine and counts.get(n, 0) < k]
                if not open_sets:
                    return None
                try:
                    if rid is None:
                        rid = self._reviewer_ids(s, [reviewer])[reviewer]
                    s.add(Assignment(task_id=task_id, set_no=open_sets[0], reviewer_id=rid))
                    s.commit()
                except IntegrityError:
                    s.rollback()
                    return claim()
                return open_sets[0]

        return retrying(claim)

    # judgements ----------------------------------------------------------------------------------------
    def judge(self, item_id: int, reviewer: str, *, relevance: Any, label_score: Any, validity: Any = None,
              note: str = "") -> None:
        """Save (or overwrite) one reviewer's judgement of one item, committed at once."""
        with self.session() as s:
            item = s.get(ReviewItem, item_id)
        if item is None:
            raise ReviewError(f"no review item with id {item_id}")
        where = f"judgement of case {item.case_id}: "
        values = {
            "relevance": check_score("relevance", relevance, where=where),
            "label_score": check_score("label score", label_score, where=where),
            "validity": (check_score("validity", validity, optional=True, where=where)
                         if item.kind == "expansion" else None),
            "note": check_note(note, where),
        }
        if item.kind == "expansion" and values["validity"] is None:
            raise ReviewError(f"{where}an expansion needs a validity score (does the seed's label still hold?)")
        rid = self.reviewer(reviewer).id
        now = _now()
        insert = self._upsert_insert()
        statement = insert(Judgement).values(item_id=item_id, reviewer_id=rid, created_at=now, updated_at=now, **values)
        statement = statement.on_conflict_do_update(index_elements=["item_id", "reviewer_id"],
                                                    set_={**values, "updated_at": now})

        def write() -> None:
            with self.engine.begin() as conn:
                conn.execute(statement)

        retrying(write)

    def _upsert_insert(self) -> Any:
        """The dialect's ``insert`` with ``on_conflict_do_update`` (SQLite or PostgreSQL)."""
        dialect = self.engine.dialect.name
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            return sqlite_insert
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert
        raise ReviewError(f"review database dialect {dialect!r} is not supported (use SQLite or PostgreSQL)")

    def judge_many(self, entries: Sequence[tuple[int, str, dict[str, Any], str]]) -> int:
        """Save (or overwrite) many judgements ``(item_id, reviewer, scores, note)`` in one transaction (imports:
        all or nothing, and fast: one commit instead of one per row). Scores are checked as in :meth:`judge`."""
        if not entries:
            return 0
        names = sorted({check_name(e[1], "reviewer name", 100) for e in entries})
        if self.read_only:
            raise ReviewError("the review database is open read-only; judgements cannot be saved")
        with self.session() as s:
            kinds = dict(s.execute(select(ReviewItem.id, ReviewItem.kind)
                                   .where(ReviewItem.id.in_(sorted({e[0] for e in entries})))).tuples().all())
        now = _now()
        rows = []
        for item_id, reviewer, scores, note in entries:
            if item_id not in kinds:
                raise ReviewError(f"no review item with id {item_id}")
            where = f"judgement of item {item_id}: "
            values = {"relevance": check_score("relevance", scores.get("relevance"), where=where),
                      "label_score": check_score("label score", scores.get("label_score"), where=where),
                      "validity": (check_score("validity", scores.get("validity"), optional=True, where=where)
                                   if kinds[item_id] == "expansion" else None),
                      "note": check_note(note, where)}
            if kinds[item_id] == "expansion" and values["validity"] is None:
                raise ReviewError(f"{where}an expansion needs a validity score")
            rows.append({"item_id": item_id, "reviewer": check_name(reviewer, "reviewer name", 100),
                         "created_at": now, "updated_at": now, **values})
        insert = self._upsert_insert()

        statement = insert(Judgement)
        statement = statement.on_conflict_do_update(
            index_elements=["item_id", "reviewer_id"],
            set_={k: getattr(statement.excluded, k) for k in ("relevance", "label_score", "validity", "note",
                                                               "updated_at")})

        def write() -> None:  # one transaction: the new reviewers and the judgements, all or nothing
            with self.session() as s:
                rids = self._reviewer_ids(s, names)
                s.execute(statement, [{**{k: v for k, v in row.items() if k != "reviewer"},
                                       "reviewer_id": rids[str(row["reviewer"])]} for row in rows])  # compiled once
                s.commit()

        retrying(write)
        return len(rows)

    def _reviewer_ids(self, s: Session, names: Sequence[str]) -> dict[str, int]:
        """name → id of each reviewer in ``names``, the missing ones created in ``s``'s transaction (not
        committed here: an import that fails or is killed after this leaves no reviewer behind)."""
        _lock_reviewers(s)  # creation serialised as in :meth:`reviewer`
        by_key: dict[str, Reviewer] = {}
        with damaged_rows("reviewers"):
            for reviewer in s.scalars(select(Reviewer).order_by(Reviewer.id)):
                by_key.setdefault(reviewer_key(reviewer.name), reviewer)
        ids = {}
        for name in names:
            found = s.scalar(select(Reviewer).where(Reviewer.name == name)) or by_key.get(reviewer_key(name))
            if found is None:
                _refuse_look_alike_reviewer(s, name)  # 'ɑnn' beside 'ann' (pass 31: imports and claims made it)
                found = Reviewer(name=name)
                s.add(found)
                s.flush()
                by_key[reviewer_key(name)] = found
            ids[name] = found.id
        return ids

    @staticmethod
    def _check_links(s: Session) -> None:
        """Refuse a store whose judgements point at no reviewer or item, or whose tasks name no known task: joins
        would drop them without a word (stats over 7 of 8 judgements, a write-back over none) (pass 14, A)."""
        orphans = s.scalar(select(func.count()).select_from(Judgement).where(
            Judgement.reviewer_id.not_in(select(Reviewer.id)) | Judgement.item_id.not_in(select(ReviewItem.id))))
        unknown = sorted(set(s.scalars(select(ReviewTask.suite_task).where(
            ReviewTask.suite_task.not_in(list(STORED_TASKS))).limit(5))), key=str)
        bad_name = None
        keys: dict[str, str] = {}
        for name in s.scalars(select(Reviewer.name)):  # as `judge` stores them: checked names, one per person
            try:
                check_name(name, "reviewer name", 100)
            except ReviewError:
                bad_name = f"a reviewer named {_shown(name)} (not a name ALiCT stores)"
                break
            if reviewer_key(name) in keys:
                bad_name = f"two reviewers {_shown(keys[reviewer_key(name)])} and {_shown(name)} of one name"
                break
            keys[reviewer_key(name)] = name
        if orphans or unknown or bad_name:
            what = (f"{orphans} judgement(s) of no reviewer or item" if orphans else bad_name if bad_name else
                    f"review task(s) of task {', '.join(_shown(t) for t in unknown)}, not one of "
                    f"{', '.join(STORED_TASKS)}")
            raise ReviewError(f"the review database holds damaged rows: {what}; it was changed outside ALiCT: restore "
                              "a copy or use another review database ($ALICT_REVIEW_DB_URL or --db)")

    def judgements(self, task_id: int | None = None, *, suite_task: str | None = None,
                   reviewer: str | None = None) -> list[dict[str, Any]]:
        """Judgements joined with their items and reviewers, as plain dicts."""
        query = (select(Judgement, ReviewItem, Reviewer.name, ReviewTask.name, ReviewTask.suite_task)
                 .join(ReviewItem, Judgement.item_id == ReviewItem.id)
                 .join(Reviewer, Judgement.reviewer_id == Reviewer.id)
                 .join(ReviewTask, ReviewItem.task_id == ReviewTask.id)
                 .order_by(ReviewItem.task_id, ReviewItem.set_no, ReviewItem.position, Reviewer.name))
        if task_id is not None:
            query = query.where(ReviewItem.task_id == task_id)
        if suite_task is not None:
            query = query.where(ReviewTask.suite_task == suite_task)
        if reviewer is not None:
            found = self.find_reviewer(reviewer)
            query = query.where(Reviewer.id == (found.id if found is not None else -1))
        rows = []
        with self.session() as s, damaged_rows("judgements"):
            self._check_links(s)
            for j, item, name, task_name, suite in s.execute(query).tuples():
                check_stored_judgement(j, item, task_name, suite)
                rows.append({
                    "task": task_name, "suite_task": suite, "item_id": item.id, "set_no": item.set_no,
                    "case_id": item.case_id, "text_hash": item.text_hash, "lc_id": item.lc_id, "kind": item.kind,
                    "seed_id": item.seed_id, "text": item.text, "expected": item.expected, "reviewer": name,
                    "relevance": j.relevance, "label_score": j.label_score, "validity": j.validity, "note": j.note,
                    "updated_at": j.updated_at.isoformat() if j.updated_at else None,
                })
        return rows

    def judged_item_ids(self, task_id: int, reviewer: str) -> set[int]:
        found = self.find_reviewer(reviewer)
        if found is None:
            return set()
        rid = found.id
        with self.session() as s:
            return set(s.scalars(select(Judgement.item_id).join(ReviewItem, Judgement.item_id == ReviewItem.id)
                                 .where(ReviewItem.task_id == task_id, Judgement.reviewer_id == rid)))

    def judgement(self, item_id: int, reviewer: str) -> Judgement | None:
        found = self.find_reviewer(reviewer)
        if found is None:
            return None
        rid = found.id
        with self.session() as s:
            return s.scalar(select(Judgement).where(Judgement.item_id == item_id, Judgement.reviewer_id == rid))

    # write-back ----------------------------------------------------------------------------------------
    def writeback_rule(self, suite_task: str) -> WritebackRule | None:
        """The confirmed write-back rule of a suite task (None: not confirmed, runs exclude nothing); a row changed
        outside ALiCT (a rule that is no whole number from 1 to 100, a date that is no date) is refused, never used
        as another rule."""
        with self.session() as s, damaged_rows("write-back rules"):  # a bad date fails as the row loads
            rule = s.scalar(select(WritebackRule).where(WritebackRule.suite_task == suite_task))
        if rule is not None and (isinstance(rule.min_agreeing, bool) or not isinstance(rule.min_agreeing, int)
                                 or not 1 <= rule.min_agreeing <= MAX_MIN_AGREEING):
            raise ReviewError(f"the review database holds a damaged write-back rule of {suite_task!r} (at least "
                              f"{str(rule.min_agreeing)[:40]!r} agreeing reviewers, not a whole number from 1 to "
                              f"{MAX_MIN_AGREEING}); it was changed outside ALiCT: restore a copy or use another "
                              "review database ($ALICT_REVIEW_DB_URL or --db)")
        return rule

    def confirm_writeback(self, suite_task: str, min_agreeing: int, confirmed_by: str | None = None) -> WritebackRule:
        """Turn the write-back on for a suite task (or change its minimum number of agreeing reviewers).

        ``confirmed_by``: who confirms (recorded), a name like a reviewer's; None records no one, and a blank,
        over-long or control-character name is refused (never recorded as given, nor cut)."""
        if (isinstance(min_agreeing, bool) or not isinstance(min_agreeing, int)
                or not 1 <= min_agreeing <= MAX_MIN_AGREEING):
            raise ReviewError(f"min_agreeing must be a whole number from 1 to {MAX_MIN_AGREEING}, got {min_agreeing!r}")
        by = "" if confirmed_by is None else check_name(confirmed_by, "the name of who confirms", 100)

        def write() -> WritebackRule:
            with self.session() as s:
                if by and self._named(s, by) is None:  # 'ɑnn' beside the reviewer 'ann' read as ann's confirmation
                    _refuse_look_alike_reviewer(s, by)
                rule = s.scalar(select(WritebackRule).where(WritebackRule.suite_task == suite_task))
                if rule is None:
                    rule = WritebackRule(suite_task=suite_task, min_agreeing=min_agreeing)
                    s.add(rule)
                rule.min_agreeing = min_agreeing
                rule.confirmed_by = by
                rule.confirmed_at = _now()
                try:
                    s.commit()
                except IntegrityError:  # confirmed at the same moment elsewhere: update that row
                    s.rollback()
                    return write()
                return rule

        return retrying(write)

    def revoke_writeback(self, suite_task: str) -> None:
        """Turn the write-back off again (runs stop excluding reviewed cases)."""
        with self.session() as s:
            rule = s.scalar(select(WritebackRule).where(WritebackRule.suite_task == suite_task))
            if rule is not None:
                s.delete(rule)
                s.commit()
