"""Train the embedded offline classifiers: MiniLM embeddings + softmax heads (npz/JSON, no pickle).

``alict build models`` trains "minilm-sst" (SST sentences, 3 classes) and "minilm-hatexplain"
(HateXplain, 2 classes), picks the L2 strength on the dev split, and records dev/test accuracy and
macro-F1 of these and of the classic offline models in ``accuracy.json`` (and the manifest's figures).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from alict_core.common.errors import ModelError
from alict_core.common.jsonl import write_json
from alict_core.data.splits import task_splits
from alict_core.tasks import HATE_SPEECH, SENTIMENT, TASKS

EMBEDDED = {task.offline_model: name for name, task in TASKS.items()}
CLASSIC = {"vader": SENTIMENT.name, "textblob": SENTIMENT.name, "hatesonar": HATE_SPEECH.name,
           "profanity-check": HATE_SPEECH.name}
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def subsample(texts: list[str], labels: list[str], n: int | None, seed: int) -> tuple[list[str], list[str]]:
    """A seeded subsample of ``n`` pairs in corpus order (all of them when ``n`` is None or large)."""
    if n is None or len(texts) <= n:
        return texts, labels
    idx = sorted(random.Random(seed).sample(range(len(texts)), n))
    return [texts[i] for i in idx], [labels[i] for i in idx]


def fit_head(x_train: np.ndarray, y_train: np.ndarray, x_dev: np.ndarray, y_dev: np.ndarray, n_labels: int,
             seed: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Multinomial logistic regression; C chosen by dev accuracy. Returns (W (k, d), b (k), C, dev acc)."""
    from sklearn.linear_model import LogisticRegression

    best: tuple[float, float, Any] | None = None
    for c in C_GRID:
        clf = LogisticRegression(C=c, max_iter=2000, random_state=seed)
        clf.fit(x_train, y_train)
        acc = float((clf.predict(x_dev) == y_dev).mean())
        if best is None or acc > best[0]:
            best = (acc, c, clf)
    assert best is not None
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
    return {"accuracy": round(float((pred == gold).mean()), 4), "macro_f1": round(float(np.mean(f1s)), 4),
            "n": int(len(gold))}


def train(out: Path, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None,
          log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train both embedded heads into the (staging) folder ``out``; returns the manifest info."""
    import torch

    from alict_core.data.records import TASK_LABELS
    from alict_core.models.encoder import MiniLMEncoder
    from alict_core.models.labels import softmax

    seed = cfg["seed"]
    torch.set_num_threads(cfg["threads"])
    encoder = MiniLMEncoder()
    report: dict[str, dict] = {}
    for done, (name, task) in enumerate(EMBEDDED.items()):
        names = TASK_LABELS[task]
        splits = task_splits(task)
        data = {split: subsample(*splits[split], cfg[split], seed) for split in ("train", "dev", "test")}
        log(f"classifiers: [{name}] encoding {', '.join(f'{len(v[0])} {k}' for k, v in data.items())} texts")
        emb = {split: encoder.encode(texts) for split, (texts, _) in data.items()}
        y = {split: np.array([names.index(v) for v in labels]) for split, (_, labels) in data.items()}
        weight, bias, c, _ = fit_head(emb["train"], y["train"], emb["dev"], y["dev"], len(names), seed)
        scores = {split: accuracy(softmax(emb[split] @ weight.T + bias), data[split][1], names)
                  for split in ("dev", "test")}
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        with open(target / "head.npz", "wb") as handle:
            np.savez(handle, weight=weight, bias=bias)
        write_json(target / "meta.json", {
            "name": name, "task": task, "labels": list(names), "encoder": encoder.fingerprint,
            "head": "multinomial logistic regression on mean-pooled MiniLM embeddings", "C": c,
            "n_train": len(data["train"][0]), "seed": seed, "dev": scores["dev"], "test": scores["test"]})
        report[name] = {"task": task, **scores}
        log(f"classifiers: [{name}] C={c} dev={scores['dev']} test={scores['test']}")
        if progress:
            progress(done + 1, len(EMBEDDED))
    if cfg["classic"]:
        report.update(evaluate_classic(cfg["test"], seed, log))
    write_json(out / "accuracy.json", report)
    figures = {name: {"task": row["task"], **{k: row[k] for k in ("dev", "test", "error") if k in row}}
               for name, row in report.items()}
    return {"steps": None, "seed": seed, "figures": figures,
            "inputs": {"encoder": encoder.fingerprint, "settings": cfg}}


def evaluate_classic(n_test: int | None, seed: int, log: Callable[[str], None] = print) -> dict[str, dict]:
    """Test-split accuracy of the classic offline models (VADER, TextBlob, hatesonar, profanity-check)."""
    from alict_core.data.records import TASK_LABELS
    from alict_core.models.registry import get_model

    out: dict[str, dict] = {}
    for name, task in CLASSIC.items():
        test_x, test_y = subsample(*task_splits(task)["test"], n_test, seed)
        try:
            model = get_model(name)
        except (ImportError, ModelError) as exc:  # an optional package missing: recorded and shown, the build goes on
            out[name] = {"task": task, "error": f"{type(exc).__name__}: {exc}"}
            log(f"classifiers: [{name}] not evaluated: {exc}")
            continue
        out[name] = {"task": task, "test": accuracy(model.predict_proba(test_x), test_y, TASK_LABELS[task])}
        log(f"classifiers: [{name}] test={out[name]['test']}")
    return out
