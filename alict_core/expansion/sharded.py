"""Expansion in bounded seed shards through an executor, resumable after a kill (issue #16).

``expand_sharded(seeds, spec, parser=NAME, mlm=NAME, ...)`` cuts the seeds into shards of ``shard_size``,
hands each shard to an :class:`ExpandShardWorker` (built once per worker: it loads the parser and the masked LM
by registry name) and writes one JSONL part per shard atomically under ``<key>.shards/``. A re-run with the same
inputs skips the parts already on disk. When every part exists they are concatenated in seed order into the
usual ``<key>.jsonl`` artefact (same key, rows and ``.meta.json`` as :func:`expand`, so every reader of
expansions keeps working) and the shard folder is removed. The parent holds the seeds and per-LC counts only,
never the expansions of more than one shard.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from alict_core.common.config import artefact_dir
from alict_core.common.jsonl import iter_jsonl, read_json, read_jsonl, write_json, write_jsonl
from alict_core.common.registry import Registry
from alict_core.executors import shards
from alict_core.executors.base import Executor
from alict_core.expansion.constraints.acceptance import constraints_of
from alict_core.expansion.constraints.corpus_stats import load_corpus_stats
from alict_core.expansion.constraints.fill_checks import ExpansionError, allowed_polarity_of, field_of
from alict_core.expansion.constraints.fluency import DEFAULT_MIN_WORD_SCORE, checked_min_word_score
from alict_core.expansion.search import (
    EXPANSION_VERSION,
    ExpansionSet,
    ProgressFn,
    as_dict,
    default_masker,
    expand,
    expansion_key,
    masker_fingerprint,
    meta_path,
)

DEFAULT_SHARD_SIZE = 100
"""Seeds per shard: a shard's expansions (≈ 10–50 rows per seed) are all a worker holds at once."""

MASKERS: Registry[Callable[..., Any]] = Registry("masker")
MASKERS.add("reference", default_masker, "Algorithm 1 over the reference grammar (default)")
PREDICATE_CHECKS: Registry[Callable[..., Any]] = Registry("predicate check")
"""Named replacements of the LC predicate check (tests register stand-ins; the default is the LC's predicates)."""


def suggester_by_name(name: str | None) -> Any:
    """A registered suggester, any local fill-mask model folder through the ``hf`` entry, or (None) the default."""
    from alict_core.mlm import SUGGESTERS, get_suggester

    if name is None or name in SUGGESTERS or not Path(name).expanduser().is_dir():
        return get_suggester(name)
    return get_suggester("hf", model=name)


def _spec_payload(spec: Any) -> dict[str, Any]:
    """The spec as a JSON-able dict plus whether it was an ``LCSpec`` (rebuilt as one in the worker)."""
    from alict_core.lcspec.schema import LCSpec

    if isinstance(spec, LCSpec):
        return {"kind": "lcspec", "value": spec.model_dump(mode="json")}
    return {"kind": "dict", "value": as_dict(spec)}


def _spec_from_payload(payload: dict[str, Any]) -> Any:
    if payload.get("kind") == "lcspec":
        from alict_core.lcspec.schema import LCSpec

        return LCSpec.model_validate(payload["value"])
    return payload["value"]


def _seed_from_dict(row: dict[str, Any]) -> Any:
    from alict_core.seeds.types import Seed

    try:
        return Seed.from_dict(row)
    except TypeError:  # a plain seed dict (suites, tests): expand() reads fields from dicts too
        return row


