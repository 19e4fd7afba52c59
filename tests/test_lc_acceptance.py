"""Issue #12 acceptance on the real corpora: the paper's LCs, no double negation, clean joins, fidelity."""

from __future__ import annotations

from pathlib import Path

import pytest

from alict_core.cases.validity import text_defects, validate
from alict_core.lcspec import get_spec, load_task_specs
from alict_core.seeds import find_seeds
from alict_core.seeds.engine import NEGATIONS

DOCS = Path(__file__).resolve().parent.parent / "docs" / "fidelity.md"


@pytest.mark.parametrize("lc, label, expected, paper", [
    ("LC4", "negative", ["positive", "neutral"], 67),
    ("LC5", "neutral", ["neutral"], 26),
])
def test_sentiment_negation_lcs_follow_the_paper(sentiment_corpus, lc, label, expected, paper):
    spec = get_spec("sentiment", lc)
    seeds = find_seeds(spec, sentiment_corpus, max_seeds=None).seeds
    # the replace guards drop targets where negation would not change the claim (relative "that is",
    # "is not surely", a contrast after the negated clause, LC5's asides to the reader and "this is not it",
    # docs/fidelity.md third pass): fewer seeds than the paper's rule, each right
    assert paper / 5 <= len(seeds) <= paper * 3
    for seed in seeds:
        assert seed.source_labels == [label] and seed.expected["labels"] == expected
        lower = [t.lower() for t in seed.text.split()]
        assert sum(t in NEGATIONS for t in lower) == 1, seed.text  # the inserted "not" and no other negation
        assert " is not " in f" {seed.text.lower()} " or " are not " in f" {seed.text.lower()} "
        assert not [r for r, _ in text_defects(seed.text) if r == "double_negation"]


def test_negated_positive_is_an_extension_not_a_paper_lc():
    x01 = get_spec("sentiment", "x01")
    assert x01.is_extension and x01.paper is None
    assert x01.rules[0].expected.one_of == ["negative", "neutral"]  # denying a mild positive can be neutral
    assert all(s.paper is not None for s in load_task_specs("sentiment") + load_task_specs("hate_speech")
               if not s.is_extension)


def test_hate_lc5_and_lc6_have_four_groups_and_equal_candidates(hate_corpus):
    lc5, lc6 = get_spec("hate_speech", "LC5"), get_spec("hate_speech", "LC6")
    assert len(lc5.rules) == len(lc6.rules) == 4
    assert [r.expected.label for r in lc5.rules] == [r.expected.label for r in lc6.rules]
    counts = [find_seeds(spec, hate_corpus, max_seeds=4).n_candidates for spec in (lc5, lc6)]
    assert counts[0] == counts[1] > 0


@pytest.mark.parametrize("task", ["sentiment", "hate_speech"])
def test_generated_joins_are_clean_in_every_lc(task, sentiment_corpus, hate_corpus):
    corpus = sentiment_corpus if task == "sentiment" else hate_corpus
    prefixes = ("I would n't say , given that ", "I do not think , given that ", "I do n't agree , given that ")
    for spec in load_task_specs(task):
        seeds = find_seeds(spec, corpus, max_seeds=200).seeds
        report = validate(seeds, task=task)
        bad = [f for f in report.flags if f.reason in ("two_final_marks", "lower_case_after_period", "stray_space")]
        assert not bad, (spec.id, bad[:3])
        if spec.id == "sentiment-lc07":
            assert seeds and all(s.text.startswith(prefixes) for s in seeds)
        for seed in (s for s in seeds if s.rule_kind == "concat"):  # the end a rule built: one final mark
            tokens = seed.text.split()
            assert not (tokens[-1] in {".", "!", "?"} and tokens[-2] in {".", "!", "?"}), seed.text


