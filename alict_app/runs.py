"""Test runs for the app: request → seeds (+ expansions) → cases → one streaming run → saved run.

The only module of the app that talks to ``alict_core.runner``. Runs live in the one run store that
the CLI writes too, ``artefact_dir("runs")/<run id>`` (run id: content hash of the cases and the
models' fingerprints). An app run also writes ``request.json`` beside the result, so the request's own
hash (known before running) finds a finished run again; a link ``?run=<run id or request key>`` reopens it.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd
import streamlit as st
from pydantic import BaseModel, ConfigDict, Field

from alict_app import artefacts, backends, demo
from alict_app.formatting import TASKS
from alict_core.common.config import cache_dir
from alict_core.common.csvsafe import read_csv
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json
from alict_core.runner.reader import LARGE_ROWS
from alict_core.runner.store import check_store_folder, copied_from, run_folders

Progress = Callable[[str, float], None]


@dataclass
class RunRequest:
    """Everything that determines a run's result (its hash is the request key)."""

    task: str
    lc_ids: list[str]
    models: list[dict[str, Any]]  # {"name": registry name, "kwargs": {...}, "label": shown name}
    max_seeds: int | str | None = 30
    sample_seed: int = 0
    expand: bool = False
    parser: str | None = None
    mlm: str | None = None
    max_per_seed: int = 3
    batch_size: int = 64
    spec_keys: dict[str, str] = field(default_factory=dict)
    suites: list[str] = field(default_factory=list)  # test-case JSONL files run beside the LCs (NLPLego)
    keep_flagged: bool = False  # keep cases the validity checks flag (alict_core.cases.validity)

    def key(self) -> str:
        return hash_json(asdict(self), length=16)


class RunCancelled(AlictError):
    """The user stopped a run (between batches); nothing is saved, finished batches stay cached."""


def runs_root() -> Path:
    """The run store shared with the CLI (``alict run``); not created here (a page view made it): the run writer
    creates it."""
    return cache_dir() / "runs"


def _is_run(folder: Path) -> bool:
    return not folder.name.startswith(".") and (folder / "meta.json").exists()


def _request_index() -> dict[str, str]:
    """Request key → run id of every finished app run."""
    index: dict[str, str] = {}
    finished: dict[str, float] = {}
    for meta in runs_root().glob("*/request.json"):
        try:
            info = read_json(meta)
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict) or not isinstance(info.get("key"), str):  # tampered: another run's page
            continue  # view and every Run press failed with a KeyError
        if info.get("status") == "done" and _is_run(meta.parent) and copied_from(meta.parent) is None \
                and _serves_request(meta.parent, info):
            when = info.get("finished")
            when = float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else 0.0
            if when >= finished.get(info["key"], -1.0):  # the same settings run again (after a review write-back,
                index[info["key"]], finished[info["key"]] = meta.parent.name, when  # a model changed): the newest
    return index


def _serves_request(folder: Path, info: dict[str, Any]) -> bool:
    """Whether the run in ``folder`` ran the models its ``request.json`` names (a request.json copied into another
    run's folder made that run answer the request: its results served for models it never ran)."""
    try:
        meta = read_json(folder / "meta.json")
        ran = [str(m["name"]) for m in meta["models"]]
        asked = [{str(m["name"]), str(m.get("label") or m["name"]), str((m.get("kwargs") or {}).get("name") or "")}
                 for m in info["request"]["models"]]  # a model runs under its display name or its registry name
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return len(ran) == len(asked) and all(any(name in names for names in asked) for name in ran)


def resolve(key: str) -> str:
    """The run id of ``key`` (a run id, or the request key of an app run); ``key`` itself when unknown.

    Keys come from the URL: they must be plain names (``alict_core.common.refs``), never paths."""
    from alict_core.common.refs import check_name

    check_name(key, "run")
    if _is_run(runs_root() / key):
        check_store_folder(runs_root() / key, key)  # a copied or renamed folder: said, as `report <id>` says it
        return key
    return _request_index().get(key, key)


