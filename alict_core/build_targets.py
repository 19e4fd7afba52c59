"""Build status by target name, for status probes (the app's sidebar); the builders live in ``training``.

Kept for callers of the old API: ``target_module(name).is_built()`` / ``.default_path()``. New code
should use ``alict_core.artefacts`` directly.
"""

from __future__ import annotations

import types
from pathlib import Path

from alict_core import artefacts

BUILD_TARGETS: dict[str, str] = {"parser": "parser", "mlm": "mlm", "models": "classifiers"}


def target_module(name: str) -> types.SimpleNamespace:
    """An object with ``is_built()`` and ``default_path()`` (the folder in use, else the quick one)."""
    target = artefacts.canonical(name)

    def default_path() -> Path:
        found = artefacts.locate(target, check=False)
        return found.path if found else artefacts.profile_dir(target, "quick")

    return types.SimpleNamespace(is_built=lambda: artefacts.is_built(target), default_path=default_path)


def is_built(name: str) -> bool:
    return artefacts.is_built(name)
