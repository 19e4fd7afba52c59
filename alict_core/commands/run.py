"""``run``: run ALiCT LCs (and/or imported suites) through models; gate CI with ``--fail-threshold``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from alict_core.commands.args import add_executor_args, distinct, executor_options, float_range, int_range, plain_digits
from alict_core.common.csvsafe import read_csv
from alict_core.common.errors import AlictError
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="run LC tests (seeds + expansions, or imported suites) through models",
        description="Run linguistic-capability tests through models, store per-case and per-LC results, "
        "and optionally fail (exit 1) when an LC's fail rate exceeds a threshold.",
    )
    add_task_arg(parser, required=True)
    parser.add_argument("--models", required=True,
                        help="comma-separated registered model names; a model kind takes arguments after a colon, "
                        "e.g. vader,sklearn:path=pipe.joblib,name=mine (task defaults to --task)")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow loading pickle/joblib models (sklearn:path=...): unpickling runs code; "
                        "only for files you created or trust")
    parser.add_argument("--lc", action="append", default=None,
                        help="LC id to run (repeatable; default: every LC of the task)")
    parser.add_argument("--suite", action="append", default=[],
                        help="suite file to add: CheckList .json/.json.gz, HateCheck .csv, cases .jsonl")
    parser.add_argument("--strict", action="store_true",
                        help="refuse a --suite with tests that cannot be imported (default: skip them, listed)")
    parser.add_argument("--no-lcs", action="store_true", help="run only the --suite files, not the task's LC specs")
    parser.add_argument("--seeds", action="append", default=[],
                        help="seed JSONL file(s) instead of searching the corpus")
    parser.add_argument("--expansions", action="extend", nargs="+", default=[],
                        help="expansions JSONL file(s) or folder(s) of them, e.g. the --out of `expand` "
                        "(accepted rows become cases)")
    parser.add_argument("--max-seeds", type=int_range(1, "max_seeds"), default=None,
                        help="cap on seeds per LC; on a --suite: a seeded random sample of N items per test, "
                        "stratified by label (seed: --sample-seed), never the first N in file order")
    parser.add_argument("--inv-threshold", type=float_range(0.0, 1.0), default=None, metavar="P",
                        help="CheckList INV tests of a --suite: a variant whose predicted label changed still "
                        "passes when its probability of the original label stays within P of the original's "
                        "(default 0.1, CheckList's INV threshold)")
    parser.add_argument("--batch-size", type=int_range(1, "batch_size"), default=64)
    parser.add_argument("--out", default=None, help="directory for the run (default: cache dir runs/<run id>)")
    parser.add_argument("--report", default=None, help="also write a standalone HTML report here")
    parser.add_argument("--fail-threshold", action="append", default=[], metavar="LC=RATE",
                        help="exit 1 when LC's fail rate (seeds + expansions) exceeds RATE for any model; "
                             "LC may be '*'")
    add_export_options(parser)
    parser.add_argument("--keep-flagged", action="store_true",
                        help="keep cases the validity checks flag (default: exclude them; see `validate`)")
    parser.add_argument("--sample-per-lc", type=int_range(1, 10**9), default=None, metavar="N",
                        help="run about N cases per LC: whole seed groups (a seed with all its expansions) in a "
                             "random order drawn with --sample-seed, while they fit in N (at least one group)")
    parser.add_argument("--sample-seed", type=int_range(0, 2**31 - 1), default=0)
    add_executor_args(parser, "cases per shard: the unit of work, progress and resume (a seed and its "
                      "expansions stay in one shard)", 10_000)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--no-story", action="store_true",
                        help="do not precompute the app's Story for the finished run (story.json: its telling "
                             "failures explained; the app computes it on first view instead)")
    parser.add_argument("--include-rejected", action="store_true", help="also run cases human reviewers rejected")
    parser.set_defaults(handler=run)


def add_export_options(parser: argparse.ArgumentParser) -> None:
    """``--junit FILE`` and ``--summary-json FILE`` (shared by ``run`` and ``report``)."""
    parser.add_argument("--junit", default=None, metavar="FILE",
                        help="write JUnit XML: one test case per LC × model, failing above its --fail-threshold")
    parser.add_argument("--summary-json", default=None, metavar="FILE",
                        help="write the JSON summary (schema alict-summary/1, see alict_core/report/summary.py)")


def check_export_paths(args: argparse.Namespace) -> None:
    """Refuse, before any work, a ``--junit`` / ``--summary-json`` path that cannot be written (names the path)."""
    from alict_core.common.manifest import check_output_file

    inputs = command_inputs(args)
    check_output_file(args.junit, "--junit", inputs)
    check_output_file(args.summary_json, "--summary-json", inputs)


def command_inputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The input files a run reads ((option, path) pairs): no output may replace one of them."""
    return [(option, value) for option in ("--seeds", "--suite", "--expansions")
            for value in getattr(args, option[2:].replace("-", "_"), None) or []]


