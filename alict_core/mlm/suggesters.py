"""Masked-LM word suggesters: batched, whole-word only, the vocabulary head applied at [MASK] positions only."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from alict_core.common.errors import ModelError, load_failure
from alict_core.common.hashing import hash_files, hash_json

MASK = "[MASK]"
Suggestions = list[list[list[tuple[str, float]]]]
_WORD = re.compile(r"^[A-Za-z]+(?:[-'][A-Za-z]+)*$")


@runtime_checkable
class Suggester(Protocol):
    """Fills every ``[MASK]`` of each text with its top-k whole words and their probabilities."""

    name: str
    fingerprint: str

    def suggest(self, masked_texts: list[str], top_k: int = 10) -> Suggestions:
        """Per text, per [MASK] (left to right), a list of (word, probability), best first."""
        ...


def whole_word_ids(tokenizer) -> list[int]:
    """Vocabulary ids that are complete words: no '##' continuation pieces, punctuation, digits or specials.

    For byte-level BPE vocabularies (RoBERTa) only word-initial pieces ('Ġword') count.
    """
    specials = set(tokenizer.all_special_ids)
    vocab = tokenizer.get_vocab()
    byte_bpe = sum(token.startswith("Ġ") for token in vocab) > len(vocab) // 10
    ids = []
    for token, index in vocab.items():
        if index in specials or (byte_bpe and not token.startswith("Ġ")):
            continue
        word = token_word(token)
        if word is not None:
            ids.append(index)
    return sorted(ids)


def token_word(token: str) -> str | None:
    """The whole word a vocabulary piece stands for, or None if it is a sub-word piece / not a word."""
    if token.startswith("##"):
        return None
    if token.startswith(("Ġ", "▁")):
        token = token[1:]
    elif any(ch in token for ch in "Ġ▁"):
        return None
    if len(token) == 1 and token.lower() not in {"a", "i"}:
        return None  # stray letters ("s", "t" from "it's", "don't") are pieces, not words
    return token if _WORD.match(token) else None


MAX_CACHED_TEXTS = 200_000  # masked texts whose suggestions a suggester keeps in memory


class HFMaskedLMSuggester:
    """A Hugging Face masked LM (any fill-mask model) used as a suggester.

    ``masked_texts`` use the literal ``[MASK]`` placeholder, translated to the model's own mask
    token. Texts are tokenised together in length-sorted batches; only the hidden states at the
    mask positions go through the vocabulary head. Results are cached by (fingerprint, text).
    """

    def __init__(self, model: Any, tokenizer: Any, *, name: str, fingerprint: str, batch_size: int = 32,
                 bpe_word_initial: bool | None = None) -> None:
        import torch

        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.fingerprint = fingerprint
        self.batch_size = batch_size
        allowed = whole_word_ids(tokenizer)
        if not allowed:
            raise ModelError(f"masked LM {name!r}: its vocabulary has no whole-word tokens")
        vocab_size = self._vocab_size()
        self._allowed = torch.zeros(vocab_size, dtype=torch.bool)
        self._allowed[[i for i in allowed if i < vocab_size]] = True
        self._words = {i: token_word(t) for t, i in tokenizer.get_vocab().items()}
        self._cache: dict[tuple[str, str], tuple[int, list[list[tuple[str, float]]]]] = {}
        self._lock = threading.RLock()  # shared by sessions: one tokenizer + forward (and cache update) at a time
        self.forward_calls = 0

    def _vocab_size(self) -> int:
        emb = self.model.get_output_embeddings()
        return int(emb.weight.shape[0]) if emb is not None else len(self.tokenizer)

    # -- public ------------------------------------------------------------------------------
    def suggest(self, masked_texts: list[str], top_k: int = 10) -> Suggestions:
        if top_k < 1:
            raise ModelError(f"masked LM {self.name!r}: top_k must be >= 1, got {top_k}")
        with self._lock:
            todo = []
            for text in dict.fromkeys(masked_texts):
                hit = self._cache.get((self.fingerprint, text))
                if hit is None or hit[0] < top_k:
                    todo.append(text)
            if todo:
                if len(self._cache) + len(todo) > MAX_CACHED_TEXTS:  # bounded: start afresh rather than grow
                    self._cache.clear()
                for text, fills in zip(todo, self._compute(todo, top_k), strict=True):
                    self._cache[(self.fingerprint, text)] = (top_k, fills)
            return [[slot[:top_k] for slot in self._cache[(self.fingerprint, text)][1]] for text in masked_texts]

    def clear_cache(self) -> None:
        self._cache.clear()

    def forward_only(self, masked_texts: Sequence[str]) -> int:
        """The raw batched forward (tokenise, encoder, head at the masks) with results discarded;
        returns the number of masks. The benchmark's baseline."""
        import torch

        order = sorted(masked_texts, key=len)
        masks = 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                masks += sum(self._forward(order[start:start + self.batch_size])[1])
        return masks

    # -- internals ---------------------------------------------------------------------------
    def _encode_text(self, text: str) -> str:
        if MASK not in text:
            raise ModelError(f"masked LM {self.name!r}: text has no {MASK} token: {text[:80]!r}")
        return text.replace(MASK, self.tokenizer.mask_token)

    def _forward(self, texts: list[str]):

        enc = self.tokenizer([self._encode_text(t) for t in texts], padding=True, truncation=True,
                             max_length=256, return_tensors="pt")
        is_mask = enc["input_ids"] == self.tokenizer.mask_token_id
        counts = is_mask.sum(dim=1).tolist()
        for text, count in zip(texts, counts, strict=True):
            if count != text.count(MASK):
                raise ModelError(f"masked LM {self.name!r}: lost a mask token while tokenising {text[:80]!r}")
        positions = is_mask.nonzero(as_tuple=True)
        self.forward_calls += 1
        logits = head_at_positions(self.model, dict(enc), positions)
        return logits, counts

    def _compute(self, texts: list[str], top_k: int) -> list[list[list[tuple[str, float]]]]:
        """Top-k whole words per mask, computed on each batch's stacked mask logits at once."""
        import torch

        k = min(top_k, int(self._allowed.sum()))
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        results: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                logits, counts = self._forward([texts[i] for i in idx])
                logits = logits.float()
                log_norm = torch.logsumexp(logits, dim=-1, keepdim=True)  # softmax over the full vocabulary
                allowed = self._allowed[: logits.shape[-1]]
                values, indices = logits.masked_fill_(~allowed, float("-inf")).topk(k, dim=-1)
                probs = (values - log_norm).exp().tolist()
                indices = indices.tolist()
                row = 0
                for i, count in zip(idx, counts, strict=True):
                    results[i] = [[(self._words[w], p) for w, p in zip(indices[r], probs[r], strict=True)]
                                  for r in range(row, row + count)]
                    row += count
        return results


