"""Endpoints table: what an HTTP / OpenAI-compatible endpoint answers never reaches a user's message.

A local http.server plays an internal service: it answers 500 with a secret, HTML, JSON of another shape,
labels or numbers that are secrets. Every case is one ModelError with the status and a fixed reason; the body
is only in the server log. From the browser, a loopback endpoint needs the operator's opt-in.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from alict_core.common.errors import ModelError
from alict_core.common.trust import HOSTS_ENV, TrustError, check_endpoint
from alict_core.models.refs import browser_model_kwargs
from alict_core.models.remote import HttpJsonModel, OpenAIChatModel

SECRET = "db-password-hunter2"


class InternalService:
    """Answers every POST with (status, body bytes, content type) from ``answer``."""

    def __init__(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        outer = self
        self.hits = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.hits += 1
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _j(obj) -> bytes:
    return json.dumps(obj).encode()


ANSWERS = [  # (status, body, content type, reason in the message)
    (500, f"internal error: {SECRET}".encode(), "text/plain", "HTTP 500, not 200 OK"),
    (403, f"<html>internal admin console {SECRET}</html>".encode(), "text/html", "HTTP 403, not 200 OK"),
    (404, _j({"detail": SECRET}), "application/json", "HTTP 404, not 200 OK"),
    (200, f"<html>internal admin console {SECRET}</html>".encode(), "text/html", "not a JSON answer"),
    (200, b"[" * 100_000, "application/json", "not a JSON answer"),
    (200, _j({"users": [SECRET]}), "application/json", "neither a 'probabilities' nor a 'labels'"),
    (200, _j([SECRET]), "application/json", "expected a JSON object"),
    (200, _j({"labels": [SECRET]}), "application/json", "an answer label is not one of"),
    (200, _j({"probabilities": [[SECRET, 0, 0]]}), "application/json", "not a list of numbers"),
    (200, _j({"probabilities": [{SECRET: 1.0}]}), "application/json", "an answer label is not one of"),
    (200, _j({"probabilities": SECRET}), "application/json", "'probabilities' must be a list"),
    (200, b'{"probabilities": [[NaN, 0, 1]]}', "application/json", "not a finite number"),
]


@pytest.mark.parametrize("status,body,content_type,reason", ANSWERS, ids=[f"http-{i}" for i in range(len(ANSWERS))])
def test_http_answer_body_never_in_the_message(status, body, content_type, reason, caplog):
    service = InternalService(status, body, content_type)
    try:
        model = HttpJsonModel(service.url, "sentiment", retries=0, backoff=0)
        with caplog.at_level(logging.WARNING, logger="alict_core.models.remote"):
            with pytest.raises(ModelError) as info:
                model.predict_proba(["a text"])
    finally:
        service.close()
    message = str(info.value)
    assert SECRET not in message and "<html>" not in message, message
    assert reason in message and "logged as a warning" in message, message
    if SECRET.encode() in body:
        assert SECRET in caplog.text, "the full answer is kept in the server log"


CHAT_ANSWERS = [
    (500, f"Traceback: {SECRET}".encode(), "text/plain", "HTTP 500"),
    (200, f"<html>{SECRET}</html>".encode(), "text/html", "not a JSON answer"),
    (200, _j({"error": SECRET}), "application/json", "not a chat completion"),
    (200, _j({"choices": [{"message": {"content": {"k": SECRET}}}]}), "application/json", "not a chat completion"),
    (200, _j({"choices": SECRET}), "application/json", "not a chat completion"),
]


@pytest.mark.parametrize("status,body,content_type,reason", CHAT_ANSWERS,
                         ids=[f"chat-{i}" for i in range(len(CHAT_ANSWERS))])
def test_chat_answer_body_never_in_the_message(status, body, content_type, reason, caplog):
    service = InternalService(status, body, content_type)
    try:
        model = OpenAIChatModel(service.url, "m", "sentiment", retries=0, backoff=0)
        with caplog.at_level(logging.WARNING, logger="alict_core.models.remote"):
            with pytest.raises(ModelError) as info:
                model.predict_proba(["a text"])
    finally:
        service.close()
    assert SECRET not in str(info.value) and reason in str(info.value), str(info.value)
    assert SECRET in caplog.text


def test_chat_null_content_is_an_unparsed_answer():
    service = InternalService(200, _j({"choices": [{"message": {"content": None}}]}))
    try:
        model = OpenAIChatModel(service.url, "m", "sentiment", retries=0, backoff=0)
        assert model.predict_proba(["a text"]).tolist() == [[0.0, 1.0, 0.0]]  # the neutral fallback
    finally:
        service.close()


LOOPBACK = ["http://127.0.0.1:{port}/", "http://localhost:{port}/", "http://[::1]:{port}/", "http://127.1.2.3:{port}/",
            "http://0x7f000001:{port}/", "http://2130706433:{port}/"]


@pytest.mark.parametrize("template", LOOPBACK)
@pytest.mark.parametrize("kind", ["http", "openai-chat"])
def test_browser_needs_opt_in_for_loopback(monkeypatch, kind, template):
    monkeypatch.delenv(HOSTS_ENV, raising=False)
    url = template.format(port=8123)
    key = "url" if kind == "http" else "base_url"
    try:
        check_endpoint(url)  # the command line may reach loopback
    except TrustError as exc:
        pytest.skip(f"{url} does not resolve here ({exc})")
    with pytest.raises(TrustError) as info:
        browser_model_kwargs(kind, {key: url, "task": "sentiment"})
    # an address written out is resolved and refused as loopback; a name (localhost, 0x7f000001) no entry names is
    # refused before any lookup (pass 18/19: the browser never makes the server resolve a name)
    assert HOSTS_ENV in str(info.value) and ("loopback" in str(info.value) or "not looked up" in str(info.value))


def test_browser_loopback_opt_in_and_its_limits(monkeypatch):
    monkeypatch.setenv(HOSTS_ENV, "127.0.0.1")
    checked = browser_model_kwargs("http", {"url": "http://127.0.0.1:8123/p", "task": "sentiment"})
    assert checked["loopback"] is False  # the model re-checks every request with the browser's rule
    with pytest.raises(TrustError, match="loopback"):  # another loopback address is not opted in
        browser_model_kwargs("http", {"url": "http://127.0.0.2:8123/p", "task": "sentiment"})
    monkeypatch.setenv(HOSTS_ENV, "127.0.0.0/8,localhost")
    browser_model_kwargs("openai-chat", {"base_url": "http://localhost:8123/v1", "task": "sentiment"})
    monkeypatch.setenv(HOSTS_ENV, "*.localhost")  # a pattern is no opt-in for loopback (nor does it name localhost)
    with pytest.raises(TrustError, match="loopback|not looked up"):
        check_endpoint("http://localhost:8123/", loopback=False)
    with pytest.raises(TrustError, match="cannot allow loopback"):
        browser_model_kwargs("http", {"url": "http://127.0.0.1:1/", "task": "sentiment", "loopback": True})


def test_browser_model_refuses_loopback_on_every_request(monkeypatch):
    """A model made from a browser reference re-checks each request with the browser's rule."""
    service = InternalService(200, _j({"labels": ["positive"]}))
    try:
        monkeypatch.setenv(HOSTS_ENV, "127.0.0.1")
        kwargs = browser_model_kwargs("http", {"url": service.url, "task": "sentiment"})
        model = HttpJsonModel(**{k: v for k, v in kwargs.items() if k != "task"}, task="sentiment", retries=0)
        assert model.predict_proba(["x"]).tolist() == [[0.0, 0.0, 1.0]]
        monkeypatch.delenv(HOSTS_ENV)  # the operator withdraws the opt-in: the next request is refused
        with pytest.raises(TrustError, match="loopback"):
            model.predict_proba(["x"])
        assert service.hits == 1
    finally:
        service.close()
