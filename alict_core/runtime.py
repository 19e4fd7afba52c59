"""Process-wide settings applied once at start-up (CLI ``main``, ``app.py``), never by model constructors."""

from __future__ import annotations

import os
import sys
import threading

TORCH_THREADS_ENV = "ALICT_TORCH_THREADS"
_applied = threading.Event()


def torch_threads() -> int:
    """Threads torch may use (``ALICT_TORCH_THREADS``, default 2: the machines are shared)."""
    try:
        return max(1, int(os.environ.get(TORCH_THREADS_ENV, "2")))
    except ValueError:
        raise ValueError(f"{TORCH_THREADS_ENV} must be a whole number, got {os.environ[TORCH_THREADS_ENV]!r}") from None


def configure_torch() -> None:
    """Apply the torch thread count once per process.

    Before torch is imported this only sets ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` (read by torch at import,
    so start-up stays fast); when torch is already loaded it also calls ``torch.set_num_threads``.
    """
    if _applied.is_set():
        return
    _applied.set()
    threads = str(torch_threads())
    os.environ.setdefault("OMP_NUM_THREADS", threads)
    os.environ.setdefault("MKL_NUM_THREADS", threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(int(threads))
