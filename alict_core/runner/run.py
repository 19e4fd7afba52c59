"""Run test cases through models: batched, deduplicated, cached on disk, resumable, cancellable."""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from alict_core.cases.testcases import TestCase
from alict_core.common.batching import distinct
from alict_core.common.csvsafe import write_csv
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import atomic_path, iter_jsonl, read_json, write_json, write_jsonl
from alict_core.lcspec.expectations import LABEL_KINDS, ExpectationError
from alict_core.models.defaults import resolved_defaults
from alict_core.models.protocol import (
    Model,
    answers_change,
    checked_proba,
    content_fingerprint,
    model_fingerprint,
)
from alict_core.models.run_scope import RunScope, current_scope, run_scope
from alict_core.runner.cache import PredictionCache, text_hashes
from alict_core.runner.memory_cache import MemoryPredictionCache
from alict_core.runner.probabilities import are_probability_rows

Progress = Callable[[int, int, str], None]
CaseFilter = Callable[[TestCase], bool]  # True: leave the case out of the run (e.g. review's RejectionFilter)
RUN_FILES = ("cases.jsonl", "results.parquet", "results.jsonl", "summary.csv", "meta.json", "report.html",
             "request.json")


class RunCancelled(AlictError):
    """``should_stop()`` asked to stop; every finished batch is cached and a re-run resumes."""


@dataclass
class ModelOutcome:
    """Per-case results of one model (arrays aligned with ``RunResult.case_list``)."""

    name: str
    fingerprint: str
    labels: tuple[str, ...]
    proba: np.ndarray  # (n_cases, k): probabilities of case.text
    passed: np.ndarray  # (n_cases,) bool
    n_variants: np.ndarray  # (n_cases,) int: INV/DIR variants evaluated
    n_changed: np.ndarray  # (n_cases,) int: INV variants whose label changed / DIR variants moving the wrong way
    changed_example: list[str | None]  # first failing variant per case (None if none)
    answers_change: bool = False  # an endpoint's: two runs of its settings may get other answers (a redeploy)

    @property
    def predicted(self) -> list[str]:
        return [self.labels[i] for i in self.proba.argmax(axis=1)] if len(self.proba) else []


def evaluate_case(
    case: TestCase, labels: Sequence[str], proba: np.ndarray, variant_proba: np.ndarray
) -> tuple[bool, int, int | None]:
    """(passed, n_failing_variants, index of first failing variant) of one case given its predictions.

    An INV case whose stored expectation is a label one (older artefacts) is judged as invariance.
    """
    try:
        outcome = case.judged_expectation().evaluate(labels, proba, variant_proba)
    except ExpectationError as exc:
        raise AlictError(str(exc)) from None
    return outcome.passed, outcome.n_failing, outcome.first_failing


def _resolve(models: Iterable[Model | str]) -> list[Model]:
    from alict_core.models.registry import get_model

    out = [get_model(m) if isinstance(m, str) else m for m in models]
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise AlictError(f"two models share a name in {names}; give each a distinct name")
    return out


def prediction_cache(model: Model, cache_root: Path | None = None) -> PredictionCache | MemoryPredictionCache:
    """The on-disk cache keyed by the model's content fingerprint; in memory only when it has none (an endpoint's:
    for the open run, so its passes ask each text once, and never a later run)."""
    fingerprint = content_fingerprint(model)
    if fingerprint is None:
        scope = current_scope()
        if scope is not None and answers_change(model):
            key = f"{model_fingerprint(model)}|{model.name}"
            return scope.answers.setdefault(key, MemoryPredictionCache(model.labels))  # type: ignore[no-any-return]
        return MemoryPredictionCache(model.labels)
    return PredictionCache(fingerprint, model.labels, cache_root)


