"""Per-run state of shared models: request budgets (spending caps) and answers that could not be parsed.

Models are cached and shared by every session of the process, so nothing that belongs to one run may
live on them. ``with run_scope() as scope:`` opens a run (the runner does it; nested scopes reuse the outer
one); adapters ask ``current_scope()`` for their budget and report unparsed answers to it. Each thread
has its own scope (``contextvars``), so two sessions running the same model count separately.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

from alict_core.common.errors import ModelError


class RequestBudget:
    """Counts requests and refuses the one past ``max_requests`` (None: unlimited)."""

    def __init__(self, model: str, max_requests: int | None) -> None:
        self.model, self.max_requests, self.used = model, max_requests, 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.max_requests is not None and self.used >= self.max_requests:
                raise ModelError(
                    f"model {self.model!r}: request cap of {self.max_requests} per run reached; raise max_requests "
                    "to go on (finished batches are cached, a re-run resumes)"
                )
            self.used += 1


@dataclass
class RunScope:
    """What one run spent per model, and which answers it could not parse."""

    budgets: dict[int, RequestBudget] = field(default_factory=dict)
    unparsed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # model name → (text, answer)
    _pending: dict[str, set[str]] = field(default_factory=dict)

    def budget(self, key: int, model: str, max_requests: int | None) -> RequestBudget:
        return self.budgets.setdefault(key, RequestBudget(model, max_requests))

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
