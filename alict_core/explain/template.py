"""Masking templates: TOSEM Algorithm 2 (Lee et al., ALiCT, TOSEM 2024, §6).

Start with every token masked. A generator G fills the masked positions with random vocabulary words and
keeps the unmasked ones. The fidelity ``P(f(G(T)) = f(x))`` is estimated from N samples. While it is below
``p_thresh``, unmask the token with the highest contribution (argmax; its score is then set to −inf, i.e.
tokens are unmasked in decreasing order of contribution). Unmasked positions leave the masked set, so G no
longer replaces them (the original implementation forgot this, which kept the fidelity constant).

Speed: G's fills are drawn once (common random numbers: sample i puts the same word at a masked position at
every step), model calls are deduplicated, and with ``early_stop`` a step stops sampling as soon as a
Wilson confidence interval lies entirely on one side of ``p_thresh``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from alict_core.explain.base import (
    CachedModel,
    Contributions,
    ExplainError,
    ProgressFn,
    as_cached,
    check_budget,
    check_explain_text,
    tokenize,
)
from alict_core.explain.vocabulary import Vocabulary, default_vocabulary
from alict_core.metrics.intervals import wilson_interval
from alict_core.models.protocol import Model

MASK = "[MASK]"


@dataclass
class MaskingTemplate:
    """The result of Algorithm 2 for one text."""

    text: str
    tokens: list[str]
    template: str
    kept_positions: list[int]  # sorted positions left unmasked
    unmask_order: list[int]  # positions in the order they were unmasked
    fidelity_curve: list[float]  # fidelity after 0, 1, 2, ... unmasked tokens
    curve_samples: list[int]  # samples behind each fidelity estimate
    label: str  # f(x), the label the template must keep
    p_thresh: float
    n_samples: int
    samples_used: int  # generated texts, all steps
    model_calls: int  # distinct texts the model ran on
    seed: int
    reached: bool  # fidelity >= p_thresh before every token was unmasked
    truncated: bool = False  # stopped by max_seconds
    contribution_method: str = ""
    vocabulary: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def kept_tokens(self) -> list[str]:
        return [self.tokens[i] for i in self.kept_positions]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "template": self.template,
            "kept_tokens": self.kept_tokens,
            "kept_positions": self.kept_positions,
            "unmask_order": self.unmask_order,
            "fidelity_curve": self.fidelity_curve,
            "curve_samples": self.curve_samples,
            "label": self.label,
            "p_thresh": self.p_thresh,
            "n_samples": self.n_samples,
            "samples_used": self.samples_used,
            "model_calls": self.model_calls,
            "seed": self.seed,
            "reached": self.reached,
            "truncated": self.truncated,
            "contribution_method": self.contribution_method,
            "vocabulary": self.vocabulary,
            "extras": self.extras,
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "MaskingTemplate":
        fields = {k: v for k, v in row.items() if k != "kept_tokens"}
        return cls(**fields)


def pos_tags(tokens: Sequence[str]) -> list[str]:
    """Universal POS tags of pre-tokenised words (spaCy)."""
    from spacy.tokens import Doc

    from alict_core.data.nlp import get_nlp

    nlp = get_nlp()
    return [t.pos_ for t in nlp(Doc(nlp.vocab, words=list(tokens)))]


def draw_fills(
    vocabulary: Vocabulary, n_tokens: int, n_samples: int, rng: np.random.Generator, tags: Sequence[str] | None = None
) -> np.ndarray:
    """G's random words, (n_samples, n_tokens): column j holds the words G puts at position j when it is masked."""
    columns = [vocabulary.sample(rng, n_samples, tags[j] if tags is not None else None) for j in range(n_tokens)]
    return np.array(columns, dtype=object).T


def generate(tokens: Sequence[str], masked: set[int] | Sequence[int], fills: np.ndarray) -> list[str]:
    """G(T): one text per row of ``fills``; masked positions take the row's word, the others keep the token."""
    masked = set(masked)
    return [" ".join(row[j] if j in masked else tok for j, tok in enumerate(tokens)) for row in fills]


