"""The embedded-model build script (quick mode) trains real heads on real data and records accuracies."""

from __future__ import annotations

import pytest

from alict_core.data.records import TASK_LABELS
from alict_core.jsonl import read_json
from alict_core.models import checked_proba


@pytest.mark.slow
def test_quick_build_trains_usable_heads(tmp_path):
    from alict_core.models.build import EMBEDDED, accuracies, build, is_built
    from alict_core.models.embedded import EmbeddingHeadModel

    assert not is_built(tmp_path)
    out = build(out_dir=tmp_path, quick=True, log=lambda _: None)
    assert out == tmp_path and is_built(tmp_path)
    report = accuracies(tmp_path)
    assert set(report) >= set(EMBEDDED) | {"vader", "textblob", "hatesonar", "profanity-check"}
    # chance-level macro-F1 is ~0.2 (3 classes) / ~0.41 (majority class, 2 classes)
    assert report["minilm-sst"]["test"]["macro_f1"] > 0.35
    assert report["minilm-hatexplain"]["test"]["macro_f1"] > 0.5
    meta = read_json(tmp_path / "minilm-sst" / "meta.json")
    assert meta["labels"] == list(TASK_LABELS["sentiment"]) and meta["quick"] and meta["n_train"] == 300
    model = EmbeddingHeadModel("minilm-sst", tmp_path / "minilm-sst")
    proba = checked_proba(model, ["a wonderful , moving film", "a dull , tedious mess"])
    assert proba.argmax(axis=1).tolist() == [2, 0]
    assert not list(tmp_path.rglob("*.pkl")) and not list(tmp_path.rglob("*.joblib"))  # no pickles
