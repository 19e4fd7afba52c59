"""Read a saved or running run without loading it: aggregates, facets and pages over its Parquet results.

Both layouts (``docs/ARCHITECTURE.md``): a legacy run's single ``results.parquet`` and a sharded run's
``results/part-*.parquet`` (a part exists only when whole, so a running run reads its finished shards). Everything
goes through ``pyarrow.dataset`` scans with projected columns and filters; memory stays bounded by one page or one
aggregate table (per LC × model × test type × kind), never by the number of cases.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from alict_core.common.csvsafe import read_csv
from alict_core.common.errors import AlictError
from alict_core.common.jsonl import read_json
from alict_core.common.manifest import CorruptArtefactError
from alict_core.runner.probabilities import are_probability_rows
from alict_core.runner.store import unfinished_runs, writer_alive
from alict_core.runner.summary import CLUSTER_FIELDS_ALL, CLUSTER_FIELDS_EXPANSIONS, SUMMARY_COLUMNS, summary_frame

RESULT_COLUMNS = ["case_id", "lc_id", "capability", "test_type", "kind", "seed_id", "text", "expected", "model",
                  "predicted", "probabilities", "passed", "n_variants", "n_failing_variants", "failing_variant"]
CUBE_KEYS = ["lc_id", "capability", "test_type", "model", "kind"]
GROUP_COLUMNS = ["lc_id", "model", "seed_id", "kind", "passed"]
PAIR_COLUMNS = ["case_id", "seed_id", "kind", "model", "passed", "lc_id"]


@dataclass(frozen=True)
class RowFilter:
    """Which result rows to show, count or page through, in a small run (``alict_core.analysis.explore``) or a
    big one (this reader); empty tuples and "" mean "no filter"."""

    capabilities: tuple[str, ...] = ()  # small runs only (the explorer's frame)
    lcs: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    test_types: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # "seed" / "expansion"
    outcome: str = "all"  # "fails" | "passes" | "all"
    template: str = ""  # small runs only
    word: str = ""  # small runs only: the inserted word of an expansion
    pass_to_fail: bool = False  # only expansions that fail while their seed passes (same model)

    def expression(self) -> ds.Expression | None:
        """The filter over a big run's results parts (which have no capability, template or word columns)."""
        if self.capabilities or self.template or self.word:
            raise AlictError("a big run's results are filtered by LC, model, test type, kind and outcome only")
        parts = [ds.field(column).isin(list(values)) for column, values in
                 (("lc_id", self.lcs), ("model", self.models), ("test_type", self.test_types), ("kind", self.kinds))
                 if values]
        if self.outcome == "fails" or self.pass_to_fail:
            parts.append(ds.field("passed") == False)  # noqa: E712 (a pyarrow expression)
        elif self.outcome == "passes":
            parts.append(ds.field("passed") == True)  # noqa: E712
        if self.pass_to_fail:
            parts.append(ds.field("kind") == "expansion")
        if not parts:
            return None
        expression = parts[0]
        for part in parts[1:]:
            expression = expression & part
        return expression


MAX_COUNT = 10**12  # counts of progress.json above this are no run's (a 400-digit count overflowed the rate)
MAX_ETA_S = 10 * 365 * 86400.0  # an ETA beyond ten years is shown as unknown (a longer one overflowed the page's clock)