def check_outputs_apart(outputs: list[tuple[str, str | None]], run_dir: str | Path | None,
                        export: str | None = None) -> None:
    """Refuse, before any work, two outputs naming one file (the last would silently replace the first) and an
    output inside the run folder it is made from (``report RUN --out RUN/meta.json`` destroyed the run); only
    ``report.html`` may sit in the run folder, as ``run --report`` puts it there."""
    seen: dict[Path, str] = {}
    folder = Path(run_dir).resolve() if run_dir else None
    for option, value in outputs:
        if not value:
            continue
        path = Path(value).resolve()
        if path in seen:
            raise AlictError(f"{option} and {seen[path]} name the same file {value!r}; give each its own")
        seen[path] = option
        if folder is not None and path.is_relative_to(folder) and path != folder / "report.html":
            raise AlictError(f"{option} {value!r} lies inside the run folder {str(run_dir)!r} and would replace or "
                             "mix with the run's own files; write it elsewhere")
    if export and folder is not None:
        target = Path(export).resolve()
        if target == folder or target.is_relative_to(folder) or folder.is_relative_to(target):
            raise AlictError(f"--export {export!r} overlaps the run folder {str(run_dir)!r}; export to another folder")


def write_exports(result, args: argparse.Namespace, thresholds: dict[str, float]) -> None:
    """Write the files asked for by ``--junit`` / ``--summary-json``."""
    if args.junit:
        from alict_core.report.junit import write_junit

        print(f"JUnit XML written to {write_junit(result, args.junit, thresholds)}")
    if args.summary_json:
        from alict_core.report.summary import write_summary_json

        print(f"JSON summary written to {write_summary_json(result, args.summary_json, thresholds)}")


def parse_thresholds(items: list[str]) -> dict[str, float]:
    out = {}
    for item in items:
        lc, sep, rate = item.rpartition("=")
        try:
            value = float(plain_digits(rate))  # never "0_1" (1.0) or full-width digits
        except ValueError:
            value = -1.0
        if not sep or not lc or not 0.0 <= value <= 1.0:
            raise AlictError(f"--fail-threshold {item!r}: expected LC=RATE with RATE in [0, 1], "
                             "e.g. LC1=0.25 or '*=0.5'")
        if lc in out:  # else the last one silently wins
            raise AlictError(f"--fail-threshold names LC {lc!r} twice; give each LC one threshold")
        out[lc] = value
    return out


def canonical_lc(task: str, lc: str) -> str:
    """A shipped LC's full id for short names (LC4, lc04, 4); other names (imported suites, '*') as given."""
    if lc == "*":
        return lc
    from alict_core.lcspec import get_spec

    try:
        return get_spec(task, lc).id
    except AlictError:
        return lc


def check_thresholds(summary, thresholds: dict[str, float]) -> list[str]:
    """Messages for every (LC, model) whose fail rate exceeds its threshold ('*' applies to all LCs)."""
    problems = []
    known = set(summary.lc_id) if len(summary) else set()
    for lc in thresholds:
        if lc != "*" and lc not in known:
            raise AlictError(f"--fail-threshold names LC {lc!r}, which was not run; "
                             f"LCs run: {', '.join(sorted(known))}")
    for _, row in summary.iterrows():
        limit = thresholds.get(row.lc_id, thresholds.get("*"))
        if limit is not None and row.fail_rate > limit:
            problems.append(f"{row.lc_id} × {row.model}: fail rate {row.fail_rate:.3f} > threshold {limit:.3f}")
    return problems


