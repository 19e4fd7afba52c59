"""Embedded offline classifiers: MiniLM sentence embeddings + a softmax head stored as npz/JSON."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from alict_core.common.errors import ArtefactMissingError, ModelError
from alict_core.common.hashing import hash_files
from alict_core.common.jsonl import read_json
from alict_core.models.labels import softmax


class EmbeddingHeadModel:
    """``softmax(W · minilm(text) + b)``; the head lives in ``<dir>/head.npz`` + ``<dir>/meta.json``."""

    def __init__(self, name: str, head_dir: Path, encoder=None) -> None:
        head_dir = Path(head_dir)
        meta_path, head_path = head_dir / "meta.json", head_dir / "head.npz"
        if not meta_path.exists() or not head_path.exists():
            raise ArtefactMissingError(
                f"embedded model {name!r} is not built (looked in {head_dir}); fix: python -m alict_core build models"
            )
        self.name = name
        try:  # a damaged or edited head: one message naming the model and file, never a traceback
            self.meta = read_json(meta_path)
        except (OSError, ValueError, RecursionError) as exc:
            raise ModelError(f"model {name!r}: {meta_path.name} cannot be read ({type(exc).__name__}); rebuild or "
                             "retrain it") from None
        labels = self.meta.get("labels") if isinstance(self.meta, dict) else None
        if not isinstance(labels, list) or not labels or not all(isinstance(v, str) for v in labels):
            raise ModelError(f"model {name!r}: {meta_path.name} has no list of labels; rebuild or retrain it")
        self.labels = tuple(labels)
        try:
            with np.load(head_path, allow_pickle=False) as data:
                self.weight = np.asarray(data["weight"], dtype=np.float32)
                self.bias = np.asarray(data["bias"], dtype=np.float32)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ModelError(f"model {name!r}: {head_path.name} cannot be read ({type(exc).__name__}); rebuild or "
                             "retrain it") from None
        if self.weight.ndim != 2 or self.bias.shape != (len(self.labels),) or self.weight.shape[0] != len(self.labels):
            raise ModelError(f"model {name!r}: head has {self.weight.shape[0]} rows, labels {self.labels}")
        if encoder is None:
            from alict_core.models.encoder import shared_encoder

            encoder = shared_encoder()
        width = getattr(encoder, "dim", None)
        if width is not None and self.weight.shape[1] != width:  # numpy's "matmul: Input operand 1 has a mismatch"
            raise ModelError(f"model {name!r}: {head_path.name} takes {self.weight.shape[1]} features but the encoder "
                             f"gives {width}; rebuild or retrain it")
        if not (np.isfinite(self.weight).all() and np.isfinite(self.bias).all()):
            raise ModelError(f"model {name!r}: {head_path.name} holds values that are not finite numbers; rebuild or "
                             "retrain it")
        self.encoder = encoder
        self.fingerprint = f"embedded:{name}:{hash_files([meta_path, head_path])}:{encoder.fingerprint}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(texts)

    def proba_from_embeddings(self, emb: np.ndarray) -> np.ndarray:
        return softmax(emb @ self.weight.T + self.bias)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.proba_from_embeddings(self.embed(texts))
