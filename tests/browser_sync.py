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
CHROMIUM = Path("/usr/bin/chromium")
# The page's layout has settled: no lazily loaded element is still a placeholder (Streamlit draws ``stSkeleton`` until
# e.g. a dataframe's code has loaded, then the real element, taller or shorter, pushes what is below it) and no finite
# animation is running (an expander opens over 0.5 s with its content clipped). A click aimed while either is under
# way can land beside its button: measured on an expander holding tables above a form's button, the button moved
# 300 px after Playwright had taken its position, and the click went to the block around it (1 of 20 clicks lost).
# Infinite animations (spinners, the placeholders' shimmer) are left out: they never end and move nothing.
# Every click the page receives, timed, with what it landed on: printed beside the script runs when a test fails.
CLICK_LOG = """document.addEventListener('click', e => {
    const on = e.target.closest('button, label, summary') || e.target;
    (window.__alictClicks = window.__alictClicks || []).push(
        `${(performance.timeOrigin + performance.now()) / 1000} ${on.tagName} ${(on.innerText || '').slice(0, 40)}`);
}, true);"""
LAYOUT_SETTLED = """() => !document.querySelector('[data-testid="stSkeleton"]') && !document.getAnimations().some(
    a => a.playState === 'running' && a.effect && a.effect.getComputedTiming().endTime !== Infinity)"""


def launch_chromium(pw) -> Any:
    """Headless Chromium (the Debian package) as the browser tests run it."""
    return pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                              args=["--no-sandbox", "--disable-dev-shm-usage"])


class ScriptState:
    """Whether the app's script is running or about to run, read from the websocket messages both ways (Streamlit's
    BackMsg and ForwardMsg protobufs).

    A key pressed or a button clicked while a rerun is under way can be lost (the running script is interrupted,
    a press's work cut short), and a message drawn in one run is gone after the next: every action waits for the
    script to be idle. Idle means: no full-app run in progress, none the browser asked for and not yet started,
    and none announced to follow (a run that ended early for a rerun, a fragment's ``st.rerun()``). Fragment runs
    (the sidebar's timers) are not waited for: they never interrupt a full run and redraw only their own part.
    The messages say all this exactly: no sleeps, no guessing from the page.
    """

    def __init__(self, page) -> None:
        self.page = page
        self.running = True  # a full-app run in progress (the first one starts with the page's load)
        self.requested = False  # the browser asked for a full-app rerun that has not started yet
        self.follows = False  # a run ended early for a rerun: the next one is on its way
        self.full_runs_finished = 0
        self.stopped_timers: list[str] = []  # fragments whose run_every timer the server stopped
        self.trace: list[str] = []  # the script-run messages both ways, timed: printed when a test fails
        self._t0 = time.monotonic()
        page.on("websocket", self._socket)
        page.add_init_script(CLICK_LOG)
        page._alict_script_state = self  # noqa: SLF001 - found again by ``of(page)``

    @staticmethod
    def of(page) -> ScriptState:
        """The ScriptState watching ``page`` (made right after the page, before its first ``goto``)."""
        state = getattr(page, "_alict_script_state", None)
        assert state is not None, "watch the page with ScriptState(page) before opening the app in it"
        return state

    def _socket(self, ws) -> None:
        ws.on("framereceived", self._received)
        ws.on("framesent", self._sent)

    def _sent(self, payload: bytes | str) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if isinstance(payload, str):
            return
        msg = BackMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") != "rerun_script":
            return
        rerun = msg.rerun_script
        triggers = [w.id.split("-")[-1] for w in rerun.widget_states.widgets
                    if w.WhichOneof("value") == "trigger_value" and w.trigger_value]
        self.note(f"sent rerun fragment={rerun.fragment_id or '-'} auto={rerun.is_auto_rerun} triggers={triggers}")
        if not rerun.fragment_id:
            self.requested = True

    def _received(self, payload: bytes | str) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, str):
            return
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.note(f"new_session fragments={list(msg.metadata.run.fragment_ids) or '-'}")
        elif kind in ("script_finished", "stop_auto_rerun"):
            self.note(f"{kind} {msg.script_finished if kind == 'script_finished' else ''}")
        if kind == "new_session":
            self.follows = False
            if not msg.metadata.run.fragment_ids:  # a full-app run started: it serves every request sent so far
                self.running, self.requested = True, False
        elif kind == "stop_auto_rerun":
            self.stopped_timers.extend(msg.stop_auto_rerun.fragment_ids)
        elif kind == "script_finished":
            status = msg.script_finished
            if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.follows = True
            elif status != ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                self.running = False
                self.full_runs_finished += 1

    def clicks(self) -> list[str]:
        """The clicks the page now shown received (``CLICK_LOG``), on this trace's clock."""
        try:
            logged = self.page.evaluate("window.__alictClicks || []")
        except Exception as error:  # noqa: BLE001 - only for a failure's printout
            return [f"(clicks unreadable: {error})"]
        offset = time.time() - time.monotonic() + self._t0  # the page's epoch seconds -> seconds since this trace began
        parts = (line.partition(" ") for line in logged)
        return [f"{float(at) - offset:8.2f} click on {rest}" for at, _, rest in parts]

    def note(self, what: str) -> None:
        self.trace.append(f"{time.monotonic() - self._t0:8.2f} {what}")

    @property
    def busy(self) -> bool:
        return self.running or self.requested or self.follows

    def wait_idle(self, timeout_ms: float = WAIT) -> None:
        """Wait until the script is idle. First a round trip to the page, so every message the browser sent
        before it (the rerun a click or key just asked for) has been seen here."""
        deadline = time.monotonic() + timeout_ms / 1000
        from playwright.sync_api import Error

        try:
            self.page.evaluate("() => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)))")
        except Error:  # the page is navigating: its new socket's messages are what the loop below waits on
            pass
        while self.busy:
            assert time.monotonic() < deadline, (
                f"the app's script did not become idle (running={self.running}, requested={self.requested}, "
                f"follows={self.follows})")
            self.page.wait_for_timeout(20)  # lets Playwright deliver the websocket events; the loop waits on state
        self.wait_layout_settled(max(deadline - time.monotonic(), 1) * 1000)

    def wait_layout_settled(self, timeout_ms: float = WAIT) -> None:
        """Wait until nothing on the page is still loading into place or animating (``LAYOUT_SETTLED``), then one
        more frame, so React's effects for what was last drawn (a button's key shortcut is bound in one) have run."""
        from playwright.sync_api import Error
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(LAYOUT_SETTLED, timeout=timeout_ms)
            self.page.evaluate("() => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)))")
        except PlaywrightTimeout:
            raise
        except Error:  # the page is navigating: the next wait, on the new page, settles it
            pass


def wait_idle(page, timeout_ms: float = WAIT) -> None:
    """``ScriptState.of(page).wait_idle``: for tests that hand the page around."""
    ScriptState.of(page).wait_idle(timeout_ms)


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
