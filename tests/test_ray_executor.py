"""The ``ray`` executor: a local Ray with 2 CPUs gives the same results as the ``local`` executor."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from alict_core.common.errors import AlictError
from alict_core.executors import get_executor

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                reason="ray not installed (pip install .[ray])")


class SquareWorker:
    """A toy shard worker: reads a shard file of numbers, writes their squares, reports its process."""

    def __init__(self, offset: int = 0, meet: str | None = None) -> None:
        self.offset = offset
        self.meet = meet
        self.pid = os.getpid()

    def __call__(self, task):
        if self.meet:
            self._wait_for_a_peer(Path(self.meet))
        source = Path(task["path"])
        numbers = json.loads(source.read_text())
        if any(n < 0 for n in numbers):
            raise AlictError(f"shard {task['shard']}: negative number")
        squares = [n * n + self.offset for n in numbers]
        target = source.with_suffix(".out")
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(squares))
        os.replace(tmp, target)
        return {"shard": task["shard"], "total": sum(squares), "pid": self.pid}

    def _wait_for_a_peer(self, folder: Path, limit_s: float = 120) -> None:
        """Mark this process in ``folder`` and wait (bounded) until a second process marked it too: every shard
        is held until both actors work, so neither can take them all, however late the other one starts."""
        import time

        (folder / str(self.pid)).touch()
        deadline = time.monotonic() + limit_s
        while len(list(folder.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)


def _tasks(folder: Path, n: int, bad: int | None = None) -> list[dict]:
    tasks = []
    for shard in range(n):
        path = folder / f"part-{shard:05d}.json"
        path.write_text(json.dumps([-1] if shard == bad else [shard, shard + 1, shard + 2]))
        tasks.append({"shard": shard, "path": str(path)})
    return tasks


# A process that has been a Ray driver may be ended by Ray's core worker (exit 1, no summary) when a cluster it
# knew goes away. The tests that start Ray are therefore named ray_case_*: the main pytest does not collect them
# (python_functions is test_*); one child pytest collects only them (-o python_functions=ray_case_*), and
# test_ray_case_in_child_process[<case>] reports each one's outcome in the child as its own pass or failure.


@pytest.fixture(scope="module")
def ray_executor():
    import sys

    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the toy worker travels by value
    executor = get_executor("ray", 2)
    yield executor
    executor.close()


def _results(executor, tasks, **init_kwargs):
    return sorted(executor.map_shards(SquareWorker, {"offset": 1, **init_kwargs}, tasks), key=lambda r: r["shard"])


@pytest.mark.slow  # starts a local Ray (≈ 15 s on 2 cores)
def ray_case_matches_local_and_uses_two_actors(ray_executor, tmp_path):
    local_dir, ray_dir, meet = tmp_path / "local", tmp_path / "ray", tmp_path / "meet"
    for folder in (local_dir, ray_dir, meet):
        folder.mkdir()
    local = _results(get_executor("local"), _tasks(local_dir, 8))
    remote = _results(ray_executor, _tasks(ray_dir, 8), meet=str(meet))  # at most 2 shards in flight per actor
    assert [(r["shard"], r["total"]) for r in remote] == [(r["shard"], r["total"]) for r in local]
    for shard in range(8):  # the shard files the workers wrote are identical too
        name = f"part-{shard:05d}.out"
        assert (ray_dir / name).read_text() == (local_dir / name).read_text()
    assert {r["pid"] for r in remote} - {os.getpid()}, "ray workers run outside this process"
    assert len({r["pid"] for r in remote}) == 2, "one worker object per actor, two actors"


@pytest.mark.slow  # starts a local Ray (≈ 15 s on 2 cores)
def ray_case_worker_error_is_one_clear_message(ray_executor, tmp_path):
    with pytest.raises(AlictError, match="shard 3: negative number"):
        list(ray_executor.map_shards(SquareWorker, {}, _tasks(tmp_path, 5, bad=3)))


@pytest.mark.slow  # starts a local Ray (≈ 15 s on 2 cores)
def ray_case_stop_request_cancels(ray_executor, tmp_path):
    from alict_core.executors.base import ExecutorCancelled

    seen = []
    with pytest.raises(ExecutorCancelled):
        for result in ray_executor.map_shards(SquareWorker, {}, _tasks(tmp_path, 6),
                                              should_stop=lambda: bool(seen)):
            seen.append(result)
    assert len(seen) == 1


def test_missing_ray_names_the_extra(monkeypatch):
    import builtins

    from alict_core.executors import ray_executor

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError(name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(AlictError, match=r"pip install \"\.\[ray\]\""):
        ray_executor.RayExecutor(1)


def test_cluster_address_and_gpu_options_without_starting_ray(monkeypatch):
    from alict_core.executors.ray_executor import RayExecutor

    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert RayExecutor(2).address == "ray://head:10001"
    assert RayExecutor(2, address="auto").address == "auto"
    assert RayExecutor(1, gpus_per_worker=0.5)._gpus() == 0.5
    with pytest.raises(AlictError, match="gpus_per_worker must be a number ≥ 0"):
        RayExecutor(1, gpus_per_worker=-1)


@pytest.mark.slow
def ray_case_streaming_run_on_ray_matches_local(tmp_path):
    """A small suite (synthetic cases of one LC) run with executor="ray" gives the same results as "local"."""
    import pandas as pd

    from alict_core.runner import stream
    from alict_core.suites.synthetic import iter_synthetic_cases

    def run(executor: str, workers: int) -> pd.DataFrame:
        folder = stream.run_streaming(iter_synthetic_cases("sentiment", "sentiment-lc01", 120, seed=3), ["vader"],
                                      run_dir=tmp_path / executor / "run", shard_size=25, executor=executor,
                                      workers=workers, cache_root=tmp_path / executor / "cache")
        parts = sorted((folder / "results").glob("part-*.parquet"))
        assert len(parts) == 5
        frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        return frame.sort_values(["case_id", "model"]).reset_index(drop=True), (folder / "summary.csv").read_text()

    local, local_summary = run("local", 1)
    remote, remote_summary = run("ray", 2)
    assert len(local) == 120
    pd.testing.assert_frame_equal(local, remote)
    assert local_summary == remote_summary


class SlowWorker:
    """A worker whose shards take long: marks that it started, then sleeps; a stop request must not wait for it."""

    def __call__(self, task):
        import time

        Path(task["started"]).touch()
        time.sleep(task["seconds"])
        return {"shard": task["shard"]}


SHARD_SECONDS = 60


@pytest.mark.slow
# the module's local Ray is shut down while the cancelled dataset still runs: Ray's scheduler thread exits
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def ray_case_stop_request_is_seen_while_a_shard_runs(ray_executor, tmp_path):
    """The stop is requested once a shard has started (no clock guess); it ends the map long before the shard."""
    import time

    from alict_core.executors.base import ExecutorCancelled

    started = time.monotonic()
    tasks = [{"shard": s, "seconds": SHARD_SECONDS, "started": str(tmp_path / f"started-{s}")} for s in range(2)]
    with pytest.raises(ExecutorCancelled):
        list(ray_executor.map_shards(SlowWorker, {}, tasks,
                                     should_stop=lambda: any((tmp_path / f"started-{s}").exists() for s in range(2))))
    assert time.monotonic() - started < SHARD_SECONDS, "the stop is not held up until a shard finishes"


RAY_CASES = sorted(name for name in list(globals()) if name.startswith("ray_case_"))


@pytest.fixture(scope="module")
def ray_child_outcomes(tmp_path_factory) -> tuple[dict[str, tuple[str, str]], str]:
    """Run every ray_case_* in one child pytest with its own local Ray: {case: (outcome, detail)}, its output."""
    import xml.etree.ElementTree as ET

    report = tmp_path_factory.mktemp("ray-child") / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
                           "-o", "python_functions=ray_case_*", f"--junitxml={report}"],
                          capture_output=True, text=True, timeout=900)
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    outcomes: dict[str, tuple[str, str]] = {}
    if report.exists():
        for case in ET.parse(report).iter("testcase"):
            problem = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
            outcome = "passed" if problem is None else problem.tag
            outcomes[case.get("name", "")] = (outcome, "" if problem is None else (problem.text or problem.get(
                "message", "")))
    return outcomes, output


@pytest.mark.slow
@pytest.mark.parametrize("case", RAY_CASES)
def test_ray_case_in_child_process(ray_child_outcomes, case):
    """Each Ray-starting test's own outcome in the child pytest (a failure shows the child's report)."""
    outcomes, output = ray_child_outcomes
    assert case in outcomes, f"{case} did not run in the child pytest:\n{output}"
    outcome, detail = outcomes[case]
    assert outcome == "passed", f"{case}: {outcome} in the child pytest\n{detail[-4000:]}"
