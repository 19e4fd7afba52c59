"""``run``: run ALiCT LCs (and/or imported suites) through models; gate CI with ``--fail-threshold``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from alict_core.commands.args import (
    add_executor_args,
    distinct,
    executor_options,
    float_range,
    holds_out,
    int_range,
    plain_digits,
)
from alict_core.common.csvsafe import read_csv
from alict_core.common.errors import AlictError
from alict_core.common.manifest import artefact_kind
from alict_core.common.textsafe import printable, printable_frame
from alict_core.models.refs import ModelRef, model_refs
from alict_core.plan import Plan, PlanOptions, make_plan
from alict_core.suites import check_suite_path
from alict_core.tasks import add_task_arg

PROGRESS_CHARS = 48  # a progress note kept whole up to this length ("waiting for another writer of this run")


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
    parser.add_argument("--batch-size", type=int_range(1, "batch_size"), default=None,
                        help="texts per model call (default 64, or ALICT_LIMIT_BATCH_SIZE when lower)")
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
    """The input files a run reads ((option, path) pairs; a model's ``path=`` too): no output may replace one of
    them, no output folder may hold one (its re-write deleted it)."""
    from alict_core.commands.args import model_input_paths

    pairs: list[tuple[str, str | None]] = [(option, value) for option in ("--seeds", "--suite", "--expansions")
                                           for value in getattr(args, option[2:].replace("-", "_"), None) or []]
    return pairs + model_input_paths(getattr(args, "models", None), "--models")


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
        if folder is not None and path.is_relative_to(folder) and not (option in ("--report", "--out")
                                                                       and path == folder / "report.html"):
            raise AlictError(f"{option} {value!r} lies inside the run folder {str(run_dir)!r} and would replace or "
                             "mix with the run's own files; write it elsewhere")
        if path.name == "report.html" and path.parent != folder and artefact_kind(path.parent) == "run":
            # another run's report.html: its folder would show this run's figures as its own
            raise AlictError(f"{option} {value!r} is the report of another run ({path.parent.name!r}); a run's "
                             "folder holds only its own report: write it elsewhere")
    if export:  # the export folder is replaced as a whole: an output in it replaced an export file, or was deleted
        inside = Path(export).resolve()  # by the next export to that folder
        for option, value in outputs:
            if value and Path(value).resolve().is_relative_to(inside):
                raise AlictError(f"{option} {value!r} lies inside the --export folder {export!r}, which is written "
                                 "(and later replaced) as a whole; write it elsewhere")
    if export and folder is not None:
        target = Path(export).resolve()
        if target == folder or target.is_relative_to(folder) or folder.is_relative_to(target):
            raise AlictError(f"--export {export!r} overlaps the run folder {str(run_dir)!r}; export to another folder")


def write_outputs(out: Path, args: argparse.Namespace, thresholds: dict[str, float]) -> None:
    """Write the saved run's ``--report``, ``--junit`` and ``--summary-json`` files."""
    from alict_core.runner import RunResult

    result = RunResult.load(out)
    if args.report:
        from alict_core.report import write_report

        print(f"report written to {write_report(result, args.report)}")
    write_exports(result, args, thresholds)


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
        lc, sep, rate = item.rpartition("=")  # a suite LC's name may hold '=': '4=0.5=1' names LC '4=0.5'
        try:
            value = float(plain_digits(rate)) + 0.0  # never "0_1" (1.0) or full-width digits; -0 is 0
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
                             f"LCs run: {', '.join(printable(lc) for lc in sorted(known))}")
    for _, row in summary.iterrows():
        limit = thresholds.get(row.lc_id, thresholds.get("*"))
        if limit is not None and row.fail_rate > limit:
            problems.append(f"{printable(row.lc_id)} × {printable(row.model)}: fail rate {row.fail_rate:.3f} > "
                            f"threshold {limit:.3f}")
    return problems


