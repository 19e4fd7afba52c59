"""Calibration of the run summary's intervals and of `compare`'s regression gate (seeded simulation, issue #28).

Usage: python benchmarks/stats_calibration.py [--runs 2000] [--gate-runs 1000] [--seed 0]

Outcomes are seed-clustered as in a real suite: 200 seeds × 5 expansions per LC; a seed fails with probability
p, and each expansion repeats its seed's outcome with probability 0.9 (else it is drawn afresh with probability
p), so every case's fail probability is p. The library's own functions are measured:

* coverage of the nominal 95 % interval of the all-case fail rate (``runner.summary``'s
  ``clustered_interval`` from ``cluster_stats``; ``wilson_interval`` on cases, the old interval, beside it),
  and of the expansion-only rate;
* the family-wise false-positive rate of ``compare --fail-on-regression`` for two equally good models over 25
  LCs (``compare.paired_sign_test`` per LC, ``compare.adjusted(..., "holm")`` across LCs), with the old gate
  (pooled two-proportion z-test, no correction) beside it;
* the gate's power for a 10-point regression (0.20 → 0.30) on one of the 25 LCs.

"independent": the two models' outcomes are drawn independently (the hardest case for a paired test);
"coupled": half the seed groups share their random draws (there B fails wherever A does, plus the
regression's new failures), the other half are drawn independently.
Prints figures and ratios; goals: coverage ≥ 0.93, family-wise false positives ≤ 0.05.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from alict_core.analysis.compare import ALPHA, adjusted, compare_frames, paired_sign_test
from alict_core.metrics.intervals import cluster_stats, clustered_interval, wilson_interval  # noqa: E402

N_SEEDS, N_EXPANSIONS, AGREEMENT, N_LCS = 200, 5, 0.9, 25


def draws(rng: np.random.Generator, runs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The uniforms of one model's outcomes: seeds, "repeat the seed?", fresh expansion draws."""
    return (rng.random((runs, N_SEEDS)), rng.random((runs, N_SEEDS, N_EXPANSIONS)),
            rng.random((runs, N_SEEDS, N_EXPANSIONS)))


def outcomes(u: tuple[np.ndarray, np.ndarray, np.ndarray], p: float) -> np.ndarray:
    """(runs, seeds, 1 + expansions) fails: column 0 the seed, then its expansions."""
    seed_u, repeat_u, fresh_u = u
    seed = seed_u < p
    expansions = np.where(repeat_u < AGREEMENT, seed[:, :, None], fresh_u < p)
    return np.concatenate([seed[:, :, None], expansions], axis=2)


def coverage(rng: np.random.Generator, runs: int, p: float) -> dict[str, float]:
    fails = outcomes(draws(rng, runs), p)
    hits = {"clustered_all": 0, "wilson_all": 0, "clustered_expansions": 0, "wilson_expansions": 0}
    for run in fails:
        for name, block in (("all", run), ("expansions", run[:, 1:])):
            per_seed = block.sum(axis=1)
            sizes = np.full(len(per_seed), block.shape[1])
            n, y = int(sizes.sum()), int(per_seed.sum())
            low, high = clustered_interval(y, n, **cluster_stats(per_seed, sizes))
            hits[f"clustered_{name}"] += low <= p <= high
            low, high = wilson_interval(y, n)
            hits[f"wilson_{name}"] += low <= p <= high
    return {k: v / runs for k, v in hits.items()}


def pooled_z_p(fail_a: np.ndarray, fail_b: np.ndarray, n: int) -> np.ndarray:
    """Two-sided p of the pooled two-proportion z-test (the old compare test), vectorised over runs."""
    from scipy.stats import norm

    pooled = (fail_a + fail_b) / (2 * n)
    se = np.sqrt(pooled * (1 - pooled) * 2 / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (fail_b - fail_a) / n / se, 0.0)
    return 2 * norm.sf(np.abs(z))


