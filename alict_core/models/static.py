"""Static predictions from a CSV/JSONL file: a model that only looks texts up."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from alict_core.errors import ModelError
from alict_core.hashing import hash_files
from alict_core.models.labels import task_labels


class StaticPredictionsModel:
    """Rows with ``text`` and either one probability column per task label or a ``label`` column."""

    def __init__(self, path: str | Path, task: str, name: str | None = None) -> None:
        path = Path(path).expanduser()
        self.name = name or path.stem
        self.labels = task_labels(task)
        if not path.is_file():
            raise ModelError(f"model {self.name!r}: predictions file {path} not found")
        self.table: dict[str, np.ndarray] = {}
        for line_no, row in self._rows(path):
            if "text" not in row:
                raise ModelError(f"model {self.name!r}: {path}:{line_no}: row has no 'text' field")
            self.table[str(row["text"])] = self._proba(row, f"{path}:{line_no}")
        self.fingerprint = f"static:{hash_files([path])}"

    @staticmethod
    def _rows(path: Path):
        if path.suffix.lower() in (".jsonl", ".json"):
            with open(path, encoding="utf-8") as handle:
                for n, line in enumerate(handle, 1):
                    if line.strip():
                        yield n, json.loads(line)
        else:
            with open(path, encoding="utf-8", newline="") as handle:
                for n, row in enumerate(csv.DictReader(handle), 2):
                    yield n, row

    def _proba(self, row: dict, where: str) -> np.ndarray:
        if all(label in row and row[label] not in ("", None) for label in self.labels):
            proba = np.array([float(row[label]) for label in self.labels])
            total = proba.sum()
            if total <= 0:
                raise ModelError(f"model {self.name!r}: {where}: probabilities sum to {total}")
            return proba / total
        label = row.get("label")
        if label in (None, ""):
            raise ModelError(f"model {self.name!r}: {where}: needs a 'label' column or columns {self.labels}")
        label = str(label)
        if label.isdigit() and int(label) < len(self.labels):
            label = self.labels[int(label)]
        if label not in self.labels:
            raise ModelError(f"model {self.name!r}: {where}: label {label!r} is not one of {self.labels}")
        return np.eye(len(self.labels))[self.labels.index(label)]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            raise ModelError(f"model {self.name!r}: no stored prediction for {len(missing)} texts, e.g. {missing[0]!r}")
        return np.array([self.table[t] for t in texts]).reshape(len(texts), len(self.labels))
