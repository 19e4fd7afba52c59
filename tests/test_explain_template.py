"""Masking templates (TOSEM Algorithm 2), pass-to-fail comparisons, per-LC aggregation and the CLI."""

from __future__ import annotations

import json
from itertools import pairwise

import numpy as np
import pytest

from alict_core.cli import main
from alict_core.explain import (
    ExplainError,
    MaskingTemplate,
    Vocabulary,
    compare_pair,
    explain,
    explain_lc_failures,
    inserted_positions,
    masking_template,
    recurring_template_tokens,
)
from alict_core.explain.template import draw_fills, generate, unmask_order, wilson_interval
from alict_core.models import MODELS

FILLER = ["the", "a", "movie", "film", "was", "is", "plot", "and", "story", "it", "of", "this", "very", "quite"]
POSITIVE = {"good", "great", "fun", "witty", "clever"}


class OneWord:
    """Positive iff 'enthralling' is in the text, else negative: the decision depends on one known word."""

    name = "one-word"
    labels = ("negative", "neutral", "positive")

    def predict_proba(self, texts):
        return np.array([[0.1, 0.1, 0.8] if "enthralling" in t.split() else [0.7, 0.2, 0.1] for t in texts])


class Negation:
    """'enthralling' alone → positive; 'not' with 'enthralling' → negative; otherwise neutral (TOSEM Fig. 7)."""

    name = "negation-fiction"
    labels = ("negative", "neutral", "positive")

    def predict_proba(self, texts):
        rows = []
        for text in texts:
            words = text.split()
            if "enthralling" in words:
                rows.append([0.8, 0.1, 0.1] if "not" in words else [0.1, 0.1, 0.8])
            else:
                rows.append([0.2, 0.6, 0.2])
        return np.array(rows)


class CountPositive:
    """Positive iff (#positive words − #'dull' words) >= 4: monotone in the unmasked positive words."""

    name = "count-positive"
    labels = ("negative", "positive")

    def predict_proba(self, texts):
        score = np.array([sum(w in POSITIVE for w in t.split()) - t.split().count("dull") for t in texts])
        p = np.where(score >= 4, 0.9, 0.1)
        return np.stack([1 - p, p], axis=1)


def test_generator_keeps_unmasked_positions_and_fills_masked_ones():
    tokens = "the plot is quite enthralling".split()
    fills = draw_fills(Vocabulary.from_words(FILLER), len(tokens), 50, np.random.default_rng(0))
    texts = generate(tokens, {0, 1, 2, 3}, fills)
    assert all(t.split()[4] == "enthralling" for t in texts)
    assert len({t.split()[0] for t in texts}) > 3  # masked positions really vary
    assert generate(tokens, set(), fills[:2]) == ["the plot is quite enthralling"] * 2


def test_unmask_order_is_repeated_argmax():
    assert unmask_order(np.array([0.1, -0.5, 0.9, 0.1])) == [2, 0, 3, 1]


def test_algorithm2_stops_at_the_minimal_prefix_for_a_one_word_model():
    text = "the plot is quite enthralling"
    contributions = explain(OneWord(), text, method="lemna", seed=0)
    assert contributions.top(1)[0][0] == "enthralling"
    result = masking_template(OneWord(), text, contributions, p_thresh=0.9, n_samples=1000, seed=0, vocabulary=FILLER)
    assert result.template == "[MASK] [MASK] [MASK] [MASK] enthralling"
    assert result.kept_tokens == ["enthralling"]
    # With the original bug (unmasked positions stayed in the masked set) the curve would stay at 0.0
    # and every token would end up unmasked.
    assert result.fidelity_curve == [0.0, 1.0]
    assert result.reached and result.label == "positive" and result.seed == 0
    assert result.samples_used == sum(result.curve_samples) <= 2000