def lc_seeds(task: str, lcs: list[str] | None, max_seeds: int | None, seed_files: list[str],
             wanted: dict[str, set[str]] | None = None) -> list[dict]:
    """Seed dicts (with capability and description from the specs) of the selected LCs.

    ``wanted`` (LC → seed ids referenced by expansions): such seeds are added even when the seed cap
    sampled other ones, so every accepted expansion has its seed.
    """
    from alict_core.lcspec import get_spec, load_task_specs

    specs = {s.id: s for s in load_task_specs(task)}
    of_task = set(specs)
    if lcs:
        chosen = {get_spec(task, lc).id for lc in lcs}  # accepts sentiment-lc04, LC4, lc04 or 4
        specs = {k: v for k, v in specs.items() if k in chosen}
    rows: list[dict] = []
    if seed_files:
        for file in seed_files:
            if not Path(file).is_file():
                raise AlictError(f"--seeds file {file} not found")
            rows.extend(r for r in seed_file_rows(Path(file), task, of_task) if r["lc_id"] in specs)
        if max_seeds is not None:
            per_lc: dict[str, int] = {}
            kept = []
            for r in rows:
                per_lc[r["lc_id"]] = per_lc.get(r["lc_id"], 0) + 1
                if per_lc[r["lc_id"]] <= max_seeds or r.get("id") in (wanted or {}).get(r["lc_id"], set()):
                    kept.append(r)
            rows = kept
    else:
        from alict_core.data.corpus import load_corpus
        from alict_core.seeds import find_seeds

        corpus = load_corpus(task)
        for spec in specs.values():
            seed_set = find_seeds(spec, corpus, max_seeds=max_seeds if max_seeds is not None else "spec")
            rows.extend(s.to_dict() for s in seed_set.seeds)
            missing = (wanted or {}).get(spec.id, set()) - {s.id for s in seed_set.seeds}
            if missing:  # `expand` draws its seeds with the spec's own cap: look them up there (never all
                # candidates: cross products reach 10^7)
                rows.extend(s.to_dict() for s in find_seeds(spec, corpus).seeds if s.id in missing)
    for row in rows:
        row_spec = specs.get(row["lc_id"])
        if row_spec is not None:
            row.setdefault("capability", row_spec.capability)
            row.setdefault("description", row_spec.description)
    return rows


def read_rows(path: Path, option: str) -> list[dict]:
    """The JSON objects of a JSONL file given to ``option``, through the strict-input path (size and row limits,
    UTF-8, JSON nesting); a bad line is one error naming option, file and line."""
    from alict_core.common.userfiles import InputFileError, jsonl_rows

    try:
        return [row for _, row in jsonl_rows(path, option)]
    except InputFileError as exc:
        raise AlictError(f"{option} {exc}") from None


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
    for where, row in numbered:
        check_row_lc("--seeds", where, row, task, of_task)
        if row.get("task") not in (None, task):  # the case would be stored as of that task in a run of this one
            raise AlictError(f"--seeds {where}: the seed names task {row.get('task')!r}, not {task!r}")
    return [row for _, row in numbered]


def read_expansion_rows(given: list[str], task: str | None) -> list[dict]:
    """Rows of the --expansions files (or folders of them); a bad line, or a row whose ``lc_id`` is no LC of
    ``task`` (another task's expansions: they were dropped without a word), is one error naming file and line.
    ``task`` None: no LC check (expansions of imported suite cases carry the suite's group ids)."""
    from alict_core.common.userfiles import InputFileError, jsonl_rows
    from alict_core.lcspec import load_task_specs

    of_task = {s.id for s in load_task_specs(task)} if given and task else set()
    expansions: list[dict] = []
    for item in given:
        path = Path(item)
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files or not all(f.is_file() for f in files):
            raise AlictError(f"--expansions {item}: no such JSONL file (or folder of them)")
        for file in files:
            try:
                numbered = jsonl_rows(file, "--expansions")
            except InputFileError as exc:
                raise AlictError(f"--expansions {exc}") from None
            for where, row in numbered:
                if task:
                    check_row_lc("--expansions", where, row, task, of_task)
                expansions.append(row)
    return expansions


