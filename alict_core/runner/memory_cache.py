"""An in-memory prediction cache for models without a content fingerprint (never written to disk)."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from alict_core.runner.cache import text_hashes


class MemoryPredictionCache:
    """The ``PredictionCache`` interface over a dict that lives as long as one run."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = tuple(labels)
        self._rows: dict[str, list[float]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def missing(self, texts: Sequence[str], hashes: dict[str, str] | None = None) -> list[str]:
        hashes = hashes or text_hashes(texts)
        return [t for t in texts if hashes[t] not in self._rows]

    def put_batch(self, texts: Sequence[str], proba: np.ndarray, hashes: dict[str, str] | None = None) -> None:
        hashes = hashes or text_hashes(texts)
        self._rows.update(zip([hashes[t] for t in texts], np.asarray(proba, dtype=np.float64).tolist(), strict=True))

    remember = put_batch

    def release(self, keys: Iterable[str]) -> None:
        for key in keys:
            self._rows.pop(key, None)

    def lookup(self, texts: Sequence[str], hashes: dict[str, str] | None = None) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, len(self.labels)))
        hashes = hashes or text_hashes(texts)
        return np.array([self._rows[hashes[t]] for t in texts], dtype=np.float64)
