"""The one shard loop (alict_core.executors.shards): inputs, resume, order, progress, cancel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alict_core.common.jsonl import read_json, read_jsonl, write_json, write_jsonl
from alict_core.executors.base import ExecutorCancelled, LocalExecutor
from alict_core.executors.shards import (
    executor_in_use,
    finish_artefact,
    finished_or_reset,
    join_parts,
    part_path,
    pending_shards,
    run_shards,
    seal_part,
    shard_folder,
    shard_progress,
)


class Doubler:
    """Writes each input row's value doubled as the shard's part."""

    def __init__(self, factor: int = 2) -> None:
        self.factor = factor

    def __call__(self, task: dict[str, Any]) -> dict[str, Any]:
        rows = [{"v": row["v"] * self.factor} for row in read_jsonl(Path(task["numbers"]))]
        write_jsonl(Path(task["out"]), rows)
        return {"index": task["index"], "rows": len(rows)}


def test_shards_resume_after_the_finished_parts_and_join_in_order(tmp_path: Path) -> None:
    path = tmp_path / "key.jsonl"
    parts = shard_folder(path)
    assert parts == tmp_path / "key.shards"
    rows = [{"v": i} for i in range(7)]
    write_jsonl(part_path(parts, 1), [{"v": -1}, {"v": -1}, {"v": -1}])  # a part a killed run left: kept
    write_json(parts / "layout.json", {"shard_size": 3, "rows": 7})  # ... cut as this call cuts them
    seal_part(part_path(parts, 1))  # (run_shards seals each part as it comes back; an unsealed one runs again)
    tasks = pending_shards(parts, rows, 3, "numbers", dict)
    assert [task["index"] for task in tasks] == [0, 2]
    assert read_jsonl(parts / "numbers-00002.jsonl") == [{"v": 6}]
    assert not (parts / "numbers-00001.jsonl").exists()
    seen: list[tuple[int, int, str]] = []
    run_shards(LocalExecutor(), Doubler, {"factor": 10}, tasks,
               on_result=shard_progress(lambda *a: seen.append(a), 3, 1, "shards"))
    assert seen == [(1, 3, "shards"), (2, 3, "shards"), (3, 3, "shards")]
    n = join_parts(path, parts, 3)
    assert n == 7
    assert [row["v"] for row in read_jsonl(path)] == [0, 10, 20, -1, -1, -1, 60]


def test_a_stop_keeps_the_finished_parts(tmp_path: Path) -> None:
    parts = shard_folder(tmp_path / "key.jsonl")
    tasks = pending_shards(parts, [{"v": i} for i in range(4)], 1, "numbers", dict)
    finished: list[Any] = []
    with pytest.raises(ExecutorCancelled):
        run_shards(LocalExecutor(), Doubler, {}, tasks, should_stop=lambda: len(finished) >= 2,
                   on_result=finished.append)
    assert sorted(p.name for p in parts.glob("part-*.jsonl")) == ["part-00000.jsonl", "part-00001.jsonl"]
    assert [task["index"] for task in pending_shards(parts, [{"v": i} for i in range(4)], 1, "numbers", dict)] \
        == [2, 3]


def test_a_finished_artefact_is_served_and_its_stale_parts_removed(tmp_path: Path) -> None:
    path = tmp_path / "key.jsonl"
    parts = shard_folder(path)
    write_jsonl(part_path(parts, 0), [{"v": 1}])
    assert finished_or_reset(path, "numbers", "key", read_jsonl, reuse=True) is None
    assert parts.exists()  # kept for a resume
    assert join_parts(path, parts, 1) == 1
    finish_artefact(path, "numbers", "key", 1, {"key": "key", "shards": 1})
    assert read_json(tmp_path / "key.meta.json") == {"key": "key", "shards": 1}
    assert not parts.exists()
    write_jsonl(part_path(parts, 0), [{"v": 2}])  # left by a kill between the artefact and the clean-up
    assert finished_or_reset(path, "numbers", "key", read_jsonl, reuse=True) == [{"v": 1}]
    assert not parts.exists()
    write_jsonl(part_path(parts, 0), [{"v": 2}])
    assert finished_or_reset(path, "numbers", "key", read_jsonl, reuse=False) is None
    assert not parts.exists()  # no reuse: the finished shards go too


def test_an_executor_by_name_is_closed_and_a_callers_is_left_open() -> None:
    class Pool(LocalExecutor):
        closed = False

        def close(self) -> None:
            self.closed = True

    mine = Pool()
    with executor_in_use(mine, 1) as pool:
        assert pool is mine
    assert not mine.closed
    with executor_in_use("local", 1) as pool:
        assert pool.name == "local"
