"""``MODELS``: every model adapter by name, tagged with ``task`` and ``offline``; ``get_model`` caches."""

from __future__ import annotations

import os
import re
import stat
from typing import Any, Callable, Mapping

from alict_core.common import imports
from alict_core.common.caching import LoadOnceCache
from alict_core.common.errors import AlictError, ModelError
from alict_core.common.hashing import hash_json
from alict_core.common.limits import setting_number
from alict_core.common.registry import Param, Registry
from alict_core.models.arguments import typed_arguments
from alict_core.models.protocol import Model

MODELS: Registry[Model] = Registry("model")

# The paper's models (need internet once to fetch from the hub, or pass model_id=<local dir>).
HUB_MODELS = {
    "distilbert-base-uncased-finetuned-sst-2-english": (
        "sentiment", "DistilBERT fine-tuned on SST-2 (binary → 3-class rule)"),
    "textattack/bert-base-uncased-SST-2": ("sentiment", "BERT-base fine-tuned on SST-2 (binary → 3-class rule)"),
    "textattack/roberta-base-SST-2": ("sentiment", "RoBERTa-base fine-tuned on SST-2 (binary → 3-class rule)"),
    "cardiffnlp/twitter-roberta-base-hate": ("hate_speech", "Twitter RoBERTa fine-tuned on SemEval-2019 hate"),
    "Hate-speech-CNERG/dehatebert-mono-english": ("hate_speech", "dehateBERT, English"),
}
# Native labels of checkpoints whose config only says LABEL_0/LABEL_1.
HUB_LABEL_MAPS = {
    "textattack/bert-base-uncased-SST-2": {"LABEL_0": "negative", "LABEL_1": "positive"},
    "textattack/roberta-base-SST-2": {"LABEL_0": "negative", "LABEL_1": "positive"},
    "cardiffnlp/twitter-roberta-base-hate": {"LABEL_0": "non-hateful", "LABEL_1": "hateful",
                                             "non-hate": "non-hateful", "hate": "hateful"},
    "Hate-speech-CNERG/dehatebert-mono-english": {"NON_HATE": "non-hateful", "HATE": "hateful"},
}


def _embedded(name: str):
    def factory(head_dir: str | None = None, **given: Any) -> Model:
        """``name=`` renames the model in a run; any other argument is refused (they were ignored without a word:
        ``minilm-sst:bogus=1`` ran as plain minilm-sst)."""
        from pathlib import Path

        from alict_core.models import artefacts
        from alict_core.models.embedded import EmbeddingHeadModel

        shown = given.pop("name", None)
        given.pop("artefact", None)  # the app's cache key of the built head (a new artefact is a new model)
        if given:
            raise ModelError(f"model {name!r} takes no argument {', '.join(sorted(given))} (only name=...)")
        model = EmbeddingHeadModel(name, Path(head_dir) if head_dir else artefacts.require("classifiers").path / name)
        if shown:
            model.name = str(shown)
        return model

    return factory


MODELS.add("minilm-sst", _embedded("minilm-sst"), "MiniLM-L6 embeddings + logistic head, SST 3-class (built offline)",
           task="sentiment", offline=True, kind="embedded")
MODELS.add("minilm-hatexplain", _embedded("minilm-hatexplain"),
           "MiniLM-L6 embeddings + logistic head, HateXplain train split (built offline)",
           task="hate_speech", offline=True, kind="embedded")


@MODELS.register("vader", "VADER lexicon sentiment (compound score; |c| < 0.05 neutral)", task="sentiment",
                 offline=True, kind="lexicon")
def _vader(**kw: Any) -> Model:
    from alict_core.models.lexicon import VaderModel

    return VaderModel(**kw)


@MODELS.register("textblob", "TextBlob pattern polarity (|p| < 0.05 neutral)", task="sentiment", offline=True,
                 kind="lexicon")
def _textblob(**kw: Any) -> Model:
    from alict_core.models.lexicon import TextBlobModel

    return TextBlobModel(**kw)


