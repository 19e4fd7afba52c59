"""Named checks for the invalid-expansion patterns a careful reader finds (issue 27, E1–E11).

Each check looks at one accepted expansion: its tokens with spaCy's PTB tags, the positions of the inserted
words and the seed's tokens, and returns (reason, detail) for each pattern found. ``validate`` runs them
on every accepted expansion; the reasons are:

- ``preposition_before_non_np`` (E1): an inserted preposition before a verb or clause, or between a verb and
  its object ("tells to us", "the thrills of pop up");
- ``and_pronoun_after_pronoun`` (E2): an inserted coordinator + pronoun after a pronoun ("it and i already has");
- ``article_before_bare_noun`` (E3): an inserted article before a noun the seed used without one, a generic or
  mass noun ("rich with the human events");
- ``article_before_non_noun`` (E4): an inserted article that introduces no noun ("count for very a little",
  "to be a mentally ill");
- ``conjunction_inside_phrase`` (E5): an inserted coordinator between words that are not parallel conjuncts
  ("works well and enough");
- ``determiner_in_one_conjunct`` (E6): an inserted determiner on one side of a coordination ("brothers and the
  sisters");
- ``broken_idiom`` (E7): an insertion inside a fixed expression of ``IDIOMS`` ("vice to versa");
- ``comma_and_between_adjectives`` (E8): an inserted "and" after the comma between two adjectives ("a gorgeous ,
  and somnolent show");
- ``article_before_name`` (E11): an inserted article before a proper name ("the Peter Jackson");
- ``stray_that`` (E11): an inserted "that" after a coordinator or punctuation, or before a verb.

E9/E10 (a content word or coordination that changes the meaning) need a reader and are not checked.
"""

from __future__ import annotations

from typing import Sequence

from alict_core.expansion.constraints.fluency import NAME_TAGS, NOUN_PHRASE_INSIDE, NOUN_TAGS
from alict_core.expansion.constraints.fluency import _head_noun as head_noun

PATTERN_REASONS = (
    "preposition_before_non_np", "and_pronoun_after_pronoun", "article_before_bare_noun", "article_before_non_noun",
    "conjunction_inside_phrase", "determiner_in_one_conjunct", "broken_idiom", "comma_and_between_adjectives",
    "article_before_name", "stray_that",
)
ARTICLES = frozenset({"a", "an", "the"})
DETERMINERS = ARTICLES | {"this", "that", "these", "those", "some", "any", "every", "each", "my", "your", "his",
                          "her", "its", "our", "their", "no"}
