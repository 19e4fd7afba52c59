"""The executor interface and the in-process ``local`` executor (the default)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from alict_core.common.errors import AlictError
from alict_core.common.registry import Registry

Task = Mapping[str, Any]
StopCheck = Callable[[], bool]


class ShardWorker(Protocol):
    """A worker built once per worker (``worker_cls(**init_kwargs)``), then called once per task.

    Tasks and results are small JSON-able dicts (shard paths, counts); data travels only through shard files,
    so a worker may live in another process or on another machine that sees the same folder.
    """

    def __call__(self, task: Task) -> dict[str, Any]: ...


class Executor(Protocol):
    """Runs ``worker_cls(**init_kwargs)(task)`` for every task and yields each result as it completes."""

    name: str
    workers: int

    def map_shards(self, worker_cls: type, init_kwargs: Mapping[str, Any], tasks: Sequence[Task], *,
                   should_stop: StopCheck | None = None) -> Iterator[dict[str, Any]]:
        """Results in completion order (any order); ``should_stop()`` is polled between tasks."""
        ...

    def close(self) -> None:
        """Release workers (processes, actors); the executor may not be used afterwards."""
        ...


class ExecutorCancelled(AlictError):
    """``should_stop()`` asked to stop; finished shards stay on disk and a re-run resumes after them."""


class LocalExecutor:
    """In this process, one task after the other (the behaviour before executors existed)."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = 1

    def map_shards(self, worker_cls: type, init_kwargs: Mapping[str, Any], tasks: Sequence[Task], *,
                   should_stop: StopCheck | None = None) -> Iterator[dict[str, Any]]:
        if not tasks:
            return
        worker = worker_cls(**init_kwargs)
        for task in tasks:
            if should_stop and should_stop():
                raise ExecutorCancelled("stopped; finished shards are kept and a re-run resumes after them")
            yield worker(task)

    def close(self) -> None:
        return None


EXECUTORS: Registry[Executor] = Registry("executor")
EXECUTORS.add("local", LocalExecutor, "in this process, one shard after the other (default)")
# modules that register the other executors when first asked for (ray is an optional extra: `pip install .[ray]`)
PLUGIN_MODULES = {"processes": "alict_core.executors.processes", "ray": "alict_core.executors.ray_executor"}
OPTIONAL_EXTRAS = {"ray"}  # executors whose packages the default install leaves out


def executor_entry(name: str) -> Any:
    """The registry entry of executor ``name``, importing ``processes`` / ``ray`` on first use (builds nothing)."""
    if name not in EXECUTORS and name in PLUGIN_MODULES:
        import importlib

        try:
            importlib.import_module(PLUGIN_MODULES[name])
        except ImportError as exc:
            extra = f"; install it with `pip install .[{name}]`" if name in OPTIONAL_EXTRAS else ""
            raise AlictError(f"executor {name!r} is not available ({exc}){extra}") from None
    if name not in EXECUTORS:
        known = ", ".join(sorted({*EXECUTORS.names(), *PLUGIN_MODULES}))
        raise AlictError(f"unknown executor {name!r}; choose one of {known}")
    return EXECUTORS.entry(name)


def get_executor(name: str = "local", workers: int = 1, **options: Any) -> Executor:
    """The executor registered as ``name`` with ``workers`` workers (``processes`` and ``ray`` add themselves)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise AlictError(f"--workers must be a whole number ≥ 1, got {workers!r}")
    return executor_entry(name).factory(workers=workers, **options)
