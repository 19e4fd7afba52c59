"""Strict LC ids: ``sentiment-lc04``, ``lc04``/``LC4`` and ``4`` name LC 4 of the task; nothing else does."""

from __future__ import annotations

import re
from typing import Sequence

from alict_core.common.errors import SpecError

_SHORT = re.compile(r"^(?:lc)?0*([0-9]{1,3})$", re.ASCII)
_EXTENSION = re.compile(r"^x0*([0-9]{1,3})$", re.ASCII)


def parse_lc_id(task: str, value: object, known: Sequence[str]) -> str:
    """The full id among ``known`` named by ``value``, or a SpecError listing the task's LCs.

    Accepted: a full id (``sentiment-lc04``, ``sentiment-x01``), ``lc04``, ``LC4``, ``4`` or ``04``.
    Refused: other tasks' ids, signs, decimals, suffixes (``-4``, ``1.4``, ``4x``) and unknown numbers.
    """
    listing = ", ".join(known)
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"empty LC id for task {task}; valid names: {listing}")
    wanted = value.strip().lower()
    if wanted in known:
        return wanted
    extension = _EXTENSION.match(wanted)
    if extension and f"{task}-x{int(extension.group(1)):02d}" in known:
        return f"{task}-x{int(extension.group(1)):02d}"
    match = _SHORT.match(wanted)
    if match:
        full = f"{task}-lc{int(match.group(1)):02d}"
        if full in known:
            return full
    raise SpecError(f"unknown LC {value.strip()[:40]!r} for task {task}; valid names: {listing} "
                    "(or their short forms lcNN / NN, xNN for extensions)")
