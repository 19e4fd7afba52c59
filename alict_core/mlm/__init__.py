"""Masked-LM suggesters by name (registry ``SUGGESTERS``) for the syntax-based expansion.

Names: ``minilm-offline`` (default: embedded MiniLM-L6 + the head built by ``python -m alict_core
build mlm``), ``hf`` (any fill-mask model: ``get_suggester("hf", model="<hub id or folder>")``),
and the menu shortcuts ``bert-base-uncased`` / ``roberta-base`` (need internet or a cached copy).
``get_suggester()`` loads the resolved default (``alict_core.models.defaults``: the paper's
bert-base-uncased when it is cached or downloadable).
"""

from __future__ import annotations

import functools
from typing import Any

from alict_core.common import imports
from alict_core.common.caching import LoadOnceCache
from alict_core.common.hashing import hash_json
from alict_core.common.registry import Registry
from alict_core.mlm.suggesters import MASK, HFMaskedLMSuggester, Suggester, load_hf_suggester, load_minilm_suggester

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


def default_suggester() -> tuple[str, dict[str, Any]]:
    """(registry name, arguments) of the resolved default masked LM (``model_defaults``: bert-base-uncased
    from the local HF cache or the hub when available, else minilm-offline; ``ALICT_DEFAULT_MLM`` pins it)."""
    from alict_core.models import defaults as model_defaults

    entry = model_defaults.resolved_defaults()["mlm"]
    model_defaults.require_available(entry, "mlm")
    if entry["kind"] == "offline":
        return str(entry["name"]), {}
    source = entry.get("path") or entry.get("model_id") or entry["name"]
    return "hf", {"model": str(source), "name": str(entry["name"])}


def get_suggester(name: str | None = None, **kw: Any) -> Suggester:
    """The suggester ``name`` built with ``kw`` (default: ``default_suggester()``); loaded once per process
    (per-key lock, bounded) and reused. The offline MiniLM head is keyed on its artefact too, so a better
    or rebuilt one (full > quick > legacy) is loaded when it lands."""
    if name is None:
        name, default_kw = default_suggester()
        kw = {**default_kw, **kw}
    factory = SUGGESTERS.entry(name).factory  # unknown names fail here, listing the valid ones
    identity = ""
    if name == DEFAULT_SUGGESTER and not kw.get("path"):
        from alict_core.models.defaults import artefact_identity

        identity = artefact_identity("mlm")
    key = hash_json({"name": name, "kw": kw, "artefact": identity})  # factory(**kw): kw may hold a "name"
    return _LOADED.get(key, lambda: _first_import_then(factory, kw))


def load_default_suggester() -> Suggester:
    """The default masked-LM suggester (bert-base-uncased from the cache / hub, or the offline MiniLM head)."""
    from alict_core.models.defaults import require_available, resolved_defaults

    entry = resolved_defaults()["mlm"]
    require_available(entry, "mlm")
    if entry["kind"] == "offline":
        return get_suggester(entry["name"])
    return _hf_suggester(str(entry.get("path") or entry.get("model_id") or entry["name"]), entry["name"])


@functools.lru_cache(maxsize=2)
def _hf_suggester(source: str, name: str) -> Suggester:
    return load_hf_suggester(source, name=name)


def menu_names() -> list[str]:
    """Suggester names for the UI menu (default first)."""
    return SUGGESTERS.names(menu=True)


__all__ = ["MASK", "SUGGESTERS", "DEFAULT_SUGGESTER", "HFMaskedLMSuggester", "Suggester", "default_suggester",
           "get_suggester", "load_default_suggester", "load_hf_suggester", "load_minilm_suggester", "menu_names"]


def _first_import_then(factory: Any, kw: dict[str, Any]) -> Suggester:
    """``factory(**kw)`` after the first import of the transformers code, made under the import lock (a warm-up
    thread of the app may be importing it at the same moment)."""
    imports.model_code()
    return factory(**kw)
