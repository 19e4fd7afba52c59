"""Model arguments given as text (``--models http:url=…,batch_size=8``, the Run page's form) read as the types the
adapter declares: every value of ``name:key=value`` is text, and an adapter given ``batch_size="8"`` or
``headers="X"`` failed at its first request with Python's own message (or exit 3)."""

from __future__ import annotations

import math
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from alict_core.common.errors import ModelError

TRUE, FALSE = frozenset({"true", "yes", "1", "on"}), frozenset({"false", "no", "0", "off"})
WHOLE = re.compile(r"[+-]?\d{1,18}")
AT_LEAST_ONE = frozenset({"batch_size", "max_length", "max_requests"})  # 0 is no batch (range step 0), no text


def _kinds(hint: Any) -> set[Any]:
    """The plain types a parameter annotation allows (``int | None`` → {int, NoneType})."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return {kind for arg in typing.get_args(hint) for kind in _kinds(arg)}
    origin = typing.get_origin(hint)
    return {origin if origin is not None else hint}


def _read(model: str, key: str, text: str, kinds: set[Any]) -> Any:
    """``text`` as the first of ``kinds`` it is meant as; ModelError naming the model and argument otherwise."""
    said = f"model {model!r}: {key}={text[:40]!r}"
    if type(None) in kinds and text.strip().lower() == "none":
        return None
    if bool in kinds:
        if text.strip().lower() in TRUE | FALSE:
            return text.strip().lower() in TRUE
        raise ModelError(f"{said} is not true or false")
    if int in kinds:
        least = 1 if key in AT_LEAST_ONE else 0
        if not WHOLE.fullmatch(text.strip()) or int(text) < least:
            raise ModelError(f"{said} is not a whole number >= {least}")
        return int(text)
    if float in kinds:
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or number < 0:
            raise ModelError(f"{said} is not a finite number >= 0")
        return number
    if kinds & {Mapping, dict}:  # 'k1:v1;k2:v2'
        pairs = [part.split(":", 1) for part in text.split(";") if part.strip()]
        if not pairs or any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
            raise ModelError(f"{said} is not a mapping; write it as key:value;key:value")
        return {name.strip(): value.strip() for name, value in pairs}
    return text


def typed_arguments(adapter: type, kwargs: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``kwargs`` with each text value read as the type ``adapter.__init__`` declares for it (text kept for ``str``
    and path parameters, and for names the adapter does not declare: its own signature check reports those)."""
    hints = typing.get_type_hints(adapter.__dict__["__init__"])
    typed: dict[str, Any] = {}
    for key, value in kwargs.items():
        kinds = _kinds(hints[key]) if key in hints else set()
        if isinstance(value, str) and kinds and not kinds & {str, Path}:
            value = _read(model, key, value, kinds)
        typed[key] = value
    return typed