def test_template_needs_both_words_of_a_conjunction():
    text = "the plot is not enthralling at all"
    result = masking_template(Negation(), text, seed=0, vocabulary=FILLER)
    assert result.label == "negative"
    assert result.template == "[MASK] [MASK] [MASK] not enthralling [MASK] [MASK]"
    assert result.fidelity_curve[-1] == 1.0 and result.fidelity_curve[0] < 0.1


def test_fidelity_is_monotone_non_decreasing_as_tokens_are_unmasked():
    text = "good great fun witty clever story with a cast"
    vocabulary = FILLER + ["dull", "dull"]
    contributions = [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0]
    result = masking_template(
        CountPositive(), text, contributions, p_thresh=1.0, n_samples=400, seed=1, vocabulary=vocabulary,
        early_stop=False,
    )
    curve = result.fidelity_curve
    assert len(curve) >= 8  # p_thresh 1.0: unmask until no random 'dull' fill can flip the prediction
    assert all(b >= a for a, b in pairwise(curve)), curve
    assert curve[0] == 0.0 and curve[-1] == 1.0 and len(set(curve)) > 3


def test_early_stop_uses_fewer_samples_and_gives_the_same_template():
    text = "the plot is quite enthralling"
    full = masking_template(OneWord(), text, [0, 0, 0, 0, 1.0], seed=0, vocabulary=FILLER, early_stop=False)
    fast = masking_template(OneWord(), text, [0, 0, 0, 0, 1.0], seed=0, vocabulary=FILLER)
    assert fast.template == full.template
    assert fast.samples_used < full.samples_used == 2000


def test_template_is_deterministic_for_a_seed_and_caches_model_calls():
    text = "good great fun witty clever story"
    vocabulary = FILLER + ["dull", "good"]
    a = masking_template(CountPositive(), text, [6, 5, 4, 3, 2, 1], seed=5, vocabulary=vocabulary, n_samples=300)
    b = masking_template(CountPositive(), text, [6, 5, 4, 3, 2, 1], seed=5, vocabulary=vocabulary, n_samples=300)
    c = masking_template(CountPositive(), text, [6, 5, 4, 3, 2, 1], seed=6, vocabulary=vocabulary, n_samples=300)
    assert a.to_dict() == b.to_dict()
    assert a.fidelity_curve != c.fidelity_curve
    assert a.model_calls < a.samples_used  # identical generated texts reach the model once
    assert MaskingTemplate.from_dict(json.loads(json.dumps(a.to_dict()))).to_dict() == a.to_dict()


def test_progress_and_time_budget():
    steps = []
    result = masking_template(
        CountPositive(), "good great fun witty clever story", [6, 5, 4, 3, 2, 1], seed=0, vocabulary=FILLER,
        progress=lambda *a: steps.append(a), max_seconds=0.0,
    )
    assert result.truncated and len(result.fidelity_curve) == 1 and steps[0][:2] == (1, 7)


def test_template_bad_inputs():
    with pytest.raises(ExplainError, match="empty"):
        masking_template(OneWord(), "", [], vocabulary=FILLER)
    with pytest.raises(ExplainError, match="one token"):
        masking_template(OneWord(), "enthralling", [1.0], vocabulary=FILLER)
    with pytest.raises(ExplainError, match="2 contribution scores for 3 tokens"):
        masking_template(OneWord(), "a b c", [1.0, 2.0], vocabulary=FILLER)
    other = explain(OneWord(), "an enthralling film", method="lime")
    with pytest.raises(ExplainError, match="contributions are for 'an enthralling film'"):
        masking_template(OneWord(), "a dull film", other, vocabulary=FILLER)
    with pytest.raises(ExplainError, match="p_thresh"):
        masking_template(OneWord(), "a b c", [1, 2, 3], p_thresh=1.5, vocabulary=FILLER)
    with pytest.raises(ExplainError, match="vocabulary 'custom' is empty"):
        masking_template(OneWord(), "a b c", [1, 2, 3], vocabulary=[])
    with pytest.raises(ExplainError, match="match no task"):
        masking_template(CountPositive(), "a b c", [1, 2, 3])  # labels of no task, no vocabulary given


