"""Safe builds: one file lock per target, a unique staging folder, a manifest, then an atomic swap.

A build of ``<root>/<profile>/<target>`` runs as::

    with build_lock(folder):            # <root>/<profile>/.<target>.lock (fcntl; waits or refuses)
        staging = new_staging(folder)   # <root>/<profile>/.<target>.staging-<random>/
        ... the trainer writes its files into staging ...
        publish(staging, folder, manifest)

``publish`` writes ``manifest.json`` (sha256 of every file) last, moves the previous folder aside,
renames the staging folder into place and only then deletes the old one. A build killed at any
point leaves the previous artefact in place (or aside, restored by ``recover`` on the next build)
and, at worst, a stale staging folder that the next build removes. Nothing outside the target's
own folder is ever deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from alict_core.common.errors import AlictError
from alict_core.common.jsonl import write_json
from alict_core.common.manifest import is_own, open_lock_file, recover_dir, replace_dir, staging_dir
from alict_core.models.artefacts import FORMAT, MANIFEST, file_hashes


class BuildLockedError(AlictError):
    """Another process is building the same target into the same folder."""


def lock_path(folder: Path) -> Path:
    return folder.parent / f".{folder.name}.lock"


@contextlib.contextmanager
def build_lock(folder: Path, wait: bool = True, log: Callable[[str], None] = print) -> Iterator[None]:
    """Hold the target's lock for the block: wait for a running build (``wait``) or raise BuildLockedError."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    path = lock_path(folder)
    with open_lock_file(path, readable=True) as handle:  # never a link's target or a named pipe
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            if not wait:
                raise BuildLockedError(
                    f"{folder} is being built by {holder} (lock {path}); wait for it to finish or build into "
                    "another folder with --out") from None
            log(f"waiting for {holder} to finish building {folder} …")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} since {datetime.now(timezone.utc):%H:%M:%S} UTC")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _aside_prefix(folder: Path) -> str:
    return f".{folder.name}.old-"


def _staging_prefix(folder: Path) -> str:
    return f".{folder.name}.staging-"


def recover(folder: Path) -> None:
    """Under the lock: restore a previous artefact left aside by a killed swap; drop stale staging folders."""
    parent = folder.parent
    if not parent.is_dir():
        return
    recover_dir(folder)  # replace_dir's two-rename fallback, completed
    for trash in parent.glob(f".{folder.name}.tmp-*"):  # the old content a killed exchange left on its way out:
        if is_own(trash):  # under the lock no writer of it is alive (a full model copy was kept for ever)
            shutil.rmtree(trash, ignore_errors=True)
    aside = sorted((p for p in parent.glob(_aside_prefix(folder) + "*") if is_own(p)), key=lambda p: p.stat().st_mtime)
    for old in aside:  # only folders this program named (a user's `.x.old-…` beside a `build --out` stays)
        if not folder.exists():
            old.rename(folder)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for stale in parent.glob(_staging_prefix(folder) + "*"):
        if is_own(stale):
            shutil.rmtree(stale, ignore_errors=True)


def new_staging(folder: Path) -> Path:
    """A fresh, unique staging folder beside ``folder`` (same file system, so the final rename is atomic)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return staging_dir(folder.parent, _staging_prefix(folder))


def write_manifest(staging: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Write ``manifest.json`` (the build's description + sha256 of every file) into ``staging``."""
    manifest = {"format": FORMAT, **info, "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "files": file_hashes(staging)}
    write_json(staging / MANIFEST, manifest)
    return manifest


def publish(staging: Path, folder: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Seal ``staging`` with a manifest and swap it into ``folder``; returns the manifest."""
    manifest = write_manifest(staging, info)
    replace_dir(staging, folder)  # an atomic exchange: a kill or Ctrl-C between two renames left no artefact
    return manifest  # at all (every reader said "not built" and asked for a rebuild of a good one)
