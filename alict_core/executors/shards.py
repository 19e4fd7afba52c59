"""The one shard loop: bounded input shards on disk, resumable parts, an executor, progress and cancel.

Expansion and explanation cut their inputs into shards of ``shard_size`` rows under ``<key>.shards/``
(``<input>-NNNNN.jsonl`` beside ``part-NNNNN.jsonl``), run the shards without a finished part through
:func:`run_shards`, then :func:`join_parts` concatenates the parts in shard order into the artefact. A streaming
run writes its own case shards and verifies its parts, and shares :func:`run_shards`.

A part counts as finished only beside its seal (``part-NNNNN.jsonl.sha256``, written by :func:`run_shards` as the
part comes back): a part edited or damaged after a kill, or one without a seal, is computed again on resume, never
joined into the artefact (whose manifest would then vouch for it).
"""

from __future__ import annotations

import logging
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from alict_core.common.jsonl import atomic_path, write_json, write_jsonl
from alict_core.common.manifest import load_checked, sha256_file, write_file_manifest
from alict_core.executors.base import Executor, StopCheck, Task, get_executor

logger = logging.getLogger(__name__)
ProgressFn = Callable[[int, int, str], None]
T = TypeVar("T")


def shard_folder(path: Path) -> Path:
    """The folder of the unfinished parts of the artefact ``path`` (``<key>.shards``)."""
    return Path(path).with_suffix(".shards")


def part_path(parts: Path, index: int) -> Path:
    return parts / f"part-{index:05d}.jsonl"


def seal_path(part: Path) -> Path:
    """The sidecar holding the sha256 of a finished part."""
    return part.with_name(part.name + ".sha256")


def companion_path(part: Path) -> Path:
    """A part's sidecar written with it by the worker (``part-NNNNN.meta.json``: an expansion shard's counts)."""
    return part.with_suffix(".meta.json")


def _digest(part: Path) -> str:
    """The sha256 of a part, and of its sidecar when it has one (the seal covers both: an edited sidecar's
    counts were joined into the artefact's counts and served from the cache)."""
    companion = companion_path(part)
    return " ".join([sha256_file(part), *([sha256_file(companion)] if companion.exists() else [])])  # a folder: OSError


def seal_part(part: Path) -> None:
    """Record the sha256 of a finished part and its sidecar (atomically): from now on a resume takes it as done."""
    with atomic_path(seal_path(part)) as tmp:
        tmp.write_text(_digest(part) + "\n", encoding="ascii")


def part_finished(part: Path) -> bool:
    """Whether ``part`` is a finished part as it was written: present, sealed, and its content (and its sidecar's)
    matches the seal; an unsealed or changed part is removed (with its seal and sidecar) so that its shard runs
    again."""
    seal = seal_path(part)
    try:
        if part.is_file() and seal.is_file() and seal.read_text(encoding="ascii").strip() == _digest(part):
            return True
    except (OSError, UnicodeDecodeError):
        pass
    if part.exists() or seal.exists():
        logger.warning("shard part %s was not as written (changed, damaged or unsealed): computed again", part.name)
    for stale in (part, seal, companion_path(part)):
        _discard(stale)
    return False


def _discard(path: Path) -> None:
    """Remove what stands at ``path`` in the private parts folder, a file or (put there by hand) a folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def shard_count(n_rows: int, shard_size: int) -> int:
    return (n_rows + shard_size - 1) // shard_size


@contextmanager
def executor_in_use(executor: str | Executor, workers: int) -> Iterator[Executor]:
    """A registered executor built with ``workers`` and closed on exit, or the caller's executor (left open)."""
    if not isinstance(executor, str):
        yield executor
        return
    pool = get_executor(executor, workers)
    try:
        yield pool
    finally:
        pool.close()


def finished_or_reset(path: Path, kind: str, key: str, reader: Callable[[Path], T], reuse: bool) -> T | None:
    """The finished artefact ``path`` (read by ``reader``) when ``reuse`` and its manifest check passes, its
    stale shard folder removed; else None, with the finished shards kept for a resume only when ``reuse``."""
    parts = shard_folder(path)
    found = load_checked(path, kind, key, reader) if reuse else None
    if found is not None:
        shutil.rmtree(parts, ignore_errors=True)  # left by a kill between the artefact and the clean-up
        return found
    if not reuse and parts.exists():
        shutil.rmtree(parts)
    return None


LAYOUT = "layout.json"  # how a shard folder's parts were cut (shard size, rows)


