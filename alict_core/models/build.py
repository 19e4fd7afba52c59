"""Build the embedded offline classifiers: MiniLM embeddings + softmax heads (JSON/npz, no pickle).

``python -m alict_core build models`` trains "minilm-sst" (SST train sentences, 3 classes) and
"minilm-hatexplain" (HateXplain train split, 2 classes), picks the L2 strength on the dev split,
and records dev/test accuracy of these and of the classic offline models in ``accuracy.json``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from alict_core.config import models_dir
from alict_core.jsonl import atomic_path, read_json, write_json

EMBEDDED = {"minilm-sst": "sentiment", "minilm-hatexplain": "hate_speech"}
CLASSIC = {"vader": "sentiment", "textblob": "sentiment", "hatesonar": "hate_speech", "profanity-check": "hate_speech"}
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)
QUICK_TRAIN = 300
SEED = 13


def default_path() -> Path:
    return models_dir() / "classifiers"


def is_built(path: Path | None = None) -> bool:
    root = Path(path) if path else default_path()
    return all((root / name / "head.npz").exists() and (root / name / "meta.json").exists() for name in EMBEDDED)


def task_splits(task: str) -> dict[str, tuple[list[str], list[str]]]:
    """{split: (texts, labels)} for train/dev/test of a task's labelled corpus."""
    if task == "sentiment":
        from alict_core.data.sst import load_sst_sentences

        rows = load_sst_sentences(("train", "dev", "test"))
    else:
        from alict_core.data.hatexplain import load_hatexplain

        rows = load_hatexplain()
    out: dict[str, tuple[list[str], list[str]]] = {s: ([], []) for s in ("train", "dev", "test")}
    for row in rows:
        out[row.split][0].append(row.text)
        out[row.split][1].append(row.label)
    return out