COORDINATORS = frozenset({"and", "or", "but", "nor"})
BE_FORMS = frozenset({"be", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m", "am"})
NOUN_PHRASE_START = frozenset({"DT", "PRP", "PRP$", "NN", "NNS", "JJ", "CD", "PDT"})
NOT_A_CONJUNCT = frozenset({"enough", "too", "either", "as", "than", "of", "to", "so", "also", "very", "then"})
# fixed expressions an insertion breaks (lower-case token sequences)
IDIOMS: tuple[tuple[str, ...], ...] = (
    ("vice", "versa"), ("of", "course"), ("at", "least"), ("at", "all"), ("in", "fact"), ("as", "well"),
    ("kind", "of"), ("sort", "of"), ("no", "longer"), ("at", "times"), ("all", "the", "time"), ("at", "first"),
    ("at", "last"), ("in", "general"), ("by", "far"), ("so", "far"), ("at", "once"), ("for", "good"),
    ("in", "spite", "of"), ("on", "the", "other", "hand"), ("as", "well", "as"), ("more", "or", "less"),
    ("once", "again"), ("after", "all"), ("first", "sight"), ("each", "other"), ("one", "another"),
    ("a", "lot"), ("a", "bit"), ("a", "little"), ("rather", "than"), ("no", "matter"), ("ad", "nauseam"),
)


def _kind(tag: str) -> str:
    for prefix, kind in (("NN", "noun"), ("PRP", "noun"), ("VB", "verb"), ("JJ", "adjective"), ("RB", "adverb")):
        if tag.startswith(prefix):
            return kind
    return tag


def _idiom_spans(tokens: Sequence[str]) -> list[tuple[tuple[str, ...], int, int]]:
    lower = [t.lower() for t in tokens]
    out = []
    for idiom in IDIOMS:
        n = len(idiom)
        for i in range(len(lower) - n + 1):
            if tuple(lower[i:i + n]) == idiom:
                out.append((idiom, i, i + n))
    return out


def expansion_pattern_defects(tokens: Sequence[str], tags: Sequence[str], positions: Sequence[int],
                              seed_tokens: Sequence[str]) -> list[tuple[str, str]]:
    """(reason, detail) for each E-pattern an insertion at ``positions`` of ``tokens`` (tagged ``tags``)
    shows; ``seed_tokens`` are the seed's tokens the insertion went into."""
    out: list[tuple[str, str]] = []
    inserted = sorted({p for p in positions if 0 <= p < len(tokens)})
    inserted_set = set(inserted)
    lower = [t.lower() for t in tokens]

    def add(reason: str, detail: str) -> None:
        if (reason, detail) not in out:
            out.append((reason, detail))

    for p in inserted:
        word, tag = lower[p], tags[p]
        left = p - 1 if p > 0 else None
        right = p + 1 if p + 1 < len(tokens) else None
        left_tag = tags[left] if left is not None else ""
        right_tag = tags[right] if right is not None else ""
        window = " ".join(tokens[max(0, p - 2):p + 3])
        if tag in ("IN", "TO", "RP") and word != "that" and right is not None and right not in inserted_set:
            infinitive = word == "to" and right_tag == "VB"
            verb_particle = right + 1 < len(tags) and tags[right + 1] == "RP"  # "of pop up": a verb read as a noun
            if (right_tag.startswith("VB") or right_tag == "MD" or verb_particle) and not infinitive:
                add("preposition_before_non_np", f"{tokens[p]!r} before the verb {tokens[right]!r}: {window}")
            elif left is not None and left_tag.startswith("VB") and lower[left] not in BE_FORMS \
                    and right_tag in NOUN_PHRASE_START:
                add("preposition_before_non_np", f"{tokens[p]!r} between the verb {tokens[left]!r} and its object "
                                                 f"{tokens[right]!r}: {window}")
        if word in COORDINATORS and right is not None and tags[right] == "PRP" and left_tag == "PRP":
            add("and_pronoun_after_pronoun", f"{tokens[p]} {tokens[right]} after {tokens[left]!r}: {window}")  # type: ignore[index]
        if word in ARTICLES and right is not None:
            head = head_noun(tags, right)
            if head is None or (left_tag.startswith("RB") and lower[left] in ("very", "so", "too", "quite")):  # type: ignore[index]
                if right_tag not in NAME_TAGS:
                    add("article_before_non_noun", f"{tokens[p]!r} before {tokens[right]!r}: {window}")
            elif tags[head] in NAME_TAGS and not (head + 1 < len(tags) and tags[head + 1] in NOUN_TAGS):
                add("article_before_name", f"{tokens[p]!r} before the name {tokens[head]!r}: {window}")
            elif left is not None and lower[left] in COORDINATORS:
                pass  # judged as a one-sided determiner below
            elif tags[head] in NOUN_TAGS and left_tag not in ("DT", "PRP$"):
                add("article_before_bare_noun", f"{tokens[p]!r} before {tokens[head]!r}, which the seed uses "
                                                f"without an article: {window}")
        if word in DETERMINERS and tag in ("DT", "PRP$") and left is not None and lower[left] in COORDINATORS \
                and left > 0 and tags[left - 1] in NOUN_TAGS | NAME_TAGS:
            first = left - 1
            while first > 0 and tags[first - 1] in NOUN_PHRASE_INSIDE - {",", "CC"} | NOUN_TAGS:
                first -= 1
            if first == 0 or lower[first - 1] not in DETERMINERS:
                add("determiner_in_one_conjunct", f"{tokens[p]!r} after {tokens[left]!r}: {window}")
        if word in COORDINATORS and left is not None and right is not None:
            if lower[left] == "," and right_tag.startswith("JJ") and left > 0 and tags[left - 1].startswith("JJ"):
                add("comma_and_between_adjectives", f", {tokens[p]} between {tokens[left - 1]!r} and "
                                                    f"{tokens[right]!r}: {window}")
            elif lower[left] != "," and (lower[right] in NOT_A_CONJUNCT or _kind(left_tag) != _kind(right_tag)) \
                    and not (right in inserted_set and tags[right] == "PRP"):
                add("conjunction_inside_phrase", f"{tokens[p]!r} joins {tokens[left]!r} ({left_tag}) and "
                                                 f"{tokens[right]!r} ({right_tag}): {window}")
        if word == "that" and (left_tag in ("CC", ",", ":", ".") or right_tag.startswith("VB")):
            add("stray_that", f"'that' after {tokens[left] if left is not None else ''!r}: {window}")
    # idioms of the seed split by an insertion
    for idiom, start, end in _idiom_spans(seed_tokens):
        seed_index = 0
        for i in range(len(tokens)):
            if i in inserted_set:
                if start < seed_index < end:
                    add("broken_idiom", f"{tokens[i]!r} inside {' '.join(idiom)!r}")
                continue
            seed_index += 1
    return out
