"""Hugging Face sequence-classification models (hub id when online, or a local directory)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from alict_core.common.errors import ModelError, load_failure
from alict_core.common.fingerprint import combine, folder_fingerprint, package_versions, state_dict_fingerprint
from alict_core.models.labels import THIRD, TWO_THIRDS, binary_to_three, map_columns, softmax, task_labels
from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASKS

# Native label names seen in common checkpoints → task labels (lower-cased keys).
DEFAULT_LABEL_MAPS: dict[str, dict[str, str]] = {
    SENTIMENT.name: {
        "negative": "negative", "neg": "negative", "neutral": "neutral", "positive": "positive", "pos": "positive",
        "label_0": "negative", "label_1": "neutral", "label_2": "positive",
    },
    HATE_SPEECH.name: {
        "hate": "hateful", "hateful": "hateful", "hate_speech": "hateful", "hate speech": "hateful",
        "non-hate": "non-hateful", "non-hateful": "non-hateful", "not-hate": "non-hateful", "nothate": "non-hateful",
        "normal": "non-hateful", "not_hate": "non-hateful", "offensive": "non-hateful",
        "label_0": "non-hateful", "label_1": "hateful",
    },
}


class HFClassifier:
    """``AutoModelForSequenceClassification`` behind the model protocol.

    ``label_map`` maps the checkpoint's native labels (``config.id2label``) to task labels. For a
    binary sentiment checkpoint on the 3-class sentiment task, ``binary_rule=True`` (default) applies
    the ALiCT rule: p(pos) < low → negative, > high → positive, otherwise neutral (one-hot rows).
    """

    def __init__(
        self,
        model_id: str | Path,
        task: str,
        name: str | None = None,
        label_map: Mapping[str, str] | None = None,
        binary_rule: bool = True,
        low: float = THIRD,
        high: float = TWO_THIRDS,
        positive_label: str | None = None,
        max_length: int = 128,
        local_files_only: bool = False,
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.name = name or str(model_id)
        self.task = task
        self.labels = task_labels(task)
        self.max_length = max_length
        self.low, self.high = low, high
        is_local = Path(str(model_id)).expanduser().is_dir()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(model_id), local_files_only=local_files_only or is_local)
            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(model_id), local_files_only=local_files_only or is_local
            )
        except Exception as exc:  # noqa: BLE001 - reported with the model name, never swallowed
            hint = "" if is_local else " (a hub id needs internet access, or a local copy: pass the directory instead)"
            raise ModelError(f"model {self.name!r}: could not load {model_id!r}{hint}: "
                             f"{load_failure(exc, 600)}") from exc
        self.model.eval()
        id2label = self.model.config.id2label or {}
        self.native = [str(id2label.get(i, f"LABEL_{i}")) for i in range(self.model.config.num_labels)]
        mapping = {k.lower(): v for k, v in (label_map or DEFAULT_LABEL_MAPS[task]).items()}
        self.binary = TASKS[task].binary_rule and len(self.native) == 2 and binary_rule
        if self.binary:
            self.positive_index = self._positive_index(mapping, positive_label)
        else:
            self.mapping = mapping
            map_columns(np.eye(len(self.native)), self.native, mapping, self.labels, self.name)  # fail early
        self._lock = threading.Lock()  # one tokenizer + forward at a time: the fast tokenizer is not thread-safe
        # Content, computed once per load: the folder's weight/tokenizer/config file digests (cached by file
        # identity), or for a hub id the hash over the full state dict; plus every parameter of this adapter.
        content = folder_fingerprint(model_id) if is_local else state_dict_fingerprint(self.model)
        self.fingerprint = combine("hf", {
            "content": content, "native": self.native, "map": mapping, "binary": self.binary, "low": low,
            "high": high, "max_length": max_length, "positive": getattr(self, "positive_index", None),
            "versions": package_versions("transformers", "tokenizers", "torch"),
        })

    def _positive_index(self, mapping: Mapping[str, str], positive_label: str | None) -> int:
        if positive_label is not None:
            if positive_label not in self.native:
                raise ModelError(f"model {self.name!r}: positive_label {positive_label!r} not in {self.native}")
            return self.native.index(positive_label)
        for i, native in enumerate(self.native):
            if mapping.get(native.lower()) == "positive" or native.lower() in ("label_1", "1"):
                return i
        return 1

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        with self._lock, torch.inference_mode():
            batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                                   return_tensors="pt")
            return self.model(**batch).logits.float().numpy()

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, len(self.labels)))
        native = softmax(self.logits(texts))
        if self.binary:
            return binary_to_three(native[:, self.positive_index], self.low, self.high)
        return map_columns(native, self.native, self.mapping, self.labels, self.name)
