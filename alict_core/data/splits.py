"""Train / dev / test texts and labels of each task's labelled corpus (SST, HateXplain)."""

from __future__ import annotations


def task_splits(task: str) -> dict[str, tuple[list[str], list[str]]]:
    """{split: (texts, labels)} for train/dev/test of a task's labelled corpus."""
    if task == "sentiment":
        from alict_core.data.sst import load_sst_sentences

        rows = load_sst_sentences(("train", "dev", "test"))
    elif task == "hate_speech":
        from alict_core.data.hatexplain import load_hatexplain

        rows = load_hatexplain()
    else:
        from alict_core.errors import AlictError

        raise AlictError(f"unknown task {task!r}; tasks: sentiment, hate_speech")
    out: dict[str, tuple[list[str], list[str]]] = {s: ([], []) for s in ("train", "dev", "test")}
    for row in rows:
        out[row.split][0].append(row.text)
        out[row.split][1].append(row.label)
    return out
