"""AppTest: the Failures and Report pages on a sharded run (aggregates and pages), the Run page's runs in progress."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sharded_run import write_sharded_run  # noqa: E402

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(autouse=True)
def small_big_threshold(monkeypatch):
    """These runs have 16,000-40,000 rows: lower the paging threshold so they take the large-run path."""
    from alict_app import runs

    monkeypatch.setattr(runs, "BIG_ROWS", 1_000)


def start(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if "Unexpected error" in e.value]


def test_failures_page_pages_through_a_sharded_run(tmp_runs):
    write_sharded_run(tmp_runs / "bigrun1", 20_000, shard_size=2_000)
    at = start({"run": "bigrun1"})
    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    assert any("from aggregates" in c.value for c in at.caption)
    heat = next(c for c in at.get("plotly_chart") if json.loads(c.proto.spec)["layout"]["meta"]["kind"] == "heatmap")
    assert len(json.loads(heat.proto.spec)["data"][0]["y"]) == 3
    assert any(c.value.startswith("10,000 rows · showing 1–100") for c in at.caption)  # the fails of 2 models
    first = at.dataframe[-1].value
    assert len(first) == 100 and not first["passed"].any()
    at.number_input(key="big_page").set_value(2).run()
    second = at.dataframe[-1].value
    assert not set(first["case_id"] + first["model"]) & set(second["case_id"] + second["model"])
    at.multiselect(key="w_models_f").set_value(["m2"]).run()
    at.checkbox(key="w_p2f").check().run()
    assert_clean(at)
    rows = at.dataframe[-1].value
    assert set(rows["model"]) == {"m2"} and rows["pass_to_fail"].all() and (rows["kind"] == "expansion").all()
    at.selectbox(key="w_group").set_value("model").run()
    assert any("m2 fails 25 % of the 20000 cases of the model 'm2'" in m.value for m in at.markdown)


def test_report_page_of_a_sharded_run_shows_the_summary_and_a_bounded_sample(tmp_runs):
    write_sharded_run(tmp_runs / "bigrun2", 8_000, shard_size=2_000)
    at = start({"run": "bigrun2"})
    at.switch_page("pages/report.py").run()
    assert_clean(at)
    summary = at.dataframe[0].value
    assert int(summary["n_cases"].sum()) == 16_000 and len(summary) == 6
    assert sum(m.value.startswith("#### ") for m in at.markdown) == 2  # one heading per model
    assert any("too large to download" in c.value for c in at.caption)


def test_run_page_lists_running_runs_and_attaches(tmp_runs):
    write_sharded_run(tmp_runs / "livecli", 10_000, shard_size=1_000, status="running", shards_done=4)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    write_sharded_run(tmp_runs / "killed", 10_000, shard_size=1_000, status="running", shards_done=2,
                      pid=int(gone.stdout))
    from alict_core.runner.stream import run_lock

    with run_lock(tmp_runs / "livecli"):  # a live CLI writer holds its run's lock for as long as it writes
        at = start()
        at.switch_page("pages/run.py").run()
        assert_clean(at)
        lines = [m.value for m in at.markdown if "shards" in m.value]
        assert any(line.startswith("`livecli`") and "**running** · shards 4/10" in line for line in lines)
        assert any(line.startswith("`killed`") and "stopped \\(process gone\\); re\\-run to resume" in line
                   for line in lines)  # escaped
        at.selectbox(key="attach_run").set_value("killed").run()
        assert_clean(at)
        assert any("re-run to resume" in w.value for w in at.warning)
        at.selectbox(key="attach_run").set_value("livecli").run()
        assert_clean(at)
        assert any("cases 4,000/10,000" in m.value for m in at.markdown)


def test_failures_grouping_of_a_large_run_is_seed_clustered(tmp_runs):
    """Expansions repeat their seed's outcome: the filtered grouping's interval is the library's seed-clustered
    one on the same seed groups (as in the small-run explorer), wider than Wilson on cases."""
    import pandas as pd

    from alict_core.metrics.intervals import cluster_stats, clustered_interval, wilson_interval

    def repeats_its_seed(idx, seed_number, m_index):  # 3 seeds in 10 fail; every tenth expansion flips
        return ((seed_number * 37 + 11 * m_index) % 10 < 3) ^ ((idx % 10 == 7) & (idx % 4 != 0))

    write_sharded_run(tmp_runs / "bigrun3", 8_000, shard_size=2_000, fails=repeats_its_seed)
    at = start({"run": "bigrun3", "group": "model", "kind": "expansion"})
    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "ci_low" in d.value.columns).set_index("model")
    rows = pd.read_parquet(tmp_runs / "bigrun3" / "results", columns=["model", "lc_id", "kind", "seed_id", "passed"])
    rows = rows[rows["kind"] == "expansion"].assign(failed=lambda r: ~r["passed"])
    assert sorted(table.index) == ["m1", "m2"]
    for model, cases in rows.groupby("model"):
        per_seed = cases.groupby(["lc_id", "seed_id"])["failed"].agg(["sum", "size"])
        n, n_fail = len(cases), int(cases["failed"].sum())
        low, high = clustered_interval(n_fail, n, **cluster_stats(per_seed["sum"], per_seed["size"]))
        assert int(table.loc[model, "n_cases"]) == n == 6_000
        assert (table.loc[model, "ci_low"], table.loc[model, "ci_high"]) == pytest.approx((low, high), abs=1e-9)
        wilson_low, wilson_high = wilson_interval(n_fail, n)
        assert high - low > 1.25 * (wilson_high - wilson_low)
