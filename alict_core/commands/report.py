"""``report``: HTML report and exports (JSONL/CSV, CheckList-style JSON) of a saved run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from alict_core.commands.args import DefaultValue, holds_outputs
from alict_core.commands.run import add_export_options, check_export_paths, check_outputs_apart, parse_thresholds
from alict_core.common.errors import AlictError
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="write a standalone HTML report (and exports) of a saved run",
        description="Render a saved run (a directory written by `run`) as one self-contained HTML file; "
        "optionally export its suite and results as JSONL/CSV and CheckList-style JSON.",
    )
    parser.add_argument("run_dir", nargs="?", default=None,
                        help="run directory, or a run id of the run store (default: the most recent run)")
    parser.add_argument("--out", default=DefaultValue("alict-report.html"), help="HTML file to write")
    parser.add_argument("--title", default="ALiCT linguistic-capability test report")
    parser.add_argument("--metrics", action="store_true", help="add Self-BLEU and syntactic diversity per LC")
    parser.add_argument("--export", default=None,
                        help="directory for results.jsonl/csv, summary.csv, cases.jsonl/csv, suite.json")
    add_task_arg(parser, help="task of the run (for the CheckList export)")
    parser.add_argument("--fail-threshold", action="append", default=[], metavar="LC=RATE",
                        help="threshold for --junit/--summary-json; exit 1 when an LC × model exceeds it "
                        "('*': every LC)")
    add_export_options(parser)
    parser.set_defaults(handler=run)


def latest_run() -> Path:
    from alict_core.runner.store import list_runs

    runs = list_runs()
    if not runs:
        raise AlictError("no saved runs; run `python -m alict_core run ...` first or pass a run directory")
    return runs[-1]


def _check_export_folder(export: str) -> None:
    """Refuse an ``--export`` folder in the run store, or one holding anything but an earlier export (a saved run,
    a hardening export, other files): it is replaced as a whole, and ``report A --export B`` deleted the run B."""
    from alict_core.commands.args import refuse_in_run_store
    from alict_core.common.manifest import check_replaceable
    from alict_core.suites.tables import EXPORT_FILES

    refuse_in_run_store(export, "--export")
    check_replaceable(export, EXPORT_FILES, "export", "--export")


def _task_of(result, given: str | None) -> str:
    """The run's task, told by its models' labels; a ``--task`` that the labels contradict is refused."""
    from alict_core.data.records import TASK_LABELS

    labels = tuple(result.outcomes[0].labels) if result.outcomes else ()
    found = next((task for task, names in TASK_LABELS.items() if labels == tuple(names)), None)
    if given:
        if found is not None and found != given or found is None and labels and not set(labels) <= set(
                TASK_LABELS[given]):
            raise AlictError(f"--task {given}: run {result.run_id} is a {found or 'different'} run (its models "
                             f"answer {list(labels)}); pass --task {found}" if found else
                             f"--task {given}: the run's models answer {list(labels)}, not {given} labels")
        return given
    if found is None:
        raise AlictError("cannot tell the run's task from its labels; pass --task")
    return found


@holds_outputs("out", "export")
def run(args: argparse.Namespace) -> int:
    from alict_core.common.manifest import check_output_dir, check_output_file

    check_output_file(args.out, "--out", report=True)
    check_output_dir(args.export, "--export")
    check_export_paths(args)
    parse_thresholds(args.fail_threshold)  # a bad threshold fails before the run is read
    from alict_core.runner.store import saved_run_dir

    run_dir = saved_run_dir(args.run_dir) if args.run_dir else latest_run()
    if not args.run_dir:  # which run was reported was not said (pass 37)
        from alict_core.common.textsafe import printable

        print(f"no run given: reporting the newest finished run, {printable(str(run_dir))}")
    check_outputs_apart([("--out", args.out), ("--junit", args.junit), ("--summary-json", args.summary_json)],
                        run_dir, args.export)
    if args.export:  # a folder of other files or another artefact is refused before the report is written
        _check_export_folder(args.export)
    own = args.out is not None and Path(args.out).resolve().parent == Path(run_dir).resolve()
    if own:  # the run's own report.html: a `run --out` re-writing that folder meanwhile swapped in another run, and
        from alict_core.runner.stream import run_lock  # this report (of the old run) landed in the new run's folder

        with run_lock(Path(run_dir)):
            return _report(args, run_dir)
    return _report(args, run_dir)


def _report(args: argparse.Namespace, run_dir: Path) -> int:
    """Read the run and write the report, exports and gate of ``report``'s arguments (see ``run``)."""
    from alict_core.report import write_report
    from alict_core.runner import RunResult

    large = _large_run(run_dir)
    if large is not None:
        return _report_large(large, args)
    result = RunResult.load(run_dir)
    thresholds = gate_thresholds(result.summary(), args.fail_threshold)  # an LC not run: said before any write
    # checked before anything is written; a --task given without --export is checked too (a contradicting one was
    # accepted without effect)
    task = _task_of(result, args.task) if args.export or args.task else None
    metrics = None
    if args.metrics:
        from alict_core.metrics import suite_metrics

        metrics = suite_metrics(result.case_list)
    accuracies = None
    try:
        from alict_core.models.artefacts import classifier_accuracies

        names = set(result.models)
        accuracies = {k: v for k, v in classifier_accuracies().items() if k in names} or None
    except (ImportError, AlictError, OSError, ValueError) as exc:  # optional column: said, not hidden
        print(f"note: test-set accuracies left out of the report ({exc})", file=sys.stderr)
        accuracies = None
    path = write_report(result, args.out, title=args.title, metrics=metrics, accuracies=accuracies)
    print(f"report written to {path}")
    if args.export:
        from alict_core.suites import export_bundle

        files = export_bundle(result, Path(args.export), str(task))
        print("exported: " + ", ".join(str(p) for p in files.values()))
    return exports_and_gate(result, args, thresholds)


