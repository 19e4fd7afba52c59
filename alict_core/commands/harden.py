"""``harden``: export failing/passing generated cases as training data, retrain a model, prove the fix per LC."""

from __future__ import annotations

import argparse
import json
import sys

from alict_core.commands.args import comma_list, float_range, holds_outputs, int_range
from alict_core.common.errors import AlictError
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "harden", help="retrain a model on generated cases of failing LCs and compare it with its parent",
        description="Close the loop: export a run's cases per LC as train/validation/test data (split so that no "
        "seed, source sentence or text is on both sides, and seeds built from corpus test sentences are only "
        "tested), retrain a model on the original training data mixed with the LC training split (after a leak "
        "check), and compare parent and retrained version on the LC test split, the other LCs and the corpus test "
        "split.",
    )
    sub = parser.add_subparsers(dest="harden_command", metavar="STEP")
    export = sub.add_parser("export", help="write train/validation/test files (JSONL, CSV, HF dataset) of LCs")
    _export_args(export)
    export.set_defaults(handler=run_export)
    train = sub.add_parser("train", help="retrain a model on an export's training split; prints the new version name")
    train.add_argument("--export", required=True, help="folder written by `harden export`")
    _train_args(train)
    train.set_defaults(handler=run_train)
    evaluate = sub.add_parser("evaluate", help="compare a retrained version with its parent")
    evaluate.add_argument("--export", required=True, help="folder written by `harden export`")
    evaluate.add_argument("--version", required=True, help="the version name printed by `harden train`")
    _evaluate_args(evaluate)
    evaluate.set_defaults(handler=run_evaluate)
    fix = sub.add_parser("fix", help="export + train + evaluate in one go")
    _export_args(fix)
    _train_args(fix)
    _evaluate_args(fix)
    fix.set_defaults(handler=run_fix)
    versions = sub.add_parser("versions", help="list retrained model versions")
    add_task_arg(versions)
    versions.set_defaults(handler=run_versions)
    parser.set_defaults(handler=lambda _args: (parser.print_help(), 0)[1])


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", required=True, help="run id (runs store) or run folder")
    p.add_argument("--lcs", required=True, help="comma-separated LC ids of the run to train on (e.g. lc05,lc07)")
    p.add_argument("--out", required=True, help="output folder (created whole, atomically)")
    p.add_argument("--split", default="8:1:1", help="train:validation:test shares of seed groups (default 8:1:1)")
    p.add_argument("--seed", type=int_range(0, 2**31 - 1), default=13, help="seed of the split and of training")
    p.add_argument("--formats", default="jsonl,csv,hf", help="any of jsonl,csv,hf")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out folder")


def _train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="parent model: minilm-sst, minilm-hatexplain, a version, or "
                   "hf (with --hf-dir)")
    p.add_argument("--hf-dir", default=None, help="local Hugging Face model folder (when --model is a HF model)")
    add_task_arg(p, help="task of a HF model")
    p.add_argument("--lc-share", type=float_range(0.01, 0.99), default=None,
                   help="share of LC cases in the training mix (default: all)")
    p.add_argument("--max-original", type=int_range(1, 10**9), default=None, help="cap on original training texts")
    p.add_argument("--max-steps", type=int_range(1, 10**7), default=500,
                   help="step cap for HF fine-tuning (default 500)")
    p.add_argument("--epochs", type=int_range(1, 100), default=1)
    p.add_argument("--batch-size", type=int_range(1, 4096), default=16)
    p.add_argument("--learning-rate", type=float_range(1e-8, 1.0), default=2e-5)
    p.add_argument("--min-test-cases", type=int_range(1, 10**6), default=None,
                   help="refuse to train when a trained LC's test split holds fewer cases (default "
                   "alict_core.harden.guards.MIN_TEST_CASES = 10: fewer cannot show a fix)")
    if not any(a.dest == "seed" for a in p._actions):
        p.add_argument("--seed", type=int_range(0, 2**31 - 1), default=13)


def _evaluate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-other-lcs", action="store_true", help="skip the LCs not used for training")
    p.add_argument("--no-heldout", action="store_true", help="skip the held-out corpus test set")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")


@holds_outputs("out")
def run_export(args: argparse.Namespace, min_test_cases: int | None = None) -> int:
    """Write the export; with ``min_test_cases`` (``fix``) refuse a short test split before writing it."""
    from alict_core.commands.args import refuse_in_run_store
    from alict_core.harden.export import export_hardening_data
    from alict_core.harden.guards import short_test_splits, split_size_message
    from alict_core.harden.split import SplitRatios

    refuse_in_run_store(args.out, "--out")  # an export among the saved runs (report --export refuses it too)
    summary = export_hardening_data(args.run, args.out, lcs=_lcs(args.lcs), ratios=SplitRatios.parse(args.split),
                                    seed=args.seed, formats=_formats(args.formats), overwrite=args.overwrite,
                                    min_test_cases=min_test_cases)
    for split, per_lc in summary.counts.items():
        print(f"{split:>10}: " + ", ".join(f"{lc} {n}" for lc, n in sorted(per_lc.items())))
    short = short_test_splits(summary.counts, summary.lcs)
    if short:
        print(f"note: {split_size_message(short)}; `harden train` refuses such an export")
    if summary.untrainable:
        print("cases without a single expected label (kept for testing, not trained on): "
              + ", ".join(f"{lc} {n}" for lc, n in sorted(summary.untrainable.items())))
    print(f"export of run {summary.run_id} written to {summary.out_dir}")
    return 0


def _lcs(text: str) -> list[str]:
    items = comma_list(text, "--lcs")
    if not items:
        raise AlictError("--lcs is empty: name at least one LC of the run")
    return items


