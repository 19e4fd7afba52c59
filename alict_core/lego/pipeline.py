"""NLPLego end to end: seeds → disassembly → derivation trees → DIR cases, saved as plain JSONL.

Artefact folder (default ``<cache>/lego/<key>``, the key hashing the seeds, the settings and the
fingerprints of the parser, masked LM and judge): ``trees.jsonl`` (one derivation tree per seed,
every node with its parent), ``cases.jsonl`` (the runner's test cases: ``run --suite cases.jsonl``)
and ``meta.json`` (counts and settings). Seeds are processed in bounded batches.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import iter_jsonl, read_json, write_json, write_jsonl
from alict_core.common.manifest import LEGO_FORMAT, check_lego_folder
from alict_core.data.splits import corpus_rows
from alict_core.lego.assemble import Assembler, DerivationTree
from alict_core.lego.disassemble import disassemble_many, get_dependency_nlp, is_sentence
from alict_core.lego.oracles import tree_cases
from alict_core.lego.settings import LegoSettings
from alict_core.suites.schema import check_id_value
from alict_core.tasks import TASKS, task_list

log = logging.getLogger(__name__)

BATCH = 32


@dataclass(frozen=True)
class LegoSeed:
    id: str
    text: str


@dataclass
class LegoResult:
    trees: list[DerivationTree]
    cases: list[TestCase]
    folder: Path | None = None

    def counts(self) -> dict[str, int]:
        return {
            "trees": len(self.trees),
            "nodes": sum(len(t.nodes) for t in self.trees),
            "generated": sum(len(t.nodes) - 1 for t in self.trees),
            "dir_tests": len(self.cases),
        }


def _json_object(line: str) -> bool:
    """Whether ``line`` is a JSON object (a row of JSON lines, not a sentence)."""
    import json

    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def seeds_from_file(path: str | Path, task: str | None = None) -> list[LegoSeed]:
    """Seeds from a JSONL file (``text`` and optional ``id`` per row) or a text file (one sentence a line). A
    row that names its ``task`` (as `seeds --out` writes) must name ``task``: another task's seeds are refused."""
    from alict_core.common.limits import LimitError, check_text
    from alict_core.common.userfiles import iter_lines, jsonl_rows

    what = "--seeds file"
    seeds: list[LegoSeed] = []
    first_at: dict[str, tuple[str, str]] = {}  # seed id → (where, text) of its first row
    try:
        suffix = Path(path).suffix.lower()
        if suffix == ".json":  # one JSON document: its lines are no sentences (they became seeds of "{", "}")
            raise AlictError(f"{what} {Path(path).name!r}: give JSON lines (.jsonl, one row a line) or a text file "
                             "(one sentence a line), not a .json document")
        if suffix in (".csv", ".tsv", ".tab", ".parquet"):  # its raw lines, header too, were seeds (pass 39)
            raise AlictError(f"{what} {Path(path).name!r}: a table is no list of sentences; give JSON lines (.jsonl "
                             "with 'text', e.g. the cases.jsonl of `report --export`) or a text file (one sentence "
                             "a line)")
        if suffix in (".jsonl", ".ndjson"):  # SEEDS.JSONL too: read as one sentence a line, each raw row a seed
            for n, (where, row) in enumerate(jsonl_rows(path, what, max_rows="max_seeds")):
                seed_id = row.get("id")
                if seed_id is not None and (not isinstance(seed_id, (str, int)) or isinstance(seed_id, bool)):
                    raise AlictError(f"{where}: field 'id' must be text or a whole number, "
                                     f"got {type(seed_id).__name__}")
                text = check_text(row.get("text"), f"{where}: field 'text'")
                row_task = row.get("task")
                if task is not None and row_task is not None and row_task != task:
                    raise AlictError(f"{where}: the seed is of task {row_task!r}, not {task!r}; give seeds of "
                                     f"task {task!r} (or run lego --task {row_task})")
                if seed_id is not None:  # it becomes the id of its cases: checked as a case id is (a control
                    try:  # character in it made lego's own cases.jsonl refused by `run --suite`)
                        check_id_value(str(seed_id))
                    except ValueError as exc:
                        raise AlictError(f"{where}: field 'id' {exc}") from None
                seed = LegoSeed(str(seed_id if seed_id is not None else f"seed-{n}"), text)
                first = first_at.setdefault(seed.id, (where, text))
                if first[1] != text:  # was dropped without a word (``dedupe`` keeps one seed per id)
                    raise AlictError(f"{where}: seed id {seed.id!r} again, with another text (first at {first[0]}); "
                                     "give each seed its own id")
                seeds.append(seed)
            return dedupe(seeds)
        for n, line in iter_lines(path, what):
            if line.strip().startswith("{") and _json_object(line):  # JSON lines under another name (pass 40)
                raise AlictError(f"{Path(path).name}:{n}: a JSON row is no sentence; give JSON lines a .jsonl name "
                                 "(rows with 'text') or a text file of one sentence a line")
            if line.strip():
                seeds.append(LegoSeed(f"seed-{n - 1}", check_text(line.strip(), f"{Path(path).name}:{n}")))
    except LimitError as exc:
        raise AlictError(str(exc)) from None
    from alict_core.common.limits import check_count

    check_count("max_seeds", len(seeds), f"{what} {Path(path).name!r}: seed sentences")
    return dedupe(seeds)


