"""The acceptance constraints of an expansion: one ordered list of named checks a spec can tune.

Following TextAttack's constraints, each ``Check`` looks at one filled masked sentence (a ``FillContext``)
and returns ``None`` (it holds) or why it fails. ``DEFAULT_CHECKS`` is the list, cheapest first; an LC spec
tunes it through ``expansion.checks`` (``{name: {param: value, "enabled": false}}``), see docs/expansion.md.

- ``open_class_slot`` (tags JJ, RB, NN): only these slot tags are filled at all (closed-class insertions —
  prepositions, conjunctions, determiners, pronouns — were where nearly every invalid expansion came from);
  checked on the masked sentences before the masked LM runs;
- ``attested_modifier`` (types degree_adverb, emphasis, own; adjective opt-in; min_pair_count 3, pool 200,
  min_word_score 0.0002): the fill is one insertion of an enabled type whose pair the corpus attests
  ("that 's [so] fun", "is [indeed] a tale", "Lohman 's [own] film"; see ``modifiers.py``); ``expand()`` also
  offers the masked LM's ``pool`` best words that would be such insertions;
- ``noun_modifier`` (min_count 3): an inserted noun stands right before a noun and the compound is seen in
  the corpus ("a horror film"), never elsewhere ("a mixed bag film");
- ``grammar_rules``: the fluency rules of ``fluency.py`` (sentence start, repeated word, split name, ...);
- ``article_agreement``: a word inserted right after "a"/"an" keeps the article right ("a [interesting] film");
- ``coordination``: no modifier on one side of a coordination only ("brothers and [young] sisters");
- ``scalar_adverb`` (words ``SCALAR_ADVERBS``): no focus or scalar word that changes what is claimed ("only",
  "almost", "too", ...);
- ``commonness`` (min_count 20): the inserted word is common in the corpus;
- ``corpus_bigram`` (min_count 2, pairs function_word): each new pair of the inserted word with a function-word
  neighbour (determiner, preposition, pronoun, conjunction, ...) is seen in the corpus ("very a", "tells to");
  ``pairs: all`` asks it of content-word neighbours too (adjective–noun pairs are sparse: "young brothers" is
  seen once in 4 M words);
- ``weak_fill`` (min_word_score 0.05): the masked LM's probability of the fill (per slot);
- ``score_margin`` (min_ratio 0.1): the fill's probability is at least this share of the best fill's;
- ``neighbour_likelihood`` (max_drop 0.7): the masked LM's probability of each neighbour of an insertion,
  masked in the expansion, is not below (1 - max_drop) times its probability in the seed (a pseudo-log-
  likelihood test of the words the insertion touches; run last, in ``expand()``, on fills that pass the rest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from alict_core.expansion.constraints.base import ExpansionError, field_of
from alict_core.expansion.constraints.fluency import DEFAULT_MIN_WORD_SCORE, NOUN_TAGS, _article_mismatch, _slot_problem
from alict_core.expansion.constraints.modifiers import DEFAULTS as MODIFIER_DEFAULTS
from alict_core.expansion.constraints.modifiers import attested_modifier_problem

# part of the expansion key: bump when a check or a default changes (2: attested_modifier; 3: its clause, list and
# predicative rules after study12; 4: a noun's content clause)
CONSTRAINTS_VERSION = "4"
OPEN_CLASS_TAGS = ("JJ", "RB", "NN")
COORDINATORS = frozenset({"and", "or", "nor", "but"})
CONTENT_TAG_PREFIXES = ("NN", "JJ", "VB", "RB", "CD", "FW")
# focus and scalar words: inserted, they change what is claimed ("only good", "almost funny", "too long")
SCALAR_ADVERBS = ("only", "just", "even", "almost", "nearly", "merely", "barely", "hardly", "rarely", "seldom",
                  "too", "less", "least", "slightly", "somewhat", "partly", "partially", "once", "longer", "anymore",
                  "supposedly", "allegedly", "seemingly", "apparently", "rather", "fairly", "enough", "otherwise")
MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "NN", "NNS", "VBN", "VBG", "RB"})


@dataclass(frozen=True)
class FillContext:
    """One filled masked sentence: expanded tokens with spaCy tags, where the words went, the slots'
    tags, the masked LM's probability of this fill and of the best fill of the same masked sentence."""

    tokens: Sequence[str]
    tags: Sequence[str]
    positions: Sequence[int]
    words: Sequence[str]
    slot_tags: Sequence[str]
    score: float | None = None
    best_score: float | None = None
    corpus: Any = None  # a CorpusStats, or None (corpus checks then hold: no evidence either way)
    attested: bool = False  # a corpus-attested candidate from the masked LM's pool (``attested_modifier``)


CheckFn = Callable[[FillContext, Mapping[str, Any]], "str | None"]


@dataclass(frozen=True)
class Check:
    """A named constraint with its default parameters; ``stage`` says where ``expand()`` applies it:
    ``slot`` (on masked sentences, before the masked LM), ``fill`` (on each fill) or ``model`` (on the
    fills that pass every other check, with the masked LM)."""

    name: str
    fn: CheckFn | None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    stage: str = "fill"

    def __call__(self, ctx: FillContext, params: Mapping[str, Any]) -> str | None:
        return self.fn(ctx, params) if self.fn is not None else None


