"""Constituency parsing: a registry of parser backends, batched + cached parsing, productions.

``get_parser("benepar-offline")`` loads the project's own benepar model (built by
``python -m alict_core build parser``); ``"benepar_en3"`` is offered when benepar's pretrained
English model is installed (online users: ``benepar.download("benepar_en3")``). ``get_parser()``
loads the resolved default (``alict_core.models.defaults``: the paper's benepar_en3 when available).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import nltk

from alict_core.common import imports
from alict_core.common.caching import LoadOnceCache
from alict_core.common.errors import ArtefactMissingError
from alict_core.common.registry import Registry
from alict_core.parsing.trees import Production, productions

__all__ = ["PARSERS", "Parser", "ReadOnlyParses", "get_parser", "productions", "Production", "DEFAULT_PARSER",
           "clear_loaded", "default_parser_name"]

DEFAULT_PARSER = "benepar-offline"


@runtime_checkable
class Parser(Protocol):
    """A loaded constituency parser."""

    name: str
    fingerprint: str

    def parse_batch(
        self, token_lists: list[list[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[nltk.Tree]: ...


class ReadOnlyParses:
    """A parser that reads the shared parse cache but never adds to it: what a page view parses (typed sentences,
    seeds of a spec edited in the browser) would otherwise grow the cache on disk and in memory without bound."""

    def __init__(self, parser: Parser) -> None:
        self._parser = parser
        self.name = parser.name
        self.fingerprint = parser.fingerprint

    def parse_batch(
        self, token_lists: list[list[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[nltk.Tree]:
        """The parser's trees; a parser with a cache (``BeneparParser``) is told not to remember new ones."""
        if hasattr(self._parser, "cache"):
            return self._parser.parse_batch(token_lists, progress, remember=False)  # type: ignore[call-arg]
        if progress is None:  # a parser of the bare protocol (a test's fake) may take the token lists only
            return self._parser.parse_batch(token_lists)
        return self._parser.parse_batch(token_lists, progress)


PARSERS: Registry[Parser] = Registry("parser")
_LOADED: LoadOnceCache[Parser] = LoadOnceCache("parsers", max_entries=4)


def _offline_parser(path: str | Path | None = None) -> Parser:
    from alict_core.models import artefacts
    from alict_core.parsing.benepar_backend import BeneparParser

    model_dir = Path(path) if path else artefacts.require("parser").path
    if not (model_dir / "benepar_model.bin").exists():
        raise ArtefactMissingError(f"no offline parser in {model_dir}; fix: `alict build parser --profile quick`")
    return BeneparParser(DEFAULT_PARSER, model_dir)


def _en3_location() -> str | None:
    """Where benepar's pretrained model is installed (found as benepar finds it, without importing benepar)."""
    try:
        return str(nltk.data.find("models/benepar_en3").path)
    except (ImportError, LookupError, OSError, ValueError):  # not installed, or nltk refuses the path
        return None


def _en3_parser() -> Parser:
    from alict_core.parsing.benepar_backend import BeneparParser

    location = _en3_location()
    if location is None:
        raise ArtefactMissingError(
            "benepar_en3 is not installed; when online run "
            "`python -c \"import benepar; benepar.download('benepar_en3')\"`"
        )
    return BeneparParser("benepar_en3", location)


PARSERS.add(DEFAULT_PARSER, _offline_parser,
            "benepar ChartParser on frozen MiniLM features, trained on the PTB sample by this project", offline=True)
if _en3_location() is not None:
    PARSERS.add("benepar_en3", _en3_parser, "benepar's pretrained English model (T5-small encoder)", offline=False)


_REGISTER_LOCK = threading.Lock()


def _first_import_then_create(name: str) -> Parser:
    """The parser ``name``, built after the first import of the transformers code (under the import lock: a warm-up
    thread of the app may be importing it at the same moment) and of spaCy (benepar imports it; a warm-up thread
    importing spaCy beside it left "partially initialized module 'spacy'" in a fresh run)."""
    imports.model_code()
    imports.spacy()
    return PARSERS.create(name)


def default_parser_name() -> str:
    """The resolved default parser (``model_defaults``: benepar_en3 when installed or downloadable, else
    benepar-offline; ``ALICT_DEFAULT_PARSER`` pins it), registered under its name when it is not yet."""
    from alict_core.models import defaults as model_defaults

    entry = model_defaults.resolved_defaults()["parser"]
    name = str(entry["name"])
    with _REGISTER_LOCK:
        if name not in PARSERS:  # benepar_en3 found after import, downloadable, or a pinned folder
            PARSERS.add(name, load_default_parser, f"the default parser ({entry['source']})", offline=False)
    return name


def load_default_parser() -> Parser:
    """The default parser, loaded (benepar_en3 from its folder, or the project's offline parser)."""
    from alict_core.models.defaults import require_available, resolved_defaults

    entry = resolved_defaults()["parser"]
    require_available(entry, "parser")
    if entry["kind"] == "offline":
        return get_parser(entry["name"])
    from alict_core.parsing.benepar_backend import BeneparParser

    if "path" not in entry:  # online and not installed: fetch it once
        import benepar

        benepar.download(entry["name"], quiet=True)
    return BeneparParser(entry["name"], entry.get("path") or entry["name"])


def get_parser(name: str | None = None) -> Parser:
    """The named parser (default: ``default_parser_name()``), loaded once per process (a second caller
    waits for an in-flight load). The offline parser is keyed on its artefact too, so a better or
    rebuilt one (full > quick > legacy) is loaded when it lands."""
    if name is None:
        name = default_parser_name()
    PARSERS.entry(name)  # unknown names fail here, listing the valid ones
    key = name
    if name == DEFAULT_PARSER:
        from alict_core.models.defaults import artefact_identity

        key = f"{name}@{artefact_identity('parser')}"
    return _LOADED.get(key, lambda: _first_import_then_create(name))


def clear_loaded() -> None:
    """Forget loaded parsers (tests)."""
    _LOADED.clear()