def seeds_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[LegoSeed]:
    """Lego seeds of ALiCT seed rows (``alict_core.plan.lc_seeds``: an LC's seeds, the ones its expansions start
    from), handed in by the caller."""
    return dedupe(LegoSeed(str(r["id"]), str(r["text"])) for r in rows)


def seeds_from_corpus(task: str, n: int, *, seed: int = 0, split: str = "test",
                      records: Sequence[Any] | None = None) -> list[LegoSeed]:
    """``n`` random full sentences (a verbal root with a subject) from the task corpus's ``split``.

    ``records``: that split's texts (``.id``, ``.text``) in the corpus's order when the caller holds them already
    (the app's loaded annotated corpus: the same texts in the same order); by default the raw split is read."""
    if records is not None:
        records = list(records)
    elif task in TASKS:
        records = corpus_rows(task, (split,))
    else:
        raise AlictError(f"unknown task {task!r}; valid tasks: {task_list()}")
    if not 1 <= n <= len(records):  # refused before parsing anything (a huge N would parse the whole split)
        raise AlictError(f"--corpus-sample {n:,} is out of range [1, {len(records):,}] (the {split} split "
                         f"of the {task} corpus has {len(records):,} texts)")
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    nlp = get_dependency_nlp()
    chosen: list[LegoSeed] = []
    for start in range(0, len(order), 4 * n or 1):
        batch = [records[i] for i in order[start : start + 4 * n]]
        for record, doc in zip(batch, nlp.pipe(r.text for r in batch), strict=True):
            if is_sentence(doc) and len(doc) <= 40:
                chosen.append(LegoSeed(record.id, record.text))
        if len(chosen) >= n:
            break
    return chosen[:n]


def dedupe(seeds: Iterable[LegoSeed]) -> list[LegoSeed]:
    """One seed per text and per id (the first); a text given again under another id is said (its id was dropped
    without a word)."""
    import logging

    out: dict[str, LegoSeed] = {}
    ids: set[str] = set()
    again: list[tuple[str, str]] = []  # (dropped id, kept id)
    for s in seeds:
        if s.text in out and out[s.text].id != s.id:
            again.append((s.id, out[s.text].id))
        if s.text.strip() and s.text not in out and s.id not in ids:
            out[s.text] = s
            ids.add(s.id)
    if again:
        dropped, kept = again[0]
        logging.getLogger("alict_core").warning(
            "%d seed(s) repeat the text of an earlier seed under another id: one tree per text (e.g. seed %r is "
            "seed %r's text)", len(again), dropped[:60], kept[:60])
    return list(out.values())


