"""Plain presentation helpers shared by pages: task titles and core records as table rows."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

TASK_TITLES = {"sentiment": "Sentiment (SST)", "hate_speech": "Hate speech (HateXplain)"}
TASKS = tuple(TASK_TITLES)


def as_row(obj: Any) -> dict[str, Any]:
    """A plain dict of a core record (``to_dict()``, pydantic model, dataclass or mapping)."""
    if isinstance(obj, dict):
        return obj
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return dict(vars(obj))


def as_rows(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Plain dicts of core records (e.g. an ExpansionSet's expansions)."""
    return [as_row(item) for item in items]
