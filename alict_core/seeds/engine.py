"""``find_seeds``: search a corpus with an LC spec and apply its generative rules, with sampling caps."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from alict_core.common.hashing import hash_json, hash_text
from alict_core.data.corpus import Corpus, CorpusItem
from alict_core.data.hatexplain import hatexplain_categories
from alict_core.lcspec.expectations import from_spec
from alict_core.lcspec.predicates import group_matcher, tokenize
from alict_core.lcspec.schema import Expected, GroupPart, LCSpec, Rule
from alict_core.seeds.fairness import identity_swaps
from alict_core.seeds.types import Seed, SeedSet, Segment


@dataclass(frozen=True)
class Piece:
    """One filled concat part: its text and, for group parts, the corpus item."""

    text: str
    item: CorpusItem | None = None
    group: str | None = None


@dataclass(frozen=True)
class GroupSlot:
    """A concat part filled by a group's items; pieces are made only for drawn candidates."""

    group: str
    items: list[CorpusItem]
    first: bool
    last: bool

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Piece:
        item = self.items[index]
        return Piece(_fit_sentence(item, self.first, self.last), item, self.group)


def match_groups(spec: LCSpec, corpus: Corpus) -> dict[str, list[CorpusItem]]:
    """Corpus items matched by each search group, in corpus order."""
    matches = {}
    for group in spec.search:
        matcher = group_matcher(group)
        items = [item for item in corpus if matcher(item)]
        if group.category is not None:
            wanted, category_of = frozenset(group.category), hatexplain_categories()
            items = [item for item in items if category_of.get(item.id) in wanted]
        matches[group.name] = items
    return matches


def normalise_fixed(text: str) -> str:
    """Fixed rule strings are tokenised like the corpus (PTB style) so every seed is space-tokenised."""
    return " ".join(tokenize(text))


def expected_for(expected: Expected, sources: dict[str, CorpusItem]) -> dict:
    """The stored form of a rule's expectation for one case (typed in ``alict_core.lcspec.expectations``)."""
    return from_spec(expected, {group: item.label for group, item in sources.items()}).to_dict()


FINAL_MARKS = frozenset({".", "!", "?", "...", ".."})
# Negating tokens: a target followed by one is already negated ("is not", "is n't", "is never", "is no");
# a sentence holding one anywhere is not negated again by a replace rule (its label would not be the LC's).
NEGATIONS = frozenset({
    "not", "n't", "nt", "never", "no", "nothing", "none", "nobody", "nowhere", "neither", "nor", "hardly",
    "barely", "scarcely",
})


def inner_sentence(text: str) -> str:
    """A corpus sentence followed by more text loses its final punctuation ("good ." -> "good", "wow ! !" -> "wow")."""
    tokens = text.split(" ")
    while len(tokens) > 1 and tokens[-1] in FINAL_MARKS:
        tokens.pop()
    return " ".join(tokens)


def _fit_sentence(item: CorpusItem, first: bool, last: bool) -> str:
    """A corpus sentence placed inside a template: lower-case its first word unless it starts the
    test or is a proper noun / "I"; drop its final punctuation unless it ends the test."""
    text = item.text if last else inner_sentence(item.text)
    tags = item.annotation.tags
    head = item.tokens[0] if item.tokens else ""
    if not first and head[:1].isupper() and head != "I" and tags and not looks_proper(item.tokens, tags):
        text = head.lower() + text[len(head):]
    return text


TITLE_LINKS = frozenset({"of", "from", "the", "and", "in", "on", "for", "to", "a", "'s"})


def looks_proper(tokens: Sequence[str], tags: Sequence[str]) -> bool:
    """Whether the sentence's capitalised first word is (part of) a name or title the tagger may miss: tagged
    NNP/NNPS, followed by a capitalised word ("Daughter From Danang", "Reign of Fire" through a short link
    word), or a bare noun subject straight before its verb ("Duvall is strong", "Bears is bad": an English
    common noun would take a determiner)."""
    if tags[0] in ("NNP", "NNPS"):
        return True
    rest = tokens[1:3]
    if rest and rest[0][:1].isupper() and rest[0] != "I":
        return True
    if len(rest) == 2 and rest[0].lower() in TITLE_LINKS and rest[1][:1].isupper() and rest[1] != "I":
        return True
    return len(tags) > 1 and tags[0] in ("NN", "NNS") and tags[1] in ("VBZ", "VBD", "MD")


