"""Pages robustness table (AppTest): hostile query parameters give a clean page, never a traceback or a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py


APP = str(Path(__file__).resolve().parents[2] / "app.py")


HOSTILE = [  # (page, query)
    ("pages/failures.py", {"run": "../../../etc"}),
    ("pages/report.py", {"run": "/etc/passwd"}),
    ("pages/failures.py", {"run": ".hidden"}),
    ("pages/seeds.py", {"lc": "1.4"}),
    pytest.param("pages/report.py", {"run": "x" * 300}, marks=pytest.mark.slow),
    pytest.param("pages/failures.py", {"run": "..", "model": "../x"}, marks=pytest.mark.slow),
    pytest.param("pages/seeds.py", {"task": "bogus", "lc": "-4"}, marks=pytest.mark.slow),
    pytest.param("pages/seeds.py", {"lc": "hate_speech-lc04"}, marks=pytest.mark.slow),
    pytest.param("pages/run.py", {"run": "../app-runs", "lc": "4x"}, marks=pytest.mark.slow),
    pytest.param("pages/expansions.py", {"lc": "lc99", "seed": "../../x"}, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("page,query", HOSTILE)
def test_hostile_query_gives_a_clean_page(tmp_path, tmp_runs, page, query):
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors
    shown = " ".join(str(getattr(el, "value", "")) for el in [*at.error, *at.warning, *at.info, *at.markdown])
    assert str(tmp_path) not in shown, "no server path on the page"
    assert [p.name for p in tmp_runs.iterdir()] == [], "nothing written"