@MODELS.register("hatesonar", "HateSonar (ONNX; hate_speech → hateful)", task="hate_speech", offline=True,
                 kind="classic")
def _hatesonar(**kw: Any) -> Model:
    from alict_core.models.offensive import HateSonarModel

    return HateSonarModel(**kw)


@MODELS.register("profanity-check", "alt-profanity-check (profane → hateful)", task="hate_speech", offline=True,
                 kind="classic")
def _profanity(**kw: Any) -> Model:
    from alict_core.models.offensive import ProfanityCheckModel

    return ProfanityCheckModel(**kw)


def _hub(model_id: str, task: str):
    def factory(**kw: Any) -> Model:
        from alict_core.models.hf import HFClassifier

        kw.setdefault("label_map", HUB_LABEL_MAPS.get(model_id))
        source = kw.pop("model_id", model_id)
        return HFClassifier(source, task, name=kw.pop("name", model_id), **kw)

    return factory


for _id, (_task, _desc) in HUB_MODELS.items():
    MODELS.add(_id, _hub(_id, _task), _desc + " [needs the hub, or model_id=<local dir>]", task=_task, offline=False,
               kind="hf")


# Kinds a user may add (tag ``user_kind``: the form's title) come in the order the Run page offers them.
@MODELS.register("hf", "any Hugging Face sequence classifier: model_id=<hub id or local dir>, task=...", task=None,
                 offline=False, kind="hf", user_kind="Hugging Face classifier",
                 params=(Param("model_id", "hub id or local folder"),))
def _hf(model_id: str, task: str, **kw: Any) -> Model:
    from alict_core.models.hf import HFClassifier

    return HFClassifier(model_id, task, **kw)


@MODELS.register("http", "JSON HTTP endpoint: url=..., task=...", task=None, offline=False, kind="remote",
                 user_kind="JSON HTTP endpoint", params=(Param("url", "https://host/predict"),))
def _http(url: str, task: str, **kw: Any) -> Model:
    from alict_core.models.remote import HttpJsonModel

    return HttpJsonModel(url, task, **kw)


@MODELS.register("openai-chat", "OpenAI-compatible chat endpoint: base_url=..., model=..., task=...", task=None,
                 offline=False, kind="remote", user_kind="OpenAI-compatible chat endpoint",
                 params=(Param("base_url", "http://localhost:8000/v1"), Param("model", "model name")))
def _chat(base_url: str, model: str, task: str, **kw: Any) -> Model:
    from alict_core.models.remote import OpenAIChatModel

    return OpenAIChatModel(base_url, model, task, **kw)


@MODELS.register("static", "stored predictions: path=<CSV/JSONL with text + label or per-label columns>, task=...",
                 task=None, offline=True, kind="static", user_kind="stored predictions (CSV/JSONL)",
                 params=(Param("path", "file under a workspace folder, or upload below"),))
def _static(path: str, task: str, **kw: Any) -> Model:
    from alict_core.models.static import StaticPredictionsModel

    return StaticPredictionsModel(path, task, **kw)


@MODELS.register("sklearn", "scikit-learn/joblib pipeline: path=..., task=..., trusted=True (CLI: --trust-pickle)",
                 task=None, offline=True, kind="sklearn",
                 user_kind="scikit-learn/joblib pipeline (server folders in ALICT_PICKLE_DIRS only)",
                 params=(Param("path", "/path/to/pipeline.joblib"),))
def _sklearn(path: str, task: str, **kw: Any) -> Model:
    from alict_core.models.sklearn_model import SklearnPipelineModel

    return SklearnPipelineModel(path, task, **kw)


