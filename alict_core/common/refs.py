"""Safe references: run ids, suite names and file names are validated identifiers resolved inside a root.

User text (from the browser or the command line) is never joined onto a path as is; errors name the
reference and the rule, never a server path.
"""

from __future__ import annotations

import re
from pathlib import Path

from alict_core.common.errors import AlictError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


class ReferenceError_(AlictError):
    """A run id, suite or file name is not a valid identifier, or not found in its root."""


def check_name(value: object, what: str) -> str:
    """``value`` if it is a plain name (letters, digits, ``._+-``, no leading dot, <= 128 chars), else an error."""
    if not isinstance(value, str) or not NAME.match(value) or ".." in value:
        shown = repr(value)[:60] if isinstance(value, str) else type(value).__name__
        raise ReferenceError_(f"{what} {shown} is not a valid name: use letters, digits, '.', '_', '+' or '-' "
                              "(no path separators, no leading dot, at most 128 characters)")
    return value


def resolve_inside(root: Path, value: object, what: str, must_exist: bool = True) -> Path:
    """``root/value`` for a valid name that stays inside ``root`` (symlinks resolved)."""
    name = check_name(value, what)
    base = Path(root).resolve()
    path = (base / name).resolve()
    if path.parent != base:
        raise ReferenceError_(f"{what} {name!r} points outside its folder")
    if must_exist and not path.exists():
        raise ReferenceError_(f"{what} {name!r} not found")
    return path
