"""Shared pieces of the explainers: tokens, the result type, a deduplicating model cache, perturbations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from alict_core.common.batching import batches, distinct
from alict_core.common.errors import AlictError, ModelError
from alict_core.models.protocol import Model, checked_proba

ProgressFn = Callable[[int, int, str], None]
"""``progress(done, total, stage)``: called after each model batch (the UI shows a bar, the CLI tqdm)."""

DEFAULT_BATCH_SIZE = 256


class ExplainError(AlictError):
    """An explanation could not be computed (bad text, bad label, bad budget); the message says why."""


def tokenize(text: str) -> list[str]:
    """Whitespace tokens: the project's texts are tokens joined by single spaces."""
    if not isinstance(text, str):
        raise ExplainError(f"text to explain must be a string, got {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise ExplainError("text to explain is empty: give a sentence of at least two tokens")
    if len(tokens) < 2:
        raise ExplainError(
            f"text to explain has one token ({tokens[0]!r}): contributions and templates need at least two tokens"
        )
    return tokens


def resolve_label(model: Model, label: str | int | None, predicted: int) -> int:
    """Index of ``label`` in ``model.labels`` (a name or an index); None means the predicted label."""
    if label is None:
        return predicted
    labels = tuple(model.labels)
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        if 0 <= int(label) < len(labels):
            return int(label)
        raise ExplainError(f"label index {label} out of range for model {model.name!r} with labels {labels}")
    if label in labels:
        return labels.index(label)
    raise ExplainError(f"label {label!r} is not one of model {model.name!r}'s labels {labels}")


class CachedModel:
    """Calls a black-box model in batches, once per distinct text; counts calls; reports progress."""

    def __init__(self, model: Model, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if not hasattr(model, "predict_proba") or not hasattr(model, "labels"):
            raise ModelError(f"object {model!r} does not implement the model protocol (labels, predict_proba)")
        self.model = model
        self.batch_size = max(1, int(batch_size))
        self.cache: dict[str, np.ndarray] = {}
        self.requested = 0  # texts asked for (with repeats)
        self.evaluated = 0  # texts the model actually ran on

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.model.labels)

    @property
    def name(self) -> str:
        return str(self.model.name)

    def predict_proba(self, texts: Sequence[str], progress: ProgressFn | None = None, stage: str = "") -> np.ndarray:
        """Probabilities of ``texts`` (n, k); only unseen texts reach the model."""
        texts = list(texts)
        self.requested += len(texts)
        evaluated_before = self.evaluated
        missing = distinct(texts, skip=self.cache.__contains__)
        for batch in batches(missing, self.batch_size):
            proba = checked_proba(self.model, list(batch))
            self.cache.update(zip(batch, proba, strict=True))
            self.evaluated += len(batch)
            if progress is not None:
                progress(self.evaluated - evaluated_before, len(missing), stage)
        if not texts:
            return np.zeros((0, len(self.labels)))
        return np.stack([self.cache[t] for t in texts])

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict_proba(texts)


def as_cached(model: Model | CachedModel | str) -> CachedModel:
    """Wrap a model (or a name in the models registry) in a ``CachedModel``; an existing one is reused."""
    if isinstance(model, CachedModel):
        return model
    if isinstance(model, str):
        from alict_core.models import get_model

        model = get_model(model)
    return CachedModel(model)


def render(tokens: Sequence[str], keep: np.ndarray) -> str:
    """The text with the unkept tokens removed (the perturbation used by SHAP, LEMNA and LIME)."""
    return " ".join(token for token, kept in zip(tokens, keep, strict=True) if kept)


def sample_masks(n_tokens: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Binary keep-masks (n_samples, n_tokens): row 0 keeps everything; the others drop a uniformly
    drawn number (1..n_tokens-1) of uniformly drawn positions, as LIME and LEMNA do (one token always stays,
    so no model sees an empty text)."""
    masks = np.ones((n_samples, n_tokens), dtype=bool)
    for row in range(1, n_samples):
        n_drop = rng.integers(1, n_tokens)
        masks[row, rng.choice(n_tokens, size=n_drop, replace=False)] = False
    return masks


def check_budget(name: str, value: int, minimum: int) -> int:
    from alict_core.common.limits import check_count

    value = int(value)
    if value < minimum:
        raise ExplainError(f"{name} must be at least {minimum}, got {value}")
    check_count("explain_samples", value, name)
    return value


def check_explain_text(text: object) -> str:
    """The text to explain, refused when empty or over the analysis length limit (before any work)."""
    from alict_core.common.limits import LimitError, check_text

    try:
        return check_text(text, "text to explain", "analysis_chars")
    except LimitError as exc:
        raise ExplainError(str(exc)) from None


@dataclass
class Contributions:
    """Per-token contributions of one text towards one label."""

    text: str
    tokens: list[str]
    scores: list[float]
    label: str
    method: str
    predicted: str
    proba: list[float]
    seed: int
    samples: int  # perturbed texts requested
    model_calls: int  # distinct texts the model actually ran on
    labels: list[str] = field(default_factory=list)  # the model's labels, in the order of ``proba``
    extras: dict[str, Any] = field(default_factory=dict)

    def order(self) -> list[int]:
        """Token positions by decreasing contribution (ties by position)."""
        return sorted(range(len(self.scores)), key=lambda i: (-self.scores[i], i))

    def top(self, n: int = 5) -> list[tuple[str, float]]:
        return [(self.tokens[i], self.scores[i]) for i in self.order()[:n]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": list(self.tokens),
            "scores": [float(s) for s in self.scores],
            "label": self.label,
            "method": self.method,
            "predicted": self.predicted,
            "proba": [float(p) for p in self.proba],
            "seed": self.seed,
            "samples": self.samples,
            "model_calls": self.model_calls,
            "labels": list(self.labels),
            "extras": self.extras,
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "Contributions":
        return cls(**{**row, "labels": list(row.get("labels") or []), "extras": dict(row.get("extras") or {})})

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"position": range(len(self.tokens)), "token": self.tokens, "score": self.scores})
