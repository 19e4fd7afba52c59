"""Hardening loop: seed-grouped splits, atomic exports, deterministic retraining, versions, before/after proof."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from alict_core.errors import AlictError
from alict_core.harden.export import export_hardening_data, read_split
from alict_core.harden.split import SplitRatios, split_cases, training_label
from alict_core.runner.cases import TestCase

WORDS_POS = ("good", "great", "lovely", "fine", "superb")
WORDS_NEG = ("bad", "awful", "dull", "poor", "weak")


class HashingEncoder:
    """Bag of words hashed into 64 dimensions (deterministic, instant) with the MiniLM encoder's interface."""

    fingerprint = "hashing-encoder:1"
    dim = 64

    def encode(self, texts, batch_size: int = 64, progress=None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in str(text).lower().split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
            out[i] /= max(1.0, float(np.linalg.norm(out[i])))
        return out


def _cases() -> list[TestCase]:
    """Two LCs × 20 seeds × (seed + 2 expansions). LC 'neg' puts 'not' before a positive word (expected negative)."""
    cases = []
    for lc in ("toy-lc01", "toy-lc02"):
        for s in range(20):
            word = WORDS_POS[s % 5]
            if lc == "toy-lc01":
                texts, label = [f"it is not {word}", f"it is not {word} today", f"it is not {word} here"], "negative"
            else:
                texts, label = [f"it is {word}", f"it is {word} today", f"it is {word} here"], "positive"
            seed_id = f"{lc}-s{s}"
            for j, text in enumerate(texts):
                cases.append(TestCase(case_id=f"{seed_id}-{j}", lc_id=lc, kind="seed" if j == 0 else "expansion",
                                      seed_id=seed_id, text=text, expected={"kind": "label", "labels": [label]},
                                      test_type="MFT", capability="Negation", task="sentiment"))
    return cases


ORIGINAL = ([f"it is {w}" for w in WORDS_POS] * 8 + [f"it is {w}" for w in WORDS_NEG] * 8,
            ["positive"] * 40 + ["negative"] * 40)


@pytest.fixture()
def tiny_parent(tmp_path, monkeypatch):
    """A registered embedded classifier 'tiny-embedded' on the hashing encoder, trained on ORIGINAL only."""
    from sklearn.linear_model import LogisticRegression

    from alict_core.models import encoder as encoder_module
    from alict_core.models.embedded import EmbeddingHeadModel
    from alict_core.models.registry import MODELS, clear_model_cache

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(encoder_module, "shared_encoder", lambda path=None: HashingEncoder())
    labels = ["negative", "neutral", "positive"]
    emb = HashingEncoder().encode(ORIGINAL[0])
    clf = LogisticRegression(C=10.0, max_iter=2000, random_state=0).fit(emb, [labels.index(y) for y in ORIGINAL[1]])
    weight = np.zeros((3, emb.shape[1]), dtype=np.float32)
    bias = np.zeros(3, dtype=np.float32)
    weight[0], bias[0] = -clf.coef_[0] / 2, -clf.intercept_[0] / 2
    weight[2], bias[2] = clf.coef_[0] / 2, clf.intercept_[0] / 2
    bias[1] = -5.0
    head = tmp_path / "tiny-embedded"
    head.mkdir()
    np.savez(head / "head.npz", weight=weight, bias=bias)
    (head / "meta.json").write_text(json.dumps({"name": "tiny-embedded", "task": "sentiment", "labels": labels,
                                                "C": 10.0}))
    MODELS.add("tiny-embedded", lambda **kw: EmbeddingHeadModel("tiny-embedded", head, encoder=HashingEncoder()),
               "test", task="sentiment", offline=True, kind="embedded")
    clear_model_cache()
    yield "tiny-embedded"
    for name in list(MODELS.names(kind="version")) + ["tiny-embedded"]:
        MODELS.remove(name)
    clear_model_cache()


@pytest.fixture()
def saved_run(tiny_parent, tmp_path):
    from alict_core.runner.run import run_suite

    result = run_suite(_cases(), [tiny_parent], cache_root=tmp_path / "predictions")
    return result.save(tmp_path / "run")


def test_split_keeps_each_seed_in_one_split_and_is_deterministic():
    cases = _cases()
    parts = split_cases(cases, seed=7)
    where = {}
    for split, items in parts.items():
        for case in items:
            assert where.setdefault(case.seed_id, split) == split, f"seed {case.seed_id} crosses splits"
    assert sum(len(v) for v in parts.values()) == len(cases)
    # 20 seed groups per LC at 8:1:1 → 16 / 2 / 2 groups of 3 cases, per LC
    assert [len(parts[s]) for s in ("train", "validation", "test")] == [96, 12, 12]
    again = split_cases(list(reversed(cases)), seed=7)
    assert {s: sorted(c.case_id for c in v) for s, v in again.items()} == \
        {s: sorted(c.case_id for c in v) for s, v in parts.items()}
    other = split_cases(cases, seed=8)
    assert sorted(c.case_id for c in other["test"]) != sorted(c.case_id for c in parts["test"])


def test_split_ratios_parse_and_reject_bad_values():
    assert SplitRatios.parse("8:1:1") == SplitRatios(0.8, 0.1, 0.1)
    for bad in ("8:1", "a:b:c", "1:1:0", "-1:1:1"):
        with pytest.raises(AlictError):
            SplitRatios.parse(bad)


def test_training_label_only_for_single_label_expectations():
    from alict_core.harden.split import training_labels

    assert training_labels({"kind": "one_of", "labels": ["positive", "neutral"]}) == ["positive", "neutral"]
    assert training_labels({"kind": "not_label", "labels": ["positive"]}) == []
    assert training_label({"kind": "label", "labels": ["negative"]}) == "negative"
    assert training_label({"kind": "one_of", "labels": ["positive", "neutral"]}) is None
    assert training_label({"kind": "invariance"}) is None


def test_export_writes_every_format_atomically(saved_run, tmp_path):
    out = tmp_path / "export"
    summary = export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    assert summary.lcs == ["toy-lc01"]
    train, test = read_split(out, "train"), read_split(out, "test")
    assert {r["lc_id"] for r in train + test} == {"toy-lc01"}
    assert not {r["seed_id"] for r in train} & {r["seed_id"] for r in test}
    assert all(r["label"] == "negative" and "tiny-embedded" in r["failed_by"] for r in train)
    assert (out / "train.csv").read_text().startswith("case_id,lc_id,seed_id")
    import datasets

    loaded = datasets.load_from_disk(str(out / "hf_dataset"))
    assert loaded["train"].num_rows == len(train) and loaded["test"].num_rows == len(test)
    with pytest.raises(AlictError, match="not empty"):
        export_hardening_data(saved_run, out, lcs=["toy-lc01"])
    with pytest.raises(AlictError, match="not in this run"):
        export_hardening_data(saved_run, tmp_path / "other", lcs=["lc09"])
    assert not (tmp_path / "other").exists()


def test_retraining_fixes_the_trained_lc_and_is_deterministic(saved_run, tiny_parent, tmp_path, monkeypatch):
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.harden.versions import list_versions, version_dir
    from alict_core.models.registry import get_model
    from alict_core.training.harden import RetrainSettings, retrain_embedded

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    name = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL)
    assert name.startswith("tiny-embedded@")
    info = list_versions("sentiment")[0]
    assert info["parent"] == "tiny-embedded" and info["lcs"] == ["toy-lc01"] and info["counts"]["lc"] > 0
    first = np.load(version_dir(name) / "head.npz")["weight"]
    # the same command elsewhere gives the same weights
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache2"))
    again = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL)
    assert again == name
    np.testing.assert_array_equal(np.load(version_dir(again) / "head.npz")["weight"], first)
    # the child is a different model: its predictions are not the parent's cached ones
    assert get_model(name).fingerprint != get_model(tiny_parent).fingerprint
    comparison = evaluate_versions(tiny_parent, name, out, heldout=ORIGINAL)
    trained = comparison.lcs[comparison.lcs.trained].iloc[0]
    assert trained.fail_before == 1.0 and trained.fail_after < 0.5
    other = comparison.lcs[~comparison.lcs.trained].iloc[0]
    assert other.lc_id == "toy-lc02" and other.n_cases == 60
    assert comparison.heldout["child"]["accuracy"] >= comparison.heldout["parent"]["accuracy"] - 0.01
    assert (version_dir(name) / "evaluation.json").is_file()


