"""Augmentation export: a run's generated cases per LC as train / validation / test data (JSONL, CSV, HF datasets)."""

from __future__ import annotations

import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from alict_core.common.csvsafe import write_csv
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json, write_json, write_jsonl
from alict_core.common.manifest import (
    check_output_dir,
    clean_stale,
    entry_is_owned,
    folder_lock,
    recover_dir,
    replace_dir,
    sha256_file,
    staging_dir,
)
from alict_core.common.repeats import distinct
from alict_core.harden.guards import LcReadiness, check_test_split, lc_readiness
from alict_core.harden.split import (
    SPLITS,
    SplitRatios,
    case_sources,
    split_cases,
    text_key,
    training_label,
    training_labels,
)
from alict_core.runner.store import check_store_folder, run_folders
from alict_core.suites.schema import CaseRow


class ExportRow(CaseRow):
    """One row of an export split: a case (checked as the suite importers check one) with its training label(s)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    split: Literal["train", "validation", "test"] | None = None
    label: StrictStr | None = None
    allowed_labels: list[StrictStr] = []
    source_ids: list[StrictStr] = []


class ExportRecord(BaseModel):
    """The fields of ``export.json`` that training and evaluation read, in the types ``harden export`` writes
    (strict: no number read from a bool or a text)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    run_id: StrictStr = Field(pattern=r"^[0-9a-f]{8,64}$")
    run_dir: StrictStr | None = None
    lcs: list[StrictStr] = Field(min_length=1)
    data_hash: StrictStr = Field(min_length=1, max_length=128)
    counts: dict[StrictStr, dict[StrictStr, StrictInt]]
    files: dict[StrictStr, StrictStr] | None = None  # sha256 of each split's JSONL (exports since pass 11)


RUN_ID = re.compile(r"^[0-9a-f]{8,64}$")
FORMATS = ("jsonl", "csv", "hf")
GROUPING = "seed+source+text, corpus-test sources to test"  # how export_rows keeps groups whole
RUN_STORES = ("runs",)  # the run store the CLI and the app share


def list_runs() -> list[dict[str, Any]]:
    """Saved runs (newest first): id, folder, models and LCs, from each run's ``meta.json`` and ``summary.csv``."""
    from alict_core.common.config import cache_dir

    out = []
    for store in RUN_STORES:  # a listing creates no store (a Harden page view made <cache>/runs)
        for folder in run_folders(cache_dir() / store):
            meta_path = folder / "meta.json"
            try:
                meta = read_json(meta_path)
                models = [m["name"] for m in meta["models"]]
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not a finished run
            out.append({"id": folder.name, "run_id": meta.get("run_id"), "folder": folder,
                        "models": models, "modified": meta_path.stat().st_mtime})
    return sorted(out, key=lambda r: r["modified"], reverse=True)


def resolve_run(ref: str | Path) -> Path:
    """A saved run folder from a run id (looked up in the run stores) or a folder path given on the command line."""
    from alict_core.common.config import artefact_dir

    text = str(ref)
    if RUN_ID.match(text):
        for store in RUN_STORES:
            folder = artefact_dir(store) / text
            if (folder / "meta.json").is_file():
                check_store_folder(folder, text)  # a copied or renamed folder holds another run: said
                return folder
    path = Path(text).expanduser()
    if path.is_dir() and (path / "meta.json").is_file():
        return path
    unfinished = [folder for folder in ([artefact_dir(store) / text for store in RUN_STORES] if RUN_ID.match(text)
                                        else []) + [path] if (folder / "progress.json").is_file()]
    if unfinished:  # it was "not found", though it is in the store
        raise AlictError(f"run {text!r} was interrupted before it finished (no meta.json yet); run the `run` command "
                         "that made it again to resume it (finished shards are kept), then export it")
    raise AlictError(f"run {text!r} not found: give a run id from the runs store or a run folder "
                     "written by `run --out` (one holding meta.json)")


