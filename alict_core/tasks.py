"""The classification tasks: the one place their names, label sets and corpora live.

Code that behaves differently per task looks the task up here (``TASKS[name]``) instead of comparing strings;
every command with ``--task`` declares it with :func:`add_task_arg`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    """One task: its name on the command line and in specs, its labels and its annotated corpus."""

    name: str
    title: str  # shown in the app's task picker
    labels: tuple[str, ...]
    corpus: str  # the corpus's short name (its cache key and data folder)
    corpus_title: str
    corpus_files: tuple[str, ...]  # under the data folder
    default_label: str  # what a chat model's unreadable answer counts as
    offline_model: str  # the offline classifier built for the task (NLPLego's default judge)
    cased: bool  # whether case carries meaning (a case-only change is a real edit)
    binary_rule: bool  # whether a 2-label model is read through the paper's binary → 3-class rule


SENTIMENT = Task(
    name="sentiment", title="Sentiment (SST)", labels=("negative", "neutral", "positive"),
    corpus="sst", corpus_title="Stanford Sentiment Treebank (SST)",
    corpus_files=("sst/train.txt", "sst/dev.txt", "sst/test.txt"),
    default_label="neutral", offline_model="minilm-sst", cased=True, binary_rule=True,
)
HATE_SPEECH = Task(
    name="hate_speech", title="Hate speech (HateXplain)", labels=("non-hateful", "hateful"),
    corpus="hatexplain", corpus_title="HateXplain",
    corpus_files=("hatexplain/hatexplain.csv", "hatexplain/post_id_divisions.json"),
    default_label="non-hateful", offline_model="minilm-hatexplain", cased=False, binary_rule=False,
)
TASKS: dict[str, Task] = {task.name: task for task in (SENTIMENT, HATE_SPEECH)}
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def task_list() -> str:
    """The task names for a message: ``sentiment, hate_speech``."""
    return ", ".join(TASK_NAMES)


def add_task_arg(parser: argparse.ArgumentParser, *, required: bool = False, default: str | None = None,
                 help: str | None = None) -> argparse.Action:
    """Declare ``--task`` (one of the task names) on ``parser``."""
    options: dict[str, object] = {"choices": list(TASK_NAMES)}
    if required:
        options["required"] = True
    else:
        options["default"] = default
    if help is not None:
        options["help"] = help
    return parser.add_argument("--task", **options)  # type: ignore[arg-type]
