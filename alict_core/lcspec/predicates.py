"""Evaluate spec predicates on annotated texts (corpus sentences or expanded test sentences)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Sequence

from alict_core.data.polarity_lexicon import load_sentiwordnet
from alict_core.data.slurs import has_slur, is_slur
from alict_core.lcspec.schema import ClassSet, LengthPredicate, Predicate, SearchGroup

_CLITIC = re.compile(r"(?i)^(.+?)(n't|'s|'re|'ll|'ve|'d|'m)$")
_PUNCT = re.compile(r"^([\"(\[{`]*)(.*?)([\"')\]}.,!?;:]*)$")


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[str, ...]:
    """PTB-style tokens as in SST ("don't." -> "do", "n't", "."), for rule strings and phrases."""
    tokens: list[str] = []
    for chunk in text.split():
        parts = _PUNCT.match(chunk)
        assert parts is not None  # every part of the pattern is optional, so any whitespace-free chunk matches
        lead, core, trail = parts.groups()
        tokens.extend(lead)
        clitic = _CLITIC.match(core) if core else None
        if clitic and clitic.group(1).lower() not in ("", "'"):
            tokens.extend([clitic.group(1), clitic.group(2)])
        elif core:
            tokens.append(core)
        tokens.extend(trail)
    return tuple(tokens)


@lru_cache(maxsize=4096)
def lower_tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in tokenize(text))


def length_holds(p: LengthPredicate, n: int) -> bool:
    return (
        (p.lt is None or n < p.lt) and (p.le is None or n <= p.le) and (p.gt is None or n > p.gt)
        and (p.ge is None or n >= p.ge) and (p.eq is None or n == p.eq)
    )


def set_semantics(spec: ClassSet, present: set[str] | frozenset[str]) -> bool:
    """include/exclude × any/all over a set of present names."""
    hits = [value in present for value in spec.values]
    if spec.include is not None:
        return any(hits) if spec.mode == "any" else all(hits)
    return not any(hits) if spec.mode == "any" else not all(hits)


def lexicon_classes(classes: frozenset[str], lower: Sequence[str]) -> frozenset[str]:
    """The text's lexicon classes, with ``slur`` also when one slur matcher finds a slur in any spelling."""
    if "slur" not in classes and has_slur(lower):
        return classes | {"slur"}
    return classes


def lexicon_holds(spec: ClassSet, classes: frozenset[str], lower: Sequence[str]) -> bool:
    """A ``lexicon`` predicate: a ``slur`` value is judged by ``slurs.has_slur`` (every spelling), not the tags."""
    return set_semantics(spec, lexicon_classes(classes, lower) if "slur" in spec.values else classes)


ValueIndex = tuple[dict[Any, frozenset[str]], tuple[int, ...], int]


def _value_index(spec: ClassSet, kind: str, key: Callable[[str], Any]) -> ValueIndex:
    """``key(value)`` (a phrase's lower-cased tokens, a prefix lower-cased) → the values giving it, the lengths to
    look for and the number of distinct values; kept on the predicate while its list is the same list of the same
    length."""
    source = spec.include if spec.include is not None else spec.exclude or []
    kept = spec._lookup
    if kept is not None and kept[0] == kind and kept[1] is source and kept[2] == len(source):
        return kept[3]
    index: dict[Any, set[str]] = {}
    for value in source:
        index.setdefault(key(value), set()).add(value)
    built: ValueIndex = ({k: frozenset(names) for k, names in index.items()}, tuple(sorted({len(k) for k in index})),
                         len(set(source)))
    spec._lookup = (kind, source, len(source), built)
    return built


def _holds(spec: ClassSet, present: set[str], distinct: int) -> bool:
    """``set_semantics`` from the values found, without a pass over every value."""
    hit = bool(present) if spec.mode == "any" else len(present) == distinct
    return hit if spec.include is not None else not hit


def phrases_hold(spec: ClassSet, tokens: Sequence[str]) -> bool:
    """A ``phrases`` predicate over lower-cased tokens: the text's n-grams looked up among the phrases, so the cost
    grows with the text, not with the list (24 lists of 1,000 phrases took the Specs page's live counts minutes)."""
    index, lengths, distinct = _value_index(spec, "phrases", lower_tokens)
    words = tuple(tokens)
    present: set[str] = set()
    for n in lengths:
        if n == 0:
            continue  # an empty phrase is in no text
        for start in range(len(words) - n + 1):
            present |= index.get(words[start:start + n], frozenset())
    return _holds(spec, present, distinct)