def run_dir(key: str) -> Path:
    """The folder of run ``key``: a validated name inside the run store."""
    from alict_core.common.refs import resolve_inside

    return resolve_inside(runs_root(), resolve(key), "run", must_exist=False)


def finished_runs() -> set[str]:
    """The ids of the finished runs in the store (to tell a run found finished from one a press made)."""
    return {folder.name for folder in runs_root().glob("*") if _is_run(folder)} if runs_root().is_dir() else set()


def is_done(key: str) -> bool:
    """True when ``key`` names a finished run in the store."""
    try:
        return bool(key) and _is_run(run_dir(key))
    except (AlictError, OSError):
        return False


def _task_of(lc_ids: list[str]) -> str | None:
    tasks = {task for task in TASKS for lc in lc_ids if lc.startswith(f"{task}-")}
    return next(iter(tasks)) if len(tasks) == 1 else None


class _Listed(BaseModel):
    """What the run pickers read of a run's request.json / meta.json (files of the shared store, so untrusted)."""

    model_config = ConfigDict(strict=True, extra="allow")


class _ListedModel(_Listed):
    name: str
    label: str | None = None


class _ListedRequest(_Listed):
    task: str | None = None
    lc_ids: list[str]
    models: list[_ListedModel]


class _ListedRun(_Listed):
    key: str
    finished: float = Field(0.0, ge=0, le=1e10, allow_inf_nan=False)  # seconds since 1970, up to the year 2286
    request: _ListedRequest


class _ListedMeta(_Listed):
    models: list[_ListedModel] = []
    extra: dict[str, Any] = {}


def run_info(key: str) -> dict[str, Any]:
    """{"key": run id, "request": {...}, "finished": time} of a run; CLI runs get a request built from meta.json.
    A request.json or meta.json of the wrong shape (tampered: a list, a text time, a number for the LCs) raises a
    ValueError naming the run: the pickers leave that run out (``unreadable_runs``)."""
    folder = run_dir(key)
    try:
        if (folder / "request.json").exists():
            info = read_json(folder / "request.json")
            info = {**info, "key": folder.name} if isinstance(info, dict) else info
        else:
            meta = _ListedMeta.model_validate(read_json(folder / "meta.json"))
            lc_ids = run_lcs(folder)
            models = [{"name": m.name, "kwargs": {}, "label": m.name} for m in meta.models]
            task = meta.extra.get("task")  # recorded by the run (its LC ids need not name the task)
            info = {"key": folder.name, "status": "done", "finished": (folder / "meta.json").stat().st_mtime,
                    "request": {"task": task if task in TASKS else _task_of(lc_ids), "lc_ids": lc_ids,
                                "models": models}}
        _ListedRun.model_validate(info)
        if (folder / "summary.csv").exists():  # finished: an LC asked for may have had no case (said at the run)
            info = {**info, "lcs_in_run": info["request"]["lc_ids"] if not (folder / "request.json").exists()
                    else run_lcs(folder)}  # a CLI run's request was built from summary.csv just above
    except (TypeError, ValueError) as error:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"run {folder.name}: request.json / meta.json of an unexpected shape") from error
    return info


def run_lcs(folder: Path) -> list[str]:
    """The LC ids a finished run holds (its summary.csv), whatever its request asked for."""
    summary = folder / "summary.csv"
    if not summary.exists() or not summary.stat().st_size:
        return []
    frame = read_csv(summary)
    if "lc_id" not in frame.columns:
        raise ValueError(f"run {folder.name}: summary.csv without an lc_id column")
    return sorted(set(frame["lc_id"].astype(str)))


