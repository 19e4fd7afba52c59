"""Neuron coverage of torch models (DeepGauge / TOSEM eq. 5-6): BoundCov and SActCov.

A neuron is one unit of a hooked module's output (default: every BERT FFN intermediate layer),
mean-pooled over the tokens of a text. Bounds (low_n, high_n) are its min / max over a sample of the
model's training split; a test set covers the upper corner of n if some text activates n above high_n,
the lower corner if below low_n.

BoundCov = (|upper| + |lower|) / (2 |N|);  SActCov = |upper| / |N|.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from alict_core.common.errors import ModelError


def _parts(model: Any):
    """(torch module, tokenize(texts) -> batch) of a supported model."""
    if hasattr(model, "encoder") and hasattr(model.encoder, "tokenize"):
        return model.encoder.model, model.encoder.tokenize
    if hasattr(model, "model") and hasattr(model, "tokenizer"):
        max_length = getattr(model, "max_length", 128)
        return model.model, lambda texts: model.tokenizer(list(texts), padding=True, truncation=True,
                                                          max_length=max_length, return_tensors="pt")
    raise ModelError(f"model {getattr(model, 'name', model)!r} exposes no torch module: "
                     "neuron coverage needs a torch model")


def default_layers(module: Any) -> list[str]:
    names = [n for n, _ in module.named_modules()
             if n.endswith("intermediate.intermediate_act_fn") or n.endswith("intermediate")]
    act = [n for n in names if n.endswith("intermediate")]
    return act or [n for n, m in module.named_modules() if type(m).__name__ == "Linear"][:6]


def activations(model: Any, texts: Sequence[str], layers: Sequence[str] | None = None,
                batch_size: int = 32) -> np.ndarray:
    """(n_texts, n_neurons) token-mean activations of the hooked layers."""
    import torch

    module, tokenize = _parts(model)
    layers = list(layers or default_layers(module))
    named = dict(module.named_modules())
    missing = [n for n in layers if n not in named]
    if missing:
        raise ModelError(f"neuron coverage: no layer {missing[0]!r} in model {getattr(model, 'name', '?')!r}")
    captured: dict[str, Any] = {}
    handles = [named[n].register_forward_hook(lambda _m, _i, out, _n=n: captured.__setitem__(_n, out)) for n in layers]
    rows = []
    try:
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = tokenize(list(texts[start : start + batch_size]))
                module(**batch)
                mask = batch["attention_mask"].unsqueeze(-1).float()
                parts = []
                for n in layers:
                    out = captured[n]
                    out = out[0] if isinstance(out, tuple) else out
                    parts.append(((out * mask).sum(1) / mask.sum(1).clamp(min=1)).float().numpy())
                rows.append(np.concatenate(parts, axis=1))
    finally:
        for h in handles:
            h.remove()
    return np.concatenate(rows) if rows else np.zeros((0, 0))


@dataclass
class NeuronBounds:
    low: np.ndarray
    high: np.ndarray
    layers: list[str]


def fit_bounds(model: Any, train_texts: Sequence[str], layers: Sequence[str] | None = None) -> NeuronBounds:
    module, _ = _parts(model)
    layers = list(layers or default_layers(module))
    acts = activations(model, train_texts, layers)
    return NeuronBounds(acts.min(axis=0), acts.max(axis=0), layers)


def neuron_coverage(model: Any, texts: Sequence[str], bounds: NeuronBounds, atol: float = 1e-4) -> dict[str, float]:
    """BoundCov and SActCov of ``texts`` given training-split bounds (``atol`` absorbs float noise from
    padding: a value must leave its bound by more than that)."""
    acts = activations(model, texts, bounds.layers)
    upper = (acts > bounds.high + atol).any(axis=0) if len(acts) else np.zeros_like(bounds.high, dtype=bool)
    lower = (acts < bounds.low - atol).any(axis=0) if len(acts) else np.zeros_like(bounds.low, dtype=bool)
    n = len(bounds.high)
    return {"n_neurons": int(n), "n_texts": len(texts), "upper": int(upper.sum()), "lower": int(lower.sum()),
            "bound_cov": float((upper.sum() + lower.sum()) / (2 * n)), "sact_cov": float(upper.sum() / n)}


def training_split_bounds(model: Any, task: str, n: int = 300, seed: int = 0,
                          layers: Sequence[str] | None = None) -> NeuronBounds:
    """Bounds from ``n`` texts sampled (seeded) from the task's training split (SST / HateXplain train)."""
    import random

    from alict_core.data.splits import task_splits

    texts = task_splits(task)["train"][0]
    sample = random.Random(seed).sample(texts, min(n, len(texts)))
    return fit_bounds(model, sample, layers)