def prefixes_hold(spec: ClassSet, lower: Sequence[str]) -> bool:
    """A ``word_prefixes`` predicate ("nigg" begins "niggerette"): each token's beginnings looked up among the
    prefixes (20 lists of 1,000 prefixes took the Specs page's live counts minutes)."""
    index, lengths, distinct = _value_index(spec, "prefixes", str.lower)
    present: set[str] = set()
    for token in lower:
        for n in lengths:
            if n > len(token):
                break
            present |= index.get(token[:n], frozenset())
    return _holds(spec, present, distinct)


FINITE_VERB_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
SUBJECT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "PRP", "EX", "CD", "DT"})
NOT_OPENING_TAGS = frozenset({"UH", "CC", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD", "TO", ",", ":", "."}) | WH_TAGS


ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
NEW_PHRASE_TAGS = frozenset({"DT", "PDT", "PRP", "PRP$", "EX"})


NOUN_TAGS_ONLY = frozenset({"NN", "NNS", "NNP", "NNPS"})


def opener_then_clause(tags: Sequence[str], lower: Sequence[str]) -> bool:
    """Whether a text opening with a subordinator or preposition (IN) holds a main clause after it.

    One of: a clause after the first comma ("in the end , it works"); two finite verbs, the opener's and
    the main clause's ("if it were shorter it would work"); or a prepositional phrase then a new subject
    before the one finite verb ("in terms of execution this movie is"). Not: "if only it had the story",
    "as vulgar as it is banal", where the one verb belongs to the opener.
    """
    comma = next((i for i, tag in enumerate(tags) if tag == ","), None)
    if comma is not None:
        return is_clause(tags[comma + 1 :], lower[comma + 1 :])
    verbs = [i for i, tag in enumerate(tags) if tag in FINITE_VERB_TAGS]
    if len(verbs) >= 2:
        return True
    if not verbs:
        return False
    words = [tag for tag in tags[1 : verbs[0]] if tag not in (":", "``", "''")]
    return any(a in NOUN_TAGS_ONLY and b in NEW_PHRASE_TAGS | {"NNP", "NNPS"} - {a}
               for a, b in zip(words, words[1:], strict=False))


def is_clause(tags: Sequence[str], lower: Sequence[str] = ()) -> bool:
    """Whether PTB tags read as one complete declarative clause that can follow "I think that".

    It does not open with a conjunction, verb, wh-word or interjection ("but it ...", "offers ...", "what a
    mess ...", "oh ..."); an opening subordinator or preposition ("if", "because", "that", "in") needs a
    main clause after a comma ("in the end , it works"; not "if only it had the story to match", "that that
    ..."); an opening adjective is not followed by a new noun phrase ("so sad the film is": a predicate
    with no subject); its first finite verb (VBZ/VBD/VBP/MD) has a noun or pronoun before it (a subject) and
    no relative/wh-word or inner "that" before it ("a film that is", "so awful that you hope").
    """
    if not tags or tags[0] in NOT_OPENING_TAGS:
        return False
    if tags[0] == "IN":
        return opener_then_clause(tags, lower)
    opening = 0
    while opening < len(tags) and tags[opening] == "RB":
        opening += 1
    if (opening + 1 < len(tags) and tags[opening] in ADJECTIVE_TAGS and tags[opening + 1] in NEW_PHRASE_TAGS):
        return False
    subject = False
    for position, tag in enumerate(tags):
        if tag in WH_TAGS:
            return False
        if position > 0 and position < len(lower) and lower[position] == "that":
            return False
        if tag in FINITE_VERB_TAGS:
            return subject
        if tag in SUBJECT_TAGS:
            subject = True
    return False


NOUN_PHRASE_TAGS = frozenset({"DT", "PDT", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP", "PRP$", "CD", "POS"})
NOUN_PHRASE_INNER_TAGS = NOUN_PHRASE_TAGS | {"IN", "CC"}
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "PRP"})
AFTER_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "POS", "IN", "CC", "CD"})
PREDETERMINERS = frozenset({"all", "both", "half", "such", "quite"})