def _concat_parts(rule: Rule, matches: dict[str, list[CorpusItem]]) -> list:
    parts: list[GroupSlot | list[Piece]] = []
    concat = rule.concat or []
    for position, part in enumerate(concat):
        if isinstance(part, GroupPart):
            last = position == len(concat) - 1
            parts.append(GroupSlot(part.group, matches[part.group], position == 0, last))
        else:
            parts.append([Piece(normalise_fixed(text)) for text in part])
    return parts


def _paired_parts(spec: LCSpec, rule: Rule, parts: list) -> list:
    """Group slots with their sentences shuffled by the rule's pairing seed (the i-th of each form a pair)."""
    out = []
    for k, part in enumerate(parts):
        if isinstance(part, GroupSlot):
            items = list(part.items)
            random.Random(hash_json([rule.pairing.seed, spec.id, rule.name, k])).shuffle(items)
            part = GroupSlot(part.group, items, part.first, part.last)
        out.append(part)
    return out


def _mixed_radix(index: int, sizes: list[int]) -> list[int]:
    digits = []
    for size in reversed(sizes):
        index, digit = divmod(index, size)
        digits.append(digit)
    return digits[::-1]


SHUFFLE_ALL_UP_TO = 200_000  # candidates shuffled in full (every one reachable); beyond, a sample of 4 × budget


def _candidate_indices(total: int, budget: int | None, rng: random.Random) -> Iterator[int]:
    """All indices in a seeded order when affordable (guards may reject many candidates, so every one
    stays reachable), else a seeded random sample without replacement (lazy on huge cross products)."""
    if budget is None or total <= max(budget * 4, SHUFFLE_ALL_UP_TO):
        order = list(range(total))
        if budget is not None:
            rng.shuffle(order)
        yield from order
        return
    yield from rng.sample(range(total), min(total, budget * 4))


def _build_concat(spec: LCSpec, rule: Rule, pieces: list[Piece], slot_names: list[str]) -> Seed | None:
    items = [p.item for p in pieces if p.item is not None]
    if len({i.id for i in items}) != len(items):
        return None  # the same sentence twice in one test
    text: list[str] = []
    protected: list[list[int]] = []
    segments: list[Segment] = []
    cursor = 0
    for piece in pieces:
        start = cursor + (1 if text else 0)
        end = start + len(piece.text)
        if piece.item is None:
            protected.append([start, end])
        else:
            assert piece.group is not None  # group pieces always name their group
            segments.append(Segment(piece.group, piece.item.id, start, end))
        text.append(piece.text)
        cursor = end
    joined = " ".join(text)
    if rule.end and joined.rsplit(" ", 1)[-1] not in FINAL_MARKS:
        protected.append([len(joined) + 1, len(joined) + 1 + len(rule.end)])
        joined += " " + rule.end  # the one sentence-final mark, at the very end
    sources = {p.group: p.item for p in pieces if p.item is not None}
    slots = {name: p.text for name, p in zip(slot_names, pieces, strict=True) if p.item is None}
    return _seed(spec, rule, joined, sources, slots, protected, segments)


def _guards_hold(rule: Rule, lower: list[str], tags: tuple[str, ...] | None, start: int, end: int) -> bool:
    """Whether a match at tokens [start, end) passes the replace rule's guards (see ``ReplaceRule``)."""
    replace = rule.replace
    assert replace is not None
    if replace.after is not None:
        before = lower[start - 1] if start > 0 else ""
        if before not in {a.lower() for a in replace.after}:
            return False
    if replace.target_tags is not None and (tags is None or tags[start] not in replace.target_tags):
        return False
    if replace.next_word is not None:
        if end >= len(lower):
            return False  # nothing follows the target: "what a mess this is ."
        allowed = {w.lower() for w in replace.next_word.allow}
        if lower[end] not in allowed and tags is not None and tags[end] in replace.next_word.exclude_tags:
            return False
    if replace.not_later is not None and {w.lower() for w in replace.not_later}.intersection(lower[end:]):
        return False
    return True


