"""Run folders of streaming runs: their layout, verified shards, resume and re-writes of finished runs.

See ``alict_core/runner/stream.py`` for the layout. A shard is trusted only when its counts file has the sha256
the run recorded for it in ``progress.json`` (``"parts"``) and its cases and results parts have the checksums those
counts record; a finished run only when it passes its manifest check. A finished run is re-written in
``.<name>.pending`` and swapped in whole when the new run is finished.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.jsonl import clean_stale_temp_files, iter_jsonl, read_json
from alict_core.common.manifest import READ_ERRORS, sha256_file
from alict_core.runner.run import RUN_FILES

log = logging.getLogger("alict_core")
PROGRESS = "progress.json"
SHARD_DIRS = ("cases", "counts", "results")
STOP_FILE = ".stop"  # workers in other processes or machines see a stop request through this file
# .*.tmp: left by a killed write; story.json: the Story's data, written after the manifest
# a shard folder holds only part files (named exactly as :func:`part_name` names them, of its own suffix: a user's
# results/part-00000.parquet.orig is not one) and the temporary files of their writes (a user's file there was deleted)
PART_SUFFIXES = {"cases": ".jsonl", "counts": ".json", "results": ".parquet"}
_PART_NAMES = tuple("part-" + "[0-9]" * digits for digits in range(5, 9))  # part-00000 … part-99999999
OWNED = (*RUN_FILES, PROGRESS, "manifest.json", "story.json", STOP_FILE, ".*.tmp", ".requests-*",
         *(f"{folder}/{name}" for folder in SHARD_DIRS
           for name in (*(stem + PART_SUFFIXES[folder] for stem in _PART_NAMES), ".*.tmp")))


def part_name(shard: int, suffix: str) -> str:
    return f"part-{shard:05d}{suffix}"


def read_progress(run_dir: Path) -> dict[str, Any] | None:
    """The run's ``progress.json`` (None when absent or unreadable)."""
    try:
        value = read_json(Path(run_dir) / PROGRESS)
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def shard_ok(run_dir: Path, shard: int, counts_sha256: str | None) -> bool:
    """Whether shard N is whole: its counts file has the checksum the run recorded for it (``counts_sha256``)
    and its cases and results parts have the checksums that counts file records."""
    counts_path = run_dir / "counts" / part_name(shard, ".json")
    results = run_dir / "results" / part_name(shard, ".parquet")
    cases = run_dir / "cases" / part_name(shard, ".jsonl")
    if not counts_sha256 or not results.is_file() or not counts_path.is_file():
        return False
    if any(part.is_symlink() for part in (counts_path, results, cases)):  # a link (out of the folder): the saved
        return False  # run refuses it, so it is predicted again, never linked into the repaired run as a link
    try:
        if sha256_file(counts_path) != counts_sha256:
            return False
        counts = read_json(counts_path)
        return bool(counts.get("shard") == shard
                    and counts.get("cases_sha256") == sha256_file(cases)
                    and counts.get("results_sha256") == sha256_file(results))
    except (OSError, ValueError, AttributeError):
        return False


def finished_shards(run_dir: Path, n_shards: int, ledger: Mapping[str, Any],
                    models: Sequence[str] | None = None) -> dict[int, str]:
    """Shards verified against ``ledger`` (shard → sha256 of its counts file, as recorded by the run), as shard →
    counts checksum. A recorded shard whose counts file changed is not finished (it is predicted again), and
    neither is one whose counts say other than its cases and results parts (counts and record both edited: the
    summary said other rates than the run's own report); a shard the run never recorded (killed between a
    worker's write and the record) is kept under the same check. ``models``: the run's model names, which every
    kept shard's counts must list (a shard of counts and results both without one of them was kept)."""
    done = {}
    for shard in range(n_shards):
        digest = ledger.get(str(shard))
        counts_path = run_dir / "counts" / part_name(shard, ".json")
        if isinstance(digest, str):
            if shard_ok(run_dir, shard, digest) and counts_hold(run_dir, shard, models):
                done[shard] = digest
            elif counts_path.is_file():
                log.warning("shard %d of run %r does not match the run's record of it; predicting it again",
                            shard, run_dir.name)
            continue
        try:
            digest = sha256_file(counts_path) if counts_path.is_file() else None
        except OSError:
            continue
        if digest and shard_ok(run_dir, shard, digest) and counts_hold(run_dir, shard, models):
            done[shard] = digest
    return done


