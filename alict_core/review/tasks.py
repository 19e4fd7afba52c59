"""Create review tasks from a suite's cases and list a reviewer's queue (the page's and the CLI's calls)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.review.sampling import SamplingPlan, assign_sets, draw_sample
from alict_core.review.store import ReviewError, ReviewItem, ReviewStore, ReviewTask, check_reviewers, check_task_name


def lc_task(lc_id: str | None) -> str | None:
    """The task an LC id names (``hate_speech-lc01``), if any."""
    from alict_core.tasks import TASK_NAMES

    return next((name for name in TASK_NAMES if str(lc_id or "").startswith(f"{name}-")), None)


def recorded_task(folder: Path) -> str | None:
    """The task a saved run records (meta.json ``extra.task``), if any."""
    from alict_core.common.jsonl import read_json

    try:
        meta = read_json(folder / "meta.json")
    except (OSError, ValueError, RecursionError):
        return None
    extra = meta.get("extra") if isinstance(meta, dict) else None
    found = extra.get("task") if isinstance(extra, dict) else None
    return found if isinstance(found, str) else None


def load_cases(path: Path | str) -> list[TestCase]:
    """Cases of a run directory (either layout: ``cases.jsonl`` or sharded ``cases/part-N.jsonl``, read through
    :class:`~alict_core.runner.reader.RunReader`) or of a cases JSONL file (``report --export``), the latter
    through the suite importer's strict path (limits, UTF-8, every field)."""
    from alict_core.runner.reader import RunReader
    from alict_core.suites import SuiteFormatError, export_table_problem, read_cases_jsonl

    def strict(file: Path) -> list[TestCase]:
        problem = export_table_problem(file)
        if problem:  # was "cases.csv:1, not JSON" (results.jsonl: dozens of problems)
            raise ReviewError(problem)
        try:
            return [_with_task(case, None) for case in read_cases_jsonl(file).cases]
        except SuiteFormatError as exc:
            raise ReviewError(str(exc)) from None

    from alict_core.common.manifest import READ_ERRORS
    from alict_core.runner.run import verify_saved_run

    path = Path(path)
    if path.is_dir():
        has_results = (path / "results").exists() or (path / "results.parquet").exists()
        if (path / "cases.jsonl").is_file() and not has_results:  # cases without results (e.g. `lego --out`)
            return strict(path / "cases.jsonl")
        try:
            verify_saved_run(path)  # a tampered or unfinished run is refused, not sampled
            reader = RunReader.open(path)
            if not reader.case_files():
                raise ReviewError(f"{path}: the run has no cases (neither cases.jsonl nor cases/part-*.jsonl); "
                                  "give a finished run directory or a cases .jsonl")
            run_task = recorded_task(path)  # a case without ``task`` is of the run's task (it counted as any task
            return [_with_task(TestCase.from_dict(row), run_task) for row in reader.iter_case_rows()]  # asked for)
        except ReviewError:
            raise
        except AlictError as exc:
            raise ReviewError(f"{path}: {exc}; give a run directory or a cases .jsonl") from None
        except READ_ERRORS as exc:  # a run from before manifests, damaged
            raise ReviewError(f"{path}: the run cannot be read ({type(exc).__name__}); give a run directory or a "
                              "cases .jsonl") from None
    if not path.is_file():
        raise ReviewError(f"{path}: no such run directory or cases file; give a run directory or a cases .jsonl")
    return strict(path)


def _with_task(case: TestCase, task: str | None) -> TestCase:
    """``case`` with ``task`` (the run's), else the task its LC id names, as its task when it names none: a case of
    hand-written seeds without ``task`` counted as any task `review sample --task` asked for (pass 39)."""
    import dataclasses

    found = None if case.task else task or lc_task(case.lc_id)
    return dataclasses.replace(case, task=found) if found else case


def lc_titles(task: str) -> dict[str, tuple[str, str]]:
    """LC id → (title, description) from the task's specs (empty when specs cannot be read)."""
    try:
        from alict_core.lcspec import load_task_specs

        return {s.id: (s.title, s.description) for s in load_task_specs(task)}
    except Exception:  # noqa: BLE001 - titles are a nicety; imported suites have no specs
        return {}


def create_review_task(store: ReviewStore | Callable[[], ReviewStore], name: str, task: str,
                       cases: Sequence[TestCase], plan: SamplingPlan,
                       reviewers: Sequence[str] = ()) -> tuple[ReviewTask, dict[str, Any]]:
    """Sample ``cases`` by ``plan`` and store the task; name reviewers to assign sets now (else they claim sets).

    ``store`` may be a function that opens it: called once every input is checked, so a refused task creates no
    database (a new one is never removed again: another command may have opened it meanwhile, pass 37)."""
    check_task_name(name)
    reviewers = check_reviewers(reviewers)  # before any sampling
    chosen = [c for c in cases if (c.task or task) == task]
    if cases and not chosen:  # a run of another task: say so, not "no seeds"
        others = ", ".join(sorted({str(c.task) for c in cases}))
        raise ReviewError(f"the cases are of task {others}, not {task}; give --task {others.split(', ')[0]} or "
                          f"cases of task {task}")
    if len(chosen) < len(cases):  # a mixed file: its other-task cases were dropped without a word
        other = next(c for c in cases if (c.task or task) != task)
        raise ReviewError(f"the cases mix tasks: {len(cases) - len(chosen)} of {len(cases)} are not of task "
                          f"{task} (the first: case {other.case_id!r} of task {other.task}); review one task's cases "
                          "at a time")
    items, summary = draw_sample(chosen, plan, lc_titles(task))
    pairs = assign_sets(summary["n_sets"], plan.k, reviewers)
    opened = store() if callable(store) else store
    return opened.create_task(name, task, summary, items, pairs), summary


@dataclass(frozen=True)
class Queue:
    """A reviewer's items in one task (their sets, in order) and which are judged."""

    items: list[ReviewItem]
    judged: set[int]

    @property
    def next_index(self) -> int:
        """Index of the first unjudged item (len(items) when all are judged)."""
        return next((i for i, item in enumerate(self.items) if item.id not in self.judged), len(self.items))

    def progress_per_set(self) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        for item in self.items:
            done, total = out.get(item.set_no, (0, 0))
            out[item.set_no] = (done + (item.id in self.judged), total + 1)
        return out


def reviewer_queue(store: ReviewStore, task_name: str, reviewer: str, *, claim: bool = True) -> Queue:
    """The reviewer's queue; with ``claim`` a reviewer without sets claims the next open one."""
    task = store.task(task_name)
    sets = store.assigned_sets(task.id, reviewer)
    if not sets and claim:
        got = store.claim_set(task.id, reviewer)
        sets = [got] if got is not None else []
    return Queue(store.items(task.id, sets), store.judged_item_ids(task.id, reviewer))
