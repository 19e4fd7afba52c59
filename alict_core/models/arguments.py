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
from alict_core.data.records import TASK_LABELS
from alict_core.models.labels import check_task_labels

TRUE, FALSE = frozenset({"true", "yes", "1", "on"}), frozenset({"false", "no", "0", "off"})
WHOLE = re.compile(r"[+-]?[0-9]{1,18}")  # ASCII digits only ('１６' is no batch size)
# the values an adapter can use (a timeout of 0 or 1e300, 5,000 retries failed at the first request with the
# library's own text, and only when the texts were not cached yet)
RANGES: dict[str, tuple[float, float]] = {
    "batch_size": (1, 10_000), "max_length": (1, 8192), "max_requests": (1, 10_000_000), "retries": (0, 20),
    "timeout": (0.001, 3600), "backoff": (0, 60), "temperature": (0, 2), "low": (0, 1), "high": (0, 1),
    "neutral_band": (0, 1)}


def _kinds(hint: Any) -> set[Any]:
    """The plain types a parameter annotation allows (``int | None`` → {int, NoneType})."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return {kind for arg in typing.get_args(hint) for kind in _kinds(arg)}
    origin = typing.get_origin(hint)
    return {origin if origin is not None else hint}


def _read(model: str, key: str, text: str, kinds: set[Any]) -> Any:
    """``text`` as the first of ``kinds`` it is meant as; ModelError naming the model and argument otherwise."""
    said = f"model {model!r}: {key}=" + ("…" if key in ("api_key", "headers") else repr(text[:40]))  # secrets
    if type(None) in kinds and text.strip().lower() == "none":
        return None
    if bool in kinds:
        if text.strip().lower() in TRUE | FALSE:
            return text.strip().lower() in TRUE
        raise ModelError(f"{said} is not true or false")
    least, most = RANGES.get(key, (0, math.inf))
    if int in kinds:
        if not WHOLE.fullmatch(text.strip()) or not least <= int(text) <= most:
            raise ModelError(f"{said} is not a whole number from {least:g} to {most:g}")
        return int(text)
    if float in kinds:
        try:
            number = float(text) if text.isascii() else math.nan
        except ValueError:
            number = math.nan
        if not least <= number <= most:  # NaN compares False
            raise ModelError(f"{said} is not a number from {least:g} to {most:g}")
        return number
    if kinds & {Mapping, dict}:  # 'k1:v1;k2:v2'
        pairs = [part.split(":", 1) for part in text.split(";") if part.strip()]
        if not pairs or any(len(pair) != 2 or not pair[0].strip() for pair in pairs):
            raise ModelError(f"{said} is not a mapping; write it as key:value;key:value")
        names = [name.strip() for name, _ in pairs]
        if len(set(names)) < len(names):
            raise ModelError(f"{said} names one key twice; write each key once")
        return {name.strip(): value.strip() for name, value in pairs}
    return text


def typed_arguments(adapter: type, kwargs: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``kwargs`` with each text value read as the type ``adapter.__init__`` declares for it (text kept for ``str``
    and path parameters, and for names the adapter does not declare: its own signature check reports those); a
    ``fallback`` or ``label_map`` target that is no label of the task refused."""
    hints = typing.get_type_hints(adapter.__dict__["__init__"])
    typed: dict[str, Any] = {}
    for key, value in kwargs.items():
        kinds = _kinds(hints[key]) if key in hints else set()
        if isinstance(value, str) and kinds and not kinds & {str, Path}:
            value = _read(model, key, value, kinds)
        typed[key] = value
    task = typed.get("task")
    if isinstance(task, str) and task in TASK_LABELS:
        label_map = typed.get("label_map")
        check_task_labels(model, task, typed.get("fallback"), label_map if isinstance(label_map, Mapping) else None)
    return typed
