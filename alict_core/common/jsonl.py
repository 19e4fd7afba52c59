"""Plain, serialisable artefacts: JSONL/JSON written atomically (no partial files)."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import re
import secrets
import stat
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from alict_core.common.errors import AlictError

NAME_MAX = 255  # bytes of one path component


def new_temp_file(path: Path) -> Path:
    """A new empty hidden file ``.<name>.<random>.tmp`` beside ``path`` that becomes ``path`` by a rename.

    Created with the mode of any new file (0666 less the umask, e.g. 0644), or with the permissions of the
    regular file it will replace (a file the user made private stays private; the owner may always read and
    write it). ``tempfile.mkstemp`` would make it 0600, and every file renamed from it would stay unreadable to
    anyone else.
    """
    path = Path(path)
    try:
        replaced = os.lstat(path)
        keep = stat.S_IMODE(replaced.st_mode) & 0o777 if stat.S_ISREG(replaced.st_mode) else None
    except OSError:
        keep = None
    stem = _temp_stem(path.name)
    while True:
        token = secrets.token_hex(3)
        tmp = path.parent / f".{stem}.{token}{_temp_seal(stem, token)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        except FileExistsError:
            continue
        try:
            if keep is not None:  # the owner keeps reading and writing: a read-only file can still be re-written
                os.fchmod(fd, keep | stat.S_IRUSR | stat.S_IWUSR)
        finally:
            os.close(fd)
        return tmp


def _temp_stem(name: str) -> str:
    """The part of a target's name its temporary files carry: "." + ".<12 hex>.tmp" must fit too."""
    return os.fsencode(name)[:NAME_MAX - 18].decode(errors="ignore")


def _temp_seal(stem: str, token: str) -> str:
    """The second half of a temporary file's 12 hex digits: computed from its name and the random first half, so
    :func:`clean_stale_temp_files` tells this program's files from a user's ``.notes.yaml.0123456789ab.tmp``."""
    return hashlib.sha256(f"alict-studio temporary file:{stem}:{token}".encode()).hexdigest()[:6]


TEMP_FILE = re.compile(r"^\.(?P<stem>.+)\.(?P<token>[0-9a-f]{6})(?P<seal>[0-9a-f]{6})\.tmp$")


def _is_own_temp_name(name: str) -> bool:
    """Whether ``name`` is one :func:`new_temp_file` gives (its seal checked)."""
    found = TEMP_FILE.match(name)
    return found is not None and found["seal"] == _temp_seal(found["stem"], found["token"])


def is_own_temp_file(path: Path) -> bool:
    """Whether ``path`` is a regular file named by :func:`new_temp_file` (its seal checked)."""
    return _is_own_temp_name(Path(path).name) and Path(path).is_file() and not Path(path).is_symlink()


SQLITE_SIDECARS = ("-journal", "-wal", "-shm")  # what SQLite keeps beside a database being written


def clean_stale_temp_files(parent: Path, max_age_s: float = 3600.0, name: str | None = None) -> int:
    """Remove the temporary files of killed writers in ``parent`` older than ``max_age_s`` (only names this program
    made and sealed, never a user's file, never a younger one a writer may still be filling); how many were removed.
    A writer killed during a save leaves its hidden ``.<name>.<token>.tmp`` (the target keeps its old content).
    ``name``: only the temporary files of that target (what :func:`atomic_path` removes before each write)."""
    now, removed = time.time(), 0
    pattern = ".*.tmp" if name is None else f".{glob.escape(_temp_stem(name))}.*.tmp"
    for tmp in Path(parent).glob(pattern):
        try:
            if is_own_temp_file(tmp) and now - tmp.lstat().st_mtime > max_age_s:
                tmp.unlink()
                removed += 1
                for sidecar in SQLITE_SIDECARS:  # a killed SQLite build's journal stayed once its file was gone
                    Path(f"{tmp}{sidecar}").unlink(missing_ok=True)
        except OSError:
            continue
    return removed + _clean_orphan_sidecars(Path(parent), pattern, now - max_age_s)