# Verb and interjection contractions the tagger reads as nouns ("gonna get some ...": NNP VBP).
NOT_NOUNS = frozenset({"gonna", "gotta", "wanna", "wuz", "cuz", "tho", "idk", "idgaf", "smh", "pls", "plz"})


def subject_span(tags: Sequence[str], lower: Sequence[str] = ()) -> int | None:
    """Length of a plain noun-phrase subject opening the text, or None when there is none.

    Every token before the first finite verb (VBZ/VBD/VBP/MD) is part of a noun phrase (determiner,
    adjective, noun, pronoun, number, possessive; "of"/"and" inside it, not first; after a noun only
    a noun, "of"/"and" or a number, not a new phrase; no "gonna", "cuz" misread as a noun; no two determiners
    in a row but after "all", "both", "half": "an these ..."), so the text starts
    "<subject> <verb> ..." ("most criminals in france are ...") and not with an adverb, interjection,
    verb or fragment ("well cuz da jews suck", "no problem naming the kike is", "meanwhile the rat is"), and its
    verb does not follow "and" ("captivates and shows ...": a verb misread as a noun, then a second verb).
    """
    previous = ""
    for position, tag in enumerate(tags):
        if tag in FINITE_VERB_TAGS:
            if previous == "CC":
                return None  # a verb straight after "and": no subject of its own ("a return to ... magic and is")
            return position or None
        if tag not in (NOUN_PHRASE_INNER_TAGS if position else NOUN_PHRASE_TAGS):
            return None
        if position < len(lower) and lower[position] in NOT_NOUNS:
            return None
        if previous in NOUN_TAGS and tag not in AFTER_NOUN_TAGS:
            return None  # a new phrase after a noun: "arab refugees the jews are", "long story short whites"
        if previous == "DT" == tag and (position > len(lower) or lower[position - 1] not in PREDETERMINERS):
            return None  # two determiners in a row: "an these nigger biches look" (not "all the jews")
        previous = tag
    return None


def subject_holds(words: Sequence[str] | None, tags: Sequence[str], lower: Sequence[str]) -> bool:
    """The text opens with a plain noun-phrase subject (``subject_span``) holding one of ``words`` if given."""
    span = subject_span(tags, lower)
    if span is None:
        return False
    return words is None or any(word in words for word in lower[:span])


COPULAS = frozenset({"is", "'s", "s", "was", "be", "being", "been", "are", "were"})
THING_PRONOUNS = frozenset({"it", "this", "that", "what", "which"})
COMMON_NOUN_TAGS = frozenset({"NN", "NNS"})


# Slurs that are also the plain, reclaimed name of an identity ("the queer community", "a homo couple"): a use
# of them is a slur use only as an insult noun ("you queer"), never as an adjective. A small closed class.
RECLAIMED_IDENTITY_WORDS = frozenset({"queer", "queers", "dyke", "dykes", "homo", "homos"})
# Singular nouns for one person: a slur said of one of these ("my boss is a bitch") is said of a person; any
# other common noun is a thing ("the most retarded cut"), an abstraction ("justice is a bitch") or a group or
# side ("the left is retarded").
PERSON_NOUNS = frozenset({
    "guy", "man", "woman", "dude", "person", "kid", "boy", "girl", "bro", "friend", "mom", "mum", "dad", "mother",
    "father", "brother", "sister", "wife", "husband", "girlfriend", "boyfriend", "son", "daughter", "lady", "chick",
    "teacher", "boss", "neighbor", "neighbour", "roommate", "cousin", "uncle", "aunt", "ex", "coworker", "buddy",
    "idiot", "loser", "president", "player", "actor", "actress", "singer", "rapper", "host", "cop", "one", "someone",
    "somebody", "anyone", "anybody", "everyone", "nobody", "grandfather", "grandmother", "grandpa", "grandma",
    "stepdad", "stepmom", "bf", "gf", "bestie", "teammate", "classmate", "manager", "child", "baby",
})
PERSON_PRONOUNS = frozenset({"i", "you", "u", "ya", "he", "she", "me", "him", "her", "ur", "yo"})
VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBP", "VBZ"})
NOUN_TAGS_ALL = frozenset({"NN", "NNS", "NNP", "NNPS"})


