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
    folder; the kernel releases it when the holder is killed); without ``fcntl`` nothing is locked."""
    if target is None:
        yield
        return
    from alict_core.common.config import artefact_dir
    from alict_core.common.manifest import named_dir

    key = hashlib.sha256(os.fsencode(named_dir(target).resolve())).hexdigest()[:24]
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(artefact_dir("locks") / f"out-{key}.lock", "a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlictError(f"{what} {str(target)!r} is being written by another command right now (it holds the "
                             "folder's lock); wait until it has finished, or choose another folder") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
