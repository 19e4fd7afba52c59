"""Streamlit caching wrappers around core calls (the only place pages get data and backends from).

``st.cache_resource`` holds process-wide singletons (corpora, parser, masked LM, models): each is
loaded once per process and shared by every browser session. ``st.cache_data`` holds plain
artefacts keyed by a content hash of their inputs. Heavy libraries are imported lazily.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Sequence

import streamlit as st

from alict_core.errors import AlictError
from alict_core.hashing import hash_json, hash_text
from alict_app.core import Unavailable, core_attr

TASK_TITLES = {"sentiment": "Sentiment (SST)", "hate_speech": "Hate speech (HateXplain)"}
TASKS = tuple(TASK_TITLES)
SPEC_MODULES = ("alict_core.spec", "alict_core.specs")
BUILD_HINT = {
    "parser": "build it with `python -m alict_core build parser`",
    "mlm": "build it with `python -m alict_core build mlm`",
    "models": "build them with `python -m alict_core build models`",
}

_loaded_lock = threading.Lock()
LOADED: dict[str, dict[str, Any]] = {}  # "kind:name" → {"kind","name","seconds"}: what this process holds


def _mark_loaded(kind: str, name: str, started: float) -> None:
    with _loaded_lock:
        LOADED[f"{kind}:{name}"] = {"kind": kind, "name": name, "seconds": round(time.perf_counter() - started, 2)}


# ---------------------------------------------------------------- specs
def spec_files(task: str) -> list[Path]:
    """Spec YAML files of a task (shipped and user-saved)."""
    dirs = spec_dirs(task)
    return sorted(p for d in dirs if d.is_dir() for p in d.glob("*.y*ml"))


def spec_dirs(task: str) -> list[Path]:
    """Spec folders of a task; the first is where the editor saves."""
    try:
        return [Path(core_attr(SPEC_MODULES, "spec_dir")(task))]
    except Unavailable:
        from alict_core.config import SPECS_DIR

        return [SPECS_DIR / task]


def _files_key(paths: Sequence[Path]) -> str:
    return hash_json([[str(p), p.stat().st_mtime_ns, p.stat().st_size] for p in paths if p.exists()])


@st.cache_resource(show_spinner=False, max_entries=16)
def _task_specs(task: str, files_key: str) -> list[Any]:
    return list(core_attr(SPEC_MODULES, "load_task_specs", "the spec loader (issue #2) has not landed")(task))


def task_specs(task: str) -> list[Any]:
    """All LC specs of a task; reloaded when a spec file changes."""
    return _task_specs(task, _files_key(spec_files(task)))


def spec_path(task: str, lc_id: str) -> Path:
    """Where the spec file of ``lc_id`` lives (or would be saved)."""
    try:
        return Path(core_attr(SPEC_MODULES, "spec_path")(task, lc_id))
    except Unavailable:
        return spec_dirs(task)[0] / f"{lc_id}.yaml"


def spec_source(spec: Any) -> Path | None:
    for attr in ("source", "source_path", "path", "file"):
        value = getattr(spec, attr, None)
        if value and Path(str(value)).exists():
            return Path(str(value))
    path = spec_path(spec.task, spec.id)
    return path if path.exists() else None


def spec_text(spec: Any) -> str:
    """The YAML text of a spec (its file, or a dump of the object)."""
    path = spec_source(spec)
    if path is not None:
        return path.read_text(encoding="utf-8")
    import yaml

    data = spec.model_dump(mode="json", exclude_none=True) if hasattr(spec, "model_dump") else dict(vars(spec))
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def parse_spec_text(text: str, source_name: str) -> Any:
    return core_attr(SPEC_MODULES, "parse_spec_text", "the spec loader (issue #2) has not landed")(text, source_name)


def spec_key(spec: Any) -> str:
    """Content hash of a spec object (keys seed caches)."""
    if hasattr(spec, "model_dump"):
        return hash_json(spec.model_dump(mode="json"))
    return hash_text(repr(spec))


# ---------------------------------------------------------------- corpus and seeds
@st.cache_resource(show_spinner="Loading the labelled corpus (once per process) …")
def corpus(task: str) -> Any:
    started = time.perf_counter()
    loader = core_attr("alict_core.data.corpus", "load_corpus", "the corpus loader (issue #2) has not landed")
    value = loader(task)
    _mark_loaded("corpus", task, started)
    return value


@st.cache_resource(show_spinner=False, max_entries=256)
def _seed_set(task: str, key: str, _spec: Any, max_seeds: int | str | None, seed: int) -> Any:
    find_seeds = core_attr("alict_core.seeds", "find_seeds", "seed search (issue #2) has not landed")
    return find_seeds(_spec, corpus(task), max_seeds=max_seeds, seed=seed)


def seed_set(spec: Any, max_seeds: int | str | None = "spec", seed: int = 0) -> Any:
    """SeedSet of one spec (cached by the spec's content hash, cap and sampling seed).

    ``max_seeds``: "spec" uses the spec's own cap, None every candidate."""
    return _seed_set(spec.task, spec_key(spec), spec, max_seeds, int(seed))


# ---------------------------------------------------------------- backends (registries)
def registry(kind: str) -> Any:
    """The core registry of a backend kind: parser, mlm, model, explainer."""
    where = {
        "parser": (("alict_core.parsing",), "PARSERS", "the parser (issue #3) has not landed"),
        "mlm": (("alict_core.mlm",), "SUGGESTERS", "the masked LM (issue #3) has not landed"),
        "model": (("alict_core.models",), "MODELS", "the model adapters (issue #4) have not landed"),
        "explainer": (("alict_core.explain",), "EXPLAINERS", "the explainers (issue #5) have not landed"),
    }[kind]
    return core_attr(*where)


def backend_names(kind: str, **tags: Any) -> list[str]:
    try:
        return registry(kind).names(**tags)
    except Unavailable:
        return []


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


def _create(kind: str, name: str, getter: tuple[str, str]) -> Any:
    started = time.perf_counter()
    try:
        factory = core_attr(*getter)
        value = factory(name)
    except Unavailable:
        value = registry(kind).create(name)
    _mark_loaded(kind, name, started)
    return value


@st.cache_resource(show_spinner="Loading the parser (once per process) …")
def parser(name: str) -> Any:
    return _create("parser", name, ("alict_core.parsing", "get_parser"))


@st.cache_resource(show_spinner="Loading the masked language model (once per process) …")
def suggester(name: str) -> Any:
    return _create("mlm", name, ("alict_core.mlm", "get_suggester"))


@st.cache_resource(show_spinner="Loading the model (once per process) …")
def _model(name: str, kwargs_json: str) -> Any:
    import json

    kwargs = json.loads(kwargs_json)
    started = time.perf_counter()
    get_model = core_attr("alict_core.models", "get_model", "the model adapters (issue #4) have not landed")
    value = get_model(name, **kwargs)
    _mark_loaded("model", getattr(value, "name", name), started)
    return value


def model(registry_name: str, **kwargs: Any) -> Any:
    """A registered model (with adapter arguments for user-added ones), loaded once per process."""
    import json

    return _model(registry_name, json.dumps(kwargs, sort_keys=True))


def model_from_ref(ref: dict[str, Any]) -> Any:
    """A model from a reference {"name": registry name, "kwargs": {...}} (user-added models)."""
    return model(ref["name"], **(ref.get("kwargs") or {}))


@st.cache_resource(show_spinner="Loading the reference grammar (once per process) …")
def reference_grammar() -> Any:
    started = time.perf_counter()
    value = core_attr("alict_core.grammar", "load_reference_grammar", "the reference grammar (issue #3) has not landed")()
    _mark_loaded("grammar", "reference", started)
    return value


_built: dict[str, bool | None] = {}
_probe_started = threading.Event()
_probe_done = threading.Event()
STATUS_TARGETS = (("models", "model"), ("mlm", "mlm"), ("parser", "parser"))


def _probe_built() -> None:
    from alict_core.build_targets import target_module

    for target, kind in STATUS_TARGETS:
        try:
            _built[target] = bool(target_module(target).is_built())
        except (ImportError, AttributeError):
            _built[target] = None
        except Exception:  # noqa: BLE001 - a status probe must never break the sidebar
            _built[target] = None
        backend_names(kind)  # imports the registry module here, off the page's thread
    _probe_done.set()


def start_status_probe() -> None:
    """Check in a background thread which offline models are built (some modules import torch/benepar)."""
    if not _probe_started.is_set():
        _probe_started.set()
        _probe_done.clear()
        threading.Thread(target=_probe_built, name="alict-status-probe", daemon=True).start()


def is_built(target: str, wait: float = 0.0) -> bool | None:
    """Whether an offline build target exists: True/False, None when unknown (module missing or still checking)."""
    start_status_probe()
    deadline = time.perf_counter() + wait
    while target not in _built and time.perf_counter() < deadline:
        time.sleep(0.05)
    return _built.get(target)


def refresh_status() -> None:
    """Forget the build probe (after a build) so the next status call checks again."""
    _built.clear()
    _probe_started.clear()


def backend_status(task: str) -> list[dict[str, str]]:
    """Rows (what, state, note) for the sidebar: loaded in this process, built on disk, or missing.

    Never imports a backend module on the caller's thread (the probe thread, started by ``app.py`` after
    the page is drawn, does), so it is instant.
    """
    rows = []
    for target, kind in STATUS_TARGETS:
        loaded = [v["name"] for v in LOADED.values() if v["kind"] == kind]
        if target not in _built:
            rows.append({"what": target, "state": "checking", "note": "looking for built artefacts …"})
            continue
        built = _built[target]
        if loaded:
            state, note = "loaded", ", ".join(loaded)
        elif built:
            state, note = "built", "loads on first use"
        elif built is None:
            state, note = "not available", "module not installed yet"
        else:
            state, note = "missing", BUILD_HINT[target]
        rows.append({"what": target, "state": state, "note": note})
    return rows


@st.cache_resource(show_spinner=False)
def corpus_texts(task: str) -> dict[str, str]:
    """Corpus id → text (for provenance columns)."""
    return {item.id: item.text for item in corpus(task)}


# ---------------------------------------------------------------- expansions
def as_row(obj: Any) -> dict[str, Any]:
    """A plain dict of a core record (to_dict(), dataclass, pydantic or mapping)."""
    import dataclasses

    if isinstance(obj, dict):
        return obj
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj):
        return dataclasses.asdict(obj)
    return dict(vars(obj))


