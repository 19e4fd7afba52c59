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


def run_lc_id(value: str, known: Sequence[str]) -> str:
    """The LC among a run's ``known`` ids named by ``value``: a full id, or a short form (``4``, ``lc04``) of a task's
    own LC only. A suite test named ``calc4`` is never LC 4, and a suite LC listed first never decides the task (a
    short form matched ``calc:calc4`` by its last digits, and was refused beside ``sentiment-lc04``)."""
    from alict_core.tasks import TASK_NAMES

    if value in known:
        return value
    hits = set()
    for task in TASK_NAMES:
        own = [lc for lc in known if lc.startswith(f"{task}-")]
        if own:
            try:
                hits.add(parse_lc_id(task, value, own))
            except SpecError:
                continue
    if len(hits) == 1:
        return hits.pop()
    raise SpecError(f"LC {value!r} is not in this run; its LCs are: {', '.join(known)}")
