"""Static predictions from a CSV/JSONL file: a model that only looks texts up."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.common.hashing import hash_files
from alict_core.common.textsafe import printable
from alict_core.models.labels import task_labels


def _is_upload(path: Path) -> bool:
    """Whether ``path`` names a file of the uploads folder (stored under its content hash, evicted when old)."""
    from alict_core.common.trust import uploads_dir

    try:
        return path.resolve().parent == uploads_dir()
    except (OSError, ValueError):
        return False


class StaticPredictionsModel:
    """Rows with ``text`` and either one probability column per task label or a ``label`` column."""

    def __init__(self, path: str | Path, task: str, name: str | None = None) -> None:
        path = Path(path).expanduser()
        self.name = name or printable(path.stem)  # a file name with terminal escapes was the model's shown name
        self.labels = task_labels(task)
        self.table: dict[str, np.ndarray] = {}
        first: dict[str, str] = {}
        if not path.exists() and _is_upload(path):
            raise ModelError(f"model {self.name!r}: its uploaded predictions file is no longer on the server (uploads "
                             "unused for a while are removed to make room for newer ones); upload the file again")
        for line_no, row in self._rows(path, self.name):
            where = f"{path.name}:{line_no}"
            if not isinstance(row.get("text"), str):
                raise ModelError(f"model {self.name!r}: {where}: row has no text field 'text'")
            proba = self._proba(row, where)
            text = row["text"]
            if text in self.table and not np.array_equal(self.table[text], proba):  # the last would win silently
                raise ModelError(f"model {self.name!r}: {where}: text {text[:60]!r} has another prediction than "
                                 f"at {first[text]}; give each text one prediction")
            self.table[text] = proba
            first.setdefault(text, where)
        if not self.table:  # accepted, it failed every case later ("no prediction for …")
            raise ModelError(f"model {self.name!r}: {path.name} holds no prediction (a header and no rows); give one "
                             "row per text")
        self.fingerprint = f"static:{hash_files([path])}"

    @staticmethod
    def _rows(path: Path, name: str):
        """(row number, row) through the strict-input path (size, UTF-8, JSON nesting, CSV fields, row count)."""
        from alict_core.common.userfiles import csv_rows, jsonl_rows

        def error(message: str) -> ModelError:
            return ModelError(f"model {name!r}: {message}")

        if path.suffix.lower() in (".jsonl", ".json"):
            rows = jsonl_rows(path, "predictions file", error=error)
        else:
            rows = csv_rows(path, "predictions file", error=error)[1]
        for where, row in rows:
            yield where.rpartition(":")[2], row

    def _proba(self, row: dict, where: str) -> np.ndarray:
        columns = [label for label in self.labels if label in row and row[label] not in ("", None)]
        if columns and row.get("label") not in (None, ""):  # one silently won over the other (columns over label;
            raise ModelError(f"model {self.name!r}: {where}: give either the columns {list(self.labels)} or a "
                             "'label', not both")  # a partial row: the label over the given column)
        if columns and len(columns) < len(self.labels):
            missing = [label for label in self.labels if label not in columns]
            raise ModelError(f"model {self.name!r}: {where}: columns {missing} are missing (give every label's "
                             "probability, or a 'label' column)")
        if all(label in row and row[label] not in ("", None) for label in self.labels):
            values = [row[label] for label in self.labels]
            try:
                if any(isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in values):
                    raise ValueError
                if any(isinstance(v, str) and (not v.isascii() or "_" in v) for v in values):
                    raise ValueError  # float() reads full-width digits and "0_1" (as 1.0)
                proba = np.array([float(v) for v in values])
            except (ValueError, OverflowError):  # a 400-digit JSON integer is no float either
                raise ModelError(f"model {self.name!r}: {where}: columns {list(self.labels)} must be numbers") from None
            if not np.isfinite(proba).all() or (proba < 0).any():
                raise ModelError(f"model {self.name!r}: {where}: probabilities must be finite and >= 0")
            with np.errstate(over="ignore"):  # 1e308 in every column: the sum overflows (numpy's warning named
                total = proba.sum()  # a site-packages path); said for the row instead
            if not np.isfinite(total) or total <= 0:
                raise ModelError(f"model {self.name!r}: {where}: probabilities sum to {total} (give values that "
                                 "sum to 1, or to a positive finite number)")
            return proba / total
        label = row.get("label")
        if label in (None, ""):
            raise ModelError(f"model {self.name!r}: {where}: needs a 'label' column or columns {self.labels}")
        if isinstance(label, bool) or not isinstance(label, (str, int)):
            raise ModelError(f"model {self.name!r}: {where}: label must be a label name or index, "
                             f"got {type(label).__name__}")
        label = str(label)
        if label.isascii() and label.isdigit() and int(label) < len(self.labels):  # never "٢" or "２"
            label = self.labels[int(label)]
        if label not in self.labels:
            raise ModelError(f"model {self.name!r}: {where}: label {label[:40]!r} is not one of {self.labels}")
        return np.eye(len(self.labels))[self.labels.index(label)]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            raise ModelError(f"model {self.name!r}: no stored prediction for {len(missing)} texts, e.g. {missing[0]!r}")
        return np.array([self.table[t] for t in texts]).reshape(len(texts), len(self.labels))
