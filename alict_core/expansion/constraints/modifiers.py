"""The ``attested_modifier`` constraint: only insertions a reader almost always finds natural and meaning-neutral.

Four insertion types (``types``; the first three by default), each a reference-grammar superstructure
of the seed's phrase:

- ``degree_adverb``: an intensifier from a short list before a gradable adjective or adverb ("is [so] funny",
  "an [especially] witty script"), the pair (adverb, adjective) seen in the corpus; never after a negator or
  another degree word ("not [so] funny", "as [so] funny"), never before a comparative or superlative;
  ``so`` only predicatively ("a [so] funny film" is ungrammatical);
- ``emphasis``: "indeed"/"undeniably" right after a copula, before its complement ("is [indeed] a tale worth
  catching"), the pair (copula, word) seen in the corpus; never before a negator;
- ``own``: "own" after a possessive pronoun, before a common noun not in an idiom or coordination ("his [own]
  son 's home");
- never a degree or emphasis word in a sentence that negates or denies (the word shifts what is denied), nor a
  degree word before an identity word ("so gay"): the blind expansion study (study11) read these as changed;
- no degree or emphasis word after a relative or question word (it changes what is reported or presupposed:
  "show us why it 's [so] compelling"; a "that" complement, as in the templates, is fine), and no degree word
  beside "but"/"although" (it tips the balance of a mixed verdict: "[so] predictable …, but …");
  never on one member of a list or coordination of adjectives ("clumsy , [so] obvious , preposterous");
  ``so`` only right after a copula or linking verb ("to [so] strong , determined monarch" is ungrammatical);
  emphasis not stacked on another adverb ("sure is [indeed] getting old") and not before a clause ("is [indeed]
  that …") (study12);
- ``adjective`` (opt-in: on a tuning read half of them changed the meaning, "Stallone 's [political] career"):
  an adjective before a common noun whose (adjective, noun) pair the corpus has seen, right after a
  determiner or possessive; never an identity or nationality word, never before a noun that a restrictive clause
  or "of" phrase follows ("the [local] people who ...").

Candidates come from the corpus (the masked LM's ``pool`` best words at the slot that pass these rules), so the
masked LM only ranks words a writer has used there.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, Sequence

# intensifiers SentiWordNet rates neutral and that keep what is claimed (very/really/truly are rated polar)
DEGREE_WORDS = ("so", "deeply", "especially", "distinctly", "intensely", "unusually", "exceptionally")
PREDICATIVE_ONLY = frozenset({"so"})
NATIONALITIES = ("american", "british", "english", "french", "german", "italian", "spanish", "japanese", "chinese",
                 "korean", "indian", "mexican", "irish", "scottish", "european", "african", "asian", "russian",
                 "canadian", "australian", "dutch", "swedish", "danish", "greek", "polish", "israeli", "arab",
                 "arabic", "latin", "hispanic", "western", "eastern", "foreign", "native", "national")
SKIN_COLOURS = frozenset({"white", "black", "brown"})  # identity words when they grade people ("so white")
GRADABLE_TAGS = frozenset({"JJ", "RB"})
GRADABLE_ADVERBS = frozenset({"well", "much", "often"})  # besides -ly adverbs ("so far", "so ever" change or break)
# ordinals, quantifiers and reference words: inserted, they change which thing is meant ("the [third] year")
REFERENCE_ADJECTIVES = frozenset({"first", "second", "third", "fourth", "fifth", "last", "next", "only", "same",
                                  "other", "many", "few", "several", "former", "latter", "previous", "following",
                                  "final", "single", "entire", "whole", "certain", "particular", "various", "such"})
NOUN_TAGS = frozenset({"NN", "NNS"})
DETERMINER_TAGS = frozenset({"DT", "PRP$", "POS", "CD"})
BLOCKING_LEFT = frozenset({"not", "n't", "never", "no", "as", "so", "too", "how", "very", "more", "most", "less",
                           "least", "that", "this", "quite", "rather", "pretty", "really", "much"})
RESTRICTIVE_AFTER = frozenset({"who", "whom", "which", "that", "whose", "of", "where", "when"})
EMPHASIS_WORDS = ("indeed", "undeniably")  # after a copula: "is [indeed] a tale worth catching"
COPULAS = frozenset({"is", "are", "was", "were", "'s", "'re", "be", "been", "am", "'m"})
# "own" only after a possessive pronoun: after a name or noun + "'s" blind reviewers read a contrast that is not
# there ("Leigh 's [own] film") or a broken phrase ("a children 's [own] film") (study11)
POSSESSIVES = frozenset({"his", "her", "its", "their", "my", "your", "our"})
OWN_IDIOM_NOUNS = frozenset({"place", "way", "sake", "part", "turn", "mind", "word", "best", "share", "kind"})
NEGATORS = frozenset({"not", "n't", "never", "no", "nothing", "none", "hardly", "barely"})
# words that open a clause as the complement of a copula ("is [indeed] that …") and contrasts
SUBORDINATORS = frozenset({"that", "which", "who", "whom", "whose", "why", "whether", "if", "because", "when",
                           "what", "where", "how", "since", "unless", "until", "once"})
CONTRASTS = frozenset({"but", "yet", "although", "though", "while", "whereas", "however", "despite"})
LINKING_VERBS = COPULAS | frozenset({"seem", "seems", "seemed", "look", "looks", "looked", "feel", "feels", "felt",
                                     "become", "becomes", "became", "remain", "remains", "remained", "sound",
                                     "sounds", "sounded", "get", "gets", "got", "getting", "being"})
COORDINATION = frozenset({",", "and", "or"})
OPENER_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})  # relative and question words (a "that" complement is fine)
DENIALS = NEGATORS | frozenset({"nor", "neither", "without"})
TYPES = ("degree_adverb", "emphasis", "own", "adjective")
DEFAULT_TYPES = ("degree_adverb", "emphasis", "own")  # ``adjective``: opt-in (half of them changed the meaning)
DEFAULTS: dict[str, Any] = {"types": list(DEFAULT_TYPES), "degree_words": list(DEGREE_WORDS), "min_pair_count": 3,
                            "pool": 200, "min_word_score": 0.0002}


@lru_cache(maxsize=1)
def excluded_adjectives() -> frozenset[str]:
    """Identity adjectives (HateCheck's, single words) and nationality words: never inserted."""
    from alict_core.data.lexicons import identity_terms

    try:
        identity = {t for t in identity_terms() if " " not in t}
    except OSError:  # no HateCheck files: the nationality list still holds
        identity = set()
    return frozenset(identity | set(NATIONALITIES))


def _count(corpus: Any, first: str, second: str) -> int:
    return int(corpus.bigram(first, second)) if corpus is not None else 0


def _type_of(word: str, slot_tag: str, params: Mapping[str, Any]) -> str | None:
    """The insertion type a word at a slot of this tag would be, among the enabled ones."""
    types = set(params.get("types", DEFAULT_TYPES))
    lower = word.lower()
    if slot_tag == "RB" and "degree_adverb" in types and lower in {w.lower() for w in params.get("degree_words",
                                                                                                   DEGREE_WORDS)}:
        return "degree_adverb"
    if slot_tag == "RB" and "emphasis" in types and lower in EMPHASIS_WORDS:
        return "emphasis"
    if slot_tag == "JJ" and "own" in types and lower == "own":
        return "own"
    if slot_tag == "JJ" and "adjective" in types and lower != "own":
        return "adjective"
    return None


def _attested_pair(tokens: Sequence[str], p: int, kind: str) -> tuple[str, str] | None:
    """The corpus pair that attests an insertion of this type at ``p``: with the next word, or for ``emphasis``
    with the copula before it."""
    if kind == "emphasis":
        return (tokens[p - 1], tokens[p]) if p > 0 else None
    return (tokens[p], tokens[p + 1]) if p + 1 < len(tokens) else None


def pool_candidate(tokens: Sequence[str], position: int, slot_tag: str, word: str, corpus: Any,
                   params: Mapping[str, Any]) -> bool:
    """Whether ``word`` (a masked-LM word at the single slot ``position`` of the masked ``tokens``) is worth
    checking: it would be an insertion of an enabled type and its pair is seen in the corpus."""
    if corpus is None or not word.isalpha() or not word.islower():
        return False
    kind = _type_of(word, slot_tag, params)
    if kind is None or (kind == "adjective" and word in excluded_adjectives()):
        return False
    filled = [*tokens[:position], word, *tokens[position + 1:]]
    pair = _attested_pair(filled, position, kind)
    return pair is not None and _count(corpus, *pair) >= int(params.get("min_pair_count", 3))


def _clause_problem(tokens: Sequence[str], tags: Sequence[str], p: int, word: str, kind: str) -> str | None:
    """A degree or emphasis word after a relative or question word, or a degree word in a sentence with a
    contrast (study12: "why it 's [so] compelling", "[so] predictable in the reassuring …, but …")."""
    # a relative or question word, or the content clause of a noun ("the notion that …")
    opener = next((t for i, (t, tag) in enumerate(zip(tokens[:p], tags[:p], strict=True))
                   if tag in OPENER_TAGS or (tag == "IN" and t.lower() == "that" and i > 0
                                             and tags[i - 1] in NOUN_TAGS)), None)
    if opener is not None:
        return f"{word!r} in the clause {opener!r} opens changes what is reported or presupposed"
    contrast = next((t for i, t in enumerate(tokens) if i != p and t.lower() in CONTRASTS), None)
    if kind == "degree_adverb" and contrast is not None:
        return f"{word!r} in a sentence with a contrast ({contrast!r}) tips the balance of a mixed verdict"
    return None


def _opens_clause(tokens: Sequence[str], tags: Sequence[str], i: int) -> bool:
    return tokens[i].lower() in SUBORDINATORS and tags[i] in OPENER_TAGS | {"IN"}


def _in_adjective_list(tokens: Sequence[str], tags: Sequence[str], p: int) -> bool:
    """Whether the adjective a word inserted at ``p`` modifies (at ``p + 1``) is one member of a list or
    coordination of adjectives ("clumsy , [so] obvious , preposterous")."""
    left = p >= 2 and tokens[p - 1].lower() in COORDINATION and tags[p - 2].startswith("JJ")
    right = p + 3 < len(tokens) and tokens[p + 2] == "," and tags[p + 3].startswith("JJ")  # not "so funny and smart"
    return left or right


def _emphasis_problem(tokens: Sequence[str], tags: Sequence[str], p: int, word: str) -> str | None:
    if p == 0 or tokens[p - 1].lower() not in COPULAS:
        return f"{word!r} does not follow a copula"
    if p >= 2 and tags[p - 2].startswith("RB"):
        return f"{word!r} stacked on the adverb {tokens[p - 2]!r} before the copula"
    if p + 1 < len(tokens) and _opens_clause(tokens, tags, p + 1):
        return f"{word!r} before a clause ({tokens[p + 1]!r}), not before a complement"
    if p + 1 >= len(tokens) or not tokens[p + 1].isalpha() or tokens[p + 1].lower() in NEGATORS | {word.lower()} \
            or tags[p + 1].startswith("RB"):
        return f"{word!r} does not stand before the copula's complement (or stands before an adverb)"
    return None


def _own_problem(tokens: Sequence[str], tags: Sequence[str], p: int) -> str | None:
    if p == 0 or tokens[p - 1].lower() not in POSSESSIVES:
        return "'own' does not follow a possessive pronoun"
    if p + 1 >= len(tokens) or tags[p + 1] not in NOUN_TAGS:
        return "'own' does not stand before a common noun"
    if tokens[p + 1].lower() in OWN_IDIOM_NOUNS:
        return f"'own' breaks the idiom with {tokens[p + 1]!r} (\"put it in its place\")"
    if p + 2 < len(tokens) and tokens[p + 2].lower() in ("and", "or"):
        return f"'own' before a coordination ({tokens[p + 1]!r} {tokens[p + 2]!r} …) changes what it joins"
    return None


def _denied(tokens: Sequence[str], p: int) -> str | None:
    """A negation or denial elsewhere in the sentence: a degree or emphasis word then shifts what is denied
    ("is it [so] cool ? no" denies only the degree; "… is [indeed] hampered , but that was not true") (study11)."""
    found = next((t for i, t in enumerate(tokens) if i != p and t.lower() in DENIALS), None)
    return None if found is None else f"the sentence denies ({found!r}): the inserted word shifts what is denied"


def _degree_problem(tokens: Sequence[str], tags: Sequence[str], p: int, word: str,
                    params: Mapping[str, Any]) -> str | None:
    if word.lower() not in {w.lower() for w in params.get("degree_words", DEGREE_WORDS)}:
        return f"{word!r} is not one of the degree words"
    if p + 1 >= len(tokens) or tags[p + 1] not in GRADABLE_TAGS:
        return f"{word!r} does not stand before a plain adjective or adverb"
    target = tokens[p + 1].lower()
    if target in excluded_adjectives() or target in SKIN_COLOURS:
        return f"{word!r} before the identity word {tokens[p + 1]!r} grades the identity (\"so gay\", \"so white\")"
    if tags[p + 1] == "RB" and not (target.endswith("ly") or target in GRADABLE_ADVERBS):
        return f"{tokens[p + 1]!r} is not a gradable adverb"
    if p + 2 < len(tokens) and tags[p + 2][:2] in ("JJ", "RB"):
        return f"{tokens[p + 1]!r} itself modifies {tokens[p + 2]!r}"
    if p + 2 < len(tokens) and tags[p + 2].startswith("VB"):
        return f"{tokens[p + 1]!r} is not the head of a predicate (a verb follows: {tokens[p + 2]!r})"
    if p > 0 and (tokens[p - 1].lower() in BLOCKING_LEFT or tags[p - 1].startswith("RB")):
        return f"{word!r} after {tokens[p - 1]!r} changes or breaks the degree phrase"
    attributive = p + 2 < len(tokens) and tags[p + 2] in NOUN_TAGS | {"NNP", "NNPS", "JJ"}
    if attributive and word.lower() in PREDICATIVE_ONLY:
        return f"{word!r} before an attributive adjective"
    if word.lower() in PREDICATIVE_ONLY and (p == 0 or tokens[p - 1].lower() not in LINKING_VERBS):
        return f"{word!r} is used only predicatively, right after a copula or linking verb"
    if _in_adjective_list(tokens, tags, p):
        return f"{word!r} on one member of a list of adjectives breaks its parallelism"
    return None


def _adjective_problem(tokens: Sequence[str], tags: Sequence[str], p: int, word: str) -> str | None:
    if word.lower() in excluded_adjectives():
        return f"{word!r} is an identity or nationality word"
    if word.lower() in REFERENCE_ADJECTIVES:
        return f"{word!r} changes which thing is meant (an ordinal, quantifier or reference word)"
    if tags[p] != "JJ" or p + 1 >= len(tokens) or tags[p + 1] not in NOUN_TAGS:
        return f"{word!r} is not an adjective before a common noun"
    if p == 0 or tags[p - 1] not in DETERMINER_TAGS:
        return f"{word!r} does not follow a determiner or possessive"
    if p + 2 < len(tokens) and tokens[p + 2].lower() in RESTRICTIVE_AFTER:
        return f"{tokens[p + 1]!r} is restricted by the {tokens[p + 2]!r} that follows"
    return None


def attested_modifier_problem(tokens: Sequence[str], tags: Sequence[str], positions: Sequence[int],
                              words: Sequence[str], corpus: Any, params: Mapping[str, Any]) -> str | None:
    """Why a fill is not one attested modifier of an enabled type (see the module docstring), else None."""
    if len(positions) != 1:
        return f"{len(positions)} words inserted (one modifier at a time)"
    p, word = positions[0], words[0]
    kind = _type_of(word, "JJ" if tags[p].startswith("JJ") else tags[p][:2], params)
    if kind == "degree_adverb":
        problem = (_degree_problem(tokens, tags, p, word, params) or _denied(tokens, p)
                   or _clause_problem(tokens, tags, p, word, kind))
    elif kind == "emphasis":
        problem = (_emphasis_problem(tokens, tags, p, word) or _denied(tokens, p)
                   or _clause_problem(tokens, tags, p, word, kind))
    elif kind == "own":
        problem = _own_problem(tokens, tags, p)
    elif kind == "adjective":
        problem = _adjective_problem(tokens, tags, p, word)
    else:
        return f"{word!r} ({tags[p]}) is not an insertion of an enabled type ({', '.join(params.get('types', []))})"
    if problem is not None:
        return problem
    pair = _attested_pair(tokens, p, kind)
    seen = _count(corpus, *pair) if corpus is not None and pair is not None else None
    minimum = int(params.get("min_pair_count", 3))
    if seen is not None and pair is not None and seen < minimum:
        return f"{pair[0]!r} {pair[1]!r} seen {seen} times in the corpus (< {minimum})"
    return None
