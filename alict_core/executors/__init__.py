"""Executors: where shard work runs (in process, a local process pool, or a Ray cluster).

One interface for expand, run and explain: a picklable worker class built once per worker (process, Ray actor)
is called with small JSON-able task dicts that name input and output shard files; only shards are shared.
``alict_core.executors.shards`` is the one shard loop (inputs, resume, progress, cancel, joining the parts).
"""

from alict_core.executors.base import EXECUTORS, Executor, LocalExecutor, ShardWorker, get_executor

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "ShardWorker", "get_executor"]
