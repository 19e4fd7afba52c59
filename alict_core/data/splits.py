"""Train / dev / test texts and labels of each task's labelled corpus (SST, HateXplain)."""

from __future__ import annotations

from typing import Callable

from alict_core.data.checked import reads_data
from alict_core.data.records import LabelledText
from alict_core.tasks import SENTIMENT, TASKS, task_list

SPLITS = ("train", "dev", "test")


def corpus_rows(task: str, splits: tuple[str, ...] = SPLITS) -> list[LabelledText]:
    """The labelled texts of ``splits`` of a known task's corpus, in the corpus's order."""
    if TASKS[task].corpus == SENTIMENT.corpus:
        from alict_core.data.sst import load_sst_sentences

        return load_sst_sentences(splits)
    from alict_core.data.hatexplain import load_hatexplain

    rows = load_hatexplain()
    return rows if splits == SPLITS else [row for row in rows if row.split in splits]


def task_splits(task: str) -> dict[str, tuple[list[str], list[str]]]:
    """{split: (texts, labels)} for train/dev/test of a task's labelled corpus."""
    if task not in TASKS:
        from alict_core.common.errors import AlictError

        raise AlictError(f"unknown task {task!r}; tasks: {task_list()}")
    rows = corpus_rows(task)
    out: dict[str, tuple[list[str], list[str]]] = {s: ([], []) for s in SPLITS}
    for row in rows:
        out[row.split][0].append(row.text)
        out[row.split][1].append(row.label)
    return out


def source_split_lookup(task: str) -> Callable[[str], str | None]:
    """A function: corpus item id (a seed's ``source_ids`` entry) → its official split, or None if unknown.

    SST ids carry their split (``sst-test-12``, ``sst-train-3-p4``); HateXplain ids (``hx-<post id>``) are
    looked up in ``post_id_divisions.json``.
    """
    if task == SENTIMENT.name:
        return lambda source_id: _sst_split(source_id)
    if task in TASKS:
        return _hatexplain_split_of().get
    from alict_core.common.errors import AlictError

    raise AlictError(f"unknown task {task!r}; tasks: {task_list()}")


@reads_data("hatexplain/post_id_divisions.json")  # damaged ({"oops": ...}, a list): one data error, not exit 3
def _hatexplain_split_of() -> dict[str, str]:
    from alict_core.common.jsonl import read_json
    from alict_core.data.files import data_file
    from alict_core.data.hatexplain import SPLIT_NAMES

    divisions = read_json(data_file("hatexplain/post_id_divisions.json"))
    return {f"hx-{pid}": SPLIT_NAMES[name] for name, ids in divisions.items() for pid in ids}


def _sst_split(source_id: str) -> str | None:
    parts = str(source_id).split("-")
    return parts[1] if len(parts) >= 3 and parts[0] == "sst" and parts[1] in ("train", "dev", "test") else None