def plan_options(args: argparse.Namespace) -> PlanOptions:
    """The plan's options of a ``run`` command line (``--max-seeds`` also caps the items per suite test)."""
    return PlanOptions(
        task=args.task, lcs=tuple(args.lc) if args.lc else None, seed_files=tuple(args.seeds),
        expansion_files=tuple(args.expansions), suites=tuple(args.suite), max_seeds=args.max_seeds,
        max_suite_items=args.max_seeds, no_lcs=args.no_lcs, strict=args.strict, inv_threshold=args.inv_threshold,
        sample_per_lc=args.sample_per_lc, sample_seed=args.sample_seed, keep_flagged=args.keep_flagged)


def planned(args: argparse.Namespace) -> Plan:
    """The run's cases (``alict_core.plan``); none is an error."""
    plan = make_plan(plan_options(args))
    if not plan.cases:
        if args.seeds and not args.suite:  # the user gave --seeds: "give --seeds" was no help (pass 37)
            raise AlictError(f"no test cases: the --seeds file(s) {', '.join(map(str, args.seeds))[:200]} hold no "
                             "seed of the chosen LCs; give the files `seeds --out` wrote")
        raise AlictError("no test cases: give LCs of the task (default), --seeds, or --suite files")
    return plan


def story_writer(refs: list[ModelRef]) -> Callable[[Path], Any]:
    """What a finished run calls to precompute the app's Story (``alict_core.report.story``; never fails the run)."""

    def write(folder: Path) -> None:
        from alict_core.common.jsonl import read_json
        from alict_core.report.story import loader_for, precompute_story

        names = [m["name"] for m in read_json(folder / "meta.json")["models"]]
        precompute_story(folder, loader_for([ref.to_dict() for ref in refs], names))

    return write


def checked_run_args(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, float]]:
    """Refuse, before any work, outputs that cannot be written, options without effect and an unknown executor;
    (the executor's options, the ``--fail-threshold`` rates by full LC id)."""
    from alict_core.common.manifest import check_inputs_outside, check_output_dir, check_output_file, check_replaceable
    from alict_core.executors.base import executor_entry
    from alict_core.runner.folders import OWNED

    check_output_dir(args.out, "--out")
    check_inputs_outside(args.out, command_inputs(args), "--out")
    # another artefact kind: refused now, not at the save; an interrupted run's own files (progress, shard folders)
    # are the runner's, so the same command resumes it
    check_replaceable(args.out, OWNED, "run", "--out")
    check_output_file(args.report, "--report", command_inputs(args), report=True)
    check_export_paths(args)
    check_outputs_apart([("--report", args.report), ("--junit", args.junit), ("--summary-json", args.summary_json)],
                        args.out)
    if args.no_lcs and (args.seeds or args.lc):  # the LC seeds were never run, and nothing said so
        raise AlictError(f"--no-lcs runs only the --suite files: {'--seeds' if args.seeds else '--lc'} would be "
                         "ignored; drop --no-lcs to run the LCs beside the suites, or drop it")
    if getattr(args, "inv_threshold", None) is not None and not args.suite:  # else silently without effect
        raise AlictError("--inv-threshold applies to the CheckList INV tests of a --suite; give a --suite or drop it")
    for suite in args.suite:  # said before every LC's seed search (10-30 s), not after it
        check_suite_path(suite, args.task)
    executor_entry(args.executor)  # an unknown or uninstalled executor fails before any work
    options = executor_options(args)
    given = parse_thresholds(args.fail_threshold)
    distinct(list(given), "--fail-threshold", key=lambda lc: canonical_lc(args.task, lc))  # LC4=… and lc04=…
    return options, {canonical_lc(args.task, lc): rate for lc, rate in given.items()}


