"""INV perturbations for fairness LCs: swap identity-group terms and gendered pronouns."""

from __future__ import annotations

from functools import lru_cache

from alict_core.data.checked import reads_data
from alict_core.data.files import data_file
from alict_core.data.lexicons import identity_groups, pronoun_swap_table
from alict_core.data.polarity_lexicon import load_sentiwordnet


@lru_cache(maxsize=1)
def _identity_forms() -> dict[tuple[str, ...], tuple[int, str]]:
    """Term words -> (group index, form name) for every identity term."""
    table: dict[tuple[str, ...], tuple[int, str]] = {}
    for index, group in enumerate(identity_groups()):
        for form in ("plural", "singular", "adjective"):
            table.setdefault(tuple(getattr(group, form).split()), (index, form))
    return table


def _match_case(source: str, target: str) -> str:
    return target[:1].upper() + target[1:] if source[:1].isupper() else target


def in_title(tokens: list[str], start: int) -> bool:
    """Whether the capitalised token at ``start`` sits inside a capitalised title or name ("Real Women Have
    Curves"): a capitalised neighbour that does not open a sentence."""
    if not tokens[start][:1].isupper():
        return False

    def capital_inside(i: int) -> bool:
        return (0 < i < len(tokens) and tokens[i][:1].isupper() and tokens[i] != "I"
                and tokens[i - 1] not in SENTENCE_STARTS)

    return capital_inside(start) or capital_inside(start - 1) or capital_inside(start + 1)


def person_sense(lower: list[str], end: int) -> bool:
    """Whether a bare identity adjective ending at ``end`` modifies a person noun (skipping one more adjective
    or an "and"/"or" plus adjective: "black and gay people")."""
    return _person_noun_after(lower, end) is not None


def _person_noun_after(lower: list[str], end: int) -> int | None:
    """Position of the person noun within the next four words from ``end``, past adjectives, "and"/"or" and
    commas only, else None."""
    for i in range(end, min(end + 4, len(lower))):
        if lower[i] in PERSON_NOUNS:
            return i
        if not (lower[i] in COORDINATORS or lower[i] in SENSE_CHECKED or lower[i] == ","):
            return None
    return None


def find_identity_terms(tokens: list[str]) -> list[tuple[int, int, int, str]]:
    """(start, end, group index, form) of each identity term occurrence, longest match first.

    Skipped: a bare adjective in another sense ("black comedy": no person noun follows) and a term inside a
    capitalised title ("Real Women Have Curves")."""
    forms = _identity_forms()
    lower = [t.lower() for t in tokens]
    found, i = [], 0
    longest = max(len(k) for k in forms)
    while i < len(lower):
        for n in range(longest, 0, -1):
            key = tuple(lower[i : i + n])
            if len(key) == n and key in forms:
                keep = not in_title(tokens, i) and not (
                    n == 1 and key[0] in SENSE_CHECKED and not person_sense(lower, i + 1))
                if keep:
                    found.append((i, i + n, *forms[key]))
                i += n
                break
        else:
            i += 1
    return found