def test_wilson_interval_brackets_the_estimate():
    low, high = wilson_interval(90, 100, 1.96)
    assert low < 0.9 < high and 0.8 < low and high < 0.96


def test_compare_pair_marks_inserted_tokens_and_explains_both_sides():
    pair = compare_pair(Negation(), "the plot is enthralling", "the plot is not enthralling", seed=0, vocabulary=FILLER)
    assert pair.inserted == [3]
    assert pair.seed.predicted == "positive" and pair.expansion.predicted == "negative"
    assert pair.seed_template.template == "[MASK] [MASK] [MASK] enthralling"
    assert pair.expansion_template.template == "[MASK] [MASK] [MASK] not enthralling"
    table = pair.side_by_side()
    assert list(table[table.inserted].token) == ["not"]
    assert set(table[(table.side == "expansion") & table.kept_in_template].token) == {"not", "enthralling"}
    assert json.loads(json.dumps(pair.to_dict()))["inserted_tokens"] == ["not"]


def test_pair_results_are_cached_on_disk(private_cache):
    class Counting(Negation):
        calls = 0
        fingerprint = "counting-negation-v1"  # only a content fingerprint may key the on-disk cache

        def predict_proba(self, texts):
            Counting.calls += len(texts)
            return super().predict_proba(texts)

    args = (Counting(), "the plot is enthralling", "the plot is not enthralling")
    first = compare_pair(*args, seed=0, vocabulary=FILLER, cache=True, meta={"case": 1})
    calls = Counting.calls
    again = compare_pair(*args, seed=0, vocabulary=FILLER, cache=True, meta={"case": 2})
    assert Counting.calls == calls  # read back from disk
    assert again.to_dict() == {**first.to_dict(), "meta": {"case": 2}}
    assert len(list((private_cache / "explain" / "pairs").glob("*[0-9a-f].json"))) == 1  # and its manifest
    compare_pair(*args, seed=1, vocabulary=FILLER, cache=True)
    assert Counting.calls > calls  # another seed is another key


def test_inserted_positions_handles_replacements():
    assert inserted_positions("a good film".split(), "a truly good film".split()) == [1]
    assert inserted_positions("a good film".split(), "a great film".split()) == [1]


def test_recurring_template_tokens_ranks_kept_tokens():
    table = recurring_template_tokens([
        "[MASK] not [MASK] good",
        {"template": "[MASK] [MASK] not [MASK]"},
        "beyond [MASK] Not [MASK] not",
    ])
    assert list(table.token) == ["not", "beyond", "good"]  # by templates, then occurrences, then token
    top = table.iloc[0]
    assert top.templates == 3 and top.occurrences == 4 and top.share == 1.0
    assert table.iloc[1].share == pytest.approx(1 / 3) and table.iloc[1].examples == ["beyond [MASK] Not [MASK] not"]
    assert recurring_template_tokens([]).empty


@pytest.fixture
def registered_negation():
    MODELS.add("negation-fiction", lambda **_: Negation(), "test model", task="sentiment", offline=True)
    try:
        yield
    finally:
        MODELS.remove("negation-fiction")


def _saved_run(tmp_path):
    from alict_core.runner import build_cases, run_suite

    expected = {"kind": "label", "labels": ["positive"]}
    seeds = [
        {"id": "LC1-s1", "lc_id": "LC1", "text": "the plot is enthralling", "test_type": "MFT", "expected": expected},
        {"id": "LC1-s2", "lc_id": "LC1", "text": "this story is enthralling", "test_type": "MFT", "expected": expected},
        {"id": "LC2-s1", "lc_id": "LC2", "text": "an enthralling film", "test_type": "MFT", "expected": expected},
    ]
    expansions = [
        {"seed_id": "LC1-s1", "text": "the plot is not enthralling"},
        {"seed_id": "LC1-s2", "text": "this story is not so enthralling"},
        {"seed_id": "LC1-s2", "text": "this story is really enthralling"},
    ]
    result = run_suite(build_cases(seeds, expansions), [Negation()], cache_root=tmp_path / "cache")
    return result.save(tmp_path / "run")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    from alict_core.common.config import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "alict-cache"))
    return tmp_path / "alict-cache"


