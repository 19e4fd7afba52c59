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


HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an HTTP token (RFC 9110)
HEADER_VALUE = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]*")  # no line break nor control character (a tab is allowed)


def check_header_values(model: str, api_key: Any = None, headers: Any = None) -> None:
    """ModelError, before any request, when ``api_key=`` or ``headers=`` holds what an HTTP header cannot carry: a line
    break, a control character, a character beyond Latin-1, or a header name that is no HTTP token. Was: the request
    failed as "the server did not answer valid HTTP" (no request had left), or with a codec's message, after retries
    (pass 39). The value is never echoed (a secret)."""
    values = [("api_key", api_key)] if isinstance(api_key, str) else []
    names = []
    if isinstance(headers, Mapping):
        values += [("headers", value) for value in headers.values() if isinstance(value, str)]
        names = [str(name) for name in headers]
    for key, value in values:
        if not HEADER_VALUE.fullmatch(value) or not value.isascii() and not _latin1(value):
            raise ModelError(f"model {model!r}: {key}=… holds a line break, a control character or a character "
                             "beyond Latin-1, which an HTTP header cannot carry (nothing was sent); give the value "
                             "without it (a key read from a file or variable may hold a newline)")
    if any(not HEADER_NAME.fullmatch(name) for name in names):
        raise ModelError(f"model {model!r}: headers=… names a header with a space or a character a header name cannot "
                         "hold (only letters, digits and !#$%&'*+-.^_`|~; nothing was sent); write key:value;key:value")


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


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
    check_header_values(model, typed.get("api_key"), typed.get("headers"))
    task = typed.get("task")
    if isinstance(task, str) and task in TASK_LABELS:
        label_map = typed.get("label_map")
        check_task_labels(model, task, typed.get("fallback"), label_map if isinstance(label_map, Mapping) else None)
    return typed
