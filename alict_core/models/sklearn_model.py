"""scikit-learn / joblib pipelines (text in, ``predict_proba`` out), loaded only from trusted paths."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.common.fingerprint import combine, file_digest, package_versions
from alict_core.common.trust import check_pickle_allowed
from alict_core.models.labels import map_columns, task_labels


class SklearnPipelineModel:
    """A fitted pipeline saved with joblib. Unpickling runs code, so ``trusted=True`` is required
    (the CLI sets it with ``--trust-pickle``; the app only for folders in ``ALICT_PICKLE_DIRS``)."""

    def __init__(
        self, path: str | Path, task: str, trusted: bool = False, name: str | None = None,
        label_map: Mapping[str, str] | None = None,
    ) -> None:
        path = Path(path).expanduser()
        self.name = name or path.stem
        check_pickle_allowed(trusted)
        if not path.is_file():
            raise ModelError(f"model {self.name!r}: no such file {path}")
        import joblib

        try:
            self.pipeline = joblib.load(path)
        except Exception as exc:  # noqa: BLE001 - unpickling can raise anything; reported, never swallowed
            raise ModelError(f"model {self.name!r}: could not load joblib file {path.name}: {exc}") from exc
        if not hasattr(self.pipeline, "predict_proba"):
            kind = type(self.pipeline).__name__
            raise ModelError(f"model {self.name!r}: {path} holds a {kind} without predict_proba")
        self.labels = task_labels(task)
        self.native = [str(c) for c in getattr(self.pipeline, "classes_", range(len(self.labels)))]
        default = {str(i): label for i, label in enumerate(self.labels)} | {label: label for label in self.labels}
        self.mapping = dict(label_map or default)
        self.fingerprint = combine("sklearn", {"file": file_digest(path), "map": self.mapping, "native": self.native,
                                               "versions": package_versions("scikit-learn", "joblib")})

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, len(self.labels)))
        native = np.asarray(self.pipeline.predict_proba(list(texts)), dtype=np.float64)
        return map_columns(native, self.native, self.mapping, self.labels, self.name)
