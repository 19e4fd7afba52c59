"""AppTest tests of the failure explorer, the Compare page, shareable links and the read-only demo mode.

Fake backends (``tests.fakes``) on the real specs and corpus; runs go to a temporary folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from alict_core.lcspec import load_task_specs

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py

APP = str(Path(__file__).resolve().parent.parent / "app.py")
LCS = ("sentiment-lc01", "sentiment-lc04", "sentiment-lc05")


def start(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if "Unexpected error" in e.value]


def run_fake(at: AppTest, lcs=LCS, max_seeds: int = 12) -> str:
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(list(lcs))
    at.number_input(key="max_seeds").set_value(max_seeds)
    at.run()
    at.button(key="run_go").click().run()
    assert_clean(at)
    return at.session_state["run"]


def heatmap_rows(at: AppTest) -> list[str]:
    chart = next(c for c in at.get("plotly_chart") if json.loads(c.proto.spec)["layout"]["meta"]["kind"] == "heatmap")
    return list(json.loads(chart.proto.spec)["data"][0]["y"])


def query(at: AppTest) -> dict[str, str]:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_filter_group_and_the_link_reopens_the_same_view():
    at = start()
    key = run_fake(at)
    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    titles = {s.id: s.title for s in load_task_specs("sentiment")}
    assert sorted(heatmap_rows(at)) == sorted(f"{s.capability} · {titles[s.id]}" for s in load_task_specs("sentiment")
                                              if s.id in LCS)
    at.multiselect(key="w_cap").set_value(["Negation"]).run()
    at.selectbox(key="w_group").set_value("LC").run()
    assert_clean(at)
    assert set(at.dataframe[-2].value["lc_id"]) <= {"sentiment-lc04", "sentiment-lc05"}  # the case table: Negation LCs
    assert heatmap_rows(at) and all(row.startswith("Negation · ") for row in heatmap_rows(at))
    headline = next(m.value for m in at.markdown if "% of the" in m.value)
    assert headline.startswith("**fake\\-sentiment fails") and "of the LC 'Negation · " in headline
    link = query(at)
    assert link["cap"] == "Negation" and link["group"] == "LC" and link["run"] == key and "::" in link["case"]
    again = start(link)  # a new session opened from the copied link
    again.switch_page("pages/failures.py").run()
    assert_clean(again)
    assert again.multiselect(key="w_cap").value == ["Negation"] and again.selectbox(key="w_group").value == "LC"
    assert again.selectbox(key="w_case").value == link["case"] and heatmap_rows(again) == heatmap_rows(at)
    assert next(m.value for m in again.markdown if "% of the" in m.value) == headline


def test_passes_toggle_and_every_models_prediction_of_the_case():
    at = start()
    run_fake(at, lcs=("sentiment-lc01", "sentiment-lc05"))
    at.switch_page("pages/failures.py").run()
    failing = at.dataframe[0].value
    assert len(failing) and not failing["passed"].any()
    at.radio(key="w_outcome").set_value("passes").run()
    assert_clean(at)
    passing = at.dataframe[0].value
    assert passing["passed"].all() and set(passing["case_id"]).isdisjoint(failing["case_id"])
    at.radio(key="w_outcome").set_value("all").run()
    assert len(at.dataframe[0].value) == len(failing) + len(passing)
    predictions = at.dataframe[1].value
    assert list(predictions.columns[:3]) == ["model", "predicted", "confidence"] and len(predictions) == 1


def test_compare_shows_the_changed_lc_and_its_newly_failing_cases(tmp_path, monkeypatch):
    from alict_core.common.config import SPECS_DIR
    from alict_core.lcspec.loader import workspace_spec_dir

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "workspace"))
    spec_file = workspace_spec_dir("sentiment") / "sentiment-lc06.yaml"  # the user's copy overrides the built-in
    spec_file.parent.mkdir(parents=True, exist_ok=True)
    original = (SPECS_DIR / "sentiment" / "sentiment-lc06.yaml").read_text(encoding="utf-8")
    assert "expected: {one_of: [positive, neutral]}" in original
    changed = original.replace("expected: {one_of: [positive, neutral]}", "expected: {label: negative}")
    spec_file.write_text(changed, encoding="utf-8")
    at = start()
    # 24 seeds: enough independent seeds for the paired test to see a 50-point change after the BH correction
    before = run_fake(at, lcs=("sentiment-lc01", "sentiment-lc06"), max_seeds=24)
    spec_file.write_text(original, encoding="utf-8")  # the change under test: lc06 expects positive or neutral again
    at.switch_page("pages/run.py").run()
    at.button(key="run_go").click().run()
    after = at.session_state["run"]
    assert after != before
    at.switch_page("pages/compare.py").run()
    at.selectbox(key="w_run").set_value(before).run()
    at.selectbox(key="w_run_b").set_value(after).run()
    assert_clean(at)
    lcs = at.dataframe[1].value.set_index("lc_id")
    assert lcs.loc["sentiment-lc01", "difference"] == 0 and lcs.loc["sentiment-lc01", "significance"] == ""
    assert lcs.loc["sentiment-lc06", "difference"] >= 0.5 and lcs.loc["sentiment-lc06", "significance"] != ""
    assert bool(lcs.loc["sentiment-lc06", "regression"]) and not bool(lcs.loc["sentiment-lc01", "regression"])
    newly_failing = at.dataframe[2].value
    lc06 = lcs.loc["sentiment-lc06"]
    newly_passing = at.dataframe[3].value
    assert lc06["n_a"] == lc06["n_b"]
    assert len(newly_failing) - len(newly_passing) == round(lc06["difference"] * lc06["n_a"])
    assert set(newly_failing["lc_id"]) == {"sentiment-lc06"} and set(newly_passing["lc_id"]) <= {"sentiment-lc06"}
    assert any("fail significantly more" in m.value for m in at.markdown)
    assert query(at)["run_b"] == after
    figure = next(json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    assert figure["layout"]["meta"]["kind"] == "comparison"


def test_demo_mode_opens_on_the_story_and_renders_nothing_that_writes(monkeypatch):
    at = start()
    key = run_fake(at, lcs=("sentiment-lc01", "sentiment-lc04", "sentiment-lc05"))
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")
    demo = start({"run": key})
    assert_clean(demo)
    assert demo.title[0].value == "Story"
    assert [s.value for s in demo.subheader] == ["fake\\-sentiment"]  # a model name drawn as text
    cards = [m.value for m in demo.markdown if m.value.startswith("Expected **")]
    assert 2 <= len(cards) <= 3 and sum('class="alict-contrib"' in m.value for m in demo.markdown) == len(cards)
    writing = {"run_go", "baseline_path", "baseline_upload", "spec_save", "um_add"}
    for page in ("pages/story.py", "pages/failures.py", "pages/compare.py", "pages/report.py"):
        demo.switch_page(page).run()
        assert_clean(demo)
        keys = {w.key for kind in ("button", "text_input", "text_area", "file_uploader") for w in demo.get(kind)}
        assert not keys & writing, (page, keys)
        assert not any(str(k).startswith("build::") for k in keys), (page, keys)
        assert not demo.get("file_uploader") and not demo.get("text_area") and not demo.get("text_input"), page


def test_story_cards_can_be_trusted_on_both_tasks(monkeypatch):
    """Story: headlines give n and a 95 % interval, plain capability words (no LC ids, no "SRL"), the explainer
    named only in the footnote, "becomes" only for pass-to-fail pairs; on hate speech a content note first."""
    import re

    from alict_app import explorer_data
    from alict_core.analysis.explore import trustworthy_failures

    at = start()
    key = run_fake(at, lcs=("sentiment-lc01", "sentiment-lc04", "sentiment-lc08"))
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")
    demo = start({"run": key})
    assert_clean(demo)
    headline = next(m.value for m in demo.markdown if m.value.startswith("Fails "))
    assert re.match(r"Fails \d+% of \d+ \(95 % CI \d+%–\d+%\) test cases\.", headline), headline
    shown = " ".join(m.value for m in demo.markdown) + " ".join(c.value for c in demo.caption)
    assert "sentiment-lc" not in shown and "SRL" not in shown and "lemna" not in shown.replace("LEMNA", "")
    assert any("LEMNA explanations" in c.value for c in demo.main.caption)  # the method, in the footnote only
    data = explorer_data.frame(key)
    top = trustworthy_failures(data, per_model=3)
    flips = [m.value for m in demo.markdown if "\n\nbecomes\n\n" in m.value]
    assert len(flips) == int(top["show_seed"].sum())
    assert all(bool(data.loc[data["case_id"] == c, "pass_to_fail"].any()) for c in top.loc[top["show_seed"], "case_id"])
    excluded = set(top["case_id"][:1])  # a case left out (flagged or disputed) never shows up again
    assert not set(trustworthy_failures(data, excluded=excluded)["case_id"]) & excluded
    confirmed = set(top["case_id"][-1:])
    assert trustworthy_failures(data, reviewed=confirmed).iloc[0]["case_id"] in confirmed  # reviewed first
    demo.sidebar.selectbox(key="task").set_value("hate_speech").run()
    assert_clean(demo)
    assert any(w.value.startswith("Content note:") for w in demo.warning)
    assert not any(key in m.value for m in demo.markdown)  # the sentiment run is not shown on hate speech
