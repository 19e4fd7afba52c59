"""The ``ray`` executor: Ray Data ``map_batches`` over an actor pool, one worker object (one model) per actor.

Ray is an optional extra (``pip install .[ray]``); this module is imported only when the ``ray`` executor is
asked for. The cluster is ``address`` (a caller's option such as ``--ray-address``), else ``RAY_ADDRESS``,
else a local Ray started on demand with ``num_cpus = workers`` (no dashboard, no usage stats, quiet logs) and
shut down by ``close()``. Tasks travel as one JSON string per row and results come back the same way, so Ray
never has to guess column types; data itself travels only through shard files, which must sit on storage every
node sees.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
from typing import Any, Iterator, Mapping, Sequence

from alict_core.common.errors import AlictError
from alict_core.executors.base import EXECUTORS, ExecutorCancelled, StopCheck, Task

POLL_S = 0.2  # how often a stop request is checked while shards run
CLOSE_WAIT_S = 10.0  # how long close() lets a left result reader end its dataset before Ray shuts down
INSTALL_HINT = 'pip install ".[ray]"  (or: pip install "ray[data]")'


def _ray() -> Any:
    """The ``ray`` module, or one clear message saying how to install it.

    Ray's auto-init is turned off when this module is the first to import Ray: a Ray Data thread still ending
    after ``close()`` must not start a new local Ray (seen as a crash at interpreter exit after a cancelled run).
    """
    os.environ.setdefault("RAY_ENABLE_AUTO_CONNECT", "0")
    try:
        import ray
        import ray.data  # noqa: F401  (the executor needs Ray Data, not only Ray core)
    except ImportError as exc:
        raise AlictError(f"the ray executor needs Ray Data, which is not installed ({exc.name}): {INSTALL_HINT}") \
            from None
    return ray


ERROR_KEY = "__alict_error__"


class _ActorWorker:
    """What each Ray actor holds: one ``worker_cls(**init_kwargs)``, called on one task per batch.

    A failure (building the worker or running a task) comes back as a result row naming the error, so the
    driver raises one clear message instead of Ray's wrapped traceback.
    """

    def __init__(self, worker_cls: type, init_kwargs: Mapping[str, Any]) -> None:
        self.worker: Any = None
        self.error = ""
        try:
            self.worker = worker_cls(**dict(init_kwargs))
        except Exception as exc:  # reported with the first task
            self.error = _describe(exc)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        results = []
        for text in batch["task"]:
            if self.error:
                results.append(json.dumps({ERROR_KEY: self.error}))
                continue
            try:
                results.append(json.dumps(self.worker(json.loads(str(text)))))
            except Exception as exc:
                results.append(json.dumps({ERROR_KEY: _describe(exc)}))
        return {"result": results}


def _describe(exc: BaseException) -> str:
    """An error as one line: an ``AlictError``'s own message, else its type and message."""
    return str(exc) if isinstance(exc, AlictError) else f"{type(exc).__name__}: {exc}"


REACH_TIMEOUT_S = 5.0


def _host_port(address: str) -> tuple[str, str, bool]:
    """(scheme with '://', host[:port], whether a user or password came before the host) of a cluster address; a
    path, query or fragment after the host is left out."""
    scheme, sep, rest = address.rpartition("://")
    rest = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    _userinfo, at, hostport = rest.rpartition("@")
    return f"{scheme}{sep}", hostport, bool(at)


def shown_address(address: str) -> str:
    """A cluster address as messages show it: a user and password before the host masked, a path, query or fragment
    left out (``ray://u:secret@host:10001/?token=x`` → ``ray://***@host:10001``)."""
    scheme, hostport, masked = _host_port(address)
    return f"{scheme}{'***@' if masked else ''}{hostport}"


def check_reachable(address: str, timeout: float = REACH_TIMEOUT_S) -> None:
    """Refuse a cluster address where nothing answers (``ray.init`` retried a dead ``host:port`` for minutes: a
    hang) or whose port is no number Ray reads alike (``'1 '`` and a full-width digit skipped this check, and Ray
    then retried the dead address); ``auto`` and addresses without a port are left to Ray."""
    import socket

    _scheme, hostport, _masked = _host_port(address)
    host, _, port = hostport.rpartition(":")
    if not host or not port:
        return
    if not port.isascii() or not port.isdigit():
        raise AlictError(f"the Ray cluster address {shown_address(address)!r}: port {port[:12]!r} is not a number "
                         "(digits 0-9, no spaces)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise AlictError(f"could not reach the Ray cluster at {shown_address(address)!r}: nothing answers there "
                         f"({reason})") from None


