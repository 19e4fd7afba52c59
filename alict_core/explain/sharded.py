"""An LC's pass-to-fail pairs explained in bounded shards through an executor, resumable after a kill (issue #16).

``explain_failures_sharded(run, lc_id, ...)`` picks the same pairs as :func:`explain_lc_failures`, writes them in
shards of ``shard_size`` pairs, and hands each shard to an :class:`ExplainShardWorker` (built once per worker: it
loads the model by registry name, so a SHAP / LEMNA worker holds the model once). Each shard's explanations are
written as one JSONL part atomically under ``<key>.shards/``; a re-run skips the finished parts. The parts are
then concatenated, in pair order, into ``<key>.jsonl`` (one :meth:`PairExplanation.to_dict` per line) under
``artefact_dir('explain')/lc``, keyed by a content hash of the pairs, the model (name and content fingerprint)
and every option. The parent never holds more than the pair list and counts.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from alict_core.common.config import artefact_dir
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import iter_jsonl, read_jsonl, write_jsonl
from alict_core.executors import shards
from alict_core.executors.base import Executor
from alict_core.explain.base import ExplainError, ProgressFn, as_cached
from alict_core.explain.pairs import PairExplanation, compare_pair, run_lc

KIND = "explain-lc"
DEFAULT_SHARD_SIZE = 10
"""Pairs per shard (a pair costs two explanations and two templates: seconds to minutes of model calls)."""
PAIR_FIELDS = ("seed_id", "case_id", "seed_text", "text", "seed_predicted", "predicted", "expected")
PAIR_OPTIONS = {"method", "seed", "n_samples", "label", "templates", "p_thresh", "template_samples", "vocabulary",
                "same_pos"}


class ExplainShardWorker:
    """Loads the model once by name, then explains one shard of pairs per call."""

    def __init__(self, model: str, lc_id: str, options: dict[str, Any], cache: bool = True) -> None:
        from alict_core.models import get_model

        self.model = get_model(model)
        self.name = model
        self.lc_id = lc_id
        self.options = dict(options)
        self.cache = cache

    def __call__(self, task: dict[str, Any]) -> dict[str, Any]:
        cached = as_cached(self.model)  # model outputs shared within a shard only: memory bounded per shard
        out = Path(task["out"])
        explained = [
            compare_pair(cached, row["seed_text"], row["text"], cache=self.cache,
                         meta=_meta(self.lc_id, self.name, row), **self.options).to_dict()
            for row in read_jsonl(Path(task["pairs"]))
        ]
        write_jsonl(out, explained)  # the part is the shard's completion mark: written atomically
        return {"index": task["index"], "pairs": len(explained)}


def _meta(lc_id: str, model: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"lc_id": lc_id, "model": model, **{name: row[name] for name in PAIR_FIELDS if name not in
                                                 ("seed_text", "text")}}


@dataclass
class ExplainedFailures:
    """A finished artefact of pair explanations: ``iter_pairs()`` streams them one at a time."""

    key: str
    path: Path
    lc_id: str
    model: str | None
    pairs: int

    def iter_pairs(self) -> Iterator[PairExplanation]:
        for row in iter_jsonl(self.path):
            yield PairExplanation.from_dict(row)


def explain_failures_sharded(run: Any, lc_id: str, model_name: str | None = None, *, max_pairs: int | None = 10,
                             shard_size: int = DEFAULT_SHARD_SIZE, executor: str | Executor = "local",
                             workers: int = 1, progress: ProgressFn | None = None,
                             should_stop: Callable[[], bool] | None = None, cache: bool = True,
                             resume: bool = True, out_dir: Path | None = None,
                             **pair_options: Any) -> ExplainedFailures:
    """:func:`explain_lc_failures` of ``lc_id``, shard by shard through ``executor`` (a registered name built
    here with ``workers``, or an executor the caller owns). The model is a registry name (default: the run's
    first model with pairs for this LC; a model not in the run explains that first model's pairs);
    ``pair_options`` are :func:`compare_pair`'s (JSON-able values only: a vocabulary is a list of words);
    ``cache`` is compare_pair's per-pair cache. With ``resume`` (and a model with a
    content fingerprint) a finished artefact is returned as is and the finished shards of a killed call are kept;
    otherwise everything is recomputed. ``progress(done, total, "explain shards")`` follows each finished shard.
    """
    from alict_core.common.manifest import entry_lock, file_manifest_path, folder_lock
    from alict_core.models import get_model
    from alict_core.models.protocol import content_fingerprint

    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise ExplainError(f"explain: shard_size must be a whole number >= 1, got {shard_size!r}")
    unknown = set(pair_options) - PAIR_OPTIONS
    if unknown:
        raise ExplainError(f"explain: unknown option(s) {', '.join(sorted(unknown))}; valid: "
                           f"{', '.join(sorted(PAIR_OPTIONS))}")
    vocabulary = pair_options.get("vocabulary")
    if vocabulary is not None and not (isinstance(vocabulary, (list, tuple))
                                       and all(isinstance(w, str) for w in vocabulary)):
        raise ExplainError("explain: a sharded vocabulary is a list of words (workers receive it as JSON)")
    if vocabulary is not None:
        pair_options["vocabulary"] = list(vocabulary)
    with ExitStack() as held:
        with shards.executor_in_use(executor, workers) as pool:  # fails before any write
            rows = _failing_pairs(run, lc_id, model_name, max_pairs)
            name = model_name or (str(rows[0]["model"]) if rows else None)
            fingerprint = content_fingerprint(get_model(name)) if name else None
            key = hash_json({"lc_id": lc_id, "model": name, "fingerprint": fingerprint, "options": pair_options,
                             "pairs": [_pair_row(row) for row in rows]}, length=20)
            path = Path(out_dir or artefact_dir("explain") / "lc") / f"{key}.jsonl"
            held.enter_context(folder_lock(path))  # one writer per key: a second identical call waits, then reads it
            parts = shards.shard_folder(path)
            reuse = resume and fingerprint is not None  # like compare_pair: no content fingerprint, nothing reused
            found = shards.finished_or_reset(path, KIND, key, _count_rows, reuse)
            if found is not None:
                return ExplainedFailures(key, path, lc_id, name, found)
            n_shards = shards.shard_count(len(rows), shard_size)
            tasks = shards.pending_shards(parts, rows, shard_size, "pairs", _pair_row)
            init = {"model": name, "lc_id": lc_id, "options": pair_options, "cache": cache}
            done = n_shards - len(tasks)
            shards.run_shards(pool, ExplainShardWorker, init, tasks, should_stop=should_stop,
                              on_result=shards.shard_progress(progress, n_shards, done, "explain shards"))
        meta = {"key": key, "lc_id": lc_id, "model": name, "pairs": len(rows), "shards": n_shards,
                "shard_size": shard_size}
        with entry_lock(path):  # the joined file and its manifest: a reader meanwhile waits, never quarantines it
            shards.join_parts(path, parts, n_shards,  # a replaced artefact is never served with an old manifest:
                              before_rename=lambda: file_manifest_path(path).unlink(missing_ok=True))
            shards.finish_artefact(path, KIND, key, len(rows), meta)
        return ExplainedFailures(key, path, lc_id, name, len(rows))


def _pair_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in PAIR_FIELDS}


def _count_rows(path: Path) -> int:
    return sum(1 for _ in iter_jsonl(path))


def _check_model_task(model_name: str, lc_id: str, run_task: str) -> None:
    """A model of another task would explain this run's cases in its own labels: refused (one message)."""
    from alict_core.models import MODELS
    from alict_core.models.registry import model_entry

    try:
        model_task = model_entry(model_name).tags.get("task")
    except Exception:  # noqa: BLE001 - an unknown model is reported where it is built, with the registry's names
        return
    if model_task not in (None, run_task):
        raise ExplainError(f"model {model_name!r} is for task {model_task}, but the run's LC {lc_id} is of task "
                           f"{run_task}; models for {run_task}: {', '.join(MODELS.names(task=run_task))}")