def _scores(contributions: Contributions | Sequence[float], tokens: list[str]) -> tuple[np.ndarray, str]:
    if isinstance(contributions, Contributions):
        if contributions.tokens != tokens:
            raise ExplainError(
                f"contributions are for {' '.join(contributions.tokens)!r}, not for {' '.join(tokens)!r}"
            )
        return np.asarray(contributions.scores, dtype=float), contributions.method
    scores = np.asarray(list(contributions), dtype=float)
    if scores.shape != (len(tokens),):
        raise ExplainError(f"got {scores.size} contribution scores for {len(tokens)} tokens")
    return scores, "given"


def unmask_order(scores: np.ndarray) -> list[int]:
    """Algorithm 2's order: repeatedly take argmax of the contributions, then set it to −inf."""
    remaining = np.asarray(scores, dtype=float).copy()
    order = []
    for _ in range(len(remaining)):
        best = int(np.argmax(remaining))
        order.append(best)
        remaining[best] = -np.inf
    return order


@dataclass
class _Sampler:
    """How one step of Algorithm 2 estimates the fidelity of a masked set: the fills drawn once, batches that
    grow from ``first_batch`` to ``batch_size``, an early stop on the Wilson interval, a time cap."""

    cached: CachedModel
    tokens: list[str]
    fills: np.ndarray
    target: int
    n_samples: int
    p_thresh: float
    early_stop: bool
    confidence_z: float
    batch_size: int
    first_batch: int
    max_seconds: float | None
    started: float

    def out_of_time(self) -> bool:
        return self.max_seconds is not None and time.monotonic() - self.started > self.max_seconds

    def fidelity(self, masked: set[int]) -> tuple[int, int, bool]:
        """(texts that keep the label, texts generated, out of time) for the masked positions ``masked``."""
        agree = done = 0
        size = self.first_batch if self.early_stop else self.batch_size
        while done < self.n_samples:
            rows = self.fills[done : min(done + size, self.n_samples)]
            size = min(2 * size, self.batch_size)  # small first batches settle clear-cut steps cheaply
            proba = self.cached.predict_proba(generate(self.tokens, masked, rows))
            agree += int((proba.argmax(axis=1) == self.target).sum())
            done += len(rows)
            if self.early_stop:
                low, high = wilson_interval(agree, done, self.confidence_z)
                if high < self.p_thresh or low >= self.p_thresh:
                    break
            if self.out_of_time():
                return agree, done, True
        return agree, done, False


@dataclass
class _Search:
    """Where the unmasking stopped: the positions still masked, those unmasked (in order), the fidelity curve."""

    masked: set[int]
    unmasked: list[int] = field(default_factory=list)
    curve: list[float] = field(default_factory=list)
    curve_samples: list[int] = field(default_factory=list)
    samples_used: int = 0
    reached: bool = False
    truncated: bool = False


def _unmask_until_faithful(sampler: _Sampler, order: list[int], progress: ProgressFn | None) -> _Search:
    """Unmask tokens in ``order`` until the fidelity reaches ``p_thresh`` (or time or tokens run out)."""
    n_tokens = len(sampler.tokens)
    search = _Search(masked=set(range(n_tokens)))
    for step in range(n_tokens + 1):
        if not search.masked:  # G(T) = x itself: fidelity is 1 by definition
            search.curve.append(1.0)
            search.curve_samples.append(0)
            break
        agree, done, search.truncated = sampler.fidelity(search.masked)
        search.samples_used += done
        search.curve.append(agree / done)
        search.curve_samples.append(done)
        if progress is not None:
            progress(step + 1, n_tokens + 1, f"template: {step} unmasked, fidelity {agree / done:.2f}")
        if search.curve[-1] >= sampler.p_thresh:
            search.reached = True
            break
        if search.truncated or sampler.out_of_time():
            search.truncated = True  # out of time: the template is the last one whose fidelity was measured
            break
        position = order[step]
        search.masked.discard(position)  # an unmasked position leaves the masked set: G keeps its token from now on
        search.unmasked.append(position)
    return search