def expansion_rows(expansions: Any) -> list[dict[str, Any]]:
    """Rows of an ExpansionSet, whatever container the core returns."""
    for attr in ("rows", "expansions", "items"):
        value = getattr(expansions, attr, None)
        if value is not None and not callable(value):
            return [as_row(r) for r in value]
    if hasattr(expansions, "to_rows"):
        return [as_row(r) for r in expansions.to_rows()]
    return [as_row(r) for r in expansions]


@st.cache_resource(show_spinner=False, max_entries=512)
def _parse(parser_name: str, text: str) -> Any:
    return parser(parser_name).parse_batch([text.split()])[0]


def parse_seed(parser_name: str, seed: Any) -> Any:
    """The constituency tree (nltk.Tree) of a seed, cached per parser and text."""
    return _parse(parser_name, seed.text)


def productions_of(tree: Any) -> list[Any]:
    try:
        return list(core_attr("alict_core.parsing", "productions")(tree))
    except Unavailable:
        return list(tree.productions())


@st.cache_resource(show_spinner=False, max_entries=512)
def _masked(parser_name: str, seed_id: str, text: str, top_k: int, max_masks: int) -> list[dict[str, Any]]:
    masked_sentences = core_attr("alict_core.grammar", "masked_sentences", "Algorithm 1 (issue #3) has not landed")
    tree = _parse(parser_name, text)
    return [as_row(m) for m in masked_sentences(seed_id, tree, reference_grammar(), top_k=top_k, max_masks=max_masks)]


