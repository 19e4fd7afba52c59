"""Metrics: Self-BLEU equals NLTK's multi-reference BLEU, is fast; syntactic diversity; neuron coverage."""

from __future__ import annotations

import random
import time

import pytest
from nltk import Tree
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from test_models import tiny_hf_model  # noqa: F401  (fixture)

from alict_core.metrics import self_bleu, suite_metrics, syntactic_diversity
from alict_core.runner import build_cases


def nltk_self_bleu(texts):
    tokens = [t.lower().split() for t in texts]
    smooth = SmoothingFunction().method1
    scores = [
        sentence_bleu(tokens[:i] + tokens[i + 1 :], tok, smoothing_function=smooth) for i, tok in enumerate(tokens)
    ]
    return sum(scores) / len(scores)


def test_self_bleu_matches_nltk_on_sst():
    from alict_core.data.sst import load_sst_sentences

    texts = [row.text for row in load_sst_sentences(("dev",))[:60]]
    texts += ["a good movie", "a good movie", "a very good movie indeed", "bad"]  # duplicates and a 1-gram text
    assert self_bleu(texts, sample_size=None) == pytest.approx(nltk_self_bleu(texts), rel=1e-9)


def test_self_bleu_orders_diversity():
    same = ["the movie was good and i liked it"] * 20
    varied = [f"sentence number {i} talks about topic {i * 7} with words w{i} x{i}" for i in range(20)]
    assert self_bleu(same) == pytest.approx(1.0)
    assert self_bleu(varied) < 0.3 < self_bleu(same)
    assert self_bleu(["only one"]) == 0.0


def test_self_bleu_1000_cases_well_under_30s():
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(300)]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(5, 25))) for _ in range(1000)]
    start = time.perf_counter()
    value = self_bleu(texts, sample_size=1000)
    assert 0.0 < value < 1.0 and time.perf_counter() - start < 30


def test_syntactic_diversity_counts_distinct_nonlexical_productions():
    t1 = Tree.fromstring("(S (NP (DT the) (NN film)) (VP (VBZ is) (ADJP (JJ good))))")
    t2 = Tree.fromstring("(S (NP (DT a) (NN plot)) (VP (VBZ is) (ADJP (JJ bad))))")
    t3 = Tree.fromstring("(S (NP (PRP it)) (VP (VBD failed)))")
    same = syntactic_diversity([t1, t2])
    assert same["distinct_productions"] == 4  # S, NP→DT NN, VP→VBZ ADJP, ADJP→JJ
    assert syntactic_diversity([t1, t2, t3])["distinct_productions"] == 6


def test_suite_metrics_rows_per_lc():
    seeds = [{"id": f"s{i}", "lc_id": "LC1" if i < 3 else "LC2", "text": f"text number {i} here", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}} for i in range(6)]
    table = suite_metrics(build_cases(seeds), syntax=False).set_index(["lc_id", "kind"])
    assert table.loc[("LC1", "seed"), "n"] == 3 and table.loc[("ALL", "all"), "n"] == 6
    assert 0 < table.loc[("ALL", "all"), "self_bleu"] < 1


def test_neuron_coverage_tiny_bert(tiny_hf_model):  # noqa: F811
    from alict_core.metrics import fit_bounds, neuron_coverage
    from alict_core.models.hf import HFClassifier

    model = HFClassifier(tiny_hf_model, "sentiment")
    bounds = fit_bounds(model, ["the movie is good", "a bad film", "it is ok"])
    assert len(bounds.high) == 2 * 37  # two layers × intermediate size
    inside = neuron_coverage(model, ["the movie is good"], bounds)
    assert inside["bound_cov"] == 0.0 and inside["sact_cov"] == 0.0  # a training text never leaves the bounds
    outside = neuron_coverage(model, ["zzz qqq unusual words here film film film good bad ok"], bounds)
    assert outside["bound_cov"] > 0 and 0 <= outside["sact_cov"] <= 2 * outside["bound_cov"]
