"""The first import of the heavy libraries (torch, transformers, spaCy), made under one process-wide lock.

transformers resolves its names lazily (``from transformers import AutoModel`` imports submodules on first use);
two threads doing that first import at once (the app's warm-up thread and a run started in the app's first
seconds) made one of them fail with "cannot import name 'AutoModel' from 'transformers'" though nothing was
missing. Every first import goes through :func:`first_import`: one thread imports, the others wait for it, and
once done it costs a set lookup. The lock is held only while importing (never while loading a model or taking
another lock), so it cannot deadlock with the model caches' per-key locks.
"""

from __future__ import annotations

import importlib
import threading
from typing import Callable

LOCK = threading.RLock()  # held while importing only: a thread importing many modules may hold it
_DONE: set[str] = set()


def first_import(what: str, load: Callable[[], object]) -> None:
    """Run ``load`` (imports only) once per process, under the import lock; a failed load is tried again next time."""
    if what in _DONE:
        return
    with LOCK:
        if what not in _DONE:
            load()
            _DONE.add(what)


def _model_code() -> None:
    importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    for name in ("AutoConfig", "AutoModel", "AutoModelForSequenceClassification", "AutoTokenizer", "BertConfig"):
        getattr(transformers, name)  # resolves (imports) the lazy name now, not beside another thread
    from transformers.models.auto import modeling_auto

    modeling_auto.MODEL_MAPPING[transformers.BertConfig]  # the BERT-style model classes (MiniLM, the parser, MLM)


def model_code() -> None:
    """torch and the transformers code the models are built on (Auto classes, BERT-style encoders)."""
    first_import("transformers", _model_code)


def spacy() -> None:
    """spaCy (it imports thinc, which imports torch)."""
    first_import("spacy", lambda: importlib.import_module("spacy"))
