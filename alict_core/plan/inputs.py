"""The plan's inputs: seeds of the selected LCs (found in the corpus or read from ``--seeds`` files) and the rows
of ``--expansions`` files, each bad row refused naming its option, file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from alict_core.common.errors import AlictError

SeedFinder = Callable[[Any, "int | str | None", set[str]], list[Any]]  # (spec, cap, wanted seed ids) → seeds


def selected_specs(task: str, lcs: Iterable[str] | None) -> dict[str, Any]:
    """LC id → spec of the task's LCs, only those of ``lcs`` when given (``sentiment-lc04``, ``LC4``, ``lc04``
    or ``4`` name one LC)."""
    from alict_core.lcspec import get_spec, load_task_specs

    specs = {s.id: s for s in load_task_specs(task)}
    if lcs:
        chosen = {get_spec(task, lc).id for lc in lcs}
        specs = {k: v for k, v in specs.items() if k in chosen}
    return specs


def wanted_seeds(expansions: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """LC → the seed ids its accepted expansions hang on (those seeds are kept whatever the seed cap)."""
    wanted: dict[str, set[str]] = {}
    for row in expansions:
        if row.get("accepted", True) and "lc_id" in row:
            wanted.setdefault(row["lc_id"], set()).add(str(row.get("seed_id")))
    return wanted


def corpus_seed_finder(task: str) -> SeedFinder:
    """Seeds searched in the task's corpus (the CLI's road): the capped search, plus the ``wanted`` seeds it
    missed, looked up with the spec's own cap (``expand`` draws its seeds so; never all candidates: cross
    products reach 10^7)."""
    from alict_core.data.corpus import load_corpus
    from alict_core.seeds import find_seeds

    corpus = load_corpus(task)

    def find(spec: Any, max_seeds: int | str | None, wanted: set[str]) -> list[Any]:
        seed_set = find_seeds(spec, corpus, max_seeds=max_seeds if max_seeds is not None else "spec")
        rows = [s.to_dict() for s in seed_set.seeds]
        missing = wanted - {s.id for s in seed_set.seeds}
        if missing:
            rows.extend(s.to_dict() for s in find_seeds(spec, corpus).seeds if s.id in missing)
        return rows

    return find


def file_seeds(task: str, specs: Mapping[str, Any], seed_files: Iterable[str], max_seeds: int | None,
               wanted: Mapping[str, set[str]]) -> list[dict[str, Any]]:
    """The rows of ``--seeds`` files of the ``specs`` LCs, at most ``max_seeds`` per LC (``wanted`` ids kept)."""
    from alict_core.lcspec import load_task_specs

    of_task = {s.id for s in load_task_specs(task)}
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}  # seed id -> the file it was first read from
    from alict_core.common.manifest import not_a_file

    for file in seed_files:
        problem = not_a_file(Path(file))
        if problem is not None:  # a FIFO "not found" though it is there: say what it is
            raise AlictError(f"--seeds file {file} {'not found' if problem == 'is missing' else problem}")
        read = seed_file_rows(Path(file), task, of_task)
        _check_unique_ids(read, file, seen)
        _check_lc_fields(read, file, specs)
        rows.extend(r for r in read if r["lc_id"] in specs)
        other = sorted({str(r["lc_id"]) for r in read if r["lc_id"] not in specs})
        left = sum(1 for r in read if r["lc_id"] not in specs)
        if read and left == len(read):  # else "no test cases ... give --seeds" though --seeds was given
            raise AlictError(f"--seeds {file}: none of its {len(read):,} row(s) belongs to the chosen LCs (they are "
                             f"of {', '.join(other[:5])}); choose those LCs with --lc, or drop --lc")
        if left:
            import logging

            logging.getLogger(__name__).warning("--seeds %s: %d of %d row(s) left out: they are of %s, not among "
                                                "the chosen LCs", file, left, len(read), ", ".join(other[:5]))
    if max_seeds is None:
        return rows
    per_lc: dict[str, int] = {}
    kept = []
    for r in rows:
        per_lc[r["lc_id"]] = per_lc.get(r["lc_id"], 0) + 1
        if per_lc[r["lc_id"]] <= max_seeds or r.get("id") in wanted.get(r["lc_id"], set()):
            kept.append(r)
    return kept


def _check_lc_fields(rows: Iterable[Mapping[str, Any]], file: str, specs: Mapping[str, Any]) -> None:
    """A seed's test type and capability are its LC's: one INV row made the summary call a whole MFT LC INV, and a
    row's own capability renamed the LC in the summary and the exported suite (the report kept the spec's)."""
    for row in rows:
        spec = specs.get(row["lc_id"])
        if spec is None:
            continue
        if row["test_type"] != spec.test_type:
            raise AlictError(f"--seeds {file}: seed {row['id']!r:.60} has test_type {row['test_type']}, but "
                             f"{spec.id}'s tests are {spec.test_type}; a seed has its LC's test type")
        if row.get("capability") not in (None, spec.capability):
            raise AlictError(f"--seeds {file}: seed {row['id']!r:.60} names capability {row['capability']!r:.60}, "
                             f"but {spec.id} tests {spec.capability!r}; leave the field out (it is the LC's)")


def _check_unique_ids(rows: Iterable[Mapping[str, Any]], file: str, seen: dict[str, str]) -> None:
    """A seed id given twice (in one file or two) is refused: `run` refused it, `validate` counted both seeds."""
    for row in rows:
        if row["id"] in seen:
            raise AlictError(f"--seeds {file}: seed id {row['id']!r:.80} comes twice (first in {seen[row['id']]}): "
                             "every seed needs its own id")
        seen[row["id"]] = file


def describe_seeds(rows: Iterable[Any], specs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The seeds as dicts (``Seed`` objects, e.g. the app's cached search, through ``to_dict``), each with its LC's
    capability and description where it lacks them: one case shape whichever road found the seeds."""
    out = [row if isinstance(row, dict) else row.to_dict() for row in rows]
    for row in out:
        row_spec = specs.get(row["lc_id"])
        if row_spec is not None:
            row.setdefault("capability", row_spec.capability)
            row.setdefault("description", row_spec.description)
    return out