def predict_cached(
    model: Model, texts: Sequence[str], *, batch_size: int = 64, cache_root: Path | None = None,
    progress: Callable[[int], None] | None = None, should_stop: Callable[[], bool] | None = None,
    hashes: dict[str, str] | None = None, cache: PredictionCache | MemoryPredictionCache | None = None,
) -> PredictionCache | MemoryPredictionCache:
    """Predict every distinct text of ``texts`` not yet cached, one batch (and shard) at a time.

    Rows the model reports as unparsed answers (``run_scope``) are kept for this run only, never written.
    """
    with run_scope() as scope:  # joins the caller's run, or is a run of its own
        cache = cache if cache is not None else prediction_cache(model, cache_root)
        return _predict_in_scope(model, texts, batch_size, cache, progress, should_stop, hashes, scope)


def _predict_in_scope(
    model: Model, texts: Sequence[str], batch_size: int, cache: PredictionCache | MemoryPredictionCache,
    progress: Callable[[int], None] | None, should_stop: Callable[[], bool] | None,
    hashes: dict[str, str] | None, scope: RunScope,
) -> PredictionCache | MemoryPredictionCache:
    texts = distinct(texts)
    hashes = hashes or text_hashes(texts)
    todo = cache.missing(texts, hashes)
    volatile = scope.volatile.get(model.name, {})
    reused = [t for t in todo if t in volatile]
    if reused:  # unparsed answers of an earlier pass of this run: asked once per run, never cached
        cache.remember(reused, np.array([volatile[t] for t in reused]), hashes)
        todo = [t for t in todo if t not in volatile]
    for start in range(0, len(todo), batch_size):
        if should_stop is not None and should_stop():
            kept = ("asked; its answers are not cached (an endpoint's never are): running again asks them again"
                    if isinstance(cache, MemoryPredictionCache) else "predicted and cached; run again to resume")
            raise RunCancelled(f"run stopped before model {model.name!r} finished ({start} of {len(todo)} new texts "
                               f"{kept})")
        batch = todo[start : start + batch_size]
        proba = checked_proba(model, batch)
        unparsed = scope.take_unparsed(model.name)
        keep = [i for i, text in enumerate(batch) if text not in unparsed]
        cache.put_batch([batch[i] for i in keep], proba[keep], hashes)
        if len(keep) < len(batch):
            redo = [i for i, text in enumerate(batch) if text in unparsed]
            cache.remember([batch[i] for i in redo], proba[redo], hashes)
            scope.keep_volatile(model.name, [batch[i] for i in redo], proba[redo].tolist())
        if progress:
            progress(len(batch))
    return cache


def _check_texts(cases: Sequence[TestCase]) -> None:
    """Refuse, before any prediction, a case whose text or variant is not text or is over the length limit."""
    from alict_core.common.limits import check_text

    for case in cases:
        for text in case.texts():
            check_text(text, f"case {case.case_id!r} of {case.lc_id}", allow_empty=True)


def drop_excluded(cases: Sequence[TestCase], exclude: CaseFilter) -> tuple[list[TestCase], int]:
    """``cases`` without those ``exclude`` names (asked seeds first: a seed decides its expansions), and how many."""
    seeds_first = sorted(range(len(cases)), key=lambda i: cases[i].kind != "seed")
    drop = {i for i in seeds_first if exclude(cases[i])}
    if not drop:
        return list(cases), 0
    return [c for i, c in enumerate(cases) if i not in drop], len(drop)


DEFAULT_BATCH_SIZE = 64


def checked_batch_size(batch_size: int | None) -> int:
    """``batch_size``, checked against ``ALICT_LIMIT_BATCH_SIZE``; None: 64, or the limit when it is lower (a limit
    below the default refused every run that gave no batch size, naming a 64 the user never gave)."""
    from alict_core.common.limits import limits

    top = limits().batch_size
    if batch_size is None:
        return min(DEFAULT_BATCH_SIZE, top)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= top:
        raise AlictError(f"batch_size must be a whole number in [1, {top}] (setting ALICT_LIMIT_BATCH_SIZE), "
                         f"got {batch_size!r}")
    return batch_size