# the adapter each kind builds: its declared argument types read a text value (``models.arguments``)
ADAPTERS = {"hf": ("alict_core.models.hf", "HFClassifier"), "http": ("alict_core.models.remote", "HttpJsonModel"),
            "openai-chat": ("alict_core.models.remote", "OpenAIChatModel"),
            "static": ("alict_core.models.static", "StaticPredictionsModel"),
            "sklearn": ("alict_core.models.sklearn_model", "SklearnPipelineModel"),
            "vader": ("alict_core.models.lexicon", "VaderModel"),
            "textblob": ("alict_core.models.lexicon", "TextBlobModel"),
            "hatesonar": ("alict_core.models.offensive", "HateSonarModel"),
            "profanity-check": ("alict_core.models.offensive", "ProfanityCheckModel")}
EMBEDDED_ARGUMENTS = frozenset({"name", "head_dir", "artefact"})  # ``_embedded``'s factory takes only these
VERSION_ARGUMENTS = frozenset({"name", "artefact"})  # a retrained version's (``harden.versions``)
HIDDEN_ARGUMENTS = frozenset({"artefact", "trusted"})  # set by the app or by --trust-pickle, never offered


def _adapter(name: str) -> type | None:
    """The class model ``name`` is built as, where the registry knows it (None for stored versions)."""
    import importlib

    target = ADAPTERS.get(name) or (ADAPTERS["hf"] if model_entry(name).tags.get("kind") == "hf" else None)
    return None if target is None else getattr(importlib.import_module(target[0]), target[1])


