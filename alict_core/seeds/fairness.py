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


def swap_pronouns(tokens: list[str]) -> list[str]:
    """The tokens with every gendered pronoun swapped ("treating her as" -> "treating him as")."""
    table = pronoun_swap_table()
    out = []
    for i, token in enumerate(tokens):
        other = table.counterpart(token.lower(), tokens[i + 1 : i + 4])
        out.append(token if other is None else _match_case(token, other))
    return out


def identity_swaps(text: str) -> list[str]:
    """Variants of ``text`` with every identity term moved to each other group, plus a pronoun swap.

    Terms keep their form (singular/plural/adjective); all occurrences move to the same target group.
    """
    tokens = text.split()
    occurrences = find_identity_terms(tokens)
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
