"""Faults of the user's environment (a full disk, a read-only folder, a loop of links), said in one line.

The CLI (exit 2) and the pages' error boundary ("Problem while …") read them the same way: a full disk under the
cache on the Run page was an "Unexpected error" with a traceback where the CLI said it in words.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3

from alict_core.common.errors import AlictError, link_loop

OUT_OF_SPACE = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})
OUT_OF_SPACE_ADVICE = ("free disk space (or raise the file-size or quota limit) and run the command again (files are "
                       "written atomically; a re-run resumes after the finished work it kept)")
_OUTPUTS: list[str] = []  # the output paths the running command names (--out, --export, --junit ...)


def note_outputs(paths: list[str]) -> None:
    """Remember the outputs the command names: a full disk whose error carries no file name (a write() or flush(),
    pyarrow's writer: the usual case) is then said with the output on that disk (pass 39)."""
    _OUTPUTS[:] = [str(path) for path in paths if path]


def _copy_out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` is ``shutil.copytree``'s Error listing a full disk among its failed copies (it is no OSError;
    a build's checkpoint copy said "internal error … please report it" on a full disk)."""
    failures = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    return isinstance(failures, list) and any(
        isinstance(item, tuple) and any(f"[Errno {code}]" in str(part) for part in item for code in OUT_OF_SPACE)
        for item in failures)


def _sqlite_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or the driver error SQLAlchemy wraps) is SQLite's SQLITE_FULL: no OSError, so a cache's
    SQLite build on a full disk said "internal error … please report it"."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "sqlite_errorcode", 0) if isinstance(current, sqlite3.Error) else 0
        if code & 0xFF == sqlite3.SQLITE_FULL:
            return True
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return False


def out_of_space(exc: BaseException) -> bool:
    """A full disk, a file-size limit or a quota, however the library that wrote said it (an OSError, safetensors'
    "(os error 28)", a copytree Error, SQLite's SQLITE_FULL)."""
    return ((isinstance(exc, OSError) and exc.errno in OUT_OF_SPACE)
            or any(f"(os error {code})" in str(exc) for code in OUT_OF_SPACE)
            or _copy_out_of_space(exc) or _sqlite_full(exc))


def is_staging_name(name: str) -> bool:
    """A hidden temporary name of an atomic write (``.x.html.<hex>.tmp``, ``.stream.tmp-<hex>``, ``.out.tmp-…``)."""
    return name.startswith(".") and (name.endswith(".tmp") or ".tmp-" in name)


def describe_os_error(exc: OSError) -> str:
    """An OSError as one line naming what the user can change (a read-only or hidden temporary file: its folder)."""
    name = exc.filename if isinstance(exc.filename, str) else None
    if name and exc.errno == errno.EROFS:  # a lock or cache file the user never named: its folder is what to change
        return f"cannot write into the folder {os.path.dirname(name) or '.'!r}: {exc.strerror or 'read-only'}"
    if name and is_staging_name(os.path.basename(name)):  # a write's hidden temporary file is no name the user
        folder = os.path.dirname(name) or "."  # gave: the folder it was to be written into is
        return f"cannot write into the folder {folder!r}: {exc.strerror or type(exc).__name__}"
    what = f" {name!r}" if name else ""
    return f"cannot access{what}: {exc.strerror or type(exc).__name__}"


def environment_fault(exc: BaseException) -> str | None:
    """One line for a fault of the user's environment (the user's to change, not a bug), or None."""
    loop = link_loop(exc)
    if loop:
        return loop
    if isinstance(exc, OSError) and exc.errno in (errno.ENAMETOOLONG, errno.EROFS, errno.EACCES, errno.EPERM):
        return describe_os_error(exc)
    if isinstance(exc, OSError) and exc.errno == errno.EBUSY:  # an output that is a mount point (a Docker volume):
        name = exc.filename if isinstance(exc.filename, str) else "the output"  # it cannot be swapped
        return (f"cannot replace {name!r}: {exc.strerror or 'busy'} (a mount point, e.g. a container volume, cannot "
                "be swapped whole); write into a folder or file inside it")
    if out_of_space(exc):
        reason = (exc.strerror if isinstance(exc, OSError) else None) or "File too large or no space left"
        return f"out of space while writing{_full_place(exc)} ({reason}): {OUT_OF_SPACE_ADVICE}"
    return None


NEARLY_FULL_BYTES = 16 * 1024 * 1024


def _nearly_full(path: str) -> bool:
    """Whether the disk of ``path`` (or of its nearest existing folder) has (almost) no room left."""
    folder = os.path.abspath(path)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def _full_place(exc: BaseException) -> str:
    """Where the disk is full: the folder of the file being written, else the command's output on a (nearly) full
    disk, else the cache when its disk is (a full cache beside an output disk with room was said as "free disk
    space": the user freed the wrong disk; a full output disk was said without any place: pass 39)."""
    name = exc.filename if isinstance(exc, OSError) and isinstance(exc.filename, str) else None
    if name:
        return f" into the folder {os.path.dirname(os.path.abspath(name))!r}"
    full = [os.path.abspath(path) for path in _OUTPUTS if _nearly_full(path)]
    if full:
        return f" the output {full[0]!r}" + (f" (and {len(full) - 1} more)" if len(full) > 1 else "")
    from alict_core.common.config import cache_dir

    try:
        root: str | None = str(cache_dir())
        if shutil.disk_usage(str(root)).free < NEARLY_FULL_BYTES:
            return f" into the cache folder {root!r} ($ALICT_CACHE_DIR)"
    except (OSError, AlictError):
        root = None
    if _OUTPUTS:  # no disk is full now (the failed write's files were removed): the places it may have been
        return f" the output {os.path.abspath(_OUTPUTS[0])!r}" + (f" or into the cache folder {root!r}" if root else "")
    return ""