def run_suite(
    cases: Sequence[TestCase],
    models: Iterable[Model | str],
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    cache_root: Path | None = None,
    exclude: CaseFilter | None = None,
    memory_only: bool = False,
) -> "RunResult":
    """Run every case through every model and evaluate MFT/INV/DIR expectations.

    Identical texts are predicted once per model; predictions are cached on disk under
    ``config.artefact_dir("predictions")`` keyed by (model fingerprint, text hash), so a killed or
    cancelled run resumes where it stopped. ``progress(done, total, message)`` counts texts;
    ``should_stop()`` is polled between batches and raises ``RunCancelled``. ``exclude(case)`` True leaves a
    case out, asked seeds first (the caller hands in review's ``RejectionFilter()`` to leave out the cases
    reviewers rejected; None: every case runs); ``extra["review_excluded"]`` counts them. ``memory_only``: the
    predictions are kept in memory, never written (a page view's preview must not grow the disk cache).
    """
    batch_size = checked_batch_size(batch_size)
    models = _resolve(models)
    cases = list(cases)
    cases, excluded = drop_excluded(cases, exclude) if exclude is not None else (cases, 0)
    texts = distinct(t for case in cases for t in case.texts())
    _check_texts(cases)
    hashes = text_hashes(texts)
    caches = {m.name: MemoryPredictionCache(m.labels) if memory_only else prediction_cache(m, cache_root)
              for m in models}
    missing = {m.name: len(caches[m.name].missing(texts, hashes)) for m in models}
    total = len(texts) * len(models)
    done = total - sum(missing.values())
    started = time.monotonic()
    if progress:
        progress(done, total, f"{done} of {total} predictions cached")
    outcomes = []
    with run_scope() as scope:  # request caps and unparsed answers count per run (joins the caller's scope)
        for model in models:
            def step(n: int, _name: str = model.name) -> None:
                nonlocal done
                done += n
                if progress:
                    progress(done, total, f"{_name}: {done}/{total} predictions")

            cache = predict_cached(model, texts, batch_size=batch_size, progress=step, should_stop=should_stop,
                                   hashes=hashes, cache=caches[model.name])
            outcomes.append(_evaluate(model, cases, cache, hashes))
    unparsed = scope.unparsed_counts()
    extra: dict[str, Any] = {"unparsed_answers": unparsed} if unparsed else {}
    if excluded:
        extra["review_excluded"] = excluded
    return RunResult(cases, outcomes, seconds=time.monotonic() - started, extra=extra)


def _evaluate(model: Model, cases: Sequence[TestCase], cache: PredictionCache | MemoryPredictionCache,
              hashes: dict[str, str]) -> ModelOutcome:
    """Vectorised for MFT cases (grouped by expectation); INV/DIR cases compare their variants one by one."""
    n = len(cases)
    labels = tuple(model.labels)
    proba = cache.lookup([c.text for c in cases], hashes) if n else np.zeros((0, len(labels)))
    predicted = proba.argmax(axis=1) if n else np.zeros(0, dtype=int)
    passed = np.zeros(n, dtype=bool)
    n_variants = np.array([len(c.variants) for c in cases], dtype=np.int32)
    n_changed = np.zeros(n, dtype=np.int32)
    examples: list[str | None] = [None] * n
    mft: dict[Any, list[int]] = {}
    for i, case in enumerate(cases):
        expectation = case.expectation
        if isinstance(expectation, LABEL_KINDS) and not case.variants:
            mft.setdefault(expectation, []).append(i)
            continue
        ok, n_bad, first = evaluate_case(case, labels, proba[i], cache.lookup(list(case.variants), hashes))
        passed[i], n_changed[i] = ok, n_bad
        examples[i] = case.variants[first] if first is not None else None
    for expectation, rows in mft.items():
        for name in expectation.labels:
            if name not in labels:
                raise AlictError(f"expected label {name!r} is not one of model {model.name!r}'s labels {labels}")
        idx = np.array(rows)
        passed[idx] = expectation.allowed(labels)[predicted[idx]]
    return ModelOutcome(model.name, model_fingerprint(model), labels, proba, passed, n_variants, n_changed, examples,
                        answers_change(model))