def gate_thresholds(summary, items: list[str]) -> dict[str, float]:
    """The ``--fail-threshold`` values keyed by the run's own LC ids (``lc01``, ``LC1`` and ``1`` name the shipped
    LC of either task the run holds), checked before anything is written: an LC the run does not hold is refused
    here, not after the report and the JUnit file were written."""
    from alict_core.commands.run import canonical_lc, check_thresholds, parse_thresholds
    from alict_core.tasks import TASKS

    known = set(summary.lc_id) if len(summary) else set()
    out: dict[str, float] = {}
    for lc, rate in parse_thresholds(items).items():
        matches = {name for name in {lc, *(canonical_lc(task, lc) for task in TASKS)} if name in known}
        name = matches.pop() if len(matches) == 1 else lc
        if name in out:
            raise AlictError(f"--fail-threshold names LC {name!r} twice; give each LC one threshold")
        out[name] = rate
    check_thresholds(summary, out)
    return out


def _large_run(run_dir: Path):
    """The run's reader when it has more than ``LARGE_ROWS`` case × model rows (else None: load it whole)."""
    from alict_core.runner.reader import LARGE_ROWS, RunReader

    try:
        reader = RunReader.open(run_dir)
        return reader if reader.n_rows() > LARGE_ROWS else None
    except (AlictError, OSError, ValueError):  # damaged Parquet (ArrowInvalid is a ValueError) included
        return None  # RunResult.load says what is wrong with it


def _report_large(reader, args: argparse.Namespace) -> int:
    """A bounded HTML report, exports and the threshold gate of a large run, from its aggregates."""
    from alict_core.common.jsonl import atomic_path
    from alict_core.report import render_reader_report
    from alict_core.runner.reader import LARGE_ROWS, RunAggregates

    if args.metrics or args.export:
        raise AlictError(f"run {reader.folder.name!r} has {reader.n_rows():,} case × model rows (over {LARGE_ROWS:,}): "
                         "--metrics and --export need every case in memory; read its results/part-*.parquet "
                         "directly (pyarrow/pandas) instead")
    if (reader.folder / "manifest.json").is_file():  # like RunResult.load: a damaged run is refused, not reported
        from alict_core.common.manifest import verify_dir

        verify_dir(reader.folder, "run", label=f"run {reader.folder.name!r}")
    aggregates = RunAggregates.of(reader)
    thresholds = gate_thresholds(aggregates.summary(), args.fail_threshold)
    with atomic_path(Path(args.out)) as tmp:
        tmp.write_text(render_reader_report(reader, title=args.title), encoding="utf-8")
    print(f"report written to {args.out} (from the run's aggregates and a sample of failures)")
    return exports_and_gate(aggregates, args, thresholds)


def exports_and_gate(result, args: argparse.Namespace, thresholds: dict[str, float]) -> int:
    """Write --junit/--summary-json; 1 when an LC × model exceeds its --fail-threshold (``gate_thresholds``)."""
    import sys

    from alict_core.commands.run import check_thresholds, write_exports

    write_exports(result, args, thresholds)
    problems = check_thresholds(result.summary(), thresholds)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0
