"""Runner: MFT/INV/DIR evaluation, pass-to-fail pairs, caching, dedupe, cancel and kill-and-resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from alict_core.cases.testcases import CaseError
from alict_core.common.errors import AlictError, ModelError
from alict_core.runner import RunCancelled, RunResult, build_cases, run_suite, wilson_interval


class KeywordModel:
    """negative if 'bad' in text, positive if 'good', else neutral; counts the texts it sees."""

    labels = ("negative", "neutral", "positive")

    def __init__(self, name: str = "kw") -> None:
        self.name = name
        self.fingerprint = f"kw-test:{name}"
        self.seen: list[str] = []
        self.calls = 0

    def predict_proba(self, texts):
        self.calls += 1
        self.seen.extend(texts)
        out = np.full((len(texts), 3), 0.1)
        for i, t in enumerate(texts):
            j = 0 if "bad" in t else 2 if "good" in t else 1
            out[i, j] = 0.8
        return out


def seed(sid, lc, text, test_type="MFT", kind="label", labels=("positive",), tolerance=None, **extra):
    return {"id": sid, "lc_id": lc, "task": "sentiment", "text": text, "test_type": test_type,
            "expected": {"kind": kind, "labels": list(labels), "tolerance": tolerance}, **extra}


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "pred"


def test_mft_pass_to_fail_and_summary(cache):
    seeds = [seed("s1", "LC1", "a good film"), seed("s2", "LC1", "a bad film"),
             seed("s3", "LC2", "not bad at all", kind="not_label", labels=("negative",))]
    expansions = [
        # seed pass → fail
        {"id": "e1", "seed_id": "s1", "lc_id": "LC1", "text": "a good but bad film", "accepted": True},
        {"id": "e2", "seed_id": "s1", "lc_id": "LC1", "text": "a very good film", "accepted": True},  # pass → pass
        {"id": "e3", "seed_id": "s2", "lc_id": "LC1", "text": "a good film indeed", "accepted": True},  # fail → pass
        {"id": "e4", "seed_id": "s2", "lc_id": "LC1", "text": "rejected good", "accepted": False},
        {"id": "e5", "seed_id": "unknown", "lc_id": "LC1", "text": "orphan good", "accepted": True},
    ]
    cases = build_cases(seeds, expansions)
    assert [c.case_id for c in cases] == ["s1", "s2", "s3", "e1", "e2", "e3"]
    assert cases[3].expected == cases[0].expected and cases[3].kind == "expansion"
    result = run_suite(cases, [KeywordModel()], cache_root=cache)
    table = result.cases().set_index("case_id")
    assert table.loc["s1", "passed"] and not table.loc["s2", "passed"] and not table.loc["s3", "passed"]
    assert table.loc["e1", "predicted"] == "negative"
    assert table.loc["e1", "probabilities"]["negative"] == pytest.approx(0.8)
    p2f, f2p = result.pass_to_fail(), result.fail_to_pass()
    assert list(p2f.case_id) == ["e1"] and p2f.seed_text[0] == "a good film"
    assert list(f2p.case_id) == ["e3"]
    summary = result.summary().set_index("lc_id")
    lc1 = summary.loc["LC1"]
    assert (lc1.n_seeds, lc1.n_expansions, lc1.n_fail_seeds, lc1.n_fail_expansions) == (2, 3, 1, 1)
    assert lc1.fail_rate_seeds == 0.5 and lc1.n_pass_to_fail == 1 and lc1.n_fail_to_pass == 1
    assert lc1.ci_low < 0.5 < lc1.ci_high
    assert summary.loc["LC2"].fail_rate_seeds == 1.0


def test_inv_tolerance_counts_changed_predictions(cache):
    # 1 of 10 variants changes label → 0.1 ≤ tolerance 0.1 passes; 2 of 10 fails.
    ok = seed("i1", "FAIR", "good x", "INV", "invariance", (), 0.1, variants=["good v"] * 9 + ["bad v"])
    bad = seed("i2", "FAIR", "good y", "INV", "invariance", (), 0.1, variants=["good w"] * 8 + ["bad w", "bad z"])
    strict = seed("i3", "FAIR", "good q", "INV", "invariance", (), 0.0, variants=["good r", "bad r"])
    default = seed("i4", "FAIR", "he is good", "INV", "invariance", (), None)
    cases = build_cases([ok, bad, strict, default], variants_fn=lambda t: [t.replace("he", "she"), t])
    assert cases[3].variants == ("she is good",)  # identical variant dropped
    result = run_suite(cases, [KeywordModel()], cache_root=cache)
    table = result.cases().set_index("case_id")
    assert list(table.passed) == [True, False, False, True]
    assert table.loc["i2", "n_failing_variants"] == 2 and table.loc["i2", "failing_variant"] == "bad w"


def test_dir_direction(cache):
    up = seed("d1", "DIR", "a film", "DIR", "direction", ("positive",), direction="up", variants=["a good film"])
    down_wrong = seed("d2", "DIR", "a film", "DIR", "direction", ("positive",), direction="down",
                      variants=["a good film"])
    up["expected"]["direction"], down_wrong["expected"]["direction"] = "up", "down"
    result = run_suite(build_cases([up, down_wrong]), [KeywordModel()], cache_root=cache)
    assert list(result.cases().passed) == [True, False]


def test_bad_input_errors_name_the_case():
    with pytest.raises(CaseError, match="s9.*expected.kind"):
        build_cases([seed("s9", "LC", "x", kind="sometimes")])
    with pytest.raises(CaseError, match="test_type"):
        build_cases([seed("s8", "LC", "x", test_type="XYZ")])
    with pytest.raises(CaseError, match="duplicate"):
        build_cases([seed("s1", "LC", "x"), seed("s1", "LC", "y")])


def test_dedupe_cache_and_rerun(cache):
    seeds = [seed(f"s{i}", "LC", "same good text") for i in range(5)] + [seed("t", "LC", "other bad text")]
    model = KeywordModel()
    run_suite(build_cases(seeds), [model], batch_size=1, cache_root=cache)
    assert sorted(model.seen) == ["other bad text", "same good text"]
    again = KeywordModel()  # same fingerprint → served from disk
    result = run_suite(build_cases(seeds), [again], cache_root=cache)
    assert again.calls == 0 and result.summary().n_fail_seeds.iloc[0] == 1
    other = KeywordModel("kw2")  # different fingerprint → predicted afresh
    run_suite(build_cases(seeds), [other], cache_root=cache)
    assert other.calls == 1


def test_progress_and_cancel_keep_finished_batches(cache):
    seeds = [seed(f"s{i}", "LC", f"good text {i}") for i in range(10)]
    model, events, polls = KeywordModel(), [], []

    def should_stop():
        polls.append(1)
        return len(polls) > 3

    with pytest.raises(RunCancelled, match="resume"):
        run_suite(build_cases(seeds), [model], batch_size=2, should_stop=should_stop,
                  progress=lambda d, t, m: events.append((d, t)), cache_root=cache)
    assert len(model.seen) == 6 and events[-1] == (6, 10)
    resumed = KeywordModel()
    run_suite(build_cases(seeds), [resumed], batch_size=2, cache_root=cache)
    assert len(resumed.seen) == 4


def test_bad_model_output_names_model(cache):
    class Broken(KeywordModel):
        def predict_proba(self, texts):
            return np.zeros((len(texts), 3))

    with pytest.raises(ModelError, match="'broken'"):
        run_suite(build_cases([seed("s", "LC", "x")]), [Broken("broken")], cache_root=cache)


def test_save_load_roundtrip(cache, tmp_path):
    seeds = [seed("s1", "LC1", "a good film"),
             seed("i1", "FAIR", "good x", "INV", "invariance", (), 0.1, variants=["bad x"])]
    exp = [{"id": "e1", "seed_id": "s1", "text": "a bad film", "accepted": True}]
    result = run_suite(build_cases(seeds, exp), [KeywordModel("a"), KeywordModel("b")], cache_root=cache)
    out = result.save(tmp_path / "run")
    expected_files = {"cases.jsonl", "results.parquet", "results.jsonl", "summary.csv", "meta.json"}
    assert {p.name for p in out.iterdir()} >= expected_files
    loaded = RunResult.load(out)
    assert loaded.run_id == result.run_id
    assert loaded.summary().equals(result.summary())
    columns = ["case_id", "model", "predicted", "passed"]
    assert loaded.cases()[columns].equals(result.cases()[columns])
    with pytest.raises(AlictError, match="not a saved run"):
        RunResult.load(tmp_path)


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(0, 20)[1] == pytest.approx(0.161, abs=1e-3)


def _clustered_fails(rng, runs: int, p: float, n_seeds: int = 200, n_expansions: int = 5, agreement: float = 0.9):
    """(runs, seeds, 1 + expansions) fails: each expansion repeats its seed's outcome with probability 0.9."""
    seed = rng.random((runs, n_seeds)) < p
    fresh = rng.random((runs, n_seeds, n_expansions)) < p
    repeat = rng.random((runs, n_seeds, n_expansions)) < agreement
    return np.concatenate([seed[:, :, None], np.where(repeat, seed[:, :, None], fresh)], axis=2)