def gate(rng: np.random.Generator, runs: int, p: float, regression: float, coupled: bool) -> dict[str, float]:
    """How often the gate trips (any LC flagged as regressed), and how often LC 0 (the regressed one) is flagged."""
    import pandas as pd

    raw = np.ones((runs, N_LCS))
    difference = np.zeros((runs, N_LCS))
    old_flag = np.zeros((runs, N_LCS), dtype=bool)
    for lc in range(N_LCS):
        u_a = draws(rng, runs)
        u_b = draws(rng, runs)
        if coupled:  # half the seed groups share A's draws
            shared = rng.random((runs, N_SEEDS)) < 0.5
            u_b = (np.where(shared, u_a[0], u_b[0]), np.where(shared[:, :, None], u_a[1], u_b[1]),
                   np.where(shared[:, :, None], u_a[2], u_b[2]))
        a = outcomes(u_a, p)
        b = outcomes(u_b, p + (regression if lc == 0 else 0.0))
        worse = (~a & b).sum(axis=2)  # per run and seed group: cases that newly fail
        better = (a & ~b).sum(axis=2)
        raw[:, lc] = [paired_sign_test(w, v) for w, v in zip(worse, better, strict=True)]
        n = N_SEEDS * (1 + N_EXPANSIONS)
        fa, fb = a.sum(axis=(1, 2)), b.sum(axis=(1, 2))
        difference[:, lc] = (fb - fa) / n
        old_flag[:, lc] = (pooled_z_p(fa, fb, n) < ALPHA) & (fb > fa)
    holm = np.vstack([adjusted(pd.Series(row), "holm").to_numpy() for row in raw])
    flagged = (holm < ALPHA) & (difference > 0)
    return {"trips": float(flagged.any(axis=1).mean()), "lc0": float(flagged[:, 0].mean()),
            "old_trips": float(old_flag.any(axis=1).mean()), "old_lc0": float(old_flag[:, 0].mean()),
            "raw_lc_fp": float(((raw[:, 1:] < ALPHA) & (difference[:, 1:] > 0)).mean())}


def check_library_path(rng: np.random.Generator) -> None:
    """One simulated pair through ``compare_frames`` gives the same p-value as the direct call used above."""
    import pandas as pd

    u = draws(rng, 1)
    a, b = outcomes(u, 0.2)[0], outcomes(draws(rng, 1), 0.3)[0]
    rows = [{"lc_id": "sentiment-lc01", "capability": "Vocabulary", "kind": "seed" if k == 0 else "expansion",
             "seed_id": f"s{g}", "text": f"{g}-{k}", "expected": "x", "predicted": "x"}
            for g in range(N_SEEDS) for k in range(1 + N_EXPANSIONS)]
    frame = pd.DataFrame(rows)
    lcs = compare_frames(frame.assign(passed=~a.ravel()), frame.assign(passed=~b.ravel())).lcs
    direct = paired_sign_test((~a & b).sum(axis=1), (a & ~b).sum(axis=1))
    assert math.isclose(float(lcs["p_value"].iloc[0]), direct), (lcs["p_value"].iloc[0], direct)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs for coverage (default 2000)")
    parser.add_argument("--gate-runs", type=int, default=1000, help="simulated comparisons (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    check_library_path(rng)
    gc.freeze()  # statsmodels' Holm runs gc.collect() on every call: keep the loaded modules out of its way
    print(f"{N_SEEDS} seeds × {N_EXPANSIONS} expansions, within-seed agreement {AGREEMENT}, seed {args.seed}")
    print(f"\ncoverage of the nominal 95 % interval ({args.runs} runs)")
    print("   p   all: clustered  Wilson (old)   expansions: clustered  Wilson (old)")
    for p in (0.05, 0.2, 0.5):
        c = coverage(rng, args.runs, p)
        print(f"{p:5.2f}        {c['clustered_all']:.3f}      {c['wilson_all']:.3f}"
              f"                    {c['clustered_expansions']:.3f}      {c['wilson_expansions']:.3f}")
    print(f"\nregression gate over {N_LCS} LCs ({args.gate_runs} comparisons, fail rate 0.20)")
    print("models        case                 gate trips (Holm)  old gate (pooled z, uncorrected)  "
          "raw per-LC false positives")
    for coupled in (False, True):
        kind = "coupled    " if coupled else "independent"
        null = gate(rng, args.gate_runs, 0.2, 0.0, coupled)
        print(f"{kind}   no change (FWER)     {null['trips']:.3f}              {null['old_trips']:.3f}"
              f"                             {null['raw_lc_fp']:.3f}")
        power = gate(rng, args.gate_runs, 0.2, 0.10, coupled)
        print(f"{kind}   +10 points on LC 0   {power['lc0']:.3f} (power)      {power['old_lc0']:.3f}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
