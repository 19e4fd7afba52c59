"""``parse``: constituency-parse sentences and show their productions (and optionally Algorithm 1's masks)."""

from __future__ import annotations

import argparse
import json

from alict_core.commands.args import int_range
from alict_core.common.textsafe import printable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="parse sentences (PTB-style tokens separated by spaces) and print trees and productions",
        description="Parse with a registered parser backend. Text is split on whitespace into tokens "
        "(PTB style: n't, 's, -LRB- as separate tokens).",
    )
    parser.add_argument("--text", action="append", required=True, help="a sentence; repeat for several")
    parser.add_argument("--parser", default=None, help="parser backend (default: the resolved default parser)")
    parser.add_argument("--masks", action="store_true", help="also list Algorithm 1's masked sentences")
    parser.add_argument("--top-k", type=int_range(1, 100), default=5,
                        help="reference productions kept per node (with --masks)")
    parser.add_argument("--max-masks", type=int_range(1, 100), default=2,
                        help="masks per sentence at most (with --masks)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from alict_core.common.limits import check_text
    from alict_core.parsing import get_parser, productions
    from alict_core.parsing.trees import to_json

    for i, text in enumerate(args.text, 1):
        check_text(text, f"--text #{i}", "analysis_chars")
    backend = get_parser(args.parser)
    token_lists = [text.split() for text in args.text]
    trees = backend.parse_batch(token_lists)
    grammar = None
    if args.masks:
        from alict_core.grammar import load_reference_grammar

        grammar = load_reference_grammar()
    for i, tree in enumerate(trees):
        masked = []
        if grammar is not None:
            from alict_core.grammar import masked_sentences

            masked = masked_sentences(f"cli-{i}", tree, grammar, top_k=args.top_k, max_masks=args.max_masks)
        if args.json:
            print(json.dumps({"text": args.text[i], "tree": to_json(tree), "productions": productions(tree),
                              "masked": [m.to_dict() for m in masked]}))
            continue
        # a "(" token would make the tree unreadable; the tree's own line breaks are kept, its tokens escaped
        print("\n".join(printable(line) for line in _bracketed(tree).pformat(margin=100).split("\n")))
        for lhs, rhs in productions(tree):
            print(printable(f"  {lhs} -> {' '.join(rhs)}"))
        for m in masked:
            print(f"  [{m.reference_probability:.4f}] {printable(m.text)}   ({' '.join(m.mask_tags)}; "
                  f"{m.seed_production[0]} -> {' '.join(m.seed_production[1])}  =>  "
                  f"{' '.join(m.reference_production[1])})")
    return 0


PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}


def _bracketed(tree):  # type: ignore[no-untyped-def]
    """A copy of ``tree`` whose bracket tokens are written the Penn Treebank way (``-LRB-``), so its printed form
    reads back as one tree."""
    copy = tree.copy(deep=True)
    for position in copy.treepositions("leaves"):
        copy[position] = PTB_BRACKETS.get(copy[position], copy[position])
    return copy