def list_runs(task: str | None = None) -> list[dict[str, Any]]:
    """Finished runs of the store, app and CLI alike (newest first), with their request and finish time. A folder
    that holds another run (a hand copy or rename, ``copied_runs``) is not listed: its id is not the run's. The rows
    share their nested values with the listing's cache: read them, do not change them."""
    rows = [dict(info) for info in _store_infos() if info.get("copied_from") is None
            and info.get("unreadable") is None and (task is None or info["request"].get("task") == task)]
    return sorted(rows, key=lambda r: r.get("finished", 0), reverse=True)


def copied_runs() -> dict[str, str]:
    """Folder name → the run id its meta.json names, for run-store folders that hold another run (copied or
    renamed by hand): the pages skip them and say so (``widgets.copied_runs_note``)."""
    found = {info["key"]: info["copied_from"] for info in _store_infos() if info.get("copied_from") is not None}
    return dict(sorted(found.items()))


def unreadable_runs() -> list[str]:
    """Run-store folders whose request.json / meta.json has the wrong shape (tampered): not listed, named."""
    return sorted(info["key"] for info in _store_infos() if info.get("unreadable") is not None)


def _store_infos() -> Iterator[dict[str, Any]]:
    """``_run_info_at`` of every readable run-store folder; a folder named ``.…`` is a run being written (or left by
    a killed writer) and is left out."""
    root = runs_root()
    seen = set()
    for folder in run_folders(root):
        seen.add(str(folder))
        try:
            yield _run_info_at(str(folder), _info_stamp(folder))
        except (ValueError, KeyError, OSError):
            continue
    _run_info_at.forget_others(root, seen)  # folders removed from the store


def _info_stamp(folder: Path) -> tuple[tuple[int, int], ...]:
    """(mtime, size) of the files ``run_info`` reads: changes whenever what it would return may change."""
    stamps = []
    for name in ("request.json", "meta.json", "summary.csv"):
        try:
            stat = (folder / name).stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            stamps.append((0, -1))
    return tuple(stamps)


class _InfoCache:
    """``_read_run_info`` per run-store folder, kept until the folder's files change (its stamp) or it leaves the
    store: one entry per folder, whatever the store's size. (A fixed-size LRU of 1,024 entries missed every folder
    of a larger store on every listing — each click on a run-picker page read the whole store again: pass 12.)"""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[tuple[int, int], ...], dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def __call__(self, folder: str, stamp: tuple[tuple[int, int], ...]) -> dict[str, Any]:
        with self._lock:
            hit = self._entries.get(folder)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        info = _read_run_info(folder)  # an error is not kept: the folder is read again next time
        with self._lock:
            self._entries[folder] = (stamp, info)
        return info

    def forget_others(self, root: Path, kept: set[str]) -> None:
        """Drop the entries of folders of ``root`` not in ``kept`` (removed from the store)."""
        with self._lock:
            for folder in [f for f in self._entries if Path(f).parent == root and f not in kept]:
                del self._entries[folder]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_run_info_at = _InfoCache()


def _read_run_info(folder: str) -> dict[str, Any]:
    """``run_info`` of the run in ``folder`` (``_run_info_at`` reads it again only when its files change: listing
    the runs on every page switch reads no file). A folder that holds another run: ``{"copied_from": <its id>}``."""
    recorded = copied_from(Path(folder))
    if recorded is not None:
        return {"key": Path(folder).name, "copied_from": recorded, "request": {}}
    try:
        return run_info(Path(folder).name)
    except ValueError as error:
        if not isinstance(error.__cause__, (TypeError, ValueError)):
            raise
        return {"key": Path(folder).name, "unreadable": str(error), "request": {}}


def run_model_ref(key: str, model_name: str) -> Any:
    """The ``ModelRef`` of the model called ``model_name`` in run ``key``, as the run's request named it (a CLI run,
    or a name not found: the registered model of that name), to load it again (explanations, the Story)."""
    from alict_core.models.refs import ModelRef

    refs = [ModelRef.from_dict(ref) for ref in run_info(key)["request"]["models"]]
    found = next((ref for ref in refs if ref.answers_to(model_name)), ModelRef(model_name))
    if calls_a_host(found) and not added_here(found):  # a shared run's endpoint, with its adder's token or api_key:
        # another session explaining a case made the server call it with those credentials
        if demo.enabled():  # no Run page to add it on (pass 38)
            raise AlictError(f"model {found.shown!r} is a service (an endpoint): its cases are not explained in the "
                             "demo")
        raise AlictError(f"model {found.shown!r} is an endpoint added in another session: add it on the Run page "
                         f"(Add your own model, with its URL and the display name {found.run_name()!r}, as the run "
                         "named it) to explain its cases here")
    return found