@dataclass
class ExportSummary:
    """What an export wrote: rows per split and LC, and why cases were left out of training."""

    out_dir: Path
    run_id: str
    lcs: list[str]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> lc -> rows
    untrainable: dict[str, int] = field(default_factory=dict)  # lc -> cases with no label to train towards
    data_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"out_dir": str(self.out_dir), "run_id": self.run_id, "lcs": self.lcs, "counts": self.counts,
                "untrainable": self.untrainable, "data_hash": self.data_hash}


def run_rows(run_dir: Path, lcs: Sequence[str] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """(run id, one dict per case of the chosen LCs with ``failed_by`` = {model: failed}) from a saved run; cases
    rejected in review (a confirmed write-back) are left out."""
    run_id, rows, chosen = run_rows_and_chosen(run_dir, lcs)
    return run_id, [row for row in rows if row["lc_id"] in chosen]


def run_rows_and_chosen(run_dir: Path, lcs: Sequence[str] | None = None) -> tuple[str, list[dict[str, Any]], set[str]]:
    """(run id, the rows of every LC of the run, the LC ids ``lcs`` names: all when None)."""
    from alict_core.runner.run import RunResult

    result = RunResult.load(run_dir)
    known = list(dict.fromkeys(c.lc_id for c in result.case_list))
    if lcs:  # `lc5,lc05` names one LC twice: said, not merged
        distinct(list(lcs), "--lcs", key=lambda lc: _match_lc(lc, known))
    chosen = set(known) if not lcs else {_match_lc(lc, known) for lc in lcs}
    from alict_core.review.writeback import RejectionFilter

    rejected = RejectionFilter()  # a run from before a confirmed write-back holds cases reviewers rejected since
    rows: list[dict[str, Any]] = []
    left_out: dict[str, int] = {}  # chosen LC -> its cases rejected in review
    for i, case in enumerate(result.case_list):
        if rejected(case):  # never trained on (the evaluation leaves them out too)
            if case.lc_id in chosen:
                left_out[case.lc_id] = left_out.get(case.lc_id, 0) + 1
            continue
        row = case.to_dict()
        row["failed_by"] = {o.name: bool(not o.passed[i]) for o in result.outcomes}
        rows.append(row)
    if left_out:
        _say_rejected(result.run_id, left_out, {row["lc_id"] for row in rows})
    return result.run_id, rows, chosen


def _say_rejected(run_id: str, left_out: Mapping[str, int], kept_lcs: set[str]) -> None:
    """Warn of the cases rejected in review left out, naming each chosen LC left with none (it was dropped from
    the export without a word)."""
    import logging

    log = logging.getLogger(__name__)
    log.warning("run %s: %d case(s) rejected in review left out of the export", run_id, sum(left_out.values()))
    emptied = sorted(lc for lc in left_out if lc not in kept_lcs)
    if emptied:
        log.warning("run %s: every case of %s was rejected in review: %s not in the export (revoke the write-back "
                    "with `review writeback --revoke`, or correct the LC and run it again)", run_id,
                    ", ".join(emptied), "it is" if len(emptied) == 1 else "they are")


def _match_lc(given: str, known: Sequence[str]) -> str:
    from alict_core.common.errors import SpecError
    from alict_core.lcspec.lcids import run_lc_id

    try:
        return run_lc_id(given, known)
    except SpecError as exc:
        raise AlictError(str(exc)) from None


def corpus_test_membership(task: str | None) -> Callable[[Mapping[str, Any]], bool]:
    """A test: is this case built from a corpus test sentence, or equal to one? (always False without a task)"""
    if task is None:
        return lambda row: False
    from alict_core.data.splits import source_split_lookup

    split_of = source_split_lookup(task)
    test_texts = corpus_test_texts(task)
    return lambda row: (text_key(row["text"]) in test_texts
                        or any(split_of(s) == "test" for s in case_sources(row)))


_TEST_TEXTS: dict[tuple[str, str], frozenset[str]] = {}
_TEST_TEXTS_LOCK = threading.Lock()


def corpus_test_texts(task: str) -> frozenset[str]:
    """The text keys of the task's corpus test sentences, once per process and data folder: from the annotated
    corpus when it is on disk (the app holds it loaded anyway; same sentences), else from the raw splits (reading
    SST's trees takes seconds; the Harden page asked again for every run, model and split)."""
    from alict_core.common.config import data_dir
    from alict_core.data.corpus import is_annotated, load_corpus
    from alict_core.data.splits import task_splits

    key = (task, str(data_dir()))
    with _TEST_TEXTS_LOCK:
        if key not in _TEST_TEXTS:
            if is_annotated(task):
                texts = [item.text for item in load_corpus(task).items if item.split == "test"]
            else:
                texts = task_splits(task)["test"][0]
            _TEST_TEXTS[key] = frozenset(text_key(t) for t in texts)
        return _TEST_TEXTS[key]


def check_sources_recorded(rows: Sequence[Mapping[str, Any]], run_id: str) -> None:
    """Refuse a run whose generated seeds do not record their source sentences (made before they did)."""
    missing = sum(1 for r in rows if (r.get("meta") or {}).get("rule") and "source_ids" not in (r.get("meta") or {}))
    if missing:
        raise AlictError(f"run {run_id}: {missing} cases do not record the corpus sentences their seed was built "
                         "from (the run predates that), so a leak-free split cannot be made; run it again")


def export_rows(rows: list[dict[str, Any]], *, ratios: SplitRatios, seed: int,
                held_out: Callable[[Mapping[str, Any]], bool] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Split rows leak-free (:func:`split_cases`: by seed, source sentence and text; ``held_out`` rows always
    test) and add ``split`` and ``label`` (the training label, None if the case has none)."""
    parts = split_cases(rows, ratios=ratios, seed=seed, held_out=held_out)
    out: dict[str, list[dict[str, Any]]] = {}
    for split, items in parts.items():
        out[split] = []
        for row in sorted(items, key=lambda r: (r["lc_id"], r["seed_id"], r["case_id"])):
            out[split].append({**row, "split": split, "label": training_label(row["expected"]),
                               "allowed_labels": training_labels(row["expected"]),
                               "source_ids": case_sources(row)})
    return out


def export_hardening_data(run: str | Path, out_dir: str | Path, *, lcs: Sequence[str] | None = None,
                          ratios: SplitRatios | None = None, seed: int = 13,
                          formats: Sequence[str] = FORMATS, overwrite: bool = False,
                          min_test_cases: int | None = None) -> ExportSummary:
    """Write ``train/validation/test`` files for the run's cases of ``lcs``; the folder appears whole or not at all.

    ``min_test_cases``: refuse, before writing anything, when an LC's test split is under it (what training
    refuses, :mod:`alict_core.harden.guards`); None writes any split."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise AlictError(f"unknown export format(s) {unknown}; choose from {', '.join(FORMATS)}")
    if not formats:  # an export of no files would be "done" yet hold nothing to train on
        raise AlictError(f"no export format named; choose any of {', '.join(FORMATS)} (e.g. --formats jsonl,csv)")
    distinct(list(formats), "--formats")
    ratios = ratios or SplitRatios()
    out_dir = Path(out_dir).expanduser()
    check_output_dir(out_dir, "--out")  # a name too long for its staging sibling, a folder not writable: now
    if out_dir.exists() and not out_dir.is_dir():
        raise AlictError(f"--out {out_dir} is a file, not a folder")
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise AlictError(f"--out {out_dir} is not empty; pass --overwrite to replace it")
    _check_only_export_files(out_dir)
    run_dir = resolve_run(run)
    run_id, every, chosen = run_rows_and_chosen(run_dir, lcs)
    rows = [row for row in every if row["lc_id"] in chosen]
    if not rows:
        raise AlictError(f"run {run_id} has no cases for LCs {list(lcs or [])}")
    check_sources_recorded(rows, run_id)
    tasks = sorted({str(r["task"]) for r in rows if r.get("task")})
    if len(tasks) > 1:
        raise AlictError(f"run {run_id}: the chosen LCs belong to several tasks ({', '.join(tasks)}); export one")
    # the run's split of every LC, the chosen LCs' parts of it: an LC's test split does not change with the other
    # LCs chosen, so the Harden page's readiness table is the split trained (it split only the chosen LCs, and an
    # LC preselected with 11 test cases was then refused with 9; pass 37)
    parts = _parts_of(export_rows(every, ratios=ratios, seed=seed, held_out=_held_out(every)), chosen)
    summary = ExportSummary(out_dir, run_id, sorted({r["lc_id"] for r in rows}))
    for split, items in parts.items():
        for row in items:
            summary.counts.setdefault(split, {}).setdefault(row["lc_id"], 0)
            summary.counts[split][row["lc_id"]] += 1
            if not row["allowed_labels"]:
                summary.untrainable[row["lc_id"]] = summary.untrainable.get(row["lc_id"], 0) + 1
    if min_test_cases is not None:
        check_test_split(summary.counts, summary.lcs, min_test_cases)
    settings = {"run_id": run_id, "run_dir": str(run_dir.resolve()), "lcs": summary.lcs,
                "ratios": [ratios.train, ratios.validation, ratios.test], "seed": seed, "grouping": GROUPING}
    summary.data_hash = hash_json({"settings": settings, "rows": [[r["case_id"], r["split"]] for s in SPLITS
                                                                  for r in parts[s]]})
    try:  # a folder that cannot take a new folder (/proc, a read-only mount): named as --out, not as its staging
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(out_dir.parent)  # staging folders of exports killed before their swap
        staging = staging_dir(out_dir.parent, f".{out_dir.name}.tmp-")
    except OSError as exc:
        raise AlictError(f"--out {str(out_dir)!r} cannot be written: {exc.strerror or exc} in "
                         f"{str(out_dir.parent)!r}; choose another folder") from None
    try:
        _write(staging, parts, formats)
        write_json(staging / "export.json", {**settings, "data_hash": summary.data_hash, "counts": summary.counts,
                                             "untrainable": summary.untrainable, "formats": list(formats),
                                             "files": split_hashes(staging)})
        with folder_lock(out_dir):  # checked again at the swap, in turn: another export may have filled it since
            if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
                raise AlictError(f"--out {out_dir} is not empty (another export wrote it meanwhile); pass "
                                 "--overwrite to replace it")
            _check_only_export_files(out_dir)
            replace_dir(staging, out_dir)  # old or new export, never a mix (a kill between renames is recovered)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return summary


HF_SPLIT_FILES = tuple(f"{split}/{name}" for split in SPLITS  # what datasets' save_to_disk writes per split
                       for name in ("data-*.arrow", "dataset_info.json", "state.json", ".*.tmp"))
EXPORT_NAMES = ("export.json", "hf_dataset", *(f"{split}.{suffix}" for split in SPLITS for suffix in ("jsonl", "csv")))


def _check_only_export_files(out_dir: Path) -> None:
    """``--overwrite`` replaces an earlier export, never a folder holding anything else (``--out ~`` wiped it)."""
    if not out_dir.is_dir():
        return
    def ours(entry: Path) -> bool:  # a folder named train.jsonl (holding a user's files) was deleted as the export's
        if entry.name == "hf_dataset":  # the datasets library's own layout (a folder per split), nothing else
            return entry.is_dir() and not entry.is_symlink() and (entry / "dataset_dict.json").is_file() and all(
                entry_is_owned(inner, ("dataset_dict.json", *HF_SPLIT_FILES)) for inner in entry.iterdir())
        return entry_is_owned(entry, EXPORT_NAMES)

    foreign = sorted(p.name for p in out_dir.iterdir() if not ours(p))
    if foreign:
        raise AlictError(f"--out {out_dir} holds files that are not an export's ({', '.join(foreign[:3])}); "
                         "--overwrite replaces only an earlier export: choose a new or empty folder")


def _write(folder: Path, parts: dict[str, list[dict[str, Any]]], formats: Sequence[str]) -> None:
    import pandas as pd

    columns = ["case_id", "lc_id", "seed_id", "kind", "text", "label", "allowed_labels", "source_ids", "split",
               "test_type", "expected", "failed_by"]
    for split in SPLITS:
        items = parts.get(split, [])
        if "jsonl" in formats:
            write_jsonl(folder / f"{split}.jsonl", items)
        if "csv" in formats:
            frame = pd.DataFrame([{k: r.get(k) for k in columns} for r in items], columns=columns)
            frame["expected"] = frame["expected"].map(lambda e: e if e is None else expectation_text(e))
            frame["failed_by"] = frame["failed_by"].map(_failing_models)
            frame["allowed_labels"] = frame["allowed_labels"].map(lambda v: "|".join(v or []))
            frame["source_ids"] = frame["source_ids"].map(lambda v: "|".join(v or []))
            write_csv(folder / f"{split}.csv", frame)
    if "hf" in formats:
        try:
            import datasets
        except ImportError as exc:
            raise AlictError("the Hugging Face export needs the `datasets` package (pip install datasets), "
                             "or pass --formats jsonl,csv") from exc
        features = _hf_features(datasets)
        dataset = datasets.DatasetDict({
            split: datasets.Dataset.from_dict(
                {name: [_hf_value(r, name) for r in parts.get(split, [])] for name in features}, features=features)
            for split in SPLITS
        })  # from_dict, not from_list: an empty split keeps its columns
        # one shard per split even when a split is empty (zero shards would not load again)
        dataset.save_to_disk(str(folder / "hf_dataset"), num_shards={split: 1 for split in SPLITS})


def _failing_models(failed_by: dict[str, bool] | None) -> str:
    return ";".join(m for m, failed in sorted((failed_by or {}).items()) if failed)


def expectation_text(expected: dict[str, Any]) -> str:
    """A readable one-line form of an expectation for CSV ('label=positive', 'one_of=positive|neutral')."""
    labels = "|".join(expected.get("labels") or [])
    return f"{expected.get('kind')}={labels}" if labels else str(expected.get("kind"))


def _hf_value(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if isinstance(value, list):
        return "|".join(str(v) for v in value)
    return "" if value is None else str(value)


def _hf_features(datasets: Any) -> Any:
    return datasets.Features({name: datasets.Value("string")
                              for name in ("case_id", "lc_id", "seed_id", "kind", "text", "label", "allowed_labels",
                                           "source_ids")})


def split_hashes(folder: Path) -> dict[str, str]:
    """``{<split>.jsonl: sha256}`` of the split files training and evaluation read (recorded in export.json)."""
    return {f"{split}.jsonl": sha256_file(folder / f"{split}.jsonl") for split in SPLITS
            if (folder / f"{split}.jsonl").is_file()}


def read_split(export_dir: str | Path, split: str) -> list[dict[str, Any]]:
    """Rows of one split of an export written by :func:`export_hardening_data`; the file must match the hash
    ``export.json`` records for it (exports written before the hashes were recorded: only their rows are checked)."""
    folder = Path(export_dir)
    recover_dir(folder)  # a swap interrupted between its two renames
    if not (folder / "export.json").is_file():
        raise AlictError(f"{folder} is not a hardening export (no export.json); run `harden export` first")
    path = folder / f"{split}.jsonl"
    if not path.is_file():
        raise AlictError(f"{folder} has no {split}.jsonl (was it exported without the jsonl format?)")
    recorded = export_settings(folder).get("files")
    if recorded is not None:
        try:
            actual = sha256_file(path)
        except OSError as exc:
            raise AlictError(f"{path} cannot be read ({exc.strerror or exc})") from None
        if recorded.get(path.name) != actual:
            raise AlictError(f"{path}: the file does not match the hash recorded in export.json (it was edited or "
                             "damaged since `harden export` wrote it); export the run again")
    from alict_core.common.userfiles import jsonl_rows

    # an export folder is handed in by the user (and may be edited by hand): the strict-input path (UTF-8, size,
    # nesting, rows), and every row as the suite importers check a case (texts within the text limit ...)
    return [checked_export_row(where, row)
            for where, row in jsonl_rows(path, f"export split {split}.jsonl", error=AlictError)]


def checked_export_row(where: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` of a split when it is a case as ``harden export`` writes it: the fields of a cases JSONL row
    (``suites.schema.CaseRow``: text and variants non-empty, without NUL, within ``text_chars``; strict types)
    plus the training label(s); else one error naming ``file:line``, the field and the limit or type."""
    from pydantic import ValidationError

    from alict_core.cases.testcases import check_expected
    from alict_core.common.schemaerrors import first_problem

    try:
        ExportRow.model_validate(row)
        check_expected(row["expected"], f"{where}: field 'expected'")  # a typed expectation, as a run reads it
    except ValidationError as exc:
        raise AlictError(f"{where}: {first_problem(exc)}; a hand-edited export must keep the form `harden "
                         "export` writes (or export the run again)") from None
    except AlictError as exc:
        raise AlictError(f"{exc}; a hand-edited export must keep the form `harden export` writes (or export the "
                         "run again)") from None
    return row


def export_settings(export_dir: str | Path) -> dict[str, Any]:
    from pydantic import ValidationError

    from alict_core.common.schemaerrors import first_problem
    from alict_core.common.userfiles import parse_json, read_text

    folder = Path(export_dir)
    recover_dir(folder)  # a swap interrupted between its two renames
    if not folder.is_dir():
        raise AlictError(f"hardening export {str(folder)!r} is not a folder: give the --out folder of `harden export`")
    path = folder / "export.json"
    if not path.exists() and not path.is_symlink():
        raise AlictError(f"{folder} is not a hardening export (no export.json); run `harden export` first")
    settings = parse_json(read_text(path, "export settings", error=AlictError), path.name, error=AlictError)
    if not isinstance(settings, dict):
        raise AlictError(f"{path}: expected a JSON object written by `harden export`")
    try:  # a hand-edited export.json: one message before any model is loaded, never a TypeError mid-training
        ExportRecord.model_validate(settings)
    except ValidationError as exc:
        raise AlictError(f"{path}: {first_problem(exc)}; a hand-edited export.json must keep the form `harden "
                         "export` writes (or export the run again)") from None
    return settings


def check_export_test_split(export_dir: str | Path, minimum: int | None = None) -> None:
    """:func:`check_test_split` on an export's recorded counts (``export.json``), before any training."""
    exported = export_settings(export_dir)
    counts = exported.get("counts")
    if not isinstance(counts, Mapping):
        raise AlictError(f"{export_dir}: export.json records no counts per split; export again")
    check_test_split(counts, [str(lc) for lc in exported.get("lcs") or []], minimum)


def _held_out(rows: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], bool] | None:
    """The corpus test membership of the run's task (None for a run of several tasks)."""
    tasks = sorted({str(r["task"]) for r in rows if r.get("task")})
    return corpus_test_membership(tasks[0] if len(tasks) == 1 else None)


def _parts_of(parts: dict[str, list[dict[str, Any]]], lcs: set[str]) -> dict[str, list[dict[str, Any]]]:
    return {split: [row for row in items if row["lc_id"] in lcs] for split, items in parts.items()}


def run_readiness(run: str | Path, model: str, *, ratios: SplitRatios | None = None, seed: int = 13,
                  min_test_cases: int | None = None, min_fail_rate: float | None = None) -> list[LcReadiness]:
    """:func:`lc_readiness` of every LC of a saved run, split as ``harden export`` splits them (the run's split of
    every LC, whichever LCs are chosen)."""
    _, rows = run_rows(resolve_run(run))
    if not rows:
        return []
    parts = export_rows(rows, ratios=ratios or SplitRatios(), seed=seed, held_out=_held_out(rows))
    return lc_readiness(rows, model, parts, min_test_cases=min_test_cases, min_fail_rate=min_fail_rate)
