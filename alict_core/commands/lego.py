"""``lego``: NLPLego derivation trees and DIR tests from seeds (a file, an LC's seeds or a corpus sample)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from alict_core.commands.args import holds_out
from alict_core.common.errors import AlictError
from alict_core.tasks import TASKS, add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    from alict_core.commands.args import float_range, int_range
    from alict_core.lego.settings import LegoSettings

    defaults = LegoSettings()
    parser = subparsers.add_parser(
        "lego",
        help="NLPLego: disassemble seeds into templates + adjuncts, reassemble derivation trees, make DIR tests",
        description="Remove the adjuncts of each seed sentence, re-insert them one level at a time (mutated with "
        "WordNet synonyms and masked-LM fills), and turn every tree edge into a DIR test (see docs/lego.md). "
        "Writes trees.jsonl, cases.jsonl (usable as `run --suite`) and meta.json; with --models also runs them.",
    )
    add_task_arg(parser, required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--seeds", metavar="FILE", help="seed sentences: .jsonl with 'text' (and 'id'), or one per line"
    )
    source.add_argument("--lc", metavar="ID", help="use the seeds ALiCT finds for this LC")
    source.add_argument(
        "--corpus-sample", type=int_range(1, "max_seeds"), metavar="N",
        help="N random full sentences of the task's test split"
    )
    parser.add_argument("--max-seeds", type=int_range(1, "max_seeds"), default=None,
                        help="cap on seeds (with --seeds / --lc)")
    parser.add_argument(
        "--judge",
        default=None,
        help="model labelling inserted components (default: the first --models, else minilm-sst / minilm-hatexplain)",
    )
    parser.add_argument("--models", default=None, help="comma-separated models to run the cases through")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="allow pickle/joblib models (sklearn:path=...) in --models and --judge: unpickling runs "
                        "code; only for files you created or trust")
    parser.add_argument("--mlm", default=None,
                        help="masked-LM suggester name or local model folder (default: the resolved default)")
    parser.add_argument(
        "--parser", default=None, help="constituency parser for SBAR clauses (default: the resolved default parser)"
    )
    parser.add_argument("--no-constituency", action="store_true", help="adjuncts from the dependency parse only")
    parser.add_argument("--breadth", type=int_range(1, 20), default=defaults.breadth,
                        help="children per node per level (original + mutations)")
    parser.add_argument("--max-nodes", type=int_range(1, 2000), default=defaults.max_nodes, help="nodes per tree")
    parser.add_argument("--max-adjuncts", type=int_range(0, 20), default=defaults.max_adjuncts)
    parser.add_argument("--mlm-top-k", type=int_range(0, 50), default=defaults.mlm_top_k,
                        help="fills per word; 0 turns the masked LM off")
    parser.add_argument("--threshold", type=float_range(0.0, 1.0), default=defaults.threshold,
                        help="DIR tolerance (the paper's 0.1)")
    parser.add_argument("--seed", type=int_range(0, 2**32 - 1), default=defaults.seed)
    parser.add_argument("--out", default=None, help="output folder (default: cache dir lego/<key>)")
    parser.set_defaults(handler=run)


def _seeds(args: argparse.Namespace) -> list:
    from alict_core.lego import pipeline

    if args.seeds:
        seeds = pipeline.seeds_from_file(args.seeds, args.task)
    elif args.lc:
        from alict_core.plan import lc_seeds

        seeds = pipeline.seeds_from_rows(lc_seeds(args.task, [args.lc], args.max_seeds, []))
    else:
        seeds = pipeline.seeds_from_corpus(args.task, args.corpus_sample, seed=args.seed)
    if args.max_seeds is not None:
        seeds = seeds[: args.max_seeds]
    if not seeds:
        raise AlictError("no seed sentences to disassemble")
    return seeds


def _settings(args: argparse.Namespace):
    from pydantic import ValidationError

    from alict_core.lego.settings import LegoSettings

    if args.no_constituency and args.parser is not None:  # else the parser given was never used, without a word
        raise AlictError("--parser names the constituency parser, which --no-constituency turns off: give one of them")
    if args.mlm_top_k == 0 and args.mlm is not None:  # else the masked LM given was never used, without a word
        raise AlictError("--mlm names the masked LM, which --mlm-top-k 0 turns off: give one of them")

    try:
        return LegoSettings(
            breadth=args.breadth,
            max_nodes=args.max_nodes,
            max_adjuncts=args.max_adjuncts,
            mlm_top_k=args.mlm_top_k,
            threshold=args.threshold,
            seed=args.seed,
            use_constituency=not args.no_constituency,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise AlictError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None


def default_judge(task: str) -> str:
    return TASKS[task].offline_model


def _check_judge(judge: str | None, task: str, trust: bool) -> None:
    """``--judge`` names one model, checked as ``--models`` is (a second model was dropped without a word; pass 39)."""
    from alict_core.models.refs import model_refs

    judges = model_refs(judge, task, trust, "--judge") if judge else []
    if len(judges) > 1:
        raise AlictError(f"--judge names {len(judges)} models; lego takes one judge")


@holds_out
def run(args: argparse.Namespace) -> int:
    from alict_core.commands.args import model_input_paths
    from alict_core.commands.expand import load_suggester
    from alict_core.common.config import artefact_dir
    from alict_core.common.manifest import check_inputs_outside, check_mergeable, check_output_dir
    from alict_core.lego import pipeline
    from alict_core.models.protocol import model_fingerprint
    from alict_core.models.refs import model_refs, resolve_models

    check_output_dir(args.out, "--out")  # the folder is swapped in whole at the end: refused now, not then
    check_inputs_outside(args.out, [("--seeds", args.seeds), *model_input_paths(args.models, "--models"),
                                    *model_input_paths(args.judge, "--judge")], "--out")
    check_mergeable(args.out, pipeline.SAVED_FILES, "--out")
    settings = _settings(args)
    trust = args.trust_pickle
    if args.models:  # a model named twice (or not for this task) is refused before the seeds are read
        model_refs(args.models, args.task, trust)
    _check_judge(args.judge, args.task, trust)
    seeds = _seeds(args)  # the user's input is checked before any model is loaded
    models = resolve_models(args.models, args.task, trust) if args.models else []
    judge = resolve_models(args.judge, args.task, trust)[0] if args.judge else (
        models[0] if models else resolve_models(default_judge(args.task), args.task)[0])
    parser = None
    if settings.use_constituency:
        from alict_core.parsing import get_parser

        parser = get_parser(args.parser)
    suggester = load_suggester(args.mlm) if settings.mlm_top_k > 0 else None
    fingerprints = {
        "parser": getattr(parser, "fingerprint", ""),
        "mlm": getattr(suggester, "fingerprint", ""),
        "judge": model_fingerprint(judge),
    }
    key = pipeline.artefact_key(seeds, settings, args.task, fingerprints)
    folder = Path(args.out) if args.out else artefact_dir("lego") / key
    from tqdm import tqdm

    bar = tqdm(total=len(seeds), unit="seed", file=sys.stderr, desc="trees")

    def progress(done: int, total: int) -> None:
        bar.n = done
        bar.refresh()

    try:
        trees = pipeline.generate_trees(seeds, settings, parser=parser, suggester=suggester, progress=progress)
    finally:
        bar.close()
    cases = pipeline.make_cases(trees, args.task, judge, settings)
    result = pipeline.LegoResult(trees, cases)
    pipeline.save(
        result,
        folder,
        {
            "key": key,
            "task": args.task,
            "judge": judge.name,
            "settings": settings.model_dump(),
            "fingerprints": fingerprints,
        },
    )
    counts = result.counts()
    print(
        f"{counts['trees']} trees, {counts['nodes']} nodes ({counts['generated']} generated sentences), "
        f"{counts['dir_tests']} DIR tests (judge {judge.name}) saved to {folder}"
    )
    if models and not cases:  # a run of no case has nothing to save (it failed with an internal KeyError)
        print("no DIR test came out of these seeds, so no model was run (nothing to test); try more seeds or "
              "other settings", file=sys.stderr)
    elif models:
        from alict_core.review.writeback import RejectionFilter
        from alict_core.runner import run_suite

        run = run_suite(cases, models, exclude=RejectionFilter())
        out = run.save(None)
        summary = run.summary()
        for _, row in summary.iterrows():
            print(f"{row.model}: {int(row.n_seeds + row.n_expansions)} DIR tests, fail rate {row.fail_rate:.3f}")
        print(f"run {run.run_id} saved to {out}")
    return 0