HOST_ARGUMENTS = ("url", "base_url", "api_key", "headers")  # what makes a user-added model call a host


def calls_a_host(ref: Any) -> bool:
    """Whether ``ref`` is a user-added model that calls a host (an HTTP or OpenAI-compatible endpoint)."""
    return any(ref.kwargs.get(name) for name in HOST_ARGUMENTS)


def added_here(ref: Any) -> bool:
    """Whether this session added ``ref`` itself (the same kind and arguments) on the Run page."""
    return any(m.get("name") == ref.name and dict(m.get("kwargs") or {}) == dict(ref.kwargs)
               for m in st.session_state.get("user_models", []))


def run_model_fingerprint(key: str, model_name: str) -> str | None:
    """The content fingerprint the run recorded for its model ``model_name`` (None when it recorded none)."""
    try:
        meta = read_json(run_dir(key) / "meta.json")
        return next((str(m["fingerprint"]) for m in meta["models"] if m.get("name") == model_name), None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, AlictError):
        return None


def describe_run(info: dict[str, Any]) -> str:
    """One line naming a finished run: when, how many LCs, which models, short key."""
    request = info["request"]
    when = dt.datetime.fromtimestamp(info.get("finished", 0)).strftime("%Y-%m-%d %H:%M")
    models = ", ".join(m.get("label") or m["name"] for m in request["models"])
    return f"{when} · {lc_count(request['lc_ids'], info.get('lcs_in_run'))} · {models} · {info['key'][:8]}"


def lc_count(asked: list[str], held: list[str] | None) -> str:
    """"3 LCs", "1 of 2 LCs" (an LC asked for had no case), "+ 1 suite test" for suite tests beside them."""
    held = list(asked) if held is None else list(held)
    own = sum(lc in held for lc in asked)
    suites = sum(lc not in asked for lc in held)
    tests = f"{suites} suite test{'s' if suites > 1 else ''}"
    if not asked:  # a suite-only run
        return tests
    text = f"{own} of {len(asked)} LCs" if own < len(asked) else f"{len(asked)} LCs"
    return text + (f" + {tests}" if suites else "")


BIG_ROWS = LARGE_ROWS  # case × model rows above which the pages aggregate and page instead of loading the run


@st.cache_resource(show_spinner=False, max_entries=8)
def _reader(run_id: str, stamp: Any) -> Any:
    from alict_core.runner.reader import RunReader
    from alict_core.runner.run import verify_saved_run

    folder = runs_root() / run_id
    if (folder / "meta.json").exists():  # finished: checked against its manifest, like RunResult.load (a running
        verify_saved_run(folder)  # run has no manifest yet and shows its finished shards)
    return RunReader.open(folder)


def _stamp(folder: Path) -> tuple[float, ...]:
    """Changes when a running run finishes a shard or its meta.json appears (so cached aggregates refresh), and when
    the folder is swapped for a re-write of it (its inode and its results folder's: the same mtimes were served
    from the old folder's reader)."""
    marks = [folder / "progress.json", folder / "meta.json", folder / "results"]
    inodes = tuple(float(p.stat().st_ino) for p in (folder, folder / "results") if p.exists())
    return (max((p.stat().st_mtime for p in marks if p.exists()), default=0.0), *inodes)


def reader(key: str) -> Any:
    """A ``RunReader`` of the run (either layout; a running run reads its finished shards), cached per state."""
    folder = run_dir(key)
    return _reader(folder.name, _stamp(folder))


