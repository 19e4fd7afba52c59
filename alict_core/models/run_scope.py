"""Per-run state of shared models: request budgets (spending caps) and answers that could not be parsed.

Models are cached and shared by every session of the process, so nothing that belongs to one run may
live on them. ``with run_scope() as scope:`` opens a run (the runner does it; nested scopes reuse the outer
one); adapters ask ``current_scope()`` for their budget and report unparsed answers to it. Each thread
has its own scope (``contextvars``), so two sessions running the same model count separately.
"""

from __future__ import annotations

import hashlib
import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from alict_core.common.errors import ModelError


class RequestBudget:
    """Counts requests (every HTTP try, retries included) and refuses the one past ``max_requests`` (None:
    unlimited)."""

    def __init__(self, model: str, max_requests: int | None) -> None:
        self.model, self.max_requests, self.used = model, max_requests, 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.max_requests is not None and self.used >= self.max_requests:
                raise cap_reached(self.model, self.max_requests)
            self.used += 1


def cap_reached(model: str, max_requests: int) -> ModelError:
    """The refusal of the request past a model's cap."""
    return ModelError(f"model {model!r}: request cap of {max_requests} per command reached (every try counts, "
                      "retries included); raise max_requests to go on (re-running a run keeps its finished shards; "
                      "an endpoint's answers of an unfinished shard are asked again)")


REQUESTS_PREFIX = ".requests-"  # in a run folder: one file per model, one byte per request the run's command sent


class SharedRequestBudget(RequestBudget):
    """One run command's budget of a model, shared by every shard and worker of the run: each request appends one
    byte to ``<run folder>/.requests-<model hash>`` under ``flock``, so the file's size is the count (a kill
    never leaves half a count) wherever the run's workers are (they share the run folder)."""

    def __init__(self, folder: Path, model: str, max_requests: int | None) -> None:
        super().__init__(model, max_requests)
        self.path = Path(folder) / f"{REQUESTS_PREFIX}{hashlib.sha256(model.encode('utf-8')).hexdigest()[:16]}"

    def take(self) -> None:
        if self.max_requests is None:
            return
        from alict_core.common.manifest import open_lock_file

        with self._lock, open_lock_file(self.path) as handle:
            try:
                import fcntl
            except ImportError:  # not POSIX: the in-process count only
                fcntl = None  # type: ignore[assignment]
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            sent = os.fstat(handle.fileno()).st_size
            if sent >= self.max_requests:
                raise cap_reached(self.model, self.max_requests)
            handle.write("r")
            handle.flush()
            self.used = sent + 1


def clear_request_counts(folder: Path) -> None:
    """Forget what an earlier command of a run sent (a cap is per command: a resume has its own)."""
    for path in Path(folder).glob(f"{REQUESTS_PREFIX}*"):
        path.unlink(missing_ok=True)


@dataclass
class RunScope:
    """What one run spent per model, and which answers it could not parse."""

    budgets: dict[int, RequestBudget] = field(default_factory=dict)
    unparsed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # model name → (text, answer)
    _pending: dict[str, set[str]] = field(default_factory=dict)

    def budget(self, key: int, model: str, max_requests: int | None) -> RequestBudget:
        if self.requests_dir is not None:  # a run's shard: the budget of the whole run command
            return self.budgets.setdefault(key, SharedRequestBudget(self.requests_dir, model, max_requests))
        return self.budgets.setdefault(key, RequestBudget(model, max_requests))

    requests_dir: Path | None = None  # the run folder whose shards share request budgets

    @contextmanager
    def shared_budgets(self, folder: Path) -> Iterator[None]:
        """Budgets taken inside are the run's in ``folder`` (shared by its shards and workers)."""
        before, kept = self.requests_dir, self.budgets
        self.requests_dir, self.budgets = Path(folder), {}
        try:
            yield
        finally:
            self.requests_dir, self.budgets = before, kept

    volatile: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # model → text → row, this run only
    answers: dict[str, Any] = field(default_factory=dict)  # an endpoint's prediction cache of this run only

    def record_unparsed(self, model: str, text: str, answer: str) -> None:
        self.unparsed.setdefault(model, []).append((text, answer))
        self._pending.setdefault(model, set()).add(text)

    def keep_volatile(self, model: str, texts: list[str], rows: list[list[float]]) -> None:
        """Rows that must not be cached but are reused within this run (so a text is asked once per run)."""
        self.volatile.setdefault(model, {}).update(zip(texts, rows, strict=True))

    def take_unparsed(self, model: str) -> set[str]:
        """Texts of ``model`` whose answers were unparsed since the last call (never to be cached)."""
        return self._pending.pop(model, set())

    def unparsed_counts(self) -> dict[str, int]:
        return {model: len(rows) for model, rows in self.unparsed.items() if rows}


_SCOPE: ContextVar[RunScope | None] = ContextVar("alict_run_scope", default=None)


def current_scope() -> RunScope | None:
    return _SCOPE.get()


@contextmanager
def run_scope() -> Iterator[RunScope]:
    """Open a run (or join the one already open in this thread)."""
    outer = _SCOPE.get()
    if outer is not None:
        yield outer
        return
    scope = RunScope()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)