@dataclass
class RunResult:
    """Results of a suite × models run; tables as pandas DataFrames, stored as JSONL + Parquet."""

    case_list: list[TestCase]
    outcomes: list[ModelOutcome]
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)
    saved_id: str | None = field(default=None, compare=False)  # the id a saved run was written under

    @property
    def run_id(self) -> str:
        """The id the run was saved under, else the content hash of the cases and the models' fingerprints and
        display names (a saved run of an endpoint has an id of its own for each time it asked the service)."""
        if self.saved_id:
            return self.saved_id
        return hash_json({"cases": [hash_json(c.to_dict()) for c in self.case_list],
                          "models": [f"{o.fingerprint}|{o.name}" for o in self.outcomes]})

    @property
    def models(self) -> list[str]:
        return [o.name for o in self.outcomes]

    @property
    def n_cases(self) -> int:
        return len(self.case_list)

    def cases(self) -> pd.DataFrame:
        """One row per case × model: text, predicted label, probabilities, passed, kind, seed_id, ..."""
        table = self._frame(probabilities=False).copy()
        if len(table):
            table.insert(table.columns.get_loc("passed"), "probabilities",
                         [dict(zip(o.labels, row, strict=True)) for o in self.outcomes for row in o.proba.tolist()])
        return table

    def _frame(self, probabilities: bool = False) -> pd.DataFrame:
        """The case × model table without probabilities, built once (results are immutable)."""
        if "frame" not in self._memo:
            expected = [c.expectation.describe() for c in self.case_list]
            self._memo["expected"] = expected
            self._memo["frame"] = self._build_frame()
        return self._memo["frame"]

    def _build_frame(self) -> pd.DataFrame:
        frames = []
        for o in self.outcomes:
            frames.append(pd.DataFrame({
                "case_id": [c.case_id for c in self.case_list],
                "lc_id": [c.lc_id for c in self.case_list],
                "capability": [c.capability for c in self.case_list],
                "test_type": [c.test_type for c in self.case_list],
                "kind": [c.kind for c in self.case_list],
                "seed_id": [c.seed_id for c in self.case_list],
                "text": [c.text for c in self.case_list],
                "expected": self._memo["expected"],
                "model": o.name,
                "predicted": o.predicted,
                "passed": o.passed,
                "n_variants": o.n_variants,
                "n_failing_variants": o.n_changed,
                "failing_variant": o.changed_example,
            }))
        if not frames:
            return pd.DataFrame(columns=["case_id", "lc_id", "model", "text", "predicted", "passed", "kind", "seed_id"])
        return pd.concat(frames, ignore_index=True)

    def _index(self) -> dict[str, np.ndarray]:
        """Per-case arrays shared by summary and pair queries: LC codes, seed flags, seed positions."""
        if "index" not in self._memo:
            lcs = list(dict.fromkeys(c.lc_id for c in self.case_list))
            code = {lc: i for i, lc in enumerate(lcs)}
            position = {c.case_id: i for i, c in enumerate(self.case_list) if c.kind == "seed"}
            self._memo["index"] = {
                "lcs": np.array(lcs, dtype=object),
                "lc": np.array([code[c.lc_id] for c in self.case_list], dtype=np.int64),
                "seed": np.array([c.kind == "seed" for c in self.case_list], dtype=bool),
                "seed_pos": np.array([position.get(c.seed_id, -1) if c.kind != "seed" else -1 for c in self.case_list],
                                     dtype=np.int64),
                "group": pd.factorize(pd.Series([f"{c.lc_id}\x00{c.seed_id}" for c in self.case_list],
                                                dtype=object))[0].astype(np.int64),
            }
        return self._memo["index"]

    def _pair_mask(self, outcome: ModelOutcome, seed_passed: bool) -> np.ndarray:
        idx = self._index()
        has_seed = idx["seed_pos"] >= 0
        seed_ok = np.zeros(len(self.case_list), dtype=bool)
        seed_ok[has_seed] = outcome.passed[idx["seed_pos"][has_seed]]
        if seed_passed:
            return has_seed & seed_ok & ~outcome.passed
        return has_seed & ~seed_ok & outcome.passed

    def _pairs(self, seed_passed: bool) -> pd.DataFrame:
        cols = ["lc_id", "model", "seed_id", "seed_text", "seed_predicted", "case_id", "text", "predicted", "expected"]
        rows = []
        idx = self._index()
        for o in self.outcomes:
            predicted = o.predicted
            for i in np.flatnonzero(self._pair_mask(o, seed_passed)):
                case, seed_i = self.case_list[i], int(idx["seed_pos"][i])
                rows.append((case.lc_id, o.name, case.seed_id, self.case_list[seed_i].text, predicted[seed_i],
                             case.case_id, case.text, predicted[i], case.expectation.describe()))
        return pd.DataFrame(rows, columns=cols)

    def pass_to_fail(self) -> pd.DataFrame:
        """Expansions that fail while their seed passes (per model)."""
        return self._pairs(True)

    def fail_to_pass(self) -> pd.DataFrame:
        """Expansions that pass while their seed fails (per model)."""
        return self._pairs(False)

    def counts(self) -> list[dict[str, Any]]:
        """Per LC × model (models outer, LCs in first-appearance order): case, fail and pair counts."""
        from alict_core.runner.summary import (
            CLUSTER_FIELDS_ALL,
            CLUSTER_FIELDS_EXPANSIONS,
            COUNT_FIELDS,
            group_statistics,
        )

        idx = self._index()
        n_lc = len(idx["lcs"])
        first: dict[str, TestCase] = {}
        for c in self.case_list:
            first.setdefault(c.lc_id, c)
        count = lambda mask: np.bincount(idx["lc"][mask], minlength=n_lc)  # noqa: E731
        seeds, exps = count(idx["seed"]), count(~idx["seed"])
        rows = []
        for o in self.outcomes:
            fail = ~o.passed
            groups = group_statistics(idx["lc"], idx["group"], idx["seed"], fail, n_lc)
            values = (seeds, exps, count(fail & idx["seed"]), count(fail & ~idx["seed"]),
                      count(self._pair_mask(o, True)), count(self._pair_mask(o, False)),
                      *(groups[name] for name in (*CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL)))
            for k, lc in enumerate(idx["lcs"]):
                rows.append({"lc_id": str(lc), "capability": first[lc].capability,
                             "test_type": first[lc].test_type, "model": o.name,
                             **{name: int(v[k]) for name, v in zip(COUNT_FIELDS, values, strict=True)}})
        return rows

    def summary(self) -> pd.DataFrame:
        """Per LC × model: counts, fail rates (seeds: Wilson; expansions, all: seed-clustered intervals), pairs."""
        from alict_core.runner.summary import summary_frame

        return summary_frame(self.counts())

    def save(self, directory: Path | str | None = None, extra_files: Mapping[str, Any] | None = None) -> Path:
        """Write cases.jsonl, results.parquet, results.jsonl, summary.csv, meta.json and manifest.json.

        Default directory: ``config.artefact_dir("runs")/<run_id>``. The run is written into a temporary
        folder and swapped into place whole: re-saving keeps the old run until the new one is complete.
        ``extra_files`` (name -> JSON value, e.g. the app's ``request.json``) are written in the same swap.
        """
        from alict_core.common.config import artefact_dir
        from alict_core.common.manifest import atomic_dir, write_manifest
        from alict_core.common.refs import check_name

        if self.saved_id is None and any(o.answers_change for o in self.outcomes):
            self.saved_id = asked_run_id(self.run_id)  # one ask of an endpoint: a run of its own, never re-written
        directory = Path(directory) if directory else artefact_dir("runs") / self.run_id
        with atomic_dir(directory, owned=RUN_FILES, kind="run") as tmp:
            self._write_files(tmp)
            for name, value in (extra_files or {}).items():
                write_json(tmp / check_name(name, "run file"), value)
            write_manifest(tmp, "run", self.run_id, len(self.case_list) * len(self.outcomes))
        return directory

    def results_table(self, rows: pd.DataFrame | None = None) -> pd.DataFrame:
        """``cases()`` as stored in ``results.parquet``: probabilities a list in the model's label order."""
        flat = (self.cases() if rows is None else rows).copy()
        flat["probabilities"] = flat["probabilities"].map(lambda d: [float(d[k]) for k in d])
        return flat

    def _write_files(self, directory: Path) -> None:
        write_jsonl(directory / "cases.jsonl", (c.to_dict() for c in self.case_list))
        rows = self.cases()
        with atomic_path(directory / "results.parquet") as tmp:
            self.results_table(rows).to_parquet(tmp, index=False)
        write_jsonl(directory / "results.jsonl", rows.to_dict(orient="records"))
        write_csv(directory / "summary.csv", self.summary())
        write_json(directory / "meta.json", {
            "run_id": self.run_id, "layout": "whole", "seconds": round(self.seconds, 3), "extra": self.extra,
            "models": [{"name": o.name, "fingerprint": o.fingerprint, "labels": list(o.labels),
                        **({"answers_change": True} if o.answers_change else {})} for o in self.outcomes],
            "model_defaults": resolved_defaults(),  # which parser / MLM / classifiers the defaults meant (#20)
        })

    @classmethod
    def load(cls, directory: Path | str) -> "RunResult":
        """Read a run written by ``save``."""
        from alict_core.common.manifest import READ_ERRORS, CorruptArtefactError

        directory = Path(directory)
        for _ in range(3):  # a re-write of the run swapped in while it was read: read the new run whole
            before = _folder_identity(directory)
            try:
                verify_saved_run(directory)
                result = cls._read(directory)
            except (AlictError, *READ_ERRORS) as exc:
                if _folder_identity(directory) != before:
                    continue
                if isinstance(exc, AlictError):
                    raise
                raise CorruptArtefactError(f"run {directory.name!r} cannot be read ({type(exc).__name__}); "
                                           "run it again to replace it") from None
            if _folder_identity(directory) == before:  # the files checked and read are of one folder, not a mix
                return result
        raise AlictError(f"run {directory.name!r} was replaced again and again while it was read; run the command "
                         "again once the run writing it has finished")

    @classmethod
    def _read(cls, directory: Path) -> "RunResult":
        meta = read_json(directory / "meta.json")
        if not isinstance(meta.get("extra", {}), dict):  # every reader of the run's extra (report) assumed it
            raise TypeError("meta.json: extra is not an object")  # one message by ``load`` ("cannot be read")
        if meta.get("layout") == "sharded":  # a streaming run (runner.stream): concatenate its parts
            case_files = sorted((directory / "cases").glob("part-*.jsonl"))
            cases = [TestCase.from_dict(row) for path in case_files for row in iter_jsonl(path)]
            parts = [pd.read_parquet(path) for path in sorted((directory / "results").glob("part-*.parquet"))]
            table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["model", "case_id"])
        else:
            cases = [TestCase.from_dict(row) for row in iter_jsonl(directory / "cases.jsonl")]
            table = pd.read_parquet(directory / "results.parquet")
        outcomes = []
        for m in meta["models"]:
            part = table[table.model == m["name"]].set_index("case_id").reindex([c.case_id for c in cases])
            probabilities = np.array([list(p) for p in part.probabilities], dtype=np.float64).reshape(
                len(cases), len(m["labels"]))
            if not are_probability_rows(probabilities):  # NaN, 5 and -3, [0, 0, 0]: as the cache
                raise ValueError(f"model {m['name']!r} has rows that are not probabilities summing to 1")
            outcomes.append(ModelOutcome(
                m["name"], m["fingerprint"], tuple(m["labels"]),
                probabilities,
                part.passed.to_numpy(dtype=bool), part.n_variants.to_numpy(dtype=np.int32),
                part.n_failing_variants.to_numpy(dtype=np.int32),
                [v if isinstance(v, str) else None for v in part.failing_variant], m.get("answers_change") is True,
            ))
        saved_id = meta.get("run_id")
        return cls(cases, outcomes, seconds=float(meta.get("seconds", 0.0)), extra=meta.get("extra", {}),
                   saved_id=saved_id if isinstance(saved_id, str) and re.fullmatch(r"[0-9a-f]{16}", saved_id) else None)


