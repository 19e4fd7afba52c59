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
from tests.robustness.support import review_page

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


# Leftover 2: DNS rebinding against the endpoint allow-list (the host resolved for the check, again to connect) --

@pytest.fixture
def loopback_listener():
    """A loopback HTTP server answering a valid prediction; the paths it was asked for are in ``.hits``."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits: list[str] = []

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the name http.server calls
            hits.append(self.path)
            body = json.dumps({"probabilities": [[0.1, 0.2, 0.7]]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    server.hits = hits  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _rebinding_resolver(monkeypatch, host: str, first: str, then: str, honest: int):
    """``socket.getaddrinfo`` answering ``first`` for ``host`` ``honest`` times, then ``then`` (an attacker's DNS
    server with a zero TTL); every other name resolved as usual. Returns the list of answers given."""
    import socket

    real = socket.getaddrinfo
    answers: list[str] = []

    def getaddrinfo(name, port, *args, **kwargs):
        if str(name).rstrip(".").lower() != host:
            return real(name, port, *args, **kwargs)
        address = first if len(answers) < honest else then
        answers.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


@pytest.mark.parametrize("kind", ["http", "openai-chat"])
def test_a_host_that_rebinds_to_loopback_after_the_check_is_never_reached(monkeypatch, loopback_listener, kind):
    """Was: the allow-list checked the addresses of a name, then requests resolved the name again to connect: a
    name allowed by ALICT_ALLOWED_HOSTS whose DNS answered a public address to the checks and 127.0.0.1 to the
    connection reached a loopback service from the browser (the server saw the request), though the allow-list
    refuses loopback addresses of names it allows by a pattern. Now the connection is made to an
    address checked in the same step (each new connection resolves once, checks, connects to that address)."""
    from alict_core.common.trust import TrustError
    from alict_core.models.remote import HttpJsonModel, OpenAIChatModel

    host = "rebind.example.test"
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "*.example.test")  # a pattern: its names' loopback addresses refused
    answers = _rebinding_resolver(monkeypatch, host, "203.0.113.7", "127.0.0.1", honest=2)
    port = loopback_listener.server_address[1]
    if kind == "http":
        model = HttpJsonModel(f"http://{host}:{port}/predict", "sentiment", loopback=False, retries=0)
    else:
        model = OpenAIChatModel(f"http://{host}:{port}/v1", "m", "sentiment", loopback=False, retries=0)
    with pytest.raises(TrustError, match="is a loopback address"):
        model.predict_proba(["a fine film"])
    model.close()
    assert loopback_listener.hits == [], "the loopback service was reached"
    assert answers[:2] == ["203.0.113.7"] * 2


def test_a_pinned_endpoint_keeps_its_host_name_in_the_request(monkeypatch, loopback_listener):
    """The connection goes to the checked address; the request still names the host (Host header; SNI on https).
    A guard of the fix above (it passes on the old code too), not a finding."""
    from alict_core.models.remote import HttpJsonModel

    host = "model.example.test"
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", f"{host},127.0.0.1")
    _rebinding_resolver(monkeypatch, host, "127.0.0.1", "127.0.0.1", honest=0)
    seen: list[str] = []
    handler = loopback_listener.RequestHandlerClass
    real_post = handler.do_POST

    def do_post(self):
        seen.append(self.headers.get("Host", ""))
        real_post(self)

    monkeypatch.setattr(handler, "do_POST", do_post)
    port = loopback_listener.server_address[1]
    model = HttpJsonModel(f"http://{host}:{port}/predict", "sentiment", loopback=False, retries=0)
    proba = model.predict_proba(["a fine film"])
    model.close()
    assert proba.tolist() == [[0.1, 0.2, 0.7]]
    assert seen == [f"{host}:{port}"]


# Pass 7 findings -------------------------------------------------------------------------------------------------

def test_an_upload_over_the_size_limit_is_refused_before_it_is_stored(tmp_path, monkeypatch):
    """Was: a browser upload (Report page baseline, Run page stored predictions) was written to <cache>/uploads
    whatever its size (up to Streamlit's 200 MB), then refused by the reader as over ALICT_LIMIT_SUITE_BYTES, and
    kept there: disk written for nothing, and the refusal named the stored hash file, not the upload."""
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import save_upload

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_LIMIT_SUITE_BYTES", "1000")
    with pytest.raises(AlictError, match=r"upload 'big.json' \(bytes\): 1,001 is over the limit of 1,000; nothing "
                                         r"was stored \(setting ALICT_LIMIT_SUITE_BYTES\)"):
        save_upload("big.json", b"x" * 1001)
    uploads = tmp_path / "cache" / "uploads"
    assert not uploads.exists() or list(uploads.iterdir()) == []
    assert save_upload("ok.json", b"x" * 1000).read_bytes() == b"x" * 1000


def test_a_new_spec_saved_meanwhile_by_another_session_is_not_replaced(tmp_path, monkeypatch):
    """Was: two sessions saving the same new workspace spec (the Specs page's Save, no overwrite) both passed the
    "already exists" check; the second silently replaced the first's file and both were told it was saved."""
    from alict_app import specs_io
    from alict_core.common import jsonl
    from alict_core.common.errors import SpecError

    real_temp = jsonl.new_temp_file

    def other_session_saves_then_temp(path):  # after this save's "already exists" check, before its write
        Path(path).write_text("# the other session's spec\n", encoding="utf-8")
        return real_temp(path)

    monkeypatch.setattr(jsonl, "new_temp_file", other_session_saves_then_temp)
    with pytest.raises(SpecError, match="already exists"):
        specs_io.save_spec_text(tmp_path, "sentiment-lc04", "id: sentiment-lc04\n")
    assert (tmp_path / "sentiment-lc04.yaml").read_text() == "# the other session's spec\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sentiment-lc04.yaml"], "no temporary file left"


def _as_reviewer(form: Path, out: Path, *names: str) -> Path:
    """``form`` with its rows signed by ``names`` in turn (every row once per name)."""
    with form.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "reviewer": name} for name in names for row in rows)
    return out