def generate_trees(
    seeds: Sequence[LegoSeed],
    settings: LegoSettings | None = None,
    *,
    parser: Any | None = None,
    suggester: Any | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[DerivationTree]:
    """Derivation trees of ``seeds`` (in batches of 32); ``parser``/``suggester`` optional (SBAR clauses, fills)."""
    from alict_core.data.annotate import get_nlp

    settings = settings or LegoSettings()
    assembler = Assembler(settings, suggester=suggester, tagger=get_nlp())
    max_adjuncts = min(settings.max_adjuncts, settings.max_nodes - 1)
    trees: list[DerivationTree] = []
    for start in range(0, len(seeds), BATCH):
        batch = seeds[start : start + BATCH]
        parts = disassemble_many([s.text for s in batch], parser=parser, max_adjuncts=max_adjuncts)
        trees.extend(assembler.build_many(parts, [s.id for s in batch]))
        if progress:
            progress(len(trees), len(seeds))
    return trees


def artefact_key(seeds: Sequence[LegoSeed], settings: LegoSettings, task: str, fingerprints: dict[str, str]) -> str:
    return hash_json(
        {
            "seeds": [[s.id, s.text] for s in seeds],
            "settings": settings.model_dump(),
            "task": task,
            "fingerprints": fingerprints,
            "format": 1,
        }
    )


SAVED_FILES = ("trees.jsonl", "cases.jsonl", "meta.json", "manifest.json")


def save(result: LegoResult, folder: Path, meta: dict[str, Any]) -> Path:
    """Write trees.jsonl, cases.jsonl, meta.json and their manifest into ``folder``, swapped in whole (old or new,
    never a mix); readers check the manifest (an edited cases.jsonl in the cache was run as it stood)."""
    from alict_core.common.manifest import atomic_dir, write_manifest

    with atomic_dir(Path(folder), owned=SAVED_FILES, kind="lego") as staging:
        write_jsonl(staging / "trees.jsonl", (t.to_dict() for t in result.trees))
        write_jsonl(staging / "cases.jsonl", (c.to_dict() for c in result.cases))
        write_json(staging / "meta.json", {**meta, **result.counts(), "format": LEGO_FORMAT})
        write_manifest(staging, "lego", Path(folder).name, len(result.cases))
    result.folder = folder
    return folder


def load(folder: str | Path) -> LegoResult:
    """A saved NLPLego artefact folder."""
    path = Path(folder)
    if not (path / "trees.jsonl").is_file():
        raise AlictError(f"{path} holds no NLPLego trees (trees.jsonl missing); run `python -m alict_core lego` first")
    check_lego_folder(path)
    trees = [DerivationTree.from_dict(row) for row in iter_jsonl(path / "trees.jsonl")]
    cases = (
        [TestCase.from_dict(row) for row in iter_jsonl(path / "cases.jsonl")]
        if (path / "cases.jsonl").is_file()
        else []
    )
    return LegoResult(trees, cases, path)


def read_meta(folder: str | Path) -> dict[str, Any]:
    return dict(read_json(Path(folder) / "meta.json"))


def make_cases(trees: Sequence[DerivationTree], task: str, judge: Any, settings: LegoSettings) -> list[TestCase]:
    return tree_cases(trees, task, judge, threshold=settings.threshold)


def saved_suites(task: str) -> list[dict[str, Any]]:
    """NLPLego artefacts of ``task`` under ``<cache>/lego`` (newest first): path of cases.jsonl and a label."""
    from alict_core.common.config import cache_dir

    found = []
    for meta_file in (cache_dir() / "lego").glob("*/meta.json"):  # a listing creates no folder (a page view did)
        if meta_file.parent.name.startswith("."):  # the staging folder of a save in progress (or killed)
            continue
        try:
            meta = read_json(meta_file)
            check_lego_folder(meta_file.parent)  # a tampered or cut entry is not offered (it was run as it stood)
        except (ValueError, OSError, AlictError) as exc:
            log.warning("NLPLego artefact %s left out: %s", meta_file.parent.name, exc)
            continue
        cases = meta_file.parent / "cases.jsonl"
        if meta.get("task") == task and cases.is_file():
            name = meta_file.parent.name[:8]
            label = f"NLPLego {name}: {meta.get('trees', 0)} trees, {meta.get('dir_tests', 0)} DIR tests"
            found.append({"path": str(cases), "label": label, "mtime": cases.stat().st_mtime})
    return sorted(found, key=lambda row: row["mtime"], reverse=True)