def unparsed_answers(key: str) -> dict[str, int]:
    """Per model, its answers in run ``key`` that could not be parsed (scored as its fallback label): the run's
    meta.json ``extra``, read as the summary JSON and HTML report read it ({} while the run is not finished)."""
    from alict_core.runner.summary import unparsed_answers as counted

    path = run_dir(key) / "meta.json"
    try:
        meta = read_json(path) if path.is_file() else {}
    except (OSError, ValueError):  # the page's own reading of the run says what is wrong with it
        return {}
    return counted(meta.get("extra") if isinstance(meta, dict) else None)


def _meta(key: str) -> dict[str, Any]:
    """The run's meta.json ({} while it is not finished, or unreadable: the page's own reading says what is wrong)."""
    try:
        path = run_dir(key) / "meta.json"
        meta = read_json(path) if path.is_file() else {}
    except (OSError, ValueError, AlictError):
        return {}
    return meta if isinstance(meta, dict) else {}


def review_excluded(key: str) -> int:
    """How many cases human reviewers rejected were left out of run ``key`` (its meta.json ``review_excluded``, as
    the CLI's `run` and the HTML report say it); 0 when none or not told."""
    extra = _meta(key).get("extra")
    count = extra.get("review_excluded", 0) if isinstance(extra, dict) else 0
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def asked_services(key: str) -> list[str]:
    """The models of run ``key`` whose answers change (endpoints: `answers_change` in its meta.json): a run asked them
    once; asked again, they may answer otherwise (a redeploy)."""
    models = _meta(key).get("models")
    return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("answers_change") is True] \
        if isinstance(models, list) else []


def request_key_of(run_id: str) -> str | None:
    """The request key (the Run page's settings) an app run was made for; None for a CLI run or an unreadable one."""
    try:
        info = read_json(run_dir(run_id) / "request.json")
    except (OSError, ValueError, AlictError):
        return None
    return info.get("key") if isinstance(info, dict) and isinstance(info.get("key"), str) else None


def is_big(key: str) -> bool:
    """Runs over ``BIG_ROWS`` case × model rows are shown by aggregates and pages, never loaded whole (smaller
    ones, sharded or not, keep the full explorer: templates, inserted words, case details)."""
    try:
        return bool(reader(key).n_rows() > BIG_ROWS)
    except (AlictError, OSError, ValueError):  # no or unreadable Parquet results (ArrowInvalid is a ValueError):
        return False  # the in-memory path says what is wrong


@st.cache_data(show_spinner=False, max_entries=64)
def _row_count(run_id: str, stamp: Any, filters: Any) -> int:
    return int(_reader(run_id, stamp).count(filters))


def row_count(key: str, filters: Any) -> int:
    """Rows of a run a ``RowFilter`` keeps (cached per filter)."""
    folder = run_dir(key)
    return _row_count(folder.name, _stamp(folder), filters)


def running_runs() -> list[dict[str, Any]]:
    """Runs of the store with a progress.json that are not done (started here or from the CLI), newest first."""
    from alict_core.runner.reader import running_runs as scan

    return scan(runs_root())


def folder_stamp(folder: Path) -> tuple[int, ...]:
    """Changes when any file of a run folder changes (re-written, a story added, a part edited or damaged since):
    every cache of a run's tables is keyed on it, so a run damaged after its first view is verified again and
    refused, never served from memory."""
    stamps: list[int] = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        try:
            info = path.lstat()
        except OSError:
            continue
        stamps += [info.st_mtime_ns, info.st_size, info.st_ino]
    return tuple(stamps)


def run_stamp(key: str) -> tuple[int, ...]:
    """``folder_stamp`` of run ``key``'s folder."""
    return folder_stamp(run_dir(key))


@st.cache_resource(show_spinner="Loading the run …", max_entries=8)
def _load_run(run_id: str, stamp: tuple[int, ...]) -> Any:
    from alict_core.runner import RunResult

    return RunResult.load(runs_root() / run_id)


