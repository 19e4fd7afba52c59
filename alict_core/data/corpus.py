"""Annotated corpora per task, cached on disk (Parquet) keyed by corpus content + annotator version."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from alict_core.common.config import artefact_dir, cache_dir
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_files, hash_json
from alict_core.data.annotate import Annotation, annotate_token_lists, annotator_version
from alict_core.data.files import data_file
from alict_core.data.records import TASK_LABELS, LabelledText
from alict_core.tasks import TASKS

CACHE_FORMAT = 2  # bump when the Parquet columns change
CORPUS_OF_TASK = {name: task.corpus for name, task in TASKS.items()}
CORPUS_FILES = {task.corpus: list(task.corpus_files) for task in TASKS.values()}
LEXICON_FILES = [
    "sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz",
    "hatecheck/template_placeholders.csv",
    "hurtlex/hurtlex_EN.tsv",
]


@dataclass(frozen=True)
class CorpusItem:
    """One labelled, annotated text; ``lower`` and ``class_set`` are precomputed for fast predicates."""

    id: str
    text: str
    label: str
    split: str
    annotation: Annotation
    lower: tuple[str, ...] = field(default=())
    class_set: frozenset[str] = field(default=frozenset())

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.annotation.tokens


def make_item(record: LabelledText, annotation: Annotation) -> CorpusItem:
    return CorpusItem(
        record.id, record.text, record.label, record.split, annotation,
        tuple(t.lower() for t in annotation.tokens), frozenset().union(*annotation.classes),
    )


@dataclass
class Corpus:
    name: str
    task: str
    items: list[CorpusItem]
    content_hash: str

    @property
    def labels(self) -> tuple[str, ...]:
        return TASK_LABELS[self.task]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[CorpusItem]:
        return iter(self.items)

    def by_id(self) -> dict[str, CorpusItem]:
        return {item.id: item for item in self.items}


def _records(name: str) -> list[LabelledText]:
    if name == "sst":
        from alict_core.data.sst import load_sst_sentences

        return load_sst_sentences()
    from alict_core.data.hatexplain import load_hatexplain

    return load_hatexplain()


def corpus_hash(name: str) -> str:
    files = [data_file(rel) for rel in CORPUS_FILES[name] + LEXICON_FILES]
    return hash_json(
        {"files": hash_files(files), "annotator": annotator_version(), "corpus": name, "format": CACHE_FORMAT}
    )


def load_corpus(task: str, progress: Callable[[int, int], None] | None = None) -> Corpus:
    """The annotated corpus of ``task`` ('sentiment' → SST sentences, 'hate_speech' → HateXplain).

    The first call annotates with spaCy and writes a Parquet cache; later calls (any process) read it.
    """
    if task not in CORPUS_OF_TASK:
        raise AlictError(f"unknown task {task!r}; valid tasks: {', '.join(CORPUS_OF_TASK)}")
    with _LOADING:  # once per process (threads share it), whatever progress callback the caller passes
        if task not in _LOADED:
            _LOADED[task] = _load_corpus(task, progress)
        return _LOADED[task]


def is_annotated(task: str) -> bool:
    """Whether ``task``'s corpus is loaded in this process or annotated on disk (loading it then reads a Parquet
    file: seconds, not the minutes of an annotation run)."""
    if task in _LOADED:
        return True
    if task not in CORPUS_OF_TASK:
        raise AlictError(f"unknown task {task!r}; valid tasks: {', '.join(CORPUS_OF_TASK)}")
    name = CORPUS_OF_TASK[task]
    return (cache_dir() / "annotations" / f"{name}-{corpus_hash(name)}.parquet").exists()  # a look creates nothing


_LOADED: dict[str, Corpus] = {}
_LOADING = threading.Lock()


def _load_corpus(task: str, progress) -> Corpus:
    import pandas as pd

    name = CORPUS_OF_TASK[task]
    key = corpus_hash(name)
    path = artefact_dir("annotations") / f"{name}-{key}.parquet"
    from alict_core.common.manifest import load_checked, save_checked

    frame = load_checked(path, "annotations", key, _read_annotations, adopt_legacy=True)
    if frame is None:
        records = _records(name)
        total = len(records)
        annotations = annotate_token_lists(
            (r.tokens for r in records), progress=(lambda done: progress(done, total)) if progress else None
        )
        rows = [{"id": r.id, "text": r.text, "label": r.label, "split": r.split, **a.to_dict()}
                for r, a in zip(records, annotations, strict=True)]
        save_checked(path, "annotations", key, len(rows), lambda tmp: pd.DataFrame(rows).to_parquet(tmp, index=False))
        frame = pd.read_parquet(path)
    interned: dict[tuple[str, ...], frozenset[str]] = {}

    def as_set(classes) -> frozenset[str]:
        key_ = tuple(classes)
        if key_ not in interned:
            interned[key_] = frozenset(key_)
        return interned[key_]

    items = []
    for rid, text, label, split, tk, tg, up, lm, cl in zip(
        frame["id"], frame["text"], frame["label"], frame["split"],
        frame["tokens"], frame["tags"], frame["upos"], frame["lemmas"], frame["classes"],
        strict=True,
    ):
        tokens = tuple(tk)
        annotation = Annotation(tokens, tuple(tg), tuple(up), tuple(lm), tuple(as_set(c) for c in cl))
        record = LabelledText(rid, text, label, split, tokens)
        items.append(make_item(record, annotation))
    return Corpus(name, task, items, key)


ANNOTATION_COLUMNS = ("id", "text", "label", "split", "tokens", "tags", "upos", "lemmas", "classes")


def _read_annotations(path: Path):
    """The annotation table, refusing an empty one or one without the expected columns."""
    import pandas as pd

    frame = pd.read_parquet(path)
    missing = [c for c in ANNOTATION_COLUMNS if c not in frame.columns]
    if missing or not len(frame):
        raise ValueError(f"annotation table lacks columns {missing}" if missing else "empty annotation table")
    return frame


def corpus_from_records(name: str, task: str, records: list[LabelledText]) -> Corpus:
    """An annotated in-memory corpus from hand-made records (tests, user uploads); not cached."""
    annotations = annotate_token_lists(r.tokens for r in records)
    items = [make_item(r, a) for r, a in zip(records, annotations, strict=True)]
    return Corpus(name, task, items, hash_json([(r.id, r.text, r.label) for r in records]))
