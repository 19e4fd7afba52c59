"""Check 5, ``fluency``: an inserted word must read as English where it stands.

The POS check only asks whether spaCy tags the filled word as the slot's tag; a word can pass it and still
make a sentence a person would call wrong. Each rule below names one such pattern, seen in fills of the
full-profile MLM on SST seeds (docs/expansion.md, "Fluency"); a fill is rejected by the first rule it breaks:

- ``sentence_start``: nothing is inserted before the first word ("but They should have found ...",
  "if She 's not yet an actress"; a capitalised first word would need recasing, and the result reads
  as a fragment);
- ``repeated_word``: the word equals a neighbour, or a content word two words away ("one one of", "trying to to
  create", "if there ever was ever a movie");
- ``splits_name``: the insertion falls inside a proper name ("Frank McKlusky and C.I.", "Carlito 's own Way");
- ``determiner_before_name``: a determiner or possessive before a proper name ("the Bui chooses", "a Birthday
  Girl is"), unless the name modifies a common noun ("a Hollywood studio");
- ``article``: "a" before a vowel sound or "an" before a consonant ("a easy , seductive pacing");
- ``agreement``: a singular determiner before a plural noun or the reverse ("in favor of a bright flashes",
  "I liked a few lot of the smaller scenes");
- ``determiner_before_bare_noun``: an article or possessive before a singular noun the seed used without one:
  such nouns are mass nouns or parts of idioms ("eat a popcorn", "love at the first sight", "on the hand");
- ``dangling_clause``: a subordinator inside the sentence opens a clause with no main clause to attach to
  ("but if it would count for very little", "and because this is not the kind");
- ``noun_compound``: a noun inserted after a noun ("the film comedy ends"), or between a number and "of" ("enjoys
  one part of his richest roles"); a noun before a noun is a noun modifier, judged by the ``noun_modifier``
  constraint with corpus evidence ("a horror film" yes, "a mixed bag film" no);
- ``stacked_function_word``: a preposition next to a preposition or relative word ("suited for on the
  history", "relying on with the", "with which that he", "stay in of the past"), "that" right after a
  conjunction or punctuation ("but that he would have done well"), a determiner after a determiner or possessive, or
  before a pronoun, a possessive, a number or a comparative ("has a one strike", "those of all us", "getting
  a smaller"), a quantifier after a determiner ("most many people"), a preposition before something that
  is not a noun phrase ("who lived in there"), an adverb before "of" ("the issue instead of domestic abuse"),
  a degree adverb next to another, before a comparative or after an -ly adverb ("look really so slick",
  "is so easier to swallow", "self-defeatingly more decorous"), a comparative before a comparative ("look no
  more further");
- ``splits_compound``: a conjunction between two nouns that stood together ("an undeniable entertainment and
  value", "this three-hour endurance and test");
- ``unbalanced_coordination``: a conjunction, not after a comma, between words of different kinds
  ("reveals itself and slowly", "downright and creepy"), or after a comma before a verb with no subject
  ("sneaks up on the viewer , but providing an experience");
- ``weak_fill``: the masked LM's probability of the fill (geometric mean over the slots) is below
  ``min_word_score`` (default 0.05): the model itself barely expects the word there.
"""

from __future__ import annotations

from typing import Sequence

from alict_core.expansion.constraints.base import ExpansionError

RULES_VERSION = "8"  # part of every expansion artefact's key: bump when a rule changes
DEFAULT_MIN_WORD_SCORE = 0.05  # judged on full-profile fills: 0.02 let in 70 % more fills, most of them wrong
NAME_TAGS = frozenset({"NNP", "NNPS"})
PREPOSITION_TAGS = frozenset({"IN", "TO", "RP"})
CLAUSE_LINK_TAGS = PREPOSITION_TAGS | {"WDT", "WP"}
NOUN_TAGS = frozenset({"NN", "NNS"})
SUBORDINATORS = frozenset({"if", "because", "although", "though", "while", "since", "unless", "whether", "as",
                           "whereas", "once", "until", "when"})
