"""Lazy access to core functions that may not be installed/built yet (keeps first paint fast)."""

from __future__ import annotations

import importlib
from typing import Any

from alict_core.errors import AlictError


class Unavailable(AlictError):
    """A core feature is not available (not written, not built or not installed); says how to enable it."""


def core_attr(modules: str | tuple[str, ...], attr: str, how: str = "") -> Any:
    """Import ``attr`` from the first of ``modules`` that has it, else raise Unavailable naming ``how``."""
    names = (modules,) if isinstance(modules, str) else modules
    problems: list[str] = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and not name.startswith(exc.name) and exc.name not in name:
                # the module exists but one of its own dependencies is missing
                raise Unavailable(f"{name} cannot be imported: missing package {exc.name!r}") from exc
            problems.append(f"{name} not found")
            continue
        if hasattr(module, attr):
            return getattr(module, attr)
        problems.append(f"{name} has no {attr}")
    hint = f" — {how}" if how else ""
    raise Unavailable(f"{attr} is not available yet ({'; '.join(problems)}){hint}")


def has_core(modules: str | tuple[str, ...], attr: str) -> bool:
    """True when :func:`core_attr` would succeed."""
    try:
        core_attr(modules, attr)
        return True
    except Unavailable:
        return False
