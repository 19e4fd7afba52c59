"""``fidelity``: per LC, our seed and expansion counts beside the paper's, with the validity-check counts."""

from __future__ import annotations

import argparse
import json
import sys

from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fidelity", help="compare each LC's seed / expansion counts with the paper's (TOSEM Tables 8/9)",
        description="Count the seeds every LC spec yields on the whole corpus, beside the paper's counts, and "
        "run the validity checks on the sampled seeds (and on expansions, when given).",
    )
    add_task_arg(parser, required=True)
    parser.add_argument("--lc", action="append", default=None, help="LC id (repeatable; default: every LC)")
    parser.add_argument("--expansions", action="extend", nargs="+", default=[],
                        help="expansions JSONL file(s) or folder(s) of them, e.g. the --out of `expand`")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a Markdown table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from alict_core.analysis.fidelity import as_records, fidelity_rows, markdown_table
    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec import get_spec, load_task_specs
    from alict_core.plan.inputs import read_expansion_rows

    expansions = read_expansion_rows(args.expansions, args.task)  # checked before the corpus is loaded
    specs = [get_spec(args.task, lc) for lc in args.lc] if args.lc else load_task_specs(args.task)
    corpus = load_corpus(args.task)
    rows = fidelity_rows(specs, corpus, expansions,
                         progress=None if args.json else lambda lc: print(f"counting {lc} …", file=sys.stderr))
    if args.json:
        print(json.dumps(as_records(rows), indent=2))
    else:
        print(markdown_table(rows))
    return 0
