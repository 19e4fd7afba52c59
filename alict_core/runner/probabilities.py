"""The one check every reader of saved predictions applies: rows of finite probabilities summing to 1."""

from __future__ import annotations

import numpy as np


def are_probability_rows(matrix: np.ndarray, atol: float = 1e-3) -> bool:
    """True when every row is finite, within [0, 1] and sums to 1 (NaN, 5 and -3, ``[0, 0, 0]`` are not)."""
    if matrix.size == 0:
        return True
    return bool(np.all(np.isfinite(matrix)) and matrix.min() >= -1e-6 and matrix.max() <= 1 + 1e-6
                and np.abs(matrix.sum(axis=1) - 1.0).max() <= atol)
