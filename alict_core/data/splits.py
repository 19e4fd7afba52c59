"""The labelled corpus of a task as official train / dev / test splits of (texts, labels)."""

from __future__ import annotations

SPLIT_NAMES = ("train", "dev", "test")


def task_splits(task: str) -> dict[str, tuple[list[str], list[str]]]:
    """{split: (texts, labels)} for SST sentences (sentiment) or HateXplain posts (hate speech)."""
    if task == "sentiment":
        from alict_core.data.sst import load_sst_sentences

        rows = load_sst_sentences(SPLIT_NAMES)
    elif task == "hate_speech":
        from alict_core.data.hatexplain import load_hatexplain

        rows = load_hatexplain()
    else:
        from alict_core.errors import AlictError

        raise AlictError(f"unknown task {task!r}; tasks: sentiment, hate_speech")
    out: dict[str, tuple[list[str], list[str]]] = {s: ([], []) for s in SPLIT_NAMES}
    for row in rows:
        out[row.split][0].append(row.text)
        out[row.split][1].append(row.label)
    return out