def _replace_matches(rule: Rule, lower: list[str],
                     tags: tuple[str, ...] | None = None) -> list[tuple[int, int, list[str]]] | None:
    """(start, end, target tokens) of the matches to rewrite, left to right and not overlapping.

    ``first`` rewrites only the earliest match of any pair (the matched target, never a later word);
    a first match that fails the rule's guards gives no seed (a later one is a different claim).
    With ``skip_negated`` a sentence that already holds a negation (at the target or elsewhere) gives
    None: negating it again would make a double negation whose label is not the LC's.
    """
    assert rule.replace is not None
    if rule.replace.skip_negated and NEGATIONS.intersection(lower):
        return None
    found = []
    for pair in rule.replace.pairs:
        src, tgt = [t.lower() for t in tokenize(pair.src)], list(tokenize(pair.tgt))
        for i in range(len(lower) - len(src) + 1):
            if lower[i : i + len(src)] == src:
                found.append((i, i + len(src), tgt))
    found.sort(key=lambda m: (m[0], -(m[1] - m[0])))
    chosen: list[tuple[int, int, list[str]]] = []
    for start, end, tgt in found:
        if chosen and start < chosen[-1][1]:
            continue
        if not _guards_hold(rule, lower, tags, start, end):
            if rule.replace.occurrence == "first":
                return None
            continue
        chosen.append((start, end, tgt))
        if rule.replace.occurrence == "first":
            break
    return chosen


def _apply_replace(spec: LCSpec, rule: Rule, item: CorpusItem) -> Seed | None:
    assert rule.replace is not None
    original = list(item.tokens)
    matches = _replace_matches(rule, [t.lower() for t in original], item.annotation.tags)
    if not matches:
        return None
    tokens: list[str] = []
    protected_tokens: list[tuple[int, int]] = []
    cursor = 0
    for start, end, tgt in matches:
        tokens.extend(original[cursor:start])
        source = original[start:end]
        # keep the sentence's own spelling where the target repeats the source ("This is" -> "This is not")
        new = [source[k] if k < len(source) and source[k].lower() == t.lower() else t for k, t in enumerate(tgt)]
        protected_tokens.append((len(tokens), len(tokens) + len(new)))
        tokens.extend(new)
        cursor = end
    tokens.extend(original[cursor:])
    text = " ".join(tokens)
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token) + 1)
    protected = [[starts[a], starts[b] - 1] for a, b in protected_tokens]
    slots = {"replace": ", ".join(f"{p.src} -> {p.tgt}" for p in rule.replace.pairs)}
    segments = [Segment(rule.replace.group, item.id, 0, len(text))]
    return _seed(spec, rule, text, {rule.replace.group: item}, slots, protected, segments)


def _rule_kind(rule: Rule) -> str:
    return "select" if rule.select is not None else "replace" if rule.replace is not None else "concat"


def _seed(spec, rule, text, sources, slots, protected, segments) -> Seed:
    return Seed(
        id=f"{spec.id}-{hash_text(rule.name + '|' + text, 12)}",
        lc_id=spec.id, task=spec.task, text=text, test_type=spec.test_type,
        expected=expected_for(rule.expected, sources),
        source_ids=[item.id for item in sources.values()], rule=rule.name, rule_kind=_rule_kind(rule),
        slots=slots, protected_spans=protected, segments=segments,
        source_labels=[item.label for item in sources.values()],
    )


def _rule_candidates(spec: LCSpec, rule: Rule, matches, budget: int | None,
                     rng: random.Random) -> tuple[int, Iterator[Seed]]:
    """(number of candidates, lazy iterator of candidate seeds in sampling order)."""
    if rule.kind == "select":
        items = matches[rule.select]

        def gen_select():
            for i in _candidate_indices(len(items), budget, rng):
                item = items[i]
                segment = Segment(rule.select, item.id, 0, len(item.text))
                yield _seed(spec, rule, item.text, {rule.select: item}, {}, [], [segment])

        return len(items), gen_select()
    if rule.kind == "replace":
        assert rule.replace is not None  # the schema requires it for kind "replace"
        items = matches[rule.replace.group]

        def gen_replace():
            for i in _candidate_indices(len(items), budget, rng):
                seed = _apply_replace(spec, rule, items[i])
                if seed is not None:
                    yield seed

        return len(items), gen_replace()
    parts = _concat_parts(rule, matches)
    slot_names = [f"part{i + 1}" for i in range(len(parts))]
    if rule.pairing.mode == "paired":
        parts = _paired_parts(spec, rule, parts)
    # paired group slots share one digit (the pair index); every other part is its own digit
    dims = [k for k, p in enumerate(parts) if rule.pairing.mode == "cross" or not isinstance(p, GroupSlot)]
    paired = [k for k, p in enumerate(parts) if k not in dims]
    sizes = [len(parts[k]) for k in dims] + ([min(len(parts[k]) for k in paired)] if paired else [])
    total = 1
    for size in sizes:
        total *= size

    def gen_concat():
        if total == 0:
            return
        for index in _candidate_indices(total, budget, rng):
            digits = _mixed_radix(index, sizes)
            chosen = dict(zip(dims, digits, strict=False))  # the last digit may be the pair index
            chosen.update({k: digits[-1] for k in paired})
            pieces = [parts[k][chosen[k]] for k in range(len(parts))]
            seed = _build_concat(spec, rule, pieces, slot_names)
            if seed is not None:
                yield seed

    return total, gen_concat()