def _same_layout(parts: Path, layout: Mapping[str, Any]) -> None:
    """Keep a shard folder's finished parts only when they were cut the same way; else empty it first."""
    from alict_core.common.jsonl import read_json

    marker = parts / LAYOUT
    try:
        found = read_json(marker) if marker.is_file() else None
    except (OSError, ValueError, RecursionError):
        found = None
    if parts.exists() and found != dict(layout):
        if any(parts.iterdir()):
            logger.warning("shard folder %s was cut another way (%s, now %s): its parts are computed again",
                           parts.name, found, dict(layout))
        shutil.rmtree(parts)
    parts.mkdir(parents=True, exist_ok=True)
    if found != dict(layout):
        write_json(marker, dict(layout))


def pending_shards(parts: Path, rows: Sequence[Any], shard_size: int, input_name: str,
                   to_row: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    """Tasks ``{"index", input_name, "out"}`` of the shards without a finished part; each one's rows are written
    (``to_row`` of each) to ``<input_name>-NNNNN.jsonl``, the worker's only input.

    The parts were cut at one shard size: a resume with another size starts the shards afresh (part 1 of size 1
    held row 1; taken as part 1 of size 2, rows 2-3 were silently missing from the artefact)."""
    _same_layout(parts, {"shard_size": int(shard_size), "rows": len(rows)})
    tasks = []
    for index in range(shard_count(len(rows), shard_size)):
        out = part_path(parts, index)
        if part_finished(out):
            continue
        inputs = parts / f"{input_name}-{index:05d}.jsonl"
        write_jsonl(inputs, (to_row(row) for row in rows[index * shard_size:(index + 1) * shard_size]))
        tasks.append({"index": index, input_name: str(inputs), "out": str(out)})
    return tasks


def shard_progress(progress: ProgressFn | None, total: int, done: int, unit: str) -> Callable[[Mapping[str, Any]],
                                                                                                None]:
    """Report ``done`` of ``total`` shards now (when there are any), then one more after each finished shard."""
    counter = [done]
    if progress is not None and total:
        progress(done, total, unit)

    def finished(_result: Mapping[str, Any]) -> None:
        counter[0] += 1
        if progress is not None:
            progress(counter[0], total, unit)

    return finished


def run_shards(pool: Executor, worker_cls: type, init: Mapping[str, Any], tasks: Sequence[Task], *,
               should_stop: StopCheck | None = None,
               on_result: Callable[[Mapping[str, Any]], None] | None = None) -> None:
    """Run every task on ``pool`` (``worker_cls(**init)(task)``); ``on_result`` follows each finished shard.

    ``should_stop()`` is polled between shards (``ExecutorCancelled``: finished parts stay for a resume)."""
    if not tasks:
        return
    outs = {task.get("index"): Path(task["out"]) for task in tasks if task.get("out")}
    for result in pool.map_shards(worker_cls, init, tasks, should_stop=should_stop):
        out = outs.get(result.get("index")) if isinstance(result, Mapping) else None
        if out is not None and out.is_file():
            seal_part(out)
        if on_result is not None:
            on_result(result)


def join_parts(path: Path, parts: Path, n_shards: int, on_part: Callable[[Path], None] | None = None,
               before_rename: Callable[[], None] | None = None) -> int:
    """Concatenate the parts in shard order into ``path`` atomically; the number of rows written.

    ``on_part(part)`` sees each part first (its sidecar); ``before_rename()`` runs before the artefact replaces
    the old one."""
    n_rows = 0
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            for index in range(n_shards):
                part = part_path(parts, index)
                if on_part is not None:
                    on_part(part)
                n_rows += _copy_rows(part, handle)
        if before_rename is not None:
            before_rename()
    return n_rows


def _copy_rows(part: Path, handle: Any) -> int:
    count = 0
    with open(part, encoding="utf-8") as source:
        for line in source:
            if line.strip():
                handle.write(line)
                count += 1
    return count


def finish_artefact(path: Path, kind: str, key: str, n_rows: int, meta: Mapping[str, Any]) -> None:
    """After :func:`join_parts`: the sidecar ``<key>.meta.json``, the manifest, and the shard folder removed."""
    write_json(path.with_suffix(".meta.json"), dict(meta))
    write_file_manifest(path, kind, key, n_rows, companions=[path.with_suffix(".meta.json")])
    parts = shard_folder(path)
    if parts.exists():
        shutil.rmtree(parts)
