"""What every constraint module shares: the one error of expansion and reading a field of a dict or an object."""

from __future__ import annotations

from typing import Any

from alict_core.common.errors import AlictError


class ExpansionError(AlictError):
    """A masked sentence, seed or fill that cannot be expanded (message names which one)."""


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or dict key ``name`` (seeds and masked sentences may be objects or dicts)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)