SINGULAR_DETERMINERS = frozenset({"a", "an", "this", "that", "every", "each", "another", "one"})
PLURAL_DETERMINERS = frozenset({"these", "those", "many", "several", "few", "both"})
BARE_NOUN_DETERMINERS = frozenset({"a", "an", "the", "this", "that", "every", "each", "another", "my", "your", "his",
                                   "her", "its", "our", "their"})
PREPOSITION_WORDS = frozenset({"in", "on", "of", "at", "for", "with", "by", "from", "to", "into", "onto", "about",
                               "over", "under", "through", "above", "below", "across", "after", "before", "upon"})
REPEAT_WINDOW = 2  # "If there ever was ever a movie", "it also 's also nice"
NOUN_PHRASE_INSIDE = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS", "VBN", "VBG", "CD", "HYPH", ",", "CC"})
DETERMINER_TAGS = frozenset({"DT", "PDT", "PRP$", "WDT"})
AFTER_DETERMINER_BAD = frozenset({"DT", "PDT", "PRP", "PRP$", "CD", "POS", "WDT", "JJR", "RBR"})
COMPARATIVE_TAGS = frozenset({"JJR", "JJS", "RBR", "RBS"})
GRAMMATICAL_REPEATS = frozenset({"had"})  # "had had"; an inserted "that" next to "that" reads wrong
DEGREE_ADVERBS = frozenset({"so", "very", "too", "really", "quite", "pretty", "rather", "fairly", "extremely",
                            "most", "more", "less", "much", "somewhat", "highly"})
QUANTIFIERS = frozenset({"few", "many", "several", "much", "little"})
NOUN_PHRASE_START = frozenset({"DT", "PDT", "PRP$", "PRP", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "CD",
                               "VBG", "WP", "WDT", "``", "$"})
# "an" before these consonant-letter words, "a" before these vowel-letter words (initial sound, not letter)
_AN_CONSONANT_LETTER = ("hour", "honest", "honor", "honour", "heir")
_A_VOWEL_LETTER = ("one", "once", "uni", "use", "usu", "usa", "euro", "eu", "ewe", "ufo", "u.")


def checked_min_word_score(value: float) -> float:
    """``value`` as the weak-fill floor, or the one message saying it must lie in [0, 1)."""
    if not 0.0 <= float(value) < 1.0:
        raise ExpansionError(f"expand(): min_word_score must be in [0, 1), got {value}")
    return float(value)


def _kind(tag: str) -> str:
    """Coarse word kind of a PTB tag for coordination: noun, verb, adjective, adverb or the tag itself."""
    for prefix, kind in (("NN", "noun"), ("PRP", "noun"), ("VB", "verb"), ("JJ", "adjective"), ("RB", "adverb")):
        if tag.startswith(prefix):
            return kind
    return tag


def _article_mismatch(article: str, following: str) -> bool:
    word = following.lower()
    if not word[:1].isalpha():
        return False
    vowel_sound = (word[0] in "aeiou" and not word.startswith(_A_VOWEL_LETTER)) or word.startswith(_AN_CONSONANT_LETTER)
    return (article == "a" and vowel_sound) or (article == "an" and not vowel_sound)


def _is_name(tokens: Sequence[str], tags: Sequence[str], index: int | None) -> bool:
    """Whether token ``index`` is part of a proper name: tagged so, or capitalised inside the sentence (the
    insertion itself can make the tagger read "Carlito 's own Way" as a common noun)."""
    if index is None:
        return False
    if tags[index] in NAME_TAGS:
        return True
    word = tokens[index]
    return index > 0 and word[:1].isupper() and word != "I" and tags[index] != "PRP" and tokens[index - 1] not in \
        (".", "!", "?", ":", "``", "`", "'", '"')


def _modifies_noun(tags: Sequence[str], start: int) -> bool:
    """Whether the proper-noun run starting at ``start`` modifies a common noun ("a Hollywood studio")."""
    end = start
    while end < len(tags) and tags[end] in NAME_TAGS:
        end += 1
    return end < len(tags) and tags[end] in ("NN", "NNS")


