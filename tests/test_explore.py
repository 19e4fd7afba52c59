"""Failure explorer data, capability labels and run comparison on small real runs (keyword models)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from alict_core.analysis.compare import compare_frames, compare_runs, difference_interval
from alict_core.analysis.explore import (
    Filters,
    apply_filters,
    explorer_frame,
    group_rates,
    headline,
    lc_model_rates,
    striking_failures,
)
from alict_core.lcspec.capabilities import capability_group, lc_catalog, lc_info
from alict_core.runner import build_cases, run_suite

NEG = {"kind": "label", "labels": ["negative"]}


class Keyword:
    """Negative when a keyword occurs, else positive (deterministic)."""

    labels = ("negative", "neutral", "positive")

    def __init__(self, name: str, keywords=("not", "bad")) -> None:
        self.name, self.fingerprint, self.keywords = name, f"kw-explore-{name}", set(keywords)

    def predict_proba(self, texts):
        return np.array([[0.8, 0.1, 0.1] if self.keywords & set(t.split())
                         else [0.02, 0.03, 0.95] if "nice" in t else [0.1, 0.2, 0.7] for t in texts])


def seeds(lc05=NEG):
    rows = [{"id": f"n{i}", "lc_id": "sentiment-lc05", "text": text, "test_type": "MFT", "expected": lc05,
             "rule": "negate_verb", "slots": {"replace": "is -> is not"}}
            for i, text in enumerate(["it is not good", "this is not fun", "the plot is not clever", "he is nice"])]
    rows.append({"id": "v0", "lc_id": "sentiment-lc01", "text": "a film about a town", "test_type": "MFT",
                 "expected": {"kind": "label", "labels": ["neutral"]}, "rule": "as_is"})
    return rows


EXPANSIONS = [
    {"id": "x1", "seed_id": "n0", "text": "it is not very good", "words": ["very"],
     "masked": {"text": "it is not [MASK] good"}},
    {"id": "x2", "seed_id": "n3", "text": "he is really nice", "words": ["really"]},
    {"id": "x3", "seed_id": "n1", "text": "this is not really fun", "words": ["really"]},
    {"id": "x4", "seed_id": "n0", "text": "it is n't good", "words": ["n't"]},  # its seed passes, it fails
]


@pytest.fixture
def run(tmp_path):
    def make(models, lc05=NEG):
        return run_suite(build_cases(seeds(lc05), EXPANSIONS), models, cache_root=tmp_path / "cache")
    return make


def test_shipped_lcs_are_named_by_title_and_capability():
    info = lc_info("sentiment-lc05")
    assert (info.capability, info.title) == ("Negation", "Negated neutral should still be neutral")
    assert info.label == "Negation · Negated neutral should still be neutral"
    assert lc_info("hate_speech-lc13").capability == "Counter speech"
    imported = lc_catalog(["checklist-neg-3"], {"checklist-neg-3": "Negation"})["checklist-neg-3"]
    assert (imported.title, imported.capability) == ("checklist-neg-3", "Negation")
    assert capability_group("slur_h") == "Hate/Slur" and capability_group("Temporal") == "Temporal"
    assert capability_group("") == "Other" and capability_group("Weird thing") == "Weird thing"


def test_templates_and_inserted_words_from_case_meta():
    from alict_core.analysis.explore import case_template, inserted_word

    slots = {"prefix": "They think that", "infix": "but I think that"}
    expected = "mine_positive: They think that … but I think that"
    assert case_template({"rule": "mine_positive", "slots": slots}) == expected
    assert case_template({}) == "" and inserted_word({"words": ["not", "really"]}) == "not really"
    assert inserted_word({"source": "hatecheck.csv", "focus_words": "vermin"}) == "vermin"  # imported HateCheck case


def test_explorer_frame_templates_inserted_words_filters_and_groups(run):
    frame = explorer_frame(run([Keyword("kw")]))
    assert set(frame["lc_title"]) == {"Negated neutral should still be neutral",
                                      "Short sentences with neutral adjectives and nouns"}
    expansions = frame[frame["kind"] == "expansion"].set_index("case_id")
    assert expansions.loc["x1", "template"] == "negate_verb: is -> is not"  # inherited from the seed
    assert expansions.loc["x2", "inserted_word"] == "really" and expansions.loc["x2", "seed_text"] == "he is nice"
    words = group_rates(frame, "inserted_word").set_index("inserted_word")
    assert words.loc["really", "n_cases"] == 2 and words.loc["really", "n_fail"] == 1  # "he is really nice" fails
    assert words.loc["very", "fail_rate"] == 0.0
    rates = group_rates(frame, "template")
    assert headline(rates, "template", ["kw"]).startswith("kw fails 100 % of the 1 cases built by the template 'as_is'")
    passes = apply_filters(frame, Filters(capabilities=("Negation",), outcome="passes", kinds=("expansion",)))
    assert set(passes["case_id"]) == {"x1", "x3"}
    assert set(apply_filters(frame, Filters(word="really"))["case_id"]) == {"x2"}
    heat = lc_model_rates(frame).set_index("lc_id")
    assert heat.loc["sentiment-lc05", "fail_rate"] == pytest.approx(3 / 8)


def test_validity_column_is_filled_by_a_review_lookup(run):
    frame = explorer_frame(run([Keyword("kw")]), validity=lambda lcs: {"sentiment-lc05": 0.9})
    by_lc = frame.groupby("lc_id")["validity"].first()
    assert by_lc["sentiment-lc05"] == 0.9 and np.isnan(by_lc["sentiment-lc01"])


def test_striking_failures_prefer_pass_to_fail_then_confidence(run):
    frame = explorer_frame(run([Keyword("kw"), Keyword("strict", keywords=("bad",))]))
    story = striking_failures(frame, per_model=3)
    assert story.groupby("model").size().max() <= 3
    assert not story.duplicated(["model", "lc_id"]).any()
    strict = story[story["model"] == "strict"]
    assert set(strict["lc_id"]) == {"sentiment-lc05", "sentiment-lc01"}
    kw_lc05 = story[(story["model"] == "kw") & (story["lc_id"] == "sentiment-lc05")].iloc[0]
    assert kw_lc05["case_id"] == "x4"  # a pass-to-fail pair beats the more confident failures of "he is (really) nice"
    assert story[(story["model"] == "strict") & (story["lc_id"] == "sentiment-lc05")].iloc[0]["text"] == "he is nice"


def test_newcombe_difference_interval_known_values():
    lo, hi = difference_interval(48, 80, 56, 70)  # Newcombe (1998) Table II, 56/70 − 48/80, method 10
    assert (lo, hi) == (pytest.approx(0.0524, abs=1e-4), pytest.approx(0.3339, abs=1e-4))
    assert np.isnan(difference_interval(0, 0, 1, 2)[0])


def _sides(n_seeds: int, per_seed: int, fail_a: set[int], fail_b: set[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Side frames of one LC: ``n_seeds`` groups of ``per_seed`` cases; groups in ``fail_x`` fail wholly in x."""
    rows = [{"lc_id": "sentiment-lc01", "capability": "Vocabulary", "kind": "seed" if k == 0 else "expansion",
             "seed_id": f"s{g}", "text": f"case {g}-{k}", "expected": "positive", "predicted": "positive"}
            for g in range(n_seeds) for k in range(per_seed)]
    frame = pd.DataFrame(rows)
    group = frame["seed_id"].str[1:].astype(int)
    return frame.assign(passed=~group.isin(fail_a)), frame.assign(passed=~group.isin(fail_b))


