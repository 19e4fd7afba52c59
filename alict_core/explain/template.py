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
    if isinstance(vocabulary, Vocabulary):
        vocab = vocabulary
    elif vocabulary is None:
        vocab = default_vocabulary(cached.labels, with_pos=same_pos)
    else:
        vocab = Vocabulary.from_words(vocabulary)
    tags = pos_tags(tokens) if same_pos and vocab.pos is not None else None
    rng = np.random.default_rng(seed)
    fills = draw_fills(vocab, len(tokens), n_samples, rng, tags)
    order = unmask_order(scores)
    started = time.monotonic()

    masked = set(range(len(tokens)))
    unmasked: list[int] = []
    curve: list[float] = []
    curve_samples: list[int] = []
    samples_used = 0
    reached = truncated = False
    for step in range(len(tokens) + 1):
        if not masked:  # G(T) = x itself: fidelity is 1 by definition
            curve.append(1.0)
            curve_samples.append(0)
            break
        agree = done = 0
        size = first_batch if early_stop else batch_size
        while done < n_samples:
            rows = fills[done : min(done + size, n_samples)]
            size = min(2 * size, batch_size)  # small first batches settle clear-cut steps cheaply
            proba = cached.predict_proba(generate(tokens, masked, rows))
            agree += int((proba.argmax(axis=1) == target).sum())
            done += len(rows)
            if early_stop:
                low, high = wilson_interval(agree, done, confidence_z)
                if high < p_thresh or low >= p_thresh:
                    break
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                truncated = True
                break
        samples_used += done
        curve.append(agree / done)
        curve_samples.append(done)
        if progress is not None:
            progress(step + 1, len(tokens) + 1, f"template: {step} unmasked, fidelity {agree / done:.2f}")
        if curve[-1] >= p_thresh:
            reached = True
            break
        if truncated or (max_seconds is not None and time.monotonic() - started > max_seconds):
            truncated = True  # out of time: the template is the last one whose fidelity was measured
            break
        position = order[step]
        masked.discard(position)  # an unmasked position leaves the masked set: G keeps its token from now on
        unmasked.append(position)

    kept = sorted(unmasked)
    template = " ".join(tok if i not in masked else mask_token for i, tok in enumerate(tokens))
    return MaskingTemplate(
        text=text,
        tokens=tokens,
        template=template,
        kept_positions=kept,
        unmask_order=unmasked,
        fidelity_curve=[float(f) for f in curve],
        curve_samples=curve_samples,
        label=cached.labels[target],
        p_thresh=float(p_thresh),
        n_samples=n_samples,
        samples_used=samples_used,
        model_calls=cached.evaluated - calls_before,
        seed=int(seed),
        reached=reached,
        truncated=truncated,
        contribution_method=method,
        vocabulary=vocab.source,
        extras={"scores": [float(s) for s in scores], "same_pos": bool(tags is not None), "early_stop": early_stop},
    )