def _said_of_person(subject: int, tags: Sequence[str], lower: Sequence[str], names: bool = True) -> bool:
    """Whether the word at ``subject`` (the subject of "is a <slur>", or the noun after an attributive slur)
    names one person: a personal pronoun ("you", "he"), a singular person noun, a slur or (``names``, for a
    subject) a name: a word that is no English noun ("hannah baker"; after an attributive slur such a word is
    slang for a thing: "honky tonk")."""
    word, tag = lower[subject], tags[subject]
    if word in PERSON_PRONOUNS or is_slur(word):
        return True
    if tag == "PRP" or word in THING_PRONOUNS:
        return False  # "it", "they", "we": a thing or a group
    if names and tag in ("NN", "NNP") and (_is_name(word) or (subject and _is_name(lower[subject - 1])
                                                   and tags[subject - 1] in ("NN", "NNP"))):
        return True  # "hannah baker was a bitch": HateXplain is lower-cased, a name is a word no noun of English
    return tag == "NN" and word in PERSON_NOUNS


def _is_name(word: str) -> bool:
    """Whether a lower-cased word is no English noun (SentiWordNet), so a name ("hannah"; not "justice")."""
    return word.isalpha() and (word, "noun") not in load_sentiwordnet()


def _insult_noun(position: int, tags: Sequence[str], lower: Sequence[str]) -> bool:
    """Whether the word at ``position`` is a noun heading its own phrase ("a queer", "you queer", "raging
    queer"): a noun after a determiner, possessive, adjective or pronoun, with no noun after it ("queer theory")."""
    previous = tags[position - 1] if position else ""
    following = tags[position + 1] if position + 1 < min(len(tags), len(lower)) else ""
    return (tags[position] in NOUN_TAGS_ALL and following not in NOUN_TAGS_ALL
            and previous in ("DT", "PRP$", "JJ", "PRP", "CD"))


def _names_person(position: int, tags: Sequence[str], lower: Sequence[str]) -> bool:
    """Whether the slur at ``position`` names or describes a person (see ``slur_names_person``)."""
    tag = tags[position]
    start = position - 1
    while start >= 0 and tags[start] in ("DT", "JJ", "RB"):
        start -= 1  # back over "a", "real", "total" to the copula
    after_copula = start >= 1 and lower[start] in COPULAS
    if tag in VERB_TAGS and not after_copula:
        return False  # a verb ("it will cripple the economy", "retarded the whole industry"): another sense
    if tag in ("NNS", "NNPS"):
        return False  # "the queers in the armed forces": a plural slur is aimed at a group
    if lower[position] in RECLAIMED_IDENTITY_WORDS and not _insult_noun(position, tags, lower):
        return False  # "the queer community", "being queer": the plain identity word, not an insult
    if position + 2 < len(lower) and lower[position + 1] == "for" and tags[position + 2] not in ("VBG", "PRP"):
        return False  # "a slut for gore": a liking, not a person ("a faggot for buying it" is a person)
    after = position + 1
    while after < len(lower) and tags[after] in ("JJ", "VBN"):
        after += 1
    modifies = tag in ("JJ", "VBN") or (tag == "NN" and after < len(lower) and not _is_name(lower[after]))
    if modifies and after < len(lower) and tags[after] in NOUN_TAGS_ALL:  # "slut phase", not "bitch wtf"
        if not _said_of_person(after, tags, lower, names=False):
            return False  # "retarded talk", "retarded people", "queer shop": a thing or a group, not a person
    if after_copula:
        subject = start - 1
        while subject >= 0 and (tags[subject] in VERB_TAGS | {"MD", "TO", "RB"}):
            subject -= 1  # "i should be", "ima stop being": back to the subject
        if subject < 0 or not (tags[subject] in NOUN_TAGS_ALL or tags[subject] == "PRP"):
            return True  # no subject to judge ("stop being a bitch"): the addressee, a person
        return _said_of_person(subject, tags, lower)  # "life is a bitch", "the left is retarded": no person
    return True


