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


@pytest.fixture(autouse=True)
def restore_main_module():
    """Streamlit's script runner (AppTest) installs the page script as ``sys.modules['__main__']`` and leaves it
    there; a later test's spawned worker processes then ran ``app.py`` as their main module (its corpus warm-up
    thread included) and one aborted at exit (-6, "PyGILState_Release … finalizing"): each test gets the real one."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(scope="session", autouse=True)
def offline_model_defaults():
    """Tests never probe the network and use the offline parser / masked LM whatever the local HF cache or
    NLTK data hold (set a variable yourself to override; tests/test_model_defaults.py clears them)."""
    import os

    wanted = {"ALICT_OFFLINE": "1", "ALICT_DEFAULT_PARSER": "benepar-offline", "ALICT_DEFAULT_MLM": "minilm-offline"}
    added = [name for name in wanted if name not in os.environ]
    for name in added:
        os.environ[name] = wanted[name]
    yield
    for name in added:
        os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def restore_resolved_model_defaults():
    """A test that re-resolves the defaults under patched variables (a fake HF cache, a tmp benepar_en3) must
    not leave that choice to later tests: the resolution is put back once its variables are restored."""
    from alict_core.models import defaults as model_defaults

    before = model_defaults._RESOLVED
    yield
    if model_defaults._RESOLVED is not before:
        model_defaults._RESOLVED = before


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


@pytest.fixture(scope="session", autouse=True)
def private_review_store(tmp_path_factory):
    """Tests never read or write the developer's own review database (its schema may be another version's,
    and a confirmed write-back there would change what every test run excludes)."""
    import os

    previous = os.environ.get("ALICT_REVIEW_DB_URL")
    os.environ["ALICT_REVIEW_DB_URL"] = f"sqlite:///{tmp_path_factory.mktemp('review')}/review.sqlite"
    yield
    if previous is None:
        os.environ.pop("ALICT_REVIEW_DB_URL", None)
    else:
        os.environ["ALICT_REVIEW_DB_URL"] = previous