def print_run(out: Path, skipped: list[dict], extra: dict, asked: Plan | None = None) -> Any:
    """Print what a finished run says (skipped suite tests, validity, the summary, the run line, warnings: the
    LCs of ``asked`` that are not in the run, and why); returns its summary table."""
    import pandas as pd

    from alict_core.common.jsonl import read_json

    meta = read_json(out / "meta.json")
    for item in skipped:
        print(printable(f"skipped {item['suite']}: {item['test']}: {item['reason']} ({item['items']} items)"))
    if extra.get("validity"):
        print(extra["validity"]["note"])
    summary = read_csv(out / "summary.csv")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 500):
        cols = ["lc_id", "model", "n_seeds", "fail_rate_seeds", "n_expansions", "fail_rate_expansions",
                "n_pass_to_fail", "fail_rate", "ci_low_all", "ci_high_all"]
        shown = printable_frame(summary[[c for c in cols if c in summary.columns]].round(3))  # a suite's names
        print(shown.to_string(index=False))
        print("ci_low_all–ci_high_all: 95 % interval of fail_rate, clustered by seed (a seed and its expansions "
              "count as one cluster; Wilson on the design-effect-adjusted sample size)")
    run_extra = meta.get("extra", {})
    print(f"run {meta['run_id']}: {meta['n_cases']} cases × {len(meta['models'])} models in {meta['n_shards']} "
          f"shard(s) on {meta['executor']} ({meta['workers']} worker(s)) in {meta['seconds']:.1f}s, saved to {out}")
    excluded = run_extra.get("review_excluded", 0)
    if excluded:
        print(f"{excluded} case(s) rejected by human reviewers left out (--include-rejected shows them)")
    for lc, why in (asked.lcs_not_run(summary["lc_id"]) if asked is not None else {}).items():
        print(f"warning: {lc} is not in this run: {why}", file=sys.stderr)
    for name, count in run_extra.get("unparsed_answers", {}).items():
        print(f"warning: model {name!r} gave {count} answer(s) that could not be parsed; they were scored as its "
              "fallback label for this run and not cached (a re-run asks again)", file=sys.stderr)
    return summary


@holds_out
def run(args: argparse.Namespace) -> int:
    from alict_core.harden.versions import MODEL_RESOLVERS
    from alict_core.review.writeback import RejectionFilter
    from alict_core.runner.stream import group_by_seed, run_streaming

    options, thresholds = checked_run_args(args)
    refs = model_refs(args.models, args.task, trust_pickle=args.trust_pickle)
    plan = planned(args)
    skipped = plan.skipped
    cases = group_by_seed(plan.cases)  # a seed and its expansions share a shard
    unknown = sorted(set(thresholds) - {"*"} - {case.lc_id for case in cases})
    if unknown:  # said before the run, not after it
        raise AlictError(f"--fail-threshold names LC {unknown[0]!r}, which was not run; LCs run: "
                         + ", ".join(sorted({case.lc_id for case in cases})))
    extra = plan.run_extra()
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(cases), unit="case", file=sys.stderr)

    def progress(done: int, total: int, message: str) -> None:
        if bar is not None:
            bar.total = total or bar.total
            bar.n = done
            bar.set_description(message if len(message) <= PROGRESS_CHARS else message[:PROGRESS_CHARS - 1] + "…")
            bar.refresh()

    try:
        out = run_streaming(cases, [ref.to_dict() for ref in refs], run_dir=Path(args.out) if args.out else None,
                            shard_size=args.shard_size, executor=args.executor, workers=args.workers,
                            batch_size=args.batch_size, progress=progress, extra=extra, plugins=MODEL_RESOLVERS,
                            exclude=None if args.include_rejected else RejectionFilter(), executor_options=options,
                            on_finished=None if getattr(args, "no_story", False) else story_writer(refs))
    finally:
        if bar is not None:
            bar.close()
    asked = Plan([], lc_ids=plan.lc_ids, no_cases=plan.no_cases)  # without the cases: they are freed here
    del cases, plan
    summary = print_run(out, skipped, extra, asked)
    if args.report or args.junit or args.summary_json:
        try:
            write_outputs(out, args, thresholds)
        except KeyboardInterrupt:  # the run is saved: a re-run would ask an endpoint again (pass 39)
            print(f"interrupted while writing the run's outputs; the run is saved in {str(out)!r}: `report "
                  f"{str(out)!r}` with --out/--junit/--summary-json writes them without running anything",
                  file=sys.stderr)
            return 130
    problems = check_thresholds(summary, thresholds)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0
