"""Retrain a model on the original training data mixed with an LC training split (TOSEM / Auto-CheckList loop).

* Embedded MiniLM classifiers: the logistic head is refitted on frozen MiniLM embeddings of the original
  training sentences plus the LC training cases, with the parent's regularisation strength and a fixed seed
  (lbfgs is deterministic: the same inputs give the same weights).
* Hugging Face sequence classifiers: fine-tuned end to end (the paper's settings by default: 1 epoch, batch 16,
  AdamW lr 2e-5), capped at ``max_steps``, seeded, on a GPU when one is present.

The result is a model version (``<parent>@<hash>``) stored with its parent, data and settings.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json, hash_text
from alict_core.common.jsonl import write_json
from alict_core.common.manifest import clean_stale, load_checked, replace_dir, save_checked, staging_dir
from alict_core.harden.export import check_export_test_split, export_settings, read_split
from alict_core.harden.versions import (
    FILES_KEY,
    VERSION_FILE,
    VERSION_NAME,
    content_hashes,
    hf_weights_hash,
    version_dir,
)

Progress = Callable[[int, int, str], None]
UNSEEN_LABEL_BIAS = -30.0  # logit bias of a label the training mix has no example of (probability ~1e-13)


@dataclass(frozen=True)
class RetrainSettings:
    """How to mix and fit. ``lc_share``: share of LC cases in the training mix (None: all of both)."""

    seed: int = 13
    lc_share: float | None = None
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    max_steps: int = 500
    max_original: int | None = None

    def __post_init__(self) -> None:
        if self.lc_share is not None and not 0.0 < self.lc_share < 1.0:
            raise AlictError(f"lc_share must be in (0, 1), got {self.lc_share}")
        for name in ("epochs", "batch_size", "max_steps"):
            if getattr(self, name) < 1:
                raise AlictError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_original is not None and self.max_original < 1:
            raise AlictError(f"max_original must be >= 1, got {self.max_original}")


def training_mix(original: tuple[list[str], list[str]], lc_rows: Sequence[dict[str, Any]],
                 settings: RetrainSettings) -> tuple[list[str], list[str], list[float], dict[str, int]]:
    """(texts, labels, weights, counts): the original data (weight 1, sampled if capped) plus the LC cases.

    An LC case with one expected label adds one row of weight 1; a one-of case ("positive or neutral")
    adds a row per allowed label with weight 1/k, i.e. trains towards a uniform target over them.
    """
    texts, labels = list(original[0]), list(original[1])
    lc: list[tuple[str, str, float]] = []
    n_cases = 0
    for row in lc_rows:
        allowed = row.get("allowed_labels") or ([row["label"]] if row.get("label") else [])
        if allowed:
            n_cases += 1
            lc.extend((row["text"], label, 1.0 / len(allowed)) for label in allowed)
    if not lc_rows:
        raise AlictError("the LC training split is empty: every seed group went to testing (too few seeds, or all "
                         "built from corpus test sentences); export more seeds or other LCs")
    if not lc:
        raise AlictError("the LC training split has no case with an expected label "
                         "(INV, DIR and not-label cases cannot be trained on); choose other LCs")
    keep = len(texts)
    if settings.max_original is not None:
        keep = min(keep, settings.max_original)
    if settings.lc_share is not None:
        keep = min(keep, max(1, round(n_cases * (1 - settings.lc_share) / settings.lc_share)))
    if keep < len(texts):
        idx = sorted(random.Random(settings.seed).sample(range(len(texts)), keep))
        texts, labels = [texts[i] for i in idx], [labels[i] for i in idx]
    counts = {"original": len(texts), "lc": n_cases}
    return ([*texts, *(t for t, _, _ in lc)], [*labels, *(y for _, y, _ in lc)],
            [1.0] * len(texts) + [w for _, _, w in lc], counts)


def original_training_data(task: str) -> tuple[list[str], list[str]]:
    """The task corpus's official training split (SST / HateXplain)."""
    from alict_core.data.splits import task_splits

    return task_splits(task)["train"]


def corpus_test_data(task: str) -> tuple[list[str], list[str]]:
    """The task corpus's official test split: what ``harden evaluate`` reports held-out scores on."""
    from alict_core.data.splits import task_splits

    return task_splits(task)["test"]


