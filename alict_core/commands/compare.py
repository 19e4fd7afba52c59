"""``compare``: fail-rate differences per LC and capability between two runs (or two models of one run)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from alict_core.commands.args import int_range
from alict_core.common.errors import AlictError
from alict_core.common.textsafe import printable, printable_frame


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two saved runs (or two models of one run) per LC and capability",
        description="Per LC and capability: both fail rates with 95 % seed-clustered intervals, the paired "
        "difference B − A with its 95 % interval, and a paired test clustered by seed (exact sign test on seed "
        "groups' net discordance: McNemar's exact test when every group is one case). p-values are corrected "
        "across LCs: marks (* q<0.05, ** q<0.01, *** q<0.001) use Benjamini–Hochberg, --fail-on-regression uses "
        "Holm. Cases that newly fail or newly pass (matched by LC and text). Runs of different tasks are refused.",
    )
    parser.add_argument("run_a", help="run of side A: its folder (written by `run --out`) or its id in the run store")
    parser.add_argument("run_b", nargs="?", default=None,
                        help="run of side B: a folder or a run id (default: run_a, two models)")
    parser.add_argument("--model-a", default=None, help="model of side A (needed when its run has several)")
    parser.add_argument("--model-b", default=None, help="model of side B (needed when its run has several)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the comparison as JSON")
    parser.add_argument("--show", type=int_range(0, 100_000), default=10,
                        help="newly failing / passing cases to print (default 10)")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit 1 when an LC fails significantly more often in B (Holm-corrected p < 0.05 "
                             "across LCs)")
    parser.set_defaults(handler=run)


def _run_folder(value: str, side: str) -> Path:
    """The folder of a run given as a folder path or a run id of the run store (as `report` takes them)."""
    from alict_core.runner.store import saved_run_dir

    folder = saved_run_dir(value, f"run {side}")  # an unknown id, or a store folder holding another run: said
    if not folder.is_dir():
        raise AlictError(f"run {side} {value!r} not found: give a run folder (written by `run --out`) or the id of "
                         "a saved run in the run store")
    return folder


def _load(folder: Path):
    from alict_core.runner import RunResult

    return RunResult.load(folder)


def comparison_document(comparison) -> dict:
    """The comparison as plain JSON (rates in [0, 1]; NaN becomes null)."""
    def records(frame):
        return json.loads(frame.to_json(orient="records"))

    return {"schema": "alict-compare/2", "a": comparison.label_a, "b": comparison.label_b, "note": comparison.note,
            "headline": comparison.headline(), "test": comparison.test,
            "correction": {"significance": comparison.correction, "regression": comparison.gate_correction},
            "lcs": records(comparison.lcs),
            "capabilities": records(comparison.capabilities), "newly_failing": records(comparison.newly_failing),
            "newly_passing": records(comparison.newly_passing),
            # answers scored by each side's fallback label, not its model's (a model that stopped answering)
            "unparsed_answers": {"a": comparison.unparsed_a, "b": comparison.unparsed_b},
            "warnings": [w for w in (comparison.unparsed_warning(),) if w]}


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from alict_core.analysis.compare import compare_runs
    from alict_core.common.manifest import check_output_file

    check_output_file(args.json, "--json")  # before any run is loaded
    from alict_core.commands.run import check_outputs_apart

    folder_a = _run_folder(args.run_a, "A")
    folder_b = _run_folder(args.run_b, "B") if args.run_b else folder_a
    for run_dir in {folder_a, folder_b}:  # --json RUN/meta.json replaced the run's own file
        check_outputs_apart([("--json", args.json)], run_dir)
    run_a = _load(folder_a)
    run_b = _load(folder_b) if args.run_b else run_a
    comparison = compare_runs(run_a, run_b, args.model_a, args.model_b)
    cols = ["lc_id", "capability", "n_a", "rate_a", "n_b", "rate_b", "n_paired", "difference", "diff_low",
            "diff_high", "p_value", "p_bh", "p_holm", "significance", "regression"]
    if comparison.unparsed_warning():
        print(printable(comparison.unparsed_warning().replace("Warning: ", "warning: ", 1)), file=sys.stderr)
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.max_rows", 500):
        if comparison.note:
            print(printable(comparison.note))
        print(printable(f"A = {comparison.label_a}, B = {comparison.label_b}"))
        print(printable_frame(comparison.lcs[cols].round(3)).to_string(index=False))
        print()
        capabilities = comparison.capabilities[["capability", "n_lcs", "rate_a", "rate_b", "difference", "p_value",
                                                "p_bh", "significance"]].round(3)
        print(printable_frame(capabilities).to_string(index=False))
        print(f"\ntest: {comparison.test}; significance marks: {comparison.correction} (* q<0.05, ** q<0.01, "
              f"*** q<0.001); regression (the --fail-on-regression gate): {comparison.gate_correction}, p < 0.05")
        for title, frame in (("newly failing", comparison.newly_failing), ("newly passing", comparison.newly_passing)):
            print(f"\n{len(frame)} {title} cases" + (":" if len(frame) and args.show else ""))
            if len(frame) and args.show:
                shown = printable_frame(frame[["lc_id", "text", "predicted_a", "predicted_b"]].head(args.show))
                print(shown.to_string(index=False))
    print("\n" + printable(comparison.headline()))
    if args.json:
        from alict_core.common.jsonl import atomic_path

        with atomic_path(Path(args.json)) as tmp:
            tmp.write_text(json.dumps(comparison_document(comparison), indent=2) + "\n", encoding="utf-8")
        print(f"comparison written to {args.json}")
    return 1 if args.fail_on_regression and len(comparison.regressions()) else 0
