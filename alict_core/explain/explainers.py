"""Token-contribution explainers behind one registry (``EXPLAINERS``) and the ``explain()`` entry point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from alict_core.common.registry import Registry
from alict_core.explain.base import (
    CachedModel,
    Contributions,
    ExplainError,
    ProgressFn,
    as_cached,
    check_budget,
    check_explain_text,
    render,
    resolve_label,
    sample_masks,
    tokenize,
)
from alict_core.explain.lemna import lemna_scores
from alict_core.models.protocol import Model


@dataclass
class Attribution:
    scores: np.ndarray
    samples: int
    extras: dict[str, Any]


class Explainer(Protocol):
    """Computes one score per token towards label index ``label`` from at most ``n_samples`` model texts."""

    def attribute(
        self, model: CachedModel, tokens: list[str], label: int, seed: int, n_samples: int, progress: ProgressFn | None
    ) -> Attribution: ...


EXPLAINERS: Registry[Explainer] = Registry("explainer")


def _perturbed_outputs(
    model: CachedModel,
    tokens: list[str],
    label: int,
    seed: int,
    n_samples: int,
    progress: ProgressFn | None,
    stage: str,
) -> tuple[np.ndarray, np.ndarray]:
    masks = sample_masks(len(tokens), n_samples, np.random.default_rng(seed))
    texts = [render(tokens, m) for m in masks]
    y = model.predict_proba(texts, progress=progress, stage=stage)[:, label]
    return masks, y


class LemnaExplainer:
    """LEMNA: fused-lasso mixture regression on word-dropping perturbations (see ``alict_core.explain.lemna``)."""

    def __init__(
        self, n_components: int = 3, fused_lambda: float = 1e-3, max_em_iter: int = 50, shared_intercept: bool = True
    ) -> None:
        self.n_components = check_budget("n_components", n_components, 1)
        if fused_lambda < 0:
            raise ExplainError(f"fused_lambda must be >= 0, got {fused_lambda}")
        self.fused_lambda = float(fused_lambda)
        self.max_em_iter = check_budget("max_em_iter", max_em_iter, 1)
        self.shared_intercept = bool(shared_intercept)

    def attribute(self, model, tokens, label, seed, n_samples, progress) -> Attribution:
        masks, y = _perturbed_outputs(model, tokens, label, seed, n_samples, progress, "lemna samples")
        scores, info = lemna_scores(
            masks, y, self.n_components, self.fused_lambda, seed, self.max_em_iter, self.shared_intercept
        )
        return Attribution(scores, len(masks), info)


class LimeExplainer:
    """LIME-style surrogate: weighted ridge regression on the same perturbations, exponential cosine kernel."""

    def __init__(self, kernel_width: float = 0.25, alpha: float = 1e-3) -> None:
        self.kernel_width = float(kernel_width)
        self.alpha = float(alpha)

    def attribute(self, model, tokens, label, seed, n_samples, progress) -> Attribution:
        masks, y = _perturbed_outputs(model, tokens, label, seed, n_samples, progress, "lime samples")
        x = masks.astype(float)
        distance = 1.0 - np.sqrt(x.sum(axis=1) / x.shape[1])  # cosine distance to the all-kept instance
        w = np.exp(-(distance**2) / self.kernel_width**2)
        x_mean, y_mean = w @ x / w.sum(), w @ y / w.sum()
        xc, yc = x - x_mean, y - y_mean
        gram = (xc * w[:, None]).T @ xc + self.alpha * np.eye(x.shape[1])
        coef = np.linalg.solve(gram, (xc * w[:, None]).T @ yc)
        extras = {"intercept": float(y_mean - x_mean @ coef), "kernel_width": self.kernel_width}
        return Attribution(coef, len(masks), extras)


SHAP_MASK = "\u27e8mask\u27e9"


def import_shap():
    """Import shap with numba's JIT off while its modules load, unless already imported.

    shap's numba kernels cost ~20 s of compilation per process (not cached on disk) but run in well under a
    second as plain Python on sentence-sized inputs; other numba users keep their JIT.
    """
    import sys

    if "shap" in sys.modules:
        return sys.modules["shap"]
    import numba

    previous = numba.config.DISABLE_JIT
    numba.config.DISABLE_JIT = True
    try:
        import shap
    finally:
        numba.config.DISABLE_JIT = previous
    return shap


class ShapExplainer:
    """SHAP's Partition explainer over ``predict_proba`` with a whitespace ``shap.maskers.Text``.

    Masked words are removed from the text.
    """

    def attribute(self, model, tokens, label, seed, n_samples, progress) -> Attribution:
        shap = import_shap()

        def f(texts: np.ndarray) -> np.ndarray:
            cleaned = [" ".join(str(t).replace(SHAP_MASK, " ").split()) for t in np.asarray(texts).ravel()]
            return model.predict_proba(cleaned, progress=progress, stage="shap samples")

        masker = shap.maskers.Text(r"\s+", mask_token=SHAP_MASK, collapse_mask_token=False)
        explainer = shap.Explainer(f, masker, output_names=list(model.labels), seed=seed)
        before = model.requested
        result = explainer([" ".join(tokens)], max_evals=max(n_samples, 2 * len(tokens) + 1), silent=True)
        values = np.asarray(result.values[0])[:, label]
        pieces = [str(piece).strip() for piece in result.data[0]]
        if pieces != tokens:
            raise ExplainError(f"SHAP split the text into {pieces}, not the whitespace tokens {tokens}")
        base = float(np.asarray(result.base_values[0])[label])
        return Attribution(values, model.requested - before, {"base_value": base})


EXPLAINERS.add(
    "lemna", LemnaExplainer, "LEMNA: mixture regression with fused lasso (Guo et al., CCS 2018)", cost="medium"
)
EXPLAINERS.add("shap", ShapExplainer, "SHAP Partition explainer with a whitespace text masker", cost="medium")
EXPLAINERS.add("lime", LimeExplainer, "LIME-style weighted linear surrogate (cheap)", cost="low")

DEFAULT_SAMPLES = {"lemna": 500, "shap": 500, "lime": 300}


def explain(
    model: Model | CachedModel,
    text: str,
    method: str = "lemna",
    label: str | int | None = None,
    seed: int = 0,
    n_samples: int | None = None,
    progress: ProgressFn | None = None,
    **options: Any,
) -> Contributions:
    """Contribution of each whitespace token of ``text`` to ``model``'s probability of ``label``
    (default: the predicted label), by ``method`` (a name in ``EXPLAINERS``); deterministic for a seed.

    ``options`` go to the explainer's factory (e.g. ``n_components``, ``fused_lambda`` for LEMNA).
    """
    tokens = tokenize(check_explain_text(text))
    explainer = EXPLAINERS.create(method, **options)
    n_samples = check_budget("n_samples", DEFAULT_SAMPLES.get(method, 500) if n_samples is None else n_samples, 10)
    cached = as_cached(model)
    evaluated_before = cached.evaluated
    text = " ".join(tokens)
    proba = cached.predict_proba([text])[0]
    predicted = int(np.argmax(proba))
    label_index = resolve_label(cached.model, label, predicted)
    result = explainer.attribute(cached, tokens, label_index, int(seed), n_samples, progress)
    return Contributions(
        text=text,
        tokens=tokens,
        scores=[float(s) for s in result.scores],
        label=cached.labels[label_index],
        method=method,
        predicted=cached.labels[predicted],
        proba=[float(p) for p in proba],
        seed=int(seed),
        samples=int(result.samples),
        model_calls=cached.evaluated - evaluated_before,
        labels=list(cached.labels),
        extras=result.extras,
    )
