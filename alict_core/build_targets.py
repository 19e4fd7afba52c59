"""Offline model artefacts the project builds itself, by name (lazy imports keep start-up fast).

Each target names ``module:function``; the function has the signature
``build(out_dir: Path | None = None, quick: bool = False, max_minutes: float | None = None) -> Path``
and the module also offers ``is_built() -> bool`` and ``default_path() -> Path``.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

BUILD_TARGETS: dict[str, str] = {
    "parser": "alict_core.parsing.build",
    "mlm": "alict_core.mlm.build",
    "models": "alict_core.models.build",
}


def target_module(name: str) -> Any:
    return importlib.import_module(BUILD_TARGETS[name])


def builder(name: str) -> Callable[..., Any]:
    return target_module(name).build


def is_built(name: str) -> bool:
    try:
        return bool(target_module(name).is_built())
    except ImportError:
        return False