def test_untrainable_split_is_refused(saved_run, tiny_parent, tmp_path):
    from alict_core.training.harden import RetrainSettings, training_mix

    with pytest.raises(AlictError, match="no case with an expected label"):
        training_mix(ORIGINAL, [{"text": "x", "label": None, "allowed_labels": []}], RetrainSettings())
    texts, labels, weights, counts = training_mix(
        ORIGINAL, [{"text": "x", "label": None, "allowed_labels": ["positive", "neutral"]}], RetrainSettings())
    assert texts[-2:] == ["x", "x"] and labels[-2:] == ["positive", "neutral"] and weights[-2:] == [0.5, 0.5]
    assert counts == {"original": 80, "lc": 1}


def test_cli_fix_end_to_end(saved_run, tiny_parent, tmp_path, capsys, monkeypatch):
    from alict_core import cli
    from alict_core.training import harden as training

    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    from alict_core.data import splits

    monkeypatch.setattr(splits, "task_splits", lambda task: {"test": ORIGINAL})
    code = cli.main(["harden", "fix", "--run", str(saved_run), "--lcs", "toy-lc01", "--out", str(tmp_path / "e"),
                     "--model", tiny_parent, "--formats", "jsonl,csv"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "retrained version: tiny-embedded@" in out and "toy-lc02" in out and "held-out child" in out
    assert cli.main(["harden", "versions"]) == 0
    assert "tiny-embedded@" in capsys.readouterr().out
    assert cli.main(["harden", "export", "--run", "nope", "--lcs", "lc1", "--out", str(tmp_path / "x")]) == 2


def _tiny_hf(folder: Path) -> Path:
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertTokenizerFast,
    )

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "it", "is", "not", "today", "here", *WORDS_POS, *WORDS_NEG]
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    import torch

    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=3,
                        id2label={0: "negative", 1: "neutral", 2: "positive"},
                        label2id={"negative": 0, "neutral": 1, "positive": 2})
    BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def test_hf_retraining_is_seeded_and_registers_a_version(saved_run, tmp_path, monkeypatch):
    from alict_core.harden.versions import version_info
    from alict_core.models.registry import clear_model_cache, get_model
    from alict_core.training.harden import RetrainSettings, retrain_hf

    source = _tiny_hf(tmp_path / "tiny-hf")
    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], formats=("jsonl",))
    settings = RetrainSettings(seed=1, max_steps=3, learning_rate=1e-3)
    name = retrain_hf("tiny-hf", source, "sentiment", out, settings=settings, original=ORIGINAL)
    assert version_info(name)["counts"]["steps"] == 3
    probe = ["it is not good", "it is bad"]
    first = get_model(name).predict_proba(probe)
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "elsewhere"))
    clear_model_cache()
    again = retrain_hf("tiny-hf", source, "sentiment", out, settings=settings, original=ORIGINAL)
    assert again == name
    np.testing.assert_allclose(get_model(again).predict_proba(probe), first, atol=1e-6)


def test_harden_page_retrains_to_completion(saved_run, tiny_parent, tmp_path, monkeypatch):
    """AppTest: the page lists the run, retrains the tiny model on the LC it fails, shows before/after."""
    import shutil

    from streamlit.testing.v1 import AppTest

    from alict_core.config import artefact_dir
    from alict_core.data import splits
    from alict_core.training import harden as training

    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    monkeypatch.setattr(splits, "task_splits", lambda task: {"test": ORIGINAL})
    shutil.copytree(saved_run, artefact_dir("runs") / "0123456789abcdef")
    page = str(Path(__file__).resolve().parent.parent / "pages" / "harden.py")
    at = AppTest.from_file(page, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="harden_model").value == "tiny-embedded"
    at.multiselect(key="harden_lcs").set_value(["toy-lc01"]).run()
    at.button(key="harden_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error], [e.value for e in at.error]
    result = at.session_state["harden_result"]
    assert result["child"].startswith("tiny-embedded@")
    trained = [row for row in result["lcs"] if row["trained"]][0]
    assert trained["fail_before"] == 1.0 and trained["fail_after"] < 0.5
    assert any("is now selectable" in i.value for i in at.info)
