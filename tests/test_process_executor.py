"""The ``processes`` executor ends its workers: a worker that hangs at exit is terminated, never waited on forever."""

from __future__ import annotations

import threading

import pytest

from alict_core.executors import processes
from alict_core.executors.processes import ProcessExecutor


class HangsAtExit:
    """A worker whose process cannot exit by itself: a non-daemon thread waits forever, so the child's exit
    (``threading._shutdown``) sleeps on a lock, like the worker seen asleep on futexes on a loaded machine."""

    def __init__(self) -> None:
        threading.Thread(target=threading.Event().wait, name="never-ends", daemon=False).start()

    def __call__(self, task: dict) -> dict:
        return {"square": task["n"] ** 2}


class Doubles:
    def __call__(self, task: dict) -> dict:
        return {"double": 2 * task["n"]}


@pytest.mark.timeout(120)
def test_close_terminates_workers_that_do_not_exit(monkeypatch):
    monkeypatch.setattr(processes, "EXIT_WAIT_S", 2.0)
    executor = ProcessExecutor(workers=2)
    results = list(executor.map_shards(HangsAtExit, {}, [{"n": n} for n in range(5)]))
    assert sorted(r["square"] for r in results) == [0, 1, 4, 9, 16]
    workers = list(executor._pool._processes.values())
    assert workers and all(p.is_alive() for p in workers)
    executor.close()  # before: shutdown(wait=True) joined these workers forever
    assert not any(p.is_alive() for p in workers)
    assert all(p.exitcode is not None and p.exitcode < 0 for p in workers)  # ended by a signal


@pytest.mark.timeout(120)
def test_close_of_workers_that_exit_by_themselves_ends_nothing_by_force():
    executor = ProcessExecutor(workers=2)
    assert sorted(r["double"] for r in executor.map_shards(Doubles, {}, [{"n": n} for n in range(4)])) == [0, 2, 4, 6]
    workers = list(executor._pool._processes.values())
    executor.close()
    assert [p.exitcode for p in workers] == [0] * len(workers)
    executor.close()  # closing twice is harmless


class Sleeps:
    def __call__(self, task: dict) -> dict:
        import time

        time.sleep(0.2)
        return {"n": task["n"]}


@pytest.mark.timeout(120)
def test_close_with_queued_shards_cancels_them_and_waits_only_for_running_ones():
    """20 shards in flight, at most ~5 in the workers' hands: the rest are cancelled by close, and a cancelled
    future never counts as done for ``cf.wait`` (before: close waited on them forever, seen under load)."""
    executor = ProcessExecutor(workers=2)
    assert [r["n"] for r in executor.map_shards(Sleeps, {}, [{"n": 0}])] == [0]  # the pool is up
    pool = executor._pool
    futures = {pool.submit(processes._call, {"n": n}) for n in range(20)}
    executor._in_flight = futures
    executor.close()
    assert all(f.done() for f in futures)
    cancelled = [f for f in futures if f.cancelled()]
    assert len(cancelled) >= 15  # at most 2 in the workers' hands and 3 in the pool's call queue ran
    assert all(f.result()["n"] in range(20) for f in futures if not f.cancelled())