def head_at_positions(model: Any, encoded: dict, positions) -> Any:
    """Logits of the model's vocabulary head at ``positions`` only (falls back to a full forward)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    head = next((getattr(model, attr) for attr in ("cls", "lm_head") if hasattr(model, attr)), None)
    if base is not None and head is not None:
        hidden = base(**encoded).last_hidden_state
        return head(hidden[positions[0], positions[1]])
    return model(**encoded).logits[positions[0], positions[1]]


def load_hf_suggester(model: str, *, name: str | None = None, batch_size: int = 32,
                      local_files_only: bool | None = None,
                      loader: Callable[..., Any] | None = None) -> HFMaskedLMSuggester:
    """Any Hugging Face fill-mask model by hub id (needs internet once) or local folder."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    path = Path(model).expanduser()
    is_local = path.is_dir()
    if local_files_only is None:
        local_files_only = is_local
    if is_local and not (path / "config.json").is_file():  # was the library's tokenizer-conversion advice
        raise ModelError(f"could not load masked LM from local folder {path}: it is not a model folder (no "
                         "config.json); give a Hugging Face model folder or hub id")
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path) if is_local else model, local_files_only=local_files_only)
        mlm = AutoModelForMaskedLM.from_pretrained(str(path) if is_local else model, local_files_only=local_files_only)
    except Exception as exc:  # noqa: BLE001 - any loading failure becomes one clear message
        where = (f"local folder {path}" if is_local
                 else f"Hugging Face hub id {model!r} (needs internet or a cached copy)")
        raise ModelError(f"could not load masked LM from {where}: {load_failure(exc)}") from exc
    finally:
        hf_logging.set_verbosity(level)
    if tokenizer.mask_token is None:
        raise ModelError(f"model {model!r} has no mask token; it is not a fill-mask model")
    return HFMaskedLMSuggester(mlm, tokenizer, name=name or f"hf:{model}", fingerprint=_hf_fingerprint(model, path),
                               batch_size=batch_size)


def _hf_fingerprint(model: str, path: Path) -> str:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in {".json", ".txt"} and p.is_file())
        weights = sorted(p for p in path.iterdir() if p.suffix in {".safetensors", ".bin"})
        sizes = [(p.name, p.stat().st_size) for p in weights]
        return hash_json({"path": str(path.resolve()), "files": hash_files(files) if files else "", "weights": sizes})
    return hash_json({"hub": model})


def load_minilm_suggester(path: str | Path | None = None, *, batch_size: int = 32) -> HFMaskedLMSuggester:
    """The embedded default: MiniLM-L6 with the MLM head built by ``alict build mlm``."""
    from alict_core.common.jsonl import read_json
    from alict_core.mlm.minilm import WEIGHTS_FILE, load_trained_mlm
    from alict_core.models import artefacts

    folder = Path(path) if path else artefacts.require("mlm").path
    model, tokenizer = load_trained_mlm(folder)
    meta = read_json(folder / "meta.json")
    fingerprint = hash_json({"minilm": hash_files([folder / WEIGHTS_FILE]), "base": meta.get("base_fingerprint")})
    return HFMaskedLMSuggester(model, tokenizer, name="minilm-offline", fingerprint=fingerprint, batch_size=batch_size)
