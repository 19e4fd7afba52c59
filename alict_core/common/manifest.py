"""Verified artefacts: manifests, atomic folders and quarantine, in one place.

Every stored artefact carries a small manifest (``manifest.json`` in a folder, or ``<file>.manifest.json``
beside a single file)::

    {"format": 1, "kind": "run", "key": "<content key it was built for>", "rows": 120,
     "files": {"cases.jsonl": "<sha256>", ...}}

Reads call :func:`verify_dir` / :func:`verify_file`; a mismatch raises :class:`CorruptArtefactError` (one
line naming the artefact and what is wrong). Callers that can rebuild move the entry aside with
:func:`quarantine` (never delete) and rebuild it. Folders are written whole with :func:`atomic_dir`: a
temporary sibling is filled and swapped into place only when complete, so a killed writer leaves the old
state or the new one, never a mix.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fnmatch
import glob
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
import time
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator, Sequence, TypeVar

from alict_core.common.errors import AlictError

log = logging.getLogger("alict_core")

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
FILE_MANIFEST_SUFFIX = ".manifest.json"
QUARANTINE = "quarantine"


class CorruptArtefactError(AlictError):
    """A stored artefact fails its manifest check (missing, wrong key, wrong size, wrong checksum)."""


@dataclass(frozen=True)
class Manifest:
    """What an artefact was built for and how to check it."""

    kind: str
    key: str
    rows: int
    files: dict[str, str] = field(default_factory=dict)
    format: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "Manifest":
        if not isinstance(data, dict):
            raise CorruptArtefactError(f"{where}: manifest is not a JSON object")
        try:
            manifest = cls(kind=str(data["kind"]), key=str(data["key"]), rows=int(data["rows"]),
                           files={str(k): str(v) for k, v in dict(data.get("files") or {}).items()},
                           format=int(data["format"]), extra=dict(data.get("extra") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptArtefactError(f"{where}: malformed manifest ({exc})") from None
        if manifest.format != FORMAT_VERSION:
            raise CorruptArtefactError(f"{where}: manifest format {manifest.format}, "
                                       f"this version reads {FORMAT_VERSION}")
        for name in manifest.files:  # '../../etc/hostname' or '/proc/x' was opened, hashed and its folder listed
            parts = PurePosixPath(name).parts
            if not name or name.startswith("/") or "\\" in name or any(p in ("..", ".", "") for p in parts):
                raise CorruptArtefactError(f"{where}: the manifest names {name[:80]!r}, not a file inside the "
                                           "artefact (edited by hand?)")
        return manifest


def not_a_file(path: Path) -> str | None:
    """Why ``path`` is no regular file ("is missing", "is a named pipe (FIFO)", ...), or None when it is one.
    Never opens the path: a pipe or device is named, not read (a read would block or never end)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "is a link that leads nowhere" if os.path.islink(path) else "is missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file"


def sha256_file(path: Path) -> str:
    """sha256 of a regular file; opened without blocking, so a pipe swapped in after a check is refused, not
    waited on."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CorruptArtefactError(f"{path}: is not a regular file (a pipe, device or folder)")
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    from alict_core.common.jsonl import new_temp_file

    tmp = new_temp_file(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _dump(manifest: Manifest) -> bytes:
    return json.dumps(manifest.to_dict(), indent=1, sort_keys=True).encode("utf-8")


def _read_manifest(path: Path, where: str) -> Manifest:
    problem = not_a_file(path)
    if problem == "is missing":
        raise CorruptArtefactError(f"{where}: no manifest (written by an older version, or interrupted)")
    if problem:
        raise CorruptArtefactError(f"{where}: {path.name} {problem}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe swapped in after the check is not waited on
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise CorruptArtefactError(f"{where}: {path.name} is not a regular file")
            data = _loads(handle.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise CorruptArtefactError(f"{where}: unreadable manifest ({type(exc).__name__})") from None
    return Manifest.from_dict(data, where)


# --- folders ----------------------------------------------------------------------------------------

def write_manifest(directory: Path, kind: str, key: str, rows: int, extra: dict[str, Any] | None = None) -> Manifest:
    """Hash every regular file of ``directory`` (recursively, but no manifest) and write its manifest."""
    directory = Path(directory)
    files = {p.relative_to(directory).as_posix(): sha256_file(p)
             for p in sorted(directory.rglob("*")) if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")}
    manifest = Manifest(kind=kind, key=key, rows=int(rows), files=files, extra=dict(extra or {}))
    _write_bytes_atomic(directory / MANIFEST, _dump(manifest))
    return manifest


def verify_dir(directory: Path, kind: str, key: str | None = None, label: str | None = None) -> Manifest:
    """Check a folder against its manifest: kind, key (when given), presence and checksum of every file."""
    directory = Path(directory)
    where = label or f"{kind} {directory.name}"
    manifest = _read_manifest(directory / MANIFEST, where)
    if manifest.kind != kind:
        raise CorruptArtefactError(f"{where}: manifest is for a {manifest.kind!r}, not a {kind!r}")
    if key is not None and manifest.key != key:
        raise CorruptArtefactError(f"{where}: built for key {manifest.key}, expected {key}")
    inside = directory.resolve()
    for name, digest in manifest.files.items():
        path = directory / name
        if not path.resolve().is_relative_to(inside):  # a link in the folder that leads out of it
            raise CorruptArtefactError(f"{where}: file {name} leads outside the artefact's folder (a link?)")
        problem = not_a_file(path)
        if problem:
            raise CorruptArtefactError(f"{where}: file {name} {problem}")
        if sha256_file(path) != digest:
            raise CorruptArtefactError(f"{where}: file {name} does not match its checksum (changed or truncated)")
    _refuse_unlisted(directory, manifest, where)
    return manifest


def _refuse_unlisted(directory: Path, manifest: Manifest, where: str) -> None:
    """A file added to a subfolder the manifest lists (``results/part-00001.parquet`` beside the listed parts) is
    read by every glob of that folder: refused like a changed file (it doubled a run's counts)."""
    listed = set(manifest.files)
    for sub in sorted({Path(name).parent for name in listed if Path(name).parent != Path(".")}):
        try:
            names = sorted(p.name for p in (directory / sub).iterdir() if not p.name.startswith("."))
        except OSError:
            continue
        extra = [name for name in names if (sub / name).as_posix() not in listed]
        if extra:
            raise CorruptArtefactError(f"{where}: {sub.as_posix()}/{extra[0]} is not one of its recorded files "
                                       "(added by hand?); remove it or re-run the command that wrote the artefact")


# --- single files ------------------------------------------------------------------------------------

def file_manifest_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + FILE_MANIFEST_SUFFIX)


