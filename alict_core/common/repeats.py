"""Lists given by a user (an option's entries, files, LCs) must not name one thing twice."""

from __future__ import annotations

from typing import Callable, Hashable, Sequence, TypeVar

from alict_core.common.errors import AlictError

T = TypeVar("T")


def distinct(items: Sequence[T], option: str, key: Callable[[T], Hashable] | None = None) -> list[T]:
    """``items`` when no two are the same (by ``key``); else one error naming the option and the item given twice.

    A repeated item is never right: it was merged silently, ran twice, or (``--models vader,vader``) was refused
    only after the work had started."""
    seen: dict[Hashable, T] = {}
    for item in items:
        found = key(item) if key is not None else item
        if found in seen:
            alias = "" if seen[found] == item else f" ({item!r} and {seen[found]!r} are the same)"
            raise AlictError(f"{option} names {item!r} twice{alias}; name each once")
        seen[found] = item
    return list(items)