def _count(value: Any) -> int:
    """A count of progress.json, 0 when it is not a whole number in [0, MAX_COUNT] (the file is the writer's note,
    not trusted)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT else 0


def _moment(value: Any, default: float) -> float:
    """A time of progress.json (seconds), else ``default`` (text, a list, a 400-digit number: no error)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < 1e12:
        return default
    return float(value) if math.isfinite(value) else default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def progress_view(progress: dict[str, Any], now: float | None = None, folder: Path | None = None) -> dict[str, Any]:
    """A progress.json (of the run ``folder``, when known) made readable: fraction, rate (cases/s), ETA (s) and the
    status a person should see.

    A "running" run whose writer is gone (its pid dead, or on this host its run lock free) reads "stopped (process
    gone); re-run to resume".
    """
    now = time.time() if now is None else now
    n_shards, shards_done = _count(progress.get("n_shards")), _count(progress.get("shards_done"))
    n_cases, cases_done = _count(progress.get("n_cases")), _count(progress.get("cases_done"))
    shards_done, cases_done = min(shards_done, n_shards), min(cases_done, n_cases)  # "cases 5/0" is no progress
    started = _moment(progress.get("started_at"), now)
    updated = _moment(progress.get("updated_at"), now)
    elapsed = updated - started
    rate = cases_done / elapsed if cases_done and elapsed >= 1.0 else 0.0  # under a second (or backwards): no rate
    eta = (n_cases - cases_done) / rate if rate > 0 and n_cases > cases_done else None
    eta = eta if eta is not None and eta <= MAX_ETA_S else None
    status = str(progress.get("status") or "unknown")
    alive = writer_alive(progress, folder) if status == "running" else False
    shown = status
    if status == "running" and not alive:
        shown = "stopped (process gone); re-run to resume"
    if not alive:  # a stopped, finished or failed run has no time left to show
        eta = None
    fraction = shards_done / n_shards if n_shards else (cases_done / n_cases if n_cases else 0.0)
    return {"status": status, "shown_status": shown, "alive": alive, "fraction": min(1.0, max(0.0, fraction)),
            "n_shards": n_shards, "shards_done": shards_done, "n_cases": n_cases, "cases_done": cases_done,
            "rate": rate, "eta_s": eta, "models": [m for m in _list(progress.get("models")) if isinstance(m, str)],
            "message": str(progress.get("message") or ""), "updated_ago_s": max(0.0, now - updated)}


LARGE_ROWS = 200_000
"""Case × model rows above which the app and ``report`` read a run by aggregates and pages, never loaded whole."""