def write_file_manifest(path: Path, kind: str, key: str, rows: int, extra: dict[str, Any] | None = None,
                        companions: Sequence[Path] = (), source: Path | None = None) -> Manifest:
    """Manifest of one file, written beside it (``<name>.manifest.json``); ``companions``: files beside it that are
    read with it (an expansion artefact's ``.meta.json`` counts), checked with it. ``source``: the bytes to record
    when they are not yet at ``path`` (the temporary file about to be renamed into place)."""
    path = Path(path)
    files = {path.name: sha256_file(Path(source) if source is not None else path)}
    files.update({Path(c).name: sha256_file(Path(c)) for c in companions if Path(c).is_file()})
    manifest = Manifest(kind=kind, key=key, rows=int(rows), files=files, extra=dict(extra or {}))
    _write_bytes_atomic(file_manifest_path(path), _dump(manifest))
    return manifest


def verify_file(path: Path, kind: str, key: str | None = None, label: str | None = None) -> Manifest:
    """Check one file against the manifest beside it."""
    path = Path(path)
    where = label or f"{kind} {path.name}"
    problem = not_a_file(path)
    if problem:
        raise CorruptArtefactError(f"{where}: file {problem}")
    manifest = _read_manifest(file_manifest_path(path), where)
    if manifest.kind != kind:
        raise CorruptArtefactError(f"{where}: manifest is for a {manifest.kind!r}, not a {kind!r}")
    if key is not None and manifest.key != key:
        raise CorruptArtefactError(f"{where}: built for key {manifest.key}, expected {key}")
    if manifest.files.get(path.name) != sha256_file(path):
        raise CorruptArtefactError(f"{where}: does not match its checksum (changed or truncated)")
    for name, digest in manifest.files.items():  # its companions (an edited .meta.json was served as counts)
        companion = path.with_name(name)
        if name != path.name and (not companion.is_file() or sha256_file(companion) != digest):
            raise CorruptArtefactError(f"{where}: its {name} is missing or does not match its checksum")
    return manifest


# --- quarantine ---------------------------------------------------------------------------------------

def quarantine_root() -> Path:
    from alict_core.common.config import artefact_dir

    return artefact_dir(QUARANTINE)


def quarantine(path: Path, kind: str, root: Path | None = None) -> Path | None:
    """Move a bad artefact (file, its manifest, or folder) aside under ``<cache>/quarantine/<kind>/``.

    Never deletes; returns the new location (None when there was nothing to move).
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    target_dir = Path(root or quarantine_root()) / kind
    target_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = target_dir / f"{path.name}.{stamp}.{os.getpid()}"
    n = 0
    while target.exists():
        n += 1
        target = target_dir / f"{path.name}.{stamp}.{os.getpid()}.{n}"
    try:
        os.replace(path, target)
    except OSError:  # another filesystem: copy then remove the original
        shutil.move(str(path), str(target))
    side = file_manifest_path(path)
    if side.exists():
        os.replace(side, target.with_name(target.name + FILE_MANIFEST_SUFFIX))
    return target


def report_bad(error: Exception, moved_to: Path | None) -> None:
    """One warning line for a quarantined artefact (the CLI prints warnings to stderr)."""
    where = f"; moved aside to {moved_to.parent.name}/{moved_to.name}" if moved_to is not None else ""
    log.warning("%s%s; rebuilding it", error, where)


T = TypeVar("T")
READ_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, OSError, EOFError)


def load_checked(path: Path, kind: str, key: str | None, read: Callable[[Path], T], *, adopt_legacy: bool = False,
                 quarantine_root: Path | None = None) -> T | None:
    """``read(path)`` after verifying the file's manifest; None when absent or bad (then the caller rebuilds).

    A bad entry (no/other manifest, wrong key, changed bytes, unreadable) is reported in one line and
    quarantined, never served. ``adopt_legacy``: a file from before manifests that reads cleanly gets one.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        if adopt_legacy and not file_manifest_path(path).exists():
            value = read(path)
            write_file_manifest(path, kind, key or "", len(value) if hasattr(value, "__len__") else 0)
            return value
        verify_file(path, kind, key)
        return read(path)
    except CorruptArtefactError as exc:
        error = exc
    except READ_ERRORS as exc:
        error = CorruptArtefactError(f"{kind} {path.name}: unreadable ({type(exc).__name__})")
    with entry_lock(path):  # a writer between its manifest and its rename holds this lock: checked again after it
        if not path.exists():
            return None
        try:
            verify_file(path, kind, key)
            return read(path)
        except (CorruptArtefactError, *READ_ERRORS):
            pass
        report_bad(error, quarantine(path, kind, quarantine_root))
    return None


@contextmanager
def entry_lock(path: Path) -> Iterator[None]:
    """Exclusive among processes for one checked file: held by its writer while the file and its manifest change
    (``save_checked``, the sharded artefacts' finish), and by a reader before it quarantines an entry it found bad,
    so a reader never moves aside a writer's entry between its two steps (pass 16 K2, pass 17 K1). Its own lock
    file (``entry-*``): a writer holding the entry's folder lock can still take it."""
    from alict_core.common.config import artefact_dir

    digest = hashlib.sha256(os.fsencode(Path(path).resolve())).hexdigest()[:24]
    with file_lock(artefact_dir("locks") / f"entry-{digest}.lock"):
        yield


def save_checked(path: Path, kind: str, key: str, rows: int, write: Callable[[Path], Any]) -> Path:
    """``write(tmp)``, record its manifest, then rename it into place (a file without one is never served)."""
    from alict_core.common.jsonl import atomic_path

    path = Path(path)
    with entry_lock(path), atomic_path(path) as tmp:
        write(tmp)
        # the manifest first, then the file: a reader between the two finds no file (it computes it too), never a
        # file without its manifest, which it quarantined under the writer (who then failed: pass 16, K2); a reader
        # that finds the old file beside the new manifest waits for this lock before it quarantines anything
        write_file_manifest(path, kind, key, rows, source=tmp)
    return path


# --- atomic folders -------------------------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False when not supported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(str(a)), _AT_FDCWD, os.fsencode(str(b)), _RENAME_EXCHANGE)
    return result == 0


def named_dir(target: Path | str) -> Path:
    """``target`` as an absolute path with a name (``.``, ``sub/..`` become the folder they mean; ``/`` is refused),
    so its hidden siblings (``.<name>.old``, ``.<name>.tmp-*``) can be named."""
    path = Path(os.path.abspath(target))
    if not path.name:
        raise AlictError(f"output folder {str(target)!r} is the root folder; give a folder inside it")
    return path


OWN_NAME = re.compile(r"^(?P<prefix>\..*\.(?:tmp|old|staging)-)(?P<token>[0-9a-f]{12})-(?P<seal>[0-9a-f]{10})$")


