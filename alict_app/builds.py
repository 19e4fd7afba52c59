"""Start the offline model builds (`python -m alict_core build TARGET`) from the app, with a visible log."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from alict_core.common.config import REPO_ROOT, artefact_dir

_lock = threading.Lock()
_running: dict[str, subprocess.Popen] = {}


def log_path(target: str) -> Path:
    return artefact_dir("build-logs") / f"{target}.log"


def start_build(target: str, profile: str = "quick") -> bool:
    """Start building ``target`` in a background process; False if one is already running in this process.

    ``--no-wait``: when another process (``make run``'s background build) holds the target's lock, the
    child exits at once with a message naming that build instead of waiting silently.
    """
    with _lock:
        if is_running(target):
            return False
        command = [sys.executable, "-m", "alict_core", "build", target, "--profile", profile, "--no-wait"]
        with open(log_path(target), "w", encoding="utf-8") as handle:  # the child keeps its own copy
            _running[target] = subprocess.Popen(command, cwd=REPO_ROOT, stdout=handle, stderr=subprocess.STDOUT)
        return True


def is_running(target: str) -> bool:
    proc = _running.get(target)
    return proc is not None and proc.poll() is None


def exit_code(target: str) -> int | None:
    proc = _running.get(target)
    return None if proc is None else proc.poll()


def log_tail(target: str, lines: int = 12) -> str:
    path = log_path(target)
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
    return "\n".join(text.splitlines()[-lines:])
