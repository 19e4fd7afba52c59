"""On-disk prediction cache keyed by (model fingerprint, text hash): one atomic JSON shard per batch.

A killed run keeps every finished batch (each shard is renamed into place only when complete), so a
re-run only predicts what is missing. Shard ``b-<hash>.json`` = ``{"h": [text hashes], "p": [[probabilities]]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from alict_core.config import artefact_dir
from alict_core.hashing import hash_json, hash_text
from alict_core.jsonl import atomic_path, write_json


def text_hashes(texts: Iterable[str]) -> dict[str, str]:
    """text → content hash (the cache key), computed once per distinct text."""
    return {t: hash_text(t) for t in dict.fromkeys(texts)}


class PredictionCache:
    """Probabilities of one model, by text hash, under ``<root>/<hash of fingerprint and labels>/``."""

    def __init__(self, fingerprint: str, labels: Sequence[str], root: Path | None = None) -> None:
        self.fingerprint = fingerprint
        self.labels = tuple(labels)
        self.dir = Path(root or artefact_dir("predictions")) / hash_json({"fp": fingerprint, "labels": self.labels})
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "meta.json"
        if not meta.exists():
            write_json(meta, {"fingerprint": fingerprint, "labels": list(self.labels)})
        self._rows: dict[str, list[float]] | None = None

    def _load(self) -> dict[str, list[float]]:
        if self._rows is None:
            rows: dict[str, list[float]] = {}
            for shard in sorted(self.dir.glob("b-*.json")):
                with open(shard, encoding="utf-8") as handle:
                    data = json.load(handle)
                rows.update(zip(data["h"], data["p"]))
            self._rows = rows
        return self._rows

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: str) -> bool:
        return key in self._load()

    def get(self, text: str) -> np.ndarray | None:
        row = self._load().get(hash_text(text))
        return None if row is None else np.asarray(row, dtype=np.float64)

    def missing(self, texts: Sequence[str], hashes: dict[str, str] | None = None) -> list[str]:
        rows = self._load()
        hashes = hashes or text_hashes(texts)
        return [t for t in texts if hashes[t] not in rows]

    def put_batch(self, texts: Sequence[str], proba: np.ndarray, hashes: dict[str, str] | None = None) -> None:
        """Store one finished batch as its own shard (atomic rename)."""
        keys = [hashes[t] if hashes else hash_text(t) for t in texts]
        values = np.round(np.asarray(proba, dtype=np.float64), 7).tolist()
        with atomic_path(self.dir / f"b-{hash_json(keys)}.json") as tmp:
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump({"h": keys, "p": values}, handle)
        self._load().update(zip(keys, values))

    def remember(self, texts: Sequence[str], proba: np.ndarray, hashes: dict[str, str] | None = None) -> None:
        """Keep rows for this process only (never written): answers that must not be served again."""
        keys = [hashes[t] if hashes else hash_text(t) for t in texts]
        self._load().update(zip(keys, np.asarray(proba, dtype=np.float64).tolist()))

    def lookup(self, texts: Sequence[str], hashes: dict[str, str] | None = None) -> np.ndarray:
        """(len(texts), k) probabilities; every text must be cached."""
        rows = self._load()
        if not len(texts):
            return np.zeros((0, len(self.labels)))
        return np.array([rows[hashes[t] if hashes else hash_text(t)] for t in texts], dtype=np.float64)