def test_fidelity_report_runs_for_both_tasks_and_is_documented(capsys, sentiment_corpus, hate_corpus):
    from alict_core.cli import main

    assert main(["fidelity", "--task", "sentiment", "--lc", "LC4", "--lc", "x01"]) == 0
    assert main(["fidelity", "--task", "hate_speech", "--lc", "LC11"]) == 0
    out = capsys.readouterr().out
    assert "| sentiment-lc04 | Negated negative should be positive or neutral | 67 |" in out
    assert "sentiment-x01 (extension)" in out and "| hate_speech-lc11 |" in out
    text = DOCS.read_text()
    assert "## Sentiment (SST)" in text and "## Hate speech (HateXplain)" in text and "| hate_speech-lc14 |" in text


# make test's sample: one LC per task and kind of generative rule (select, concat, replace), the cheapest of its
# kind where measured (hate_speech-lc11 / -lc07 take ~7 s, lc01 / lc05 24-26 s on 2 cores); sentiment-lc03 keeps
# an LC of two rules. make test-full (marker slow_full) runs every LC.
SAMPLE = {"sentiment": ("sentiment-lc01", "sentiment-lc03", "sentiment-lc04"),
          "hate_speech": ("hate_speech-lc11", "hate_speech-lc07")}


def _expansion_params() -> list:
    params = []
    for task in ("sentiment", "hate_speech"):
        specs = load_task_specs(task)
        params += [pytest.param(task, spec.id, id=spec.id,
                                marks=() if spec.id in SAMPLE[task] else pytest.mark.slow_full)
                   for spec in specs]
    return params


def test_the_sample_covers_every_rule_kind_of_each_task_once():
    for task, sample in SAMPLE.items():
        specs = {s.id: s for s in load_task_specs(task)}
        kinds = [tuple(sorted({r.kind for r in specs[lc].rules})) for lc in sample]
        assert sorted(kinds) == sorted({tuple(sorted({r.kind for r in s.rules})) for s in specs.values()})
    assert any(len(get_spec("sentiment", lc).rules) > 1 for lc in SAMPLE["sentiment"])


@pytest.mark.slow
@pytest.mark.parametrize("task, lc_id", _expansion_params())
def test_no_accepted_expansion_fails_its_lc(task, lc_id, tmp_path, sentiment_corpus, hate_corpus):
    """A 20-seed expansion of the LC with the offline parser and MLM; every accepted expansion is re-checked.
    ``make test`` runs one LC per task and kind of rule (5 LCs), ``make test-full`` (marker slow_full) every LC."""
    from alict_core.expansion import expand
    from alict_core.models.artefacts import is_built
    from alict_core.seeds import expansion_predicates_hold

    if not is_built("mlm"):
        pytest.skip("MiniLM MLM head not built: run `python -m alict_core build mlm`")
    from alict_core.mlm import get_suggester
    from alict_core.parsing import get_parser

    try:
        parser = get_parser()
    except Exception as exc:  # noqa: BLE001 - a parser that is not built is a skip, with its message
        pytest.skip(f"parser not available: {exc}")
    corpus = sentiment_corpus if task == "sentiment" else hate_corpus
    spec = get_spec(task, lc_id)
    seeds = find_seeds(spec, corpus, max_seeds=20).seeds
    result = expand(seeds, spec, parser, get_suggester(), out_dir=tmp_path)
    by_id = {s.id: s for s in seeds}
    report = validate(seeds, result.rows, task=task, specs={spec.id: spec})
    lc_flags = [f for f in report.flags if f.reason in ("expansion_fails_lc", "inserted_word_unknown")]
    assert not lc_flags, (spec.id, lc_flags[:3])
    assert result.rows, f"{spec.id}: no fill was produced and judged"
    # every fill the pipeline let through its predicate check (accepted or stopped by a later constraint; with
    # the quick models few are accepted) keeps the LC's predicates when re-checked on its own
    passed = [row for row in result.rows if row["verdicts"].get("predicates") is True or row["accepted"]]
    for row in passed:
        assert expansion_predicates_hold(spec, by_id[row["seed_id"]], row["text"])[0], row["text"]