def _subsample(texts: list[str], labels: list[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    if len(texts) <= n:
        return texts, labels
    idx = sorted(random.Random(seed).sample(range(len(texts)), n))
    return [texts[i] for i in idx], [labels[i] for i in idx]


def fit_head(
    x_train: np.ndarray, y_train: np.ndarray, x_dev: np.ndarray, y_dev: np.ndarray, n_labels: int, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Multinomial logistic regression; C chosen by dev accuracy. Returns (W (k, d), b (k), C, dev acc)."""
    from sklearn.linear_model import LogisticRegression

    best = None
    for c in C_GRID:
        clf = LogisticRegression(C=c, max_iter=2000, random_state=seed)
        clf.fit(x_train, y_train)
        acc = float((clf.predict(x_dev) == y_dev).mean())
        if best is None or acc > best[0]:
            best = (acc, c, clf)
    acc, c, clf = best
    weight = np.zeros((n_labels, x_train.shape[1]), dtype=np.float32)
    bias = np.zeros(n_labels, dtype=np.float32)
    classes = [int(k) for k in clf.classes_]
    if len(classes) == 2 and clf.coef_.shape[0] == 1:  # binary: sigmoid(z) == softmax([0, z])
        weight[classes[1]] = clf.coef_[0]
        bias[classes[1]] = clf.intercept_[0]
    else:
        for row, k in enumerate(classes):
            weight[k] = clf.coef_[row]
            bias[k] = clf.intercept_[row]
    return weight, bias, c, acc


def accuracy(proba: np.ndarray, labels: Sequence[str], names: Sequence[str]) -> dict[str, float]:
    """Accuracy and macro-F1 of argmax predictions."""
    pred = np.asarray(proba).argmax(axis=1)
    gold = np.array([names.index(label) for label in labels])
    f1s = []
    for k in range(len(names)):
        tp = float(((pred == k) & (gold == k)).sum())
        denom = float((pred == k).sum() + (gold == k).sum())
        f1s.append(2 * tp / denom if denom else 0.0)
    return {"accuracy": round(float((pred == gold).mean()), 4), "macro_f1": round(float(np.mean(f1s)), 4), "n": int(len(gold))}


def build(out_dir: Path | None = None, quick: bool = False, max_minutes: float | None = None,
          log: Callable[[str], None] = print) -> Path:
    """Train both embedded heads into ``out_dir`` (default ``models_dir()/classifiers``); return it.

    ``quick`` uses 300 training texts per task (for tests). ``max_minutes`` caps the encoding: when the
    budget would be exceeded the training set is subsampled to what fits (recorded in meta.json).
    """
    from alict_core.data.records import TASK_LABELS
    from alict_core.models.encoder import shared_encoder

    root = Path(out_dir) if out_dir else default_path()
    root.mkdir(parents=True, exist_ok=True)
    encoder = shared_encoder()
    started = time.monotonic()
    report: dict[str, dict] = {}
    for name, task in EMBEDDED.items():
        names = TASK_LABELS[task]
        splits = task_splits(task)
        train_x, train_y = splits["train"]
        dev_x, dev_y = splits["dev"]
        test_x, test_y = splits["test"]
        if quick:
            train_x, train_y = _subsample(train_x, train_y, QUICK_TRAIN, SEED)
            dev_x, dev_y = _subsample(dev_x, dev_y, QUICK_TRAIN // 2, SEED)
            test_x, test_y = _subsample(test_x, test_y, QUICK_TRAIN // 2, SEED)
        if max_minutes is not None:
            left = max_minutes * 60 - (time.monotonic() - started)
            probe = time.monotonic()
            encoder.encode(train_x[:64])
            rate = 64 / max(time.monotonic() - probe, 1e-3)
            per_task = left / (len(EMBEDDED) - list(EMBEDDED).index(name))
            fit = int(rate * per_task * 0.8) - len(dev_x) - len(test_x)
            if fit < len(train_x):
                train_x, train_y = _subsample(train_x, train_y, max(fit, 200), SEED)
        log(f"[{name}] encoding {len(train_x)} train / {len(dev_x)} dev / {len(test_x)} test texts")
        t0 = time.monotonic()
        emb = {s: encoder.encode(x) for s, x in (("train", train_x), ("dev", dev_x), ("test", test_x))}
        encode_s = time.monotonic() - t0
        y = {s: np.array([names.index(v) for v in labels]) for s, labels in (("train", train_y), ("dev", dev_y), ("test", test_y))}
        weight, bias, c, dev_acc = fit_head(emb["train"], y["train"], emb["dev"], y["dev"], len(names))
        from alict_core.models.labels import softmax

        scores = {s: accuracy(softmax(emb[s] @ weight.T + bias), labels, names)
                  for s, labels in (("dev", dev_y), ("test", test_y))}
        target = root / name
        target.mkdir(parents=True, exist_ok=True)
        with atomic_path(target / "head.npz") as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, weight=weight, bias=bias)
        meta = {"name": name, "task": task, "labels": list(names), "encoder": encoder.fingerprint,
                "head": "multinomial logistic regression on mean-pooled MiniLM embeddings", "C": c,
                "n_train": len(train_x), "quick": quick, "seed": SEED, "encode_seconds": round(encode_s, 1),
                "dev": scores["dev"], "test": scores["test"]}
        write_json(target / "meta.json", meta)
        report[name] = {"task": task, **scores}
        log(f"[{name}] C={c} dev={scores['dev']} test={scores['test']} ({encode_s:.0f}s encoding)")
    report.update(evaluate_classic(quick=quick, log=log))
    write_json(root / "accuracy.json", report)
    return root


def evaluate_classic(quick: bool = False, log: Callable[[str], None] = print) -> dict[str, dict]:
    """Test-split accuracy of the classic offline models (VADER, TextBlob, hatesonar, profanity-check)."""
    from alict_core.data.records import TASK_LABELS
    from alict_core.models.registry import get_model

    out: dict[str, dict] = {}
    for name, task in CLASSIC.items():
        test_x, test_y = task_splits(task)["test"]
        if quick:
            test_x, test_y = _subsample(test_x, test_y, QUICK_TRAIN // 2, SEED)
        try:
            model = get_model(name)
            out[name] = {"task": task, "test": accuracy(model.predict_proba(test_x), test_y, TASK_LABELS[task])}
            log(f"[{name}] test={out[name]['test']}")
        except Exception as exc:  # a classic model missing must not stop the build
            out[name] = {"task": task, "error": str(exc)}
            log(f"[{name}] not evaluated: {exc}")
    return out


def accuracies(path: Path | None = None) -> dict[str, dict]:
    """The accuracy report written by the last build ({} when not built)."""
    file = (Path(path) if path else default_path()) / "accuracy.json"
    return read_json(file) if file.exists() else {}
