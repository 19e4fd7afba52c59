"""Label mapping helpers: native labels → task labels, the paper's binary → 3-class rule."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.data.records import TASK_LABELS

THIRD = 1.0 / 3.0
TWO_THIRDS = 2.0 / 3.0


def task_labels(task: str) -> tuple[str, ...]:
    if task not in TASK_LABELS:
        raise ModelError(f"unknown task {task!r}; valid tasks: {', '.join(TASK_LABELS)}")
    return TASK_LABELS[task]


def check_task_labels(model: str, task: str, fallback: Any = None, label_map: Mapping[Any, Any] | None = None) -> None:
    """ModelError naming the value when ``fallback`` or a ``label_map`` target is no label of ``task``: said before
    any request (a chat run spent its requests, then failed with Python's "tuple.index(x): x not in tuple")."""
    labels = task_labels(task)
    allowed = f"not one of the labels of {task}: {', '.join(labels)}"
    if fallback is not None and fallback not in labels:
        raise ModelError(f"model {model!r}: fallback={str(fallback)[:40]!r} is {allowed}"
                         + (" (leave fallback out for the default)" if not str(fallback).strip() else ""))
    for native, target in (label_map or {}).items():
        if target not in labels:
            raise ModelError(f"model {model!r}: label_map maps {str(native)[:40]!r} to {str(target)[:40]!r}, "
                             f"{allowed}")


def binary_to_three(p_positive: np.ndarray, low: float = THIRD, high: float = TWO_THIRDS) -> np.ndarray:
    """The ALiCT rule for binary sentiment models: p(pos) < low negative, > high positive, else neutral.

    Returns one-hot (n, 3) rows over (negative, neutral, positive). The boundaries themselves
    (p == low or p == high) are neutral, so every row has exactly one 1 (the original code returned
    an all-zero row there).
    """
    if not 0.0 <= low <= high <= 1.0:
        raise ModelError(f"binary→3-class thresholds must satisfy 0 <= low <= high <= 1, got low={low}, high={high}")
    p = np.asarray(p_positive, dtype=np.float64).reshape(-1)
    out = np.zeros((len(p), 3), dtype=np.float64)
    out[p < low, 0] = 1.0
    out[p > high, 2] = 1.0
    out[(p >= low) & (p <= high), 1] = 1.0
    return out


def map_columns(
    proba: np.ndarray, native: Sequence[str], mapping: Mapping[str, str], labels: Sequence[str], model: str
) -> np.ndarray:
    """Sum native-label columns into task-label columns (``mapping``: native label → task label)."""
    out = np.zeros((proba.shape[0], len(labels)), dtype=np.float64)
    index = {label: i for i, label in enumerate(labels)}
    for j, name in enumerate(native):
        target = mapping.get(name, mapping.get(str(name).lower()))
        if target is None:
            raise ModelError(
                f"model {model!r}: native label {name!r} has no mapping; known mapping keys: {sorted(mapping)}"
            )
        if target not in index:
            raise ModelError(f"model {model!r}: label {name!r} maps to {target!r}, not one of {tuple(labels)}")
        out[:, index[target]] += proba[:, j]
    return out


def score_to_three(score: np.ndarray, neutral_band: float, temperature: float = 10.0) -> np.ndarray:
    """Polarity scores in [-1, 1] → (negative, neutral, positive) distribution.

    argmax is negative below -band, positive above +band, neutral inside (VADER's convention).
    """
    s = np.asarray(score, dtype=np.float64).reshape(-1)
    logits = np.stack([np.maximum(-s, 0.0), np.full_like(s, neutral_band), np.maximum(s, 0.0)], axis=1) * temperature
    return softmax(logits)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)

