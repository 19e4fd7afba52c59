"""Shared fixtures: real (small) data from the data directory, annotated corpora loaded once."""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.app_fixtures"]  # fake backends and a private run store for the AppTest modules


@pytest.fixture(scope="session")
def sentiment_corpus():
    from alict_core.data.corpus import load_corpus

    return load_corpus("sentiment")


@pytest.fixture(scope="session")
def hate_corpus():
    from alict_core.data.corpus import load_corpus

    return load_corpus("hate_speech")


@pytest.fixture(scope="session", autouse=True)
def private_workspace(tmp_path_factory):
    """Tests never read or write the developer's own spec workspace."""
    import os

    previous = os.environ.get("ALICT_WORKSPACE_DIR")
    os.environ["ALICT_WORKSPACE_DIR"] = str(tmp_path_factory.mktemp("workspace"))
    yield
    if previous is None:
        os.environ.pop("ALICT_WORKSPACE_DIR", None)
    else:
        os.environ["ALICT_WORKSPACE_DIR"] = previous
