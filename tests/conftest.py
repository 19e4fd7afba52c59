"""Shared fixtures: real (small) data from the data directory, annotated corpora loaded once."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sentiment_corpus():
    from alict_core.data.corpus import load_corpus

    return load_corpus("sentiment")


@pytest.fixture(scope="session")
def hate_corpus():
    from alict_core.data.corpus import load_corpus

    return load_corpus("hate_speech")