def test_explain_lc_failures_on_a_saved_run(tmp_path, registered_negation, private_cache):
    run_dir = _saved_run(tmp_path)
    pairs = explain_lc_failures(run_dir, "LC1", seed=0, vocabulary=FILLER, method="lime")
    assert [p.meta["case_id"] for p in pairs] and len(pairs) == 2
    assert all("not" in p.expansion_template.kept_tokens for p in pairs)
    table = recurring_template_tokens([p.expansion_template for p in pairs])
    assert set(table.token[:2]) == {"not", "enthralling"}
    assert explain_lc_failures(run_dir, "LC2", vocabulary=FILLER) == []
    with pytest.raises(ExplainError, match="LC 'LC9' is not in this run; its LCs are: LC1, LC2"):
        explain_lc_failures(run_dir, "LC9")


def test_cli_explains_a_text(capsys, registered_negation, monkeypatch):
    import alict_core.explain.template as template_module

    monkeypatch.setattr(
        template_module, "default_vocabulary", lambda labels, with_pos=False: Vocabulary.from_words(FILLER)
    )
    code = main(["explain", "--model", "negation-fiction", "--text", "the plot is not enthralling", "--method", "lime"])
    out = capsys.readouterr().out
    assert code == 0
    assert "predicted negative" in out
    assert "template: [MASK] [MASK] [MASK] not enthralling" in out


def test_cli_explains_an_lc_of_a_run(capsys, tmp_path, registered_negation, monkeypatch, private_cache):
    import alict_core.explain.template as template_module

    monkeypatch.setattr(
        template_module, "default_vocabulary", lambda labels, with_pos=False: Vocabulary.from_words(FILLER)
    )
    run_dir = _saved_run(tmp_path)
    out_json = tmp_path / "lc1.json"
    code = main(["explain", "--results", str(run_dir), "--lc", "LC1", "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("== pair") == 2 and "+inserted" in out
    saved = json.loads(out_json.read_text())
    assert saved["recurring_tokens"][0]["templates"] == 2
    assert main(["explain", "--results", str(tmp_path / "nope"), "--lc", "LC1"]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.slow
def test_default_corpus_vocabulary_and_same_pos_generator():
    from alict_core.explain import corpus_vocabulary

    vocabulary = corpus_vocabulary("sentiment")
    assert len(vocabulary.words) == 5000 and "film" in vocabulary.words
    assert all(any(ch.isalpha() for ch in w) for w in vocabulary.words)
    tagged = corpus_vocabulary("sentiment", with_pos=True)
    assert tagged.pos is not None and "ADJ" in tagged.pos
    result = masking_template(OneWord(), "the plot is quite enthralling", [0, 0, 0, 0, 1.0], seed=0, same_pos=True)
    assert result.extras["same_pos"] and result.template.endswith("enthralling")
    adjectives = tagged.sample(np.random.default_rng(0), 30, pos="ADJ")
    index = {w: p for w, p in zip(tagged.words, tagged.pos, strict=True) if p == "ADJ"}
    assert all(w in index for w in adjectives)


def test_models_can_be_given_by_registry_name(registered_negation):
    by_name = explain("negation-fiction", "the plot is not enthralling", method="lime", seed=0)
    direct = explain(Negation(), "the plot is not enthralling", method="lime", seed=0)
    assert by_name.scores == direct.scores and by_name.predicted == "negative"
