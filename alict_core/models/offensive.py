"""Hate / offensive-language models from PyPI: hatesonar (ONNX) and alt-profanity-check."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.common.fingerprint import combine, file_digest, package_versions
from alict_core.data.records import HATE_LABELS


def _patched_onnx_bytes(model_file: Path, locale: str = "C.UTF-8") -> bytes:
    """hatesonar's StringNormalizer asks for locale en_US.UTF-8 (often absent): rewrite it to ``locale``."""
    import onnx
    import onnx.helper

    proto = onnx.load(str(model_file))
    for node in proto.graph.node:
        if node.op_type == "StringNormalizer":
            for attr in list(node.attribute):
                if attr.name == "locale":
                    node.attribute.remove(attr)
            node.attribute.append(onnx.helper.make_attribute("locale", locale))
    return proto.SerializeToString()


class HateSonarModel:
    """HateSonar (Davidson et al.): p(hateful) = p(hate_speech); offensive and neither count as non-hateful."""

    labels = HATE_LABELS

    def __init__(self, name: str = "hatesonar", locale: str = "C.UTF-8") -> None:
        import onnxruntime as ort
        from hatesonar.api import DEFAULT_MODEL_FILE

        self.name = name
        try:
            self.session = ort.InferenceSession(
                _patched_onnx_bytes(Path(DEFAULT_MODEL_FILE), locale), providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - reported with the model name, never swallowed
            raise ModelError(f"model {name!r}: could not load hatesonar's ONNX model: {exc}") from exc
        self.fingerprint = combine("hatesonar", {"locale": locale, "model": file_digest(DEFAULT_MODEL_FILE),
                                                 "versions": package_versions("hatesonar", "onnxruntime", "onnx")})

    def native_proba(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 3) over (hate_speech, offensive_language, neither)."""
        if not len(texts):
            return np.zeros((0, 3))
        _, probs = self.session.run(None, {"text": np.array(list(texts), dtype=object)})
        if isinstance(probs, list):  # ZipMap output: list of {class: p}
            probs = np.array([[row[k] for k in sorted(row)] for row in probs])
        return np.asarray(probs, dtype=np.float64)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        native = self.native_proba(texts)
        hate = native[:, 0]
        return np.stack([1.0 - hate, hate], axis=1)


class ProfanityCheckModel:
    """alt-profanity-check (linear SVM on TF-IDF, calibrated): p(hateful) = p(profane)."""

    labels = HATE_LABELS

    def __init__(self, name: str = "profanity-check") -> None:
        from profanity_check import predict_prob

        self.name = name
        self._predict_prob = predict_prob
        versions = package_versions("alt-profanity-check", "scikit-learn")
        self.fingerprint = combine("profanity-check", {"versions": versions})

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, 2))
        p = np.clip(np.asarray(self._predict_prob(list(texts)), dtype=np.float64), 0.0, 1.0)
        return np.stack([1.0 - p, p], axis=1)
