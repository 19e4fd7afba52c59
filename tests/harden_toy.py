"""The toy hardening world shared by tests/test_harden.py and the Harden browser journey: a hashing encoder,
a tiny embedded sentiment classifier 'tiny-embedded' trained on a toy corpus, and that corpus's splits.

``install()`` (for a browser-test server, via ``ALICT_TEST_PLUGIN=tests.harden_toy`` of tests/fake_streamlit.py)
registers the model with its head under ``$ALICT_CACHE_DIR/tiny-embedded`` and makes the toy corpus the task's
corpus (training data and test split) in that process.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

WORDS_POS = ("good", "great", "lovely", "fine", "superb")
WORDS_NEG = ("bad", "awful", "dull", "poor", "weak")
SUBJECTS = ("the film", "the cast", "the plot", "the music")
MODEL = "tiny-embedded"


class HashingEncoder:
    """Bag of words hashed into 64 dimensions (deterministic, instant) with the MiniLM encoder's interface."""

    fingerprint = "hashing-encoder:1"
    dim = 64

    def encode(self, texts, batch_size: int = 64, progress=None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in str(text).lower().split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
            out[i] /= max(1.0, float(np.linalg.norm(out[i])))
        return out


ORIGINAL = ([f"{s} was {w}" for s in SUBJECTS for w in WORDS_POS] * 2
            + [f"{s} was {w}" for s in SUBJECTS for w in WORDS_NEG] * 2, ["positive"] * 40 + ["negative"] * 40)
# the corpus test split of the toy task: its own texts, plus one that is also an original training text
HELDOUT = ([f"the {noun} was {w}" for noun in ("story", "show", "book") for w in (*WORDS_POS, *WORDS_NEG)]
           + ["the film was good"], [y for _ in range(3) for y in ["positive"] * 5 + ["negative"] * 5] + ["positive"])
SPLITS_OF_TOY_TASK = {"train": ORIGINAL, "test": HELDOUT}


def write_head(folder: Path) -> Path:
    """The tiny classifier's head (negative / positive from ORIGINAL; neutral never predicted) in ``folder``."""
    from sklearn.linear_model import LogisticRegression

    labels = ["negative", "neutral", "positive"]
    emb = HashingEncoder().encode(ORIGINAL[0])
    clf = LogisticRegression(C=10.0, max_iter=2000, random_state=0).fit(emb, [labels.index(y) for y in ORIGINAL[1]])
    weight = np.zeros((3, emb.shape[1]), dtype=np.float32)
    bias = np.zeros(3, dtype=np.float32)
    weight[0], bias[0] = -clf.coef_[0] / 2, -clf.intercept_[0] / 2
    weight[2], bias[2] = clf.coef_[0] / 2, clf.intercept_[0] / 2
    bias[1] = -5.0
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "head.npz", weight=weight, bias=bias)
    (folder / "meta.json").write_text(json.dumps({"name": MODEL, "task": "sentiment", "labels": labels, "C": 10.0}))
    return folder


def register(head: Path) -> str:
    """Register 'tiny-embedded' (kind "embedded": retrainable) on the hashing encoder; return its name."""
    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.models.registry import MODELS, clear_model_cache

    MODELS.add(MODEL, lambda **kw: EmbeddingHeadModel(MODEL, head, encoder=HashingEncoder()),
               "test", task="sentiment", offline=True, kind="embedded")
    clear_model_cache()
    return MODEL


def unregister() -> None:
    from alict_core.models.registry import MODELS, clear_model_cache

    for name in list(MODELS.names(kind="version")) + [MODEL]:
        MODELS.remove(name)
    clear_model_cache()


def install() -> None:
    """In a browser-test server: the tiny model, its encoder for retrained versions, the toy corpus."""
    from alict_core.common.config import cache_dir
    from alict_core.data import splits
    from alict_core.models import encoder as encoder_module
    from alict_core.training import retrain as training

    encoder_module.shared_encoder = lambda path=None: HashingEncoder()  # type: ignore[assignment]
    training.original_training_data = lambda task: ORIGINAL  # type: ignore[assignment]
    splits.task_splits = lambda task: SPLITS_OF_TOY_TASK  # type: ignore[assignment]
    register(write_head(cache_dir() / MODEL))