def lc_seeds(task: str, lcs: list[str] | None, max_seeds: int | None, seed_files: list[str],
             wanted: dict[str, set[str]] | None = None) -> list[dict]:
    """Seed dicts (with capability and description from the specs) of the selected LCs.

    ``wanted`` (LC → seed ids referenced by expansions): such seeds are added even when the seed cap
    sampled other ones, so every accepted expansion has its seed.
    """
    specs = selected_specs(task, lcs)
    if seed_files:
        rows = file_seeds(task, specs, seed_files, max_seeds, wanted or {})
    else:
        find = corpus_seed_finder(task)
        rows = [row for spec in specs.values() for row in find(spec, max_seeds, (wanted or {}).get(spec.id, set()))]
    return describe_seeds(rows, specs)


def check_row_lc(option: str, where: str, row: dict, task: str, of_task: set[str]) -> None:
    """Refuse a user-file row whose ``lc_id`` is no LC of ``task`` (a typo, another task's LC, a number),
    naming the option, file and line: such rows were dropped without a word."""
    lc_id = row.get("lc_id")
    if not isinstance(lc_id, str) or lc_id not in of_task:
        raise AlictError(f"{option} {where}: lc_id {lc_id!r} is not an LC of task {task!r} (its LCs: "
                         f"{', '.join(sorted(of_task)[:3])}, …)")


def seed_file_rows(path: Path, task: str, of_task: set[str]) -> list[dict]:
    """The rows of a ``--seeds`` file; a row whose ``lc_id`` is not an LC of ``task`` (a typo, another task's LC,
    a number) is refused naming file and line: it was dropped without a word."""
    from alict_core.common.userfiles import InputFileError, jsonl_rows

    try:
        numbered = jsonl_rows(path, "--seeds")
    except InputFileError as exc:
        raise AlictError(f"--seeds {exc}") from None
    from alict_core.cases.testcases import CaseError, check_seed_row
    from alict_core.common.limits import limits

    for where, row in numbered:
        check_row_lc("--seeds", where, row, task, of_task)
        try:  # the fields every reader of seeds needs (`validate` took row["id"] unchecked: exit 3, KeyError)
            check_seed_row(row, where)
        except CaseError as exc:
            raise AlictError(f"--seeds {exc}") from None
        if len(row["text"]) > limits().text_chars:
            raise AlictError(f"--seeds {where}: the text has {len(row['text']):,} characters, over the limit of "
                             f"{limits().text_chars:,} (setting ALICT_LIMIT_TEXT_CHARS)")
        if row.get("task") not in (None, task):  # the case would be stored as of that task in a run of this one
            raise AlictError(f"--seeds {where}: the seed names task {row.get('task')!r}, not {task!r}")
        check_task_labels("--seeds", where, row["expected"], task)
    return [row for _, row in numbered]


def check_task_labels(option: str, where: str, expected: Mapping[str, Any], task: str) -> None:
    """Refuse an expectation naming a label the task does not have (`validate` accepted `["bogus"]`; `run` refused
    it only once the models were loaded)."""
    from alict_core.data.records import TASK_LABELS

    labels = expected.get("labels") if isinstance(expected, Mapping) else None
    unknown = [label for label in labels or [] if label not in TASK_LABELS[task]]
    if unknown:
        raise AlictError(f"{option} {where}: expected label {unknown[0]!r:.40} is not a label of task {task!r} "
                         f"({', '.join(TASK_LABELS[task])})")


