"""Browser tests: know exactly when the Streamlit script is idle, from the app's own websocket messages."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Mapping

WAIT = 120_000  # ms: a cold Streamlit page on two loaded cores


class ScriptState:
    """Whether the app's script is running, read from Streamlit's own websocket messages (ForwardMsg protobufs).

    A key pressed while a rerun is under way can be lost, so every key waits for the script to be idle: the
    messages say so exactly (no sleeps, no guessing from the page).
    """

    def __init__(self, page) -> None:
        self.page = page
        self.running = True
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: bytes | str) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.running = True
        elif kind == "session_status_changed":
            self.running = msg.session_status_changed.script_is_running
        elif kind == "script_finished":
            self.running = False

    def wait_idle(self, timeout_ms: float = WAIT) -> None:
        deadline = time.monotonic() + timeout_ms / 1000
        while self.running:
            assert time.monotonic() < deadline, "the app's script did not finish"
            self.page.wait_for_timeout(20)  # lets Playwright deliver the websocket events; the loop waits on state


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app(repo: Path, log_path: Path, env: Mapping[str, str]) -> tuple[Any, str]:
    """``streamlit run app.py`` on a free port, (process, base URL) once its health check answers (90 s at most)."""
    port = free_port()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=repo, stdout=log, stderr=subprocess.STDOUT, env=dict(env))
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                return proc, base
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.terminate()
                raise AssertionError("streamlit did not start") from None
            time.sleep(0.3)
