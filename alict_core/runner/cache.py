"""On-disk prediction cache keyed by (model fingerprint, text hash): one atomic JSON shard per batch.

A killed run keeps every finished batch (each shard is renamed into place only when complete), so a
re-run only predicts what is missing. Shard ``b-<hash>.json`` =
``{"format": 1, "key": <cache key>, "rows": n, "sha256": <of h and p>, "h": [text hashes], "p": [[probabilities]]}``.

Every shard is verified when read (format, key, row count, checksum, width, finite probabilities in [0, 1]
summing to 1); a bad shard is reported in one line, moved to ``<cache>/quarantine/predictions/`` and its texts
are predicted again, so it is never served and never fatal.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from alict_core.common.config import artefact_dir
from alict_core.common.hashing import hash_json, hash_text
from alict_core.common.jsonl import atomic_path, loads, write_json
from alict_core.common.manifest import FORMAT_VERSION, CorruptArtefactError, quarantine, report_bad, sha256_bytes


def text_hashes(texts: Iterable[str]) -> dict[str, str]:
    """text → content hash (the cache key), computed once per distinct text."""
    return {t: hash_text(t) for t in dict.fromkeys(texts)}


class PredictionCache:
    """Probabilities of one model, by text hash, under ``<root>/<hash of fingerprint and labels>/``."""

    def __init__(self, fingerprint: str, labels: Sequence[str], root: Path | None = None) -> None:
        self.fingerprint = fingerprint
        self.labels = tuple(labels)
        base = Path(root or artefact_dir("predictions"))
        self.key = hash_json({"fp": fingerprint, "labels": self.labels})
        self.dir = base / self.key
        self.quarantine_root = base.parent / "quarantine"
        self.quarantined: list[Path] = []
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "meta.json"
        if not meta.is_file():
            write_json(meta, {"fingerprint": fingerprint, "labels": list(self.labels)})
        self._rows: dict[str, list[float]] | None = None

    def _read_shard(self, shard: Path) -> dict[str, list[float]]:
        """The rows of one shard after checking its embedded manifest and values (CorruptArtefactError)."""
        where = f"prediction shard {shard.name} of model {self.fingerprint[:24]!r}"
        if shard.is_symlink() or not shard.is_file():  # a named pipe there: open() waited for ever, every run hung
            raise CorruptArtefactError(f"{where}: not a plain file")
        try:
            with open(shard, encoding="utf-8") as handle:
                data = loads(handle.read())
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CorruptArtefactError(f"{where}: unreadable ({type(exc).__name__})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
            raise CorruptArtefactError(f"{where}: no manifest or unknown format")
        if data.get("key") != self.key:
            raise CorruptArtefactError(f"{where}: written for cache key {data.get('key')!r}, not {self.key}")
        keys, values = data.get("h"), data.get("p")
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            raise CorruptArtefactError(f"{where}: row count does not match its manifest")
        if len(keys) != data.get("rows"):
            raise CorruptArtefactError(f"{where}: {len(keys)} rows, manifest says {data.get('rows')}")
        if _checksum(keys, values) != data.get("sha256"):
            raise CorruptArtefactError(f"{where}: values do not match the checksum (changed or truncated)")
        width = len(self.labels)
        for row in values:
            if (not isinstance(row, list) or len(row) != width
                    or not all(isinstance(v, (int, float)) and math.isfinite(v) and 0.0 <= v <= 1.0 for v in row)
                    or abs(sum(row) - 1.0) > 1e-3):
                raise CorruptArtefactError(f"{where}: a row is not {width} finite probabilities summing to 1")
        return dict(zip(keys, values, strict=True))

    def _load(self) -> dict[str, list[float]]:
        if self._rows is None:
            rows: dict[str, list[float]] = {}
            for shard in sorted(self.dir.glob("b-*.json")):
                try:
                    rows.update(self._read_shard(shard))
                except CorruptArtefactError as exc:
                    moved = quarantine(shard, "predictions", self.quarantine_root)
                    if moved is not None:
                        self.quarantined.append(moved)
                    report_bad(exc, moved)
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
        if len(keys) != len(values):
            raise CorruptArtefactError(f"model {self.fingerprint[:24]!r} returned {len(values)} rows "
                                       f"for {len(keys)} texts")
        shard = {"format": FORMAT_VERSION, "key": self.key, "rows": len(keys), "sha256": _checksum(keys, values),
                 "h": keys, "p": values}
        with atomic_path(self.dir / f"b-{hash_json(keys)}.json") as tmp:
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(shard, handle)
        self._load().update(zip(keys, values, strict=True))

    def release(self, keys: Iterable[str]) -> None:
        """Drop rows (by text hash) from memory; they stay on disk. A streaming worker calls it after each shard
        so memory stays flat in the suite size (a text seen again is predicted again, which is rare)."""
        rows = self._load()
        for key in keys:
            rows.pop(key, None)

    def remember(self, texts: Sequence[str], proba: np.ndarray, hashes: dict[str, str] | None = None) -> None:
        """Keep rows for this process only (never written): answers that must not be served again."""
        keys = [hashes[t] if hashes else hash_text(t) for t in texts]
        self._load().update(zip(keys, np.asarray(proba, dtype=np.float64).tolist(), strict=True))

    def lookup(self, texts: Sequence[str], hashes: dict[str, str] | None = None) -> np.ndarray:
        """(len(texts), k) probabilities; every text must be cached."""
        rows = self._load()
        if not len(texts):
            return np.zeros((0, len(self.labels)))
        return np.array([rows[hashes[t] if hashes else hash_text(t)] for t in texts], dtype=np.float64)


def _checksum(keys: list, values: list) -> str:
    """sha256 of a shard's rows in a canonical JSON form (what the shard's manifest records)."""
    return sha256_bytes(json.dumps([keys, values], separators=(",", ":")).encode("utf-8"))
