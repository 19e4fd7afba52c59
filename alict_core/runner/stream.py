"""Streaming, resumable runs: cases in shards on disk, one executor task per shard, aggregate counts only.

Layout of a sharded run folder (``docs/ARCHITECTURE.md``, "Streaming runs")::

    <run_id>/progress.json                  status, shards and cases done (rewritten after every shard)
            cases/part-NNNNN.jsonl          TestCase.to_dict() rows of shard N (a seed and its expansions together)
            counts/part-NNNNN.json          shard N's per LC × model counts, checksums of its cases and results
            results/part-NNNNN.parquet      shard N's case × model rows (the columns of results.parquet)
            summary.csv, meta.json, manifest.json    written when every shard is done

A run is prepared in two passes: the case iterable is written shard by shard into a hidden staging folder
(memory holds one case at a time) while the run id — the same content hash ``RunResult.run_id`` gives — is
computed; the staging folder then becomes ``<runs root>/<run_id>`` (or joins the unfinished run already there).
Shards are then predicted by ``RunShardWorker`` on the chosen executor; a worker writes a shard's results
atomically (counts, then the Parquet part renamed into place), so a killed run leaves whole shards only.

Resume is verified: after each shard the run records the sha256 of its counts file in ``progress.json``
(``"parts"``); a re-run keeps a shard only when its counts file has that checksum and its cases and results
parts have the checksums the counts record, and recomputes every other shard (a changed counts file never
changes the totals). A finished run is returned as it is only when it passes its manifest check.

A folder that holds a finished run (of other inputs, or damaged) is never written in place: the new run is
prepared in ``.<name>.pending`` beside it (resumable there; verified shards of a damaged run of the same inputs
are linked in, not predicted again) and swapped in whole when finished (``manifest.replace_dir``), so a
killed re-write leaves the old run or the new one, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import socket
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.csvsafe import write_csv
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import _default, clean_stale_temp_files, iter_jsonl, new_temp_file, read_json, write_json
from alict_core.common.manifest import clean_stale, file_lock, sha256_file, staging_dir
from alict_core.executors.base import ExecutorCancelled
from alict_core.executors.shards import run_shards
from alict_core.models.run_scope import clear_request_counts
from alict_core.runner.folders import (  # noqa: F401 - part of this module's interface (read_progress, pending_dir)
    PROGRESS,
    SHARD_DIRS,
    STOP_FILE,
    adopt,
    clean_pending,
    is_complete,
    part_name,
    pending_dir,
    read_progress,
    shard_ok,
    swap_in,
    work_folder,
)
from alict_core.runner.run import CaseFilter, Progress, RunCancelled, asked_run_id, checked_batch_size
from alict_core.runner.store import writer_holds_lock

_LOG = logging.getLogger(__name__)

ModelRef = str | Mapping[str, Any]  # a registered model name, or {"name": ..., "kwargs": {...}}
MAX_SHARD_SIZE = 10_000_000

# should_stop hooks of runs executing in this process (the local executor's workers poll them between batches)
_STOP_HOOKS: dict[str, Callable[[], bool]] = {}


# ------------------------------------------------------------------------------------------- model references
def worker_model_specs(models: Sequence[ModelRef]) -> list[dict[str, Any]]:
    """``[{"name", "kwargs"}]`` of registered models: small JSON values a worker in any process can build from."""
    refs = []
    for item in models:
        if isinstance(item, str):
            ref = {"name": item, "kwargs": {}}
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            ref = {"name": item["name"], "kwargs": dict(item.get("kwargs") or {})}
        else:
            raise AlictError(f"a streaming run names its models by registered name (or {{'name', 'kwargs'}}), "
                             f"got {type(item).__name__}")
        try:
            json.dumps(ref)
        except (TypeError, ValueError):
            raise AlictError(f"model {ref['name']!r}: its arguments must be plain JSON values") from None
        refs.append(ref)
    if not refs:
        raise AlictError("no models to run")
    return refs


# ------------------------------------------------------------------------------------------------ the worker
class RunShardWorker:
    """Built once per worker (loads the models by name), then predicts and evaluates one shard per call.

    Tasks: ``{"op": "describe"}`` → the models' names, fingerprints and labels;
    ``{"op": "shard", "run_dir": str, "shard": N}`` → writes ``counts/`` and ``results/`` part N, returns its counts.
    """

    def __init__(self, models: Sequence[Mapping[str, Any]], batch_size: int = 64, cache_root: str | None = None,
                 plugins: Sequence[str] = ()) -> None:
        import importlib

        from alict_core.models.registry import get_model
        from alict_core.runner.run import _resolve

        for module in plugins:  # modules that register extra models (tests, user plugins) in a fresh process
            importlib.import_module(module)
        self.models = _resolve([get_model(ref["name"], **dict(ref.get("kwargs") or {})) for ref in models])
        self.batch_size = batch_size
        self.cache_root = Path(cache_root) if cache_root else None
        self._caches: dict[str, Any] = {}

    def describe(self) -> list[dict[str, Any]]:
        from alict_core.models.protocol import answers_change, model_fingerprint

        return [{"name": m.name, "fingerprint": model_fingerprint(m), "labels": list(m.labels),
                 **({"answers_change": True} if answers_change(m) else {})} for m in self.models]

    def __call__(self, task: Mapping[str, Any]) -> dict[str, Any]:
        if task.get("op") == "describe":
            return {"op": "describe", "models": self.describe()}
        return self.run_shard(Path(task["run_dir"]), int(task["shard"]))

    def run_shard(self, run_dir: Path, shard: int) -> dict[str, Any]:
        from alict_core.models.run_scope import run_scope
        from alict_core.runner.cache import text_hashes
        from alict_core.runner.run import RunResult, _evaluate, predict_cached, prediction_cache

        cases_path = run_dir / "cases" / part_name(shard, ".jsonl")
        cases = [TestCase.from_dict(row) for row in iter_jsonl(cases_path)]
        texts = list(dict.fromkeys(t for case in cases for t in case.texts()))
        hashes = text_hashes(texts)
        should_stop = stop_check(run_dir)
        outcomes = []
        with run_scope() as scope, scope.shared_budgets(run_dir):  # a cap is the whole run's, not a shard's
            for model in self.models:
                if model.name not in self._caches:
                    self._caches[model.name] = prediction_cache(model, self.cache_root)
                cache = predict_cached(model, texts, batch_size=self.batch_size, should_stop=should_stop,
                                       hashes=hashes, cache=self._caches[model.name])
                outcomes.append(_evaluate(model, cases, cache, hashes))
                cache.release(hashes.values())  # on disk now (or only this shard's): memory stays flat
        unparsed = scope.unparsed_counts()
        result = RunResult(cases, outcomes)
        counts = {"shard": shard, "n_cases": len(cases), "cases_sha256": sha256_file(cases_path),
                  "counts": result.counts(), "unparsed": unparsed, "models": self.describe()}
        target = run_dir / "results" / part_name(shard, ".parquet")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = new_temp_file(target)
        try:
            result.results_table().to_parquet(tmp, index=False)
            counts["results_sha256"] = sha256_file(tmp)
            write_json(run_dir / "counts" / part_name(shard, ".json"), counts)
            os.replace(tmp, target)  # the part exists only when complete, and only after its counts
        finally:
            if tmp.exists():
                tmp.unlink()
        return {"op": "shard", "shard": shard, "n_cases": len(cases), "unparsed": unparsed}


def stop_check(run_dir: Path) -> Callable[[], bool]:
    """What a worker polls between batches: the run's in-process hook, else the run's stop file."""
    hook = _STOP_HOOKS.get(str(run_dir))
    if hook is not None:
        return hook
    stop_file = Path(run_dir) / STOP_FILE
    return stop_file.exists


# ---------------------------------------------------------------------------------------------- staging cases
class _RunHash:
    """``RunResult.run_id`` computed while the cases stream past: the same JSON text, hashed incrementally."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256(b'{"cases": [')
        self.n = 0

    def add(self, row: Mapping[str, Any]) -> None:
        """Add one case (its ``to_dict()``)."""
        text = json.dumps(hash_json(row), ensure_ascii=False)
        self.digest.update(((", " if self.n else "") + text).encode("utf-8"))
        self.n += 1

    def finish(self, fingerprints: Sequence[str]) -> str:
        tail = '], "models": ' + json.dumps(list(fingerprints), ensure_ascii=False, default=str) + "}"
        self.digest.update(tail.encode("utf-8"))
        return self.digest.hexdigest()[:16]