def test_paired_seed_clustered_test_is_not_fooled_by_expansions_the_pooled_z_test_is():
    """Three seeds (with their five expansions each) flip to failing: 18 cases but only 3 independent changes."""
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.proportion import proportions_ztest

    a, b = _sides(20, 6, fail_a=set(range(5)), fail_b=set(range(8)))
    row = compare_frames(a, b).lcs.iloc[0]
    pooled_p = proportions_ztest([30, 48], [120, 120])[1]  # what compare reported before: significant
    assert pooled_p < 0.05
    assert row["p_value"] == pytest.approx(0.25) and row["significance"] == "" and not row["regression"]
    assert (row["n_paired"], row["newly_failing"], row["seed_groups"]) == (120, 18, 20)
    assert row["difference"] == pytest.approx(18 / 120)
    assert row["diff_low"] < 0 < row["difference"] < row["diff_high"]  # the clustered interval spans no change
    # with one case per seed the test is McNemar's exact test (statsmodels)
    a, b = _sides(120, 1, fail_a={0, 1, 2, 50}, fail_b=set(range(3)) | set(range(10, 28)))
    row = compare_frames(a, b).lcs.iloc[0]
    exact = mcnemar([[99, 18], [1, 2]], exact=True).pvalue  # 18 newly fail, 1 newly passes
    assert row["p_value"] == pytest.approx(exact) and row["p_value"] < 0.001 and row["regression"]


