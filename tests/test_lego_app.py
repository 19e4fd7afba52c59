"""The "Adjunct trees" page renders a derivation tree for a chosen seed (AppTest, instant fake backends)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from alict_app import fakes

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(scope="module", autouse=True)
def fake_backends():
    uninstall = fakes.install()
    yield
    uninstall()


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
    assert "**p0:** [1] the [2] film bored the critics [3]." in [m.value for m in at.markdown]
    header = next(s.value for s in at.subheader if s.value.startswith("Derivation tree"))
    assert "DIR tests" in header and len(at.get("plotly_chart")) == 1
    table = at.dataframe[-1].value
    assert table["level"].max() == 3 and "fake-sentiment" in table.columns
    assert set(table["fake-sentiment"]) <= {"✔", "✘", "—"} and (table["fake-sentiment"] != "—").any()
    assert table.loc[0, "mutation"] == "template"