def counts_hold(run_dir: Path, shard: int, models: Sequence[str] | None = None) -> bool:
    """Whether shard N's counts file says what its cases and results parts say (counts recomputed, no model),
    for exactly the run's ``models`` when given."""
    import numpy as np
    import pandas as pd

    from alict_core.runner.run import ModelOutcome, RunResult

    try:
        stored = read_json(run_dir / "counts" / part_name(shard, ".json"))
        cases = [TestCase.from_dict(row) for row in iter_jsonl(run_dir / "cases" / part_name(shard, ".jsonl"))]
        table = pd.read_parquet(run_dir / "results" / part_name(shard, ".parquet"),
                                columns=["model", "case_id", "passed"])
        ids, n = [case.case_id for case in cases], len(cases)
        listed = [str(model["name"]) for model in stored["models"]]
        if not listed or sorted(listed) != sorted(set(table.model.astype(str))):  # a counts file listing no model
            return False  # (or not the results' models) held "[] == []" and dropped the shard from the summary
        if models is not None and sorted(listed) != sorted(models):  # a model dropped or renamed in both
            return False
        outcomes = []
        for model in stored["models"]:
            rows = table[table.model == model["name"]].set_index("case_id")
            if len(rows) != n or set(rows.index) != set(ids):
                return False
            passed = rows.passed.reindex(ids).to_numpy(dtype=bool)
            zeros = np.zeros(n, dtype=np.int32)
            outcomes.append(ModelOutcome(model["name"], "", (), np.zeros((n, 0)), passed, zeros, zeros, [None] * n))
        recomputed = json.loads(json.dumps(RunResult(cases, outcomes).counts()))
        return bool(stored.get("n_cases") == n and stored.get("counts") == recomputed)
    except READ_ERRORS:  # an unreadable or inconsistent part is not finished: predicted again
        return False


def ledger_of_finished(run_dir: Path) -> dict[str, str]:
    """shard → counts checksum of a finished run, from its manifest (empty when it has none or it is unreadable)."""
    try:
        manifest = read_json(run_dir / "manifest.json")
        files = manifest.get("files") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    ledger = {}
    for name, digest in files.items():
        if isinstance(name, str) and name.startswith("counts/part-") and name.endswith(".json"):
            try:
                ledger[str(int(name[len("counts/part-"):-len(".json")]))] = str(digest)
            except ValueError:
                continue
    return ledger


def is_complete(run_dir: Path, run_id: str, shard_size: int) -> bool:
    """A finished run of these inputs that passes its manifest check (a damaged one is repaired, not served)."""
    from alict_core.common.manifest import CorruptArtefactError, verify_dir

    try:
        meta = read_json(run_dir / "meta.json")
    except (OSError, ValueError):
        return False
    if not (isinstance(meta, dict) and meta.get("run_id") == run_id and meta.get("layout") == "sharded"
            and meta.get("shard_size") == shard_size and (run_dir / "manifest.json").is_file()):
        return False
    try:
        verify_dir(run_dir, "run", key=run_id, label=f"run {run_dir.name!r}")
    except CorruptArtefactError as exc:
        log.warning("%s; recomputing its damaged shards", exc)
        return False
    return True


def pending_dir(run_dir: Path) -> Path:
    """Where a finished run folder is re-written (other inputs, or a repair) until the new run is finished."""
    return run_dir.with_name(f".{run_dir.name}.pending")


def _finished_pending(folder: Path) -> bool:
    """Whether ``folder`` is a finished re-write left beside its run folder (its swap refused: the run folder held
    a user's files); a re-run of it resumes it (nothing to compute) and swaps it in."""
    return folder.name.startswith(".") and folder.name.endswith(".pending") and (folder / "manifest.json").is_file()


def swap_in(work: Path, run_dir: Path) -> None:
    """Swap the finished re-write ``work`` in place of ``run_dir``, checking the folder again right before: files
    put into it (or a folder put in its place) while the re-write ran were deleted at the swap, exit 0 (pass 39).
    Refused with one message then, the user's files and the finished new run (in ``work``) both kept."""
    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import replace_dir

    try:
        replace_dir(work, run_dir, owned=OWNED, kind="run", what="run folder")
    except AlictError as exc:
        raise AlictError(f"{exc}; it changed while the run was written, so it was not replaced: the finished new run "
                         f"is kept in {str(work)!r} and the same command, run again once the folder holds only the "
                         "run's files (or is removed), puts it in place") from None


def work_folder(run_dir: Path) -> Path:
    """``run_dir`` itself when it holds no finished run; else its pending sibling (swapped in when finished),
    so a killed re-write leaves the finished run as it was."""
    from alict_core.common.manifest import _check_replaceable, recover_dir

    recover_dir(run_dir)
    if not run_dir.exists():
        return run_dir
    _check_replaceable(run_dir, OWNED, "run")  # a folder of other files is refused before any work
    return pending_dir(run_dir) if (run_dir / "meta.json").exists() else run_dir


