"""The model protocol every adapter implements, and the boundary check of its outputs."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from alict_core.common.errors import ModelError


@runtime_checkable
class Model(Protocol):
    """A text classifier: ``predict_proba(texts)`` returns an (n, len(labels)) array of probabilities."""

    name: str

    @property
    def labels(self) -> tuple[str, ...]: ...  # read-only, so adapters may declare a fixed-length tuple

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray: ...


def answers_change(model: Model) -> bool:
    """True for a model whose answers may change while its settings stay the same (a remote endpoint redeployed
    behind its URL): its answers are kept for one run and its resume, never reused by a later run or cache."""
    return bool(getattr(model, "answers_change", False))


def content_fingerprint(model: Model) -> str | None:
    """The model's content fingerprint (weights, files, parameters), or None when it has none.

    Only a content fingerprint may key an on-disk cache: a name alone would serve stale predictions after the
    model is retrained in place. An endpoint's settings are no content: its answers may change (pass 37).
    """
    value = getattr(model, "fingerprint", None)
    return str(value) if value and not answers_change(model) else None


def model_fingerprint(model: Model) -> str:
    """The content fingerprint, else the settings' (an endpoint's), else ``unfingerprinted:<class>:<name>`` (for
    display and run ids only; never a cache key)."""
    settings = getattr(model, "fingerprint", None)
    return content_fingerprint(model) or str(settings or f"unfingerprinted:{type(model).__name__}:{model.name}")


def checked_proba(model: Model, texts: Sequence[str], atol: float = 1e-3) -> np.ndarray:
    """Call ``model.predict_proba``, check shape, finiteness and that rows sum to 1; rows clipped to [0, 1]."""
    try:
        proba = np.asarray(model.predict_proba(list(texts)), dtype=np.float64)
    except ModelError:
        raise
    except Exception as exc:  # any adapter failure becomes one clear message naming the model
        raise ModelError(f"model {model.name!r} failed on a batch of {len(texts)} texts: {exc}") from exc
    expected = (len(texts), len(model.labels))
    if proba.shape != expected:
        raise ModelError(
            f"model {model.name!r} returned shape {proba.shape}, expected {expected} (labels {model.labels})"
        )
    if len(texts) and not np.isfinite(proba).all():
        raise ModelError(f"model {model.name!r} returned non-finite probabilities")
    if len(texts) and (np.abs(proba.sum(axis=1) - 1.0) > atol).any() or (proba < -atol).any():
        raise ModelError(f"model {model.name!r} returned rows that are not probability distributions")
    if len(texts):  # a rounding error within the tolerance (-0.0005) is taken, and saved as a distribution every
        proba = np.clip(proba, 0.0, 1.0)  # reader accepts (a run was saved with exit 0 that no command could read)
        proba = proba / proba.sum(axis=1, keepdims=True)
    return proba
