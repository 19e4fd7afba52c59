"""RunReader over a legacy run (RunResult.save) and a synthetic sharded run folder (tests/sharded_run.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sharded_run import write_sharded_run  # noqa: E402
from test_runner import KeywordModel, seed  # noqa: E402

from alict_core.common.errors import AlictError
from alict_core.runner import build_cases, run_suite  # noqa: E402
from alict_core.runner.reader import RowFilter, RunReader, progress_view, running_runs  # noqa: E402


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs") / "big"
    counts = write_sharded_run(folder, 100_000, shard_size=10_000)  # 200k case × model rows
    return folder, counts


def test_sharded_run_counts_facets_and_summary_without_loading_rows(big):
    folder, counts = big
    reader = RunReader.open(folder)
    assert reader.sharded and reader.done and len(reader.files) == counts["n_shards"]
    assert reader.n_rows() == counts["n_rows"] == 200_000
    assert reader.count(RowFilter(outcome="fails")) == counts["n_fail"]
    assert reader.count(RowFilter(models=("m1",), kinds=("seed",))) == 25_000
    facets = reader.facets()
    assert facets["model"] == ["m1", "m2"] and facets["kind"] == ["expansion", "seed"]
    assert facets["lc_id"] == ["sentiment-lc01", "sentiment-lc04", "sentiment-lc05"]
    summary = reader.summary()
    assert int(summary["n_cases"].sum()) == 200_000 and int(summary["n_fail"].sum()) == counts["n_fail"]
    # m1 fails every seed (index % 4 == 0) and passes its expansions: fail-to-pass pairs only
    by_model = summary.groupby("model")[["n_pass_to_fail", "n_fail_to_pass"]].sum()
    assert by_model.loc["m1"].tolist() == [0, 75_000]
    # seed groups summed over the ten parts: 25 000 seeds per model, each with three expansions
    groups = summary.groupby("model")[["n_groups", "n_groups_expansions", "sum_sq_cases"]].sum()
    assert groups.loc["m1"].tolist() == [25_000, 25_000, 25_000 * 16]
    assert reader.count(RowFilter(pass_to_fail=True, models=("m2",))) == int(by_model.loc["m2", "n_pass_to_fail"]) > 0


def test_pages_are_bounded_slices_in_storage_order_with_pairs(big):
    reader = RunReader.open(big[0])
    fails = RowFilter(outcome="fails", models=("m1",))
    first, second = reader.page(fails, 0, 50), reader.page(fails, 50, 50)
    assert len(first) == len(second) == 50 and not set(first["case_id"]) & set(second["case_id"])
    assert first["failed"].all() and set(first["model"]) == {"m1"}
    across = reader.page(fails, 2495, 10)  # crosses the first part (2,500 failing seeds of m1 per part)
    assert list(across["case_id"]) == [f"c{4 * i}" for i in range(2495, 2505)]
    assert reader.page(fails, 10**9, 10).empty
    pairs = reader.page(RowFilter(pass_to_fail=True), 0, 5)
    assert pairs["pass_to_fail"].all() and (pairs["kind"] == "expansion").all()
    assert all(text.startswith("synthetic sentence") for text in pairs["seed_text"])
    assert pairs["confidence"].tolist() == pytest.approx([0.7] * 5)
    with pytest.raises(AlictError, match="offset"):
        reader.page(fails, -1, 5)


def test_sample_failures_is_bounded_per_lc_and_model(big):
    sample = RunReader.open(big[0]).sample_failures(per_group=2)
    assert len(sample) == 3 * 2 * 2 and sample.groupby(["lc_id", "model"]).size().eq(2).all()


def test_legacy_run_reads_like_its_run_result(tmp_path):
    seeds = [seed("s1", "LC1", "a good film"), seed("s2", "LC1", "a bad film"), seed("s3", "LC2", "good")]
    expansions = [{"id": "e1", "seed_id": "s1", "lc_id": "LC1", "text": "a good but bad film", "accepted": True},
                  {"id": "e2", "seed_id": "s2", "lc_id": "LC1", "text": "a good film indeed", "accepted": True}]
    result = run_suite(build_cases(seeds, expansions), [KeywordModel()], cache_root=tmp_path / "pred")
    reader = RunReader.open(result.save(tmp_path / "run"))
    assert not reader.sharded and reader.done and reader.progress() is None
    assert reader.n_rows() == 5 and reader.models() == ["kw"] and reader.lcs() == ["LC1", "LC2"]
    pd.testing.assert_frame_equal(reader.summary(), result.summary(), check_dtype=False)
    reader.folder.joinpath("summary.csv").unlink()  # aggregated from the rows gives the same numbers
    columns = ["lc_id", "model", "n_fail", "n_pass_to_fail", "n_fail_to_pass", "ci_low_expansions",
               "ci_high_expansions", "ci_low_all", "ci_high_all", "design_effect", "n_groups", "sum_sq_fail"]
    aggregated = reader.summary()[columns]  # the seed-clustered intervals too, from per-seed counts of the parts
    expected = result.summary()[columns]
    pd.testing.assert_frame_equal(aggregated, expected, check_dtype=False)
    page = reader.page(RowFilter(pass_to_fail=True))
    assert page["case_id"].tolist() == ["e1"] and page["seed_text"].tolist() == ["a good film"]


def test_running_run_reads_finished_shards_and_a_dead_writer_reads_stopped(tmp_path):
    from alict_core.runner.stream import run_lock

    live = tmp_path / "live"
    write_sharded_run(live, 10_000, shard_size=1_000, status="running", shards_done=3)
    reader = RunReader.open(live)
    assert not reader.done and reader.n_rows() == 3 * 1_000 * 2
    assert not reader.progress()["alive"]  # its pid lives (this process) but no writer holds the run's lock
    with run_lock(live):  # as a writer does for as long as it writes
        progress = reader.progress()
    assert progress["alive"] and progress["shown_status"] == "running" and progress["fraction"] == pytest.approx(0.3)
    assert progress["rate"] == pytest.approx(30.0, rel=0.05) and progress["eta_s"] == pytest.approx(233, rel=0.05)
    assert reader.summary()["n_cases"].sum() == 6_000
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / "dead"
    write_sharded_run(dead, 10_000, shard_size=1_000, status="running", shards_done=1, pid=int(gone.stdout))
    write_sharded_run(tmp_path / "done", 1_000, shard_size=1_000)
    listed = {r["run_id"]: r for r in running_runs(tmp_path)}
    assert set(listed) == {"live", "dead"}
    assert listed["dead"]["shown_status"] == "stopped (process gone); re-run to resume" and not listed["dead"]["alive"]


def test_progress_view_of_an_empty_progress_is_safe():
    view = progress_view({"status": "running", "host": "elsewhere"}, now=10.0)
    assert view["alive"] and view["fraction"] == 0.0 and view["eta_s"] is None and np.isfinite(view["rate"])


def test_a_folder_without_results_is_one_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AlictError, match="no results"):
        RunReader.open(tmp_path / "empty")
    with pytest.raises(AlictError, match="not found"):
        RunReader.open(tmp_path / "missing")


def test_html_report_of_a_sharded_run_is_bounded_and_names_its_figures(big):
    from alict_core.report import render_reader_report

    html = render_reader_report(RunReader.open(big[0]), examples_per_lc=2)
    assert "200000 case × model rows" in html and "partial" not in html
    assert html.count("synthetic sentence number") <= 3 * 2 * 2 + 2 * 3 * 2  # failures + pass-to-fail pairs
    assert len(html) < 100_000


def test_cli_report_of_a_large_run_reads_aggregates_and_gates_on_thresholds(tmp_path, monkeypatch, capsys):
    """`report` on a run over LARGE_ROWS: bounded HTML from aggregates, JUnit/JSON summary and the threshold gate;
    --export (every case in memory) is refused with one message."""
    import json

    from alict_core.cli import main
    from alict_core.runner import reader

    write_sharded_run(tmp_path / "run", 4_000, shard_size=1_000)
    monkeypatch.setattr(reader, "LARGE_ROWS", 1_000)
    out, summary_json = tmp_path / "report.html", tmp_path / "summary.json"
    code = main(["report", str(tmp_path / "run"), "--out", str(out), "--summary-json", str(summary_json),
                 "--fail-threshold", "*=0.2"])
    assert code == 1  # every LC fails 25 % of its cases: over 0.2
    html = out.read_text()
    assert "from the run's aggregates" in capsys.readouterr().out and len(html) < 200_000
    written = json.loads(summary_json.read_text())
    assert written["n_cases"] == 4_000 and set(written["models"]) == {"m1", "m2"}
    assert main(["report", str(tmp_path / "run"), "--out", str(out), "--fail-threshold", "*=0.3"]) == 0
    assert main(["report", str(tmp_path / "run"), "--out", str(out), "--export", str(tmp_path / "x")]) != 0
    assert "--metrics and --export need every case in memory" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def repeats_its_seed(idx: np.ndarray, seed_number: np.ndarray, m_index: int) -> np.ndarray:
    """3 seeds in 10 fail (each LC); an expansion repeats its seed's outcome except every tenth case (flipped)."""
    seed_fails = (seed_number * 37 + 11 * m_index) % 10 < 3
    return seed_fails ^ ((idx % 10 == 7) & (idx % 4 != 0))


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs") / "clustered"
    write_sharded_run(folder, 8_000, shard_size=1_000, fails=repeats_its_seed)
    rows = pd.read_parquet(folder / "results", columns=["lc_id", "test_type", "model", "kind", "seed_id", "passed"])
    return folder, rows.assign(failed=~rows["passed"])