def adopt(staging: Path, run_dir: Path, run_id: str, shard_size: int, n_shards: int,
           reuse: Path | None = None, models: Sequence[str] | None = None) -> tuple[dict[int, str], bool]:
    """Put the staged cases in place as ``run_dir``; return the shards already finished there (resume), as
    shard → counts checksum. ``reuse``: a finished run folder being re-written, whose verified shards of the
    same inputs are linked in instead of being predicted again. ``models``: the run's model names. Also whether
    the folder is the run's own (made by it or an earlier writer of it), not one the user gave that existed."""
    from alict_core.common.manifest import _check_replaceable, recover_dir, replace_dir

    recover_dir(run_dir)
    previous = read_progress(run_dir) if run_dir.is_dir() else None
    resumable = (previous is not None and previous.get("run_id") == run_id
                 and previous.get("shard_size") == shard_size
                 and (not (run_dir / "meta.json").exists() or _finished_pending(run_dir)))
    if resumable:  # under run_lock: a "running" status here was left by a killed writer
        (run_dir / "cases").mkdir(exist_ok=True)
        for shard in range(n_shards):  # identical inputs give identical parts: keep them unless they differ
            name = part_name(shard, ".jsonl")
            staged, current = staging / "cases" / name, run_dir / "cases" / name
            if current.is_symlink() or not current.is_file() or sha256_file(current) != sha256_file(staged):
                os.replace(staged, current)
        for folder, suffix in (("cases", ".jsonl"), ("counts", ".json"), ("results", ".parquet")):
            for path in (run_dir / folder).glob(f"part-*{suffix}"):
                found = re.fullmatch(rf"part-(\d{{5}}){re.escape(suffix)}", path.name, flags=re.ASCII)
                if path.is_file() and (found is None or int(found.group(1)) >= n_shards):
                    path.unlink()  # a part of no shard of this run (`part-00000 (copy).parquet`, `part-00000.x.json`
                    # gave exit 3, or was sealed into the run and counted twice by report and compare)
        shutil.rmtree(staging, ignore_errors=True)
        (run_dir / STOP_FILE).unlink(missing_ok=True)
        for where in (run_dir, *(run_dir / name for name in SHARD_DIRS)):  # killed writes' temporary files: no
            clean_stale_temp_files(where, max_age_s=0.0)  # other writer (run lock held), never carried into the run
        parts = (previous or {}).get("parts")
        made = (previous or {}).get("folder_made", True) is not False  # a user's folder stays the user's on resume
        return finished_shards(run_dir, n_shards, parts if isinstance(parts, dict) else {}, models), made
    made = not run_dir.exists()
    if not made:
        _check_replaceable(run_dir, OWNED, "run")
        replace_dir(staging, run_dir)
    else:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, run_dir)
    return (reuse_shards(reuse, run_dir, run_id, shard_size, n_shards, models) if reuse is not None else {}), made


def reuse_shards(source: Path, run_dir: Path, run_id: str, shard_size: int, n_shards: int,
                 models: Sequence[str] | None = None) -> dict[int, str]:
    """Link the verified shards of the finished run ``source`` (same inputs, same shard size) into ``run_dir``."""
    try:
        meta = read_json(source / "meta.json")
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict) or meta.get("run_id") != run_id or meta.get("shard_size") != shard_size:
        return {}
    reused: dict[int, str] = {}
    for shard, digest in finished_shards(source, n_shards, ledger_of_finished(source), models).items():
        name = part_name(shard, ".jsonl")
        if sha256_file(source / "cases" / name) != sha256_file(run_dir / "cases" / name):
            continue
        for folder, suffix in (("counts", ".json"), ("results", ".parquet")):
            target = run_dir / folder / part_name(shard, suffix)
            target.parent.mkdir(exist_ok=True)
            link_or_copy(source / folder / part_name(shard, suffix), target)
        reused[shard] = digest
    return reused


def link_or_copy(source: Path, target: Path) -> None:
    """A hard link (parts are never changed in place, only replaced), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def clean_pending(root: Path, max_age_s: float = 7 * 24 * 3600.0,
                  held: Callable[[Path], bool] = lambda folder: False) -> None:
    """Remove re-writes abandoned for a week (``.<name>.pending`` not touched since): only folders holding this
    program's progress file (a run's re-write), never a user's ``.x.pending`` folder, and never one whose writer
    holds its run's lock (a live re-write whose files look old after a clock step, or a writer stopped with Ctrl-Z,
    was removed under it: pass 39). ``held(run folder)``: whether a writer holds its run's lock."""
    now = time.time()
    for folder in Path(root).glob(".*.pending"):
        progress = read_progress(folder)
        if progress is None or not {"run_id", "shard_size"} <= set(progress):
            continue
        if held(folder.with_name(folder.name[1:-len(".pending")])):  # the run folder it re-writes
            continue
        try:
            stamp = max((p.stat().st_mtime for p in (folder, folder / PROGRESS) if p.exists()), default=now)
            if folder.is_dir() and now - stamp > max_age_s:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
