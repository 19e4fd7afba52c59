"""Content hashes used to key cached artefacts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable


def hash_bytes(data: bytes, length: int = 16) -> str:
    return hashlib.sha256(data).hexdigest()[:length]


def hash_text(text: str, length: int = 16) -> str:
    return hash_bytes(text.encode("utf-8"), length)


def hash_json(obj: Any, length: int = 16) -> str:
    """Hash of a JSON-serialisable object (keys sorted, so dict order does not matter)."""
    return hash_text(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str), length)


def hash_files(paths: Iterable[Path], length: int = 16) -> str:
    """Hash of the contents of several files (in the given order)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(Path(path).name).encode())
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:length]