def _failing_pairs(run: Any, lc_id: str, model_name: str | None, max_pairs: int | None) -> list[dict[str, Any]]:
    """The pass-to-fail pairs :func:`explain_lc_failures` would explain, as plain dicts (with ``model``)."""
    if not hasattr(run, "pass_to_fail"):
        from alict_core.runner import RunResult

        run = RunResult.load(run)
    pairs = run.pass_to_fail()
    known = sorted(set(run.cases().lc_id)) if hasattr(run, "cases") else []
    lc_id = run_lc(lc_id, known)
    if model_name is not None:
        tasks = {c.task for c in getattr(run, "case_list", []) if c.lc_id == lc_id and c.task}
        if len(tasks) == 1:
            _check_model_task(model_name, lc_id, str(tasks.pop()))
    pairs = pairs[pairs.lc_id == lc_id]
    if model_name is not None and (pairs.model == model_name).any():
        pairs = pairs[pairs.model == model_name]  # else: that model explains the run's first model's pairs
    if pairs.empty:
        return []
    pairs = pairs[pairs.model == str(pairs.model.iloc[0])]
    if max_pairs is not None:
        pairs = pairs.head(max_pairs)
    columns = [*PAIR_FIELDS, "model"]
    return [{name: _plain(value) for name, value in zip(columns, values, strict=True)}
            for values in pairs[columns].itertuples(index=False, name=None)]


def _plain(value: Any) -> Any:
    """A pandas / numpy cell as a JSON value (``expected`` may be a label list)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return value
