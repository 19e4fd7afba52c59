"""WordNet 3.0 synonyms (read from SentiWordNet's synset term lists) with the original word's inflection.

SentiWordNet 3.0 lists every WordNet 3.0 synset with its terms (``word#sense``), so it serves as an
offline WordNet. A word's synonyms are the one-word terms of the synsets where the word has one of
its ``max_sense`` most frequent senses, most frequent sense first. ``lemminflect`` then gives each
synonym the original word's Penn tag (number for nouns, tense for verbs, degree for adjectives).
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from functools import lru_cache

from alict_core.data.checked import reads_data
from alict_core.data.files import data_file

SWN_FILE = "sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz"
UPOS_TO_WN = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@lru_cache(maxsize=1)
@reads_data(SWN_FILE)  # a file cut short is one data error (EOFError was exit 3)
def _synsets() -> tuple[dict[tuple[str, str], list[tuple[int, int]]], list[tuple[tuple[str, int], ...]]]:
    """((lemma, wn pos) → [(sense rank, synset number)], synset number → its one-word terms with their ranks)."""
    senses: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    terms: list[tuple[tuple[str, int], ...]] = []
    with gzip.open(data_file(SWN_FILE), "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            pos = "a" if parts[0] == "s" else parts[0]
            number = len(terms)
            words = []
            for term in parts[4].split():
                word, _, sense = term.rpartition("#")
                if word and sense.isdigit():
                    senses[(word.lower(), pos)].append((int(sense), number))
                    if "_" not in word and "-" not in word and word.isalpha():
                        words.append((word.lower(), int(sense)))
            terms.append(tuple(words))
    return dict(senses), terms


def synonyms(lemma: str, upos: str, *, max_sense: int = 2, limit: int = 10) -> list[str]:
    """One-word WordNet synonyms of ``lemma`` as a ``upos`` word (NOUN/VERB/ADJ/ADV), most frequent sense first.

    Both words must have the shared synset among their ``max_sense`` (lemma) / ``max_sense + 1``
    (synonym) most frequent senses, which keeps rare readings ("start" → "get") out.
    """
    pos = UPOS_TO_WN.get(upos)
    if pos is None:
        return []
    senses, terms = _synsets()
    out: list[str] = []
    for rank, number in sorted(senses.get((lemma.lower(), pos), [])):
        if rank > max_sense:
            continue
        for word, word_rank in terms[number]:
            if word_rank <= max_sense + 1 and word != lemma.lower() and word not in out:
                out.append(word)
    return out[:limit]


def inflect(lemma: str, tag: str, upos: str) -> str | None:
    """``lemma`` inflected for Penn ``tag`` (e.g. NNS, VBD, JJR); None when no form is known."""
    from lemminflect import getInflection

    if tag in ("NN", "VB", "JJ", "RB", "NNP") or not tag:
        return lemma
    forms = getInflection(lemma, tag=tag)
    if forms:
        return forms[0]
    if upos in ("ADJ", "ADV") and tag in ("JJR", "RBR"):
        return None  # no synthetic "more X": one word replaces one word
    return None


def inflected_synonyms(word: str, lemma: str, upos: str, tag: str, *, limit: int = 5) -> list[str]:
    """Synonyms of ``word`` in the same number / tense / degree, keeping a capital first letter."""
    out: list[str] = []
    for synonym in synonyms(lemma, upos, limit=limit * 3):
        form = inflect(synonym, tag, upos)
        if not form or form.lower() == word.lower():
            continue
        if word[:1].isupper():
            form = form[:1].upper() + form[1:]
        if form not in out:
            out.append(form)
    return out[:limit]


def has_pos(word: str, upos: str) -> bool:
    """Is ``word`` (any inflection) a WordNet ``upos`` word? Guards masked-LM fills the tagger mislabels in context."""
    from lemminflect import getAllLemmas

    pos = UPOS_TO_WN.get(upos)
    if pos is None:
        return True
    senses, _ = _synsets()
    low = word.lower()
    lemmas = {low, *(lemma.lower() for forms in getAllLemmas(low, upos=upos).values() for lemma in forms)}
    return any((lemma, pos) in senses for lemma in lemmas)