def load_run(key: str) -> Any:
    """The saved RunResult of a run id or request key (cached while its files are unchanged)."""
    run_id = resolve(key)
    return _load_run(run_id, run_stamp(run_id))


def plan_hooks(request: RunRequest, progress: Progress, should_stop: Callable[[], bool]) -> Any:
    """The app's part in the core's plan: its cached seed search, its expansion with the chosen parser and masked
    LM, progress before each LC and a cancel between LCs."""
    from alict_core.expansion import expand
    from alict_core.plan import PlanHooks

    def step(index: int, count: int, spec: Any) -> str:
        return f"LC {index + 1} of {count} ({getattr(spec, 'title', '') or spec.id})"

    def before_lc(index: int, count: int, spec: Any) -> None:
        progress(f"{step(index, count, spec)}: finding seeds", 0.3 * index / max(1, count))

    def find_seeds(spec: Any, max_seeds: int | str | None, wanted: set[str]) -> list[Any]:
        return list(artefacts.seed_set(spec, max_seeds=max_seeds, seed=request.sample_seed).seeds)

    def expand_lc(spec: Any, found: list[Any], index: int, count: int) -> list[dict[str, Any]]:
        def on_expand(done: int, total: int, stage: str) -> None:
            share = done / total if total else 0.0
            progress(f"{step(index, count, spec)}: expanding, {stage} {done}/{total}",
                     0.3 * (index + share) / max(1, count))

        if not (request.parser and request.mlm):
            raise AlictError("a run with expansions needs a parser and a masked LM: choose both")
        return list(expand(found, spec, backends.parser(request.parser), backends.suggester(request.mlm),
                           max_per_seed=request.max_per_seed, progress=on_expand).rows)

    def after_lc(index: int, count: int, spec: Any) -> None:
        if should_stop():
            raise RunCancelled(f"cancelled while preparing {spec.id}")

    return PlanHooks(find_seeds=find_seeds, expand=expand_lc if request.expand else None, before_lc=before_lc,
                     after_lc=after_lc)


def execute(request: RunRequest, specs: dict[str, Any], progress: Progress,
            should_stop: Callable[[], bool] = lambda: False,
            on_left_out: Callable[[dict[str, str]], None] | None = None) -> str:
    """Run the request, save the result in the run store; return its run id. ``progress(message, fraction)``;
    ``on_left_out({lc_id: why})``: the LCs asked for that are not in the run (no seed, every case flagged or
    rejected by reviewers), said by the page, never dropped silently."""
    from alict_core.harden.versions import MODEL_RESOLVERS
    from alict_core.models.refs import ModelRef, browser_ref, check_run_names
    from alict_core.plan import PlanOptions, make_plan
    from alict_core.review.writeback import RejectionFilter
    from alict_core.runner import RunCancelled as CoreCancelled
    from alict_core.runner.stream import WAITING_NOTE, group_by_seed, run_streaming

    started = time.time()
    check_run_names([ModelRef.from_dict(ref) for ref in request.models], "the models chosen",  # before any work
                    "by another display name")
    options = PlanOptions(task=request.task, lcs=tuple(request.lc_ids), suites=tuple(request.suites),
                          max_seeds=request.max_seeds, sample_seed=request.sample_seed,
                          keep_flagged=request.keep_flagged)
    plan = make_plan(options, specs={lc_id: specs[lc_id] for lc_id in request.lc_ids},
                     hooks=plan_hooks(request, progress, should_stop))
    refs = [ModelRef.from_dict(ref) for ref in request.models]
    models = [browser_ref(ref).to_dict() for ref in refs]  # browser references: the trust model checks them here

    def on_run(done: int, total: int, message: str = "") -> None:
        counted = f"running the models: {done:,}/{total:,} cases" if total else "preparing the cases"
        said = f"{counted} ({message})" if message and total else message or counted
        progress(message if message == WAITING_NOTE else said,  # alone: behind the counts the bar cut it (pass 38)
                 0.3 + 0.7 * (done / total if total else 0.0))

    def request_file() -> dict[str, Any]:  # written into the run before its manifest: never a run without it
        return {"key": request.key(), "request": asdict(request), "status": "done", "started": started,
                "finished": time.time()}

    def write_story(folder: Path) -> None:  # the Story page's cards, ready when the run is (alict_core.report.story)
        from alict_core.common.jsonl import read_json
        from alict_core.report.story import precompute_story

        described = read_json(folder / "meta.json")["models"]
        progress("done (the Story explains an endpoint's failures when it is opened)"
                 if any(m.get("answers_change") for m in described) else "preparing the Story's cards", 1.0)
        names = [m["name"] for m in described]
        by_name = {name: ref for name, ref in zip(names, refs, strict=False)}
        by_name.update({ref.shown: ref for ref in refs})
        precompute_story(folder, lambda name: backends.model_of(by_name.get(name, ModelRef(name))))

    try:  # one code path with the CLI; finished shards and cached predictions make a re-run resume
        folder = run_streaming(group_by_seed(plan.cases), models, root=runs_root(), batch_size=request.batch_size,
                               progress=on_run, should_stop=should_stop, extra=plan.run_extra(),
                               exclude=RejectionFilter(), plugins=MODEL_RESOLVERS,
                               extra_files={"request.json": request_file}, on_finished=write_story)
    except CoreCancelled as exc:
        raise RunCancelled(str(exc)) from exc
    left_out = plan.lcs_not_run(run_lcs(folder))
    if left_out and on_left_out is not None:
        on_left_out(left_out)
    _load_run.clear()
    _run_frames.clear()
    _overview_figures.clear()
    return folder.name