def read_expansion_rows(given: Iterable[str], task: str | None, *, suite_lcs: bool = False) -> list[dict]:
    """Rows of the --expansions files (or folders of them); a bad line, or a row whose ``lc_id`` is no LC of
    ``task`` (another task's expansions: they were dropped without a word), is one error naming file and line.
    ``suite_lcs``: imported suites run beside, so an ``lc_id`` may also be a suite's group id (any name but an LC of
    another task); a row naming another task is refused all the same (``--suite`` turned both checks off)."""
    from alict_core.common.manifest import not_a_file
    from alict_core.common.userfiles import InputFileError, jsonl_rows
    from alict_core.lcspec import load_task_specs

    given = list(given)
    of_task = {s.id for s in load_task_specs(task)} if given and task else set()
    expansions: list[dict] = []
    first_seen: dict[tuple[str, str, str], str] = {}  # (LC, seed, text) of an accepted row -> where it was first read
    for item in given:
        path = Path(item)
        files = sorted(p for p in path.iterdir() if p.name.lower().endswith(".jsonl")) if path.is_dir() else [path]
        # any case: B.JSONL was left out of the folder without a word (read when given as a file)
        if not files:
            raise AlictError(f"--expansions {item}: " + ("a folder that holds no *.jsonl file" if path.is_dir()
                                                         else "no such JSONL file (or folder of them)"))
        for file in files:
            problem = not_a_file(file)
            if problem is not None:  # a FIFO was "no such JSONL file" though it is there: say what it is
                raise AlictError(f"--expansions {item}: " + ("no such JSONL file (or folder of them)"
                                                             if problem == "is missing" else problem))
        before = len(expansions)
        for file in files:
            try:
                numbered = jsonl_rows(file, "--expansions")
            except InputFileError as exc:
                raise AlictError(f"--expansions {exc}") from None
            for where, row in numbered:
                _check_expansion_file_row(where, row, task, of_task, suite_lcs)
                if row.get("accepted", True) is not False:  # a row that becomes a case: once only
                    key = (str(row.get("lc_id")), row["seed_id"].strip(), " ".join(row["text"].split()))
                    if key in first_seen:  # it was run and counted twice (fidelity: its accepted count doubled)
                        raise AlictError(f"--expansions {where}: the expansion {row['text']!r:.80} of seed "
                                         f"{key[1]!r:.60} comes twice (first at {first_seen[key]}): the same "
                                         "expansions were given twice (a file beside the folder it is in?); give "
                                         "each once")
                    first_seen[key] = str(where)
                expansions.append(row)
        if len(expansions) == before:  # a zero-byte copy was taken without a word (pass 37)
            import logging

            logging.getLogger(__name__).warning("--expansions %s holds no expansion rows: only the seeds are used",
                                                item)
    return expansions


def _check_expansion_file_row(where: Any, row: dict, task: str | None, of_task: set[str],
                              suite_lcs: bool = False) -> None:
    """One row of an --expansions file: its LC and task are ``task``'s, ``accepted`` a boolean, an accepted row
    names its seed and text, and every field has its type (variants as a text were one-letter variants)."""
    from alict_core.cases.testcases import CaseError, check_expansion_row
    from alict_core.tasks import TASKS

    lc_id = row.get("lc_id")
    if task and suite_lcs:  # a suite group id, or an LC of this task; never an LC of another task
        if not isinstance(lc_id, str) or not lc_id.strip() or any(
                lc_id.startswith(f"{other}-") for other in TASKS if other != task):
            raise AlictError(f"--expansions {where}: lc_id {lc_id!r:.60} is neither an LC of task {task!r} nor a "
                             "suite's test")
    if task and not suite_lcs:
        check_row_lc("--expansions", where, row, task, of_task)
    if task:
        if row.get("task") not in (None, task):  # counted as an expansion of this task (seeds refuse it)
            raise AlictError(f"--expansions {where}: the expansion names task {row.get('task')!r:.40}, not {task!r}")
    if row.get("kind") not in (None, "expansion"):  # a run's exported cases.jsonl: each seed became its own expansion
        raise AlictError(f"--expansions {where}: a case of kind {row.get('kind')!r:.20}, not an expansion row (a "
                         "run's exported cases.jsonl?); give the rows `expand --out` wrote, or the file as --suite")
    if not isinstance(row.get("accepted", True), bool):  # "no" was counted accepted by `fidelity`
        raise AlictError(f"--expansions {where}: accepted must be true or false, got {row.get('accepted')!r:.40}")
    if row.get("accepted", True) is not False:  # a row that becomes a case: its seed and its text
        if not isinstance(row.get("seed_id"), str) or not row["seed_id"].strip():
            raise AlictError(f"--expansions {where}: seed_id must be the id of its seed (a non-empty text), got "
                             f"{row.get('seed_id')!r:.80}")
        if not isinstance(row.get("text"), str) or not row["text"].strip():
            raise AlictError(f"--expansions {where}: text must be a non-empty text, got {row.get('text')!r:.80}")
        _check_insertions(where, row)
    try:
        check_expansion_row(row, str(where))
    except CaseError as exc:
        raise AlictError(f"--expansions {exc}") from None


