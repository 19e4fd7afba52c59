"""``report``: HTML report and exports (JSONL/CSV, CheckList-style JSON) of a saved run."""

from __future__ import annotations

import argparse
from pathlib import Path

from alict_core.errors import AlictError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="write a standalone HTML report (and exports) of a saved run",
        description="Render a saved run (a directory written by `run`) as one self-contained HTML file; "
        "optionally export its suite and results as JSONL/CSV and CheckList-style JSON.",
    )
    parser.add_argument("run_dir", nargs="?", default=None, help="run directory (default: the most recent run)")
    parser.add_argument("--out", default="alict-report.html", help="HTML file to write")
    parser.add_argument("--title", default="ALiCT linguistic-capability test report")
    parser.add_argument("--metrics", action="store_true", help="add Self-BLEU and syntactic diversity per LC")
    parser.add_argument("--export", default=None, help="directory for results.jsonl/csv, summary.csv, cases.jsonl/csv, suite.json")
    parser.add_argument("--task", default=None, choices=["sentiment", "hate_speech"], help="task of the run (for the CheckList export)")
    parser.set_defaults(handler=run)


def latest_run() -> Path:
    from alict_core.config import artefact_dir

    runs = sorted((p for p in artefact_dir("runs").iterdir() if (p / "meta.json").exists()), key=lambda p: p.stat().st_mtime)
    if not runs:
        raise AlictError("no saved runs; run `python -m alict_core run ...` first or pass a run directory")
    return runs[-1]


def _task_of(result, given: str | None) -> str:
    if given:
        return given
    from alict_core.data.records import TASK_LABELS

    labels = result.outcomes[0].labels if result.outcomes else ()
    for task, names in TASK_LABELS.items():
        if tuple(labels) == tuple(names):
            return task
    raise AlictError("cannot tell the run's task from its labels; pass --task")


def run(args: argparse.Namespace) -> int:
    from alict_core.report import write_report
    from alict_core.runner import RunResult

    run_dir = Path(args.run_dir) if args.run_dir else latest_run()
    result = RunResult.load(run_dir)
    metrics = None
    if args.metrics:
        from alict_core.metrics import suite_metrics

        metrics = suite_metrics(result.case_list)
    accuracies = None
    from alict_core.artefacts import classifier_accuracies

    names = set(result.models)
    accuracies = {k: v for k, v in classifier_accuracies().items() if k in names} or None
    path = write_report(result, args.out, title=args.title, metrics=metrics, accuracies=accuracies)
    print(f"report written to {path}")
    if args.export:
        from alict_core.suites import export_cases_csv, export_cases_jsonl, export_checklist, export_results

        out = Path(args.export)
        files = export_results(result, out)
        files["cases.jsonl"] = export_cases_jsonl(result.case_list, out / "cases.jsonl")
        files["cases.csv"] = export_cases_csv(result.case_list, out / "cases.csv")
        files["suite.json"] = export_checklist(result.case_list, _task_of(result, args.task), out / "suite.json")
        print("exported: " + ", ".join(str(p) for p in files.values()))
    return 0