def _clean_orphan_sidecars(parent: Path, pattern: str, older_than: float) -> int:
    """Remove SQLite's journal files left beside this program's temporary files that are gone (a build that failed
    on a full disk: its temporary file was removed, the journal stayed for ever); how many were removed."""
    removed = 0
    for sidecar in SQLITE_SIDECARS:
        for orphan in parent.glob(pattern + sidecar):
            base = orphan.name[: -len(sidecar)]
            try:
                if (_is_own_temp_name(base) and not os.path.lexists(parent / base) and orphan.is_file()
                        and not orphan.is_symlink() and orphan.lstat().st_mtime < older_than):
                    orphan.unlink()
                    removed += 1
            except OSError:
                continue
    return removed


_SWEPT: set[str] = set()  # folders whose stale temporary files this process removed (bounded by the folders written)
_SWEPT_LOCK = threading.Lock()


def _sweep_once(folder: Path) -> None:
    """Remove the stale temporary files of every target in ``folder``, once per process: a cache entry killed while
    being written and never written again (its re-run came at once, while the file was young) kept a hidden copy
    for ever (a 2.7 MB annotations table)."""
    key = os.fspath(folder)
    with _SWEPT_LOCK:
        if key in _SWEPT or len(_SWEPT) >= 10_000:
            return
        _SWEPT.add(key)
    clean_stale_temp_files(folder)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success.

    A failure to create or rename names ``path`` (never the hidden temporary file); ``path`` being a folder is
    refused before anything is written.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name", str(path))
    if path.exists() and not path.is_file():  # /dev/null, /dev/stdout: the node (or link) would be replaced
        raise AlictError(f"{str(path)!r} is a device, pipe or socket, not a file; give a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_once(path.parent)  # writes of any file here killed before their rename (one pass per folder and process)
    clean_stale_temp_files(path.parent, name=path.name)  # those of writes of this file killed before their rename
    tmp_path = new_temp_file(path)
    try:
        yield tmp_path
        try:
            os.replace(tmp_path, path)
        except OSError as exc:  # e.g. a folder appeared at ``path`` meanwhile: name the user's path
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
        for sidecar in SQLITE_SIDECARS:  # a failed SQLite build's journal goes with its file
            with contextlib.suppress(OSError):  # a name at the length limit has no room for a journal's
                Path(f"{tmp_path}{sidecar}").unlink(missing_ok=True)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows as JSON lines atomically; return the number written."""
    count = 0
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False, default=_default) + "\n")
                count += 1
    return count


class NotARegularFileError(AlictError, OSError):
    """An artefact file that is a pipe, device, socket or folder (reading a pipe would wait for a writer)."""


def open_regular(path: Path, encoding: str | None = "utf-8") -> Any:
    """``open(path)`` for reading, refusing (never blocking on) anything but a regular file: the file is opened
    without waiting and checked on its descriptor, so a pipe swapped in after any earlier check is named too."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else \
                "a device or socket"
            raise NotARegularFileError(f"{path}: is {kind}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, encoding=encoding) if encoding else open(fd, "rb")


class TooDeepError(ValueError):
    """JSON nested deeper than Python's recursion limit: a damaged (or hostile) file, read as every ValueError is."""


def _parsed(load: Any, source: Any) -> Any:
    try:
        return load(source)
    except RecursionError:  # "[" * 50000: every reader catching ValueError says "damaged", never exit 3
        raise TooDeepError("JSON nested too deeply") from None


def loads(text: str | bytes) -> Any:
    """``json.loads`` whose too-deep nesting is :class:`TooDeepError` (a ValueError), never a RecursionError."""
    return _parsed(json.loads, text)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open_regular(path) as handle:
        return [_parsed(json.loads, line) for line in handle if line.strip()]


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open_regular(path) as handle:
        for line in handle:
            if line.strip():
                yield _parsed(json.loads, line)


def write_json(path: Path, obj: Any) -> None:
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(obj, handle, ensure_ascii=False, indent=2, default=_default)


def read_json(path: Path) -> Any:
    with open_regular(path) as handle:
        return _parsed(json.load, handle)


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
