"""Plain records shared by the corpora."""

from __future__ import annotations

from dataclasses import dataclass

SENTIMENT_LABELS = ("negative", "neutral", "positive")
HATE_LABELS = ("non-hateful", "hateful")
TASK_LABELS = {"sentiment": SENTIMENT_LABELS, "hate_speech": HATE_LABELS}
TASKS = tuple(TASK_LABELS)


@dataclass(frozen=True)
class LabelledText:
    """One labelled text of a corpus (a sentence, or an SST phrase)."""

    id: str
    text: str
    label: str
    split: str
    tokens: tuple[str, ...]