def _neighbours(ctx: FillContext, position: int) -> tuple[int | None, int | None]:
    inserted = set(ctx.positions)
    left = position - 1
    while left in inserted:
        left -= 1
    right = position + 1
    while right in inserted:
        right += 1
    return (left if left >= 0 else None), (right if right < len(ctx.tokens) else None)


def slot_allowed(slot_tags: Sequence[str], params: Mapping[str, Any]) -> str | None:
    """Why a masked sentence's slots are not filled under ``open_class_slot``, else None."""
    allowed = set(params.get("tags", OPEN_CLASS_TAGS))
    bad = [t for t in slot_tags if t not in allowed]
    return f"slot tag {bad[0]} is not an opted-in slot class ({', '.join(sorted(allowed))})" if bad else None


def _open_class_slot(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    return slot_allowed(ctx.slot_tags, params)


def _noun_modifier(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    for position, word, tag in zip(ctx.positions, ctx.words, ctx.slot_tags, strict=True):
        if tag not in NOUN_TAGS:
            continue
        _, right = _neighbours(ctx, position)
        if right is None or ctx.tags[right] not in NOUN_TAGS:
            return f"noun {word!r} is not a modifier of a following noun"
        if ctx.corpus is not None:
            seen = ctx.corpus.bigram(word, ctx.tokens[right])
            if seen < int(params.get("min_count", 3)):
                return f"compound {word!r} {ctx.tokens[right]!r} seen {seen} times in the corpus"
    return None


def _grammar_rules(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    inserted = set(ctx.positions)
    for position, word in zip(ctx.positions, ctx.words, strict=True):
        problem = _slot_problem(ctx.tokens, ctx.tags, position, word, inserted)
        if problem is not None:
            return f"{problem[0]}: {problem[1]}"
    return None


def _article_agreement(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    for position, word in zip(ctx.positions, ctx.words, strict=True):
        left, _ = _neighbours(ctx, position)
        if left is not None and position - 1 == left and ctx.tokens[left].lower() in ("a", "an") \
                and _article_mismatch(ctx.tokens[left].lower(), word):
            return f"{ctx.tokens[left]!r} before the inserted {word!r}"
    return None


def _coordination(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    """A modifier inserted right after a coordinator (or right before one) modifies one conjunct only."""
    for position, word in zip(ctx.positions, ctx.words, strict=True):
        left, right = _neighbours(ctx, position)
        adverb = ctx.tags[position].startswith("RB")  # "funny and [very] touching" modifies its own conjunct
        if left is not None and ctx.tokens[left].lower() in COORDINATORS and left > 0 and not adverb \
                and ctx.tags[left - 1] in MODIFIER_TAGS | {"NNP", "NNPS"}:
            return f"{word!r} after {ctx.tokens[left]!r} modifies one side of the coordination only"
        if right is not None and ctx.tokens[right].lower() in COORDINATORS and left is not None \
                and ctx.tags[left] in MODIFIER_TAGS and ctx.tags[position] not in ("RB",):
            return f"{word!r} before {ctx.tokens[right]!r} stands inside one conjunct only"
    return None


def _scalar_adverb(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    words = {str(w).lower() for w in params.get("words", SCALAR_ADVERBS)}
    for word in ctx.words:
        if word.lower() in words:
            return f"{word!r} changes what the sentence claims (a focus or scalar word)"
    return None


def _commonness(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    if ctx.corpus is None:
        return None
    for word in ctx.words:
        seen = ctx.corpus.count(word)
        if seen < int(params.get("min_count", 20)):
            return f"{word!r} seen {seen} times in the corpus (< {params.get('min_count', 20)})"
    return None


def _corpus_bigram(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    if ctx.corpus is None:
        return None
    from alict_core.expansion.constraints.corpus_stats import is_wordlike

    minimum = int(params.get("min_count", 2))
    every_pair = params.get("pairs", "function_word") == "all"
    for position in ctx.positions:
        for a, b in ((position - 1, position), (position, position + 1)):
            if a < 0 or b >= len(ctx.tokens):
                continue
            other = b if a == position else a
            if not every_pair and ctx.tags[other].startswith(CONTENT_TAG_PREFIXES):
                continue  # adjective–noun pairs are too sparse in 4 M words; neighbour_likelihood judges them
            first, second = ctx.tokens[a].lower(), ctx.tokens[b].lower()
            if not (is_wordlike(first) and is_wordlike(second)):
                continue
            seen = ctx.corpus.bigram(first, second)
            if seen < minimum:
                return f"{ctx.tokens[a]!r} {ctx.tokens[b]!r} seen {seen} times in the corpus (< {minimum})"
    return None


def _attested_modifier(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    problem = attested_modifier_problem(ctx.tokens, ctx.tags, ctx.positions, ctx.words, ctx.corpus, params)
    floor = float(params.get("min_word_score", 0.0))
    if problem is None and ctx.attested and ctx.score is not None and float(ctx.score) < floor:
        return f"the masked LM gives the attested {ctx.words[0]!r} {float(ctx.score):.4f} < {floor:g}"
    return problem


def _weak_fill(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    if ctx.attested:
        return None  # a corpus-attested candidate: ``attested_modifier`` applies its own floor
    floor = float(params.get("min_word_score", DEFAULT_MIN_WORD_SCORE))
    if ctx.score is None or not ctx.positions:
        return None
    per_word = float(ctx.score) ** (1.0 / len(ctx.positions))
    if per_word < floor:
        return f"the masked LM gives it {per_word:.3f} < {floor:g}"
    return None


def _score_margin(ctx: FillContext, params: Mapping[str, Any]) -> str | None:
    ratio = float(params.get("min_ratio", 0.1))
    if ctx.score is None or not ctx.best_score:
        return None
    share = float(ctx.score) / float(ctx.best_score)
    if share < ratio:
        return f"its probability is {share:.2f} of the best fill's (< {ratio:g})"
    return None


DEFAULT_CHECKS: tuple[Check, ...] = (
    Check("open_class_slot", _open_class_slot, {"tags": list(OPEN_CLASS_TAGS)}, stage="slot"),
    Check("attested_modifier", _attested_modifier, MODIFIER_DEFAULTS),
    Check("noun_modifier", _noun_modifier, {"min_count": 3}),
    Check("grammar_rules", _grammar_rules),
    Check("article_agreement", _article_agreement),
    Check("coordination", _coordination),
    Check("scalar_adverb", _scalar_adverb, {"words": list(SCALAR_ADVERBS)}),
    Check("commonness", _commonness, {"min_count": 20}),
    Check("corpus_bigram", _corpus_bigram, {"min_count": 2, "pairs": "function_word"}),
    Check("weak_fill", _weak_fill, {"min_word_score": DEFAULT_MIN_WORD_SCORE}),
    Check("score_margin", _score_margin, {"min_ratio": 0.1}),
    Check("neighbour_likelihood", None, {"max_drop": 0.7, "top_k": 100}, stage="model"),
)
CHECK_NAMES = tuple(c.name for c in DEFAULT_CHECKS)


@dataclass(frozen=True)
class Constraints:
    """The resolved list: each enabled check with its parameters (defaults overridden by the spec)."""

    checks: tuple[tuple[Check, Mapping[str, Any]], ...]

    def params(self, name: str) -> Mapping[str, Any] | None:
        """The parameters of check ``name``, or None when it is disabled."""
        for check, params in self.checks:
            if check.name == name:
                return params
        return None

    def at(self, stage: str) -> list[tuple[Check, Mapping[str, Any]]]:
        return [(c, p) for c, p in self.checks if c.stage == stage]

    def to_dict(self) -> dict[str, Any]:
        return {"version": CONSTRAINTS_VERSION, "checks": {c.name: dict(p) for c, p in self.checks}}

    def first_failure(self, ctx: FillContext) -> tuple[str, str] | None:
        """(check name, why) of the first fill-stage check that fails, else None."""
        for check, params in self.checks:
            if check.stage in ("slot", "fill"):
                why = check(ctx, params)
                if why is not None:
                    return check.name, why
        return None


def resolve_constraints(overrides: Mapping[str, Mapping[str, Any]] | None = None,
                        min_word_score: float | None = None, where: str = "expansion.checks") -> Constraints:
    """``DEFAULT_CHECKS`` with a spec's overrides (``{name: {param: value, "enabled": bool}}``); an unknown
    check or parameter is one clear error naming it. ``min_word_score`` (the CLI's) sets ``weak_fill``'s."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(CHECK_NAMES))
    if unknown:
        raise ExpansionError(f"{where}: unknown check {unknown[0]!r} (known: {', '.join(CHECK_NAMES)})")
    out = []
    for check in DEFAULT_CHECKS:
        given = dict(overrides.get(check.name) or {})
        enabled = given.pop("enabled", True)
        bad = sorted(set(given) - set(check.defaults))
        if bad:
            raise ExpansionError(f"{where}.{check.name}: unknown parameter {bad[0]!r} "
                                 f"(known: {', '.join(check.defaults) or 'none'}, enabled)")
        params = {**check.defaults, **given}
        if check.name == "weak_fill" and min_word_score is not None and "min_word_score" not in given:
            params["min_word_score"] = float(min_word_score)
        if enabled and check.name == "weak_fill" and float(params["min_word_score"]) == 0.0:
            enabled = False
        for name, value in params.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ExpansionError(f"{where}.{check.name}.{name}: {value} is not a finite number")
        if enabled:
            out.append((check, params))
    return Constraints(tuple(out))


def constraints_of(spec: Any, min_word_score: float | None = None) -> Constraints:
    """The constraints of an LC spec (``spec.expansion.checks``), or the defaults."""
    expansion = field_of(spec, "expansion")
    overrides = field_of(expansion, "checks") if expansion is not None else None
    lc = field_of(spec, "id", "")
    where = f"LC {lc} expansion.checks" if lc else "expansion.checks"
    return resolve_constraints(overrides, min_word_score, where=where)
