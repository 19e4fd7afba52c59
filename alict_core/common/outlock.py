"""One command per output folder at a time: the ``--out`` of ``run``, ``lego``, ``seeds`` and ``expand``."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from alict_core.common.errors import AlictError


@contextmanager
def exclusive_output(target: Path | str | None, what: str = "--out") -> Iterator[None]:
    """Hold an output folder for one command from its first step to its last, or refuse at once (exit 2).

    Two commands writing one ``--out`` at once each said "saved to X" while the second's swap threw the first's
    result away. The second one now stops before any work with one message naming the folder (it does not wait:
    the first one's result would be replaced all the same). Sequential writers replace the folder as before.
    The lock is ``flock`` on ``<cache>/locks/out-<hash of the path>.lock`` (nothing is written beside the user's
    folder; the kernel releases it when the holder is killed; the holder removes the file as it lets go, a killed
    holder leaves its empty file); without ``fcntl`` nothing is locked."""
    if target is None:
        yield
        return
    from alict_core.common.config import artefact_dir
    from alict_core.common.manifest import named_dir, open_lock_file

    key = hashlib.sha256(os.fsencode(named_dir(target).resolve())).hexdigest()[:24]
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = artefact_dir("locks") / f"out-{key}.lock"
    while True:
        handle = open_lock_file(path)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise AlictError(f"{what} {str(target)!r} is being written by another command right now (it holds the "
                             "output's lock); wait until it has finished, or give another path") from None
        if _same_file(handle, path):
            break
        handle.close()  # its holder removed the file as it let go: lock the path's current file
    try:
        yield
    finally:
        try:  # removed while still held (a lock file per --out path ever used piled up): whoever locked the old
            # file meanwhile sees it is no longer the path's and locks afresh
            path.unlink()
        except OSError:
            pass
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def _same_file(handle, path: Path) -> bool:
    """Whether the open ``handle`` is still the file at ``path`` (not one its last holder removed)."""
    try:
        on_disk, opened = os.stat(path), os.fstat(handle.fileno())
    except OSError:
        return False
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)
