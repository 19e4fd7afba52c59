"""SentiWordNet 3.0 polarity lexicon: polarity class per (word, POS), senses aggregated with their sign kept.

Aggregation: score(w, p) = Σ_i (PosScore_i − NegScore_i) / i  /  Σ_i 1/i over the senses i = 1..n of
w with POS p (sense-rank weighted mean, the usual SentiWordNet recipe). The original ALiCT code raised
scores to powers and lost the sign on even powers; here the sign is kept. A word is *positive* when
score > 0, *negative* when score < 0, *neutral* otherwise, and *objective* when every sense has
PosScore = NegScore = 0.

Neutral means known and neutral (TOSEM §3.2.2): a word SentiWordNet does not know under its POS in
context is *unknown*, never neutral; a word neutral under that POS but strongly polar
(|score| >= ``STRONG_POLARITY``) under another POS takes that polarity ("great" tagged as an adverb
is not neutral).
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from alict_core.data.checked import reads_data
from alict_core.data.files import data_file

# SentiWordNet POS letters ('s' = adjective satellite) -> our coarse POS names.
SWN_POS = {"a": "adj", "s": "adj", "n": "noun", "v": "verb", "r": "adv"}
POLARITIES = ("positive", "negative", "neutral")
COARSE_POS = ("adj", "noun", "verb", "adv")
# spaCy universal POS -> SentiWordNet coarse POS
# (auxiliaries are function words: "is" must not count as a polar verb)
UPOS_TO_SWN = {"ADJ": "adj", "NOUN": "noun", "PROPN": "noun", "VERB": "verb", "ADV": "adv"}
STRONG_POLARITY = 0.25  # |aggregated score| from which a word's other-POS sense makes it polar


@dataclass(frozen=True)
class WordSentiment:
    score: float
    polarity: str  # positive / negative / neutral
    objective: bool


@lru_cache(maxsize=1)
@reads_data("sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz")
def load_sentiwordnet() -> dict[tuple[str, str], WordSentiment]:
    """Map (lower-cased word, coarse POS) -> aggregated sentiment."""
    senses: dict[tuple[str, str], list[tuple[int, float, float]]] = defaultdict(list)
    with gzip.open(data_file("sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz"), "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5 or parts[0] not in SWN_POS:
                continue
            pos = SWN_POS[parts[0]]
            pos_score, neg_score = float(parts[2]), float(parts[3])
            if not (0.0 <= pos_score <= 1.0 and 0.0 <= neg_score <= 1.0):  # 7, nan, -2: a damaged line
                raise ValueError(f"line {line[:60]!r}: scores must lie in [0, 1]")
            for term in parts[4].split():
                word, _, sense = term.rpartition("#")
                if word and sense.isascii() and sense.isdigit():
                    if int(sense) < 1:  # senses count from 1 (#0 divided by zero)
                        raise ValueError(f"line {line[:60]!r}: sense number {sense} (senses count from 1)")
                    senses[(word.lower().replace("_", " "), pos)].append((int(sense), pos_score, neg_score))
    table = {}
    for key, values in senses.items():
        values.sort()
        weight = sum(1.0 / rank for rank, _, _ in values)
        score = sum((p - n) / rank for rank, p, n in values) / weight
        objective = all(p == 0 and n == 0 for _, p, n in values)
        polarity = "positive" if score > 0 else "negative" if score < 0 else "neutral"
        table[key] = WordSentiment(round(score, 6), polarity, objective)
    return table


def word_polarity(word: str, pos: str) -> WordSentiment | None:
    """Sentiment of ``word`` used as coarse ``pos`` (adj/noun/verb/adv); None if not in SentiWordNet."""
    return load_sentiwordnet().get((word.lower(), pos))


def other_pos_polarity(word: str, pos: str) -> str | None:
    """The polarity of ``word``'s strongest sense under a POS other than ``pos`` when it is strongly polar."""
    table = load_sentiwordnet()
    strongest: WordSentiment | None = None
    for other in COARSE_POS:
        entry = table.get((word.lower(), other)) if other != pos else None
        if entry is not None and abs(entry.score) >= STRONG_POLARITY:
            if strongest is None or abs(entry.score) > abs(strongest.score):
                strongest = entry
    return strongest.polarity if strongest is not None else None


def token_polarity(word: str, lemma: str, upos: str) -> str:
    """Polarity of a token in context: positive / negative / neutral, or unknown.

    Looks up the word, then its lemma, under the POS it has in context. Function words (no
    SentiWordNet POS) are neutral; a content word SentiWordNet does not know under that POS is
    "unknown"; a neutral word strongly polar under another POS takes that polarity.
    """
    pos = UPOS_TO_SWN.get(upos)
    if pos is None:
        return "neutral"
    entry = word_polarity(word, pos) or word_polarity(lemma, pos)
    if entry is None:
        return "unknown"
    if entry.polarity == "neutral":
        return other_pos_polarity(word, pos) or other_pos_polarity(lemma, pos) or "neutral"
    return entry.polarity
