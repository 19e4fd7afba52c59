"""Saving specs into the user's workspace: safe file names, the target file, the save check, atomic writes.

The built-in specs are read-only; an edited or new spec is saved as ``<workspace>/specs/<task>/<id>.yaml``
(see :func:`alict_core.lcspec.workspace_spec_dir`), where it replaces the built-in of the same id.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from alict_core.common import jsonl
from alict_core.common.errors import SpecError
from alict_core.lcspec.loader import is_spec_file_name, specs_in, workspace_spec_file

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,79}$")


def safe_spec_name(name: str) -> str:
    """Validate a spec file stem: letters, digits, '_' and '-' only (no path separators, no dots)."""
    stem = name.strip()
    if stem.endswith((".yaml", ".yml")):
        stem = stem.rsplit(".", 1)[0]
    if not SAFE_NAME.match(stem):
        raise SpecError(
            f"unsafe spec file name {name!r}: use 1-80 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return stem


def spec_target(directory: Path, name: str) -> Path:
    """The file a spec named ``name`` is saved to, guaranteed to lie inside ``directory``: the user's file of that
    id when there is one (``.yaml`` or ``.yml``, so a save never leaves two files of one spec), else ``<name>.yaml``."""
    directory = Path(directory).resolve()
    stem = safe_spec_name(name)
    existing = specs_in(directory).get(stem)
    target = (existing if existing is not None else directory / f"{stem}.yaml").resolve()
    if target.parent != directory:
        raise SpecError(f"spec file name {name!r} leaves the spec folder {directory}")
    return target


def save_refusal(target: Path, spec_id: str, overwrite: bool, spec_task: str | None = None,
                 task: str | None = None) -> tuple[str, str] | None:
    """Why the spec ``spec_id`` is not saved as ``target`` — ("error" or "warning", message) — or None: the spec
    must be of the folder's ``task`` (a spec of the other task saved there broke every page of this one), the file
    name must be the spec's id, and an existing file is replaced only with ``overwrite``."""
    if task is not None and spec_task is not None and spec_task != task:
        return ("error", f"This spec says `task: {spec_task}`, but it would be saved with the {task} specs: switch "
                         f"to the {spec_task} task to save it there, or change `task:` to {task}.")
    if target.stem != spec_id:
        return ("error", f"The file name must equal the spec's id ({spec_id!r}): change `id:` in the YAML "
                         f"to save it as a new LC, or save it as {spec_id}.")
    if target.exists() and not overwrite:
        return ("warning", f"{target.name} exists — tick 'Overwrite if it exists' to replace it.")
    return None


def save_spec_text(directory: Path, name: str, text: str, overwrite: bool = False) -> Path:
    """Write spec YAML atomically; refuse to replace an existing file unless ``overwrite``.

    Without ``overwrite`` the file is put in place by a hard link, which fails when the name exists: a save of the
    same new spec by another session meanwhile is refused, never silently replaced (both were told "saved")."""
    from alict_core.common.limits import limits

    target = spec_target(directory, name)
    body = text if text.endswith("\n") else text + "\n"
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > limits().spec_bytes:  # every later load would refuse it: refused now, nothing written
        raise SpecError(f"{target.name}: {size:,} bytes, over the spec size limit of {limits().spec_bytes:,} "
                        "(setting ALICT_LIMIT_SPEC_BYTES); nothing was saved")
    if target.parent.is_dir():
        jsonl.clean_stale_temp_files(target.parent)  # temporary files of saves killed before their rename
    exists = SpecError(f"{target.name} already exists in the workspace (saved meanwhile from another session?); "
                       "confirm overwrite to replace it")
    if target.exists() and not overwrite:
        raise exists
    new = not target.exists()
    if new:  # a new file, ticked "overwrite" or not (the tick got past the limit)
        _check_room(target.parent, 1)
    if overwrite:
        target.parent.mkdir(parents=True, exist_ok=True)
        with jsonl.atomic_path(target) as tmp:
            tmp.write_text(body, encoding="utf-8")
        if new:
            _recheck_room(target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)  # the first spec saved for a task makes its folder
    tmp = jsonl.new_temp_file(target)  # looked up at the call (tests put a racing session in its place)
    try:
        tmp.write_text(body, encoding="utf-8")
        os.link(tmp, target)  # atomic, and only if no file of that name appeared since the check
    except FileExistsError:
        raise exists from None
    finally:
        tmp.unlink(missing_ok=True)
    _recheck_room(target)
    return target


def _recheck_room(target: Path) -> None:
    """After a new spec file is written: another session's save at the same moment may have taken the folder over
    the limit too; this one is taken back."""
    try:
        _check_room(target.parent, 0)
    except SpecError:
        target.unlink(missing_ok=True)
        raise


def _check_room(directory: Path, adding: int) -> None:
    """Refuse a new spec file that would take ``directory`` over ``ALICT_LIMIT_WORKSPACE_SPECS``: every later load
    of the task refuses a folder over the limit (a Save past it left every page of the task showing only that)."""
    from alict_core.common.limits import limits, setting

    held = sum(1 for path in directory.iterdir() if is_spec_file_name(path.name)) if directory.is_dir() else 0
    limit = limits().workspace_specs
    if held + adding > limit:
        raise SpecError(f"{directory}: {held:,} spec files; a new one would be over the limit of {limit:,} "
                        f"({setting('workspace_specs')}); nothing was saved: discard or move specs you do not use")


def discard_workspace_copy(task: str, lc_id: str) -> Path | None:
    """Delete the workspace copy of a spec, ``.yaml`` or ``.yml`` (the built-in of the same id applies again);
    the deleted path, or None when there was none."""
    target = workspace_spec_file(task, lc_id)
    if target is None:
        return None
    target.unlink(missing_ok=True)
    return target
