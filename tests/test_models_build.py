"""The embedded-classifier build (quick profile) trains real heads on real data and records accuracies."""

from __future__ import annotations

import pytest

from alict_core.common.jsonl import read_json
from alict_core.data.records import TASK_LABELS
from alict_core.models import checked_proba


@pytest.mark.slow
def test_quick_profile_trains_usable_heads(tmp_path):
    """The quick classifiers `make models` built before the tests (verified against their manifest), else a
    fresh quick build here; test_two_quick_builds_give_identical_figures (slow_full) rebuilds them and compares."""
    from alict_core.models import artefacts
    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.training.classifiers import EMBEDDED
    from alict_core.training.targets import build

    artefact = artefacts.built_profile("classifiers", "quick")
    if artefact is None:
        assert not artefacts.is_built("classifiers", tmp_path)
        artefact = build("models", "quick", tmp_path, log=lambda _: None)
        assert artefact.path == tmp_path / "quick" / "classifiers" and artefacts.is_built("classifiers", tmp_path)
        assert artefacts.classifier_accuracies(tmp_path) == read_json(artefact.path / "accuracy.json")
    report = read_json(artefact.path / "accuracy.json")
    assert set(report) >= set(EMBEDDED) | {"vader", "textblob", "hatesonar", "profanity-check"}
    assert artefact.figures["minilm-sst"]["test"] == report["minilm-sst"]["test"]
    # chance-level macro-F1 is ~0.2 (3 classes) / ~0.41 (majority class, 2 classes)
    assert report["minilm-sst"]["test"]["macro_f1"] > 0.45
    assert report["minilm-hatexplain"]["test"]["macro_f1"] > 0.6
    meta = read_json(artefact.path / "minilm-sst" / "meta.json")
    assert meta["labels"] == list(TASK_LABELS["sentiment"]) and meta["n_train"] == 2000
    model = EmbeddingHeadModel("minilm-sst", artefact.path / "minilm-sst")
    proba = checked_proba(model, ["a wonderful , moving film", "a dull , tedious mess"])
    assert proba.argmax(axis=1).tolist() == [2, 0]
    assert not list(artefact.path.rglob("*.pkl")) and not list(artefact.path.rglob("*.joblib"))  # no pickles
