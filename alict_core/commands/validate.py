"""``validate``: automatic validity checks on an LC suite's seeds and expansions (counts per LC and reason)."""

from __future__ import annotations

import argparse
import json
import sys

from alict_core.commands.args import int_range
from alict_core.common.errors import AlictError
from alict_core.common.textsafe import printable
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate", help="flag invalid generated cases (double negation, broken joins, duplicates, bad expansions)",
        description="Generate (or read) the seeds of each LC and check them and their accepted expansions: "
        "double negation, repeated words, broken joins, duplicates within an LC, polar or unknown inserted "
        "words, expansions failing their LC. Flagged cases are excluded from `run` unless --keep-flagged.",
    )
    add_task_arg(parser, required=True)
    parser.add_argument("--lc", action="append", default=None, help="LC id (repeatable; default: every LC)")
    parser.add_argument("--max-seeds", type=int_range(1, "max_seeds"), default=None,
                        help="cap on seeds per LC (default: the spec's)")
    parser.add_argument("--seeds", action="append", default=[], help="seed JSONL file(s) instead of the corpus search")
    parser.add_argument("--expansions", action="extend", nargs="+", default=[],
                        help="expansions JSONL file(s) or folder(s) of them (accepted rows are checked)")
    parser.add_argument("--show", type=int_range(0, 100_000), default=5,
                        help="print this many flagged cases per LC (0: none)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from alict_core.cases.testcases import build_cases
    from alict_core.cases.validity import format_summary, validate
    from alict_core.lcspec import load_task_specs
    from alict_core.plan.inputs import (
        check_expansions_used,
        lc_seeds,
        read_expansion_rows,
        selected_specs,
        wanted_seeds,
    )

    expansions = read_expansion_rows(args.expansions, args.task)
    seeds = lc_seeds(args.task, args.lc, args.max_seeds, args.seeds, wanted_seeds(expansions))
    chosen = selected_specs(args.task, args.lc)
    check_expansions_used(expansions, seeds, chosen)
    if not seeds and not expansions:  # "0 flagged cases" of nothing read as a clean suite
        raise AlictError("nothing to validate: the seeds given hold no seed" if args.seeds else
                         "nothing to validate: the LCs chosen have no seeds")
    specs = {s.id: s for s in load_task_specs(args.task)}
    build_cases(seeds, expansions)  # what `run` refuses (an INV seed with nothing to compare, ids twice) is said here
    report = validate(seeds, expansions, task=args.task, specs=specs)
    seeded = {str(seed["lc_id"]) for seed in seeds}
    for lc_id in chosen:  # as `run` says it: an LC asked for without a seed is in no count below
        if lc_id not in seeded:
            print(f"warning: {lc_id} has no seed " + ("in the --seeds files" if args.seeds else "in the corpus"),
                  file=sys.stderr)
    if args.json:
        print(json.dumps({"summary": report.summary(), "n_flagged": len(report.flagged_ids)}, indent=2))
        return 0
    print(format_summary(report))
    texts = {str(s["id"]): s["text"] for s in seeds} | {str(r.get("id")): r["text"] for r in expansions if "text" in r}
    shown: dict[str, int] = {}
    for flag in report.flags:
        if shown.get(flag.lc_id, 0) >= args.show:
            continue
        shown[flag.lc_id] = shown.get(flag.lc_id, 0) + 1
        text = printable(texts.get(flag.case_id, flag.case_id)[:150])  # a text's terminal escapes, escaped
        print(f"  {flag.lc_id} {flag.reason} ({printable(flag.detail)}): {text}")
    print(f"{len(report.flagged_ids)} flagged cases (excluded from `run` unless --keep-flagged)")
    return 0
