"""The "Adjunct trees" page renders a derivation tree for a chosen seed (AppTest, instant fake backends)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from alict_app.formatting import literal

pytestmark = pytest.mark.usefixtures("fake_backends")  # tests/app_fixtures.py


APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_adjunct_trees_page_draws_tree_and_verdicts(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/lego.py").run()
    at.text_input(key="lego_text").set_value("Sadly, the very long film bored the critics in Cannes.")
    at.selectbox(key="lego_mlm").set_value("fake-mlm")
    at.selectbox(key="lego_judge").set_value("fake-sentiment")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    shown = "**p0:** " + literal("[1] the [2] film bored the critics [3].")  # drawn as text, not Markdown
    assert shown in [m.value for m in at.markdown]
    header = next(s.value for s in at.subheader if s.value.startswith("Derivation tree"))
    assert "DIR tests" in header and len(at.get("plotly_chart")) == 1
    table = at.dataframe[-1].value
    assert table["level"].max() == 3 and "fake-sentiment" in table.columns
    assert set(table["fake-sentiment"]) <= {"✔", "✘", "—"} and (table["fake-sentiment"] != "—").any()
    assert table.loc[0, "mutation"] == "template"


def test_first_open_says_what_it_loads_and_a_warm_open_draws_no_box(tmp_path, monkeypatch):
    from alict_app import lego_loading

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(lego_loading, "_loaded", set())  # a fresh server: nothing of the page loaded yet
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/lego.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (box,) = at.status
    assert (box.label, box.state) == ("Loaded: the page below is complete.", "complete")
    steps = [m.value for m in box.markdown]
    assert steps[:2] == ["Loading spaCy's dependency parser …", "Picking full sentences from the corpus …"], steps
    assert any("WordNet" in step for step in steps), steps
    assert any(s.value.startswith("Derivation tree") for s in at.subheader)
    at.run()
    assert not at.exception and not at.status  # everything held now: no box on the next run


class GloomyJudge:
    """Judges every component negative, so a model that finds "funny" positive fails the DIR test."""

    name = "gloomy"
    labels = ("negative", "neutral", "positive")

    def predict_proba(self, texts):
        import numpy as np

        return np.tile([0.8, 0.1, 0.1], (len(texts), 1))


def test_nlplego_suite_runs_from_the_run_page_and_shows_in_failures(tmp_path, monkeypatch):
    from alict_core.common.config import artefact_dir
    from alict_core.lego import pipeline
    from alict_core.lego.settings import LegoSettings

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    settings = LegoSettings(mlm_top_k=0, use_constituency=False)
    trees = pipeline.generate_trees([pipeline.LegoSeed("s1", "I really liked this funny film.")], settings)
    result = pipeline.LegoResult(trees, pipeline.make_cases(trees, "sentiment", GloomyJudge(), settings))
    pipeline.save(result, artefact_dir("lego") / "demo", {"task": "sentiment"})
    suite = pipeline.saved_suites("sentiment")[0]["path"]
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value([])
    at.multiselect(key="run_lego").set_value([suite])
    at.run()
    at.button(key="run_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    summary = at.dataframe[-1].value
    assert list(summary["lc_id"]) == ["nlplego"] and summary["fail_rate"].iloc[0] > 0
    at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if "Unexpected error" in e.value]
    failing = next(d.value for d in at.dataframe if "text" in d.value.columns and "lc_id" in d.value.columns)
    assert "I really liked this film." in set(failing["text"]) and set(failing["lc_id"]) == {"nlplego"}
