"""Spec access for the app: built-in specs (read-only) overridden or extended by the user's workspace.

The editor saves only into the workspace (``alict_core.lcspec.workspace_spec_dir``), never into the
package's built-in ``specs/``; loading sees the workspace copy of a spec in place of the built-in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import streamlit as st
import yaml

from alict_core import lcspec as core_spec
from alict_core.common.hashing import hash_json
from alict_core.lcspec import LCSpec
from alict_core.lcspec.workspace import discard_workspace_copy


def spec_dirs(task: str) -> list[Path]:
    """Folders the specs of a task are read from: built-ins, then the user's workspace."""
    return core_spec.spec_dirs(task)


def save_dir(task: str) -> Path:
    """Where the editor saves the specs of a task (the user's workspace)."""
    return core_spec.workspace_spec_dir(task)


def _files_key(paths: Sequence[Path]) -> str:
    return hash_json([[str(p), p.stat().st_mtime_ns, p.stat().st_size] for p in paths if p.exists()])


@st.cache_resource(show_spinner=False, max_entries=16)
def _task_specs(task: str, files_key: str) -> list[LCSpec]:
    return core_spec.load_task_specs(task)


def task_specs(task: str) -> list[LCSpec]:
    """All LC specs of a task; reloaded when a spec file changes or a workspace spec is added."""
    return _task_specs(task, _files_key(core_spec.spec_files(task)))


def spec_source(spec: LCSpec) -> Path | None:
    """The file a spec was loaded from (workspace copy or built-in), if it has one."""
    path = core_spec.spec_path(spec.task, spec.id)
    return path if path.exists() else None


def is_user_spec(spec: LCSpec) -> bool:
    """True when the spec is read from the user's workspace (not a built-in default)."""
    source = spec_source(spec)
    return source is not None and source.parent == save_dir(spec.task)


def discard_user_copy(spec: LCSpec) -> Path | None:
    """Delete the workspace copy of a spec, ``.yaml`` or ``.yml`` (the built-in of the same id applies again);
    the deleted path."""
    return discard_workspace_copy(spec.task, spec.id)


def builtin_text(spec: LCSpec) -> str | None:
    """The YAML text of the built-in spec of the same id ('None' for a spec the user created)."""
    path = core_spec.spec_dir(spec.task) / f"{spec.id}.yaml"
    return path.read_text(encoding="utf-8") if path.exists() else None


def spec_text(spec: LCSpec) -> str:
    """The YAML text of a spec (its file, or a dump of the object)."""
    path = spec_source(spec)
    if path is not None:
        return path.read_text(encoding="utf-8")
    return yaml.safe_dump(spec.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True)


def parse_spec_text(text: str, source_name: str) -> LCSpec:
    """Validate spec YAML (raises SpecValidationError naming the line and field)."""
    return core_spec.parse_spec_text(text, source_name)


def spec_key(spec: Any) -> str:
    """Content hash of a spec object (keys seed caches)."""
    return hash_json(spec.model_dump(mode="json"))
