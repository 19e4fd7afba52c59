"""Benchmark: contributions + a masking template for one sentence on the embedded MiniLM model.

Goal (issue #5): LEMNA contributions and an Algorithm 2 template with N = 1,000 in <= 15 s on 2 cores.
Prints per-sentence timings, the ratio to the goal, and how much the cache (dedupe) and the early stop save
against a naive implementation (every sample sent to the model, N samples at every step).

    python benchmarks/explain.py [--sentences 5] [--method lemna] [--samples 500] [--template-samples 1000]

Uses ``get_model("minilm-sst")`` when built (``python -m alict_core build models``); otherwise it fits a
quick logistic head on a slice of SST train embeddings (same encoder, so the same speed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

GOAL_SECONDS = 15.0


def load_model(name: str, n_train: int):
    from alict_core.common.errors import ArtefactMissingError
    from alict_core.models import get_model

    try:
        return get_model(name), f"{name} (registry)"
    except ArtefactMissingError:
        if name != "minilm-sst":
            raise
    from sklearn.linear_model import LogisticRegression

    from alict_core.common.jsonl import write_json
    from alict_core.data.records import SENTIMENT_LABELS
    from alict_core.data.sst import load_sst_sentences
    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.models.encoder import shared_encoder

    rows = [r for r in load_sst_sentences(("train",))][:n_train]
    encoder = shared_encoder()
    x = encoder.encode([r.text for r in rows])
    y = np.array([SENTIMENT_LABELS.index(r.label) for r in rows])
    clf = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    head = Path(tempfile.mkdtemp(prefix="alict-bench-head-"))
    np.savez(head / "head.npz", weight=clf.coef_.astype(np.float32), bias=clf.intercept_.astype(np.float32))
    write_json(head / "meta.json", {"labels": list(SENTIMENT_LABELS)})
    description = f"MiniLM + quick head on {n_train} SST train sentences"
    return EmbeddingHeadModel("minilm-sst-quick", head, encoder), description


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm-sst", help="a registry model (default minilm-sst)")
    parser.add_argument("--sentences", type=int, default=4)
    parser.add_argument("--method", default="lemna")
    parser.add_argument("--samples", type=int, default=None, help="explainer perturbations (default per method)")
    parser.add_argument("--template-samples", type=int, default=1000)
    parser.add_argument("--train", type=int, default=1500, help="sentences for the quick head (if not built)")
    args = parser.parse_args()

    from alict_core.data.sst import load_sst_sentences
    from alict_core.explain import CachedModel, corpus_vocabulary, explain, masking_template

    model, description = load_model(args.model, args.train)
    vocabulary = corpus_vocabulary("sentiment")
    sentences = ["the plot is not very enthralling but the actors are great"]
    pool = [r for r in load_sst_sentences(("test",)) if 8 <= len(r.tokens) <= 20]
    by_label = {label: [r.text for r in pool if r.label == label] for label in ("negative", "positive", "neutral")}
    for i in range(args.sentences - 1):  # alternate negative / positive / neutral test sentences
        label = ("negative", "positive", "neutral")[i % 3]
        sentences.append(by_label[label][i // 3])

    probe = [f"{s} {i}" for i, s in enumerate(sentences * 40)][:200]
    start = time.perf_counter()
    model.predict_proba(probe)
    throughput = len(probe) / (time.perf_counter() - start)
    print(f"model: {description}; raw throughput {throughput:.0f} sentences/s (batch of {len(probe)})")
    print(f"method {args.method}, template N={args.template_samples}, goal {GOAL_SECONDS:.0f} s per sentence\n")

    totals = []
    for text in sentences:
        cached = CachedModel(model)
        t0 = time.perf_counter()
        contrib = explain(cached, text, method=args.method, seed=0, n_samples=args.samples)
        t1 = time.perf_counter()
        template = masking_template(
            cached, text, contrib, n_samples=args.template_samples, seed=0, vocabulary=vocabulary
        )
        t2 = time.perf_counter()
        total = t2 - t0
        totals.append(total)
        naive_texts = contrib.samples + args.template_samples * len(template.fidelity_curve)
        overhead = total - cached.evaluated / throughput
        print(f"{len(contrib.tokens):>2} tokens | {args.method} {t1 - t0:5.1f} s + template {t2 - t1:5.1f} s "
              f"= {total:5.1f} s (ratio to goal {total / GOAL_SECONDS:.2f}) | model ran on {cached.evaluated} texts "
              f"(~{cached.evaluated / throughput:.1f} s at the raw throughput; other work ~{overhead:.1f} s); "
              f"naive loop: {naive_texts} texts (x{naive_texts / max(cached.evaluated, 1):.1f}, "
              f"~{naive_texts / throughput:.0f} s)")
        print(f"   {text}\n   -> {template.template}  [{template.label}; fidelity "
              f"{' '.join(f'{f:.2f}' for f in template.fidelity_curve)}; samples {template.curve_samples}]")
    print(f"\nmedian {np.median(totals):.1f} s, max {max(totals):.1f} s per sentence; "
          f"median ratio to the {GOAL_SECONDS:.0f} s goal: {np.median(totals) / GOAL_SECONDS:.2f} "
          f"(machine load average {os.getloadavg()[0]:.1f}; the goal assumes 2 free cores)")


if __name__ == "__main__":
    main()
