"""The five checks on one masked-LM fill; every verdict and its reason is kept for the UI.

1. ``pos``: the PTB tag of each filled word, tagged by spaCy in the whole expanded sentence (a Doc
   built from the token list, so alignment is exact), equals the slot's tag;
2. ``polarity``: the SentiWordNet polarity of each filled word is allowed by the LC (default neutral);
   a word SentiWordNet does not know is "unknown" and never accepted;
3. ``predicates``: the LC's structural predicates still hold on the expanded sentence;
4. ``protected``: text inserted by a generative rule (``seed.protected_spans``) is neither split by
   an insertion nor changed;
5. ``fluency``: the fill passes the acceptance constraints of ``alict_core/expansion/constraints/acceptance.py`` (one
   list a spec tunes: open-class slots, the fluency rules of ``fluency.py``, article and coordination
   agreement, corpus evidence, the masked LM's score and margin); the reason names the first that fails,
   e.g. ``"corpus_bigram: 'tells' 'to' seen 0 times"``.

Check 4 needs no tagging and is decided first in ``expand()``: a fill that fails it is not tagged,
and its other four verdicts are ``None`` (not checked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from alict_core.common.errors import AlictError
from alict_core.expansion.constraints.acceptance import FillContext, constraints_of
from alict_core.expansion.constraints.base import ExpansionError, field_of
from alict_core.expansion.constraints.corpus_stats import load_corpus_stats
from alict_core.expansion.constraints.fluency import DEFAULT_MIN_WORD_SCORE

MASK = "[MASK]"
CHECKS = ("pos", "polarity", "predicates", "protected", "fluency")
DEFAULT_ALLOWED_POLARITY = ("neutral",)
PredicateCheck = Callable[[Any, Any, str], tuple[bool, str]]


@dataclass(frozen=True)
class Tagged:
    """spaCy analysis of one token list: PTB tags, universal POS and lemmas (aligned 1:1), and the
    full ``alict_core.data.annotate.Annotation`` (lexicon classes) reused by the predicate check."""

    tags: tuple[str, ...]
    upos: tuple[str, ...]
    lemmas: tuple[str, ...]
    annotation: Any = None


@dataclass
class FillVerdict:
    """The expanded sentence for one fill, each check's verdict and its reason."""

    tokens: list[str]
    words: list[str]
    verdicts: dict[str, bool] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    @property
    def ok(self) -> bool:
        return all(self.verdicts.get(check, False) for check in CHECKS)


# ------------------------------------------------------------------------------------ helpers


def masked_tokens(masked: Any) -> tuple[list[str], list[int], list[str]]:
    """(tokens with [MASK] at the slots, mask positions, slot PTB tags) of a MaskedSentence or its dict."""
    tokens = list(field_of(masked, "tokens") or str(field_of(masked, "text", "")).split())
    positions = [int(p) for p in (field_of(masked, "mask_positions") or [i for i, t in enumerate(tokens) if t == MASK])]
    tags = list(field_of(masked, "mask_tags") or [])
    where = f"masked sentence {field_of(masked, 'text', ' '.join(tokens))!r}"
    if len(tags) != len(positions):
        raise ExpansionError(f"{where}: {len(positions)} mask positions but {len(tags)} mask tags")
    for p in positions:
        if not 0 <= p < len(tokens):
            raise ExpansionError(f"{where}: mask position {p} outside its {len(tokens)} tokens")
        tokens[p] = MASK
    return tokens, positions, tags


def fill_tokens(tokens: Sequence[str], positions: Sequence[int], words: Sequence[str]) -> list[str]:
    if len(words) != len(positions):
        raise ExpansionError(f"{len(words)} words for {len(positions)} masks in {' '.join(tokens)!r}")
    out = list(tokens)
    for p, w in zip(positions, words, strict=True):
        out[p] = w
    return out


def tag_token_lists(token_lists: Sequence[Sequence[str]], batch_size: int = 256) -> list[Tagged]:
    """Tag pre-tokenised sentences in one spaCy pass (one Doc per token list, so alignment is exact)."""
    from alict_core.data.annotate import annotate_token_lists

    return [Tagged(a.tags, a.upos, a.lemmas, a) for a in annotate_token_lists(token_lists, batch_size=batch_size)]