def test_seed_clustered_interval_covers_the_true_fail_rate_where_wilson_on_cases_does_not():
    """200 seeds × 5 expansions sharing their seed's outcome (agreement 0.9), 300 seeded runs."""
    from alict_core.metrics.intervals import cluster_stats, clustered_interval

    rng = np.random.default_rng(28)
    p, clustered, wilson = 0.2, 0, 0
    fails = _clustered_fails(rng, 300, p)
    for run in fails:
        per_seed = run.sum(axis=1)
        y, n = int(per_seed.sum()), run.size
        low, high = clustered_interval(y, n, **cluster_stats(per_seed, np.full(len(per_seed), run.shape[1])))
        clustered += low <= p <= high
        low, high = wilson_interval(y, n)
        wilson += low <= p <= high
    assert clustered / len(fails) >= 0.92 and wilson / len(fails) < 0.75


def test_clustered_interval_is_wilson_for_one_case_groups_and_agrees_with_statsmodels_cluster_se():
    import statsmodels.api as sm

    from alict_core.metrics.intervals import cluster_stats, design_effect

    ones = np.ones(100, dtype=int)
    fails = np.r_[np.ones(30, dtype=int), np.zeros(70, dtype=int)]
    stats = cluster_stats(fails, ones)
    assert design_effect(30, 100, **stats) == pytest.approx(1.0, abs=0.02)  # n / (n − 1), floored at 1
    # the ratio estimator's variance is statsmodels' cluster-robust variance of the mean (G/(G−1) correction)
    run = _clustered_fails(np.random.default_rng(1), 1, 0.3, n_seeds=50)[0]
    y, groups = run.ravel().astype(float), np.repeat(np.arange(50), run.shape[1])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    p, n = y.mean(), y.size
    stats = cluster_stats(run.sum(axis=1), np.full(50, run.shape[1]))
    ours = design_effect(int(y.sum()), n, **stats) * p * (1 - p) / n
    assert ours == pytest.approx(fit.bse[0] ** 2, rel=1e-9)


