"""Retrained model versions: stored under ``<cache>/models/versions/<name>``, registered as models on demand.

A version is named ``<parent>@<8 hex digits>`` (the hash of its parent, data and settings) and records its
parent, the export it was trained on and the settings in ``version.json``. Embedded versions hold a
``head.npz`` + ``meta.json`` like the built classifiers; Hugging Face versions a ``model/`` folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from alict_core.common.errors import AlictError
from alict_core.common.jsonl import read_json
from alict_core.models.registry import MODELS, add_resolver, get_model

VERSION_NAME = re.compile(r"^(?P<parent>[A-Za-z0-9][A-Za-z0-9._/-]{0,120})@(?P<digest>[0-9a-f]{8})$")
VERSION_FILE = "version.json"
# what a run hands its workers as ``plugins``: importing this module installs the version resolver there too
MODEL_RESOLVERS = (__name__,)


def versions_root() -> Path:
    from alict_core.common.config import models_dir

    root = models_dir() / "versions"
    root.mkdir(parents=True, exist_ok=True)
    return root


def version_dir(name: str) -> Path:
    """The folder of version ``name`` (validated: never a path built from arbitrary text)."""
    if not VERSION_NAME.match(name):
        raise AlictError(f"{name!r} is not a model version name (expected <parent>@<8 hex digits>)")
    return versions_root() / name.replace("/", "--")


def version_info(name: str) -> dict[str, Any]:
    path = version_dir(name) / VERSION_FILE
    if not path.is_file():
        raise AlictError(f"model version {name!r} not found; versions: {', '.join(v['name'] for v in list_versions())}")
    return dict(read_json(path))


def list_versions(task: str | None = None) -> list[dict[str, Any]]:
    """Every stored version's ``version.json`` (optionally of one task), oldest first."""
    out = []
    for folder in sorted(versions_root().iterdir()):
        file = folder / VERSION_FILE
        if folder.is_dir() and not folder.name.startswith(".") and file.is_file():
            info = dict(read_json(file))
            if task is None or info.get("task") == task:
                out.append(info)
    return sorted(out, key=lambda v: (v.get("created", ""), v["name"]))


def _factory(name: str, info: dict[str, Any]):
    def factory(**_: Any):
        folder = version_dir(name)
        if info["kind"] == "embedded":
            from alict_core.models.embedded import EmbeddingHeadModel

            return EmbeddingHeadModel(name, folder)
        from alict_core.models.hf import HFClassifier

        return HFClassifier(str(folder / "model"), info["task"], name=name)

    return factory


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