class ExpandShardWorker:
    """Loads the parser, masked LM and masker once, then expands one seed shard per call."""

    def __init__(self, spec: dict[str, Any], parser: str | None, mlm: str | None, settings: dict[str, Any],
                 masker: str = "reference", predicate_check: str | None = None, batch_size: int = 64) -> None:
        from alict_core.parsing import get_parser

        self.spec = _spec_from_payload(spec)
        self.parser = get_parser(parser)
        self.suggester = suggester_by_name(mlm)
        self.masker = MASKERS.create(masker)
        self.predicate_check = PREDICATE_CHECKS.create(predicate_check) if predicate_check else None
        self.settings = dict(settings)
        self.batch_size = batch_size

    def __call__(self, task: dict[str, Any]) -> dict[str, Any]:
        seeds = [_seed_from_dict(row) for row in read_jsonl(Path(task["seeds"]))]
        result = expand(seeds, self.spec, self.parser, self.suggester, masker=self.masker,
                        predicate_check=self.predicate_check, use_cache=False, batch_size=self.batch_size,
                        **self.settings)
        out = Path(task["out"])
        write_json(meta_path(out), {"counts": result.counts, "timings": result.timings})
        write_jsonl(out, result.rows)  # the part is the shard's completion mark: written last, atomically
        return {"index": task["index"], "rows": len(result.rows), "counts": result.counts,
                "timings": result.timings}


