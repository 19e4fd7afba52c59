"""LEMNA (Guo et al., "LEMNA: Explaining Deep Learning based Security Applications", CCS 2018) for text.

The black-box model ``f`` is probed on perturbations of the input: ``x ∈ {0,1}^M`` says which of the
``M`` words are kept (a dropped word is removed from the text) and ``y = f_c(text(x))`` is the model's
probability of the explained label ``c``. LEMNA fits a *mixture regression model* with a *fused lasso*
penalty to the pairs ``(x_i, y_i)`` (paper §3):

* mixture regression (K components, Gaussian noise)::

      p(y | x) = Σ_k π_k · N(y ; b_k + β_k·x, σ_k²)

* fused lasso on each component (adjacent words get similar weights, the sequence prior of the paper)::

      Σ_{j=2..M} |β_{k,j} − β_{k,j−1}| ≤ S      (we use the Lagrangian form, penalty λ·Σ_j |β_j − β_{j−1}|)

* fitted by EM. E-step: responsibilities
  ``z_ik = π_k N(y_i; b_k + β_k·x_i, σ_k²) / Σ_l π_l N(y_i; b_l + β_l·x_i, σ_l²)``.
  M-step: ``π_k = mean_i z_ik``; ``(b_k, β_k) = argmin 1/(2 Σ_i z_ik) Σ_i z_ik (y_i − b_k − β_k·x_i)² +
  λ Σ_j |β_{k,j} − β_{k,j−1}|`` (a weighted least squares with fused-lasso penalty, solved by ADMM below);
  ``σ_k² = Σ_i z_ik r_ik² / Σ_i z_ik``.

By default the components share one intercept ``b`` (the output with every word removed; the paper's
components have no separate offsets). With a free ``b_k`` per component EM can explain a word
*interaction* (e.g. "not … enthralling") by clustering the outputs into constant components whose
coefficients are all zero, which leaves nothing to explain.

The explanation is the coefficient vector ``β_k`` of the component that fits the instance itself (the
all-kept ``x_0 = 1`` with ``y_0 = f_c(text)``, i.e. the highest responsibility ``z_0k``): ``β_{k,j}`` is the
change of the label's probability when word ``j`` is present.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp


def difference_matrix(p: int) -> np.ndarray:
    """D with (Dβ)_j = β_{j+1} − β_j, shape (p−1, p)."""
    d = np.zeros((max(p - 1, 0), p))
    idx = np.arange(p - 1)
    d[idx, idx] = -1.0
    d[idx, idx + 1] = 1.0
    return d


def soft_threshold(v: np.ndarray, t: float) -> np.ndarray:
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def fused_lasso_wls(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    rho: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-6,
    ridge: float = 1e-8,
    warm: dict | None = None,
    intercept: float | None = None,
) -> tuple[float, np.ndarray]:
    """Solve ``min_{b,β} 1/(2W) Σ w_i (y_i − b − x_i·β)² + λ‖Dβ‖₁`` (W = Σ w_i) by ADMM; return (b, β).

    The intercept is unpenalised, so it is profiled out by weighted centring. ADMM splits ``z = Dβ``:
    ``β ← (X̃ᵀWX̃/W + ρDᵀD + εI)⁻¹ (X̃ᵀWỹ/W + ρDᵀ(z − u))``, ``z ← soft(Dβ + u, λ/ρ)``, ``u ← u + Dβ − z``;
    stops when the primal and dual residuals fall below ``tol`` (relative to ‖β‖). ``warm`` (a dict, updated
    in place) carries z and u between calls, which EM makes with slowly changing weights. A given
    ``intercept`` is held fixed instead of fitted.
    """
    w = np.asarray(weights, dtype=float)
    total = w.sum()
    if total <= 0:
        return float(np.mean(y)), np.zeros(x.shape[1])
    if intercept is None:
        x_mean = w @ x / total
        y_mean = w @ y / total
    else:
        x_mean = np.zeros(x.shape[1])
        y_mean = float(intercept)
    xc = x - x_mean
    yc = y - y_mean
    gram = (xc * w[:, None]).T @ xc / total
    xty = (xc * w[:, None]).T @ yc / total
    p = x.shape[1]
    if lam <= 0 or p < 2:
        beta = np.linalg.solve(gram + ridge * np.eye(p), xty)
        return float(y_mean - x_mean @ beta), beta
    d = difference_matrix(p)
    inverse = np.linalg.inv(gram + rho * d.T @ d + ridge * np.eye(p))
    base = inverse @ xty
    project = rho * inverse @ d.T  # β = base + project (z − u)
    state = warm if warm is not None else {}
    z = state.get("z", np.zeros(p - 1))
    u = state.get("u", np.zeros(p - 1))
    beta = base + project @ (z - u)
    for _ in range(max_iter):
        beta = base + project @ (z - u)
        d_beta = np.diff(beta)
        z_old = z
        z = soft_threshold(d_beta + u, lam / rho)
        u = u + d_beta - z
        scale = tol * max(1.0, float(np.linalg.norm(beta)))
        if np.linalg.norm(d_beta - z) < scale and rho * np.linalg.norm(z - z_old) < scale:
            break
    state["z"], state["u"] = z, u
    return float(y_mean - x_mean @ beta), beta


@dataclass
class MixtureFit:
    """A fitted LEMNA mixture: weights π, intercepts b, coefficients β (K, M), noise σ², log-likelihood."""

    pi: np.ndarray
    intercepts: np.ndarray
    coefs: np.ndarray
    sigma2: np.ndarray
    log_likelihood: float
    iterations: int

    def log_joint(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """log π_k + log N(y_i; b_k + β_k·x_i, σ_k²), shape (n, K)."""
        mean = self.intercepts[None, :] + x @ self.coefs.T
        return (
            np.log(np.maximum(self.pi, 1e-300))[None, :]
            - 0.5 * np.log(2 * np.pi * self.sigma2)[None, :]
            - 0.5 * (y[:, None] - mean) ** 2 / self.sigma2[None, :]
        )

    def responsibilities(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        lj = self.log_joint(x, y)
        return np.exp(lj - logsumexp(lj, axis=1, keepdims=True))


def fit_mixture(
    x: np.ndarray,
    y: np.ndarray,
    n_components: int = 3,
    lam: float = 1e-3,
    max_iter: int = 50,
    tol: float = 1e-6,
    seed: int = 0,
    shared_intercept: bool = True,
) -> MixtureFit:
    """EM for the fused-lasso mixture regression (see the module docstring).

    With ``shared_intercept`` every component has the same intercept ``b`` (the output with every word
    removed), updated after the components' coefficients (an ECM step): ``b = Σ_ik (z_ik/σ_k²)(y_i − β_k·x_i)
    / Σ_ik z_ik/σ_k²``. Otherwise each component fits its own ``b_k``.
    """
    rng = np.random.default_rng(seed)
    n, p = x.shape
    k = max(1, int(n_components))
    var_floor = max(1e-10, 1e-6 * float(np.var(y)))
    resp = rng.dirichlet(np.ones(k), size=n)
    previous = -np.inf
    fit = None
    warm: list[dict] = [{} for _ in range(k)]
    shared = float(np.mean(y))
    sigma2 = np.ones(k)
    for iteration in range(1, max_iter + 1):
        pi = np.maximum(resp.mean(axis=0), 1e-12)
        intercepts = np.zeros(k)
        coefs = np.zeros((k, p))
        for c in range(k):
            intercepts[c], coefs[c] = fused_lasso_wls(
                x, y, resp[:, c], lam, warm=warm[c], intercept=shared if shared_intercept else None
            )
        if shared_intercept:
            precision = resp / sigma2[None, :]
            shared = float((precision * (y[:, None] - x @ coefs.T)).sum() / precision.sum())
            intercepts[:] = shared
        for c in range(k):
            resid = y - intercepts[c] - x @ coefs[c]
            sigma2[c] = max(var_floor, float(resp[:, c] @ resid**2 / max(resp[:, c].sum(), 1e-12)))
        fit = MixtureFit(pi / pi.sum(), intercepts, coefs, sigma2.copy(), -np.inf, iteration)
        lj = fit.log_joint(x, y)
        fit.log_likelihood = float(logsumexp(lj, axis=1).sum())
        resp = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
        if np.isfinite(previous) and abs(fit.log_likelihood - previous) <= tol * max(1.0, abs(previous)):
            break
        previous = fit.log_likelihood
    assert fit is not None
    return fit


def lemna_scores(
    masks: np.ndarray,
    y: np.ndarray,
    n_components: int = 3,
    lam: float = 1e-3,
    seed: int = 0,
    max_iter: int = 50,
    shared_intercept: bool = True,
) -> tuple[np.ndarray, dict]:
    """Word contributions from the mixture component that best explains the unperturbed instance.

    ``masks[0]`` must be the instance itself (every word kept) and ``y[0]`` its output.
    """
    x = masks.astype(float)
    fit = fit_mixture(x, y, n_components, lam, max_iter, seed=seed, shared_intercept=shared_intercept)
    instance_resp = fit.responsibilities(x[:1], y[:1])[0]
    best = int(np.argmax(instance_resp))
    info = {
        "component": best,
        "n_components": int(fit.coefs.shape[0]),
        "pi": fit.pi.round(6).tolist(),
        "intercept": float(fit.intercepts[best]),
        "sigma2": float(fit.sigma2[best]),
        "em_iterations": fit.iterations,
        "log_likelihood": fit.log_likelihood,
        "fused_lasso_lambda": lam,
        "shared_intercept": shared_intercept,
    }
    return fit.coefs[best].copy(), info