def _write_case_shards(cases: Iterable[TestCase], folder: Path, shard_size: int, exclude: CaseFilter | None,
                       progress: Progress | None) -> tuple[_RunHash, list[int], int]:
    """Write ``folder/part-N.jsonl`` shard by shard; (run hash, cases per shard, cases ``exclude`` left out).

    A shard closes once it holds ``shard_size`` cases and the next case starts another seed group, so a seed and
    its expansions (given one after the other) stay together. A seed id that reappears after its shard closed is
    refused (pass-to-fail pairs and seed-clustered intervals are counted shard by shard, so it would miscount);
    ``group_by_seed`` orders a list that is not grouped.
    """
    from alict_core.common.limits import check_text

    folder.mkdir(parents=True, exist_ok=True)
    run_hash, excluded = _RunHash(), 0
    sizes: list[int] = []
    handle = None
    last_seed: str | None = None
    closed: set[str] = set()  # seed ids of closed shards
    current: set[str] = set()  # seed ids of the open shard
    try:
        for case in cases:
            if not isinstance(case, TestCase):
                raise AlictError(f"a run takes TestCase objects, got {type(case).__name__}")
            if exclude is not None and exclude(case):
                excluded += 1
                continue
            for text in case.texts():
                check_text(text, f"case {case.case_id!r} of {case.lc_id}", allow_empty=True)
            if case.seed_id in closed:
                raise AlictError(
                    f"case {case.case_id!r} of {case.lc_id} belongs to seed {case.seed_id!r}, whose group was already "
                    f"written to an earlier shard: give a seed's cases one after the other (group_by_seed orders a "
                    "list), or pass-to-fail and the intervals would be miscounted")
            if handle is None or (sizes[-1] >= shard_size and case.seed_id != last_seed):
                closed |= current
                current = set()
                if handle is not None:
                    handle.close()
                    if progress:
                        progress(run_hash.n, 0, f"{run_hash.n} cases prepared")
                handle = open(folder / part_name(len(sizes), ".jsonl"), "w", encoding="utf-8")
                sizes.append(0)
            row = case.to_dict()
            handle.write(json.dumps(row, ensure_ascii=False, default=_default) + "\n")
            sizes[-1] += 1
            last_seed = case.seed_id
            current.add(case.seed_id)
            run_hash.add(row)
    finally:
        if handle is not None:
            handle.close()
    return run_hash, sizes, excluded


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Exclusive use of a run folder: a thread lock in this process and ``flock`` on
    ``<cache>/locks/run-<hash of the folder's path>.lock`` (released by the kernel when a holder is killed)."""
    from alict_core.runner.store import run_lock_file

    key = str(Path(folder).resolve())
    with _THREAD_LOCKS_GUARD:
        lock = _THREAD_LOCKS.setdefault(key, threading.Lock())
    with lock, file_lock(run_lock_file(folder)):  # not POSIX: the thread lock only
        yield