def _vocabulary(vocabulary: Vocabulary | Sequence[str] | None, labels: Sequence[str], same_pos: bool) -> Vocabulary:
    """G's vocabulary: the one given, a list of words, or the corpus of the model's task."""
    if isinstance(vocabulary, Vocabulary):
        return vocabulary
    if vocabulary is None:
        return default_vocabulary(labels, with_pos=same_pos)
    return Vocabulary.from_words(vocabulary)


def masking_template(
    model: Model | CachedModel,
    text: str,
    contributions: Contributions | Sequence[float] | None = None,
    p_thresh: float = 0.9,
    n_samples: int = 1000,
    seed: int = 0,
    vocabulary: Vocabulary | Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    same_pos: bool = False,
    early_stop: bool = True,
    confidence_z: float = 3.0,
    batch_size: int = 256,
    first_batch: int = 32,
    max_seconds: float | None = None,
    mask_token: str = MASK,
) -> MaskingTemplate:
    """Algorithm 2: the shortest prefix (by contribution) of unmasked tokens that keeps ``f(G(T)) = f(x)``
    with probability ``>= p_thresh`` over ``n_samples`` generated texts.

    ``contributions`` default to LEMNA scores for the predicted label. ``vocabulary`` defaults to the corpus
    of the model's task; ``same_pos`` makes G fill a position only with words of its POS tag.
    ``early_stop=False`` uses all ``n_samples`` at every step; with it, batches grow from ``first_batch`` to
    ``batch_size`` and stop once the Wilson interval (``confidence_z``) clears ``p_thresh``.
    ``max_seconds`` caps the time. ``progress(step, n_tokens + 1, stage)`` after each step.
    """
    tokens = tokenize(check_explain_text(text))
    text = " ".join(tokens)
    if not 0.0 < p_thresh <= 1.0:
        raise ExplainError(f"p_thresh must be in (0, 1], got {p_thresh}")
    n_samples = check_budget("n_samples", n_samples, 1)
    batch_size = check_budget("batch_size", batch_size, 1)
    first_batch = min(check_budget("first_batch", first_batch, 1), batch_size)
    cached = as_cached(model)
    calls_before = cached.evaluated
    target = int(np.argmax(cached.predict_proba([text])[0]))
    if contributions is None:
        from alict_core.explain.explainers import explain

        contributions = explain(cached, text, method="lemna", label=target, seed=seed)
    scores, method = _scores(contributions, tokens)
    vocab = _vocabulary(vocabulary, cached.labels, same_pos)
    tags = pos_tags(tokens) if same_pos and vocab.pos is not None else None
    fills = draw_fills(vocab, len(tokens), n_samples, np.random.default_rng(seed), tags)
    order = unmask_order(scores)
    sampler = _Sampler(cached, tokens, fills, target, n_samples, p_thresh, early_stop, confidence_z, batch_size,
                       first_batch, max_seconds, started=time.monotonic())
    search = _unmask_until_faithful(sampler, order, progress)
    template = " ".join(tok if i not in search.masked else mask_token for i, tok in enumerate(tokens))
    return MaskingTemplate(
        text=text,
        tokens=tokens,
        template=template,
        kept_positions=sorted(search.unmasked),
        unmask_order=search.unmasked,
        fidelity_curve=[float(f) for f in search.curve],
        curve_samples=search.curve_samples,
        label=cached.labels[target],
        p_thresh=float(p_thresh),
        n_samples=n_samples,
        samples_used=search.samples_used,
        model_calls=cached.evaluated - calls_before,
        seed=int(seed),
        reached=search.reached,
        truncated=search.truncated,
        contribution_method=method,
        vocabulary=vocab.source,
        extras={"scores": [float(s) for s in scores], "same_pos": bool(tags is not None), "early_stop": early_stop},
    )
