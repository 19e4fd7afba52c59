"""Content fingerprints of models: they change whenever what the model computes can change.

- ``file_digest``: SHA-256 of a file, computed once per file identity (path, inode, size, mtime) per process.
- ``folder_fingerprint``: digests of a model folder's weight, tokenizer and config files.
- ``state_dict_fingerprint``: a hash over every tensor of a torch module (for models built in memory).
- ``package_versions``: installed versions read from ``importlib.metadata`` (never hard-coded).
"""

from __future__ import annotations

import hashlib
import threading
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Iterable

from alict_core.common.hashing import hash_json

# Files of a model folder that change its outputs (weights, tokenizer, config); other files are ignored.
MODEL_FILE_SUFFIXES = (
    ".safetensors", ".bin", ".pt", ".pth", ".json", ".txt", ".model", ".npz", ".onnx", ".joblib", ".pkl",
)

_digests: dict[tuple, str] = {}
_digests_lock = threading.Lock()
MAX_DIGESTS = 4096


def file_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes, cached by file identity so a rewritten file is hashed again."""
    path = Path(path)
    stat = path.stat()
    identity = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _digests_lock:
        if identity in _digests:
            return _digests[identity]
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    with _digests_lock:
        if len(_digests) >= MAX_DIGESTS:
            _digests.clear()
        _digests[identity] = value
    return value


def folder_fingerprint(folder: str | Path, suffixes: Iterable[str] = MODEL_FILE_SUFFIXES) -> dict[str, str]:
    """File name → digest of every model file directly in ``folder`` (weights, tokenizer, config; the files
    ``from_pretrained`` reads; sub-folders are not walked)."""
    folder = Path(folder)
    wanted = tuple(suffixes)
    return {
        p.name: file_digest(p)
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name.endswith(wanted) and not p.name.startswith(".")
    }


def state_dict_fingerprint(module: Any) -> str:
    """Hash over every parameter and buffer of a torch module (names, shapes, dtypes and values)."""
    import torch

    digest = hashlib.sha256()
    with torch.no_grad():
        for name, tensor in sorted(module.state_dict().items()):
            t = tensor.detach().cpu().contiguous().reshape(-1)
            digest.update(f"{name}:{tuple(tensor.shape)}:{t.dtype}".encode())
            digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def package_versions(*names: str) -> dict[str, str]:
    """Installed version of each distribution (``"missing"`` when not installed)."""
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def combine(prefix: str, parts: dict[str, Any]) -> str:
    """``prefix:<hash of parts>``: the fingerprint string adapters expose."""
    return f"{prefix}:{hash_json(parts, length=24)}"
