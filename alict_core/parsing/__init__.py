"""Constituency parsing: a registry of parser backends, batched + cached parsing, productions.

``get_parser("benepar-offline")`` loads the project's own benepar model (built by
``python -m alict_core build parser``); ``"benepar_en3"`` is offered when benepar's pretrained
English model is installed (online users: ``benepar.download("benepar_en3")``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import nltk

from alict_core.caching import LoadOnceCache
from alict_core.errors import ArtefactMissingError
from alict_core.parsing.trees import Production, productions
from alict_core.registry import Registry

__all__ = ["PARSERS", "Parser", "get_parser", "productions", "Production", "DEFAULT_PARSER", "clear_loaded"]

DEFAULT_PARSER = "benepar-offline"


@runtime_checkable
class Parser(Protocol):
    """A loaded constituency parser."""

    name: str
    fingerprint: str

    def parse_batch(
        self, token_lists: list[list[str]], progress: Callable[[int, int], None] | None = None
    ) -> list[nltk.Tree]: ...


PARSERS: Registry[Parser] = Registry("parser")
_LOADED: LoadOnceCache[Parser] = LoadOnceCache("parsers", max_entries=4)


def _offline_parser(path: str | Path | None = None) -> Parser:
    from alict_core import artefacts
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


def get_parser(name: str = DEFAULT_PARSER) -> Parser:
    """The named parser, loaded once per process (a second caller waits for an in-flight load)."""
    PARSERS.entry(name)  # unknown names fail here, listing the valid ones
    return _LOADED.get(name, lambda: PARSERS.create(name))


def clear_loaded() -> None:
    """Forget loaded parsers (tests)."""
    _LOADED.clear()
