"""One line for a pydantic validation error: the field at fault (with its item index) and what is wrong."""

from __future__ import annotations

import re

from pydantic import ValidationError

_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a nested field; union member tags ("int", "list[str]", "Meta") are not
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "bytes", "none", "list", "dict", "tuple", "set"})


def _part(part: object) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    name = str(part)
    return f".{name}" if _FIELD_NAME.fullmatch(name) and name not in _TYPE_TAGS else ""


def first_problem(exc: ValidationError) -> str:
    """``field 'x.y': message`` of the first field's most specific validation error (and how many more).

    Of a union's tries on that field, the deepest names the element at fault: ``labels: [true, 0]`` is
    ``labels[0]``'s bool, not "a valid integer (got list)" from the try of the whole list as one label."""
    errors = exc.errors()
    field_loc = errors[0]["loc"][:1]
    error = max((e for e in errors if e["loc"][:1] == field_loc), key=lambda e: len(e["loc"]))  # first of the deepest
    parts = list(error["loc"])  # field, then nested fields and item indices; union member tags are dropped
    loc = (str(parts[0]) + "".join(_part(p) for p in parts[1:])) if parts else ""
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "missing":
        message = "is missing"
    elif error["type"] == "extra_forbidden":
        message = "is not a known field"
    elif error["type"].endswith("_type") or error["type"] in ("literal_error", "list_type"):
        message = f"{message} (got {type(error.get('input')).__name__})"
    more = len({e["loc"][:1] for e in exc.errors()}) - 1
    extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"field {loc!r}: {message}{extra}" if loc else f"{message}{extra}"
