"""Online-first model defaults: the paper's models when available, else the project's offline substitutes.

Per role a preference list (first available wins):

==========================  ==============================================================  ===================
role                        the paper's models (local cache, or downloadable when online)   offline substitute
==========================  ==============================================================  ===================
``parser``                  ``benepar_en3`` (benepar / NLTK data dir)                       ``benepar-offline``
``mlm``                     ``bert-base-uncased``                                           ``minilm-offline``
``classifier:sentiment``    ``textattack/bert-base-uncased-SST-2``,                         ``minilm-sst``
                            ``textattack/roberta-base-SST-2``,
                            ``distilbert-base-uncased-finetuned-sst-2-english``
``classifier:hate_speech``  ``Hate-speech-CNERG/dehatebert-mono-english``,                  ``minilm-hatexplain``
                            ``cardiffnlp/twitter-roberta-base-hate``
==========================  ==============================================================  ===================

A Hugging Face model counts as available when its config and weights are in the local hub cache
(``HF_HUB_CACHE``, ``HF_HOME``/hub or ``~/.cache/huggingface/hub``) or, when online, always (it is
downloaded on first load). Online means: ``HF_HUB_OFFLINE`` / ``ALICT_OFFLINE`` unset and the host
answers an HTTPS request within ``ALICT_ONLINE_TIMEOUT`` seconds (default 1.5; probed once per
process). Each role can be pinned with an environment variable (``PIN_ENV``) to a registered name, a
hub id or a local folder. ``resolved_defaults()`` is computed once per process and JSON-able: record it
in every run's metadata.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from alict_core.common.config import OFFLINE_ENVS, offline_forced  # noqa: F401 - in config: the data layer asks it
from alict_core.common.errors import AlictError
from alict_core.common.limits import setting_number

ROLES = ("parser", "mlm", "classifier:sentiment", "classifier:hate_speech")
PIN_ENV = {
    "parser": "ALICT_DEFAULT_PARSER",
    "mlm": "ALICT_DEFAULT_MLM",
    "classifier:sentiment": "ALICT_DEFAULT_SENTIMENT_MODEL",
    "classifier:hate_speech": "ALICT_DEFAULT_HATE_SPEECH_MODEL",
}
TIMEOUT_ENV = "ALICT_ONLINE_TIMEOUT"
HUB_HOST = ("huggingface.co", 443)
BENEPAR_HOST = ("github.com", 443)  # benepar's model index lives on kitaev.com, its zips on github.com


@dataclasses.dataclass(frozen=True)
class Choice:
    """A model that can fill a role: ``kind`` is "hf" (hub id), "benepar" or "offline" (a built artefact)."""

    name: str
    kind: str
    paper: bool


PREFERENCES: dict[str, tuple[Choice, ...]] = {
    "parser": (Choice("benepar_en3", "benepar", True), Choice("benepar-offline", "offline", False)),
    "mlm": (Choice("bert-base-uncased", "hf", True), Choice("minilm-offline", "offline", False)),
    "classifier:sentiment": (
        Choice("textattack/bert-base-uncased-SST-2", "hf", True),
        Choice("textattack/roberta-base-SST-2", "hf", True),
        Choice("distilbert-base-uncased-finetuned-sst-2-english", "hf", True),
        Choice("minilm-sst", "offline", False),
    ),
    "classifier:hate_speech": (
        Choice("Hate-speech-CNERG/dehatebert-mono-english", "hf", True),
        Choice("cardiffnlp/twitter-roberta-base-hate", "hf", True),
        Choice("minilm-hatexplain", "offline", False),
    ),
}
OFFLINE_TARGET = {"benepar-offline": "parser", "minilm-offline": "mlm", "minilm-sst": "classifiers",
                  "minilm-hatexplain": "classifiers"}
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")


# -- where things are ---------------------------------------------------------------------------------


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, read from the environment now (not when huggingface_hub was imported)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def cached_snapshot(repo_id: str, cache_dir: Path | None = None) -> Path | None:
    """The local snapshot folder of ``repo_id`` (huggingface_hub's cache layout: ``refs/main`` names the
    snapshot) when it holds a config and weights, else None."""
    repo = (cache_dir or hf_cache_dir()) / f"models--{repo_id.replace('/', '--')}"
    try:
        commit = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    folder = repo / "snapshots" / commit
    if not (folder / "config.json").exists():
        return None
    return folder if any((folder / name).exists() for name in WEIGHT_FILES) else None


def benepar_model_dirs() -> list[Path]:
    """Folders where an installed ``benepar_en3`` may live: NLTK data paths (NLTK_DATA read now) + nltk's own."""
    roots = [Path(p).expanduser() for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    if "nltk.data" in sys.modules:  # already imported: its list (may have been extended at run time)
        roots += [Path(p) for p in sys.modules["nltk.data"].path]
    else:  # nltk's default list, without importing nltk (seconds: it pulls in scipy)
        roots += [Path.home() / "nltk_data", Path(sys.prefix) / "nltk_data", Path(sys.prefix) / "share" / "nltk_data",
                  Path(sys.prefix) / "lib" / "nltk_data", Path("/usr/share/nltk_data"),
                  Path("/usr/local/share/nltk_data"), Path("/usr/lib/nltk_data"), Path("/usr/local/lib/nltk_data")]
    return [root / "models" for root in dict.fromkeys(roots)]


def benepar_location(name: str = "benepar_en3") -> Path | None:
    """The folder of an installed benepar model (``<nltk_data>/models/<name>``), or None."""
    for folder in benepar_model_dirs():
        candidate = folder / name
        if (candidate / "benepar_model.bin").exists() or (candidate / "config.json").exists():
            return candidate
    return None


_PROBES: dict[tuple[str, int], bool] = {}
_LOCK = threading.Lock()


def _https_answers(host: tuple[str, int], timeout: float) -> bool:
    """Whether ``host`` answers an HTTPS HEAD request (any status) within ``timeout`` seconds."""
    import requests

    try:
        with requests.Session() as session:
            session.head(f"https://{host[0]}:{host[1]}/", timeout=(timeout, timeout), allow_redirects=False)
        return True
    except requests.RequestException:
        return False


def reachable(host: tuple[str, int]) -> bool:
    """Whether ``host`` answers HTTPS within ALICT_ONLINE_TIMEOUT s (probed once per process and host).

    A TLS handshake is required, so a proxy that accepts every TCP connection does not count as online.
    """
    if offline_forced():
        return False
    with _LOCK:
        if host not in _PROBES:
            _PROBES[host] = _https_answers(host, setting_number(TIMEOUT_ENV, 1.5, 0.1, 60))
        return _PROBES[host]


# -- resolution ---------------------------------------------------------------------------------------
def _offline_entry(choice: Choice) -> dict[str, Any]:
    from alict_core.models import artefacts

    entry: dict[str, Any] = {"name": choice.name, "kind": "offline", "paper_model": False,
                             "source": "offline substitute"}
    try:
        found = artefacts.locate(OFFLINE_TARGET[choice.name], check=False)
    except AlictError as exc:  # a damaged manifest: said, not raised (the sidebar and `build --report` go on)
        entry.update(built=False, damaged=True, why=str(exc))
        return entry
    if found is None:
        entry.update(built=False, why="not built yet: `alict build missing --profile quick`")
    else:
        entry.update(built=True, path=str(found.path), profile=found.profile, steps=found.steps)
    return entry


def _try(choice: Choice) -> tuple[dict[str, Any] | None, str]:
    """(entry, "") when ``choice`` is usable now, else (None, why not)."""
    if choice.kind == "offline":
        return _offline_entry(choice), ""
    if choice.kind == "benepar":
        location = benepar_location(choice.name)
        if location is not None:
            return {"name": choice.name, "kind": "benepar", "paper_model": True, "source": "local benepar data",
                    "path": str(location)}, ""
        if reachable(BENEPAR_HOST):
            return {"name": choice.name, "kind": "benepar", "paper_model": True,
                    "source": "online (benepar.download on first use)"}, ""
        return None, "not in any NLTK data folder and offline"
    snapshot = cached_snapshot(choice.name)
    if snapshot is not None:
        return {"name": choice.name, "kind": "hf", "paper_model": True, "model_id": choice.name,
                "source": "local Hugging Face cache", "path": str(snapshot)}, ""
    if reachable(HUB_HOST):
        return {"name": choice.name, "kind": "hf", "paper_model": True, "model_id": choice.name,
                "source": "online (downloaded on first use)"}, ""
    return None, f"not in the local Hugging Face cache ({hf_cache_dir()}) and offline"


EXPANSION_ROLES = ("parser", "mlm")  # the roles every command that builds cases uses; classifiers: only when asked


def check_pins() -> None:
    """The pinned defaults of the parser and MLM that can be told wrong without loading anything (a parser that is
    neither a known choice nor a folder; a pinned hub model that is neither cached nor reachable): one message before
    any work, not after a run's shards were written, nor after minutes of hub retries. A pinned default classifier is
    checked where it is used (``load_default_classifier``): a run of ``--models vader`` was refused for a broken
    ALICT_DEFAULT_SENTIMENT_MODEL it does not use (pass 39)."""
    value = os.environ.get(PIN_ENV["parser"], "").strip()
    known = {c.name for choices in PREFERENCES.values() for c in choices}
    if value and value not in known and value != "benepar_en3" and not Path(value).expanduser().is_dir():
        raise AlictError(f"{PIN_ENV['parser']}={shown_pin(value)}: not benepar_en3, benepar-offline or a benepar "
                         "model folder")
    for role in EXPANSION_ROLES:
        if os.environ.get(PIN_ENV[role], "").strip():
            require_available(resolved_defaults()[role], role)


def shown_pin(value: str) -> str:
    """A pinned value as a message may show it: a model spec's ``api_key=…``, ``headers=…`` and URL credentials
    hidden (``models.refs.redacted``), cut to 80 characters (a key was echoed whole; pass 39)."""
    from alict_core.models.refs import redacted

    text = redacted(value)
    return repr(text if len(text) <= 80 else text[:79] + "…")


HUB_ID = re.compile(r"[\w.-]+(?:/[\w.-]+)?")  # a Hugging Face repo id (no '=', ',', ':' as in a --models spec)


def require_available(entry: dict[str, Any], role: str) -> None:
    """Refuse a pinned model that resolution found unavailable (not in the local cache, and offline): loading it
    retried the hub for minutes although the probe had said offline."""
    if entry.get("why") == PIN_NOT_A_MODEL:
        raise AlictError(f"{PIN_ENV[role]}={shown_pin(str(entry.get('name')))}: not a model folder, a registered "
                         "model nor a Hugging Face hub id (this variable takes one of those, not a `--models` spec "
                         "with arguments); give one of those or unset it")
    if entry.get("why") == PIN_UNAVAILABLE:
        raise AlictError(f"{PIN_ENV[role]}={shown_pin(str(entry.get('name')))}: not a model folder, not in the local "
                         f"Hugging Face cache ({hf_cache_dir()}) and the hub is not reachable (offline); give a "
                         "model folder or unset it")


PIN_UNAVAILABLE = "not available now"
PIN_NOT_A_MODEL = "not a model folder nor a hub id"


def _pinned(role: str, value: str) -> dict[str, Any]:
    """The entry for a pinned value: a known choice, a local folder, or a hub id."""
    known = {c.name: c for choices in PREFERENCES.values() for c in choices}
    entry: dict[str, Any]
    if value in known and known[value].kind == "offline":
        entry = _offline_entry(known[value])
    elif Path(value).expanduser().is_dir():
        kind = "benepar" if role == "parser" else "hf"
        entry = {"name": value, "kind": kind, "paper_model": False, "path": str(Path(value).expanduser().resolve()),
                 "model_id": value if kind == "hf" else None}
    elif role == "parser" and value != "benepar_en3":
        raise AlictError(f"{PIN_ENV[role]}={shown_pin(value)}: not benepar_en3, benepar-offline or a benepar model "
                         "folder")
    elif not HUB_ID.fullmatch(value):  # 'openai-chat:base_url=…,api_key=…': never a hub id; recorded redacted
        entry = {"name": _redacted(value), "kind": "hf", "paper_model": False, "model_id": None,
                 "why": PIN_NOT_A_MODEL}
    else:
        choice = known.get(value, Choice(value, "benepar" if role == "parser" else "hf", False))
        entry = _try(choice)[0] or {"name": value, "kind": choice.kind, "paper_model": choice.paper,
                                    "model_id": value if choice.kind == "hf" else None, "why": PIN_UNAVAILABLE}
    entry["source"] = f"pinned by {PIN_ENV[role]}"
    return entry


def _redacted(value: str) -> str:
    from alict_core.models.refs import redacted

    return redacted(value)


def resolve(role: str) -> dict[str, Any]:
    """The default model of ``role``: the pinned one, else the first available of its preference list."""
    if role not in PREFERENCES:
        raise AlictError(f"unknown model role {role!r}; choose one of {', '.join(ROLES)}")
    pin = os.environ.get(PIN_ENV[role], "").strip()
    if pin:
        return {"role": role, **_pinned(role, pin)}
    skipped: list[dict[str, str]] = []
    for choice in PREFERENCES[role]:
        entry, why = _try(choice)
        if entry is not None:
            return {"role": role, **entry, "skipped": skipped}
        skipped.append({"name": choice.name, "why": why})
    raise AssertionError("every preference list ends with an offline substitute")  # pragma: no cover


_RESOLVED: dict[str, dict[str, Any]] | None = None


def resolved_defaults(refresh: bool = False) -> dict[str, dict[str, Any]]:
    """Every role's default model, resolved once per process (JSON-able; record it in run metadata).

    The choice is made once; an offline substitute's artefact (built or not, profile, steps) is looked
    up again on every call (a few stat calls), so a build that lands later shows at once.
    """
    global _RESOLVED
    with _LOCK:
        cached = _RESOLVED
    if cached is None or refresh:
        if refresh:
            with _LOCK:
                _PROBES.clear()
        cached = {role: resolve(role) for role in ROLES}
        with _LOCK:
            _RESOLVED = cached
    return {role: _refreshed(entry) for role, entry in cached.items()}


def _refreshed(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``entry`` whose offline artefact facts are current."""
    if entry.get("kind") != "offline" or entry["name"] not in OFFLINE_TARGET:
        return dict(entry)
    kept = {k: v for k, v in entry.items() if k not in ("built", "why", "path", "profile", "steps")}
    current = _offline_entry(Choice(entry["name"], "offline", False))
    return {**kept, **current, "source": entry["source"]}  # a pin stays "pinned by ..."


def artefact_identity(target: str) -> str:
    """Which built artefact of ``target`` the runtime would load now: "profile:path:manifest mtime" ("" when
    none). Cheap (no hashing): model caches key on it, so a better or rebuilt artefact is loaded anew."""
    from alict_core.models import artefacts

    found = artefacts.locate(target, check=False)
    if found is None:
        return ""
    marker = found.path / (artefacts.MANIFEST if found.manifest else artefacts.LEGACY_MARKERS[found.target][0])
    try:
        stamp = marker.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return f"{found.profile}:{found.path}:{stamp}"


def overview() -> dict[str, Any]:
    """What the sidebar's "About models" shows: per role the resolved default, per target the artefact in
    use (profile, steps, held-out figures; manifests read, not re-hashed) and the builds now running."""
    from alict_core.models import artefacts

    in_use: dict[str, Any] = {}
    for target in artefacts.TARGETS:
        try:
            found = artefacts.locate(target, check=False)
        except (AlictError, OSError, ValueError) as exc:
            in_use[target] = {"target": target, "error": str(exc)}
            continue
        in_use[target] = found.describe() if found is not None else None
    return {"roles": resolved_defaults(), "artefacts": in_use, "building": artefacts.build_progress()}


# -- loading ------------------------------------------------------------------------------------------
def _source(entry: dict[str, Any]) -> str:
    return entry.get("path") or entry.get("model_id") or entry["name"]


def load_default_classifier(task: str) -> Any:
    """The default classifier of ``task`` (a paper's fine-tuned checkpoint, or the embedded offline head)."""
    from alict_core.models.registry import MODELS, get_model

    entry = resolved_defaults()[f"classifier:{task}"]
    require_available(entry, f"classifier:{task}")
    if entry["kind"] == "offline":
        return get_model(entry["name"])
    if entry["name"] in MODELS.names():  # a registered hub model: keeps its label map
        return get_model(entry["name"], model_id=_source(entry))
    return get_model("hf", model_id=_source(entry), task=task, name=entry["name"])
