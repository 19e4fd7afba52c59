"""Train / dev / test texts and labels of each task's labelled corpus (SST, HateXplain)."""

from __future__ import annotations

from typing import Callable


def task_splits(task: str) -> dict[str, tuple[list[str], list[str]]]:
    """{split: (texts, labels)} for train/dev/test of a task's labelled corpus."""
    if task == "sentiment":
        from alict_core.data.sst import load_sst_sentences

        rows = load_sst_sentences(("train", "dev", "test"))
    elif task == "hate_speech":
        from alict_core.data.hatexplain import load_hatexplain

        rows = load_hatexplain()
    else:
        from alict_core.common.errors import AlictError

        raise AlictError(f"unknown task {task!r}; tasks: sentiment, hate_speech")
    out: dict[str, tuple[list[str], list[str]]] = {s: ([], []) for s in ("train", "dev", "test")}
    for row in rows:
        out[row.split][0].append(row.text)
        out[row.split][1].append(row.label)
    return out


def source_split_lookup(task: str) -> Callable[[str], str | None]:
    """A function: corpus item id (a seed's ``source_ids`` entry) → its official split, or None if unknown.

    SST ids carry their split (``sst-test-12``, ``sst-train-3-p4``); HateXplain ids (``hx-<post id>``) are
    looked up in ``post_id_divisions.json``.
    """
    if task == "sentiment":
        return lambda source_id: _sst_split(source_id)
    if task == "hate_speech":
        from alict_core.common.jsonl import read_json
        from alict_core.data.files import data_file
        from alict_core.data.hatexplain import SPLIT_NAMES

        divisions = read_json(data_file("hatexplain/post_id_divisions.json"))
        split_of = {f"hx-{pid}": SPLIT_NAMES[name] for name, ids in divisions.items() for pid in ids}
        return split_of.get
    from alict_core.common.errors import AlictError

    raise AlictError(f"unknown task {task!r}; tasks: sentiment, hate_speech")


def _sst_split(source_id: str) -> str | None:
    parts = str(source_id).split("-")
    return parts[1] if len(parts) >= 3 and parts[0] == "sst" and parts[1] in ("train", "dev", "test") else None