@dataclass(frozen=True)
class RunAggregates:
    """What the JUnit / JSON-summary exports and threshold gates need of a run, from its aggregates only."""

    run_id: str
    models: list[str]
    n_cases: int
    table: pd.DataFrame
    extra: dict[str, Any] = field(default_factory=dict)  # meta.json's "extra" (skipped suite tests, ...)

    @classmethod
    def of(cls, reader: "RunReader") -> "RunAggregates":
        meta = reader.meta
        n_models = max(len(reader.models()), 1)
        return cls(str(meta.get("run_id") or reader.folder.name), reader.models(),
                   int(meta.get("n_cases") or reader.n_rows() // n_models), reader.summary(),
                   dict(meta.get("extra") or {}))

    def summary(self) -> pd.DataFrame:
        return self.table


def running_runs(root: Path) -> list[dict[str, Any]]:
    """Runs of a run store that are not finished (CLI and app alike), newest first.

    Each is :func:`progress_view` of :func:`alict_core.runner.store.unfinished_runs`' progress plus ``"run_id"``,
    ``"run_dir"`` and ``"updated_at"``.
    """
    return [{**progress_view(p, folder=Path(p["run_dir"])), "run_id": Path(p["run_dir"]).name, "run_dir": p["run_dir"],
             "updated_at": _moment(p.get("updated_at"), 0.0)} for p in unfinished_runs(root)]  # "soon": 0, no error


class RunReader:
    """Read access to one run folder, legacy or sharded, finished or running."""

    def __init__(self, folder: Path, sharded: bool, files: list[str]) -> None:
        self.folder = folder
        self.sharded = sharded
        self.files = files
        self._dataset = ds.dataset(files, format="parquet") if files else None
        self._memo: dict[str, Any] = {}

    @classmethod
    def open(cls, run_dir: Path | str) -> "RunReader":
        """The run in ``run_dir``; a sharded run lists its finished parts (a running run reads those so far)."""
        folder = Path(run_dir)
        if not folder.is_dir():
            raise AlictError(f"run {folder.name!r} not found")
        if (folder / "results").is_dir() or (folder / "progress.json").is_file():
            files = sorted(str(p) for p in (folder / "results").glob("part-*.parquet"))
            return cls(folder, True, files)
        if not (folder / "results.parquet").is_file():
            raise AlictError(f"run {folder.name!r} has no results (neither results.parquet nor results/part-*)")
        return cls(folder, False, [str(folder / "results.parquet")])

    # ------------------------------------------------------------------ metadata
    @property
    def meta(self) -> dict[str, Any]:
        path = self.folder / "meta.json"
        return read_json(path) if path.is_file() else {}

    def progress(self) -> dict[str, Any] | None:
        """:func:`progress_view` of the run's progress.json (None for a legacy run)."""
        path = self.folder / "progress.json"
        if not path.is_file():
            return None
        try:
            return progress_view(read_json(path), folder=self.folder)
        except (ValueError, OSError):
            return None

    def case_files(self) -> list[Path]:
        """The run's case rows: ``cases.jsonl`` of a legacy run, ``cases/part-*.jsonl`` of a sharded one."""
        if self.sharded:
            return sorted((self.folder / "cases").glob("part-*.jsonl"))
        return [self.folder / "cases.jsonl"] if (self.folder / "cases.jsonl").is_file() else []

    def iter_case_rows(self) -> Iterator[dict[str, Any]]:
        """``TestCase.to_dict()`` rows of the run, shard by shard (never all parts at once)."""
        from alict_core.common.jsonl import iter_jsonl

        for path in self.case_files():
            yield from iter_jsonl(path)

    @property
    def done(self) -> bool:
        """Finished: a legacy run always; a sharded run once its meta.json is written."""
        return not self.sharded or (self.folder / "meta.json").is_file()

    def n_rows(self) -> int:
        """Case × model rows in the finished parts."""
        return int(self._dataset.count_rows()) if self._dataset is not None else 0

    def models(self) -> list[str]:
        names = [m["name"] for m in self.meta.get("models", [])]
        return names or sorted(self.cube()["model"].unique())

    def lcs(self) -> list[str]:
        return sorted(self.cube()["lc_id"].unique())

    # ------------------------------------------------------------------ aggregates
    def cube(self) -> pd.DataFrame:
        """Rows and failures per LC × capability × test type × model × kind (one small grouped table)."""
        if "cube" not in self._memo:
            columns = [*CUBE_KEYS, "n", "n_fail"]
            if self._dataset is None:
                self._memo["cube"] = pd.DataFrame(columns=columns)
            else:
                keys_as_dictionaries = ds.ParquetFileFormat(  # few distinct values: read and group as codes
                    read_options=ds.ParquetReadOptions(dictionary_columns=CUBE_KEYS))
                table = ds.dataset(self.files, format=keys_as_dictionaries).to_table(
                    columns=[*CUBE_KEYS, "passed"]).unify_dictionaries()
                failed = pc.invert(table.column("passed"))
                table = table.append_column("failed", pc.cast(failed, pa.int64()))
                grouped = table.group_by(CUBE_KEYS).aggregate([("failed", "count"), ("failed", "sum")])
                frame = grouped.to_pandas().rename(columns={"failed_count": "n", "failed_sum": "n_fail"})
                frame[CUBE_KEYS] = frame[CUBE_KEYS].astype(str)
                self._memo["cube"] = frame[columns]
        return self._memo["cube"]

    def facets(self) -> dict[str, list[str]]:
        """Distinct LCs, capabilities, models, test types and kinds of the rows."""
        cube = self.cube()
        return {column: sorted(str(v) for v in cube[column].unique()) for column in CUBE_KEYS}

    def count(self, filters: RowFilter = RowFilter()) -> int:
        """Rows the filter keeps."""
        if self._dataset is None:
            return 0
        if filters.pass_to_fail:
            return sum(len(batch) for batch in self._iter_rows(filters, ["case_id"]))
        return int(self._dataset.count_rows(filter=filters.expression()))

    def pair_counts(self) -> pd.DataFrame:
        """Pass-to-fail and fail-to-pass pairs per LC × model, joined part by part (a seed shares its part)."""
        if "pairs" not in self._memo:
            counts: dict[tuple[str, str], list[int]] = {}
            for fragment in self._fragments():
                frame = fragment.to_table(columns=PAIR_COLUMNS).to_pandas()
                seeds = frame[frame["kind"] == "seed"][["case_id", "model", "passed"]]
                exps = frame[frame["kind"] != "seed"]
                if seeds.empty or exps.empty:
                    continue
                joined = exps.merge(seeds.rename(columns={"case_id": "seed_id", "passed": "seed_passed"}),
                                    on=["seed_id", "model"], how="inner")
                p2f = joined["seed_passed"] & ~joined["passed"]
                f2p = ~joined["seed_passed"] & joined["passed"]
                grouped = joined.assign(p2f=p2f, f2p=f2p).groupby(["lc_id", "model"])[["p2f", "f2p"]].sum()
                for (lc, model), row in grouped.iterrows():
                    slot = counts.setdefault((lc, model), [0, 0])
                    slot[0] += int(row["p2f"])
                    slot[1] += int(row["f2p"])
            self._memo["pairs"] = pd.DataFrame(
                [(lc, m, a, b) for (lc, m), (a, b) in counts.items()],
                columns=["lc_id", "model", "n_pass_to_fail", "n_fail_to_pass"])
        return self._memo["pairs"]

    def group_counts(self) -> pd.DataFrame:
        """Seed-group statistics per LC × model (the cluster fields of ``summary.COUNT_FIELDS``), part by part.

        Each part's cases are grouped by seed (a seed group never spans two parts, ``run_streaming`` refuses
        that), so the additive statistics of the parts sum to the run's; memory holds one part at a time.
        """
        if "groups" not in self._memo:
            fields = [*CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL]
            totals: dict[tuple[str, str], np.ndarray] = {}
            for fragment in self._fragments():
                frame = fragment.to_table(columns=GROUP_COLUMNS).to_pandas()
                if frame.empty:
                    continue
                failed = (~frame["passed"].astype(bool)).astype(np.int64)
                expansion = (frame["kind"] != "seed").astype(np.int64)
                frame = frame.assign(m=1, y=failed, me=expansion, ye=failed * expansion)
                per_group = frame.groupby(["lc_id", "model", "seed_id"], sort=False)[["m", "y", "me", "ye"]].sum()
                stats = pd.DataFrame({
                    "n_groups_expansions": (per_group["me"] > 0).astype(np.int64), "sum_sq_fail_expansions":
                    per_group["ye"] ** 2, "sum_sq_cases_expansions": per_group["me"] ** 2,
                    "sum_fail_cases_expansions": per_group["ye"] * per_group["me"], "n_groups": 1,
                    "sum_sq_fail": per_group["y"] ** 2, "sum_sq_cases": per_group["m"] ** 2,
                    "sum_fail_cases": per_group["y"] * per_group["m"]}, index=per_group.index)
                for (lc, model), row in stats.groupby(level=["lc_id", "model"], sort=False)[fields].sum().iterrows():
                    key = (str(lc), str(model))
                    totals[key] = totals.get(key, 0) + row.to_numpy(dtype=np.int64)
            self._memo["groups"] = pd.DataFrame([(lc, m, *values) for (lc, m), values in totals.items()],
                                                columns=["lc_id", "model", *fields])
        return self._memo["groups"]

    def cluster_counts(self, filters: RowFilter = RowFilter(), by_model: bool = False) -> pd.DataFrame:
        """Cases, failures and seed-group statistics of the rows inside ``filters`` (every outcome counts).

        One row per LC × test type (× model when ``by_model``): ``n``, ``n_fail`` and the additive
        ``CLUSTER_STAT_FIELDS`` of ``clustered_interval``. A cluster is a seed group of one LC — a seed and its
        expansions, every selected model's outcome on them (one model's only when ``by_model``) — the unit of
        ``explore.group_rates``. Groups never span parts, so each part's sums are added (one part in memory);
        the result has a row per LC × test type (× model), however many cases.
        """
        scope = RowFilter(lcs=filters.lcs, models=filters.models, test_types=filters.test_types, kinds=filters.kinds)
        memo_key = f"clusters:{scope}:{by_model}"
        if memo_key not in self._memo:
            keys = ["lc_id", "test_type", *(["model"] if by_model else [])]
            fields = ["n", "n_fail", *CLUSTER_FIELDS_ALL]
            totals: dict[tuple[str, ...], np.ndarray] = {}
            for fragment in self._fragments():
                frame = fragment.to_table(columns=[*keys, "seed_id", "passed"], filter=scope.expression()).to_pandas()
                if frame.empty:
                    continue
                frame = frame.assign(m=1, y=(~frame["passed"].astype(bool)).astype(np.int64))
                per_group = frame.groupby([*keys, "seed_id"], sort=False, observed=True)[["m", "y"]].sum()
                stats = pd.DataFrame({"n": per_group["m"], "n_fail": per_group["y"], "n_groups": 1,
                                      "sum_sq_fail": per_group["y"] ** 2, "sum_sq_cases": per_group["m"] ** 2,
                                      "sum_fail_cases": per_group["y"] * per_group["m"]}, index=per_group.index)
                for key, row in stats.groupby(level=keys, sort=False)[fields].sum().iterrows():
                    key = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))
                    totals[key] = totals.get(key, 0) + row.to_numpy(dtype=np.int64)
            self._memo[memo_key] = pd.DataFrame([(*key, *values) for key, values in totals.items()],
                                                columns=[*keys, *fields])
        return self._memo[memo_key]

    def summary(self) -> pd.DataFrame:
        """Per LC × model summary (RunResult.summary's columns): summary.csv of a finished run, else aggregated."""
        path = self.folder / "summary.csv"
        if self.done and path.is_file() and path.stat().st_size:
            return read_csv(path)
        cube = self.cube()
        if cube.empty:
            return pd.DataFrame(columns=SUMMARY_COLUMNS)

        pairs = self.pair_counts().set_index(["lc_id", "model"])
        groups = self.group_counts().set_index(["lc_id", "model"])
        fields = [*CLUSTER_FIELDS_EXPANSIONS, *CLUSTER_FIELDS_ALL]
        counts = []
        for (lc, capability, test_type, model), group in cube.groupby(["lc_id", "capability", "test_type", "model"],
                                                                      sort=False):
            seed = group[group["kind"] == "seed"]
            exp = group[group["kind"] != "seed"]
            p2f, f2p = (pairs.loc[(lc, model)] if (lc, model) in pairs.index else (0, 0))
            clusters = groups.loc[(lc, model), fields] if (lc, model) in groups.index else dict.fromkeys(fields, 0)
            counts.append({"lc_id": lc, "capability": capability, "test_type": test_type, "model": model,
                           "n_seeds": int(seed["n"].sum()), "n_fail_seeds": int(seed["n_fail"].sum()),
                           "n_expansions": int(exp["n"].sum()), "n_fail_expansions": int(exp["n_fail"].sum()),
                           "n_pass_to_fail": int(p2f), "n_fail_to_pass": int(f2p),
                           **{name: int(clusters[name]) for name in fields}})
        return summary_frame(counts)

    # ------------------------------------------------------------------ rows
    def page(self, filters: RowFilter = RowFilter(), offset: int = 0, limit: int = 100,
             columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Rows ``offset .. offset + limit`` of the filtered rows in storage order (shard by shard).

        Adds ``failed``, ``confidence``, ``seed_text`` and ``pass_to_fail`` (looked up for the page's rows only).
        """
        if offset < 0 or limit < 0:
            raise AlictError(f"a page needs offset >= 0 and limit >= 0, got {offset} and {limit}")
        wanted = list(columns) if columns is not None else RESULT_COLUMNS
        needed = list(dict.fromkeys([*wanted, "case_id", "seed_id", "kind", "model", "passed", "probabilities"]))
        batches: list[pa.RecordBatch] = []
        first_part, position = self._leading_parts(filters, offset)
        taken = 0
        for batch in self._iter_rows(filters, needed, first_part):
            if taken >= limit:
                break
            end = position + len(batch)
            if end > offset:
                piece = batch.slice(max(0, offset - position), limit - taken)
                batches.append(piece)
                taken += len(piece)
            position = end
        if not batches:
            return pd.DataFrame(columns=[*needed, "failed", "confidence", "seed_text", "pass_to_fail"])
        frame = pa.Table.from_batches(batches).to_pandas()
        return self._decorate(frame)

    def _decorate(self, frame: pd.DataFrame) -> pd.DataFrame:
        self._check_probabilities(frame)
        frame["failed"] = ~frame["passed"].astype(bool)
        frame["confidence"] = [float(max(p)) if p is not None and len(p) else np.nan for p in frame["probabilities"]]
        seed_ids = sorted({s for s, k in zip(frame["seed_id"], frame["kind"], strict=True) if k != "seed" and s})
        seed_text: dict[str, str] = {}
        seed_passed: set[tuple[str, str]] = set()
        if seed_ids and self._dataset is not None:
            seeds = self._dataset.to_table(columns=["case_id", "model", "text", "passed"],
                                           filter=ds.field("case_id").isin(seed_ids) & (ds.field("kind") == "seed"))
            for case_id, model, text, passed in zip(*(seeds.column(c).to_pylist()
                                                      for c in ("case_id", "model", "text", "passed")), strict=True):
                seed_text[case_id] = text
                if passed:
                    seed_passed.add((case_id, model))
        frame["seed_text"] = [seed_text.get(s, "") if k != "seed" else "" for s, k in
                              zip(frame["seed_id"], frame["kind"], strict=True)]
        frame["pass_to_fail"] = [bool(f) and k != "seed" and (s, m) in seed_passed for f, k, s, m in
                                 zip(frame["failed"], frame["kind"], frame["seed_id"], frame["model"], strict=True)]
        return frame

    def _check_probabilities(self, frame: pd.DataFrame) -> None:
        """Every shown row holds its model's probabilities (a forged, re-hashed part is refused, as small runs are)."""
        for model, rows in frame.groupby("model", sort=False)["probabilities"]:
            width = len(self.labels(str(model))) or None
            try:
                matrix = np.array([list(p) for p in rows], dtype=np.float64)
            except (TypeError, ValueError):  # ragged or not numbers
                matrix = None
            if matrix is None or matrix.ndim != 2 or (width is not None and matrix.shape[1] != width) \
                    or not are_probability_rows(matrix):
                raise CorruptArtefactError(f"run {self.folder.name!r}: model {str(model)!r} has result rows that are "
                                           "not probabilities summing to 1; the run's results were changed after "
                                           "it was written; run it again")

    def labels(self, model: str) -> list[str]:
        """The label order of a model's probabilities (from meta.json or progress; [] when unknown)."""
        for m in self.meta.get("models", []):
            if m.get("name") == model:
                return list(m.get("labels") or [])
        return []

    def sample_failures(self, per_group: int = 3, max_groups: int = 200) -> pd.DataFrame:
        """Up to ``per_group`` failing rows per LC × model (the first found, shard by shard), bounded in total."""
        taken: dict[tuple[str, str], int] = {}
        pieces = []
        columns = ["case_id", "lc_id", "capability", "test_type", "kind", "seed_id", "text", "expected", "model",
                   "predicted", "probabilities", "passed"]
        for batch in self._iter_rows(RowFilter(outcome="fails"), columns):
            frame = batch.to_pandas()
            keep = []
            for i, key in enumerate(zip(frame["lc_id"], frame["model"], strict=True)):
                if taken.get(key, 0) < per_group and (key in taken or len(taken) < max_groups):
                    taken[key] = taken.get(key, 0) + 1
                    keep.append(i)
            if keep:
                pieces.append(frame.iloc[keep])
            if self._all_groups_full(taken, per_group):
                break
        if not pieces:
            return pd.DataFrame(columns=[*columns, "failed", "confidence", "seed_text", "pass_to_fail"])
        return self._decorate(pd.concat(pieces, ignore_index=True))

    def _all_groups_full(self, taken: dict[tuple[str, str], int], per_group: int) -> bool:
        cube = self.cube()
        failing = cube[cube["n_fail"] > 0][["lc_id", "model"]].drop_duplicates()
        return all(taken.get((lc, m), 0) >= per_group for lc, m in zip(failing["lc_id"], failing["model"],
                                                                           strict=True))

    # ------------------------------------------------------------------ scanning
    def _fragments(self) -> Iterator[ds.Fragment]:
        if self._dataset is not None:
            yield from self._dataset.get_fragments()

    def _leading_parts(self, filters: RowFilter, offset: int) -> tuple[int, int]:
        """(parts, rows): the leading parts whose filtered rows all come before ``offset`` and their row count."""
        if filters.pass_to_fail or offset <= 0:
            return 0, 0
        expression, position = filters.expression(), 0
        for n, fragment in enumerate(self._fragments()):
            rows = fragment.count_rows(filter=expression) if expression is not None else fragment.count_rows()
            if position + rows > offset:
                return n, position
            position += rows
        return len(self.files), position

    def _iter_rows(self, filters: RowFilter, columns: Sequence[str], first_part: int = 0
                   ) -> Iterator[pa.RecordBatch]:
        """Record batches of the filtered rows from part ``first_part`` on, in storage order; pass-to-fail rows
        are joined part by part."""
        if self._dataset is None:
            return
        expression = filters.expression()
        if not filters.pass_to_fail:
            for fragment in list(self._fragments())[first_part:]:
                for batch in fragment.to_batches(columns=list(columns), filter=expression, batch_size=65_536):
                    if len(batch):
                        yield batch
            return
        needed = list(dict.fromkeys([*columns, "case_id", "seed_id", "model"]))
        for fragment in self._fragments():
            rows = fragment.to_table(columns=needed, filter=expression)
            if not len(rows):
                continue
            seeds = fragment.to_table(columns=["case_id", "model"],
                                      filter=(ds.field("kind") == "seed") & (ds.field("passed") == True))  # noqa: E712
            keys = pa.table({"seed_id": rows.column("seed_id"), "model": rows.column("model"),
                             "row": pa.array(np.arange(len(rows), dtype=np.int64))})
            matched = keys.join(seeds.rename_columns(["seed_id", "model"]), keys=["seed_id", "model"],
                                join_type="left semi")
            order = np.sort(matched.column("row").to_numpy())  # storage order, whatever order the join returns
            yield from rows.take(pa.array(order)).select(list(columns)).to_batches()
