"""Retrained model versions: stored under ``<cache>/models/versions/<name>``, registered as models on demand.

A version is named ``<parent>@<8 hex digits>`` (the hash of its parent, data and settings) and records its
parent, the export it was trained on and the settings in ``version.json``. Embedded versions hold a
``head.npz`` + ``meta.json`` like the built classifiers; Hugging Face versions a ``model/`` folder.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from alict_core.common.errors import AlictError, ModelError
from alict_core.common.jsonl import read_json
from alict_core.common.manifest import sha256_file
from alict_core.models.registry import MODELS, add_resolver, get_model

VERSION_NAME = re.compile(r"^(?P<parent>[A-Za-z0-9][A-Za-z0-9._/-]{0,120})@(?P<digest>[0-9a-f]{8})$")
VERSION_FILE = "version.json"
# what a run hands its workers as ``plugins``: importing this module installs the version resolver there too
MODEL_RESOLVERS = (__name__,)
FILES_KEY = "files"  # version.json: {relative path: sha256} of the version's model files, written at training
log = logging.getLogger(__name__)


def versions_root() -> Path:
    from alict_core.common.config import models_dir

    return models_dir() / "versions"  # not created here: a look-up (a Harden page view) wrote it; trainings make it


def version_dir(name: str) -> Path:
    """The folder of version ``name`` (validated: never a path built from arbitrary text)."""
    if not VERSION_NAME.match(name):
        raise AlictError(f"{name!r} is not a model version name (expected <parent>@<8 hex digits>)")
    return versions_root() / name.replace("/", "--")


def _read_record(path: Path, name: str) -> dict[str, Any]:
    """A ``version.json`` as a dict with the fields the registry reads, else one error naming version and file."""
    try:
        record = read_json(path)
    except (OSError, ValueError, RecursionError) as exc:
        raise AlictError(f"model version {name!r}: {path.name} cannot be read ({type(exc).__name__}); retrain it "
                         "or remove its folder") from None
    if not isinstance(record, dict):
        raise AlictError(f"model version {name!r}: {path.name} is not a JSON object; retrain it or remove its folder")
    for key in ("name", "parent", "kind", "task"):
        if not isinstance(record.get(key), str):
            raise AlictError(f"model version {name!r}: {path.name} has no text field {key!r}; retrain it or remove "
                             "its folder")
    if not isinstance(record.get("lcs", []), list) or not isinstance(record.get("created", ""), str):
        raise AlictError(f"model version {name!r}: {path.name} has a malformed 'lcs' or 'created' field; retrain it "
                         "or remove its folder")
    return dict(record)


def version_info(name: str) -> dict[str, Any]:
    path = version_dir(name) / VERSION_FILE
    if not path.is_file():
        raise AlictError(f"model version {name!r} not found; versions: {', '.join(v['name'] for v in list_versions())}")
    return _read_record(path, name)


def list_versions(task: str | None = None) -> list[dict[str, Any]]:
    """Every stored version's ``version.json`` (optionally of one task), oldest first; a version whose record is
    damaged is left out with a logged note (one bad folder never takes the listing down)."""
    out: list[dict[str, Any]] = []
    from alict_core.common.config import models_dir

    listed = models_dir() / "versions"  # a listing creates nothing (`harden versions` made the folder)
    for folder in sorted(listed.iterdir()) if listed.is_dir() else []:
        file = folder / VERSION_FILE
        if folder.is_dir() and not folder.name.startswith(".") and file.is_file():
            try:
                info = _read_record(file, folder.name)
            except AlictError as exc:
                log.warning("left out: %s", exc)
                continue
            if task is None or info.get("task") == task:
                out.append(info)
    return sorted(out, key=lambda v: (str(v.get("created", "")), v["name"]))


def _model_files(folder: Path, kind: str) -> list[Path]:
    """The files a version's predictions depend on: head and meta (embedded), the ``model/`` folder (hf)."""
    if kind == "embedded":
        return [folder / "head.npz", folder / "meta.json"]
    model = folder / "model"
    return sorted(p for p in model.rglob("*") if p.is_file()) if model.is_dir() else []


def content_hashes(folder: str | Path, kind: str) -> dict[str, str]:
    """``{relative path: sha256}`` of a version's model files (recorded in version.json at training time)."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in _model_files(folder, kind)}


def check_version_files(name: str, info: dict[str, Any], folder: Path) -> None:
    """Refuse a version whose model files differ from the hashes recorded at training time (one message naming the
    version and the file). Versions written before the hashes were recorded are checked as far as possible: an
    embedded version's ``meta.json`` labels against those of ``version.json``, and every read is guarded."""
    recorded = info.get(FILES_KEY)
    if recorded is None:
        return
    if not isinstance(recorded, dict) or not recorded:
        raise AlictError(f"model version {name!r}: {VERSION_FILE} field {FILES_KEY!r} is malformed; retrain it")
    try:
        actual = content_hashes(folder, str(info["kind"]))
    except OSError as exc:
        raise AlictError(f"model version {name!r}: its files cannot be read ({exc.strerror or exc})") from None
    for file in sorted(set(recorded) | set(actual)):
        if recorded.get(file) != actual.get(file):
            state = "is missing" if file not in actual else "was added" if file not in recorded else "changed"
            raise AlictError(f"model version {name!r}: {file} {state} since training (it does not match the hash "
                             f"in {VERSION_FILE}); the version is damaged or was edited: retrain it")