class RayExecutor:
    """``workers`` Ray actors (one model instance each) fed one task at a time by Ray Data.

    ``gpus_per_worker``: GPUs each actor reserves; by default 1 when the cluster has GPUs, else 0.
    """

    name = "ray"

    def __init__(self, workers: int = 1, address: str | None = None, gpus_per_worker: float | None = None) -> None:
        self.ray = _ray()
        self.workers = workers
        given = address if address is not None else os.environ.get("RAY_ADDRESS")
        self.address = given.strip() if given and given.strip() else None  # '127.0.0.1:1 ' pasted with its space
        if gpus_per_worker is not None and (isinstance(gpus_per_worker, bool) or not gpus_per_worker >= 0):
            raise AlictError(f"gpus_per_worker must be a number ≥ 0, got {gpus_per_worker!r}")
        self.gpus_per_worker = gpus_per_worker
        self._started = False
        self._pumps: list[_ResultPump] = []

    # ------------------------------------------------------------------------------------------ the cluster
    def _connect(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        quiet = {"logging_level": logging.WARNING, "log_to_driver": False, "configure_logging": True}
        try:
            if self.address:
                check_reachable(self.address)
                ray.init(address=self.address, **quiet)
            else:
                # local workers import alict_core from wherever this process does
                import alict_core

                source_root = os.path.dirname(os.path.dirname(os.path.abspath(alict_core.__file__)))
                path = os.pathsep.join(p for p in (source_root, os.environ.get("PYTHONPATH", "")) if p)
                ray.init(num_cpus=self.workers, include_dashboard=False,
                         runtime_env={"env_vars": {"PYTHONPATH": path, "RAY_USAGE_STATS_ENABLED": "0"}}, **quiet)
                self._started = True
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"the Ray cluster at {shown_address(self.address)!r}" if self.address else "a local Ray"
            reason = str(exc).replace(self.address, shown_address(self.address)) if self.address else exc
            raise AlictError(f"could not start or reach {where}: {reason}") from None
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # no per-dataset INFO lines
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.verbose_progress = False

    def _gpus(self) -> float:
        if self.gpus_per_worker is not None:
            return float(self.gpus_per_worker)
        return 1.0 if self.ray.cluster_resources().get("GPU", 0) > 0 else 0.0

    # ------------------------------------------------------------------------------------------ the work
    def map_shards(self, worker_cls: type, init_kwargs: Mapping[str, Any], tasks: Sequence[Task], *,
                   should_stop: StopCheck | None = None) -> Iterator[dict[str, Any]]:
        if not tasks:
            return
        if should_stop is not None and should_stop():
            raise ExecutorCancelled("stopped; finished shards are kept and a re-run resumes after them")
        self._connect()
        ray = self.ray
        rows = [{"task": json.dumps(dict(task))} for task in tasks]
        actors = max(1, min(self.workers, len(rows)))
        dataset = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
            _ActorWorker, batch_size=1, batch_format="numpy",
            fn_constructor_kwargs={"worker_cls": worker_cls, "init_kwargs": dict(init_kwargs)},
            compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=1, num_gpus=self._gpus())
        pump = _ResultPump(dataset.iter_rows())
        self._pumps = [p for p in self._pumps if p.thread.is_alive()] + [pump]
        try:
            while True:
                if should_stop is not None and should_stop():  # polled every POLL_S, even during a long shard
                    raise ExecutorCancelled("stopped; finished shards are kept and a re-run resumes after them")
                row = pump.next(POLL_S)
                if row is _WAITING:
                    continue
                if row is _END:
                    return
                result = json.loads(row["result"])
                if isinstance(result, dict) and ERROR_KEY in result:
                    raise AlictError(str(result[ERROR_KEY]))
                yield result
        finally:
            pump.leave()

    def close(self) -> None:
        """Shut down the local Ray this executor started (a cluster given by address is left running)."""
        for pump in self._pumps:  # a cancelled map_shards' reader closes its dataset once Ray hands it a row
            pump.leave()
            pump.thread.join(CLOSE_WAIT_S)
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        for pump in self._pumps:  # one still waiting for its first row ends now that Ray is down: let it finish
            pump.thread.join(CLOSE_WAIT_S)  # here, not in a Ray call at interpreter exit (a crash)
        self._pumps = []
        self._started = False


_WAITING, _END = object(), object()


class _ResultPump:
    """Reads a Ray Data row iterator in a thread, so the caller can poll ``should_stop`` while a shard runs.

    ``leave()`` asks the thread to close the iterator (which shuts the dataset's actors down) as soon as Ray
    hands it the next row; ``RayExecutor.close()`` shutting down a local Ray ends it at once.
    """

    def __init__(self, rows: Iterator[dict[str, Any]]) -> None:
        self.rows = rows
        self.queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.leaving = threading.Event()
        self.thread = threading.Thread(target=self._run, name="alict-ray-results", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for row in self.rows:
                if self.leaving.is_set():
                    break
                self.queue.put(("row", row))
            self.queue.put(("end", None))
        except BaseException as exc:  # reported to the caller (or dropped when it left)
            self.queue.put(("error", exc))
        finally:
            close = getattr(self.rows, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):  # the dataset is being torn down anyway
                    close()

    def next(self, timeout: float) -> Any:
        """The next row, ``_WAITING`` after ``timeout`` seconds without one, or ``_END``; raises a worker error."""
        try:
            kind, value = self.queue.get(timeout=timeout)
        except queue.Empty:
            return _WAITING
        if kind == "end":
            return _END
        if kind == "error":
            raise _as_alict_error(value)
        return value

    def leave(self) -> None:
        self.leaving.set()


def _as_alict_error(exc: BaseException) -> AlictError:
    """One clear message for an error raised by Ray itself (worker errors come back as result rows)."""
    if isinstance(exc, AlictError):
        return exc
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return AlictError(f"a Ray worker failed ({type(exc).__name__}: {lines[0] if lines else exc!r}); "
                      "any finished shards are kept: run again to resume")


EXECUTORS.add("ray", RayExecutor, "Ray Data actors (one model each) on a Ray cluster or a local Ray "
              "(pip install .[ray])")
