"""NLPLego figures: trees, nodes, DIR tests and failures per model; throughput vs the raw masked-LM forward;
diversity and fail rates next to ALiCT's expansions of the same seeds.

    python benchmarks/lego.py [--task sentiment] [--seeds 100] [--lc LC4 --lc-seeds 20] [--no-parser]

Part 1 (``--seeds`` full sentences of the task's test split): generated sentences per second end to end
(spaCy, constituency parser, WordNet, masked LM, POS check) and the raw batched masked-LM forward on the
masked texts the generator sent (``forward_only``, best of two), with their ratio; then, per embedded model,
the paper's setting: that model judges the inserted components and is tested (DIR, threshold 0.1).
Part 2 (``--lc``): the seeds ALiCT finds for that LC, expanded by ALiCT and by NLPLego; Self-BLEU,
syntactic diversity (distinct productions of the project's parser) and fail rates of both.
Prints plain text and a Markdown table; ratios, never pass/fail.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

MODELS = {
    "sentiment": ["minilm-sst", "vader", "textblob"],
    "hate_speech": ["minilm-hatexplain", "hatesonar", "profanity-check"],
}


class RecordingSuggester:
    """Passes every call through and keeps the masked texts, to time the raw forward on the same inputs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.name, self.fingerprint = inner.name, inner.fingerprint

    def suggest(self, masked_texts: list[str], top_k: int = 10):
        self.texts.extend(masked_texts)
        return self.inner.suggest(masked_texts, top_k=top_k)


def per_model_failures(trees: list, task: str, models: list[str], threshold: float) -> list[dict[str, Any]]:
    """The paper's setting: each model judges the components and is tested on its own relation."""
    from alict_core.lego.oracles import tree_cases
    from alict_core.models import get_model
    from alict_core.runner import run_suite

    rows = []
    for name in models:
        model = get_model(name)
        cases = tree_cases(trees, task, model, threshold=threshold)
        failed = 0
        if cases:
            outcome = run_suite(cases, [model]).outcomes[0]
            failed = int((~outcome.passed).sum())
        rows.append(
            {
                "model": name,
                "dir_tests": len(cases),
                "failures": failed,
                "fail_rate": failed / len(cases) if cases else 0.0,
            }
        )
    return rows


def part_one(opts: argparse.Namespace, parser: Any, suggester: Any) -> None:
    from alict_core.lego.pipeline import generate_trees, seeds_from_corpus
    from alict_core.lego.settings import LegoSettings

    seeds = seeds_from_corpus(opts.task, opts.seeds, seed=opts.seed)
    settings = LegoSettings(
        max_nodes=opts.max_nodes, mlm_top_k=5 if suggester else 0, use_constituency=parser is not None
    )
    generate_trees(seeds[:2], settings, parser=parser, suggester=suggester)  # warm-up outside the timed region
    recorder = RecordingSuggester(suggester) if suggester else None
    if suggester is not None and hasattr(suggester, "clear_cache"):
        suggester.clear_cache()
    started = time.perf_counter()
    trees = generate_trees(seeds, settings, parser=parser, suggester=recorder)
    seconds = time.perf_counter() - started
    generated = sum(len(t.nodes) - 1 for t in trees)
    print(f"== part 1: {len(seeds)} {opts.task} test sentences, settings {settings.model_dump()}")
    adjuncts = sum(len(t.disassembly["adjuncts"]) for t in trees)
    single = sum(len(t.nodes) == 1 for t in trees)
    print(f"trees {len(trees)}  nodes {sum(len(t.nodes) for t in trees)}  generated sentences {generated}  "
          f"adjuncts {adjuncts}  one-node trees {single}")
    print(f"NLPLego end to end : {seconds:7.2f} s  {generated / seconds:7.1f} generated sentences/s")
    if recorder is not None and recorder.texts:
        raw = float("inf")
        for _ in range(2):
            begin = time.perf_counter()
            suggester.forward_only(recorder.texts)
            raw = min(raw, time.perf_counter() - begin)
        n_masked = len(recorder.texts)
        print(f"raw batched MLM    : {raw:7.2f} s  {n_masked / raw:7.1f} masked sentences/s ({n_masked} masked texts)")
        print(
            f"generated sentences/s ÷ raw masked sentences/s: {(generated / seconds) / (n_masked / raw):.2f}; "
            f"masked texts/s in the pipeline ÷ raw: {(n_masked / seconds) / (n_masked / raw):.2f}"
        )
    rows = per_model_failures(trees, opts.task, MODELS[opts.task], settings.threshold)
    print("\n| model | DIR tests | failures | fail rate |\n|---|---|---|---|")
    for row in rows:
        print(f"| {row['model']} | {row['dir_tests']} | {row['failures']} | {row['fail_rate']:.3f} |")