def _head_noun(tags: Sequence[str], start: int, limit: int = 5) -> int | None:
    """Index of the noun a determiner at ``start - 1`` introduces (skipping modifiers; the last noun of a compound:
    "these plot twists" → "twists"), if one is near."""
    for index in range(start, min(len(tags), start + limit)):
        if tags[index] in NOUN_TAGS or tags[index] in NAME_TAGS:
            while index + 1 < len(tags) and (tags[index + 1] in NOUN_TAGS or tags[index + 1] in NAME_TAGS):
                index += 1
            return index
        if tags[index] not in NOUN_PHRASE_INSIDE:
            return None
    return None


def _slot_problem(tokens: Sequence[str], tags: Sequence[str], position: int, word: str,
                  inserted: set[int]) -> tuple[str, str] | None:
    """(rule, explanation) for the first rule the word at ``position`` breaks, else None."""
    lower = word.lower()
    tag = tags[position]
    left = position - 1 if position > 0 else None
    right = position + 1 if position + 1 < len(tokens) else None
    left_tag = tags[left] if left is not None else ""
    right_tag = tags[right] if right is not None else ""
    if position == 0:
        return "sentence_start", f"{word!r} inserted before the first word {tokens[1] if right else ''!r}"
    for nearby in range(max(0, position - REPEAT_WINDOW), min(len(tokens), position + REPEAT_WINDOW + 1)):
        if nearby != position and tokens[nearby].lower() == lower and lower not in GRAMMATICAL_REPEATS \
                and (abs(nearby - position) == 1 or word[:1].isalpha() and tags[position] not in ("DT", "IN", "CC")):
            return "repeated_word", f"{word!r} repeats {tokens[nearby]!r} {abs(nearby - position)} word(s) away"
    if _is_name(tokens, tags, right) and (_is_name(tokens, tags, left) or (
            left_tag == "POS" and left is not None and _is_name(tokens, tags, left - 1))):
        return "splits_name", f"{word!r} inside the name {tokens[left]!r} … {tokens[right]!r}"  # type: ignore[index]
    if tag in DETERMINER_TAGS and _is_name(tokens, tags, right) and not _modifies_noun(tags, right):  # type: ignore[arg-type]
        return "determiner_before_name", f"{word!r} before the name {tokens[right]!r}"  # type: ignore[index]
    if lower in ("a", "an") and right is not None and _article_mismatch(lower, tokens[right]):
        return "article", f"{word!r} before {tokens[right]!r}"
    if right is not None and (tag == "DT" and lower in SINGULAR_DETERMINERS or lower in PLURAL_DETERMINERS):
        head = _head_noun(tags, right)
        if head is not None and tags[head] in ("NNS", "NNPS") and lower in SINGULAR_DETERMINERS \
                or head is not None and tags[head] in ("NN", "NNP") and lower in PLURAL_DETERMINERS:
            return "agreement", f"{word!r} with {tokens[head]!r}"
    if lower in QUANTIFIERS and left_tag in ("DT", "PDT", "JJ", "JJS", "RBS", "CD") and left not in inserted:
        return "stacked_function_word", f"quantifier {word!r} after {tokens[left]!r}"  # type: ignore[index]
    if tag in ("IN", "RB") and lower in SUBORDINATORS and position > 0:
        return "dangling_clause", f"{word!r} opens a subordinate clause inside the sentence"
    if tag in PREPOSITION_TAGS or lower in PREPOSITION_WORDS:
        for side in (left, right):
            if side is not None and (tags[side] in CLAUSE_LINK_TAGS or tokens[side].lower() in PREPOSITION_WORDS):
                return "stacked_function_word", f"{word!r} next to {tokens[side]!r}"
        if tag == "IN" and lower != "that" and right is not None and right_tag not in NOUN_PHRASE_START:
            return "stacked_function_word", f"preposition {word!r} before {tokens[right]!r}, not a noun phrase"
    if lower == "that" and tag == "IN" and left_tag in ("CC", ",", ":", "."):
        return "stacked_function_word", f"'that' right after {tokens[left]!r} opens no clause"  # type: ignore[index]
    if tag.startswith("RB") and right is not None and tokens[right].lower() == "of":
        return "stacked_function_word", f"adverb {word!r} before 'of' ({word} of …)"
    if lower in DEGREE_ADVERBS and tag.startswith("RB"):
        for side in (left, right):
            if side is not None and side not in inserted and tokens[side].lower() in DEGREE_ADVERBS:
                return "stacked_function_word", f"degree adverb {word!r} next to {tokens[side]!r}"
        if right_tag in COMPARATIVE_TAGS or (left_tag.startswith("RB") and tokens[left].lower().endswith("ly")):  # type: ignore[index]
            return "stacked_function_word", f"degree adverb {word!r} next to the adverb or comparative it would modify"
    if tag in DETERMINER_TAGS and right_tag in AFTER_DETERMINER_BAD:
        return "stacked_function_word", f"determiner {word!r} before {tokens[right]!r}"  # type: ignore[index]
    if tag in DETERMINER_TAGS and left_tag in ("DT", "PDT", "PRP$") and left not in inserted:
        return "stacked_function_word", f"determiner {word!r} after {tokens[left]!r}"  # type: ignore[index]
    if tag in NOUN_TAGS:
        # a noun before a noun is a noun modifier, judged by the ``noun_modifier`` constraint (corpus evidence)
        for side in (left,):
            if side is not None and side not in inserted and (tags[side] in NOUN_TAGS or _is_name(tokens, tags, side)):
                return "noun_compound", f"noun {word!r} next to the noun {tokens[side]!r}"
        if left_tag == "CD" and right is not None and tokens[right].lower() == "of":
            return "noun_compound", f"noun {word!r} between {tokens[left]!r} and 'of' ({tokens[left]} {word} of …)"  # type: ignore[index]
    if tag in COMPARATIVE_TAGS and right_tag in COMPARATIVE_TAGS:
        return "stacked_function_word", f"comparative {word!r} before {tokens[right]!r}"  # type: ignore[index]
    if lower in BARE_NOUN_DETERMINERS and tag in DETERMINER_TAGS and right is not None:
        head = _head_noun(tags, right)
        if head is not None and tags[head] == "NN":
            return "determiner_before_bare_noun", (f"{word!r} before {tokens[head]!r}, a singular noun the sentence "
                                                   "uses without a determiner (mass noun or idiom)")
    if tag == "CC" and left_tag in NOUN_TAGS and right_tag in NOUN_TAGS and left not in inserted \
            and right not in inserted:
        return "splits_compound", f"{word!r} splits the compound {tokens[left]!r} {tokens[right]!r}"  # type: ignore[index]
    if tag == "CC" and left is not None and tokens[left] == "," and right_tag.startswith("VB"):
        return "unbalanced_coordination", f"{word!r} after a comma joins the verb {tokens[right]!r} to no subject"  # type: ignore[index]
    if tag == "CC" and left is not None and right is not None and tokens[left] != "," \
            and _kind(left_tag) != _kind(right_tag):
        return "unbalanced_coordination", (f"{word!r} joins {tokens[left]!r} ({left_tag}) and "
                                           f"{tokens[right]!r} ({right_tag})")
    return None


def check_fluency(tokens: Sequence[str], tags: Sequence[str], positions: Sequence[int], words: Sequence[str],
                  score: float | None, min_word_score: float = DEFAULT_MIN_WORD_SCORE) -> tuple[bool, str]:
    """(ok, reason) of check 5 on the expanded ``tokens`` (spaCy ``tags`` aligned with them); the reason of a
    rejection starts with the rule's name, e.g. ``"article: 'a' before 'easy'"``."""
    inserted = set(positions)
    for position, word in zip(positions, words, strict=True):
        problem = _slot_problem(tokens, tags, position, word, inserted)
        if problem is not None:
            return False, f"{problem[0]}: {problem[1]}"
    if score is not None and positions:
        per_word = float(score) ** (1.0 / len(positions))
        if per_word < min_word_score:
            return False, f"weak_fill: the masked LM gives it {per_word:.3f} < {min_word_score:g}"
    return True, "reads as English (no fluency rule broken)"
