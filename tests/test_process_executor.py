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
