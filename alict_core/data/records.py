"""Plain records shared by the corpora."""

from __future__ import annotations

from dataclasses import dataclass

from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASKS

SENTIMENT_LABELS = SENTIMENT.labels
HATE_LABELS = HATE_SPEECH.labels
TASK_LABELS = {name: task.labels for name, task in TASKS.items()}  # name → labels (see alict_core.tasks)


@dataclass(frozen=True)
class LabelledText:
    """One labelled text of a corpus (a sentence, or an SST phrase)."""

    id: str
    text: str
    label: str
    split: str
    tokens: tuple[str, ...]
