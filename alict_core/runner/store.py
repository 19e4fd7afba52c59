"""The run store: saved runs under ``artefact_dir("runs")``, listed and resolved safely."""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any, Iterator

from alict_core.common.errors import AlictError
from alict_core.common.manifest import is_own, recover_dir
from alict_core.common.refs import check_name, resolve_inside


def runs_root() -> Path:
    from alict_core.common.config import artefact_dir

    return artefact_dir("runs")


def run_folders(root: Path) -> Iterator[Path]:
    """The folders of ``root`` that hold a saved run (a ``meta.json``), in directory order; a folder named
    ``.…`` is a run being written (or left by a killed writer) and is never one. Reads nothing else."""
    if not root.is_dir():
        return
    for folder in root.iterdir():
        if not folder.name.startswith(".") and folder.is_dir() and (folder / "meta.json").is_file():
            yield folder


def list_runs(root: Path | None = None) -> list[Path]:
    """Complete saved runs, oldest first; temporary folders of killed writers are never listed, nor folders of
    the run store (whose folders are named by run id) that hold another run (a hand copy or rename: see
    ``copied_from``; ``report <id>`` refuses those ids too). Other folders of runs (``run --out``) may be named
    freely."""
    by_id = root is None or _is_the_store(Path(root))
    root = Path(root) if root is not None else runs_root()
    if not root.is_dir():
        return []
    for old in root.glob(".*.old-*"):  # a swap interrupted between its two renames (only this program's own)
        if is_own(old):
            recover_dir(old.with_name(old.name[1:old.name.rindex(".old-")]))
    runs = [p for p in run_folders(root) if not (by_id and copied_from(p) is not None)]
    return sorted(runs, key=lambda p: p.stat().st_mtime)


def _is_the_store(folder: Path) -> bool:
    """Whether ``folder`` is the run store (compared without creating the store)."""
    from alict_core.common.config import cache_dir

    try:
        return folder.resolve() == (cache_dir() / "runs").resolve()
    except (OSError, AlictError):
        return False


def copied_from(folder: Path) -> str | None:
    """The run id a run-store folder's ``meta.json`` names when it is not the folder's name (a hand-copied or
    renamed run folder), else None; an unreadable meta.json or one without an id is left to the run's own check."""
    from alict_core.common.jsonl import read_json

    try:
        recorded = read_json(folder / "meta.json").get("run_id")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(recorded, str) or recorded == folder.name:  # no id recorded: nothing says it is a copy
        return None
    return recorded


def resolve_run_id(run_id: object, root: Path | None = None) -> Path:
    """The folder of a saved run by id (a validated name inside the run store)."""
    return resolve_inside(Path(root) if root is not None else runs_root(), run_id, "run id")


def is_folder(path: Path) -> bool:
    """``path.is_dir()``, False where the OS refuses the name itself (too long for the file system): a run id is
    then checked as a name and said to be no valid one, never "cannot access … File name too long"."""
    try:
        return path.is_dir()
    except OSError:
        return False


def saved_run_dir(value: str, what: str = "run") -> Path:
    """A saved run's folder from a folder path or a run id of the run store; one message when neither, or when
    the store folder of that id holds another run (its ``meta.json`` names another id: a copied or renamed
    folder), never a bare "not found"."""
    from alict_core.common.errors import AlictError

    path = Path(value).expanduser()
    if is_folder(path) or "/" in value or "\\" in value:
        return path
    folder = resolve_inside(runs_root(), value, "run id", must_exist=False)  # an invalid name: said as such
    if not folder.exists():
        raise AlictError(f"run id {value!r} not found: give a run folder (written by `run --out`) or the id of a "
                         f"saved run in the run store {runs_root()}")
    check_store_folder(folder, value, what)
    return folder


def check_store_folder(folder: Path, value: str, what: str = "run") -> None:
    """One message when the run store's folder of id ``value`` holds another run (its ``meta.json`` names
    another id: a copied or renamed folder); an unreadable meta.json is left to the run's own check."""
    from alict_core.common.errors import AlictError

    recorded = copied_from(folder)
    if recorded is not None:
        raise AlictError(f"{what} {value!r}: the run store's folder {value} holds run {recorded!r} (its meta.json), "
                         "not this id: a copied or renamed run folder; give its path, or the id of the run it holds")


def unfinished_runs(root: Path | None = None) -> list[dict[str, Any]]:
    """Sharded runs not finished yet (``progress.json`` but no ``meta.json``), newest first.

    Each is its progress dict plus ``"run_dir"`` and ``"alive"``: False when its status is "running" but the
    writing process (on this host) is gone — killed; running the same inputs again resumes it.
    """
    from alict_core.runner.folders import read_progress

    root = Path(root) if root is not None else runs_root()
    if not root.is_dir():
        return []
    found = []
    for folder in root.iterdir():
        if folder.name.startswith(".") or not folder.is_dir() or (folder / "meta.json").exists():
            continue
        try:
            check_name(folder.name, "run")
        except AlictError:  # a user's "<id> (copy)": no run any page can open
            continue
        progress = read_progress(folder)
        if progress is None:
            continue
        alive = progress.get("status") == "running" and writer_alive(progress, folder)
        found.append({**progress, "run_dir": str(folder), "alive": alive})
    return sorted(found, key=_updated_at, reverse=True)


def _updated_at(progress: dict[str, Any]) -> float:
    """The progress file's ``updated_at`` when it is a time (seconds), else 0: a tampered text or list sorts last."""
    value = progress.get("updated_at")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e12:  # 10**400: no float
        return float(value) if math.isfinite(value) else 0.0
    return 0.0


    return True


def run_lock_file(folder: Path) -> Path:
    """The ``flock`` file a run's writer holds while it writes ``folder`` (:func:`stream.run_lock`)."""
    import os

    from alict_core.common.config import artefact_dir
    from alict_core.common.hashing import hash_bytes

    # the path's bytes: a folder name that is not UTF-8 (a surrogate in str) gave exit 3 as text
    return artefact_dir("locks") / f"run-{hash_bytes(os.fsencode(Path(os.path.abspath(folder)).resolve()))}.lock"


def writer_holds_lock(folder: Path) -> bool:
    """Whether a process holds the run's lock now (the kernel drops it when its holder dies, whatever became of the
    pid). Reads only: a missing lock file means no writer; without ``fcntl`` it cannot be told (True)."""
    import os

    path = run_lock_file(folder)
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a named pipe there: never wait on it
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True  # held (by another process, or by a writer thread of this one: another open file)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def writer_alive(progress: dict[str, Any], folder: Path | None) -> bool:
    """Whether the writer of a run (per its progress.json, in ``folder``) still runs: its pid is alive and, on this
    host, it holds the run's lock. The pid alone is not enough: after a crash a restarted server (PID 1 in a
    container) or any process can hold the recorded pid, while the kernel drops a dead writer's lock."""
    if not pid_alive(progress):
        return False
    if folder is None or progress.get("host") not in (None, socket.gethostname()):
        return True
    return writer_holds_lock(folder)


def pid_alive(progress: dict[str, Any]) -> bool:
    """Whether the process writing a run (per its progress.json) still runs; another host's writer counts as alive."""
    if progress.get("host") not in (None, socket.gethostname()):
        return True
    from alict_core.models.artefacts import process_alive

    pid = progress.get("pid")
    return not isinstance(pid, bool) and isinstance(pid, int) and process_alive(pid)