def test_a_reviewer_name_in_another_case_is_the_same_reviewer(cli, tmp_path, saved_run):
    """Was: `review import` of a file signed 'ANN' after 'ann' had judged (and the Review page's ?reviewer=ANN)
    stored a second reviewer 'ANN': one person counted as two (agreement, k per case), though `--reviewers`
    refuses names that differ only in case as one reviewer. Now 'ANN' is 'ann' (a re-import: an upsert)."""
    from alict_core.review.store import ReviewStore

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    form = _judged_form(cli, tmp_path, url, saved_run)
    assert cli("review", "import", str(form), "--db", url).code == 0
    assert cli("review", "import", str(_as_reviewer(form, tmp_path / "upper.csv", "ANN")), "--db", url).code == 0
    store = ReviewStore(url, read_only=True)
    assert {j["reviewer"] for j in store.judgements()} == {"ann"}
    assert len(store.judgements()) == 8
    both = _as_reviewer(form, tmp_path / "both.csv", "bob", "BOB")
    assert_clean_error(cli("review", "import", str(both), "--db", url), 2, "is judged by 'BOB' again (first at")


LINK = "[Session expired: sign in again](https://evil.example/login)"


@pytest.mark.usefixtures("fake_backends")
def test_a_shared_review_link_or_case_text_is_shown_as_text_not_markdown(tmp_path, monkeypatch):
    """Was: the Review page drew ``?reviewer=`` (from a shared link anyone can craft) and the case texts (from a
    run's seeds file) as Markdown: ``?reviewer=[Session expired: sign in again](https://evil.example/login)`` was
    a link in the app's own page, a text ``![](https://evil.example/beacon.png)`` an image the reviewer's browser
    fetched. Now they are escaped (``alict_app.formatting.literal``)."""
    import re

    from alict_core.review import SamplingPlan, create_review_task
    from alict_core.review.store import ReviewStore
    from alict_core.runner import build_cases

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    seeds = [{"id": "s0", "lc_id": "sentiment-lc04", "task": "sentiment", "test_type": "MFT",
              "text": "a fine film ![](https://evil.example/beacon.png)",
              "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}}]
    store = ReviewStore(url)
    task, _ = create_review_task(store, "t", "sentiment", build_cases(seeds), SamplingPlan(n_sets=1, k=1, size=1))
    store.claim_set(task.id, "ann")
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    shown = []
    for reviewer in (LINK, "ann"):
        at = review_page("t", reviewer)
        assert not at.exception, [e.value for e in at.exception]
        shown += [str(el.value) for el in [*at.caption, *at.markdown]]
    unescaped = re.compile(r"(?<!\\)\]\((?:https?|//)")  # Markdown's link/image syntax: ](https://...
    assert any("evil" in text for text in shown), "the probes reached the page"
    assert not [text for text in shown if unescaped.search(text)]


def test_uploads_kept_together_are_bounded(tmp_path, monkeypatch):
    """Was: every distinct upload under the size limit was kept in <cache>/uploads without bound (no quota, no
    clean-up): a browser user could fill the server's disk. Now the uploads kept are bounded together; the same
    upload again is the stored file (no growth)."""
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import save_upload

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_LIMIT_UPLOADS_BYTES", "2500")
    first = save_upload("a.csv", b"a" * 1000)
    save_upload("b.csv", b"b" * 1000)
    assert save_upload("a-again.csv", b"a" * 1000) == first
    with pytest.raises(AlictError, match=r"the uploads kept with upload 'c.csv' \(bytes\): 3,000 is over the limit of "
                                         r"2,500; nothing was stored; the server operator can remove old uploads"):
        save_upload("c.csv", b"c" * 1000)
    assert len(list((tmp_path / "cache" / "uploads").iterdir())) == 2


def _read_request(conn) -> None:
    """Read one HTTP request whole: its headers, then the Content-Length bytes of its body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65_536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65_536)
        if not chunk:
            return
        body += chunk


@pytest.fixture
def raw_endpoint():
    """``raw_endpoint(answer)``: a loopback TCP server that reads a request and calls ``answer(connection)``;
    returns its URL. Connections are served in daemon threads."""
    import socket
    import threading

    listeners = []

    def start(answer) -> str:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listeners.append(listener)

        def serve():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                _read_request(conn)  # all of it: closing with unread bytes would reset the connection
                threading.Thread(target=answer, args=(conn,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/predict"

    yield start
    for listener in listeners:
        listener.close()


def _drip(conn) -> None:
    """Headers, then one byte every 0.2 s for as long as the client reads."""
    import time

    try:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
        while True:
            conn.sendall(b" ")
            time.sleep(0.2)
    except OSError:
        conn.close()


def _gzip_bomb(conn) -> None:
    """A gzip answer of 40 KB that decodes to 40 MB."""
    import gzip

    body = gzip.compress(b" " * 40_000_000, compresslevel=9)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    conn.close()


@pytest.mark.parametrize("answer,timeout,needle", [(_drip, 5, "did not finish its answer within 5 s"),
                                                   (_gzip_bomb, 60, "answered more than 16,000,000 bytes")],
                         ids=["slow-drip", "gzip-bomb"])
def test_an_endpoint_answer_is_bounded_in_time_and_size(raw_endpoint, answer, timeout, needle):
    """Was: the request timeout bounded each read only, so an endpoint that sent its headers and then a byte every
    0.2 s kept a model of timeout 1 s waiting without end (a run, or the Run page, hung); an answer was read into
    memory whole whatever its size (a 40 KB gzip answer became 40 MB). Now the answer is streamed, within the
    timeout in all and at most MAX_ANSWER_BYTES. (The bomb's model waits up to 60 s: decoding 16 MB takes over 1 s
    on a busy machine, and then the time bound, not the size bound, would end it — a flaky test. The drip's model
    waits 5 s, not 1: on a loaded machine the connection itself took over 1 s and the message was another.)"""
    import threading

    from alict_core.common.errors import ModelError
    from alict_core.models.remote import HttpJsonModel

    model = HttpJsonModel(raw_endpoint(answer), "sentiment", timeout=timeout, retries=0)
    outcome: list[BaseException | object] = []

    def predict():
        try:
            outcome.append(model.predict_proba(["a fine film"]))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=predict, daemon=True)
    worker.start()
    worker.join(120)
    assert outcome, "the model still waits for the answer after 120 s"
    assert isinstance(outcome[0], ModelError) and needle in str(outcome[0]), outcome[0]
    model.close()


def _chat_answer_of_megabytes(conn) -> None:
    """A chat completion whose content is 5,000,000 characters that name no label."""
    import json

    body = json.dumps({"choices": [{"message": {"content": "x" * 5_000_000}}]}).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    conn.close()


def test_an_unparsed_chat_answer_is_kept_cut(raw_endpoint):
    """Was: every unparsed chat answer was kept whole for the report after the run (the model's list and the run
    scope): 500 requests a run of megabytes each held gigabytes in memory and printed them. Now 1,000 characters."""
    from alict_core.models.remote import OpenAIChatModel
    from alict_core.models.run_scope import run_scope

    model = OpenAIChatModel(raw_endpoint(_chat_answer_of_megabytes).rsplit("/", 1)[0], "m", "sentiment",
                            retries=0)
    with run_scope() as scope:
        assert model.predict_proba(["a fine film"]).shape == (1, 3)  # scored as the fallback label
        kept = scope.unparsed[model.name]
    model.close()
    assert [len(answer) for answer in model.unparsed] == [1000]
    assert [len(answer) for _, answer in kept] == [1000]
