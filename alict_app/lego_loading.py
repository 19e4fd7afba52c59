"""The Adjunct trees page's first open in a server: what it loads (once; every session then shares it), a head start
in a background thread, and what the status box (`loading_box`) names as loading meanwhile.

The page needs spaCy's dependency parser (picking full sentences, finding adjuncts), spaCy's tagger, WordNet and
lemminflect (synonym mutations) and its judge and models under test: 9-16 s on two loaded cores, which a user saw
as a page that stopped after its title. Once the page has its sentences, the tagger, WordNet and the models load in a
thread (``start_tools_warmup``) while it draws its menus; it waits for the tagger and WordNet before it builds a tree
(``wait_for_tools``), and a model it asks for meanwhile comes from that thread's load (the app's cache), so nothing
loads twice.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from alict_app import backends, loading_box
from alict_app.formatting import literal

log = logging.getLogger(__name__)

TOOLS = "tools"  # the tagger, WordNet and lemminflect
_lock = threading.Lock()
_warmup: threading.Thread | None = None
_tools_tried = threading.Event()  # set once the warm-up thread has tried the tools (its models may still load)
_loaded: set[str] = set()  # "tools", "samples:<task>", "model:<registry name>": what this process loaded (or tried)


def mark(what: str) -> None:
    with _lock:
        _loaded.add(what)


def is_loaded(what: str) -> bool:
    with _lock:
        return what in _loaded


def model(name: str) -> Any:
    """The registered model ``name`` (``backends.model``: once per process), recorded as tried for the page (one
    that cannot load says so on the page on every run, not in a status box each time)."""
    try:
        return backends.model(name)
    finally:
        mark(f"model:{name}")


def pending(task: str, model_names: list[str]) -> list[str]:
    """What the page's next run loads first (plain words), [] when this server holds it all."""
    what = []
    if not is_loaded(f"samples:{task}"):
        what.append("spaCy's dependency parser and the corpus's full sentences")
    if not is_loaded(TOOLS):
        what.append("spaCy's tagger and WordNet")
    models = [name for name in model_names if not is_loaded(f"model:{name}")]
    if models:
        # a status label draws Markdown: a user model's display name is drawn as itself (pass 37)
        what.append(f"the model{'s' if len(models) > 1 else ''} {', '.join(literal(name) for name in models)}")
    return what


def dependency_parser() -> Any:
    """spaCy's dependency pipeline (the core's, once per process): picking full sentences and finding adjuncts."""
    from alict_core.data.nlp import get_dependency_nlp

    return get_dependency_nlp()


def _load_tools() -> None:
    """spaCy's tagger, WordNet's synsets and lemminflect, through the calls the tree builder makes."""
    from alict_core.common import imports
    from alict_core.data.nlp import get_nlp
    from alict_core.lego.lexicon import inflected_synonyms

    imports.spacy()  # the first import under the import lock (spaCy imports torch)
    get_nlp()
    inflected_synonyms("films", "film", "NOUN", "NNS")  # reads WordNet's synsets and imports lemminflect
    mark(TOOLS)


def _warm(model_names: list[str]) -> None:
    for what, load in [("the tagger and WordNet", _load_tools),
                       *((f"model {name}", _model_loader(name)) for name in model_names)]:
        try:
            load()
        except Exception as exc:  # noqa: BLE001 - a head start only: the page loads it again and shows the error
            log.warning("loading %s in the background failed: %s", what, exc)
        finally:
            _tools_tried.set()


def _model_loader(name: str) -> Callable[[], Any]:
    return lambda: model(name)  # the app's cache: the page asking meanwhile waits for this load


def start_tools_warmup(model_names: list[str]) -> None:
    """Load the tagger, WordNet and ``model_names`` in a background thread, unless loaded or loading already.
    (Streamlit logs "missing ScriptRunContext" for this thread: the caches' spinners have no page to draw on.)"""
    global _warmup
    wanted = [name for name in model_names if not is_loaded(f"model:{name}")]
    tools = is_loaded(TOOLS)
    with _lock:
        if (tools and not wanted) or (_warmup is not None and _warmup.is_alive()):
            return
        _tools_tried.clear()
        _warmup = threading.Thread(target=_warm, args=(wanted,), name="alict-lego-warmup", daemon=True)
        _warmup.start()


def wait_for_tools() -> None:
    """Wait until the background thread (if one runs) has loaded the tagger and WordNet, so the page never reads
    WordNet beside it (its models go on loading; the page asking for one waits for that load in the app's cache)."""
    with _lock:
        thread = _warmup
    if thread is not None and thread.is_alive():
        _tools_tried.wait()


def status_box(task: str, model_names: list[str], st: Any) -> Any:
    """A status box naming what this first open loads (None when nothing: a warm page draws no box)."""
    return loading_box.open_box(st, pending(task, model_names), "10–20 s")
