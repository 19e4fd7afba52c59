"""Deduplicate and batch model inputs: the one helper behind every "predict each distinct text once" loop."""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Iterator, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)


def distinct(items: Iterable[T], skip: Callable[[T], bool] | None = None) -> list[T]:
    """The distinct items in first-seen order, leaving out those ``skip`` says are done (e.g. cached)."""
    unique = dict.fromkeys(items)
    return [item for item in unique if skip is None or not skip(item)]


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items (``size`` below 1 counts as 1)."""
    size = max(1, int(size))
    for start in range(0, len(items), size):
        yield items[start : start + size]
