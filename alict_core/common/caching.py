"""One bounded, thread-safe load-once cache for everything the process loads once and shares.

``LoadOnceCache.get(key, load)`` runs ``load()`` at most once per key at a time: a second caller asking
for a key that is loading waits for that load (per-key lock) instead of starting another, while callers
of other keys go on (no global lock is held during a load). At most ``max_entries`` values are kept; the
least recently used one is evicted, and its ``close()`` is called when it has one (HTTP sessions).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")
log = logging.getLogger(__name__)


def close_quietly(value: object) -> None:
    """Call ``value.close()`` when it exists; a failure is logged, never raised into the caller."""
    close = getattr(value, "close", None)
    if callable(close):
        try:
            close()
        except OSError as exc:  # closing a socket that is already gone
            log.warning("closing %r failed: %s", value, exc)


class LoadOnceCache(Generic[V]):
    """A bounded LRU map whose values are loaded once per key, with a lock per key being loaded."""

    def __init__(self, name: str, max_entries: int = 16, on_evict: Callable[[V], None] | None = close_quietly) -> None:
        if max_entries < 1:
            raise ValueError(f"cache {name!r}: max_entries must be >= 1, got {max_entries}")
        self.name, self.max_entries, self.on_evict = name, max_entries, on_evict
        self._values: OrderedDict[Hashable, V] = OrderedDict()
        self._loading: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()  # guards the two dicts only, never held while loading
        self.loads = 0

    def get(self, key: Hashable, load: Callable[[], V]) -> V:
        """The value of ``key``, loading it with ``load()`` when absent (once, however many callers wait)."""
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key]
                key_lock = self._loading.setdefault(key, threading.Lock())
            with key_lock:
                with self._lock:
                    if key in self._values:  # loaded by the caller we waited for
                        continue
                    if self._loading.get(key) is not key_lock:  # a failed load's lock was dropped: start over
                        continue
                try:
                    value = load()
                    self.loads += 1
                    self._store(key, value)
                    return value
                finally:
                    with self._lock:
                        if self._loading.get(key) is key_lock:
                            del self._loading[key]

    def _store(self, key: Hashable, value: V) -> None:
        evicted = []
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.max_entries:
                evicted.append(self._values.popitem(last=False)[1])
        for old in evicted:
            log.info("cache %s: evicted one entry (bound %d)", self.name, self.max_entries)
            if self.on_evict is not None:
                self.on_evict(old)

    def peek(self, key: Hashable) -> V | None:
        with self._lock:
            return self._values.get(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def clear(self) -> None:
        """Forget every value (closing those that can be closed)."""
        with self._lock:
            values = list(self._values.values())
            self._values.clear()
        for value in values:
            if self.on_evict is not None:
                self.on_evict(value)
