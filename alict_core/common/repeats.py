"""Lists given by a user (an option's entries, files, LCs) must not name one thing twice."""

from __future__ import annotations

from pathlib import PurePath
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
        if found in seen:  # paths by their text: "PosixPath('x')" is Python's, not the user's
            shown, first = (repr(str(x)) if isinstance(x, PurePath) else repr(x) for x in (item, seen[found]))
            alias = "" if seen[found] == item else f" ({shown} and {first} are the same)"
            raise AlictError(f"{option} names {shown} twice{alias}; name each once")
        seen[found] = item
    return list(items)
