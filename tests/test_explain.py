"""Token contributions: LEMNA (fused-lasso mixture regression), LIME, SHAP on black-box synthetic models."""

from __future__ import annotations

import numpy as np
import pytest

from alict_core.common.errors import AlictError, ModelError
from alict_core.explain import EXPLAINERS, CachedModel, Contributions, ExplainError, explain
from alict_core.explain.lemna import fit_mixture, fused_lasso_wls

WEIGHTS = {"good": 0.2, "great": 0.15, "bad": -0.25, "not": -0.1, "boring": -0.05}
SENTENCE = "the movie was good and great , not bad or boring at all"


class LinearBagOfWords:
    """P(positive) = 0.5 + Σ weight(word present): the true contribution of each word is its weight."""

    name = "linear-bow"
    labels = ("negative", "positive")

    def __init__(self, weights: dict[str, float] = WEIGHTS) -> None:
        self.weights = weights
        self.calls: list[int] = []

    def predict_proba(self, texts):
        self.calls.append(len(texts))
        p = np.clip([0.5 + sum(self.weights.get(w, 0.0) for w in t.split()) for t in texts], 0.0, 1.0)
        return np.stack([1 - p, p], axis=1)


class Broken:
    name = "broken"
    labels = ("negative", "positive")

    def predict_proba(self, texts):
        raise RuntimeError("CUDA out of memory")


class WrongShape:
    name = "wrong-shape"
    labels = ("negative", "positive")

    def predict_proba(self, texts):
        return np.ones((len(texts), 3)) / 3


def true_weights(text: str) -> np.ndarray:
    return np.array([WEIGHTS.get(w, 0.0) for w in text.split()])


def test_registry_lists_the_three_explainers():
    assert set(EXPLAINERS.names()) >= {"shap", "lemna", "lime"}
    with pytest.raises(AlictError, match="unknown explainer 'nope'.*lemna"):
        explain(LinearBagOfWords(), SENTENCE, method="nope")


def test_lemna_recovers_the_weights_of_a_linear_model():
    result = explain(LinearBagOfWords(), SENTENCE, method="lemna", label="positive", seed=0)
    assert result.tokens == SENTENCE.split()
    assert result.label == "positive" and result.method == "lemna"
    np.testing.assert_allclose(result.scores, true_weights(SENTENCE), atol=0.02)
    assert [t for t, _ in result.top(2)] == ["good", "great"]
    assert result.extras["n_components"] == 3


def test_lemna_explains_the_predicted_label_by_default_and_signs_flip_for_the_other_label():
    model = LinearBagOfWords()
    predicted = explain(model, "a bad and boring film", seed=1)
    assert predicted.predicted == "negative" and predicted.label == "negative"
    np.testing.assert_allclose(predicted.scores, -true_weights("a bad and boring film"), atol=0.02)


def _two_regimes(offset_b: float):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(400, 4)).astype(float)
    x[0] = 1
    regime = rng.random(400) < 0.5
    regime[0] = True  # the instance (every word kept) follows regime A
    y = np.where(regime, 2 * x[:, 0], -3 * x[:, 1] + offset_b) + rng.normal(0, 0.01, 400)
    return x, y


def test_lemna_picks_the_mixture_component_that_fits_the_instance():
    from alict_core.explain.lemna import lemna_scores

    x, y = _two_regimes(offset_b=1.0)  # regimes with different offsets: per-component intercepts
    fit = fit_mixture(x, y, n_components=2, lam=0.0, seed=0, shared_intercept=False)
    assert sorted(np.round(fit.coefs, 1).tolist()) == [[0.0, -3.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]
    scores, _ = lemna_scores(x.astype(bool), y, n_components=2, lam=0.0, seed=0, shared_intercept=False)
    np.testing.assert_allclose(scores, [2, 0, 0, 0], atol=0.05)

    x, y = _two_regimes(offset_b=0.0)  # same offset: the default shared intercept recovers both regimes
    fit = fit_mixture(x, y, n_components=2, lam=0.0, seed=0)
    assert sorted(np.round(fit.coefs, 1).tolist()) == [[0.0, -3.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]
    assert abs(fit.intercepts[0]) < 0.01
    scores, info = lemna_scores(x.astype(bool), y, n_components=2, lam=0.0, seed=0)
    np.testing.assert_allclose(scores, [2, 0, 0, 0], atol=0.05)
    assert info["shared_intercept"]


class Conjunction:
    """P(negative) = 0.8 iff both 'not' and 'enthralling' are present, else 0.2: a pure word interaction."""

    name = "conjunction"
    labels = ("negative", "positive")

    def predict_proba(self, texts):
        p = np.array([0.8 if {"not", "enthralling"} <= set(t.split()) else 0.2 for t in texts])
        return np.stack([p, 1 - p], axis=1)


def test_lemna_credits_both_words_of_an_interaction():
    result = explain(Conjunction(), "the plot is not enthralling", method="lemna", seed=0)
    assert result.label == "negative"
    assert sorted(t for t, _ in result.top(2)) == ["enthralling", "not"]
    assert min(result.scores[3:]) > 0.2 and max(abs(s) for s in result.scores[:3]) < 0.05


def test_fused_lasso_fuses_adjacent_coefficients():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 6))
    beta = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    y = 0.5 + x @ beta + rng.normal(0, 0.1, 300)
    w = np.ones(300)
    b0, free = fused_lasso_wls(x, y, w, lam=0.0)
    np.testing.assert_allclose(free, beta, atol=0.05)
    assert abs(b0 - 0.5) < 0.05
    _, fused = fused_lasso_wls(x, y, w, lam=0.05)
    diffs = np.abs(np.diff(fused))
    assert diffs[[0, 1, 3, 4]].max() < 1e-3  # within-block differences are fused to zero
    assert diffs[2] > 1.0  # the real jump survives
    _, huge = fused_lasso_wls(x, y, w, lam=100.0)
    assert np.ptp(huge) < 1e-3  # everything fused into one value