def masked_for_seed(parser_name: str, seed: Any, top_k: int = 5, max_masks: int = 10) -> list[dict[str, Any]]:
    """Masked sentences (with the reference superstructures they come from) of one seed."""
    return _masked(parser_name, seed.id, seed.text, int(top_k), int(max_masks))


@st.cache_resource(show_spinner=False, max_entries=256)
def _expand_one(parser_name: str, mlm_name: str, spec_hash: str, seed_id: str, _spec: Any, _seed: Any,
                options_key: str, options: tuple) -> list[dict[str, Any]]:
    expand = core_attr("alict_core.expansion", "expand", "the expansion step (issue #3) has not landed")
    result = expand([_seed], _spec, parser(parser_name), suggester(mlm_name), **dict(options))
    return expansion_rows(result)


def expand_seed(parser_name: str, mlm_name: str, spec: Any, seed: Any, **options: Any) -> list[dict[str, Any]]:
    """Every candidate expansion of one seed with its verdicts (accepted and rejected)."""
    opts = tuple(sorted(options.items()))
    return _expand_one(parser_name, mlm_name, spec_key(spec), seed.id, spec, seed, hash_json(opts), opts)


# ---------------------------------------------------------------- explanations
EXPLAIN = "alict_core.explain"
EXPLAIN_HINT = "the explainers (issue #5) have not landed"


@st.cache_data(show_spinner=False, max_entries=512)
def explain_case(ref_json: str, text: str, method: str, seed: int, n_samples: int) -> dict[str, Any]:
    """Token contributions of one text for one model (a plain dict; cached by all inputs)."""
    import json

    explain = core_attr(EXPLAIN, "explain", EXPLAIN_HINT)
    result = explain(model_from_ref(json.loads(ref_json)), text, method=method, seed=seed, n_samples=n_samples)
    return as_row(result)


@st.cache_data(show_spinner=False, max_entries=512)
def template_case(ref_json: str, text: str, method: str, seed: int, n_samples: int, p_thresh: float) -> dict[str, Any]:
    """The masking template of one text (kept tokens and fidelity curve) as a plain dict."""
    import json

    masking_template = core_attr(EXPLAIN, "masking_template", EXPLAIN_HINT)
    contributions_cls = core_attr(("alict_core.explain", "alict_core.explain.base"), "Contributions", EXPLAIN_HINT)
    contributions = contributions_cls.from_dict(explain_case(ref_json, text, method, seed, n_samples))
    result = masking_template(model_from_ref(json.loads(ref_json)), text, contributions, p_thresh=p_thresh,
                              n_samples=n_samples, seed=seed)
    return as_row(result)


def model_ready(name: str) -> bool:
    """False when a registered model needs an offline build that is missing (embedded heads); else True."""
    if backend_tags("model", name).get("kind") != "embedded":
        return True
    try:
        from alict_core import artefacts

        found = artefacts.locate("classifiers", check=False)
        return found is not None and (found.path / name / "head.npz").exists()
    except Exception:  # noqa: BLE001 - unknown layout: let loading report the problem
        return True