@pytest.mark.parametrize(("filters", "by"), [(RowFilter(), "lc_id"), (RowFilter(), "model"),
                                             (RowFilter(kinds=("expansion",), models=("m2",)), "lc_id"),
                                             (RowFilter(lcs=("sentiment-lc04", "sentiment-lc05")), "test_type")])
def test_filtered_grouping_is_seed_clustered_like_the_in_memory_explorer(clustered, filters, by):
    from alict_core.analysis.explore import counted_group_rates, group_rates
    from alict_core.metrics.intervals import cluster_stats, clustered_interval, wilson_interval

    folder, rows = clustered
    counts = RunReader.open(folder).cluster_counts(filters, by_model=by == "model")
    rates = counted_group_rates(counts, by).set_index(by)
    mask = pd.Series(True, index=rows.index)
    for column, values in (("lc_id", filters.lcs), ("model", filters.models), ("kind", filters.kinds)):
        mask &= rows[column].isin(values) if values else True
    inside = rows[mask]
    in_memory = group_rates(inside, by).set_index(by)  # the small-run explorer on the same rows
    pd.testing.assert_frame_equal(rates.sort_index(), in_memory.sort_index(), check_dtype=False)
    for value, cases in inside.groupby(by):  # the library's interval on the same seed groups, wider than Wilson
        per_seed = cases.groupby(list(dict.fromkeys([by, "lc_id", "seed_id"])))["failed"].agg(["sum", "size"])
        n, n_fail = len(cases), int(cases["failed"].sum())
        expected = clustered_interval(n_fail, n, **cluster_stats(per_seed["sum"], per_seed["size"]))
        assert (rates.loc[value, "ci_low"], rates.loc[value, "ci_high"]) == pytest.approx(expected, abs=1e-12)
        low, high = wilson_interval(n_fail, n)
        assert expected[1] - expected[0] > 1.25 * (high - low)  # outcomes repeat within a seed group


def test_cluster_counts_add_up_over_parts_and_a_filter_outside_the_run_counts_nothing(clustered):
    folder, rows = clustered
    reader = RunReader.open(folder)
    counts = reader.cluster_counts(RowFilter(), by_model=True)
    assert int(counts["n"].sum()) == len(rows) and int(counts["n_fail"].sum()) == int(rows["failed"].sum())
    assert int(counts["n_groups"].sum()) == 2 * 2_000  # 2,000 seed groups, per model
    assert reader.cluster_counts(RowFilter(models=("nobody",))).empty
