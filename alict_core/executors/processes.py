"""The ``processes`` executor: a local pool of spawned worker processes that share nothing but shard files.

Each process builds its worker once (``worker_cls(**init_kwargs)``, e.g. loading a model by name) in the pool's
initializer and then runs one task at a time. At most ``2 × workers`` tasks are in flight, so a long task list
never piles up in the pool's queue. On a stop request or an error, queued tasks are cancelled, running ones
finish their shard (shards are written atomically) and the pool is shut down.

Shutting down is bounded once no shard is running: a worker that has nothing left to do but does not exit within
``EXIT_WAIT_S`` (seen once on a loaded machine: a spawned worker asleep on a futex at exit) is terminated, then
killed, so ``close`` never waits forever on a process that will not end by itself.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import threading
import time
from typing import Any, Iterator, Mapping, Sequence

from alict_core.common.errors import AlictError
from alict_core.executors.base import EXECUTORS, ExecutorCancelled, StopCheck, Task

POLL_S = 0.2
PARENT_POLL_S = 0.5  # how often a worker checks that the process that started it is alive
EXIT_WAIT_S = 20.0  # how long idle workers may take to exit after shutdown before they are terminated
_WORKER: Any = None  # the worker of this process (set by the pool initializer)


def _init_worker(worker_cls: type, init_kwargs: Mapping[str, Any], parent: int | None = None) -> None:
    global _WORKER
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="alict-parent-watch").start()
    _WORKER = worker_cls(**dict(init_kwargs))


def _exit_with_parent(parent: int) -> None:
    """End this worker within ``PARENT_POLL_S`` of its parent's death: a SIGKILLed run's workers went on for
    minutes with their models loaded and wrote shards into a folder another run had taken over meanwhile (shard
    writes are atomic, so a worker ended at any point leaves whole files or none)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(70)


def _call(task: Task) -> dict[str, Any]:
    if _WORKER is None:  # the initializer failed; the pool reports it as broken
        raise AlictError("worker process was not initialised")
    return _WORKER(task)


class ProcessExecutor:
    """``workers`` spawned processes (``concurrent.futures.ProcessPoolExecutor``), one worker object each.

    The pool is kept between ``map_shards`` calls with the same worker class and arguments (a model loads once
    per process for a whole run) and rebuilt when they change.
    """

    name = "processes"

    def __init__(self, workers: int = 2) -> None:
        self.workers = workers
        self._pool: cf.ProcessPoolExecutor | None = None
        self._key: tuple[type, str] | None = None
        self._in_flight: set[cf.Future] = set()

    def _pool_for(self, worker_cls: type, init_kwargs: Mapping[str, Any]) -> cf.ProcessPoolExecutor:
        key = (worker_cls, repr(sorted(init_kwargs.items())))
        if self._pool is None or self._key != key:
            self.close()
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers,
                                                mp_context=multiprocessing.get_context("spawn"),
                                                initializer=_init_worker,
                                                initargs=(worker_cls, dict(init_kwargs), os.getpid()))
            self._key = key
        return self._pool

    def map_shards(self, worker_cls: type, init_kwargs: Mapping[str, Any], tasks: Sequence[Task], *,
                   should_stop: StopCheck | None = None) -> Iterator[dict[str, Any]]:
        if not tasks:
            return
        pool = self._pool_for(worker_cls, init_kwargs)
        pending = list(reversed(tasks))
        running: set[cf.Future] = set()
        try:
            while pending or running:
                if should_stop is not None and should_stop():
                    raise ExecutorCancelled("stopped; finished shards are kept and a re-run resumes after them")
                while pending and len(running) < 2 * self.workers:
                    running.add(pool.submit(_call, pending.pop()))
                self._in_flight = running
                finished, running = cf.wait(running, timeout=POLL_S, return_when=cf.FIRST_COMPLETED)
                self._in_flight = running
                for future in finished:
                    yield _result(future)
        except BaseException:  # a stop, an error, or the caller leaving early
            if running:
                self._in_flight = running
                self.close()  # running tasks finish their shard; queued ones never start
            raise

    def close(self) -> None:
        """Shut the pool down: queued shards are cancelled, running ones finish, then every worker ends (terminated,
        at last killed, when it does not exit by itself within ``EXIT_WAIT_S`` of having nothing to do)."""
        pool, in_flight = self._pool, self._in_flight
        self._pool, self._key, self._in_flight = None, None, set()
        if pool is None:
            return
        # the pool's own process table (no public accessor before Python 3.14's terminate_workers)
        workers = list((getattr(pool, "_processes", None) or {}).values())
        # a cancelled future is never "done" for cf.wait (only a cancelled one the pool has seen is): wait for the
        # running ones alone, i.e. those that could not be cancelled
        running = {future for future in in_flight if not future.cancel()}
        stopper = threading.Thread(target=pool.shutdown, kwargs={"wait": True, "cancel_futures": True},
                                   name="alict-pool-shutdown", daemon=True)
        stopper.start()
        while running and any(process.is_alive() for process in workers):
            _done, running = cf.wait(running, timeout=POLL_S)  # a running shard is real work: it finishes or fails
        stopper.join(EXIT_WAIT_S)
        for end in ("terminate", "kill"):
            if not stopper.is_alive():
                return
            for process in workers:
                if process.is_alive():
                    getattr(process, end)()
            stopper.join(EXIT_WAIT_S)


def _result(future: cf.Future) -> dict[str, Any]:
    try:
        return future.result()
    except cf.process.BrokenProcessPool as exc:
        raise AlictError(f"a worker process died ({exc}); any finished shards are kept: run again to resume") from None


EXECUTORS.add("processes", ProcessExecutor, "a local pool of worker processes sharing nothing but shard files")