def _check_insertions(where: str, row: Mapping[str, Any]) -> None:
    """``words`` (texts) and ``masked.mask_positions`` (token positions) of an accepted expansion row: of another
    shape they failed `validate`, `run` and `fidelity` with an internal error."""
    words, masked = row.get("words", []), row.get("masked", {})
    positions = masked.get("mask_positions", []) if isinstance(masked, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise AlictError(f"--expansions {where}: words must be a list of the inserted words (texts), got "
                         f"{words!r:.60}")
    size = len(str(row.get("text", "")).split())  # a position past the text turned the polarity check off
    if not isinstance(positions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < size for p in positions):
        raise AlictError(f"--expansions {where}: masked must be an object whose mask_positions are token positions "
                         f"of the text (whole numbers from 0 to {size - 1}), got {masked!r:.60}")


def check_expansions_used(expansions: Iterable[Mapping[str, Any]], seeds: Iterable[Mapping[str, Any]],
                          lc_ids: Iterable[str]) -> None:
    """Refuse ``--expansions`` whose accepted rows of the chosen LCs all hang on seeds that are not in this command
    (a wrong file, a run's cases part): they were left out without a word. Some rows left out: a warning."""
    import logging

    chosen = set(lc_ids)
    seeds, expansions = list(seeds), list(expansions)
    lc_of_seed = {str(seed.get("id")): str(seed.get("lc_id")) for seed in seeds}
    text_of_seed = {str(seed.get("id")): " ".join(str(seed.get("text")).split()) for seed in seeds}
    for row in expansions:  # `run` refuses it (build_cases); `validate` counted it under its seed's LC
        seed_lc = lc_of_seed.get(str(row.get("seed_id")))
        said, seed_text = row.get("seed_text"), text_of_seed.get(str(row.get("seed_id")), "")
        if isinstance(said, str) and seed_lc is not None and " ".join(said.split()) != seed_text:
            raise AlictError(f"--expansions: the expansion of seed {str(row.get('seed_id'))[:60]!r} was made from "
                             f"the text {said[:60]!r}, not that seed's text {seed_text[:60]!r} (expansions of other "
                             "seeds under the same id?); give the expansions of these seeds")
        if row.get("accepted", True) is True and seed_lc is not None and row.get("lc_id") != seed_lc:
            raise AlictError(f"--expansions: the expansion of seed {str(row.get('seed_id'))[:60]!r} names LC "
                             f"{str(row.get('lc_id'))[:40]!r}, but its seed is of {seed_lc}; an expansion keeps its "
                             "seed's LC")
    accepted = [r for r in expansions if r.get("accepted", True) is True]
    rows = [r for r in accepted if r.get("lc_id") in chosen]
    if accepted and not rows:  # e.g. LC5's expansions with --lc 4: ignored without a word (--seeds refused it)
        others = sorted({str(r.get("lc_id")) for r in accepted})
        raise AlictError(f"--expansions: none of the {len(accepted):,} accepted row(s) belongs to the chosen LCs "
                         f"(they are of {', '.join(o[:40] for o in others[:5])}); choose those LCs with --lc, or drop "
                         "--lc")
    if not rows:
        return
    seed_ids = set(lc_of_seed)
    left = [r for r in rows if str(r.get("seed_id")) not in seed_ids]
    if len(left) == len(rows):
        raise AlictError(f"--expansions: none of the {len(rows):,} accepted row(s) of the chosen LCs hangs on a seed "
                         f"of this command (e.g. seed_id {str(left[0].get('seed_id'))[:60]!r} of "
                         f"{left[0].get('lc_id')}); nothing of the file(s) would be used: give the expansions of "
                         "these seeds (`expand --out`) with the --seeds they were made from")
    if left:
        logging.getLogger(__name__).warning("--expansions: %d of %d accepted row(s) left out: their seed is not in "
                                            "this command (e.g. seed_id %r)", len(left), len(rows),
                                            str(left[0].get("seed_id"))[:60])
