"""Vocabularies for the masking-template generator G: corpus words by frequency, optionally with their POS."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from alict_core.common.config import artefact_dir
from alict_core.common.hashing import hash_files, hash_json
from alict_core.common.jsonl import read_json, write_json
from alict_core.common.manifest import load_checked, save_checked
from alict_core.data.files import data_file
from alict_core.data.records import TASK_LABELS
from alict_core.data.splits import corpus_rows
from alict_core.explain.base import ExplainError
from alict_core.tasks import TASKS

CORPUS_FILES = {name: task.corpus_files for name, task in TASKS.items()}
POS_TAGGED_SENTENCES = 3000


def is_word(token: str) -> bool:
    return any(ch.isalpha() for ch in token)


@dataclass(frozen=True)
class Vocabulary:
    """Words G may put in masked positions, with sampling weights and (optionally) a UPOS tag per entry."""

    words: tuple[str, ...]
    weights: tuple[float, ...]
    pos: tuple[str, ...] | None = None
    source: str = "custom"

    def __post_init__(self) -> None:
        if not self.words:
            raise ExplainError(f"vocabulary {self.source!r} is empty: G needs words to fill masked positions")
        if len(self.weights) != len(self.words) or (self.pos is not None and len(self.pos) != len(self.words)):
            raise ExplainError(f"vocabulary {self.source!r}: words, weights and pos differ in length")

    @classmethod
    def from_words(cls, words: Iterable[str], source: str = "custom") -> "Vocabulary":
        """Uniform sampling over the distinct given words."""
        distinct = tuple(dict.fromkeys(w for w in words if w and not w.isspace()))
        return cls(distinct, tuple(1.0 for _ in distinct), None, source)

    @classmethod
    def from_counts(
        cls, counts: Counter, size: int = 5000, weighting: str = "uniform", source: str = "custom"
    ) -> "Vocabulary":
        """The ``size`` most frequent entries.

        Keys are words or (word, pos) pairs; weighting is 'uniform' or 'frequency'.
        """
        if weighting not in ("uniform", "frequency"):
            raise ExplainError(f"vocabulary weighting must be 'uniform' or 'frequency', got {weighting!r}")
        top = counts.most_common(size)
        keys = [key for key, _ in top]
        tagged = bool(keys) and isinstance(keys[0], tuple)
        words = tuple(k[0] if tagged else k for k in keys)
        pos = tuple(k[1] for k in keys) if tagged else None
        weights = tuple(float(c) if weighting == "frequency" else 1.0 for _, c in top)
        return cls(words, weights, pos, source)

    def sample(self, rng: np.random.Generator, n: int, pos: str | None = None) -> list[str]:
        """``n`` words drawn with replacement; restricted to tag ``pos`` when the vocabulary has one (else all)."""
        index = np.arange(len(self.words))
        if pos is not None and self.pos is not None:
            same = index[np.asarray(self.pos) == pos]
            if len(same):
                index = same
        weights = np.asarray(self.weights)[index]
        picks = rng.choice(index, size=n, p=weights / weights.sum())
        return [self.words[i] for i in picks]


def task_of_labels(labels: Sequence[str]) -> str | None:
    for task, names in TASK_LABELS.items():
        if tuple(labels) == tuple(names):
            return task
    return None


def _corpus_tokens(task: str) -> list[tuple[str, ...]]:
    if task in TASKS:
        return [row.tokens for row in corpus_rows(task)]
    raise ExplainError(f"no default vocabulary for task {task!r}; valid tasks: {', '.join(CORPUS_FILES)}")


def _count(task: str, with_pos: bool) -> list[list]:
    sentences = _corpus_tokens(task)
    if not with_pos:
        counts = Counter(t.lower() for s in sentences for t in s if is_word(t))
        return [[w, None, c] for w, c in counts.most_common()]
    from spacy.tokens import Doc

    from alict_core.data.nlp import get_nlp

    nlp = get_nlp()
    rng = np.random.default_rng(0)
    chosen = rng.choice(len(sentences), size=min(POS_TAGGED_SENTENCES, len(sentences)), replace=False)
    docs = nlp.pipe((Doc(nlp.vocab, words=list(sentences[i])) for i in sorted(chosen)), batch_size=256)
    tagged = Counter((t.text.lower(), t.pos_) for doc in docs for t in doc if is_word(t.text))
    return [[w, p, c] for (w, p), c in tagged.most_common()]


@lru_cache(maxsize=8)
def corpus_vocabulary(task: str, size: int = 5000, weighting: str = "uniform", with_pos: bool = False) -> Vocabulary:
    """Corpus words (SST for sentiment, HateXplain for hate speech) by frequency, lower-cased, words only.

    Counts are cached as JSON under ``artefact_dir('explain')`` keyed by the corpus files' content hash.
    """
    if task not in CORPUS_FILES:
        raise ExplainError(f"no default vocabulary for task {task!r}; valid tasks: {', '.join(CORPUS_FILES)}")
    files = [data_file(rel) for rel in CORPUS_FILES[task]]
    key = hash_json({"task": task, "with_pos": with_pos, "data": hash_files(files), "n_pos": POS_TAGGED_SENTENCES})
    path = artefact_dir("explain") / f"vocabulary-{task}-{key}.json"
    rows = load_checked(path, "vocabulary", key, read_json)
    if rows is None:
        rows = _count(task, with_pos)
        save_checked(path, "vocabulary", key, len(rows), lambda tmp: write_json(tmp, rows))
    counts = Counter({(w, p) if with_pos else w: c for w, p, c in rows})
    return Vocabulary.from_counts(counts, size=size, weighting=weighting, source=f"{task} corpus")


def default_vocabulary(labels: Sequence[str], with_pos: bool = False) -> Vocabulary:
    """The corpus vocabulary of the task whose label set is ``labels``."""
    task = task_of_labels(labels)
    if task is None:
        raise ExplainError(
            f"labels {tuple(labels)} match no task ({', '.join(f'{t}: {names}' for t, names in TASK_LABELS.items())}); "
            "pass vocabulary= explicitly"
        )
    return corpus_vocabulary(task, with_pos=with_pos)
