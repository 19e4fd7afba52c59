"""Fixtures shared by the AppTest modules (registered in conftest.py; a module opts in with `pytestmark`)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def fake_backends():
    """The instant fake parser, masked LM and keyword models, registered for the module's tests."""
    import fakes

    uninstall = fakes.install()
    yield
    uninstall()


@pytest.fixture()
def tmp_runs(tmp_path, monkeypatch):
    """A private run store per test."""
    from alict_app import runs

    root = tmp_path / "runs"
    root.mkdir()
    monkeypatch.setattr(runs, "runs_root", lambda: root)
    return root