def size_estimate(request: RunRequest, specs: dict[str, Any]) -> dict[str, int]:
    """An upper bound of a request's size before it runs: seeds (the cap per LC, or the spec's own), cases (with
    up to ``max_per_seed`` expansions each) and predictions (cases × models)."""
    seeds = 0
    for lc_id in request.lc_ids:
        cap = request.max_seeds if isinstance(request.max_seeds, int) else getattr(specs[lc_id], "max_seeds", None)
        seeds += int(cap or 1000)
    cases = seeds * (1 + (request.max_per_seed if request.expand else 0))
    return {"seeds": seeds, "cases": cases, "models": len(request.models), "predictions": cases * len(request.models)}


# ------------------------------------------------------------------ frames from a RunResult
def cases_frame(result: Any) -> pd.DataFrame:
    """One row per (case, model): RunResult.cases() plus ``failed`` (not passed)."""
    frame = result.cases()
    return frame.assign(failed=~frame["passed"].astype(bool))


def run_frames(key: str) -> dict[str, Any]:
    """The run's tables (cases, pass_to_fail, summary), computed once per run key and state of its files."""
    return _run_frames(key, run_stamp(key))


@st.cache_data(show_spinner=False, max_entries=8)
def _run_frames(key: str, stamp: tuple[int, ...]) -> dict[str, Any]:
    result = load_run(key)
    return {"cases": cases_frame(result), "pass_to_fail": result.pass_to_fail(), "summary": result.summary()}


def overview_figures(key: str) -> dict[str, Any]:
    """Heatmap and bars of a run (plotly figures), built once per run key and state of its files."""
    return _overview_figures(key, run_stamp(key))


@st.cache_data(show_spinner=False, max_entries=8)
def _overview_figures(key: str, stamp: tuple[int, ...]) -> dict[str, Any]:
    from alict_app import charts

    cases = run_frames(key)["cases"]
    rates = cases.groupby(["lc_id", "model"])["failed"].mean().reset_index(name="fail_rate")
    return {"heatmap": charts.heatmap_figure(rates, "lc_id", "model", "fail_rate", "Fail rate per LC × model"),
            "bars": charts.fail_rate_bars(cases)}