def _factory(version: str, info: dict[str, Any]):
    def factory(name: str | None = None, **given: Any):
        """``name=`` renames the version in a run; any other argument is refused (they were dropped without a word,
        ``name=`` too: two copies of one version could not be told apart)."""
        given.pop("artefact", None)  # the app's cache key, as for the embedded models
        if given:
            raise ModelError(f"model {version!r} takes no argument {', '.join(sorted(given))} (only name=...)")
        folder = version_dir(version)
        check_version_files(version, info, folder)
        if info["kind"] == "embedded":
            from alict_core.models.embedded import EmbeddingHeadModel

            model = EmbeddingHeadModel(version, folder)
            if isinstance(info.get("labels"), list) and list(model.labels) != info["labels"]:
                raise AlictError(f"model version {version!r}: meta.json labels {list(model.labels)} differ from those "
                                 f"recorded in {VERSION_FILE} ({info['labels']}); the version was edited: retrain it")
            if name:
                model.name = str(name)
            return model
        from alict_core.models.hf import HFClassifier

        return HFClassifier(str(folder / "model"), info["task"], name=str(name) if name else version)

    return factory


class _NoEncoder:
    """Stands in for the shared MiniLM encoder when a version's head is only checked (never used to predict)."""

    fingerprint = "unchecked"


def check_version(name: str) -> None:
    """Everything :func:`_factory` checks before a version predicts, without loading an encoder or weights: its
    record, the hashes of its model files, and for an embedded version its ``meta.json`` and ``head.npz`` (one
    AlictError naming the version and file)."""
    folder = version_dir(name)
    if not (folder / VERSION_FILE).is_file():
        raise AlictError(f"model version {name!r}: {VERSION_FILE} is missing; retrain it or remove its folder")
    info = _read_record(folder / VERSION_FILE, name)
    check_version_files(name, info, folder)
    if info["kind"] != "embedded":
        if not (folder / "model").is_dir():
            raise AlictError(f"model version {name!r}: its model/ folder is missing; retrain it")
        return
    from alict_core.models.embedded import EmbeddingHeadModel

    model = EmbeddingHeadModel(name, folder, encoder=_NoEncoder())
    if isinstance(info.get("labels"), list) and list(model.labels) != info["labels"]:
        raise AlictError(f"model version {name!r}: meta.json labels {list(model.labels)} differ from those "
                         f"recorded in {VERSION_FILE} ({info['labels']}); the version was edited: retrain it")


def versions_report() -> list[dict[str, Any]]:
    """Every stored version folder (``build --report``): name, task, parent, and ``error`` when it cannot be used
    (damaged, edited or half-copied): the listing leaves such a version out, a run refuses it."""
    rows = []
    root = versions_root()
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        row: dict[str, Any] = {"name": folder.name}
        try:
            check_version(folder.name)
            info = _read_record(folder / VERSION_FILE, folder.name)
            row.update(task=info["task"], parent=info["parent"], kind=info["kind"])
        except AlictError as exc:
            row["error"] = str(exc)
        rows.append(row)
    return rows


def hf_weights_hash(folder: str | Path) -> str:
    """Content hash of a Hugging Face model folder's weight and config files (what retraining starts from)."""
    from alict_core.common.hashing import hash_files

    return hash_files(sorted(p for p in Path(folder).iterdir() if p.suffix in (".safetensors", ".bin", ".json")))


def parent_model(name: str) -> Any:
    """The model version ``name`` was retrained from, as it was: a Hugging Face version's recorded folder
    (refused if its weights changed since), else the registered parent model."""
    info = version_info(name)
    if info.get("kind") != "hf":
        return get_model(str(info["parent"]))
    folder = Path(str(info.get("parent_dir") or ""))
    if not info.get("parent_dir") or not folder.is_dir():
        raise AlictError(f"version {name!r}: the folder it was retrained from ({info.get('parent_dir')!r}) is gone; "
                         "its parent cannot be evaluated")
    if hf_weights_hash(folder) != info.get("parent_weights"):
        raise AlictError(f"version {name!r}: the weights in {folder} changed since it was retrained from them; "
                         "restore them or retrain")
    from alict_core.models.hf import HFClassifier

    return HFClassifier(str(folder), info["task"], name=str(info["parent"]), local_files_only=True)


def ensure_registered(name: str) -> bool:
    """Register version ``name`` as a model if it is stored; True when it is (or already was) registered."""
    if name in MODELS:
        return True
    if not VERSION_NAME.match(name) or not (version_dir(name) / VERSION_FILE).is_file():
        return False
    info = version_info(name)
    MODELS.add(name, _factory(name, info), f"retrained from {info['parent']} on {', '.join(info.get('lcs', []))}",
               task=info["task"], offline=True, kind="version", parent=info["parent"])
    return True


def register_all(task: str | None = None) -> list[str]:
    """Register every stored version (for menus); returns their names."""
    names = [v["name"] for v in list_versions(task)]
    for name in names:
        ensure_registered(name)
    return names


add_resolver(ensure_registered)  # a version name given anywhere (run, compare, app) is registered on first use
