"""Pass 36 rows (the p36cli and p36pages helpers; fixed by the lead): each failed before its fix."""

from __future__ import annotations

import pytest

from tests.robustness.conftest import assert_clean_error


def test_p36_cli_1_compare_with_an_empty_run_b_is_refused(cli, tmp_path, saved_run):
    """Was (the p36cli helper, low-medium): `compare RUN ''` (B an unset shell variable) compared RUN with itself
    ("A and B are the same run ... every case agrees"), exit 0, also under --fail-on-regression: a CI gate
    `compare base "$NEW" --fail-on-regression` passed without comparing anything. Pass 35 listed the options whose
    empty value read as the default; every option's empty value is refused now."""
    out = tmp_path / "cmp.json"
    outcome = cli("compare", str(saved_run), "", "--fail-on-regression", "--json", str(out))
    assert_clean_error(outcome, 2, "run-b is empty")
    assert not out.exists()


def test_p36_cli_2_report_with_an_empty_export_is_refused(cli, tmp_path, saved_run):
    """Was (the p36cli helper): `report RUN --out x.html --export ''` wrote the report and no export, exit 0."""
    html = tmp_path / "x.html"
    outcome = cli("report", str(saved_run), "--out", str(html), "--export", "")
    assert_clean_error(outcome, 2, "--export is empty")
    assert not html.exists()


CONSOLE = """
import sys
from alict_core import cli
from alict_core.commands import validate

validate.run = lambda args: print("a case text \\u2013 with an en dash") or 0
sys.exit(cli.main(["validate", "--task", "sentiment"]))
"""


def test_p36_cli_3_a_console_that_cannot_show_a_character_gets_an_escape(tmp_path):
    """Was (the p36cli helper): `PYTHONIOENCODING=ascii python -m alict_core compare ...` printed the table, then said
    "internal error (UnicodeEncodeError ...) please report it" (exit 3) at an en dash (a case text outside the
    console's code page: Windows `> out.txt` in cp1252)."""
    import os
    import subprocess
    import sys

    outcome = subprocess.run([sys.executable, "-c", CONSOLE], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert outcome.returncode == 0, outcome.stderr[-600:]
    assert "\\u2013" in outcome.stdout


@pytest.mark.usefixtures("fake_backends")
def test_p36_pages_1_a_run_stopped_by_a_task_switch_is_said_on_its_own_tasks_run_page():
    """Was (the p36pages helper, cosmetic): a run stopped by a task switch was said on the other task's Run page
    ("▶ Run resumes it": a press there runs that task's LCs), and Cancel there said "Run cancelled"."""
    from alict_app.run_view import RUN_ACTIVE
    from tests.test_app import start

    at = start()
    at.switch_page("pages/run.py").run()
    at.session_state[RUN_ACTIVE] = "sentiment"  # what a sentiment run stopped by the task switch leaves behind
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    assert not any("stopped before it finished" in i.value for i in at.info)
    at.button(key="run_cancel").click().run()
    assert not any("Run cancelled" in w.value for w in at.warning)
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert any("stopped before it finished" in i.value for i in at.info), [i.value for i in at.info]


RECURRING = """
import pandas as pd
import streamlit as st

from alict_app.case_explainer import recurring

frame = pd.DataFrame({"failed": [True], "lc_id": ["sentiment-lc04"], "lc_label": ["LC4"], "model": ["vader"]})
if st.session_state.get("drawn", True):
    recurring("run", frame)
"""


def test_p36_pages_2_the_collect_templates_count_is_kept_across_pages():
    """Was (the p36pages helper, Chromium): Failures › "Recurring template tokens per LC" › Failures = 25, a visit to
    Specs and back: 10 again (the one widget of the page without `state.keep`)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(RECURRING, default_timeout=60).run()
    at.number_input(key="rt_limit").set_value(25).run()
    at.session_state["drawn"] = False  # another page: Streamlit drops the state of widgets it does not draw
    at.run()
    at.session_state["drawn"] = True
    at.run()
    assert not at.exception and at.number_input(key="rt_limit").value == 25