WAITING_NOTE = "waiting for another writer of this run"  # the progress message while another writer holds the run


def _say_if_waiting(folder: Path, n_cases: int, progress: Progress | None) -> None:
    """Say that another writer holds this run's lock, and that this command waits for it: a second command of the
    same inputs waited minutes without a word behind a frozen progress bar (pass 37)."""
    if not writer_holds_lock(folder):
        return
    holder = ""
    for candidate in (folder, pending_dir(folder)):
        state = read_progress(candidate) if candidate.is_dir() else None
        pid, host = (state.get("pid"), state.get("host")) if state else (None, None)
        if isinstance(pid, int) and isinstance(host, str):  # a tampered file's values are not printed
            holder = f" (pid {pid} on {host[:100]})"
            break
    _LOG.warning("another command is writing run %s%s; this one waits for it, then uses or resumes its run",
                 folder.name, holder)
    if progress:
        progress(0, n_cases, WAITING_NOTE)


@contextmanager
def _locked_run(inputs_id: str, ask: str | None, run_dir: Path | None, root: Path, n_cases: int,
                progress: Progress | None) -> Iterator[tuple[str, Path]]:
    """The run's id and folder, under its run lock. A run is named by its inputs (the cases, the models'
    fingerprints and names), so a finished run of them is served. A run of a model whose answers change (an
    endpoint; ``ask``: its :func:`ask_key`) is a new run each time it is asked, with an id of its own: it never
    re-writes an earlier run under that run's id (another visitor's Failures page changed without a word; ``compare``
    called two asks one run). Only an unfinished ask of the same key, which no live writer holds, is resumed."""
    if ask is None or run_dir is not None:
        folder = Path(run_dir) if run_dir is not None else root / inputs_id
        _say_if_waiting(folder, n_cases, progress)
        with run_lock(folder):
            _drop_displaced(folder)
            yield (_resumed_ask(folder, ask) or asked_run_id(inputs_id)) if ask else inputs_id, folder
        return
    from alict_core.runner.store import run_lock_file

    with ExitStack() as held:
        with file_lock(run_lock_file(root / ".endpoint-runs")):  # one chooser at a time: never two resumers of one
            found = None
            for candidate in sorted(root.iterdir()) if root.is_dir() else ():
                if not candidate.name.startswith(".") and not writer_holds_lock(candidate) \
                        and _unfinished_ask(candidate, ask) == candidate.name:
                    found = candidate.name
                    break
            run_id = found or asked_run_id(inputs_id)
            held.enter_context(run_lock(root / run_id))
            if found:
                _resumed_ask(root / run_id, ask)
        yield run_id, root / run_id


