"""``expand``: syntax-based expansion of the seeds of one or more LCs (masked-LM fills, validated)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from alict_core.commands.args import add_executor_args, executor_options, float_range, holds_out, int_range
from alict_core.common.manifest import lc_file_name
from alict_core.expansion.constraints.fluency import DEFAULT_MIN_WORD_SCORE
from alict_core.tasks import add_task_arg


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "expand",
        help="expand LC seeds with masked-LM fills of grammar-derived slots; writes JSONL",
        description="Find the seeds of each LC, parse them, build masked sentences from the reference grammar, "
        "fill the masks with a masked LM and validate every fill (POS, polarity, LC predicates, protected "
        "spans, the acceptance constraints of docs/expansion.md). Every candidate is written (accepted or not) "
        "with its verdicts; a table per inserted POS shows fills, accepted and (from review judgements) judged "
        "valid.",
    )
    add_task_arg(parser, required=True)
    parser.add_argument("--lc", action="append", default=None, metavar="ID",
                        help="LC id (repeatable); default: every LC of the task")
    parser.add_argument("--max-seeds", type=int_range(1, "max_seeds"), default=None,
                        help="expand only the first N seeds of each LC")
    parser.add_argument("--parser", default=None, help="parser name (default: the resolved default parser)")
    parser.add_argument("--mlm", default=None,
                        help="suggester name (minilm-offline, bert-base-uncased, roberta-base) or a local model folder "
                        "(default: the resolved default masked LM)")
    parser.add_argument("--out", default=None, help="output directory (default: the expansions cache directory)")
    parser.add_argument("--top-k-words", type=int_range(1, 1000), default=10)
    parser.add_argument("--top-k-productions", type=int_range(1, 100), default=5)
    parser.add_argument("--max-masks", type=int_range(1, 100), default=2)
    parser.add_argument("--min-word-score", type=float_range(0.0, 0.99), default=DEFAULT_MIN_WORD_SCORE,
                        help="fluency check: reject a fill the masked LM gives less than this probability "
                        f"(per word; default {DEFAULT_MIN_WORD_SCORE:g}, 0 turns the floor off)")
    parser.add_argument("--max-per-seed", type=int_range(1, 10_000), default=None,
                        help="accepted expansions per seed (default: the spec's)")
    parser.add_argument("--no-cache", action="store_true",
                        help="recompute even if the artefact (or finished shards of a killed run) exists")
    add_executor_args(parser, "seeds per shard: the unit of work, progress and resume (default 100)", 100)
    parser.add_argument("--suite", default=None, metavar="FILE",
                        help="expand an imported suite's MFT cases instead of LC seeds (CheckList .json/.json.gz, "
                        "HateCheck .csv, cases .jsonl); writes <group>.jsonl per suite functionality")
    parser.set_defaults(handler=run)


def load_suggester(name: str | None):
    """A registered suggester, or any local fill-mask model folder through the ``hf`` entry."""
    from alict_core.expansion.sharded import suggester_by_name

    return suggester_by_name(name)


def _shard_progress(lc_id: str, bars: dict[str, Any]) -> Callable[[int, int, str], None]:
    """A progress callback showing one tqdm bar of finished shards for ``lc_id``."""
    from tqdm import tqdm

    def progress(done: int, total: int, stage: str) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(total=total, desc=f"{lc_id} {stage}", leave=False)
        bar.total = total
        bar.n = done
        bar.refresh()

    return progress


@holds_out
def run(args: argparse.Namespace) -> int:
    from alict_core.common.manifest import check_inputs_outside, check_mergeable, check_output_dir
    from alict_core.data.corpus import load_corpus
    from alict_core.executors import get_executor
    from alict_core.lcspec import get_spec, load_task_specs

    check_output_dir(args.out, "--out")
    check_inputs_outside(args.out, [("--suite", args.suite), *(("--seeds", f) for f in getattr(args, "seeds", None)
                                                               or [])], "--out")
    check_mergeable(args.out, OUT_FILES, "--out")  # the folder is swapped whole at the end: refused now, not then
    from alict_core.commands.seeds import check_out_holds_no

    check_out_holds_no(args.out, "seeds", "seeds --out")  # expansions of LC4 would replace its seeds
    if args.suite:
        return run_suite(args)
    specs = [get_spec(args.task, lc) for lc in args.lc] if args.lc else load_task_specs(args.task)
    corpus = load_corpus(args.task)
    # one pool for every LC; an unknown or uninstalled executor fails before any work
    executor = get_executor(args.executor, args.workers, **executor_options(args))
    try:
        _expand_lcs(args, specs, corpus, executor)
    finally:
        executor.close()
    return 0


def _expand_lcs(args: argparse.Namespace, specs: list, corpus: Any, executor: Any) -> None:
    from tqdm import tqdm

    from alict_core.expansion.pos_table import format_pos_table, pos_table
    from alict_core.expansion.sharded import expand_sharded
    from alict_core.seeds import find_seeds

    out_dir = Path(args.out) if args.out else None
    done: list = []
    judged = review_validity()
    all_rows: list[dict[str, Any]] = []
    print(f"{'lc':<20} {'seeds':>6} {'masked':>7} {'suggestions':>11} {'accepted':>8} {'seeds+':>6}  file")
    for spec in specs:
        seeds = find_seeds(spec, corpus).seeds
        if args.max_seeds is not None:
            seeds = seeds[: args.max_seeds]
        bars: dict[str, tqdm] = {}
        result = expand_sharded(seeds, spec, parser=args.parser, mlm=args.mlm,
                                top_k_productions=args.top_k_productions, max_masks=args.max_masks,
                                top_k_words=args.top_k_words, max_per_seed=args.max_per_seed,
                                min_word_score=args.min_word_score, shard_size=args.shard_size, executor=executor,
                                progress=_shard_progress(spec.id, bars), use_cache=not args.no_cache)
        for bar in bars.values():
            bar.close()
        if out_dir is not None:  # a readable copy beside the content-hashed cache artefact, written at the end
            done.append((spec.id, result.path))
        c = result.counts.get(spec.id, {"seeds": len(seeds), "masked": 0, "suggestions": 0, "accepted": 0,
                                        "seeds_expanded": 0})
        print(f"{spec.id:<20} {c['seeds']:>6} {c['masked']:>7} {c['suggestions']:>11} {c['accepted']:>8} "
              f"{c.get('seeds_expanded', 0):>6}  {out_dir / (spec.id + '.jsonl') if out_dir else result.path}")
        print("  rejected: " + format_rejections(c.get("rejected") or {}))
        table = pos_table(result.iter_rows(), judged)
        all_rows.extend(table)
        print(format_pos_table(table))
    if len(specs) > 1:
        print("all LCs:")
        print(format_pos_table(merge_pos_tables(all_rows)))
    if out_dir is not None:
        write_out_folder(out_dir, done)


OUT_FILES = ("*.jsonl", "*.meta.json")  # what an `expand --out` folder holds


def review_validity() -> dict[str, bool]:
    """Judged validity of expansions from the review store, if one exists (never creates one)."""
    import os

    from alict_core.review.store import default_url

    url = default_url()
    if url.startswith("sqlite:///") and not os.path.exists(url[len("sqlite:///"):]):
        return {}
    from alict_core.expansion.pos_table import judged_validity
    from alict_core.review.store import ReviewStore

    return judged_validity(ReviewStore(url, read_only=True).judgements())


def merge_pos_tables(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for e in entries:
        m = merged.setdefault(e["pos"], {"pos": e["pos"], "fills": 0, "accepted": 0, "judged": 0, "valid": 0})
        for k in ("fills", "accepted", "judged", "valid"):
            m[k] += e[k]
    return sorted(merged.values(), key=lambda e: (-e["fills"], e["pos"]))


def write_out_folder(out_dir: Path, results: list) -> None:
    """Every LC's expansions (``(lc_id, artefact path)``) copied into ``out_dir`` at once, with their
    ``.meta.json``: a killed run leaves the previous folder intact."""
    import shutil

    from alict_core.common.manifest import atomic_dir
    from alict_core.expansion.search import meta_path

    with atomic_dir(out_dir, owned=OUT_FILES, merge=True) as tmp:
        for lc_id, path in results:
            shutil.copyfile(path, tmp / f"{lc_id}.jsonl")
            if meta_path(path).exists():
                shutil.copyfile(meta_path(path), meta_path(tmp / f"{lc_id}.jsonl"))


def run_suite(args: argparse.Namespace) -> int:
    """``expand --suite FILE``: the suite's MFT cases as seeds, one expansion file per group."""

    from alict_core.common.errors import AlictError
    from alict_core.expansion import rejection_counts
    from alict_core.expansion.suite import expand_suite
    from alict_core.parsing import get_parser
    from alict_core.suites import import_suite

    if args.lc:
        raise AlictError("--suite expands the suite's own cases; do not combine it with --lc")
    cases = import_suite(args.suite, args.task)
    named: dict[str, str] = {}
    for group in dict.fromkeys(case.lc_id for case in cases):  # `a/b`, `a_b`, `a:b` all became a_b.jsonl: the
        earlier = named.setdefault(lc_file_name(group).lower(), group)  # last group's rows replaced the others'
        if earlier != group:
            raise AlictError(f"--suite: the groups {earlier!r:.60} and {group!r:.60} would both be written to "
                             f"{lc_file_name(group)!r}; rename one of them")
    parser = get_parser(args.parser)
    suggester = load_suggester(args.mlm)
    results = expand_suite(cases, args.task, parser, suggester, max_seeds=args.max_seeds,
                           top_k_productions=args.top_k_productions, max_masks=args.max_masks,
                           top_k_words=args.top_k_words, max_per_seed=args.max_per_seed, use_cache=not args.no_cache)
    from alict_core.expansion.pos_table import format_pos_table, pos_table

    judged = review_validity()
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None and results:  # every group's file at once: a killed run leaves the previous folder
        from alict_core.common.manifest import atomic_dir

        with atomic_dir(out_dir, owned=OUT_FILES, merge=True) as tmp:
            for lc_id, result in results.items():
                result.to_jsonl(tmp / lc_file_name(lc_id))
    print(f"{'group':<40} {'seeds':>6} {'suggestions':>11} {'accepted':>8}  file")
    for lc_id, result in results.items():
        if out_dir is not None:
            result.path = out_dir / lc_file_name(lc_id)
        c = result.counts.get(lc_id, {})
        print(f"{lc_id[:40]:<40} {c.get('seeds', 0):>6} {c.get('suggestions', 0):>11} {c.get('accepted', 0):>8}"
              f"  {result.path}")
        print("  rejected: " + format_rejections(rejection_counts(result.rows)))
        print(format_pos_table(pos_table(result.rows, judged)))
    if not results:
        print("the suite has no MFT cases to expand")
    return 0


def format_rejections(counts: dict[str, int]) -> str:
    """``pos=3, polarity:unknown=1, predicates:length=2`` (a candidate may count under several checks)."""
    return ", ".join(f"{name}={n}" for name, n in counts.items()) or "none"
