"""Model access for the app: the core's backend registries, loaded once per process, and their build status.

``st.cache_resource`` holds process-wide singletons (parser, masked LM, models, reference grammar): each
is loaded once per process and shared by every browser session. Modules that import torch, spaCy or
benepar are imported inside the functions, so the first paint stays fast.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

from alict_app.formatting import without_server_paths
from alict_core.common.errors import AlictError, ArtefactMissingError
from alict_core.common.registry import Registry

if TYPE_CHECKING:
    from alict_core.models.refs import ModelRef

BUILD_HINT = {
    "parser": "build it with `python -m alict_core build parser`",
    "mlm": "build it with `python -m alict_core build mlm`",
    "models": "build them with `python -m alict_core build models`",
}
STATUS_TARGETS = (("models", "model"), ("mlm", "mlm"), ("parser", "parser"))

_loaded_lock = threading.Lock()
LOADED: dict[str, dict[str, Any]] = {}  # "kind:name" → {"kind","name","seconds"}: what this process holds

log = logging.getLogger(__name__)


def mark_loaded(kind: str, name: str, started: float, artefact: str = "") -> None:
    """Record that this process now holds ``kind:name`` (shown in the sidebar), and from which artefact."""
    with _loaded_lock:
        LOADED[f"{kind}:{name}"] = {"kind": kind, "name": name, "seconds": round(time.perf_counter() - started, 2),
                                    "profile": artefact.split(":", 1)[0] if artefact else None}


def is_loaded(kind: str, name: str) -> bool:
    """Whether this process holds ``kind:name`` already (loaded by any session)."""
    with _loaded_lock:
        return f"{kind}:{name}" in LOADED


# ---------------------------------------------------------------- registries
def registry(kind: str) -> Registry[Any]:
    """The core registry of a backend kind: parser, mlm, model, explainer."""
    if kind == "parser":
        from alict_core.parsing import PARSERS

        return PARSERS
    if kind == "mlm":
        from alict_core.mlm import SUGGESTERS

        return SUGGESTERS
    if kind == "model":
        from alict_core.models import MODELS

        return MODELS
    if kind == "explainer":
        from alict_core.explain import EXPLAINERS

        return EXPLAINERS
    raise AlictError(f"unknown backend kind {kind!r}; valid kinds: parser, mlm, model, explainer")


def backend_names(kind: str, **tags: Any) -> list[str]:
    """Names registered for a backend kind (optionally filtered by tags); for parsers and masked LMs the
    resolved default (``model_defaults``: the paper's model when available) comes first, so menus pick it."""
    default = default_backend(kind)  # first: it may register the default
    names = registry(kind).names(**tags)
    return [default, *(n for n in names if n != default)] if default in names else names


def default_backend(kind: str) -> str | None:
    """The registered name of the resolved default parser / masked LM (None for other kinds)."""
    if kind == "parser":
        from alict_core.parsing import default_parser_name

        return default_parser_name()  # registers benepar_en3 when it was found after import
    if kind == "mlm":
        from alict_core.models.defaults import resolved_defaults

        return str(resolved_defaults()["mlm"]["name"])
    return None


def unavailable_reason(kind: str, name: str, local_defaults: dict[str, str] | None = None) -> str | None:
    """Why ``kind:name`` cannot load here (one line), or None when it can.

    Offline backends always can (a missing build says how to build it when used). An online one (a Hugging Face
    hub model, benepar's pretrained parser) can when it is the resolved default, is in the local cache, or the hub
    answers; offline (``ALICT_OFFLINE``/``HF_HUB_OFFLINE`` or no network) and not cached it cannot.
    ``local_defaults``: ``default_classifier_folders()`` when the caller has it already (one look-up per menu)."""
    from alict_core.models import defaults as model_defaults

    tags = backend_tags(kind, name)
    if tags.get("offline", True) or name == default_backend(kind):
        return None
    if kind == "model" and name in (default_classifier_folders() if local_defaults is None else local_defaults):
        return None
    if kind == "parser":
        if model_defaults.benepar_location(name) is not None:
            return None
        if model_defaults.reachable(model_defaults.BENEPAR_HOST):
            return None
        return f"{name}: benepar's pretrained model is not installed in the NLTK data folders and cannot be downloaded"
    if tags.get("kind", "hf") not in ("hf", None) and kind == "model":
        return None  # endpoints and adapters take their own arguments (added on the Run page)
    if model_defaults.cached_snapshot(name) is not None or model_defaults.reachable(model_defaults.HUB_HOST):
        return None
    why = "offline mode is on" if model_defaults.offline_forced() else "the hub cannot be reached"
    # no server path: the text is shown in the browser (the server's admin finds the cache by HF_HOME)
    return f"{name}: a Hugging Face hub model not in the server's Hugging Face cache, and {why}"


def loadable_names(kind: str, **tags: Any) -> tuple[list[str], dict[str, str]]:
    """``backend_names`` split into the names that can load here and {name: why not} of the others (for menus:
    offer the first, say why the others are left out)."""
    ok, left_out = [], {}
    local = default_classifier_folders() if kind == "model" else {}
    for name in backend_names(kind, **tags):
        reason = unavailable_reason(kind, name, local)
        if reason is None:
            ok.append(name)
        else:
            left_out[name] = reason
    return ok, left_out


def left_out_help(left_out: dict[str, str], base: str = "") -> str:
    """Help text naming the menu entries left out and why."""
    if not left_out:
        return base
    lines = "\n".join(f"- {without_server_paths(reason)}" for reason in left_out.values())  # shown in the browser
    return f"{base}\n\nNot offered (they cannot load here):\n{lines}".strip()


def backend_description(kind: str, name: str) -> str:
    try:
        return registry(kind).entry(name).description
    except AlictError:
        return ""


def backend_tags(kind: str, name: str) -> dict[str, Any]:
    try:
        return dict(registry(kind).entry(name).tags)
    except AlictError:
        return {}


# ---------------------------------------------------------------- loaded once per process
OFFLINE_ARTEFACT = {("parser", "benepar-offline"): "parser", ("mlm", "minilm-offline"): "mlm"}


def artefact_key(kind: str, name: str) -> str:
    """Which built artefact backs ``kind:name`` now ("" for models not built by this project).

    The loaders below are cached on it: when a better profile lands (full > quick > legacy) or a build
    replaces the one in use, the next render loads the new artefact (the old entry ages out of the cache).
    """
    target = OFFLINE_ARTEFACT.get((kind, name))
    if kind == "model" and backend_tags("model", name).get("kind") == "embedded":
        target = "classifiers"
    if target is None:
        return ""
    from alict_core.models.defaults import artefact_identity

    return artefact_identity(target)


def build_note(target: str) -> str:
    """How the missing ``target`` is being built: the running build's step and ETA, or the command to run."""
    from alict_core.models import artefacts

    for row in artefacts.build_progress():
        if row.get("target") == target:
            step, total, eta = row.get("step"), row.get("total"), row.get("eta_seconds")
            where = f"step {step}/{total}" if total else "preparing data"
            when = f", about {max(1, round(eta / 60))} min left" if eta is not None and total else ""
            return f"it is being built now ({row.get('profile')} profile, {where}{when}); this page works when it lands"
    return ("no build is running: `make run` builds it in the background, or "
            "`python -m alict_core build missing --profile quick`")


def _explained(target: str | None, load: Callable[[], Any]) -> Any:
    """``load()``, with a missing offline artefact's error saying how it is being built."""
    try:
        return load()
    except ArtefactMissingError as exc:
        if target is None:
            raise
        raise ArtefactMissingError(f"{exc} — {build_note(target)}") from None


def parser(name: str) -> Any:
    """The parser ``name``, loaded once per process per artefact (see ``artefact_key``)."""
    return _explained(OFFLINE_ARTEFACT.get(("parser", name)), lambda: _parser(name, artefact_key("parser", name)))


def page_parser(name: str) -> Any:
    """The parser ``name`` for a page view: it reads the shared parse cache and adds nothing to it (a browser user's
    typed sentences and edited specs would grow it without bound)."""
    from alict_core.parsing import ReadOnlyParses

    return ReadOnlyParses(parser(name))


@st.cache_resource(show_spinner="Loading the parser (once per process) …", max_entries=4)
def _parser(name: str, artefact: str) -> Any:
    from alict_core.parsing import get_parser

    started = time.perf_counter()
    value = get_parser(name)  # the core cache is keyed on the same artefact
    mark_loaded("parser", name, started, artefact)
    return value


def suggester(name: str) -> Any:
    """The masked-LM suggester ``name``, loaded once per process per artefact (see ``artefact_key``)."""
    return _explained(OFFLINE_ARTEFACT.get(("mlm", name)), lambda: _suggester(name, artefact_key("mlm", name)))


@st.cache_resource(show_spinner="Loading the masked language model (once per process) …", max_entries=4)
def _suggester(name: str, artefact: str) -> Any:
    from alict_core.mlm import get_suggester

    started = time.perf_counter()
    if name != "minilm-offline" and name == default_backend("mlm"):
        value = get_suggester()  # the paper's masked LM, loaded from where it was resolved (cache folder or hub)
    else:
        value = get_suggester(name)  # the core cache is keyed on the same artefact
    mark_loaded("mlm", name, started, artefact)
    return value


@st.cache_resource(show_spinner="Loading the model (once per process) …", max_entries=16)
def _model(name: str, kwargs_json: str, artefact: str = "", sources: str = "") -> Any:
    from alict_core.models import get_model

    started = time.perf_counter()
    kwargs = json.loads(kwargs_json)
    if artefact:  # embedded heads: the core cache keys on its arguments, so a new artefact is a new model
        kwargs["artefact"] = artefact
    value = get_model(name, **kwargs)
    mark_loaded("model", _shared_name(name, getattr(value, "name", name)), started, artefact)
    return value


def _shared_name(registry_name: str, name: str) -> str:
    """How the sidebar of every session names a loaded model: a registered model by its name, a model a user added
    in a session by its kind only (its display name is that user's text, never shown to other sessions)."""
    from alict_core.models import MODELS

    return name if name in MODELS else f"{registry_name} (added in a session)"


def default_classifier_folders() -> dict[str, str]:
    """{name: local folder} of the tasks' resolved default classifiers found in the local Hugging Face cache
    (the paper's models); one resolution for a whole menu."""
    from alict_core.models.defaults import resolved_defaults

    folders: dict[str, str] = {}
    for role, entry in resolved_defaults().items():
        if role.startswith("classifier:") and entry.get("kind") == "hf" and entry.get("path"):
            folders.setdefault(entry["name"], entry["path"])
    return folders


def cached_default_classifier(name: str) -> str | None:
    """The local folder of ``name`` when it is a task's resolved default classifier found in the local Hugging
    Face cache (the paper's model), else None."""
    return default_classifier_folders().get(name)


def model(registry_name: str, **kwargs: Any) -> Any:
    """A registered model (with adapter arguments for user-added ones), loaded once per process per artefact and
    per state of the files its arguments name.

    The paper's classifier resolved from the local HF cache loads from that folder (no hub round trip)."""
    folder = cached_default_classifier(registry_name)
    if folder and "model_id" not in kwargs:
        kwargs = {**kwargs, "model_id": folder}
    artefact = artefact_key("model", registry_name)
    target = "classifiers" if backend_tags("model", registry_name).get("kind") == "embedded" else None
    from alict_core.models.registry import source_stamps

    # the files its arguments name, as they are now: a predictions file rewritten or a folder retrained in place is
    # loaded again (this process kept serving the old one, and its fingerprint, to every session)
    sources = json.dumps(source_stamps(kwargs))
    return _explained(target, lambda: _model(registry_name, json.dumps(kwargs, sort_keys=True), artefact, sources))


def model_of(ref: ModelRef) -> Any:
    """The model of a reference (user-added models with their arguments). References come from the browser:
    the trust model checks them here, on every use (``alict_core.models.refs.browser_ref``)."""
    from alict_core.models.refs import browser_ref

    checked = browser_ref(ref)
    return model(checked.name, **checked.kwargs)


def model_from_ref(ref: dict[str, Any]) -> Any:
    """``model_of`` a reference stored as {"name": registry name, "kwargs": {...}} (session state, run requests)."""
    from alict_core.models.refs import ModelRef

    return model_of(ModelRef.from_dict(ref))


@st.cache_resource(show_spinner="Loading the reference grammar (once per process) …")
def reference_grammar() -> Any:
    from alict_core.grammar import load_reference_grammar

    started = time.perf_counter()
    value = load_reference_grammar()
    mark_loaded("grammar", "reference", started)
    return value


def ready_models(names: list[str]) -> set[str]:
    """The names of ``names`` that can load without a missing offline build; the built
    classifiers are looked up once for the whole list."""
    embedded = [n for n in names if backend_tags("model", n).get("kind") == "embedded"]
    ready = {n for n in names if n not in embedded}
    if embedded:
        from alict_core.models import artefacts

        ready |= artefacts.built_heads(embedded)
    return ready


# ---------------------------------------------------------------- build status (sidebar)
_built: dict[str, bool | None] = {}
_probe_started = threading.Event()
_probe_done = threading.Event()


def _probe_built() -> None:
    from alict_core.common import imports

    _probe_targets(imports.held)
    _probe_done.set()
    if _built.get("parser") or _built.get("mlm"):  # the code is needed only to load a built parser or masked LM
        _preimport_model_code()
    _preimport_spacy()


def _probe_targets(import_lock: Any) -> None:
    """Whether each target is built (no lock held: it reads artefacts another thread may be loading) and each
    backend registry's first import (under the bounded import lock: a run started meanwhile waits, never imports
    beside it)."""
    from alict_core.models import artefacts

    for target, kind in STATUS_TARGETS:
        try:
            _built[target] = artefacts.is_built(target)
        except Exception:  # noqa: BLE001 - a status probe must never break the sidebar: logged, shown as unknown
            log.exception("checking whether %s is built failed", target)
            _built[target] = None
        try:
            with import_lock(f"the {kind} backends"):
                backend_names(kind)  # imports the registry module here, off the page's thread
        except Exception as exc:  # noqa: BLE001 - the page reports it when it needs the backend
            log.warning("listing %s backends failed: %s", kind, exc)


def _preimport_spacy() -> None:
    """Import spaCy off the page's thread (~0.9 s on an idle core, +50 MB; no pipeline is loaded): the Adjunct trees
    and Expansions pages' first opens then only load their pipelines."""
    from alict_core.common import imports

    try:
        imports.spacy()  # under the import lock: never beside a run's first import of torch
    except Exception as exc:  # noqa: BLE001 - only a head start: the page imports it again and reports
        log.warning("pre-importing spaCy failed: %s", exc)


def _preimport_model_code() -> None:
    """Import the transformers model code the offline parser and masked LM are built on (BERT-style encoders), off
    the page's thread: it is most of a first parser load (~5 of 7 s on two busy cores); the Expansions page's first
    open then mostly reads weights. Imports only: no model is loaded and no weights are read (the server's RSS grows
    by ~120 MB, which the first parser load would add anyway)."""
    from alict_core.common import imports

    try:
        imports.model_code()  # under the import lock: a run started meanwhile waits for it, never imports beside it
    except Exception as exc:  # noqa: BLE001 - only a head start: the page loads what it needs anyway
        log.warning("pre-importing the model code failed: %s", exc)


def start_status_probe() -> None:
    """Check in a background thread which offline models are built (some modules import torch/benepar)."""
    if not _probe_started.is_set():
        _probe_started.set()
        _probe_done.clear()
        threading.Thread(target=_probe_built, name="alict-status-probe", daemon=True).start()


def refresh_status() -> None:
    """Forget the build probe (after a build) so the next status call checks again."""
    _built.clear()
    _probe_started.clear()


def backend_status() -> list[dict[str, str]]:
    """Rows (what, state, note) for the sidebar: loaded in this process, built on disk, or missing.

    Never imports a backend module on the caller's thread (the probe thread, started by ``app.py`` after
    the page is drawn, does), so it is instant.
    """
    rows = []
    for target, kind in STATUS_TARGETS:
        loaded = [v["name"] for v in LOADED.values() if v["kind"] == kind]
        if target not in _built:
            rows.append({"what": target, "state": "checking",
                         "note": f"a background check looks for the built {target} (it imports the {kind} code "
                                 "once per server, a few seconds); this panel updates when it is done"})
            continue
        built = _built[target]
        if loaded:
            state, note = "loaded", ", ".join(loaded)
        elif built:
            state, note = "built", "loads on first use"
        elif built is None:
            state, note = "not available", "the build status could not be read"
        else:
            state, note = "missing", BUILD_HINT[target]
        rows.append({"what": target, "state": state, "note": note})
    return rows
