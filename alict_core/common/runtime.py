"""Process-wide settings applied once at start-up (CLI ``main``, ``app.py``), never by model constructors."""

from __future__ import annotations

import os
import sys
import threading

from alict_core.common.errors import AlictError

TORCH_THREADS_ENV = "ALICT_TORCH_THREADS"
_applied = threading.Event()


MAX_TORCH_THREADS = 1024


def torch_threads() -> int:
    """Threads torch may use (``ALICT_TORCH_THREADS``, default 2: the machines are shared); a value that is not a
    whole number in [1, 1024] is one clear error (an operator's setting, never silently replaced)."""
    raw = os.environ.get(TORCH_THREADS_ENV, "").strip() or "2"
    from alict_core.common.limits import whole_number

    threads = whole_number(raw)
    if threads is None or not 1 <= threads <= MAX_TORCH_THREADS:
        raise AlictError(f"{TORCH_THREADS_ENV}={raw[:20]!r} must be a whole number from 1 to {MAX_TORCH_THREADS}")
    return threads


def configure_torch() -> None:
    """Apply the torch thread count once per process.

    Before torch is imported this only sets ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` (read by torch at import,
    so start-up stays fast); when torch is already loaded it also calls ``torch.set_num_threads``. It also
    asks OpenMP to sleep, not spin, between parallel regions (``OMP_WAIT_POLICY=PASSIVE`` unless set): on a
    shared 2-core machine a spinning thread burns the core its partner or another job needs (a quick-profile
    parser step took 2.2x the CPU time and 6x the wall time beside one busy process); the results are
    the same, only idle waiting changes.
    """
    if _applied.is_set():
        return
    threads = str(torch_threads())  # a bad setting raises before anything is applied (and again next time)
    _applied.set()
    os.environ.setdefault("OMP_NUM_THREADS", threads)
    os.environ.setdefault("MKL_NUM_THREADS", threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when torch loads OpenMP (see the docstring)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(int(threads))
