"""``seeds``: find the seed tests of each LC spec on the task's corpus."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from alict_core.commands.args import holds_out, int_range
from alict_core.common.errors import AlictError
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "seeds",
        help="find seed tests for the LC specs of a task (table of LC -> matches, seeds; JSONL files)",
        description="Search the task's corpus (SST for sentiment, HateXplain for hate_speech) with each LC spec, "
        "apply its generative rules and write one JSONL file of seeds per LC.",
    )
    add_task_arg(parser, required=True)
    parser.add_argument("--lc", action="append", help="LC id (e.g. sentiment-lc04, lc4 or 4); repeatable; default: all")
    parser.add_argument("--spec", type=Path, action="append",
                        help="a spec YAML file to use instead of the shipped ones")
    parser.add_argument("--max", type=int_range(1, "max_seeds"), default=None,
                        help="cap on seeds per LC (default: the spec's sampling.max_seeds)")
    parser.add_argument("--all", action="store_true",
                        help="no cap: every candidate seed (cross-products can reach 10^5)")
    parser.add_argument("--seed", type=int_range(0, 2**32 - 1), default=None,
                        help="sampling seed (default: the spec's)")
    parser.add_argument("--out", type=Path, default=Path("out/seeds"),
                        help="output directory for <lc>.jsonl (default out/seeds)")
    parser.add_argument("--json", action="store_true", help="print machine-readable counts instead of a table")
    parser.set_defaults(handler=run)


OUT_FILES = ("*.jsonl",)  # what a `seeds --out` folder holds: <lc>.jsonl per LC


def check_out_holds_no(folder: str | None, kind: str, command: str) -> None:
    """Refuse an ``--out`` folder holding another command's ``<lc>.jsonl`` files (``kind`` "seeds" or
    "expansions", told by their first row): same names, so one would silently replace the other."""
    if not folder or not Path(folder).is_dir():
        return
    for path in sorted(Path(folder).glob("*.jsonl")):
        try:
            with open(path, encoding="utf-8") as handle:
                first = next((line for line in handle if line.strip()), "")
            row = json.loads(first) if first else {}
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue  # not ours to judge: check_mergeable and the readers say what is wrong with it
        found = "expansions" if isinstance(row, dict) and "seed_id" in row else "seeds"
        if isinstance(row, dict) and row and found == kind:
            raise AlictError(f"--out {str(folder)!r} holds {kind} ({path.name}, written by `{command}`); this "
                             "command's files have the same names and would replace them: choose another folder")


def check_out_task(folder: str | None, task: str) -> None:
    """Refuse an ``--out`` folder holding another task's LC files (``hate_speech-lc03.jsonl`` among sentiment
    seeds): a merge made one folder of two tasks without a word (pass 37)."""
    from alict_core.tasks import TASKS

    if not folder or not Path(folder).is_dir():
        return
    for path in sorted(Path(folder).glob("*.jsonl")):
        other = next((name for name in TASKS if name != task and path.stem.startswith(f"{name}-")), None)
        if other is not None:
            raise AlictError(f"--out {str(folder)!r} holds LC files of task {other} ({path.name}); a folder of seeds "
                             f"is of one task: choose another folder for {task}")


def selected_specs(task: str, lc_ids: list[str] | None, spec_files: list[Path] | None):
    from alict_core.lcspec import get_spec, load_spec, load_task_specs

    if spec_files:
        specs = [load_spec(p) for p in spec_files]
        by_id: dict[str, Path] = {}
        for path, spec in zip(spec_files, specs, strict=True):  # two files of one LC: its seeds twice, one lost
            if spec.id in by_id:
                raise AlictError(f"--spec {str(path)!r} and {str(by_id[spec.id])!r} both hold spec {spec.id!r}; "
                                 "give each LC once")
            by_id[spec.id] = path
        if lc_ids:  # `--spec x.yaml --lc lc4` wrote x's seeds without a word: --lc picks among the given specs
            wanted = {get_spec(task, lc).id if not any(s.id == lc for s in specs) else lc for lc in lc_ids}
            missing = sorted(wanted - set(by_id))
            if missing:
                raise AlictError(f"--lc {missing[0]} is not among the --spec files given ({', '.join(sorted(by_id))});"
                                 " give its spec file, or leave --lc out")
            specs = [spec for spec in specs if spec.id in wanted]
        return specs
    if lc_ids:
        return [get_spec(task, lc) for lc in lc_ids]
    return load_task_specs(task)


@holds_out
def run(args: argparse.Namespace) -> int:
    from alict_core.common.manifest import atomic_dir, check_inputs_outside, check_mergeable, check_output_dir
    from alict_core.data.corpus import load_corpus
    from alict_core.seeds import find_seeds

    if args.all and args.max is not None:  # --max was ignored without a word
        raise AlictError("--all takes every candidate seed and --max caps them: give one of the two")
    check_output_dir(args.out, "--out")
    check_inputs_outside(args.out, [("--spec", str(path)) for path in getattr(args, "spec", None) or []], "--out")
    check_mergeable(args.out, OUT_FILES, "--out")
    check_out_holds_no(args.out, "expansions", "expand --out")
    check_out_task(args.out, args.task)
    specs = selected_specs(args.task, args.lc, args.spec)
    bar = tqdm(total=1, desc=f"annotating {args.task} corpus (cached after the first run)", disable=args.json,
               file=sys.stderr)

    def annotate_progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        corpus = load_corpus(args.task, progress=annotate_progress)
    finally:
        bar.close()
    cap = None if args.all else (args.max if args.max is not None else "spec")
    rows = []
    with atomic_dir(args.out, owned=OUT_FILES, merge=True) as staging:  # every LC's file at once: old or new
        for spec in tqdm(specs, desc="seeds", disable=args.json, file=sys.stderr):
            seed_set = find_seeds(spec, corpus, max_seeds=cap, seed=args.seed)
            seed_set.write(staging / f"{spec.id}.jsonl")
            rows.append(seed_set.counts())
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'LC':<18} {'matches':>8} {'candidates':>11} {'seeds':>7}  title")
    titles = {s.id: s.title for s in specs}
    for row in rows:
        print(f"{row['lc_id']:<18} {row['matches']:>8} {row['candidates']:>11} {row['seeds']:>7}  "
              f"{titles[row['lc_id']]}")
    print(f"seeds written to {args.out}/<lc>.jsonl")
    return 0