def typed_kwargs(name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` of model ``name`` with its text values read as its adapter's declared types (``models.arguments``;
    ModelError for one it cannot use). Every model is built through this (``_build``)."""
    adapter = _adapter(name)
    return dict(kwargs) if adapter is None else typed_arguments(adapter, kwargs, name)


def known_arguments(name: str) -> frozenset[str] | None:
    """The argument names model ``name`` takes (its factory's and its adapter's), None where it is not known."""
    import inspect

    entry = model_entry(name)
    if entry.tags.get("kind") == "embedded":
        return EMBEDDED_ARGUMENTS
    if entry.tags.get("kind") == "version":
        return VERSION_ARGUMENTS
    adapter = _adapter(name)
    if adapter is None:
        return None
    named = {p.name for p in [*inspect.signature(entry.factory).parameters.values(),
                               *inspect.signature(adapter.__dict__["__init__"]).parameters.values()]
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return frozenset(named - {"self"} | ({"model_id"} if entry.tags.get("kind") == "hf" else set()))


def check_arguments(name: str, kwargs: Mapping[str, Any]) -> None:
    """Refuse, before any work, an argument its model does not take (``vader:foo=1``) or a text value its adapter
    cannot use (``timeout=0``, ``headers=X``, ``neutral_band=abc``): the reading the model gets when it is built."""
    known = known_arguments(name)
    unknown = sorted(set(kwargs) - known) if known is not None else []
    if unknown:
        takes = ", ".join(sorted(known - HIDDEN_ARGUMENTS)) if known else "none"
        raise ModelError(f"model {name!r} takes no argument {', '.join(map(repr, unknown))}; it takes: {takes}")
    typed_kwargs(name, kwargs)


MODEL_CACHE_ENV = "ALICT_MODEL_CACHE_SIZE"
_CACHE: LoadOnceCache[Model] = LoadOnceCache(
    "models", max_entries=int(setting_number(MODEL_CACHE_ENV, 8, 1, 1024, whole=True)))


def argument_problem(name: str, entry: Any, kwargs: dict[str, Any]) -> str:
    """What a model kind takes, from its registry entry (``params``) and its factory's named arguments, and what
    was given: never a private function's signature ("_hf() missing 2 required positional arguments")."""
    import inspect

    hints = {param.name: param.hint for param in entry.params}
    named = [p for p in inspect.signature(entry.factory).parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    needed = [*hints, *(p.name for p in named if p.name not in hints and p.default is p.empty)]
    takes = ", ".join(f"{arg}=<{hints.get(arg) or ('sentiment or hate_speech' if arg == 'task' else '…')}>"
                      for arg in needed) or "no arguments"
    given = ", ".join(sorted(kwargs)) or "none"
    unknown = sorted(set(kwargs) - set(needed) - {p.name for p in named})
    extra = f"; unknown: {', '.join(unknown)}" if unknown else ""
    example = f" (e.g. {name}:{needed[0]}=…)" if needed else ""
    return f"model {name!r} takes {takes}; given: {given}{extra}{example}"


TRANSFORMER_KINDS = {"hf", "embedded", "version"}  # model kinds built on torch and transformers


def import_problem(name: str, exc: ImportError) -> str:
    """What a failed import while building model ``name`` means, without the server's file paths."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"model {name!r}: a package it needs is missing: {exc.name.split('.')[0]!r} is not installed"
    shown = str(exc).replace(f" ({exc.path})", "") if exc.path else str(exc)
    shown = re.sub(r"\s*\((?:/|[A-Za-z]:\\)[^)]*\)", "", shown)  # any other "(<absolute path>)"
    return (f"model {name!r}: its code could not be imported ({shown}); try again, and if it persists the server's "
            "installation is broken")


def _build(name: str, kwargs: dict[str, Any]) -> Model:
    entry = model_entry(name)
    try:
        if entry.tags.get("kind") in TRANSFORMER_KINDS:
            imports.model_code()  # the first import of transformers, under the import lock (never two at once)
        return entry.factory(**typed_kwargs(name, kwargs))
    except AlictError:
        raise
    except TypeError:
        raise ModelError(argument_problem(name, entry, kwargs)) from None
    except ImportError as exc:
        raise ModelError(import_problem(name, exc)) from exc


_RESOLVERS: list[Callable[[str], bool]] = []


def add_resolver(resolver: Callable[[str], bool]) -> None:
    """Install ``resolver(name)``: asked for a name not registered yet, it registers it and returns True if it
    can (``alict_core.harden.versions`` installs one for retrained versions, ``<parent>@<hash>``)."""
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def model_entry(name: str):
    """The registry entry of ``name``; a name an installed resolver knows is registered on first use."""
    if name not in MODELS:
        for resolver in list(_RESOLVERS):
            if resolver(name):
                break
    return MODELS.entry(name)


def get_model(name: str, /, **kwargs: Any) -> Model:
    """Create (once per process, per name and arguments) the registered model ``name``.

    Loads take a per-model lock: a second caller of a model that is loading waits for that load, callers
    of other models are not held up. Files and folders named in ``kwargs`` are part of the key
    (:func:`source_stamps`): changed on disk, they are loaded again. At most ``ALICT_MODEL_CACHE_SIZE`` (default
    8) models are kept.
    """
    model_entry(name)  # unknown names fail here, listing the valid ones
    key = hash_json({"name": name, "kwargs": kwargs, "sources": source_stamps(kwargs)})
    return _CACHE.get(key, lambda: _build(name, kwargs))


def source_stamps(kwargs: dict[str, Any]) -> list[list[Any]]:
    """The state on disk of the files and folders a model's arguments name (size, change time and inode of a
    file; of each file directly in a folder): a predictions file rewritten or a model folder retrained in place is
    another model, never the one loaded before (the app kept serving it, and its old fingerprint)."""
    stamps: list[list[Any]] = []
    for arg, value in sorted(kwargs.items()):
        if not isinstance(value, str) or not value or len(value) > 4096 or "\x00" in value:
            continue
        try:
            info = os.stat(value)
        except (OSError, ValueError):
            continue  # not a path (a hub name, a URL, a task)
        stamp: list[Any] = [arg, info.st_size, info.st_mtime_ns, info.st_ino]
        if stat.S_ISDIR(info.st_mode):
            try:
                with os.scandir(value) as entries:
                    stamp.append(sorted([entry.name, entry.stat().st_size, entry.stat().st_mtime_ns]
                                        for entry in entries if entry.is_file())[:10_000])
            except OSError:
                pass
        stamps.append(stamp)
    return stamps


def clear_model_cache() -> None:
    _CACHE.clear()


def model_task(name: str) -> str | None:
    return model_entry(name).tags.get("task")