def _seal(prefix: str, token: str) -> str:
    return hashlib.sha256(f"alict-studio temporary folder:{prefix}:{token}".encode()).hexdigest()[:10]


def own_name(prefix: str) -> str:
    """A new name for a temporary folder this program makes (``<prefix><token>-<seal>``, e.g.
    ``.out.tmp-3f…-9a…``): a random token and a seal computed from it, by which :func:`is_own` tells the
    program's own folders from a user's (``.photos.tmp-2019``, a backup ``.out.old``: both were removed or moved
    into place as if they were an interrupted swap's)."""
    token = secrets.token_hex(6)
    return f"{prefix}{token}-{_seal(prefix, token)}"


def is_own(path: Path) -> bool:
    """Whether ``path`` is a temporary folder this program named (:func:`own_name`); only those are cleaned or
    recovered."""
    found = OWN_NAME.match(Path(path).name)
    if found is None:
        return False
    return found["seal"] == _seal(found["prefix"], found["token"]) and Path(path).is_dir()


def _old_name(target: Path) -> Path:
    """Where the old content of ``target`` waits during a two-rename swap (a sealed name)."""
    return target.with_name(own_name(f".{target.name}.old-"))


def _olds(target: Path) -> list[Path]:
    """The old copies of ``target`` this program left beside it in a swap interrupted between its renames."""
    olds = [p for p in target.parent.glob(f".{glob.escape(target.name)}.old-*") if is_own(p)]
    return sorted(olds, key=lambda p: p.stat().st_mtime, reverse=True)


def recover_dir(target: Path) -> None:
    """Finish an interrupted swap: if ``target`` is missing but its old copy (one this program named) is beside it,
    put it back; a folder of the same pattern that this program did not name is left alone."""
    target = named_dir(target)
    for old in _olds(target):
        if not target.exists():
            os.replace(old, target)
        else:
            shutil.rmtree(old, ignore_errors=True)


def clean_stale(parent: Path, max_age_s: float = 3600.0) -> None:
    """Remove temporary folders of killed writers older than ``max_age_s``: only those this program named
    (:func:`is_own`), never a user's ``.<name>.tmp-…`` folder."""
    now = time.time()
    for tmp in Path(parent).glob(".*.tmp-*"):
        try:
            if is_own(tmp) and now - _newest_mtime(tmp) > max_age_s:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            continue


def _newest_mtime(folder: Path, limit: int = 10_000) -> float:
    """The newest modification time of ``folder`` and what it holds (at most ``limit`` folders looked at): a live
    writer's staging keeps the folder's own creation time while it writes into sub-folders, and was swept as stale
    by another run after a clock jump (pass 37)."""
    newest = folder.stat().st_mtime
    for i, (root, dirs, files) in enumerate(os.walk(folder)):
        for name in (*dirs, *files):
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
            except OSError:
                continue
        if i >= limit:
            break
    return newest


