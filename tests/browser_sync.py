"""Browser tests: know exactly when the Streamlit script is idle, from the app's own websocket messages."""

from __future__ import annotations

import time

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