def test_summary_intervals_widen_for_expansions_that_repeat_their_seed(cache):
    """Every expansion shares its seed's outcome: the all-case interval is as wide as the seeds' own."""
    seeds = [seed(f"s{i}", "LC1", "a good film" if i % 2 else "a bad film") for i in range(20)]
    expansions = [{"id": f"s{i}-e{k}", "seed_id": f"s{i}", "lc_id": "LC1", "accepted": True,
                   "text": f"a {'good' if i % 2 else 'bad'} film number {k}"} for i in range(20) for k in range(4)]
    row = run_suite(build_cases(seeds, expansions), [KeywordModel()], cache_root=cache).summary().iloc[0]
    assert (row.n_cases, row.n_fail, row.n_groups) == (100, 50, 20)
    assert row.design_effect == pytest.approx(5 * 20 / 19, rel=1e-9)  # groups of 5 agree fully; G/(G−1)
    naive_low, naive_high = wilson_interval(50, 100)
    assert row.ci_high_all - row.ci_low_all > 1.8 * (naive_high - naive_low)
    assert row.ci_high_expansions - row.ci_low_expansions > 1.6 * (naive_high - naive_low)


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from alict_core.runner import build_cases, run_suite

    class Slow:
        name, labels, fingerprint = "slow", ("negative", "neutral", "positive"), "slow-test-model"
        def predict_proba(self, texts):
            time.sleep(float(sys.argv[2]))
            with open(sys.argv[3], "a") as log:
                log.write("".join(t + "\\n" for t in texts))
            return np.tile([0.2, 0.2, 0.6], (len(texts), 1))

    seeds = [{"id": f"s{i}", "lc_id": "LC", "text": f"text {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}} for i in range(40)]
    from pathlib import Path
    result = run_suite(build_cases(seeds), [Slow()], batch_size=4, cache_root=Path(sys.argv[1]))
    print("DONE", result.summary().n_fail_seeds.iloc[0])
""")


@pytest.mark.slow
def test_kill_and_resume_subprocess(tmp_path):
    script = tmp_path / "kill_run.py"
    script.write_text(KILL_SCRIPT)
    log = tmp_path / "seen.txt"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "cache"), "0.3", str(log)], env=env)
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 12):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = log.read_text().splitlines()
    assert 12 <= len(first) < 40, "the run should have been killed mid-way"
    shards = list((tmp_path / "cache").glob("*/b-*.json"))
    assert len(shards) >= 2
    log.unlink()
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "cache"), "0", str(log)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert "DONE 0" in done.stdout, done.stderr
    second = log.read_text().splitlines()
    # the resumed run predicts only texts whose batch had not finished before the kill
    assert len(second) <= 40 - 4 * len(shards) and set(second).isdisjoint(set(first[: 4 * len(shards)]))