def _folder_identity(directory: Path) -> tuple[int, int] | None:
    """The folder's (device, inode): a run re-written is swapped in as a new folder, so a change means a swap."""
    try:
        info = directory.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def asked_run_id(inputs_id: str) -> str:
    """A new run id for one ask of an endpoint: its inputs' id with a random part (no two asks share one)."""
    return hashlib.sha256(f"{inputs_id}|{uuid.uuid4().hex}".encode("ascii")).hexdigest()[:16]


def verify_saved_run(directory: Path) -> None:
    """A finished, saved run in ``directory`` that passes its manifest check, else one message (every reader of a
    saved run's files calls this first: a tampered part is refused, never read)."""
    from alict_core.common.manifest import MANIFEST, CorruptArtefactError, recover_dir, verify_dir

    recover_dir(directory)
    if not directory.is_dir():
        raise AlictError(f"saved run {directory.name!r} not found")
    if not (directory / "meta.json").exists():
        if (directory / "progress.json").exists():  # a streaming run stopped before it finished
            raise AlictError(f"run {directory.name!r} was interrupted before it finished (no meta.json yet); run the "
                             "`run` command that made it again to resume it (finished shards are kept)")
        raise AlictError(f"run {directory.name!r} is not a saved run (no meta.json); "
                         "run `python -m alict_core run` first")
    if (directory / MANIFEST).exists() or (directory / MANIFEST).is_symlink():  # runs from before manifests: read
        verify_dir(directory, "run", label=f"run {directory.name!r}")
    elif (directory / "progress.json").exists():  # a streaming run writes its manifest last: not finished
        raise CorruptArtefactError(f"run {directory.name!r} is not finished (no manifest); "
                                   "run the `run` command that made it again to complete it")
    else:  # no manifest: a run from before manifests, or another command's folder that also has a meta.json
        _check_run_meta(directory)


def _check_run_meta(directory: Path) -> None:
    """Refuse a folder whose meta.json is not a run's (``lego --out`` writes one too): it was read as a run and
    failed with "cannot be read (FileNotFoundError)"; nor a sharded run whose manifest was removed."""
    from alict_core.common.manifest import CorruptArtefactError

    if (directory / "trees.jsonl").exists():
        raise AlictError(f"{directory.name!r} is an NLPLego folder (written by `lego --out`), not a saved run; give a "
                         "run folder (its DIR tests run with `lego --models ...`)")
    try:
        meta = read_json(directory / "meta.json")
    except (OSError, ValueError):
        return  # a damaged run's meta: "cannot be read" when it is read
    if isinstance(meta, dict) and "run_id" not in meta and "models" not in meta:
        raise AlictError(f"{directory.name!r} is not a saved run (its meta.json is not a run's); give a run folder")
    if isinstance(meta, dict) and meta.get("layout") in ("sharded", "whole"):  # written with its manifest: removed
        raise CorruptArtefactError(f"run {directory.name!r} has lost its manifest (every run written since manifests "
                                   "writes one), so its files cannot be checked; run the same inputs again to repair "
                                   "it")