def test_fused_lasso_respects_sample_weights():
    x = np.array([[0.0], [1.0], [0.0], [1.0]])
    y = np.array([0.0, 1.0, 0.0, 5.0])
    _, beta = fused_lasso_wls(x, y, np.array([1.0, 1.0, 0.0, 0.0]), lam=0.0)
    assert beta[0] == pytest.approx(1.0, abs=1e-6)


def test_lime_recovers_the_weights_of_a_linear_model():
    result = explain(LinearBagOfWords(), SENTENCE, method="lime", label="positive", seed=0)
    np.testing.assert_allclose(result.scores, true_weights(SENTENCE), atol=0.01)


def test_shap_gives_exact_shapley_values_on_an_additive_model():
    result = explain(LinearBagOfWords(), SENTENCE, method="shap", label="positive", seed=0, n_samples=200)
    np.testing.assert_allclose(result.scores, true_weights(SENTENCE), atol=1e-6)
    assert result.extras["base_value"] == pytest.approx(0.5 + sum(WEIGHTS.values()) - sum(true_weights(SENTENCE)))


def test_results_are_deterministic_for_a_seed_and_change_with_it():
    model = LinearBagOfWords({"good": 0.3, "not": -0.2})
    text = "not a good film but not a bad one either"
    clipped = LinearBagOfWords({"good": 0.45, "not": -0.2, "film": 0.1})  # clipping makes the fit sample-dependent
    for method in ("lemna", "lime"):
        a = explain(clipped, text, method=method, seed=7)
        b = explain(clipped, text, method=method, seed=7)
        c = explain(clipped, text, method=method, seed=8)
        assert a.scores == b.scores
        assert a.scores != c.scores
    assert explain(model, text, method="shap", seed=3).scores == explain(model, text, method="shap", seed=3).scores


def test_model_calls_are_batched_and_deduplicated():
    model = LinearBagOfWords()
    cached = CachedModel(model, batch_size=64)
    result = explain(cached, "good bad film", method="lemna", seed=0, n_samples=500)
    # 3 tokens: at most 2^3 - 1 distinct non-empty texts, whatever the number of perturbations
    assert result.samples == 500
    assert sum(model.calls) == cached.evaluated <= 7
    again = explain(cached, "good bad film", method="lime", seed=0, n_samples=200)
    assert again.model_calls == 0


def test_progress_callback_reports_batches():
    seen = []
    explain(LinearBagOfWords(), SENTENCE, method="lemna", seed=0, n_samples=300, progress=lambda *a: seen.append(a))
    cached_batches = [s for s in seen if s[2] == "lemna samples"]
    assert cached_batches and cached_batches[-1][0] == cached_batches[-1][1]


def test_contributions_round_trip_through_a_dict():
    result = explain(LinearBagOfWords(), "good but boring", method="lime", seed=0)
    again = Contributions.from_dict(result.to_dict())
    assert again == result
    assert list(result.to_frame().token) == ["good", "but", "boring"]


@pytest.mark.parametrize("text, message", [("", "empty"), ("   ", "empty"), ("wonderful", "one token")])
def test_bad_texts_give_clear_errors(text, message):
    with pytest.raises(ExplainError, match=message):
        explain(LinearBagOfWords(), text)


def test_bad_labels_and_budgets_give_clear_errors():
    with pytest.raises(ExplainError, match="'hateful' is not one of model 'linear-bow'"):
        explain(LinearBagOfWords(), "good film", label="hateful")
    with pytest.raises(ExplainError, match="n_samples must be at least 10"):
        explain(LinearBagOfWords(), "good film", n_samples=3)
    with pytest.raises(ExplainError, match="fused_lambda"):
        explain(LinearBagOfWords(), "good film", fused_lambda=-1)


def test_model_errors_name_the_model():
    with pytest.raises(ModelError, match="model 'broken' failed .*CUDA out of memory"):
        explain(Broken(), "good film")
    with pytest.raises(ModelError, match="model 'wrong-shape' returned shape"):
        explain(WrongShape(), "good film", method="shap")
    with pytest.raises(ModelError, match="does not implement the model protocol"):
        explain(object(), "good film")
