"""Masked-LM suggesters by name (registry ``SUGGESTERS``) for the syntax-based expansion.

Names: ``minilm-offline`` (default: embedded MiniLM-L6 + the head built by ``python -m alict_core
build mlm``), ``hf`` (any fill-mask model: ``get_suggester("hf", model="<hub id or folder>")``),
and the menu shortcuts ``bert-base-uncased`` / ``roberta-base`` (need internet or a cached copy).
"""

from __future__ import annotations

from typing import Any

from alict_core.caching import LoadOnceCache
from alict_core.hashing import hash_json
from alict_core.mlm.suggesters import MASK, HFMaskedLMSuggester, Suggester, load_hf_suggester, load_minilm_suggester
from alict_core.registry import Registry

SUGGESTERS: Registry[Suggester] = Registry("masked-LM suggester")
SUGGESTERS.add("minilm-offline", load_minilm_suggester,
               "MiniLM-L6 (offline, embedded) + the project's MLM head", menu=True, offline=True)
SUGGESTERS.add("bert-base-uncased", lambda **kw: load_hf_suggester("bert-base-uncased", name="bert-base-uncased", **kw),
               "BERT base uncased from the Hugging Face hub (needs internet once)", menu=True, offline=False)
SUGGESTERS.add("roberta-base", lambda **kw: load_hf_suggester("roberta-base", name="roberta-base", **kw),
               "RoBERTa base from the Hugging Face hub (needs internet once)", menu=True, offline=False)
SUGGESTERS.add("hf", load_hf_suggester, "any fill-mask model: model=<hub id or local folder>",
               menu=False, offline=False)

DEFAULT_SUGGESTER = "minilm-offline"
_LOADED: LoadOnceCache[Suggester] = LoadOnceCache("suggesters", max_entries=4)


def get_suggester(name: str = DEFAULT_SUGGESTER, **kw: Any) -> Suggester:
    """The suggester ``name`` built with ``kw``; loaded once per process (per-key lock, bounded) and reused."""
    SUGGESTERS.entry(name)  # unknown names fail here, listing the valid ones
    key = hash_json({"name": name, "kw": kw})
    return _LOADED.get(key, lambda: SUGGESTERS.create(name, **kw))


def menu_names() -> list[str]:
    """Suggester names for the UI menu (default first)."""
    return SUGGESTERS.names(menu=True)


__all__ = ["MASK", "SUGGESTERS", "DEFAULT_SUGGESTER", "HFMaskedLMSuggester", "Suggester", "get_suggester",
           "load_hf_suggester", "load_minilm_suggester", "menu_names"]
