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
import logging
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

LOCK = threading.RLock()  # held while importing only: a thread importing many modules may hold it
WAIT_S = 45.0  # the longest a thread waits for another's first import before importing itself (never a hang)
_DONE: set[str] = set()
_log = logging.getLogger(__name__)


@contextmanager
def held(what: str) -> Iterator[None]:
    """The import lock around imports only, waited for at most ``WAIT_S``; then the caller imports by itself."""
    got = LOCK.acquire(timeout=WAIT_S)
    if not got:
        _log.info("first import of %s: waited %.0f s for another thread's import; importing now", what, WAIT_S)
    try:
        yield
    finally:
        if got:
            LOCK.release()


def first_import(what: str, load: Callable[[], object]) -> None:
    """Run ``load`` (imports only) once per process, under the import lock; a failed load is tried again next time.

    The wait for another thread's import is bounded (``WAIT_S``): an import lock held across Python's own module
    locks can otherwise deadlock with a thread already inside one of those imports; after the wait this thread
    imports by itself (at worst the race the lock exists for, never a page that hangs)."""
    if what in _DONE:
        return
    with held(what):
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