def collect_cases(args: argparse.Namespace, skipped: list | None = None) -> list:
    """The run's cases; tests of ``--suite`` files that cannot be represented are appended to ``skipped``."""
    from alict_core.suites import read_suite

    cases = []
    expansions = read_expansion_rows(args.expansions, None if args.suite else args.task)  # suite rows: suite ids
    if not args.no_lcs:
        wanted: dict[str, set[str]] = {}
        for row in expansions:
            if row.get("accepted", True) and "lc_id" in row:
                wanted.setdefault(row["lc_id"], set()).add(str(row.get("seed_id")))
        seeds = lc_seeds(args.task, args.lc, args.max_seeds, args.seeds, wanted)
        cases.extend(checked_cases(args, seeds, expansions))
    if args.suite:
        from alict_core.suites import CHECKLIST_INV_THRESHOLD
        from alict_core.suites.checklist import check_inv_threshold
        from alict_core.suites.subsample import SAMPLING, subsample_suite

        given = getattr(args, "inv_threshold", None)
        inv_threshold = CHECKLIST_INV_THRESHOLD if given is None else check_inv_threshold(given)
        args.suite_import = {"files": [Path(s).name for s in args.suite], "inv_threshold": inv_threshold,
                             **({"max_items_per_test": args.max_seeds, "sampling": SAMPLING,
                                 "sample_seed": getattr(args, "sample_seed", 0)} if args.max_seeds is not None else {})}
    for suite in args.suite:
        suite_import = read_suite(suite, args.task, strict=getattr(args, "strict", False), inv_threshold=inv_threshold)
        imported = suite_import.cases
        if skipped is not None:
            skipped.extend({"suite": Path(suite).name, **item.to_dict()} for item in suite_import.skipped)
        if args.max_seeds is not None:
            imported = subsample_suite(imported, args.max_seeds, getattr(args, "sample_seed", 0))
        cases.extend(imported)
        if expansions:  # expansions of the suite's cases (`expand --suite`)
            from alict_core.expansion.suite import suite_expansion_cases

            grown, record = suite_expansion_cases(imported, expansions, args.task,
                                                  bool(getattr(args, "keep_flagged", False)))
            cases.extend(grown)
            if record and not getattr(args, "validity", None):
                args.validity = record
    if not cases:
        raise AlictError("no test cases: give LCs of the task (default), --seeds, or --suite files")
    if getattr(args, "sample_per_lc", None) is not None:
        from alict_core.runner.sampling import sample_per_lc

        cases = sample_per_lc(cases, args.sample_per_lc, args.sample_seed)
    return cases


def checked_cases(args: argparse.Namespace, seeds: list[dict], expansions: list[dict]) -> list:
    """LC cases with the validity checks applied: flagged ones dropped unless ``--keep-flagged``; the
    per-LC, per-reason counts are kept on ``args.validity`` for the run's metadata and output."""
    from alict_core.cases.validity import apply_validity
    from alict_core.lcspec import load_task_specs
    from alict_core.runner import build_cases

    specs = {s.id: s for s in load_task_specs(args.task)}
    cases, args.validity = apply_validity(seeds, expansions, build_cases(seeds, expansions), task=args.task,
                                          specs=specs, keep_flagged=bool(getattr(args, "keep_flagged", False)))
    return cases


def parse_model_refs(text: str) -> list[tuple[str, dict[str, str]]]:
    """``vader,http:url=http://127.0.0.1:8000/p,name=mine`` → [("vader", {}), ("http", {"url": ..., "name": "mine"})].

    A comma-separated part starts a new model unless it is a bare ``key=value`` (that continues the previous
    model's arguments); ``name:key=value`` starts a model with arguments.
    """
    refs: list[tuple[str, dict[str, str]]] = []
    parts = [p.strip() for p in text.split(",")]
    if any(parts) and not all(parts):
        raise AlictError(f"--models {text!r} has an empty entry; separate models by single commas")
    for part in parts:
        if not part:
            continue
        head, eq, _ = part.partition("=")
        if eq and ":" not in head:
            if not refs:
                raise AlictError(f"--models {text!r}: {part!r} is an argument with no model before it")
            key, _, value = part.partition("=")
            refs[-1][1][key.strip()] = value.strip()
            continue
        name, colon, rest = part.partition(":") if eq else (part, "", "")
        kwargs: dict[str, str] = {}
        if colon:
            key, _, value = rest.partition("=")
            kwargs[key.strip()] = value.strip()
        refs.append((name.strip(), kwargs))
    return refs