def part_two(opts: argparse.Namespace, parser: Any, suggester: Any) -> None:
    from alict_core.data.corpus import load_corpus
    from alict_core.expansion import expand
    from alict_core.lcspec import get_spec
    from alict_core.lego.pipeline import LegoSeed, generate_trees
    from alict_core.lego.settings import LegoSettings
    from alict_core.metrics import self_bleu, syntactic_diversity
    from alict_core.models import get_model
    from alict_core.runner import build_cases, run_suite
    from alict_core.seeds import find_seeds

    spec = get_spec(opts.task, opts.lc)
    seeds = find_seeds(spec, load_corpus(opts.task)).seeds[: opts.lc_seeds]
    alict = expand(seeds, spec, parser, suggester, use_cache=True)
    alict_rows = [
        r for r in (row if isinstance(row, dict) else row.to_dict() for row in alict.rows) if r.get("accepted")
    ]
    alict_texts = [r["text"] for r in alict_rows]
    settings = LegoSettings(max_nodes=opts.max_nodes)
    trees = generate_trees([LegoSeed(s.id, s.text) for s in seeds], settings, parser=parser, suggester=suggester)
    lego_texts = list(dict.fromkeys(n.text for t in trees for n in t.nodes if n.text != t.seed))
    models = [get_model(m) for m in MODELS[opts.task]]
    alict_result = run_suite(build_cases([s.to_dict() for s in seeds], alict_rows), models)
    alict_fail = {
        o.name: float((~o.passed[[c.kind == "expansion" for c in alict_result.case_list]]).mean())
        if any(c.kind == "expansion" for c in alict_result.case_list)
        else 0.0
        for o in alict_result.outcomes
    }
    lego_fail = {r["model"]: r["fail_rate"] for r in per_model_failures(trees, opts.task, MODELS[opts.task], 0.1)}

    def diversity(texts: list[str]) -> str:
        if not texts:
            return "n/a"
        parsed = parser.parse_batch([t.split() for t in texts])
        d = syntactic_diversity(parsed)
        return f"{d['distinct_productions']} ({d['per_text']:.2f}/text)"

    print(f"\n== part 2: {len(seeds)} seeds of {spec.id}")
    print(
        "| generator | sentences | Self-BLEU (lower = more diverse) | distinct productions | "
        + " | ".join(f"fail {m}" for m in MODELS[opts.task])
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(MODELS[opts.task]))
    for name, texts, fails in (("ALiCT expansions", alict_texts, alict_fail), ("NLPLego trees", lego_texts, lego_fail)):
        print(
            f"| {name} | {len(texts)} | {self_bleu(texts):.3f} | {diversity(texts)} | "
            + " | ".join(f"{fails.get(m, 0.0):.3f}" for m in MODELS[opts.task])
            + " |"
        )


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--task", default="sentiment", choices=list(MODELS))
    args.add_argument("--seeds", type=int, default=100)
    args.add_argument("--seed", type=int, default=0)
    args.add_argument("--max-nodes", type=int, default=20)
    args.add_argument("--lc", default=None, help="also compare with ALiCT on this LC's seeds")
    args.add_argument("--lc-seeds", type=int, default=20)
    args.add_argument("--no-parser", action="store_true")
    args.add_argument("--no-mlm", action="store_true")
    args.add_argument("--threads", type=int, default=1)
    opts = args.parse_args()

    import torch

    torch.set_num_threads(opts.threads)
    from alict_core.mlm import get_suggester
    from alict_core.parsing import get_parser

    parser = None if opts.no_parser else get_parser()
    suggester = None if opts.no_mlm else get_suggester()
    if opts.seeds:
        part_one(opts, parser, suggester)
    if opts.lc:
        part_two(opts, parser, suggester)


if __name__ == "__main__":
    main()