def slur_names_person(tags: Sequence[str], lower: Sequence[str]) -> bool:
    """Whether some slur (``slurs.is_slur``, any spelling) names or describes a person, by PTB tags.

    A slur is not used of a person when it is a verb ("cripple the economy"), when a reclaimed identity word
    ("queer") is not an insult noun ("the queer community", "queer theory"), when it modifies a noun that is not
    one person ("retarded talk", "retarded people"), when it is plural (aimed at a group), when its copula's
    subject is not a person (a personal pronoun, a name, a singular person noun or another slur: "life is a
    bitch", "it 's a bitch", "the left is retarded"), or when "for" and a thing follow it ("a slut for chocolate").
    """
    return any(is_slur(word) and _names_person(i, tags, lower) for i, word in enumerate(lower[: len(tags)]))




def predicate_holds(
    predicate: Predicate, lower: Sequence[str], classes: frozenset[str], label: str | None,
    tags: Sequence[str] | None = None,
) -> bool:
    """One predicate on lower-cased tokens, their lexicon classes, (when known) the label and PTB tags.

    The fields are tried in ``Predicate.kind`` order; exactly one is set. Tag predicates hold when the
    tags are unknown (``None``), as the label does.
    """
    if (length := predicate.length) is not None:
        return length_holds(length, len(lower))
    if (labels := predicate.label) is not None:
        return label is None or label in labels
    if (lexicon := predicate.lexicon) is not None:
        return lexicon_holds(lexicon, classes, lower)
    if (words := predicate.words) is not None:
        return set_semantics(words, set(lower))
    if (phrases := predicate.phrases) is not None:
        return phrases_hold(phrases, lower)
    if (starts := predicate.starts_with) is not None:
        return any(tuple(lower[: len(p)]) == p for p in map(lower_tokens, starts))
    if (ends := predicate.ends_with) is not None:
        n = len(lower)
        return any(len(p) <= n and tuple(lower[n - len(p) :]) == p for p in map(lower_tokens, ends))
    if (tag_set := predicate.tags) is not None:
        return tags is None or set_semantics(tag_set, set(tags))
    if (clause := predicate.clause) is not None:
        return tags is None or is_clause(tags, lower) == clause
    if (count := predicate.tag_count) is not None:
        return tags is None or length_holds(count, sum(tag in count.tags for tag in tags))
    if (subject := predicate.subject) is not None:
        return tags is None or subject_holds(subject.words, tags, lower)
    if (prefixes := predicate.word_prefixes) is not None:
        return prefixes_hold(prefixes, lower)
    if (person := predicate.slur_names_person) is not None:
        return tags is None or slur_names_person(tags, lower) == person
    raise AssertionError(predicate.kind)


Check = Callable[[Sequence[str], frozenset[str], str | None, Sequence[str] | None], bool]


def compile_predicate(predicate: Predicate) -> Check:
    """A fast closure for one predicate (kind dispatch and phrase tokenisation done once)."""
    if (length := predicate.length) is not None:
        return lambda lower, classes, label, tags: length_holds(length, len(lower))
    if predicate.label is not None:
        labels = frozenset(predicate.label)
        return lambda lower, classes, label, tags: label is None or label in labels
    if (spec := predicate.lexicon) is not None:
        if "slur" in spec.values:
            return lambda lower, classes, label, tags: lexicon_holds(spec, classes, lower)
        return lambda lower, classes, label, tags: set_semantics(spec, classes)
    return lambda lower, classes, label, tags: predicate_holds(predicate, lower, classes, label, tags)


def group_matcher(group: SearchGroup) -> Callable[[object], bool]:
    """``matches(item)``: whether a corpus item satisfies the group's split filter and every predicate."""
    checks = [compile_predicate(p) for p in group.predicates]
    splits = frozenset(group.split) if group.split is not None else None

    def matches(item) -> bool:
        if splits is not None and item.split not in splits:
            return False
        tags = item.annotation.tags
        return all(check(item.lower, item.class_set, item.label, tags) for check in checks)

    return matches


def first_failing(
    group: SearchGroup, lower: Sequence[str], classes: frozenset[str], skip: tuple[str, ...] = (),
    tags: Sequence[str] | None = None,
) -> Predicate | None:
    """The first predicate of ``group`` that fails on a text (label unknown), ignoring kinds in ``skip``."""
    for predicate in group.predicates:
        if predicate.kind in skip:
            continue
        if not predicate_holds(predicate, lower, classes, None, tags):
            return predicate
    return None