def _formats(text: str) -> list[str]:
    return comma_list(text, "--formats")


def _settings(args: argparse.Namespace):
    from alict_core.training.retrain import RetrainSettings

    return RetrainSettings(seed=args.seed, lc_share=args.lc_share, epochs=args.epochs, batch_size=args.batch_size,
                           learning_rate=args.learning_rate, max_steps=args.max_steps, max_original=args.max_original)


def _train(args: argparse.Namespace, export_dir: str) -> str:
    from tqdm import tqdm

    from alict_core.training.retrain import retrain_embedded, retrain_hf

    bar = tqdm(total=0, file=sys.stderr, unit="step")

    def progress(done: int, total: int, message: str) -> None:
        bar.total, bar.n = total, done
        bar.set_description(message[:40])
        bar.refresh()

    try:
        if args.hf_dir:
            if not args.task:
                raise AlictError("--task is required with --hf-dir")
            return retrain_hf(args.model, args.hf_dir, args.task, export_dir, settings=_settings(args),
                              progress=progress, min_test_cases=args.min_test_cases)
        return retrain_embedded(args.model, export_dir, settings=_settings(args), progress=progress,
                                min_test_cases=args.min_test_cases)
    finally:
        bar.close()


def run_train(args: argparse.Namespace) -> int:
    name = _train(args, args.export)
    print(f"retrained version: {name}")
    return 0


def _print_comparison(comparison, as_json: bool) -> None:
    if as_json:
        print(json.dumps(comparison.to_dict(), indent=2))
        return
    import pandas as pd

    table = comparison.lcs.copy()
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3).to_string(index=False))
    from alict_core.harden.evaluate import paired_tests, regression_note, regression_text, regressions

    tests = paired_tests()
    print(f"before/after on the same cases: {tests['lcs']}; {tests['correction']}")
    for who, scores in comparison.heldout.items():
        print(f"held-out {who}: accuracy {scores['accuracy']:.4f}, macro-F1 {scores['macro_f1']:.4f} (n={scores['n']})")
    if comparison.heldout_test:
        paired = comparison.heldout_test
        print(f"held-out accuracy change: {paired['newly_right']} texts newly right, {paired['newly_wrong']} newly "
              f"wrong, {tests['heldout']}: p = {paired['p_value']:.3g}")
    checks = comparison.checks
    if checks.get("leak_check"):
        leak = checks["leak_check"]
        print(f"leak check: {leak['leaking']} of {leak['n_training']} LC training texts equal or share a source "
              f"sentence with an evaluation text")
    if checks.get("other_lc_cases_excluded_for_overlap"):
        print(f"other LCs: {checks['other_lc_cases_excluded_for_overlap']} cases left out (they share a text or "
              "source sentence with the LC training split)")
    if checks.get("heldout_texts_excluded_as_training_texts"):
        print(f"corpus test split: {checks['heldout_texts_excluded_as_training_texts']} texts left out (equal to a "
              "training text)")
    for item in regressions(comparison.to_dict()):
        note = regression_note(item)
        print(f"worse after hardening: {regression_text(item)}" + (f" ({note})" if note else ""))
    print(comparison.headline())


def run_evaluate(args: argparse.Namespace) -> int:
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.harden.versions import version_info

    parent = version_info(args.version)["parent"]
    comparison = evaluate_versions(parent, args.version, args.export, include_other_lcs=not args.no_other_lcs,
                                   use_heldout=not args.no_heldout)
    _print_comparison(comparison, args.json)
    return 0


def run_fix(args: argparse.Namespace) -> int:
    from alict_core.commands.args import refuse_in_run_store
    from alict_core.harden.guards import minimum_test_cases
    from alict_core.training.retrain import check_retrain_parent

    refuse_in_run_store(args.out, "--out")  # before the model is loaded or the run read
    check_retrain_parent(args.model, args.hf_dir, args.task)  # a bad --model refused before the export is written
    _check_fix_task(args)  # a run of another task than the model's: refused before the export is written
    run_export(args, min_test_cases=minimum_test_cases(args.min_test_cases))  # a short test split: nothing written
    name = _train(args, args.out)
    print(f"retrained version: {name}")
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.harden.versions import version_info

    comparison = evaluate_versions(version_info(name)["parent"], name, args.out,
                                   include_other_lcs=not args.no_other_lcs, use_heldout=not args.no_heldout)
    _print_comparison(comparison, args.json)
    return 0


def _check_fix_task(args: argparse.Namespace) -> None:
    """Refuse ``harden fix`` of LCs of another task than the parent model's before anything is written (the export
    was written, then training refused its labels)."""
    from alict_core.harden.export import resolve_run, run_rows

    if args.hf_dir:
        model_task = args.task
    else:
        from alict_core.models.registry import get_model

        model_task = (getattr(get_model(args.model), "meta", None) or {}).get("task")
    _, rows = run_rows(resolve_run(args.run), _lcs(args.lcs))
    tasks = sorted({str(r["task"]) for r in rows if r.get("task")})
    if model_task and tasks and model_task not in tasks:
        raise AlictError(f"model {args.model!r} is for task {model_task}, but the LCs {args.lcs!r} of run {args.run!r} "
                         f"are of task {', '.join(tasks)}: retrain a model of that task; nothing was written")


def run_versions(args: argparse.Namespace) -> int:
    from alict_core.harden.versions import list_versions

    versions = list_versions(args.task)
    if not versions:  # an empty answer read as a failure
        print("no retrained model versions" + (f" of task {args.task}" if args.task else "")
              + "; `harden train` makes one", file=sys.stderr)
    for info in versions:
        print(f"{info['name']}\tparent={info['parent']}\ttask={info['task']}\tlcs={','.join(info['lcs'])}\t"
              f"created={info['created']}")
    return 0