# Words that form a fixed pair with an identity term in a coordination ("men and women", "black and white"):
# swapping one side makes nonsense ("men and gay people"), so a coordinated identity term stays as it is.
PAIR_WORDS = frozenset({
    "man", "men", "woman", "women", "boy", "boys", "girl", "girls", "male", "males", "female", "females",
    "husband", "husbands", "wife", "wives", "brother", "brothers", "sister", "sisters", "lady", "ladies",
    "gentleman", "gentlemen", "mother", "mothers", "father", "fathers", "son", "sons", "daughter", "daughters",
    "black", "white", "gay", "straight",
})
COORDINATORS = frozenset({"and", "or", "&", "nor"})
TITLES = frozenset({"mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "sir", "lady", "lord", "king", "queen"})
SENTENCE_STARTS = frozenset({".", "!", "?"})
# Singular nouns of one gender: a pronoun after one most likely refers to it ("a teenage boy in love with
# his stepmother"), so swapping the pronoun alone makes the sentence incoherent.
GENDERED_NOUNS = frozenset({
    "man", "woman", "boy", "girl", "husband", "wife", "brother", "sister", "lady", "gentleman", "mother",
    "father", "son", "daughter", "actress", "king", "queen", "prince", "princess", "guy", "gal",
    "mom", "mum", "dad", "uncle", "aunt", "nephew", "niece", "grandmother", "grandfather", "stepmother",
    "stepfather", "boyfriend", "girlfriend", "widow", "widower", "heroine", "bride", "groom",
})
# The singular nouns above that name a woman or girl: with one of them (or its plural) beside "women" or
# "female", swapping the group term alone makes the sentence clash ("Muslims ... their daughters").
FEMALE_NOUNS = frozenset({
    "woman", "girl", "wife", "sister", "lady", "mother", "daughter", "actress", "queen", "princess", "gal",
    "mom", "mum", "aunt", "niece", "grandmother", "stepmother", "girlfriend", "widow", "heroine", "bride",
})
POSSESSIVES = frozenset({"his", "her", "their", "my", "your", "our", "its"})
# Nouns for people: a bare identity adjective ("black", "gay", "female") names a group only before one of
# these ("black comedy", "a black and red van" are a genre and a colour, not identity terms).
PERSON_NOUNS = frozenset({
    "man", "men", "woman", "women", "person", "people", "persons", "folk", "folks", "boy", "boys", "girl",
    "girls", "kid", "kids", "child", "children", "teen", "teens", "teenager", "teenagers", "youth", "family",
    "families", "community", "communities", "actor", "actors", "actress", "actresses", "director", "directors",
    "filmmaker", "filmmakers", "character", "characters", "lead", "leads", "hero", "heroes", "heroine",
    "protagonist", "protagonists", "cast", "star", "stars", "artist", "artists", "writer", "writers", "student",
    "students", "worker", "workers", "couple", "couples", "friend", "friends", "father", "fathers", "mother",
    "mothers", "son", "sons", "daughter", "daughters", "guy", "guys", "americans", "american", "teenage",
    "audience", "audiences", "viewers", "individuals", "citizens", "neighbors", "neighbours",
    "athletes", "musicians", "singer", "singers", "comedian", "comedians", "cop", "cops", "soldier", "soldiers",
})
# Bare adjective forms that also have a non-identity sense (a colour, "gay abandon", "female plug").
SENSE_CHECKED = frozenset({"black", "white", "gay", "female", "trans", "disabled"})


def plural_forms(nouns: frozenset[str]) -> frozenset[str]:
    """The nouns and their regular or -man/-wife/-y plurals ("woman" -> "women", "wife" -> "wives")."""
    forms = set(nouns)
    for noun in nouns:
        if noun.endswith("man"):
            forms.add(noun[:-3] + "men")
        elif noun.endswith("fe"):
            forms.add(noun[:-2] + "ves")
        elif noun.endswith("y") and noun[-2:-1] not in "aeiou":
            forms.add(noun[:-1] + "ies")
        elif noun.endswith(("s", "sh", "ch", "x")):
            forms.add(noun + "es")
        else:
            forms.add(noun + "s")
    return frozenset(forms)


def same_gender_elsewhere(lower: list[str], gender: str, own: set[int]) -> bool:
    """Whether a gendered noun of ``gender`` (singular or plural, not the group's own terms: those in a title
    stay, the rest are swapped together) stands outside the positions ``own``: the
    group term likely names the same people ("women ... their daughters"). Pronouns do not count: in
    reviews "she" is mostly the director or actress, not the group."""
    nouns = plural_forms(FEMALE_NOUNS) if gender == "female" else frozenset()
    terms = {word for group in identity_groups() if group.name == gender
             for form in (group.singular, group.plural, group.adjective) for word in form.split()}
    return any(word in nouns - terms for i, word in enumerate(lower) if i not in own)


def adjective_as_name(tokens: list[str], start: int) -> bool:
    """Whether a capitalised identity adjective ("White", "Black") stands alone as a name: no person noun
    follows it ("White has n't developed characters"), so it is a surname, not a group."""
    token = tokens[start]
    lower = [t.lower() for t in tokens]
    return token[:1].isupper() and lower[start] in SENSE_CHECKED and not person_sense(lower, start + 1)


def in_fixed_pair(lower: list[str], start: int, end: int, identity_words: set[str]) -> bool:
    """Whether the identity term at tokens [start, end) is coordinated with a pair word or another term."""
    partners = PAIR_WORDS | identity_words
    before = lower[start - 2] if start >= 2 and lower[start - 1] in COORDINATORS else None
    after = lower[end + 1] if end + 1 < len(lower) and lower[end] in COORDINATORS else None
    return (before is not None and before in partners) or (after is not None and after in partners)


@lru_cache(maxsize=1)
def _dictionary_words() -> frozenset[str]:
    """Lower-cased WordNet lemmas (SentiWordNet's vocabulary) and spaCy's stop words: English words, not names."""
    from spacy.lang.en.stop_words import STOP_WORDS  # spaCy is heavy: loaded only when a swap needs it

    return frozenset(word for word, _ in load_sentiwordnet()) | frozenset(STOP_WORDS)


@lru_cache(maxsize=1)
@reads_data("sst/datasetSentences.txt")
def _lowercase_in_reviews() -> frozenset[str]:
    """Words that occur lower-cased in the SST sentences (a name such as "Davis" or "Grant" never does)."""
    words: set[str] = set()
    with open(data_file("sst/datasetSentences.txt"), encoding="utf-8") as handle:
        for line in handle:
            words.update(w for w in line.split() if w.islower())
    return frozenset(words)


def opening_name(token: str) -> bool:
    """Whether a capitalised sentence-opening token is a name ("Caine makes us watch as his character ..."):
    neither it nor a plain inflection of it is an English word (WordNet lemma or stop word), or none of them
    occurs lower-cased in the SST reviews ("Davis", "Grant", "Lawrence": words in WordNet, names in reviews)."""
    lower = token.lower()
    if not token[:1].isupper() or not lower.isalpha() or token == "I":
        return False
    words = _dictionary_words()
    stems = {lower}
    for suffix, replacements in (("ies", ("y",)), ("es", ("", "e")), ("s", ("",)), ("ed", ("", "e")),
                                 ("ing", ("", "e")), ("ly", ("",))):
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2:
            stems.update(lower[: -len(suffix)] + r for r in replacements)
    if lower in pronoun_swap_table().swap or any(lower in key for key in _identity_forms()):
        return False
    return not (stems & words) or not (stems & _lowercase_in_reviews())


def named_antecedent(tokens: list[str]) -> bool:
    """Whether a name, a title or a gendered noun stands in the sentence: a gendered pronoun most likely
    refers to that person (a singular gendered noun only before a pronoun, and not itself possessed:
    "Mr. Broomfield ... himself", "( Madonna ) ... she", "she lets her ... ( Denis ' )
    story", "a boy in love with his stepmother"), so swapping the pronoun alone makes nonsense.
    A name after the pronoun counts too (cataphora).
    """
    table = pronoun_swap_table()
    last_pronoun = max((i for i, t in enumerate(tokens) if table.counterpart(t.lower(), tokens[i + 1 : i + 4])),
                       default=-1)
    for i, token in enumerate(tokens):
        if token.lower() in TITLES:
            return True
        if (i == 0 or tokens[i - 1] in SENTENCE_STARTS) and (opening_name(token) or adjective_as_name(tokens, i)):
            return True
        if (token.lower() in GENDERED_NOUNS and i < last_pronoun
                and (i == 0 or tokens[i - 1].lower() not in POSSESSIVES)):
            return True  # "a boy in love with his stepmother"; not "his mother liked her cooking"
        previous = tokens[i - 1] if i else None
        if (i and token[:1].isupper() and token != "I" and previous not in SENTENCE_STARTS
                and any(c.isalpha() for c in token)):
            return True
    return False


def swap_pronouns(tokens: list[str]) -> list[str]:
    """The tokens with every gendered pronoun swapped ("treating her as" -> "treating him as").

    Nothing is swapped when the sentence holds a name, a title or a singular gendered noun (the pronoun's
    likely antecedent: the pronoun must agree with it).
    """
    table = pronoun_swap_table()
    first = next((i for i, token in enumerate(tokens)
                  if table.counterpart(token.lower(), tokens[i + 1 : i + 4]) is not None), None)
    if first is None or named_antecedent(tokens):
        return list(tokens)
    out = []
    for i, token in enumerate(tokens):
        other = table.counterpart(token.lower(), tokens[i + 1 : i + 4])
        out.append(token if other is None else _match_case(token, other))
    return out


# Determiners that make a noun phrase refer to particular people ("his women", "Brown 's women"), and the words
# before a singular term that still make it generic ("every woman", "what it means to be a woman").
SPECIFIC_DETERMINERS = POSSESSIVES | frozenset({"'s", "'", "this", "that", "these", "those", "the", "both", "two",
                                                "three", "four", "five", "six", "seven", "eight", "nine", "ten"})
GENERIC_SINGULAR_CUES = frozenset({"every", "any", "each", "no"})
GENERIC_ARTICLE_CUES = frozenset({"be", "being", "as"})
SINGULAR_PERSON_NOUNS = frozenset({
    "man", "woman", "person", "boy", "girl", "kid", "child", "teen", "teenager", "youth", "actor", "actress",
    "director", "filmmaker", "character", "lead", "hero", "heroine", "protagonist", "star", "artist", "writer",
    "student", "worker", "friend", "father", "mother", "son", "daughter", "guy", "american", "individual",
    "citizen", "neighbor", "neighbour", "singer", "comedian", "cop", "soldier", "couple", "family", "community",
})


def _head_noun(lower: list[str], end: int, form: str) -> int | None:
    """Position of the person noun an identity term ending at ``end`` heads or modifies, or None (an adjective
    before no person noun: "male hip hop fantasy" names no people)."""
    if form != "adjective":
        return end - 1
    return _person_noun_after(lower, end)


def refers_generically(tokens: list[str], start: int, end: int, form: str) -> bool:
    """Whether the identity term at tokens [start, end) refers to people as a group, not to particular people.

    Generic: a plural noun phrase ("women", "gay men", "black people") with no definite, possessive or
    demonstrative determiner in it, or a singular one after "every"/"any"/"each"/"no" or "be a"/"as a"
    ("to be a woman"). Particular: a singular term otherwise ("a female director", "the gay man": a person of
    the story), a definite or possessed group ("his women", "Brown 's women", "the women": the film's), an
    adjective before no person noun ("male hip hop fantasy") and a term beside a name ("Ellen , a gay woman")."""
    lower = [t.lower() for t in tokens]
    head = _head_noun(lower, end, form)
    if head is None:
        return False
    singular = lower[head] in SINGULAR_PERSON_NOUNS or form == "singular"
    specific = SPECIFIC_DETERMINERS if singular else SPECIFIC_DETERMINERS - {"this", "that"}  # "the notion that women"
    determiner, before = "", start - 1
    for _ in range(3):  # back over the phrase's adjectives and a possessor ("Kate 's jealous female friends")
        word = lower[before] if before >= 0 else ""
        if word in specific:
            determiner = word
            break
        if word in _modifier_words() or (word.isalpha() and word not in _dictionary_stop_words()) or "-" in word:
            before -= 1
            continue
        determiner = word  # "a", "of", "," ...: the phrase starts here
        break
    if determiner in specific:
        return False  # "his women", "Kate 's jealous female friends", "especially the women": particular people
    if any(0 < i < len(tokens) and tokens[i][:1].isupper() and tokens[i] != "I" and tokens[i - 1] not in SENTENCE_STARTS
           for i in (start - 1, start - 2, head + 1, head + 2)):
        return False  # a name beside the term (an appositive or a title): a particular person
    if not singular:
        return True
    if determiner in GENERIC_SINGULAR_CUES:
        return True
    return determiner in ("a", "an") and before >= 1 and lower[before - 1] in GENERIC_ARTICLE_CUES


@lru_cache(maxsize=1)
def _dictionary_stop_words() -> frozenset[str]:
    """spaCy's English stop words (function words end a noun phrase's modifiers)."""
    from spacy.lang.en.stop_words import STOP_WORDS  # spaCy is heavy: loaded only when a swap needs it

    return frozenset(STOP_WORDS)


@lru_cache(maxsize=1)
def _modifier_words() -> frozenset[str]:
    """Articles, quantifiers and the identity adjectives that may stand between a determiner and the term."""
    adjectives = {word for key in _identity_forms() for word in key}
    return frozenset({"many", "some", "young", "old", "other", "few", "all", "most", "both"}) | adjectives


def identity_swaps(text: str) -> list[str]:
    """Variants of ``text`` with every identity term that refers to people generically moved to each other group.

    Terms keep their form (singular/plural/adjective); all occurrences move to the same target group.
    Only terms for a group are swapped (``refers_generically``): a term for a particular person ("a female
    director", "his women") and pronouns (in reviews they stand for the director, an actor or a character;
    ``swap_pronouns`` is kept for callers that want them) stay. A term coordinated with its pair ("men and
    women", "black and white") is kept as it is, and so is a gender term ("women", "female") beside a
    gendered noun of that gender ("their daughters"); a capitalised identity adjective with no person noun
    after it ("White has ...") is a name.
    """
    tokens = text.split()
    lower = [t.lower() for t in tokens]
    identity_words = {word for key in _identity_forms() for word in key}
    occurrences = [o for o in find_identity_terms(tokens) if not in_fixed_pair(lower, o[0], o[1], identity_words)]
    groups = identity_groups()
    own = {i for start, end, _, _ in occurrences for i in range(start, end)}
    occurrences = [o for o in occurrences if not same_gender_elsewhere(lower, groups[o[2]].name, own)
                   and refers_generically(tokens, o[0], o[1], o[3])]
    variants: list[str] = []
    if occurrences:
        present = {g for _, _, g, _ in occurrences}
        for target_index, target in enumerate(groups):
            if present == {target_index}:
                continue
            out, cursor = [], 0
            for start, end, _, form in occurrences:
                out.extend(tokens[cursor:start])
                replacement = getattr(target, form).split()
                replacement[0] = _match_case(tokens[start], replacement[0])
                out.extend(replacement)
                cursor = end
            out.extend(tokens[cursor:])
            variants.append(" ".join(out))
    return list(dict.fromkeys(v for v in variants if v != text))