def _drop_displaced(folder: Path) -> None:
    """Under the run's lock: remove the whole old run a kill right after a re-write's swap left beside the folder
    (``.<name>.pending`` with a manifest): finished, so never resumed nor used again; it was kept a week (pass 37)."""
    displaced = pending_dir(folder)
    if not ((displaced / "manifest.json").is_file() and (displaced / PROGRESS).is_file()):
        return
    older, current = read_progress(displaced), read_progress(folder) if folder.is_dir() else None
    stamps = [float(t) if isinstance(t := (state or {}).get("updated_at"), (int, float)) and not isinstance(t, bool)
              else None for state in (older, current)]
    # a finished re-write kept beside the folder (its swap refused: the folder held a user's files) is newer than the
    # folder's run: kept for the next command to swap in (pass 40: it was removed, and an endpoint asked again)
    if stamps[0] is not None and stamps[1] is not None and stamps[0] <= stamps[1]:
        shutil.rmtree(displaced, ignore_errors=True)


SECRET_ARGUMENTS = ("headers", "api_key")  # request settings an endpoint's fingerprint leaves out (no secret in ids)


def ask_key(inputs_id: str, refs: Sequence[Mapping[str, Any]]) -> str:
    """What an unfinished ask of an endpoint is resumed by: its inputs and, keyed with this cache's salt (never
    shown), the request settings its fingerprint leaves out. A run with another key or deployment header is another
    ask: a resume mixed two deployments' answers in one run, or served a key-holder's answers to a keyless run
    (pass 39)."""
    import hmac

    hidden = [{name: _same_request(name, ref["kwargs"][name]) for name in SECRET_ARGUMENTS
               if name in (ref.get("kwargs") or {})} for ref in refs]
    text = json.dumps([inputs_id, hidden], sort_keys=True, ensure_ascii=False, default=str)
    return hmac.new(_ask_salt(), text.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def _same_request(name: str, value: Any) -> Any:
    """A request setting as HTTP sends it: headers by lower-case name, values stripped, in any order (the same
    headers written in another order or with a space after the colon did not resume the ask: pass 40)."""
    if name != "headers":
        return value
    pairs = value.items() if isinstance(value, Mapping) else (
        part.split(":", 1) for part in str(value).split(";") if ":" in part)
    return sorted((str(key).strip().lower(), str(item).strip()) for key, item in pairs)


def _ask_salt() -> bytes:
    """This cache's random salt for :func:`ask_key` (``<cache>/locks/ask.salt``, made once, mode 0600)."""
    import secrets

    from alict_core.common.config import artefact_dir

    path = artefact_dir("locks") / "ask.salt"
    for _ in range(3):
        try:
            salt = path.read_bytes()
            if len(salt) >= 16:
                return salt
            path.unlink(missing_ok=True)  # a truncated salt (a kill while it was made): made again
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            time.sleep(0.05)  # another command makes it now
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
    return path.read_bytes()


def _unfinished_ask(folder: Path, ask: str) -> str | None:
    """The id of the unfinished endpoint run of ``ask`` in ``folder`` (or in its pending re-write), if any: one with
    no manifest (a kill between its meta.json and its manifest left a finished-looking run that was never resumed)."""
    for candidate in (folder, pending_dir(folder)):  # a finished re-write kept in the pending folder is resumed too
        if not candidate.is_dir() or (candidate == folder and (candidate / "manifest.json").exists()):
            continue
        state = read_progress(candidate)
        run_id = state.get("run_id") if state else None
        if state and state.get("inputs_id") == ask and isinstance(run_id, str) \
                and re.fullmatch(r"[0-9a-f]{16}", run_id):
            return run_id
    return None


def _resumed_ask(folder: Path, ask: str) -> str | None:
    """:func:`_unfinished_ask` under the run's lock, made resumable: the meta.json of a run killed before its manifest
    is removed (the run is finished again from its verified shards, then sealed)."""
    run_id = _unfinished_ask(folder, ask)
    for candidate in (folder, pending_dir(folder)) if run_id is not None else ():
        state = read_progress(candidate) if candidate.is_dir() else None
        if state and state.get("inputs_id") == ask and not (candidate / "manifest.json").exists():
            (candidate / "meta.json").unlink(missing_ok=True)
    return run_id


def _found_finished(folder: Path, extra_files: Mapping[str, Any] | None,
                    on_finished: Callable[[Path], Any] | None) -> Path:
    """A run found finished: the extra files its writer meant it to have (meta.json ``extra_files``) that are missing
    written (killed before they were; an existing one is the run's own record and is kept, and a run made without
    them, e.g. by the CLI, is never adopted by another front door's request), ``on_finished`` only when its writer
    made a story (meta.json ``story``) and story.json is missing (killed during its story write). Under the run lock
    no writer of these files is alive: a killed write's hidden temporary file of one of them is removed."""
    from alict_core.common.refs import check_name

    meta = read_json(folder / "meta.json")
    meant = meta.get("extra_files", []) if isinstance(meta, dict) else []
    for name in meant if isinstance(meant, list) else ():
        if isinstance(name, str):
            clean_stale_temp_files(folder, max_age_s=0, name=name)
    _write_extra_files(folder, {name: value for name, value in (extra_files or {}).items()
                                if name in meant and not (folder / check_name(name, "run file")).exists()})
    story = meta.get("story", True) if isinstance(meta, dict) else True  # runs before the record: as before
    if on_finished is not None and story is not False and not (folder / "story.json").is_file():
        on_finished(folder)
    return folder


def _write_progress(run_dir: Path, state: dict[str, Any], **changes: Any) -> None:
    state.update(changes, updated_at=time.time())
    write_json(run_dir / PROGRESS, state)


# ------------------------------------------------------------------------------------------------- the run
def check_run_options(shard_size: int, workers: int, batch_size: int | None) -> int:
    """One clear message for a shard size, worker count or batch size out of range; the batch size to use."""
    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not whole(shard_size) or not 1 <= shard_size <= MAX_SHARD_SIZE:
        raise AlictError(f"--shard-size must be a whole number in [1, {MAX_SHARD_SIZE}], got {shard_size!r}")
    if not whole(workers) or workers < 1:
        raise AlictError(f"--workers must be a whole number ≥ 1, got {workers!r}")
    return checked_batch_size(batch_size)


def run_streaming(cases: Iterable[TestCase], models: Sequence[ModelRef], *, run_dir: Path | None = None,
                  shard_size: int = 10_000, executor: str = "local", workers: int = 1, batch_size: int | None = None,
                  progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
                  cache_root: Path | None = None, extra: dict | None = None, exclude: CaseFilter | None = None,
                  plugins: Sequence[str] = (), root: Path | None = None,
                  extra_files: Mapping[str, Any] | None = None,
                  executor_options: Mapping[str, Any] | None = None,
                  on_finished: Callable[[Path], Any] | None = None) -> Path:
    """Run ``cases`` through ``models`` shard by shard on ``executor``; return the (finished) run folder.

    ``models``: registered names or ``{"name", "kwargs"}`` (built once per worker). ``run_dir``: default
    ``<runs root>/<run_id>``. A re-run of the same inputs resumes; a finished run is returned as it is (one of an
    endpoint is asked again). ``progress(done, total, message)`` counts cases (``total`` 0 while preparing).
    ``should_stop()`` is polled between batches: progress.json says "cancelled", finished shards are kept and
    ``RunCancelled`` is raised. ``exclude(case)`` True leaves a case out (asked in the given order, a seed before
    its expansions): the caller hands in review's ``RejectionFilter()``; None runs every case.
    ``plugins``: modules a worker imports first. ``root``: the run store (default ``artefact_dir("runs")``).
    ``extra_files``: name → JSON value (or a function returning it, called when the run is done), e.g. ``request.json``,
    written atomically into the finished run (after its manifest, so they are not part of it). Concurrent calls
    for one run folder (threads or processes) take turns through ``run_lock``. ``executor_options`` go to the
    executor (``ray``: ``address``, ``gpus_per_worker``). ``on_finished(folder)`` is called once the run this call
    finished is in place, e.g. to precompute the Story (``alict_core.report.story``); for a run found finished only
    when its writer made a story and ``story.json`` is missing (a kill during its story write left it without).
    """
    from alict_core.executors import get_executor

    batch_size = check_run_options(shard_size, workers, batch_size)
    refs = worker_model_specs(models)
    started, started_at = time.monotonic(), time.time()
    run_dir, root = _run_dir_and_root(run_dir, root)
    init = {"models": refs, "batch_size": batch_size, "cache_root": str(cache_root) if cache_root else None,
            "plugins": list(plugins)}
    pool = get_executor(executor, workers, **dict(executor_options or {}))
    try:
        described = list(pool.map_shards(RunShardWorker, init, [{"op": "describe"}]))[0]["models"]
        root.mkdir(parents=True, exist_ok=True)
        clean_stale(root)  # staging folders of runs killed while preparing their cases
        clean_pending(root, held=writer_holds_lock)
        staging = staging_dir(root, ".stream.tmp-")
        try:
            run_hash, sizes, excluded = _write_case_shards(cases, staging / "cases", shard_size, exclude, progress)
            if not sizes:
                raise AlictError("no test cases to run" + (f" ({excluded} rejected by reviewers left out)"
                                                           if excluded else ""))
            # each model's fingerprint and display name: a run under another name is another run (its tables,
            # JUnit and summary name the models; the old run's names were served "as is")
            inputs_id = run_hash.finish([f"{m['fingerprint']}|{m['name']}" for m in described])
            ask_again = any(m.get("answers_change") for m in described)  # an endpoint's: never a finished run's
            ask = ask_key(inputs_id, refs) if ask_again else None  # one writer per folder; a second waits for it
            with _locked_run(inputs_id, ask, run_dir, root, run_hash.n, progress) as (run_id, folder):
                if not ask_again and is_complete(folder, run_id, shard_size):
                    return _found_finished(folder, extra_files, on_finished)
                work = work_folder(folder)  # a finished folder is re-written beside it, swapped in when done
                done, made = adopt(staging, work, run_id, shard_size, len(sizes), models=[m["name"] for m in described],
                                   reuse=folder if work != folder and not ask_again else None)
                shutil.rmtree(staging, ignore_errors=True)
                state = _initial_state(run_id, started_at, shard_size, sizes, done, run_hash.n, described, pool, made)
                state["inputs_id"] = ask or inputs_id  # an endpoint's unfinished run is found again by its ask
                _write_progress(work, state)
                with _ended_if_raised(work, state):  # a stop here (the app's Cancel, a task switch) or a failure
                    if progress:                     # never leaves "running" with a live pid: a phantom run
                        progress(state["cases_done"], run_hash.n, state["message"])
                _execute(pool, init, work, sizes, set(done), state, progress, should_stop)  # records its own end
                with _ended_if_raised(work, state):
                    _finish(work, run_id, described, sizes, state, started, pool, shard_size,
                            {**(extra or {}), **({"review_excluded": excluded} if excluded else {})}, extra_files,
                            story=on_finished is not None)
                if work != folder:
                    swap_in(work, folder)  # the finished re-write replaces the old run whole (checked again first)
                if on_finished is not None:
                    on_finished(folder)
                return folder
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except ExecutorCancelled as exc:
        raise RunCancelled(str(exc)) from None
    finally:
        pool.close()


def _run_dir_and_root(run_dir: Path | None, root: Path | None) -> tuple[Path | None, Path]:
    """The run folder asked for (named: ``--out .`` names the current folder, whose siblings need a name) and the
    folder its staging lives in."""
    if run_dir is not None:
        from alict_core.common.manifest import named_dir

        run_dir = named_dir(run_dir)
        return run_dir, Path(run_dir).parent
    return None, Path(root) if root is not None else _runs_root()


def _initial_state(run_id: str, started_at: float, shard_size: int, sizes: Sequence[int], done: Mapping[int, str],
                   n_cases: int, described: Sequence[Mapping[str, Any]], pool: Any,
                   made: bool = True) -> dict[str, Any]:
    """``progress.json`` of a run starting (or resuming after the ``done`` shards); ``folder_made``: the folder is
    the run's own, removed when it ends without a finished shard (a folder the user gave is emptied, resumed or not)."""
    return {"folder_made": made,
        "status": "running", "pid": os.getpid(), "host": socket.gethostname(),
        "started_at": started_at, "updated_at": started_at, "run_id": run_id, "shard_size": shard_size,
        "n_shards": len(sizes), "shards_done": len(done), "n_cases": n_cases,
        "cases_done": sum(sizes[s] for s in done), "models": [m["name"] for m in described],
        "executor": pool.name, "workers": pool.workers,
        "parts": {str(shard): digest for shard, digest in sorted(done.items())},
        "message": f"resuming after {len(done)} finished shards" if done else "started"}


def _runs_root() -> Path:
    from alict_core.runner.store import runs_root

    return runs_root()


def _execute(pool: Any, init: dict[str, Any], folder: Path, sizes: list[int], done: set[int],
             state: dict[str, Any], progress: Progress | None, should_stop: Callable[[], bool] | None) -> None:
    """Predict every unfinished shard; progress.json after each; a stop keeps finished shards."""
    key = str(folder)
    stop_file = folder / STOP_FILE

    def stop() -> bool:
        if should_stop is not None and should_stop():
            stop_file.touch()  # workers in other processes see it between batches
            return True
        return False

    def record(result: Mapping[str, Any]) -> None:
        counts_path = folder / "counts" / part_name(int(result["shard"]), ".json")
        state["parts"][str(result["shard"])] = sha256_file(counts_path)  # what a resume verifies it by
        state["shards_done"] += 1
        state["cases_done"] += int(result["n_cases"])
        message = f"shard {state['shards_done']}/{state['n_shards']} done"
        _write_progress(folder, state, message=message)
        if progress:
            progress(state["cases_done"], state["n_cases"], message)

    _STOP_HOOKS[key] = stop
    clear_request_counts(folder)  # a request cap is per command: a resume has its own
    tasks = [{"op": "shard", "run_dir": str(folder), "shard": s} for s in range(len(sizes)) if s not in done]
    try:
        run_shards(pool, RunShardWorker, init, tasks, should_stop=stop, on_result=record)
    except (RunCancelled, ExecutorCancelled) as exc:
        _end_unfinished(folder, state, "cancelled", f"stopped after {state['shards_done']} of {state['n_shards']} "
                        "shards; run again to resume")
        raise RunCancelled(f"run stopped after {state['shards_done']} of {state['n_shards']} shards "
                           "(finished shards are kept; run again to resume)") from exc
    except BaseException as exc:
        _end_unfinished(folder, state, *_ending(exc, state))
        raise
    finally:
        _STOP_HOOKS.pop(key, None)
        stop_file.unlink(missing_ok=True)
        clear_request_counts(folder)


@contextmanager
def _ended_if_raised(folder: Path, state: dict[str, Any]) -> Iterator[None]:
    """Record the run's end when the block raises anything (a BaseException too: the app's script stopped by
    Streamlit), so progress.json never stays "running" for a writer that has moved on."""
    try:
        yield
    except BaseException as exc:
        _end_unfinished(folder, state, *_ending(exc, state))
        raise


def _ending(exc: BaseException, state: dict[str, Any]) -> tuple[str, str]:
    """Status and message of a run ended by ``exc``: an error is a failure with its message; anything else (the
    app's script stopped by a Cancel, a task or page switch; Ctrl-C; exit) is a stop that a re-run resumes."""
    if isinstance(exc, Exception):
        return "failed", str(exc)[:500] or type(exc).__name__
    return "cancelled", (f"stopped after {state['shards_done']} of {state['n_shards']} shards before it finished; "
                         "run again to resume")


def _end_unfinished(folder: Path, state: dict[str, Any], status: str, message: str) -> None:
    """Record a stop or failure; a run with no finished shard leaves no folder behind (nothing to resume), or, in
    a folder the user gave that existed (``--out .``), nothing of its own (the folder was deleted). A run already
    sealed by its manifest is finished: left as it is (a Ctrl-C there rewrote its sealed progress.json, and every
    later reader refused the run as changed)."""
    if (folder / "manifest.json").is_file():
        return
    if state["shards_done"] == 0 and not any((folder / "results").glob("part-*.parquet")):
        if state.get("folder_made", True) is not False:
            shutil.rmtree(folder, ignore_errors=True)
            return
        for entry in list(folder.iterdir()) if folder.is_dir() else []:  # only the run's entries (adopt checked)
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    else:
        _write_progress(folder, state, status=status, message=message)


def _finish(folder: Path, run_id: str, described: list[dict[str, Any]], sizes: list[int], state: dict[str, Any],
            started: float, pool: Any, shard_size: int, extra: dict[str, Any],
            extra_files: Mapping[str, Any] | None = None, story: bool = False) -> None:
    """Merge the shards' counts into summary.csv, write meta.json (with the extra files and story its writer
    means it to have) and the manifest (last)."""
    from alict_core.common.manifest import write_manifest
    from alict_core.models.defaults import resolved_defaults
    from alict_core.runner.summary import merge_counts, summary_frame

    unparsed: dict[str, int] = {}
    parts = []
    for shard in range(len(sizes)):
        counts_path = folder / "counts" / part_name(shard, ".json")
        if not shard_ok(folder, shard, state["parts"].get(str(shard))):
            raise AlictError(f"shard {shard} of run {folder.name!r} changed while the run was running "
                             "(its counts or results no longer match the run's record); run again to redo it")
        counts = read_json(counts_path)
        parts.append(counts["counts"])
        for name, n in (counts.get("unparsed") or {}).items():
            unparsed[name] = unparsed.get(name, 0) + int(n)
    if unparsed:
        extra = {**extra, "unparsed_answers": unparsed}
    _write_progress(folder, state, status="done", message=f"{state['n_cases']} cases × {len(described)} models done")
    write_csv(folder / "summary.csv", summary_frame(merge_counts(parts)))
    write_json(folder / "meta.json", {
        "run_id": run_id, "seconds": round(time.monotonic() - started, 3), "extra": extra, "models": described,
        "layout": "sharded", "shard_size": shard_size, "n_cases": state["n_cases"], "n_shards": len(sizes),
        "executor": pool.name, "workers": pool.workers,
        "model_defaults": resolved_defaults(),  # which parser / MLM / classifiers the defaults meant (#20)
        "extra_files": sorted(extra_files or {}), "story": story,
    })
    for where in (folder, *(folder / name for name in SHARD_DIRS)):  # killed writes' temporary files (the run lock
        clean_stale_temp_files(where, max_age_s=0.0)  # is held: no other writer) never become part of the run
    write_manifest(folder, "run", run_id, state["n_cases"] * len(described))
    _write_extra_files(folder, extra_files)  # after the manifest: rewritten atomically, never a checksum to break


def _write_extra_files(folder: Path, extra_files: Mapping[str, Any] | None) -> list[str]:
    from alict_core.common.refs import check_name

    names = []
    for name, value in (extra_files or {}).items():
        write_json(folder / check_name(name, "run file"), value() if callable(value) else value)
        names.append(name)
    return names


def iter_result_parts(run_dir: Path) -> Iterator[Path]:
    """The results parts of a sharded run in shard order."""
    yield from sorted((Path(run_dir) / "results").glob("part-*.parquet"))


def group_by_seed(cases: Iterable[TestCase]) -> list[TestCase]:
    """Cases reordered so each seed is followed by its expansions (groups in first-appearance order).

    ``build_cases`` lists every seed, then every expansion; a streaming run wants a seed and its expansions in
    one shard. For lists already in memory (the CLI); a generator of cases should yield them grouped.
    """
    groups: dict[str, list[TestCase]] = {}
    for case in cases:
        groups.setdefault(case.seed_id, []).append(case)
    return [case for group in groups.values() for case in group]