def token_offsets(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Character (start, end) of each token in ``" ".join(tokens)``."""
    spans, pos = [], 0
    for token in tokens:
        spans.append((pos, pos + len(token)))
        pos += len(token) + 1
    return spans


# ------------------------------------------------------------------------------------ checks


def check_pos(tagged: Tagged, positions: Sequence[int], slot_tags: Sequence[str],
              words: Sequence[str]) -> tuple[bool, str]:
    bad = [f"{w!r} tagged {tagged.tags[p]} not {t}"
           for p, t, w in zip(positions, slot_tags, words, strict=True) if tagged.tags[p] != t]
    if bad:
        return False, "; ".join(bad)
    return True, "tags " + ", ".join(f"{w}/{t}" for w, t in zip(words, slot_tags, strict=True))


# Words SentiWordNet rates neutral that still flip or cancel a sentence's meaning: never inserted.
NEGATORS = frozenset({
    "not", "n't", "no", "never", "nothing", "none", "nobody", "nowhere", "neither", "nor", "without",
    "hardly", "barely", "scarcely", "cannot", "nt", "nope", "lack", "lacks", "lacking", "fail", "fails",
})


def check_polarity(tagged: Tagged, positions: Sequence[int], words: Sequence[str],
                   allowed: Sequence[str]) -> tuple[bool, str]:
    """SentiWordNet polarity in context is allowed by the LC's policy, and no negator is inserted."""
    from alict_core.data.polarity_lexicon import token_polarity

    negators = [w for w in words if w.lower() in NEGATORS]
    if negators:
        return False, f"{negators[0]!r} is a negator: inserting it would change the expected label"
    found = [(w, token_polarity(w, tagged.lemmas[p], tagged.upos[p])) for p, w in zip(positions, words, strict=True)]
    bad = [f"{w!r} is unknown to SentiWordNet" if pol == "unknown" else f"{w!r} is {pol}"
           for w, pol in found if pol not in allowed]
    if bad:
        return False, "; ".join(bad) + f" (allowed: {', '.join(allowed)})"
    return True, ", ".join(f"{w} {pol}" for w, pol in found)


def check_protected(seed_text: str, protected_spans: Sequence[Sequence[int]], tokens: Sequence[str],
                    positions: Sequence[int]) -> tuple[bool, str]:
    """No insertion strictly inside a protected span, and every protected text still present unchanged."""
    spans = [(int(s), int(e)) for s, e in (protected_spans or [])]
    if not spans:
        return True, "no protected spans"
    seed_tokens = seed_text.split(" ")
    mask_set = set(positions)
    kept = [t for i, t in enumerate(tokens) if i not in mask_set]
    if kept != seed_tokens:
        expanded = " ".join(tokens)
        missing = [seed_text[s:e] for s, e in spans if seed_text[s:e] not in expanded]
        if missing:
            return False, f"protected text {missing[0]!r} was changed"
        return True, "protected text present (non-insertion expansion)"
    starts = [s for s, _ in token_offsets(seed_tokens)] + [len(seed_text) + 1]
    for p in positions:
        seed_index = sum(1 for i in range(p) if i not in mask_set)
        boundary = starts[seed_index]  # the insertion goes just before this character of the seed text
        for s, e in spans:
            if s < boundary < e:
                return False, f"insertion splits protected text {seed_text[s:e]!r}"
    return True, "protected text untouched"


def check_predicates(spec: Any, seed: Any, text: str, predicate_check: PredicateCheck | None = None,
                     annotation: Any = None) -> tuple[bool, str]:
    """Rule 3 through ``alict_core.seeds.expansion_predicates_hold`` (or ``predicate_check``); the
    batched annotation of ``text`` is handed over so spaCy does not run again per candidate."""
    try:
        if predicate_check is None:
            import inspect

            from alict_core.seeds import expansion_predicates_hold

            if annotation is not None and "annotation" in inspect.signature(expansion_predicates_hold).parameters:
                ok, reason = expansion_predicates_hold(spec, seed, text, annotation=annotation)
            else:
                ok, reason = expansion_predicates_hold(spec, seed, text)
        else:
            ok, reason = predicate_check(spec, seed, text)
    except AlictError as exc:
        return False, f"predicate error: {exc}"
    return bool(ok), str(reason)


def allowed_polarity_of(spec: Any) -> tuple[str, ...]:
    """The LC's allowed polarities for filled words (``spec.expansion.allowed_polarity``; default neutral)."""
    expansion = field_of(spec, "expansion")
    allowed = field_of(expansion, "allowed_polarity") if expansion is not None else None
    return tuple(allowed) if allowed else DEFAULT_ALLOWED_POLARITY


def check_constraints(constraints: Any, ctx: Any) -> tuple[bool, str]:
    """Check 5: the first failing constraint as ``"name: why"``, else ok."""
    failure = constraints.first_failure(ctx)
    if failure is not None:
        return False, f"{failure[0]}: {failure[1]}"
    return True, "passes every acceptance constraint"


def unchecked_verdict(expanded: Sequence[str], words: Sequence[str], protected_reason: str) -> FillVerdict:
    """The verdict of a fill whose insertion breaks protected text: the other four checks are not
    run (``None``, shown as "—" in the UI) because no fill at that position can be accepted."""
    verdict = FillVerdict(list(expanded), [str(w) for w in words])
    for check in CHECKS:
        verdict.verdicts[check] = None  # type: ignore[assignment]
        verdict.reasons[check] = "not checked: the insertion breaks protected text"
    verdict.verdicts["protected"] = False
    verdict.reasons["protected"] = protected_reason
    return verdict


def validate_fill(masked: Any, words: Sequence[str], seed: Any, spec: Any, *, tagged: Tagged | None = None,
                  allowed_polarity: Sequence[str] | None = None,
                  predicate_check: PredicateCheck | None = None, score: float | None = None,
                  min_word_score: float = DEFAULT_MIN_WORD_SCORE, constraints: Any = None,
                  best_score: float | None = None, corpus: Any = "default", attested: bool = False) -> FillVerdict:
    """Run the five checks on ``masked`` filled with ``words``; ``tagged`` (spaCy output on the
    expanded tokens) is computed here when not given; ``score`` is the masked LM's probability of the fill
    and ``best_score`` the best fill's of the same masked sentence (``None``: the score checks are not applied).
    ``constraints``: the resolved list (default: the spec's); ``corpus``: the ``CorpusStats`` of the corpus
    checks (default: the data folder's; ``None`` turns corpus evidence off); ``attested``: the fill is a
    corpus-attested candidate from the masked LM's pool (``attested_modifier`` applies its own score floor)."""
    tokens, positions, slot_tags = masked_tokens(masked)
    words = [str(w) for w in words]
    expanded = fill_tokens(tokens, positions, words)
    if tagged is None:
        tagged = tag_token_lists([expanded])[0]
    if len(tagged.tags) != len(expanded):
        raise ExpansionError(f"tagger returned {len(tagged.tags)} tags for {len(expanded)} tokens "
                             f"of {' '.join(expanded)!r}")
    allowed = tuple(allowed_polarity) if allowed_polarity else allowed_polarity_of(spec)
    verdict = FillVerdict(expanded, words)
    results = {
        "pos": check_pos(tagged, positions, slot_tags, words),
        "polarity": check_polarity(tagged, positions, words, allowed),
        "predicates": check_predicates(spec, seed, verdict.text, predicate_check, tagged.annotation),
        "protected": check_protected(str(field_of(seed, "text", "")), field_of(seed, "protected_spans") or [],
                                     expanded, positions),
        "fluency": check_constraints(constraints if constraints is not None else constraints_of(spec, min_word_score),
                                     FillContext(expanded, tagged.tags, positions, words, slot_tags, score, best_score,
                                                 load_corpus_stats() if corpus == "default" else corpus,
                                                 attested)),
    }
    for check, (ok, reason) in results.items():
        verdict.verdicts[check] = ok
        verdict.reasons[check] = reason
    return verdict