def model_refs(names: str, task: str, trust_pickle: bool = False) -> list[dict]:
    """``[{"name", "kwargs"}]`` of ``--models`` after the checks (task, pickle trust); workers build from them."""
    from alict_core.common.trust import check_pickle_allowed
    from alict_core.models import MODELS
    from alict_core.models.registry import model_entry

    refs: list[dict] = []
    for name, kwargs in parse_model_refs(names):
        entry = model_entry(name)
        model_task = entry.tags.get("task")
        if model_task not in (None, task):
            raise AlictError(f"model {name!r} is for task {model_task}, not {task}; models for {task}: "
                             + ", ".join(MODELS.names(task=task)))
        if model_task is None:
            kwargs.setdefault("task", task)
        if "trusted" in kwargs:
            raise AlictError("--models: 'trusted' is not an argument; pass --trust-pickle")
        given = kwargs.get("name")
        if given is not None and (not given or len(given) > 200 or not given.isprintable()):
            raise AlictError(f"--models {name}: name={given[:40]!r} must be 1–200 printable characters (the model's "
                             "name in the run and its reports)")
        if entry.tags.get("kind") == "sklearn":
            check_pickle_allowed(trust_pickle, origin="cli")
            kwargs["trusted"] = True  # type: ignore[assignment]
        refs.append({"name": name, "kwargs": kwargs})
    if not refs:
        raise AlictError("--models is empty")
    seen: dict[str, dict] = {}
    for ref in refs:  # before any work (the run refused it only once its cases were built)
        shown = run_name(ref["name"], ref["kwargs"])
        if shown in seen:
            if seen[shown] == ref:
                raise AlictError(f"--models names {shown!r} twice; name each model once")
            raise AlictError(f"--models: two models would both be named {shown!r} in the run; tell them apart "
                             "with name=...")
        seen[shown] = ref
    return refs


def run_name(name: str, kwargs: dict[str, str]) -> str:
    """The name a model of ``--models`` will have in the run (its ``name=`` argument, else what its kind calls
    it: the hub id, the file's stem, the URL, ``chat:<model>``): two models of one name cannot share a run."""
    if kwargs.get("name"):
        return str(kwargs["name"])
    if name == "hf" and kwargs.get("model_id"):
        return str(kwargs["model_id"])
    if name in ("sklearn", "static") and kwargs.get("path"):
        return Path(kwargs["path"]).stem
    if name == "http" and kwargs.get("url"):
        return str(kwargs["url"])
    if name == "openai-chat" and kwargs.get("model"):
        return f"chat:{kwargs['model']}"
    return name


def resolve_models(names: str, task: str, trust_pickle: bool = False) -> list:
    from alict_core.models import get_model

    return [get_model(ref["name"], **ref["kwargs"]) for ref in model_refs(names, task, trust_pickle)]