def test_group_rates_cluster_a_seed_with_its_expansions():
    from alict_core.analysis.explore import group_rates
    from alict_core.metrics.intervals import wilson_interval

    a, _ = _sides(10, 6, fail_a={0, 1, 2, 3, 4}, fail_b=set())
    frame = a.assign(failed=~a["passed"], model="m")
    for by in ("model", "lc_id"):
        row = group_rates(frame, by).iloc[0]
        low, high = wilson_interval(30, 60)
        assert row["fail_rate"] == 0.5 and row["ci_high"] - row["ci_low"] > 2 * (high - low)
    assert group_rates(frame.drop(columns="seed_id"), "model").iloc[0]["ci_low"] == pytest.approx(low)


def test_compare_same_model_with_one_expectation_changed(run):
    before = run([Keyword("kw")])
    after = run([Keyword("kw")], lc05={"kind": "label", "labels": ["positive"]})
    comparison = compare_runs(before, after)
    lcs = comparison.lcs.set_index("lc_id")
    assert lcs.loc["sentiment-lc01", "difference"] == 0 and lcs.loc["sentiment-lc01", "significance"] == ""
    assert lcs.loc["sentiment-lc05", "difference"] == pytest.approx(5 / 8 - 3 / 8)
    changed = lcs.loc["sentiment-lc05"]
    assert changed["diff_low"] < changed["difference"] < changed["diff_high"]
    assert set(comparison.newly_failing["text"]) == {"it is not good", "this is not fun", "the plot is not clever",
                                                     "it is not very good", "this is not really fun"}
    assert set(comparison.newly_passing["text"]) == {"he is nice", "he is really nice", "it is n't good"}
    assert comparison.label_a == "kw (A)" and "5 cases newly fail" in comparison.headline()
    assert set(comparison.capabilities["capability"]) == {"Negation", "Vocabulary"}


def test_compare_two_models_of_one_run_names_unknown_models(run):
    result = run([Keyword("kw"), Keyword("strict", keywords=("bad",))])
    comparison = compare_runs(result, result, "kw", "strict")
    worse = comparison.lcs.set_index("lc_id").loc["sentiment-lc05"]
    assert worse["rate_b"] > worse["rate_a"] and (comparison.label_a, comparison.label_b) == ("kw", "strict")
    with pytest.raises(Exception, match="not in the run; its models: kw, strict"):
        compare_runs(result, result, "kw", "nope")
    with pytest.raises(Exception, match="name the one to compare"):
        compare_runs(result, result)


def test_validity_hook_fills_the_column_for_every_frame(run):
    from alict_core.analysis import explore

    explore.set_validity_lookup(lambda lcs: {lc: 0.5 for lc in lcs if lc.endswith("lc01")})
    try:
        frame = explorer_frame(run([Keyword("kw")]))
    finally:
        explore.set_validity_lookup(None)
    assert set(frame.loc[frame["lc_id"] == "sentiment-lc01", "validity"]) == {0.5}
    assert frame.loc[frame["lc_id"] == "sentiment-lc05", "validity"].isna().all()
    assert explorer_frame(run([Keyword("kw")]))["validity"].isna().all()


def test_the_explorer_filter_is_the_reader_filter_that_shows_failures_by_default():
    from alict_core.common.errors import AlictError
    from alict_core.runner.reader import RowFilter

    assert isinstance(Filters(), RowFilter) and Filters().outcome == "fails" and RowFilter().outcome == "all"
    assert Filters(("Negation",), ("lc1",), ("vader",), ("MFT",), ("seed",), "all", "t", "w", True) == Filters(
        capabilities=("Negation",), lcs=("lc1",), models=("vader",), test_types=("MFT",), kinds=("seed",),
        outcome="all", template="t", word="w", pass_to_fail=True)
    assert RowFilter(lcs=("lc1",), outcome="fails").expression() is not None
    with pytest.raises(AlictError, match="filtered by LC, model, test type, kind and outcome only"):
        RowFilter(word="really").expression()