def _share_cap(cap: int | None, totals: list[int]) -> list[int | None]:
    """Split a seed cap evenly over rules; a rule with fewer candidates leaves its share to the others."""
    if cap is None:
        return [None] * len(totals)
    quotas = [0] * len(totals)
    remaining = cap
    order = sorted(range(len(totals)), key=lambda i: totals[i])
    for position, index in enumerate(order):
        share = remaining // (len(order) - position)
        quotas[index] = min(totals[index], share)
        remaining -= quotas[index]
    return list(quotas)


def _valid_cap(lc_id: str, cap: object) -> int | None:
    """The seed cap as a whole number >= 0 (or None for all); anything else is refused."""
    from alict_core.common.limits import LimitError

    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
        raise LimitError(f"max_seeds of {lc_id} must be a whole number >= 0 (or None for all), got {cap!r}")
    return cap


def _check_candidates(lc_id: str, n_candidates: int, cap: int | None) -> None:
    """Refuse to enumerate more candidates than the limit (counted from group sizes, nothing built yet).

    With a cap the candidates are sampled lazily, so only an uncapped (or over-the-limit) request is refused.
    """
    from alict_core.common.limits import check_count, limits

    if cap is None or cap > limits().spec_candidates:
        check_count("spec_candidates", n_candidates, f"candidate seeds of {lc_id}",
                    "cap them (e.g. --max 1000) to sample instead of taking all")


def find_seeds(
    spec: LCSpec,
    corpus: Corpus,
    *,
    max_seeds: int | None | str = "spec",
    max_per_source: int | None = None,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> SeedSet:
    """Seeds of one LC: match search groups, apply rules, sample deterministically under caps.

    ``max_seeds``: "spec" uses the spec's sampling.max_seeds; None takes every candidate.
    The cap is shared evenly by the rules; a rule with fewer candidates leaves its share to the others.
    An INV seed needs a variant: a candidate whose identity terms and pronouns all stay (a fixed pair, a
    pronoun after a named antecedent) tests nothing and is skipped.
    """
    if corpus.task != spec.task:
        from alict_core.common.errors import SpecError

        raise SpecError(f"spec {spec.id} is for task {spec.task}, corpus {corpus.name} for {corpus.task}")
    cap = _valid_cap(spec.id, spec.sampling.max_seeds if max_seeds == "spec" else max_seeds)
    per_source = max_per_source or spec.sampling.max_per_source
    rng_seed = spec.sampling.seed if seed is None else seed
    matches = match_groups(spec, corpus)
    if progress:
        progress(f"{spec.id}: matched " + ", ".join(f"{k}={len(v)}" for k, v in matches.items()))
    matched_ids = {item.id for items in matches.values() for item in items}
    chosen: list[Seed] = []
    seen_texts: set[str] = set()
    source_uses: Counter[str] = Counter()
    generators = []
    for rule in spec.rules:
        rng = random.Random(hash_json([rng_seed, spec.id, rule.name]))
        generators.append(_rule_candidates(spec, rule, matches, None if cap is None else cap, rng))
    n_candidates = sum(total for total, _ in generators)
    _check_candidates(spec.id, n_candidates, cap)
    for (_total, candidates), quota in zip(generators, _share_cap(cap, [t for t, _ in generators]), strict=True):
        taken = 0
        for candidate in candidates:
            if quota is not None and taken >= quota:
                break
            if candidate.text in seen_texts or any(source_uses[s] >= per_source for s in candidate.source_ids):
                continue
            if spec.test_type == "INV" and not identity_swaps(candidate.text):
                continue  # nothing to swap (a pair "men and women", a pronoun of a named person): no INV test
            seen_texts.add(candidate.text)
            source_uses.update(candidate.source_ids)
            chosen.append(candidate)
            taken += 1
    key = hash_json([spec.model_dump(mode="json"), corpus.content_hash, cap, per_source, rng_seed])
    group_sizes = {k: len(v) for k, v in matches.items()}
    return SeedSet(spec.id, spec.task, chosen, len(matched_ids), n_candidates, group_sizes, key)