def leak_check(export_dir: str | Path, task: str, lc_rows: Sequence[dict[str, Any]],
               heldout: tuple[list[str], list[str]] | None = None) -> dict[str, int]:
    """Refuse (LeakError, with counts) when an LC training case equals, or shares a source sentence with, an
    LC test case or a corpus test sentence; the counts otherwise (all leaks 0)."""
    from alict_core.data.splits import source_split_lookup
    from alict_core.harden.leaks import check_no_leaks

    report = check_no_leaks(lc_rows, read_split(export_dir, "test"), where=f"export {export_dir}",
                            heldout_texts=(heldout or corpus_test_data(task))[0],
                            source_split=source_split_lookup(task))
    return report.to_dict()


def _cached_embeddings(encoder: Any, texts: Sequence[str],
                       progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Encode ``texts``, reusing a plain ``.npy`` cache keyed by encoder fingerprint and texts;
    ``progress(done, total)`` while encoding."""
    from alict_core.common.config import artefact_dir

    folder = artefact_dir("embeddings") / hash_text(str(encoder.fingerprint))
    key = hash_json(list(texts))
    path = folder / f"{key}.npy"

    def read(found: Path) -> np.ndarray:
        cached = np.load(found, allow_pickle=False)
        if cached.shape[0] != len(texts):
            raise ValueError(f"{cached.shape[0]} rows for {len(texts)} texts")
        return cached

    # checked against its manifest: an edited entry (zeros, rows reversed) trained a version under the same name
    cached = load_checked(path, "embeddings", key, read)
    if cached is not None:
        return cached
    emb = np.asarray(encoder.encode(list(texts), progress=progress) if progress else encoder.encode(list(texts)),
                     dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.save(handle, emb, allow_pickle=False)

    save_checked(path, "embeddings", key, len(emb), write)
    return emb


def _version_name(parent: str, parent_fingerprint: str, data_hash: str, original: tuple[list[str], list[str]],
                  settings: RetrainSettings) -> str:
    """``<parent>@<hash of the parent's weights, the LC data, the original training data and the settings>``; a
    version retrained again is named after its first parent (``minilm-sst@<new hash>``: ``minilm-sst@5ca0c2fb@…`` is
    no version name), its own weights in the hash and its parent in its version.json."""
    digest = hash_json({'parent': parent_fingerprint, 'data': data_hash, 'original': hash_json([*original]),
                        'settings': asdict(settings)}, 8)
    stored = VERSION_NAME.match(parent)
    return f"{stored.group('parent') if stored else parent}@{digest}"


def _stage(name: str) -> tuple[Path, Path]:
    """The version's folder and a new staging folder beside it: a sealed ``.<name>.tmp-*`` name with the usual
    permissions (``mkdtemp`` made it, and so every version, private 0700, and its unsealed name was never
    cleaned); those of trainings killed over an hour ago are removed first."""
    target = version_dir(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(target.parent)
    return target, staging_dir(target.parent, f".{target.name}.tmp-")


def _commit(staging: Path, target: Path) -> None:
    replace_dir(staging, target)  # old version or new one, never none (a kill between rmtree and rename was)


def hf_model_folder(model_dir: str | Path) -> Path:
    """``model_dir`` when it is a local Hugging Face model folder (a folder with a ``config.json`` file), else one
    message naming it (a folder of other files was an internal error deep in the tokenizer's loading)."""
    source = Path(model_dir).expanduser()
    if not source.is_dir():
        raise AlictError(f"Hugging Face model folder {source} not found (retraining needs a local copy)")
    if not (source / "config.json").is_file():
        raise AlictError(f"--hf-dir {source} is not a Hugging Face model folder (no config.json): give the folder "
                         "of a local copy of the model (save_pretrained)")
    return source


def check_retrain_parent(parent: str, model_dir: str | Path | None = None, task: str | None = None) -> None:
    """Refuse a parent model that cannot be retrained, before any export or training work (``harden fix``)."""
    if model_dir:
        if not task:
            raise AlictError("--task is required with --hf-dir")
        if not VERSION_NAME.match(f"{parent}@{'0' * 8}"):
            raise AlictError(f"model name {parent!r} cannot name a version: use letters, digits and . _ / - only "
                             "(e.g. --model hf or --model my-bert)")
        hf_model_folder(model_dir)
        return
    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.models.registry import get_model

    if not isinstance(get_model(parent), EmbeddingHeadModel):
        raise AlictError(f"model {parent!r} is not an embedded MiniLM classifier; use a Hugging Face model "
                         "(hf:model_id=...) or one of minilm-sst / minilm-hatexplain")


def retrain_embedded(parent: str, export_dir: str | Path, *, settings: RetrainSettings | None = None,
                     encoder: Any = None, original: tuple[list[str], list[str]] | None = None,
                     heldout: tuple[list[str], list[str]] | None = None,
                     progress: Progress | None = None, min_test_cases: int | None = None) -> str:
    """Refit an embedded classifier's head on original + LC training data; return the new version's name.

    ``original`` defaults to the corpus training split; ``heldout`` (the corpus test split by default) is
    what the leak check, run first, compares the LC training cases with. An LC whose test split is under
    ``min_test_cases`` (default ``guards.MIN_TEST_CASES``) is refused before any training."""
    from sklearn.linear_model import LogisticRegression

    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.models.registry import get_model

    settings = settings or RetrainSettings()
    exported = export_settings(export_dir)  # the user's export is checked before any model is loaded
    lc_rows = read_split(export_dir, "train")  # its rows checked first: a bad row is named before a short split
    check_export_test_split(export_dir, min_test_cases)  # a short test split: refused before the model loads
    model = get_model(parent)
    if not isinstance(model, EmbeddingHeadModel):
        raise AlictError(f"model {parent!r} is not an embedded MiniLM classifier; use a Hugging Face model "
                         "(hf:model_id=...) or one of minilm-sst / minilm-hatexplain")
    task, labels = model.meta["task"], list(model.labels)
    encoder = encoder or model.encoder
    leaks = leak_check(export_dir, task, lc_rows, heldout)
    original = original or original_training_data(task)
    texts, y, weights, counts = training_mix(original, lc_rows, settings)
    unknown = sorted(set(y) - set(labels))
    if unknown:
        raise AlictError(f"training labels {unknown} are not labels of {parent!r} ({labels})")
    name = _version_name(parent, str(getattr(model, "fingerprint", parent)), exported["data_hash"], original,
                         settings)
    if (version_dir(name) / VERSION_FILE).is_file():
        return name  # same parent, data and settings: the version already exists
    steps = 100  # encoding is most of the time: steps 0-90, fitting 90-99, saving 100
    if progress:
        progress(0, steps, f"encoding {len(texts)} training texts")
    distinct = list(dict.fromkeys(texts))
    position = {t: i for i, t in enumerate(distinct)}

    def encoding(done: int, total: int) -> None:
        if progress:
            progress(int(90 * done / max(total, 1)), steps, f"encoding training texts {done:,}/{total:,}")

    emb = _cached_embeddings(encoder, distinct, encoding if progress else None)[[position[t] for t in texts]]
    if progress:
        progress(90, steps, "fitting the head")
    clf = LogisticRegression(C=float(model.meta.get("C", 1.0)), max_iter=2000, random_state=settings.seed)
    clf.fit(emb, np.array([labels.index(v) for v in y]), sample_weight=np.array(weights))
    weight = np.zeros((len(labels), emb.shape[1]), dtype=np.float32)
    bias = np.zeros(len(labels), dtype=np.float32)
    classes = [int(k) for k in clf.classes_]
    if len(classes) == 2 and clf.coef_.shape[0] == 1:
        weight[classes[1]], bias[classes[1]] = clf.coef_[0], clf.intercept_[0]
    else:
        for row, k in enumerate(classes):
            weight[k], bias[k] = clf.coef_[row], clf.intercept_[row]
    bias[[k for k in range(len(labels)) if k not in classes]] = UNSEEN_LABEL_BIAS  # never trained on: never predicted
    target, staging = _stage(name)
    try:
        with open(staging / "head.npz", "wb") as handle:
            np.savez(handle, weight=weight, bias=bias)
        meta = {**model.meta, "name": name, "n_train": len(texts), "seed": settings.seed,
                "head": "multinomial logistic regression on mean-pooled MiniLM embeddings (retrained)"}
        write_json(staging / "meta.json", meta)
        write_json(staging / VERSION_FILE, {**_version_record(name, parent, "embedded", task, labels, exported,
                                                              settings, counts), "leak_check": leaks,
                                            FILES_KEY: content_hashes(staging, "embedded")})
        _commit(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if progress:
        progress(steps, steps, f"saved {name}")
    return name


def _version_record(name: str, parent: str, kind: str, task: str, labels: list[str], exported: dict[str, Any],
                    settings: RetrainSettings, counts: dict[str, int]) -> dict[str, Any]:
    return {"name": name, "parent": parent, "kind": kind, "task": task, "labels": labels,
            "run_id": exported["run_id"], "lcs": exported["lcs"], "data_hash": exported["data_hash"],
            "settings": asdict(settings), "counts": counts,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def retrain_hf(parent: str, model_dir: str | Path, task: str, export_dir: str | Path, *,
               settings: RetrainSettings | None = None, original: tuple[list[str], list[str]] | None = None,
               heldout: tuple[list[str], list[str]] | None = None,
               progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
               min_test_cases: int | None = None) -> str:
    """Fine-tune a Hugging Face sequence classifier (local folder) on original + LC data; return the version name.

    The version records the folder and a hash of its weights, so ``harden evaluate`` compares it with exactly
    the weights it was retrained from (never a hub model of the same name)."""
    settings = settings or RetrainSettings()
    if not VERSION_NAME.match(f"{parent}@{'0' * 8}"):
        raise AlictError(f"model name {parent!r} cannot name a version: use letters, digits and . _ / - only "
                         "(e.g. --model hf or --model my-bert)")
    source = hf_model_folder(model_dir)  # before torch and transformers are imported (seconds)
    exported = export_settings(export_dir)
    lc_rows = read_split(export_dir, "train")  # its rows checked first: a bad row is named before a short split
    check_export_test_split(export_dir, min_test_cases)  # a short test split: refused before any import or load

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from alict_core.models.hf import DEFAULT_LABEL_MAPS
    from alict_core.models.labels import task_labels

    leaks = leak_check(export_dir, task, lc_rows, heldout)
    original = original or original_training_data(task)
    texts, y, weights, counts = training_mix(original, lc_rows, settings)
    random.seed(settings.seed)
    np.random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(str(source), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:  # a damaged or foreign folder: said, not an internal error
        raise AlictError(f"--hf-dir {source} cannot be loaded as a Hugging Face sequence classifier "
                         f"({type(exc).__name__}: {str(exc)[:200]})") from None
    mapping = {k.lower(): v for k, v in DEFAULT_LABEL_MAPS[task].items()}
    native = [str(model.config.id2label.get(i, f"LABEL_{i}")) for i in range(model.config.num_labels)]
    index = {mapping.get(n.lower(), n): i for i, n in enumerate(native)}
    pairs = [(t, index[label], w) for t, label, w in zip(texts, y, weights, strict=True) if label in index]
    if not pairs:
        raise AlictError(f"none of the training labels {sorted(set(y))} is a label of {parent!r} ({native})")
    counts["dropped_unmappable"] = len(texts) - len(pairs)
    parent_weights = hf_weights_hash(source)
    name = _version_name(parent, parent_weights, exported["data_hash"], original, settings)
    if (version_dir(name) / VERSION_FILE).is_file():
        return name
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    order = list(range(len(pairs)))
    steps = min(settings.max_steps, settings.epochs * -(-len(pairs) // settings.batch_size))
    step = 0
    for epoch in range(settings.epochs):
        random.Random(settings.seed + epoch).shuffle(order)
        for start in range(0, len(order), settings.batch_size):
            if step >= steps:
                break
            if should_stop and should_stop():
                raise AlictError(f"retraining cancelled after {step} of {steps} steps; nothing was saved")
            batch = [pairs[i] for i in order[start:start + settings.batch_size]]
            enc = tokenizer([t for t, _, _ in batch], padding=True, truncation=True, max_length=128,
                            return_tensors="pt").to(device)
            logits = model(**enc).logits
            weight = torch.tensor([w for _, _, w in batch], device=device)
            per_row = torch.nn.functional.cross_entropy(logits, torch.tensor([k for _, k, _ in batch], device=device),
                                                        reduction="none")
            loss = (per_row * weight).sum() / weight.sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if progress:
                progress(step, steps, f"step {step}/{steps} loss {float(loss):.3f}")
    model.eval().to("cpu")
    target, staging = _stage(name)
    try:
        model.save_pretrained(str(staging / "model"))
        tokenizer.save_pretrained(str(staging / "model"))
        record = {**_version_record(name, parent, "hf", task, list(task_labels(task)), exported, settings,
                                    {**counts, "steps": step}),
                  "parent_dir": str(source.resolve()), "parent_weights": parent_weights, "leak_check": leaks,
                  FILES_KEY: content_hashes(staging, "hf")}
        write_json(staging / VERSION_FILE, record)
        _commit(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return name
