"""INV perturbations for fairness LCs: swap identity-group terms and gendered pronouns."""

from __future__ import annotations

from functools import lru_cache

from alict_core.data.lexicons import identity_groups, pronoun_swap_table


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


def find_identity_terms(tokens: list[str]) -> list[tuple[int, int, int, str]]:
    """(start, end, group index, form) of each identity term occurrence, longest match first."""
    forms = _identity_forms()
    lower = [t.lower() for t in tokens]
    found, i = [], 0
    longest = max(len(k) for k in forms)
    while i < len(lower):
        for n in range(longest, 0, -1):
            key = tuple(lower[i : i + n])
            if len(key) == n and key in forms:
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
SENTENCE_STARTS = frozenset({".", "!", "?", "``", "`", "'", '"', "(", "--", ":", ";"})


def in_fixed_pair(lower: list[str], start: int, end: int, identity_words: set[str]) -> bool:
    """Whether the identity term at tokens [start, end) is coordinated with a pair word or another term."""
    partners = PAIR_WORDS | identity_words
    before = lower[start - 2] if start >= 2 and lower[start - 1] in COORDINATORS else None
    after = lower[end + 1] if end + 1 < len(lower) and lower[end] in COORDINATORS else None
    return (before is not None and before in partners) or (after is not None and after in partners)


def named_antecedent(tokens: list[str], upto: int) -> bool:
    """Whether a name or a title stands before token ``upto``: a gendered pronoun after it most likely
    refers to that person ("Mr. Broomfield ... himself"), so swapping the pronoun alone makes nonsense."""
    for i, token in enumerate(tokens[:upto]):
        if token.lower() in TITLES:
            return True
        previous = tokens[i - 1] if i else None
        if (i and token[:1].isupper() and token != "I" and previous not in SENTENCE_STARTS
                and any(c.isalpha() for c in token)):
            return True
    return False


def swap_pronouns(tokens: list[str]) -> list[str]:
    """The tokens with every gendered pronoun swapped ("treating her as" -> "treating him as").

    Nothing is swapped when a name or title comes before the first gendered pronoun (its likely
    antecedent: the pronoun must agree with it).
    """
    table = pronoun_swap_table()
    first = next((i for i, token in enumerate(tokens)
                  if table.counterpart(token.lower(), tokens[i + 1 : i + 4]) is not None), None)
    if first is None or named_antecedent(tokens, first):
        return list(tokens)
    out = []
    for i, token in enumerate(tokens):
        other = table.counterpart(token.lower(), tokens[i + 1 : i + 4])
        out.append(token if other is None else _match_case(token, other))
    return out


def identity_swaps(text: str) -> list[str]:
    """Variants of ``text`` with every identity term moved to each other group, plus a pronoun swap.

    Terms keep their form (singular/plural/adjective); all occurrences move to the same target group.
    A term coordinated with its pair ("men and women", "black and white") is kept as it is; pronouns
    are not swapped after a name or title that is their likely antecedent.
    """
    tokens = text.split()
    lower = [t.lower() for t in tokens]
    identity_words = {word for key in _identity_forms() for word in key}
    occurrences = [o for o in find_identity_terms(tokens) if not in_fixed_pair(lower, o[0], o[1], identity_words)]
    groups = identity_groups()
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
    swapped = swap_pronouns(tokens)
    if swapped != tokens:
        variants.append(" ".join(swapped))
    return list(dict.fromkeys(v for v in variants if v != text))
