"""Pages robustness table (AppTest): hostile query parameters give a clean page, never a traceback or a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module", autouse=True)
def fake_backends():
    from alict_app import fakes

    uninstall = fakes.install()
    yield
    uninstall()


@pytest.fixture(autouse=True)
def tmp_runs(tmp_path, monkeypatch):
    from alict_app import runs

    root = tmp_path / "app-runs"
    root.mkdir()
    monkeypatch.setattr(runs, "runs_root", lambda: root)
    return root


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
def test_hostile_query_gives_a_clean_page(tmp_path, page, query):
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
    assert [p.name for p in (tmp_path / "app-runs").iterdir()] == [], "nothing written"