def story_writer(refs: list) -> Callable[[Path], Any]:
    """What a finished run calls to precompute the app's Story (``alict_core.report.story``; never fails the run)."""

    def write(folder: Path) -> None:
        from alict_core.common.jsonl import read_json
        from alict_core.report.story import loader_for, precompute_story

        precompute_story(folder, loader_for(refs, [m["name"] for m in read_json(folder / "meta.json")["models"]]))

    return write


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from alict_core.common.jsonl import read_json
    from alict_core.common.manifest import check_output_dir, check_output_file
    from alict_core.executors.base import executor_entry
    from alict_core.runner.stream import group_by_seed, run_streaming

    check_output_dir(args.out, "--out")
    check_output_file(args.report, "--report", command_inputs(args))
    check_export_paths(args)
    check_outputs_apart([("--report", args.report), ("--junit", args.junit), ("--summary-json", args.summary_json)],
                        args.out)
    if getattr(args, "inv_threshold", None) is not None and not args.suite:  # else silently without effect
        raise AlictError("--inv-threshold applies to the CheckList INV tests of a --suite; give a --suite or drop it")
    executor_entry(args.executor)  # an unknown or uninstalled executor fails before any work
    options = executor_options(args)
    given = parse_thresholds(args.fail_threshold)
    distinct(list(given), "--fail-threshold", key=lambda lc: canonical_lc(args.task, lc))  # LC4=… and lc04=…
    thresholds = {canonical_lc(args.task, lc): rate for lc, rate in given.items()}
    refs = model_refs(args.models, args.task, trust_pickle=args.trust_pickle)
    skipped: list[dict] = []
    cases = group_by_seed(collect_cases(args, skipped))  # a seed and its expansions share a shard
    unknown = sorted(set(thresholds) - {"*"} - {case.lc_id for case in cases})
    if unknown:  # said before the run, not after it
        raise AlictError(f"--fail-threshold names LC {unknown[0]!r}, which was not run; LCs run: "
                         + ", ".join(sorted({case.lc_id for case in cases})))
    extra: dict = {}
    if skipped:
        extra["skipped_tests"] = skipped
    if getattr(args, "validity", None):
        extra["validity"] = args.validity
    if getattr(args, "suite_import", None):
        extra["suite_import"] = args.suite_import
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(cases), unit="case", file=sys.stderr)

    def progress(done: int, total: int, message: str) -> None:
        if bar is not None:
            bar.total = total or bar.total
            bar.n = done
            bar.set_description(message[:30])
            bar.refresh()

    try:
        out = run_streaming(cases, refs, run_dir=Path(args.out) if args.out else None, shard_size=args.shard_size,
                            executor=args.executor, workers=args.workers, batch_size=args.batch_size,
                            progress=progress, extra=extra, include_rejected=args.include_rejected,
                            executor_options=options,
                            on_finished=None if getattr(args, "no_story", False) else story_writer(refs))
    finally:
        if bar is not None:
            bar.close()
    del cases
    meta = read_json(out / "meta.json")
    for item in skipped:
        print(f"skipped {item['suite']}: {item['test']}: {item['reason']} ({item['items']} items)")
    if getattr(args, "validity", None):
        print(args.validity["note"])
    summary = read_csv(out / "summary.csv")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 500):
        cols = ["lc_id", "model", "n_seeds", "fail_rate_seeds", "n_expansions", "fail_rate_expansions",
                "n_pass_to_fail", "fail_rate", "ci_low_all", "ci_high_all"]
        print(summary[[c for c in cols if c in summary.columns]].round(3).to_string(index=False))
        print("ci_low_all–ci_high_all: 95 % interval of fail_rate, clustered by seed (a seed and its expansions "
              "count as one cluster; Wilson on the design-effect-adjusted sample size)")
    run_extra = meta.get("extra", {})
    print(f"run {meta['run_id']}: {meta['n_cases']} cases × {len(meta['models'])} models in {meta['n_shards']} "
          f"shard(s) on {meta['executor']} ({meta['workers']} worker(s)) in {meta['seconds']:.1f}s, saved to {out}")
    excluded = run_extra.get("review_excluded", 0)
    if excluded:
        print(f"{excluded} case(s) rejected by human reviewers left out (--include-rejected shows them)")
    for name, count in run_extra.get("unparsed_answers", {}).items():
        print(f"warning: model {name!r} gave {count} answer(s) that could not be parsed; they were scored as its "
              "fallback label for this run and not cached (a re-run asks again)", file=sys.stderr)
    if args.report or args.junit or args.summary_json:
        from alict_core.runner import RunResult

        result = RunResult.load(out)
        if args.report:
            from alict_core.report import write_report

            print(f"report written to {write_report(result, args.report)}")
        write_exports(result, args, thresholds)
    problems = check_thresholds(summary, thresholds)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0