def _manifest_json(path: Path) -> Any:
    """A manifest.json's content (at most 1 MiB read, never a pipe), else None (unreadable, not JSON)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe is never waited on
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return _loads(handle.read(1 << 20).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _own_kind(path: Path) -> str | None:
    """The kind of a manifest this module wrote (``run``, ``export``), or ``model`` for the manifest ``build``
    writes into a built model folder (``format``, ``target``, ``profile``, the sha256 of every ``files`` entry:
    a file added there breaks the model's check); else None (some other program's manifest.json, or
    unreadable)."""
    data = _manifest_json(path)
    if isinstance(data, dict) and {"format", "target", "profile"} <= data.keys() and isinstance(
            data.get("files"), dict):
        return "model"
    try:
        return Manifest.from_dict(data, path.name).kind if data is not None else None
    except (ValueError, TypeError, CorruptArtefactError):
        return None


def _is_ours(path: Path) -> bool:
    """Whether ``path`` is a manifest this module wrote (not some other program's manifest.json)."""
    return _own_kind(path) is not None


ARTEFACT_NAMES = {"run": "a saved run", "export": "a report export, written by `report --export`",
                  "harden export": "a hardening export, written by `harden export`",
                  "lego": "an NLPLego folder, written by `lego`", "seeds": "seeds, written by `seeds`",
                  "expansions": "expansions, written by `expand`",
                  "model": "a built model, written by `build`",
                  "foreign": f"another program's {MANIFEST}"}
MERGE_KINDS = ("seeds", "expansions")  # artefacts written by merging files into their folder
LC_FILES_LOOKED_AT = 20  # of a folder's *.jsonl files, the first ones read to tell a seeds/expansions folder


def _first_row(path: Path) -> Any:
    """The first non-empty line of a JSONL file as JSON (at most 1 MiB read, never a pipe), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            for line in handle.read(1 << 20).splitlines():
                if line.strip():
                    return _loads(line.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return None


def lc_file_name(group: str) -> str:
    """The file name of one LC's (or one suite group's) rows in a seeds or expansions folder: the id itself when it is
    a plain name; else its runs of other characters as ``_`` (``suite1:simple tests`` → ``suite1_simple_tests``),
    never hidden (``.hidden`` was written as a hidden file the next run refused as another's), never longer than
    120 characters (a 300-character group failed with the staging folder's name in the message)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", group)
    stem = re.sub(r"^\.+", lambda found: "_" * len(found.group()), stem)
    if len(stem) > 120:
        stem = f"{stem[:100]}-{hashlib.sha256(group.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return stem + ".jsonl"


def _lc_files_kind(folder: Path) -> str | None:
    """``seeds`` / ``expansions`` when every ``*.jsonl`` of ``folder`` (the first :data:`LC_FILES_LOOKED_AT`) is an
    ``<lc>.jsonl`` this program wrote (its first row names the LC or suite group of the file's name), else None: a
    user's folder holding one copied seeds file among other JSONL files is not a seeds folder. An empty file (an LC
    that found no seeds) neither makes nor breaks one, and the LCs may be of both tasks (two `seeds --out` runs): such
    folders are still this program's, and outputs never replace a file in them."""
    try:
        files = sorted(folder.glob("*.jsonl"))[:LC_FILES_LOOKED_AT]
    except OSError:
        return None
    kinds = set()
    for path in files:
        row = _first_row(path)
        if row is None and _is_empty_file(path):
            continue
        if not (isinstance(row, dict) and isinstance(row.get("lc_id"), str) and isinstance(row.get("task"), str)
                and lc_file_name(row["lc_id"]) == path.name):
            return None
        kinds.add("expansions" if "seed_id" in row else "seeds")
    return kinds.pop() if len(kinds) == 1 else None


def _is_empty_file(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


EXPORT_KEYS = ("run_id", "lcs", "data_hash", "counts")  # what `harden export` always writes into export.json


def _is_hardening_export(path: Path) -> bool:
    """Whether ``path`` (an export.json) is one `harden export` wrote: a JSON object with its keys (another
    program's export.json is not)."""
    return _json_object_with(path, EXPORT_KEYS)


RUN_PROGRESS = "progress.json"  # the runner's record of a run being written (alict_core.runner.folders.PROGRESS)
RUN_PROGRESS_KEYS = ("run_id", "n_shards", "shards_done", "parts")


def _json_object_with(path: Path, keys: Sequence[str]) -> bool:
    """Whether ``path`` is a plain file holding a JSON object with ``keys`` (at most 1 MiB read, never a pipe)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            record = _loads(handle.read(1 << 20).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(record, dict) and all(key in record for key in keys)


def artefact_kind(folder: Path) -> str | None:
    """What saved artefact this program wrote ``folder`` as, told by its own markers: ``run`` / ``export`` (its
    manifest.json), ``harden export`` (export.json), ``lego`` (meta.json and trees.jsonl), ``seeds`` /
    ``expansions`` (``<lc>.jsonl`` files), ``foreign`` (another program's manifest.json); None for any other
    folder."""
    folder = Path(folder)
    try:
        if (folder / MANIFEST).is_file():
            return _own_kind(folder / MANIFEST) or "foreign"
        if (folder / "export.json").is_file() and _is_hardening_export(folder / "export.json"):
            return "harden export"
        if (folder / "meta.json").is_file() and (folder / "trees.jsonl").is_file():
            return "lego"
        if (folder / RUN_PROGRESS).is_file() and _json_object_with(folder / RUN_PROGRESS, RUN_PROGRESS_KEYS):
            return "run"  # a run being written (no manifest yet): a file put there now would be sealed into it
    except OSError:
        return None
    return _lc_files_kind(folder)


def describe_artefact(kind: str) -> str:
    return ARTEFACT_NAMES.get(kind, f"a saved {kind!r} artefact")


def _check_replaceable(target: Path, owned: tuple[str, ...], kind: str | None = None,
                       what: str = "output folder") -> None:
    """Refuse to replace a folder holding anything this project did not write there, or another kind of artefact.

    ``owned``: the names (``fnmatch`` patterns such as ``*.jsonl``) this project writes into such a folder.
    ``kind``: the artefact the writer makes (``run``, ``export``, ``lego``): a folder holding a saved artefact of
    another kind is never replaced (``report A --export B`` deleted the saved run B); one of the same kind is, when
    everything in it is ``owned`` or recorded by its manifest (a user's notes added to it are refused). Without
    ``kind``, only folders of ``owned`` names are replaced.
    """
    if not target.exists():
        return
    if not target.is_dir():
        raise AlictError(f"{what} {str(target)!r} exists and is not a folder; choose another path")
    held = artefact_kind(target)
    if held == "foreign":  # another program's manifest.json, or ours damaged (a run is repaired): told by its names
        held = None
    if held is not None and held != kind:
        writes = describe_artefact(kind) if kind else "this command's output"
        raise AlictError(f"{what} {str(target)!r} holds {describe_artefact(held)}; it is replaced only by "
                         f"{writes}, never by another kind: choose a new or empty folder")
    recorded = _recorded_files(target) if held is not None and held == kind else set()
    foreign = [name for entry in sorted(target.iterdir())  # a user's notes.txt added to an earlier run or export
               if not entry_is_owned(entry, owned) and not _all_recorded(entry, target, recorded)  # went with it
               for name in _foreign_names(entry, owned, target, recorded)]
    if not foreign:
        return
    raise AlictError(f"{what} {str(target)!r} already holds other files ({', '.join(map(repr, foreign[:3]))}); "
                     "choose a new or empty folder (an artefact folder is replaced as a whole)")


def _recorded_files(folder: Path) -> set[str]:
    """The files (relative paths) an artefact's manifest records, with the manifest itself."""
    from alict_core.common.jsonl import read_json

    try:
        files = read_json(folder / "manifest.json").get("files") or {}
    except (OSError, ValueError, AttributeError, RecursionError):
        return {"manifest.json"}
    return {"manifest.json", *(name for name in files if isinstance(name, str))}


def _all_recorded(entry: Path, folder: Path, recorded: set[str]) -> bool:
    """Whether ``entry`` (a file, or a folder and everything in it) is among an artefact's recorded files (a
    recorded part that is a link loses nothing with the folder: its target stays; the re-write repairs it)."""
    if entry.is_dir() and not entry.is_symlink():
        paths = [path for path in entry.rglob("*") if path.is_symlink() or not path.is_dir()]
    elif entry.is_file() or entry.is_symlink():
        paths = [entry]
    else:
        return False
    return all(path.relative_to(folder).as_posix() in recorded for path in paths)


def _foreign_names(entry: Path, owned: Sequence[str], folder: Path, recorded: set[str]) -> list[str]:
    """How a refused ``entry`` is named to the user: a folder this project writes (``results``) by the files in it
    that are not its own (``results/part-00000 (copy).parquet``), anything else by its name."""
    inner = [pattern.split("/", 1)[1] for pattern in owned
             if "/" in pattern and fnmatch.fnmatchcase(entry.name, pattern.split("/", 1)[0])]
    if not inner or entry.is_symlink() or not entry.is_dir():
        return [entry.name]
    return [f"{entry.name}/{child.name}" for child in sorted(entry.iterdir())
            if (child.is_symlink() or not child.is_file() or not any(_file_named(child, pattern)
                                                                    for pattern in inner))
            and child.relative_to(folder).as_posix() not in recorded] or [entry.name]


def _loads(text: str) -> Any:
    """JSON text read as :func:`alict_core.common.jsonl.loads` reads it (too deep: a ValueError)."""
    from alict_core.common.jsonl import loads

    return loads(text)


def entry_is_owned(entry: Path, owned: Sequence[str]) -> bool:
    """Whether ``entry`` of a folder about to be replaced is one this project writes there: a plain file of an
    ``owned`` name (``fnmatch`` patterns), or a folder named by an ``owned`` pattern ``<folder>/<pattern>``
    holding only plain files of such names (``results/part-*``). A folder or a link merely named like an owned file
    (``summary.csv/mine.txt``), or a user's file inside an owned folder (``results/mine.xlsx``), is not: both were
    deleted with the folder."""
    if entry.is_symlink():
        return False
    if entry.is_file():
        return any("/" not in pattern and _file_named(entry, pattern) for pattern in owned)
    inner = [pattern.split("/", 1)[1] for pattern in owned
             if "/" in pattern and fnmatch.fnmatchcase(entry.name, pattern.split("/", 1)[0])]
    if not inner or not entry.is_dir():
        return False
    return all(not child.is_symlink() and child.is_file()
               and any(_file_named(child, pattern) for pattern in inner) for child in entry.iterdir())


TEMP_PATTERN = ".*.tmp"  # a killed write's temporary file: owned only when it is this program's (sealed) name


def _file_named(path: Path, pattern: str) -> bool:
    """Whether the plain file ``path`` is named by the owned ``pattern`` (a ``.*.tmp`` name only when this program
    made it: a user's ``.draft-notes.tmp`` went with the folder)."""
    from alict_core.common.jsonl import is_own_temp_file

    return fnmatch.fnmatchcase(path.name, pattern) and (pattern != TEMP_PATTERN or is_own_temp_file(path))


def check_replaceable(target: Path | str | None, owned: tuple[str, ...], kind: str, what: str) -> None:
    """:func:`_check_replaceable` before any work, naming the option ``what`` and the path as given."""
    if target is not None:
        _check_replaceable(Path(target), owned, kind, what)


def check_mergeable(target: Path | str | None, owned: tuple[str, ...], what: str = "output folder") -> None:
    """Refuse (before any work, too) to merge into a folder holding anything but files named like ``owned``."""
    if target is None:
        return
    target = Path(target)
    if not target.exists():
        return
    if not target.is_dir():
        raise AlictError(f"{what} {str(target)!r} exists and is not a folder; choose another path")
    foreign = sorted(p.name for p in target.iterdir()  # hidden names and links too: the merge's copy left out
                     if p.name.startswith(".") or p.is_symlink() or not p.is_file()  # `.mine.jsonl` and turned a
                     or not any(fnmatch.fnmatchcase(p.name, pattern) for pattern in owned))  # link into a copy
    if foreign:
        raise AlictError(f"{what} {str(target)!r} already holds other files ({', '.join(foreign[:3])}); "
                         "choose a new folder or one written by this command")


@contextmanager
def atomic_dir(target: Path, owned: tuple[str, ...] = (), merge: bool = False,
               kind: str | None = None) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target``; on success it replaces ``target`` as a whole.

    An existing ``target`` is replaced only when it is empty, holds an artefact of the writer's ``kind`` (its
    manifest), or holds nothing but names matching ``owned`` and no artefact of another kind; anything else is
    refused (so ``--out .`` never wipes a folder, and an export never replaces a saved run).
    ``merge=True`` starts the temporary folder as a copy of ``target`` (files the writer does not replace
    are kept), for output folders that collect files over several commands; it too is refused for a folder
    holding anything but ``owned`` names (a copy would leave out hidden files and folders such as ``.git``).

    Until the swap, ``target`` keeps its old content; a writer killed before it leaves only a hidden
    ``.<name>.tmp-*`` folder (ignored by listings, cleaned later). The swap is an atomic exchange where
    the OS offers one, else two renames that :func:`recover_dir` completes after a crash between them.
    """
    target = named_dir(target)
    # a merge reads the folder, adds to it and swaps it in: two writers at once would each swap in their own
    # copy and the first one's files would be lost (both saying they were written), so merges take turns
    with folder_lock(target) if merge else nullcontext():
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            recover_dir(target)
            clean_stale(target.parent)
            if merge:
                check_mergeable(target, owned)
            else:
                _check_replaceable(target, owned, kind)
            tmp = staging_dir(target.parent, f".{target.name}.tmp-")
            copied = _folder_state(target) if merge else None
            if merge and target.is_dir():
                try:
                    shutil.copytree(target, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*"))
                except OSError:
                    shutil.rmtree(tmp, ignore_errors=True)  # a half copy was left beside the folder
                    raise
        except shutil.Error as exc:  # its text was Python's list of (source, staging copy, reason) tuples
            first = exc.args[0][0] if exc.args and isinstance(exc.args[0], list) and exc.args[0] else None
            why = str(first[2]) if isinstance(first, tuple) and len(first) == 3 else "a file could not be copied"
            why = re.sub(r": '[^']*'$", "", why)  # the staging copy's path is no path the user knows
            raise AlictError(f"cannot write to the folder of {target.name!r}: copying its files failed ({why}); "
                             "nothing was changed") from None
        except OSError as exc:
            raise AlictError(f"cannot write to the folder of {target.name!r}: {exc.strerror or exc}") from None
        try:
            yield tmp
            _fsync_tree(tmp)
            if not merge:  # checked again at the swap: a file another command wrote into the folder meanwhile
                _check_replaceable(target, owned, kind)  # (`report --out E/r.html` while E was exported) was lost
            elif _folder_state(target) != copied:  # a merge swaps in its copy: what was written since would be lost
                raise AlictError(f"another command wrote into {target.name!r} while this one ran (e.g. a report or "
                                 "a run saved there); nothing was changed: run this command again")
            replace_dir(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


def _folder_state(target: Path) -> dict[str, tuple[int, int, int]] | None:
    """Name -> (mode, size, mtime in ns) of every entry of ``target`` (hidden ones too); None when it is no
    folder. Two equal states: nothing was added, removed or rewritten at the top of the folder in between."""
    if not target.is_dir():
        return None
    state = {}
    for entry in os.scandir(target):
        info = entry.stat(follow_symlinks=False)
        state[entry.name] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return state


def folder_lock_file(target: Path) -> Path:
    """The lock file of an output folder (in the cache, never beside the user's folder)."""
    from alict_core.common.config import artefact_dir

    return artefact_dir("locks") / f"dir-{hashlib.sha256(os.fsencode(Path(target).resolve())).hexdigest()[:24]}.lock"


def open_lock_file(path: Path, readable: bool = False) -> Any:
    """``path`` opened for ``flock`` (created when missing; ``readable``: for reading and writing, "a+"): never
    waiting on a named pipe put there (the command hung without a word), never following a link (a build emptied
    the file a link there led to); anything but a plain file is one message."""
    access = os.O_RDWR if readable else os.O_WRONLY
    flags = access | os.O_CREAT | os.O_APPEND | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP, errno.EISDIR):
            raise AlictError(f"the lock file {str(path)!r} is not a plain file (a pipe, link or folder put there); "
                             "remove it and run the command again") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise AlictError(f"the lock file {str(path)!r} is not a plain file; remove it and run the command again")
    return os.fdopen(fd, "a+" if readable else "a")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Exclusive among processes: ``flock`` on ``path`` (released by the kernel when a holder is killed); without
    ``fcntl`` (not POSIX) nothing is locked."""
    with open_lock_file(path) as handle:
        try:
            import fcntl
        except ImportError:
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def folder_lock(target: Path) -> Iterator[None]:
    """Exclusive use of an output folder among processes: a ``file_lock`` on ``<cache>/locks/dir-<hash of its
    path>.lock``."""
    with file_lock(folder_lock_file(target)):
        yield


def staging_dir(parent: Path, prefix: str) -> Path:
    """A new empty folder ``<parent>/<prefix><random>`` with the usual permissions (``mkdtemp`` would make it
    private, and the folder it becomes would stay so)."""
    while True:
        folder = Path(parent) / own_name(prefix)
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue


def replace_dir(complete: Path, target: Path, owned: tuple[str, ...] | None = None, kind: str | None = None,
                what: str = "output folder") -> None:
    """Put the complete folder ``complete`` in place as ``target``, replacing it as a whole.

    An atomic exchange where the OS offers one, else two renames that :func:`recover_dir` completes after a
    crash between them: a reader (or a killed writer's successor) sees the old folder or the new one, never a
    mix. The old content is renamed to a hidden ``.<name>.tmp-*`` folder before it is removed, so a kill during
    the removal leaves only a folder that :func:`clean_stale` removes later. With ``owned`` (and ``kind``), the
    target is checked again right before the swap (:func:`_check_replaceable`): files a user put into it while
    ``complete`` was written were deleted with it (pass 39); AlictError then, and ``complete`` is left as it is.
    """
    complete, target = Path(complete), named_dir(target)
    if owned is not None:
        _check_replaceable(target, owned, kind, what)
    if not target.exists():
        os.replace(complete, target)
        return
    _keep_folder_mode(target, complete)
    if _exchange(complete, target):
        trash = target.with_name(own_name(f".{target.name}.tmp-"))
        os.replace(complete, trash)  # ``complete`` holds the old content now
        shutil.rmtree(trash, ignore_errors=True)
        return
    old = _old_name(target)
    os.replace(target, old)
    os.replace(complete, target)
    shutil.rmtree(old, ignore_errors=True)


def _keep_folder_mode(old: Path, new: Path) -> None:
    """Give the folder swapped in the old folder's permissions and group, the owner's own access kept (a user's
    private 0700 or shared setgid 2770 folder became a 0755 one: its results readable by every user)."""
    try:
        info = os.stat(old)
    except OSError:
        return
    try:
        if info.st_gid != os.stat(new).st_gid:
            os.chown(new, -1, info.st_gid)
    except OSError:  # a group this user is not in: the mode alone is kept
        pass
    try:
        os.chmod(new, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
    except OSError:
        pass


def _fsync_tree(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _nearest_existing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


NAME_MAX = 255  # bytes of one path component (Linux, macOS)
STAGING_ROOM = 32  # what a folder's staging sibling adds to its name: ".<name>.tmp-<random>", ".<name>.pending"


def _check_utf8_path(path: Path, what: str) -> None:
    """Refuse an output whose full path (the working folder, links followed) is not valid UTF-8: Parquet and
    other writers take text paths, and a run into such a folder failed half-way (exit 3) after its work. A NUL
    (a URL's ``%00``) is refused too: the system reads no such name (os: "embedded null byte", exit 3)."""
    if "\x00" in str(path):
        raise AlictError(f"{what} {str(path)!r} holds a NUL character; give a plain path")
    for full in (os.path.abspath(path), os.path.realpath(path)):
        try:
            full.encode("utf-8")
        except UnicodeEncodeError:
            shown = repr(full.encode("utf-8", "surrogateescape"))[1:]
            raise AlictError(f"{what} {str(path)!r} lies under a folder whose name is not valid UTF-8 ({shown}); "
                             "write it under a UTF-8 path") from None


def _check_name_lengths(path: Path, what: str, room: int) -> None:
    """Refuse a path with a component over ``NAME_MAX`` bytes, or a last component over ``NAME_MAX - room`` (its
    temporary sibling would not fit): else the work is done and the final write fails (exit 3)."""
    for part in path.parts[:-1]:
        if len(os.fsencode(part)) > NAME_MAX:
            raise AlictError(f"{what}: the folder name {part[:40]!r}... is {len(os.fsencode(part))} bytes long; at "
                             f"most {NAME_MAX}")
    size, top = len(os.fsencode(path.name)), NAME_MAX - room
    if size > top:
        raise AlictError(f"{what} {path.name[:40]!r}...: the name is {size} bytes long; at most {top}"
                         + (" (the staging copy beside it adds a suffix)" if room else ""))


def names_folder(path: str) -> bool:
    """Whether the path as typed can only name a folder: it ends with '/' or its last part is '.' or '..' (pathlib
    drops a trailing '/' and '/.', and the file was then written at the path without them)."""
    return path.replace(os.sep, "/").rsplit("/", 1)[-1] in ("", ".", "..")


def _refuse_parent_steps_through_missing(path: Path, what: str) -> None:
    """Refuse a path with a ``..`` after a folder that does not exist: every check saw no file there, then the writer
    created the folder and ``x/../seeds.jsonl`` was the command's own input, replaced (or a link, a pipe)."""
    parts = path.parts
    for index, part in enumerate(parts):
        if part == ".." and index and not Path(*parts[:index]).is_dir():
            raise AlictError(f"{what} {str(path)!r} steps back ('..') out of {str(Path(*parts[:index]))!r}, which is "
                             "not an existing folder; give the path without it")


def check_output_dir(path: Path | str | None, what: str) -> None:
    """Refuse, before any work, an output folder that is a file, a symbolic link or cannot be written (one clear
    line)."""
    if path is None:
        return
    if str(path) == "-":  # a file named "-" was written where the user meant standard output
        raise AlictError(f"{what} '-': standard output is not an output here; give a file name")
    path = Path(path)
    _refuse_parent_steps_through_missing(path, what)
    _check_utf8_path(path, what)
    _check_name_lengths(path, what, STAGING_ROOM)
    if path.is_symlink():  # the staged folder is swapped in by rename: it would replace the link (a partial run and
        # stray temporaries were left when a later step followed it), never fill the folder it leads to
        raise AlictError(f"{what} {str(path)!r} is a symbolic link: the folder is swapped in whole and would replace "
                         "the link, not fill the folder it points to; give the folder's own path")
    if path.exists() and not path.is_dir():
        raise AlictError(f"{what} {str(path)!r} exists and is not a folder; choose another path")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise AlictError(f"{what} {str(path)!r} cannot be created: {base.name!r} is a file")
    _refuse_in_stores(path, what)
    holding = _artefact_holding(path.resolve())
    if holding is not None:  # a re-write of that artefact swaps its whole folder: this output would vanish with it
        raise AlictError(f"{what} {str(path)!r} lies inside the saved artefact {str(holding[0])!r} "
                         f"({describe_artefact(holding[1])}); a re-write of it replaces the whole folder: write it "
                         "elsewhere")
    if not os.access(base, os.W_OK | os.X_OK):
        raise AlictError(f"{what} {str(path)!r} is not writable (no permission on {base.name!r})")


def check_models_folder(path: Path | str | None, what: str) -> None:
    """Refuse, before a build starts, a models folder that is a file, lies inside the model store without being it
    (a build there would nest models in a version's or a model's own folder), in the review store, or is or lies
    inside a saved artefact (its re-write would drop the models)."""
    if path is None:
        return
    from alict_core.common.config import cache_dir, models_dir

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise AlictError(f"{what} {str(path)!r} exists and is not a folder; give a models folder")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise AlictError(f"{what} {str(path)!r} cannot be created: {base.name!r} is a file")
    target = Path(os.path.abspath(path)).resolve()
    store = Path(os.path.abspath(models_dir())).resolve()
    if target != store and target.is_relative_to(store):
        raise AlictError(f"{what} {str(path)!r} lies inside the model store {str(store)!r}; give the store itself "
                         "or a folder outside it")
    cache = Path(os.path.abspath(cache_dir())).resolve()
    if target != store and (target == cache or target.is_relative_to(cache)):  # the run store, the review store...
        raise AlictError(f"{what} {str(path)!r} lies in the cache {str(cache)!r} outside its model store; give the "
                         f"model store {str(store)!r} or a folder outside the cache")
    for name, (guarded, holds) in _input_stores().items():  # `build --out $ALICT_DATA_DIR` wrote 78 MB into it
        guarded = Path(os.path.abspath(guarded)).resolve()
        if target == guarded or target.is_relative_to(guarded):
            raise AlictError(f"{what} {str(path)!r} lies in the {name} {str(guarded)!r} ({holds}); build the models "
                             "elsewhere")
    kind = artefact_kind(target) if target.is_dir() else None
    holding = (target, kind) if kind not in (None, "foreign") else _artefact_holding(target / "models")
    if holding is not None:
        raise AlictError(f"{what} {str(path)!r} lies inside the saved artefact {str(holding[0])!r} "
                         f"({describe_artefact(holding[1])}); build the models elsewhere")
    if not os.access(base, os.W_OK | os.X_OK):
        raise AlictError(f"{what} {str(path)!r} is not writable (no permission on {base.name!r})")


def check_new_database(path: Path | str, what: str) -> None:
    """Refuse, before it is created, a new SQLite database in the model store or inside a saved artefact (a
    database in a built model's folder broke the model; one in a run folder was deleted by the run's re-write)."""
    from alict_core.common.config import cache_dir

    path = Path(path)
    if path.is_dir():
        raise AlictError(f"{what} {str(path)!r} is a folder; give a database file name")
    _check_utf8_path(path, what)  # the database was created, and no later command could open it
    target = Path(os.path.abspath(path)).resolve()
    store = Path(os.path.abspath(cache_dir() / "models")).resolve()
    if target.is_relative_to(store):
        raise AlictError(f"{what} {str(path)!r} lies in the model store {str(store)!r} (built models and hardened "
                         "versions): put the review database elsewhere")
    stores = {"run store": (cache_dir() / "runs", "saved runs, each in a folder named by its id")}
    stores.update({f"{folder} cache": (cache_dir() / folder, "ALiCT's own cached entries")
                   for folder in DERIVED_CACHES})
    stores.update(_input_stores())  # a database created among the corpora or the specs (pass 24)
    for name, (guarded, holds) in stores.items():
        guarded = Path(os.path.abspath(guarded)).resolve()
        if target == guarded or target.is_relative_to(guarded):
            raise AlictError(f"{what} {str(path)!r} lies in the {name} {str(guarded)!r} ({holds}): put the review "
                             "database elsewhere")
    holding = _artefact_holding(target)
    if holding is not None:
        raise AlictError(f"{what} {str(path)!r} lies inside the saved artefact {str(holding[0])!r} "
                         f"({describe_artefact(holding[1])}), whose re-write would delete it: put it elsewhere")


SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


DERIVED_CACHES = ("annotations", "corpus_stats", "embeddings", "expansions", "explain", "grammar", "lego", "locks",
                  "parses", "predictions", "quarantine", "uploads")  # folders of <cache> only ALiCT writes


def check_inputs_outside(folder: Path | str | None, inputs: Sequence[tuple[str, Path | str | None]],
                         what: str) -> None:
    """Refuse, before any work, an output folder that holds one of the command's own input files ((option, path)
    pairs): the folder is replaced as a whole, so the input was deleted (a --suite named cases.jsonl in --out)."""
    if not folder:
        return
    inside = Path(os.path.abspath(folder)).resolve()
    for option, given in inputs:
        if given and Path(given).exists():
            path = Path(os.path.abspath(given)).resolve()
            link = Path(os.path.abspath(given))
            if link.is_symlink():  # a link in the folder is deleted with it, wherever it leads
                path = link.parent.resolve() / link.name
            if path == inside or path.is_relative_to(inside):
                raise AlictError(f"{what} {str(folder)!r} holds the {option} file {str(given)!r} this command reads; "
                                 "the folder is replaced as a whole: write the output elsewhere")


def _input_stores() -> dict[str, tuple[Path, str]]:
    """The folders every command reads and none writes: the workspace's specs, the shipped specs and the data
    folder (a report written over the SST training split, or JUnit over a shipped spec, broke every later run)."""
    from alict_core.common.config import SPECS_DIR, data_dir, workspace_dir

    stores: dict[str, tuple[Path, str]] = {"shipped specs": (SPECS_DIR, "the built-in LC specs")}
    try:  # every YAML file there is read as a spec: a JSON written there failed every later run of the task
        stores["workspace's specs"] = (workspace_dir() / "specs", "the LC specs of your workspace")
    except AlictError:
        pass  # a workspace setting that cannot be used is said by the commands that read it
    try:
        stores["data folder"] = (data_dir(), "the corpora and lexicons every command reads")
    except AlictError:
        pass  # no data folder here: nothing to guard
    return stores


def _refuse_in_stores(path: Path, what: str, *, report: bool = False) -> None:
    """Refuse an output anywhere in ALiCT's own stores (the derived caches and the workspace's specs below) or the
    model store (``<cache>/models``: built models and hardened versions, each
    checked against its recorded files; only ``build`` and ``harden train`` write there: a summary written into a
    version's folder broke the version) or the review store (``<cache>/review``: a summary over its database
    deleted every judgement), and over any existing SQLite database."""
    from alict_core.common.config import cache_dir

    target = Path(os.path.abspath(path)).resolve()
    stores = {"model store": (cache_dir() / "models", "built models and hardened versions; only `build` and "
                                                       "`harden train` write there"),
              "review store": (cache_dir() / "review", "the review database"),
              "run store": (cache_dir() / "runs", "saved runs, each in a folder named by its id; only `run` without "
                                                  "--out writes there")}
    for folder in DERIVED_CACHES:  # checked entries: a file written among them was quarantined by the next reader
        stores[f"{folder} cache"] = (cache_dir() / folder, "ALiCT's own cached entries, each checked against its "
                                                           "manifest")
    stores.update(_input_stores())
    for name, (store, holds) in stores.items():
        store = Path(os.path.abspath(store)).resolve()
        if report and name == "run store" and target.name == "report.html" and target.parent.parent == store:
            continue  # a stored run's own report (`report RUN --out RUN/report.html`, `run --report`)
        if target == store or target.is_relative_to(store):
            raise AlictError(f"{what} {str(path)!r} lies in the {name} {str(store)!r} ({holds}): write it elsewhere")

    def is_database(file: Path) -> bool:
        try:
            if not stat.S_ISREG(os.stat(file).st_mode):  # a named pipe: open() waited for a writer for ever
                return False
            with open(file, "rb") as handle:
                return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
        except OSError:
            return False

    base = next((target.with_name(target.name[:-len(end)]) for end in SQLITE_COMPANIONS
                 if target.name.endswith(end)), None)
    if base is not None and is_database(base):  # its write-ahead log holds committed changes not yet in the file
        raise AlictError(f"{what} {str(path)!r} belongs to the SQLite database {base.name!r} (its journal or "
                         "write-ahead log); it is never replaced by an output: write it elsewhere")
    if is_database(target):
        raise AlictError(f"{what} {str(path)!r} is a SQLite database (a review store?); it is never replaced by "
                         "an output: write it elsewhere")


def _artefact_holding(path: Path, *, report: bool = True) -> tuple[Path, str] | None:
    """The saved artefact folder that ``path`` lies inside and its kind (:func:`artefact_kind`: a run or export
    with its manifest.json, a hardening export, an NLPLego folder at any depth; a seeds or expansions folder
    only as ``path``'s own folder; never another program's manifest.json), else None. A
    ``report.html`` right inside a run is not the run's (``run --report`` and ``report`` put it there)."""
    target = Path(os.path.abspath(path))
    for folder in target.parents:
        kind = artefact_kind(folder)
        if kind == "foreign":  # another program's manifest.json: not ours to guard, and never re-written by us
            continue
        if kind in MERGE_KINDS and folder != target.parent:
            # a seeds/expansions folder is merged into, never re-written while it holds a subfolder
            # (check_mergeable): only what lies right in it is at risk; a user's project folder that holds a
            # seeds file does not block outputs in its subfolders
            continue
        if kind is not None:
            return None if report and kind == "run" and target == folder / "report.html" else (folder, kind)
    return None


def check_output_file(path: Path | str | None, what: str,
                      inputs: Sequence[tuple[str, Path | str | None]] = (), *, report: bool = False) -> None:
    """Refuse, before any work, an output file path that is a folder or cannot be written, one of the command's
    own ``inputs`` ((option, path) pairs), or a path inside a saved artefact of any kind (:func:`artefact_kind`; a
    run's ``meta.json``, a hardening export's ``train.csv``, a seeds file: replacing it destroys the artefact; a new
    file there: a re-write of it drops it) but a run's ``report.html``, or a symbolic
    link (the rename would replace the link, not its target). ``report``: the output is an HTML report, the only
    kind that may replace a run's own ``report.html`` (`compare --json` there replaced the report with JSON)."""
    if path is None:
        return
    if str(path) == "-":  # a file named "-" was written where the user meant standard output
        raise AlictError(f"{what} '-': standard output is not an output here; give a file name")
    if names_folder(str(path)):  # 'newdir/' was written as a file named 'newdir', 'x.html/.' as 'x.html'
        raise AlictError(f"{what} {str(path)!r} names a folder (it ends with '/', '/.' or '/..'); give a file name")
    path = Path(path)
    _refuse_parent_steps_through_missing(path, what)
    _check_utf8_path(path, what)
    _check_name_lengths(path, what, 0)  # the temporary file's name is shortened to fit
    if path.is_dir():
        raise AlictError(f"{what} {str(path)!r} is a folder; give a file name")
    if path.exists() and not path.is_file():  # /dev/null, /dev/stdout: it would be replaced by a file
        raise AlictError(f"{what} {str(path)!r} is a device, pipe or socket, not a file; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise AlictError(f"{what} {str(path)!r} is not writable")
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise AlictError(f"{what} {str(path)!r} cannot be written: {str(base)!r} is a file (not a folder)")
    if not os.access(base, os.W_OK | os.X_OK):
        raise AlictError(f"{what} {str(path)!r} is not writable (no permission on {base.name!r})")
    for option, given in inputs:
        if given and path.exists() and Path(given).exists() and os.path.samefile(path, given):
            raise AlictError(f"{what} {str(path)!r} is the {option} file this command reads; write it elsewhere")
    _refuse_in_stores(path, what, report=report)
    holding = _artefact_holding(path.resolve(), report=report)
    if holding is not None:  # it would replace one of its files (the artefact destroyed) or vanish at its re-write
        artefact, kind = holding
        raise AlictError(f"{what} {str(path)!r} lies inside the saved artefact {str(artefact)!r} "
                         f"({describe_artefact(kind)}) and would replace or mix with its files: write it elsewhere")
    if path.is_symlink():  # the atomic rename replaces the link itself (/dev/stdout: the system's link), never
        # the file it leads to: "written to X" would be untrue and the link gone
        raise AlictError(f"{what} {str(path)!r} is a symbolic link: writing would replace the link, not the file it "
                         "points to; give the file's own path")


LEGO_FORMAT = 2  # meta.json "format" of NLPLego folders written with a manifest (1: before; read unchecked)


def check_lego_folder(folder: Path) -> None:
    """An NLPLego folder (``lego --out`` or ``<cache>/lego/<key>``) checked against its manifest before its cases are
    listed or run: an edited or cut ``cases.jsonl`` was run as it stood. A folder written before manifests (meta
    format 1) is read as it is; one written with its manifest that lost it is refused."""
    from alict_core.common.jsonl import read_json

    folder = Path(folder)
    if (folder / MANIFEST).exists() or (folder / MANIFEST).is_symlink():
        verify_dir(folder, "lego", label=f"NLPLego folder {folder.name!r}")
        return
    try:
        meta = read_json(folder / "meta.json")
    except (OSError, ValueError):
        return  # no meta: its own reader says what is wrong
    if isinstance(meta, dict) and isinstance(meta.get("format"), int) and meta["format"] >= LEGO_FORMAT:
        raise CorruptArtefactError(f"NLPLego folder {folder.name!r} has lost its manifest, so its files cannot be "
                                   "checked; run `lego` again to write it anew")