@dataclass
class ExpansionSummary:
    """A finished expansion artefact without its rows in memory: ``iter_rows()`` streams them, ``load()`` reads all."""

    key: str
    path: Path
    counts: dict[str, dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    rows: int = 0

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        return iter_jsonl(self.path)

    def load(self) -> ExpansionSet:
        return ExpansionSet.from_jsonl(self.path)


def merge_counts(total: dict[str, dict[str, Any]], part: dict[str, dict[str, Any]]) -> None:
    """Add one shard's per-LC counts into ``total`` (numbers summed, the ``rejected`` tallies merged)."""
    for lc_id, counts in part.items():
        into = total.setdefault(lc_id, {})
        for name, value in counts.items():
            if isinstance(value, dict):
                tally = into.setdefault(name, {})
                for reason, n in value.items():
                    tally[reason] = tally.get(reason, 0) + n
            else:
                into[name] = into.get(name, 0) + value
        if isinstance(into.get("rejected"), dict):
            into["rejected"] = dict(sorted(into["rejected"].items()))


def expand_sharded(seeds: Sequence[Any], spec: Any, *, parser: str | None, mlm: str | None, top_k_productions: int = 5,
                   max_masks: int = 2, top_k_words: int = 10, max_per_seed: int | None = 5,
                   shard_size: int = DEFAULT_SHARD_SIZE, executor: str | Executor = "local", workers: int = 1,
                   out_dir: Path | None = None, use_cache: bool = True, progress: ProgressFn | None = None,
                   should_stop: Callable[[], bool] | None = None, masker: str = "reference",
                   predicate_check: str | None = None, batch_size: int = 64,
                   min_word_score: float = DEFAULT_MIN_WORD_SCORE) -> ExpansionSummary:
    """:func:`expand` of one LC's seeds, shard by shard through the executor ``executor`` with ``workers``.

    ``executor`` is a registered name (built here with ``workers``, closed at the end) or an executor the
    caller owns and closes (to keep one worker pool over several LCs).
    Same key and artefact as :func:`expand` with the same inputs. Finished shards survive a kill; the next call
    resumes after them (``use_cache=False`` discards both the artefact and any finished shards first).
    ``progress(done, total, "shards")`` is called after each finished shard.
    """
    from alict_core.common.manifest import entry_lock, file_manifest_path, folder_lock
    from alict_core.parsing import get_parser

    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise ExpansionError(f"expand: shard_size must be a whole number >= 1, got {shard_size!r}")
    seeds = list(seeds)
    if max_per_seed is None:
        max_per_seed = int(field_of(field_of(spec, "expansion"), "max_per_seed", 5) or 5)
    settings: dict[str, float] = {"top_k_productions": top_k_productions, "max_masks": max_masks,
                                  "top_k_words": top_k_words, "max_per_seed": max_per_seed}
    for name, value in settings.items():
        if int(value) < 1:
            raise ExpansionError(f"expand(): {name} must be >= 1, got {value}")
    settings["min_word_score"] = checked_min_word_score(min_word_score)
    constraints = constraints_of(spec, settings["min_word_score"])  # a bad spec override fails before any work
    key_settings = {**settings, "allowed_polarity": list(allowed_polarity_of(spec)),
                    "constraints": constraints.to_dict(), "corpus": getattr(load_corpus_stats(), "fingerprint", None)}
    # the key needs the backends' fingerprints; get_parser / get_suggester load once per process, so the local
    # executor's worker reuses these objects
    mask_fn = MASKERS.create(masker)
    key = expansion_key(seeds, spec, get_parser(parser), suggester_by_name(mlm), mask_fn, key_settings)
    use_cache = use_cache and masker_fingerprint(mask_fn) is not None  # unknown masker content: never resume
    path = Path(out_dir or artefact_dir("expansions")) / f"{key}.jsonl"
    # one writer per key: a second identical call (no --out: both in the cache) waits, then reads the finished
    # artefact; it deleted the shard folder the second one was still filling (pass 13, E)
    with folder_lock(path):
        parts = shards.shard_folder(path)
        found = shards.finished_or_reset(path, "expansions", key, _read_summary, use_cache)
        if found is not None:
            return found
        lc_id = str(field_of(spec, "id", "") or (field_of(seeds[0], "lc_id") if seeds else ""))

        started = time.perf_counter()
        n_shards = shards.shard_count(len(seeds), shard_size)
        init = {"spec": _spec_payload(spec), "parser": parser, "mlm": mlm, "settings": settings, "masker": masker,
                "predicate_check": predicate_check, "batch_size": batch_size}
        with shards.executor_in_use(executor, workers) as pool:  # fails before any write
            tasks = shards.pending_shards(parts, seeds, shard_size, "seeds", as_dict)
            shards.run_shards(pool, ExpandShardWorker, init, tasks, should_stop=should_stop,
                              on_result=shards.shard_progress(progress, n_shards, n_shards - len(tasks), "shards"))

        counts: dict[str, dict[str, Any]] = {}
        timings: dict[str, float] = {}

        def add_part_meta(part: Path) -> None:
            meta = read_json(meta_path(part))
            merge_counts(counts, meta["counts"])
            for stage, seconds in meta.get("timings", {}).items():
                timings[stage] = round(timings.get(stage, 0.0) + seconds, 3)

        def before_rename() -> None:
            if not counts:
                counts[lc_id] = {"seeds": 0, "masked": 0, "suggestions": 0, "accepted": 0, "seeds_expanded": 0,
                                 "rejected": {}}
            timings["wall"] = round(time.perf_counter() - started, 3)
            file_manifest_path(path).unlink(missing_ok=True)  # a replaced artefact is never served with an old manifest

        with entry_lock(path):  # the joined file and its manifest: a reader meanwhile waits, never quarantines it
            n_rows = shards.join_parts(path, parts, n_shards, add_part_meta, before_rename)
            shards.finish_artefact(path, "expansions", key, n_rows, {
                "key": key, "counts": counts, "settings": key_settings, "timings": timings,
                "version": EXPANSION_VERSION, "shards": n_shards, "shard_size": shard_size, "executor": pool.name,
                "workers": pool.workers})
        return ExpansionSummary(key, path, counts, key_settings, timings, n_rows)


def _read_summary(path: Path) -> ExpansionSummary:
    meta = read_json(meta_path(path)) if meta_path(path).exists() else {}
    if "counts" not in meta:
        set_ = ExpansionSet.from_jsonl(path)  # a legacy artefact without a sidecar: count from the rows
        return ExpansionSummary(set_.key, path, set_.counts, set_.settings, set_.timings, len(set_.rows))
    rows = sum(1 for _ in iter_jsonl(path))
    return ExpansionSummary(meta.get("key", path.stem), path, meta["counts"], meta.get("settings", {}),
                            meta.get("timings", {}), rows)
