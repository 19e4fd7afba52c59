"""Hardening loop: seed-grouped splits, atomic exports, deterministic retraining, versions, before/after proof."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.harden import guards
from alict_core.harden.export import export_hardening_data, read_split, run_readiness
from alict_core.harden.split import SplitRatios, split_cases, training_label
from tests.harden_toy import (
    HELDOUT,
    ORIGINAL,
    SPLITS_OF_TOY_TASK,
    SUBJECTS,
    WORDS_NEG,
    WORDS_POS,
    HashingEncoder,
    register,
    unregister,
    write_head,
)

TOY_MIN_TEST_CASES = 5  # the toy run's test splits hold 6 cases per LC; the real minimum (10) is tested on its own
TEST_SOURCED = (18, 19)  # seeds built from a corpus *test* sentence: they may only ever be tested


def _source(lc: str, s: int) -> str:
    """Seeds 2k and 2k+1 of an LC are built from one corpus sentence; seeds 18 and 19 from corpus test
    sentences; seed 0 of toy-lc02 from the same sentence as seeds 0 and 1 of toy-lc01."""
    if s in TEST_SOURCED:
        return f"sst-test-{s}{lc[-1]}"
    if lc == "toy-lc02" and s == 0:
        return "sst-train-0"
    return f"sst-train-{s // 2}" if lc == "toy-lc01" else f"sst-train-{100 + s // 2}"


def _cases() -> list[TestCase]:
    """Two LCs × 20 seeds × (seed + 2 expansions), every text distinct. LC 'toy-lc01' puts 'not' before a
    positive word (expected negative); seeds record their source sentences (shared as in ``_source``)."""
    cases = []
    for lc in ("toy-lc01", "toy-lc02"):
        for s in range(20):
            word, subject = WORDS_POS[s % 5], SUBJECTS[s // 5]
            verb = "is not" if lc == "toy-lc01" else "is"
            texts = [f"{subject} {verb} {word}", f"{subject} {verb} {word} today", f"{subject} {verb} {word} here"]
            label = "negative" if lc == "toy-lc01" else "positive"
            seed_id = f"{lc}-s{s}"
            for j, text in enumerate(texts):
                cases.append(TestCase(case_id=f"{seed_id}-{j}", lc_id=lc, kind="seed" if j == 0 else "expansion",
                                      seed_id=seed_id, text=text, expected={"kind": "label", "labels": [label]},
                                      test_type="MFT", capability="Negation", task="sentiment",
                                      meta={"rule": "toy", "source_ids": [_source(lc, s)]}))
    return cases


@pytest.fixture()
def tiny_parent(tmp_path, monkeypatch):
    """A registered embedded classifier 'tiny-embedded' on the hashing encoder, trained on ORIGINAL only."""
    from alict_core.models import encoder as encoder_module

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(guards, "MIN_TEST_CASES", TOY_MIN_TEST_CASES)  # the toy LCs' test splits hold 6 cases
    monkeypatch.setattr(encoder_module, "shared_encoder", lambda path=None: HashingEncoder())
    yield register(write_head(tmp_path / "tiny-embedded"))
    unregister()


@pytest.fixture()
def saved_run(tiny_parent, tmp_path):
    from alict_core.runner.run import run_suite

    result = run_suite(_cases(), [tiny_parent], cache_root=tmp_path / "predictions")
    return result.save(tmp_path / "run")


def _held_out(case) -> bool:
    return any(src.startswith("sst-test-") for src in case.meta["source_ids"])


def _sides(parts, key) -> dict[str, set[str]]:
    """{key value: the splits it occurs in}"""
    where: dict[str, set[str]] = {}
    for split, items in parts.items():
        for case in items:
            for value in key(case):
                where.setdefault(value, set()).add(split)
    return where


def test_split_keeps_each_seed_and_source_sentence_in_one_split_and_is_deterministic():
    cases = _cases()
    parts = split_cases(cases, seed=7, held_out=_held_out)
    assert sum(len(v) for v in parts.values()) == len(cases)
    for key in (lambda c: [c.seed_id], lambda c: c.meta["source_ids"], lambda c: [c.text]):
        crossing = {k: v for k, v in _sides(parts, key).items() if len(v) > 1}
        assert not crossing, f"on both sides of the split: {crossing}"
    # seeds built from corpus test sentences are only ever tested
    assert {c.seed_id for c in parts["test"]} >= {f"{lc}-s{s}" for lc in ("toy-lc01", "toy-lc02")
                                                  for s in TEST_SOURCED}
    # a source sentence shared across LCs joins their seeds into one group
    side = {c.seed_id: split for split, items in parts.items() for c in items}
    assert side["toy-lc02-s0"] == side["toy-lc01-s0"] == side["toy-lc01-s1"]
    again = split_cases(list(reversed(cases)), seed=7, held_out=_held_out)
    assert {s: sorted(c.case_id for c in v) for s, v in again.items()} == \
        {s: sorted(c.case_id for c in v) for s, v in parts.items()}
    seven, eight = split_cases(cases, seed=7), split_cases(cases, seed=8)
    assert sorted(c.case_id for c in seven["train"]) != sorted(c.case_id for c in eight["train"])


def test_split_keeps_equal_texts_of_different_seeds_together():
    rows = [{"lc_id": "lc", "seed_id": f"s{i}", "case_id": f"c{i}", "text": f"text {i}", "meta": {}}
            for i in range(30)]
    rows.append({"lc_id": "lc", "seed_id": "s0", "case_id": "c0-x", "text": "Text   5", "meta": {}})
    for seed in range(10):
        parts = split_cases(rows, seed=seed)
        side = {r["seed_id"]: split for split, items in parts.items() for r in items}
        assert side["s0"] == side["s5"]


def test_split_sends_every_group_of_test_sourced_cases_to_test():
    rows = [{"lc_id": "lc", "seed_id": f"s{i}", "case_id": f"c{i}", "text": f"text {i}",
             "meta": {"source_ids": [f"sst-{'test' if i % 2 else 'train'}-{i}"]}} for i in range(40)]
    parts = split_cases(rows, seed=1, held_out=lambda r: r["meta"]["source_ids"][0].startswith("sst-test"))
    assert {r["seed_id"] for r in parts["test"]} >= {f"s{i}" for i in range(1, 40, 2)}
    assert not [r for r in parts["train"] + parts["validation"] if "test" in r["meta"]["source_ids"][0]]
    assert len(parts["train"]) == 20 and parts["validation"] == []  # 32 train groups wanted, 20 free


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
    assert not {s for r in train for s in r["source_ids"]} & {s for r in test for s in r["source_ids"]}
    assert {f"toy-lc01-s{s}" for s in TEST_SOURCED} <= {r["seed_id"] for r in test}
    assert all(r["label"] == "negative" and "tiny-embedded" in r["failed_by"] for r in train)
    assert (out / "train.csv").read_text().startswith("case_id,lc_id,seed_id")
    assert "sst-train-" in (out / "train.csv").read_text()  # the source sentences are in the CSV too
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
    from alict_core.training.retrain import RetrainSettings, retrain_embedded

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    name = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL,
                            heldout=HELDOUT)
    assert name.startswith("tiny-embedded@")
    info = list_versions("sentiment")[0]
    assert info["parent"] == "tiny-embedded" and info["lcs"] == ["toy-lc01"] and info["counts"]["lc"] > 0
    first = np.load(version_dir(name) / "head.npz")["weight"]
    # the same command elsewhere gives the same weights
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache2"))
    again = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL,
                            heldout=HELDOUT)
    assert again == name
    np.testing.assert_array_equal(np.load(version_dir(again) / "head.npz")["weight"], first)
    # the child is a different model: its predictions are not the parent's cached ones
    assert get_model(name).fingerprint != get_model(tiny_parent).fingerprint
    assert get_model(name, name="mine").name == "mine"  # name= renames it (pass 32: it was dropped)
    comparison = evaluate_versions(tiny_parent, name, out, heldout=HELDOUT, original=ORIGINAL)
    trained = comparison.lcs[comparison.lcs.trained].iloc[0]
    assert trained.fail_before == 1.0 and trained.fail_after < 0.5
    assert trained.n_cases == len(read_split(out, "test"))
    # the other LC loses exactly the cases sharing a source sentence with the LC training split
    lc01_s0_trained = "toy-lc01-s0" in {r["seed_id"] for r in read_split(out, "train")}
    assert comparison.checks["other_lc_cases_excluded_for_overlap"] == (3 if lc01_s0_trained else 0)
    other = comparison.lcs[~comparison.lcs.trained].iloc[0]
    assert other.lc_id == "toy-lc02" and other.n_cases == 60 - (3 if lc01_s0_trained else 0)
    # the corpus test split without the one text that is also an original training text; both models on it
    assert comparison.checks["heldout_texts_excluded_as_training_texts"] == 1
    assert comparison.heldout["parent"]["n"] == comparison.heldout["child"]["n"] == len(HELDOUT[0]) - 1
    assert comparison.checks["leak_check"]["leaking"] == 0
    assert comparison.heldout["child"]["accuracy"] >= comparison.heldout["parent"]["accuracy"] - 0.01
    assert (version_dir(name) / "evaluation.json").is_file()


def test_version_name_covers_the_original_training_data(saved_run, tiny_parent, tmp_path):
    from alict_core.training.retrain import RetrainSettings, retrain_embedded

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    first = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL,
                             heldout=HELDOUT)
    fewer = (ORIGINAL[0][:-1], ORIGINAL[1][:-1])
    second = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=fewer, heldout=HELDOUT)
    assert second != first  # other training data, other weights: never the stored version of the first


def _leaking_export(saved_run, tmp_path) -> Path:
    """An export whose training split holds one LC test case and one case built from a corpus test sentence
    (what the old seed-level split produced)."""
    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3, formats=("jsonl",))
    train, test = read_split(out, "train"), read_split(out, "test")
    moved = {**train[0], "meta": {**train[0]["meta"], "source_ids": ["sst-test-7"]}}
    from alict_core.common.jsonl import write_jsonl

    write_jsonl(out / "train.jsonl", [*train[1:], moved, {**test[0], "split": "train"}])
    # the edit recorded in export.json as `harden export` would (a hand edit without it is refused before any
    # leak check: tests/robustness/test_pass11_cli_table.py N6)
    from alict_core.harden.export import split_hashes

    settings = json.loads((out / "export.json").read_text())
    (out / "export.json").write_text(json.dumps({**settings, "files": split_hashes(out)}))
    return out


def test_training_on_a_leaking_export_is_refused_with_counts(saved_run, tiny_parent, tmp_path, capsys):
    from alict_core import cli
    from alict_core.harden.leaks import LeakError
    from alict_core.training.retrain import retrain_embedded

    out = _leaking_export(saved_run, tmp_path)
    n_train = len(read_split(out, "train"))
    with pytest.raises(LeakError, match=f"2 of {n_train} training texts leak") as refused:
        retrain_embedded(tiny_parent, out, original=ORIGINAL, heldout=HELDOUT)
    assert "1 equal an evaluation text, 2 share a source sentence" in str(refused.value)
    assert cli.main(["harden", "train", "--export", str(out), "--model", tiny_parent]) == 2
    err = capsys.readouterr().err
    assert "training texts leak into the evaluation data" in err and "Traceback" not in err
    from alict_core.harden.versions import list_versions

    assert list_versions() == []  # nothing was trained


def test_evaluation_refuses_another_export_and_a_leaking_one(saved_run, tiny_parent, tmp_path):
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.harden.leaks import LeakError
    from alict_core.training.retrain import retrain_embedded

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3, formats=("jsonl",))
    name = retrain_embedded(tiny_parent, out, original=ORIGINAL, heldout=HELDOUT)
    other = tmp_path / "other"
    export_hardening_data(saved_run, other, lcs=["toy-lc01"], seed=4, formats=("jsonl",))
    with pytest.raises(AlictError, match="was not trained on the export"):
        evaluate_versions(tiny_parent, name, other, heldout=HELDOUT, original=ORIGINAL)
    leaking = _leaking_export(saved_run, tmp_path / "edited")  # the same split, its training file edited
    with pytest.raises(LeakError, match="2 of .* training texts leak"):
        evaluate_versions(tiny_parent, name, leaking, heldout=HELDOUT, original=ORIGINAL)


def test_leak_check_counts_equal_texts_and_shared_sources():
    from alict_core.data.splits import source_split_lookup
    from alict_core.harden.leaks import find_leaks

    def row(text, *sources, variants=()):
        return {"text": text, "variants": list(variants), "meta": {"source_ids": list(sources)}}

    evaluation = [row("It is  good", "sst-train-1"), row("a b", "sst-dev-2", variants=["a c"])]
    training = [row("it is good", "sst-train-9"),  # equal text (case and spaces aside)
                row("other", "sst-train-1"),  # shares an LC test case's source
                row("more", "sst-test-4"),  # built from a corpus test sentence
                row("a c"),  # equals a variant that is evaluated
                row("held out text"),  # equals a corpus test text
                row("clean", "sst-train-3")]
    report = find_leaks(training, evaluation, heldout_texts=["Held out text"],
                        source_split=source_split_lookup("sentiment"))
    assert (report.leaking, report.equal_text, report.shared_source) == (5, 3, 2)
    assert report.examples == ["it is good", "other", "more", "a c", "held out text"]


def test_hatexplain_sources_resolve_to_their_official_split():
    from alict_core.common.jsonl import read_json
    from alict_core.data.files import data_file
    from alict_core.data.splits import source_split_lookup

    divisions = read_json(data_file("hatexplain/post_id_divisions.json"))
    split_of = source_split_lookup("hate_speech")
    assert split_of(f"hx-{divisions['test'][0]}") == "test" and split_of(f"hx-{divisions['train'][0]}") == "train"
    assert split_of("hx-no-such-post") is None
    assert source_split_lookup("sentiment")("sst-test-12-p3") == "test"


def test_untrainable_split_is_refused(saved_run, tiny_parent, tmp_path):
    from alict_core.training.retrain import RetrainSettings, training_mix

    with pytest.raises(AlictError, match="training split is empty"):
        training_mix(ORIGINAL, [], RetrainSettings())
    with pytest.raises(AlictError, match="no case with an expected label"):
        training_mix(ORIGINAL, [{"text": "x", "label": None, "allowed_labels": []}], RetrainSettings())
    texts, labels, weights, counts = training_mix(
        ORIGINAL, [{"text": "x", "label": None, "allowed_labels": ["positive", "neutral"]}], RetrainSettings())
    assert texts[-2:] == ["x", "x"] and labels[-2:] == ["positive", "neutral"] and weights[-2:] == [0.5, 0.5]
    assert counts == {"original": 80, "lc": 1}


def test_cli_fix_end_to_end(saved_run, tiny_parent, tmp_path, capsys, monkeypatch):
    from alict_core import cli
    from alict_core.training import retrain as training

    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    from alict_core.data import splits

    monkeypatch.setattr(splits, "task_splits", lambda task: SPLITS_OF_TOY_TASK)
    code = cli.main(["harden", "fix", "--run", str(saved_run), "--lcs", "toy-lc01", "--out", str(tmp_path / "e"),
                     "--model", tiny_parent, "--formats", "jsonl,csv"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "retrained version: tiny-embedded@" in out and "toy-lc02" in out and "held-out child" in out
    assert "leak check: 0 of" in out and "corpus test split: 1 texts left out" in out
    assert cli.main(["harden", "versions"]) == 0
    assert "tiny-embedded@" in capsys.readouterr().out
    assert cli.main(["harden", "export", "--run", "nope", "--lcs", "lc1", "--out", str(tmp_path / "x")]) == 2


def _tiny_hf(folder: Path) -> Path:
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertTokenizerFast,
    )

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "is", "was", "so", "not", "today", "here",
             *(s.split()[1] for s in SUBJECTS), *WORDS_POS, *WORDS_NEG]
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
    from alict_core.training.retrain import RetrainSettings, retrain_hf

    source = _tiny_hf(tmp_path / "tiny-hf")
    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], formats=("jsonl",))
    settings = RetrainSettings(seed=1, max_steps=3, learning_rate=1e-3)
    name = retrain_hf("tiny-hf", source, "sentiment", out, settings=settings, original=ORIGINAL,
                      heldout=HELDOUT)
    assert version_info(name)["counts"]["steps"] == 3
    probe = ["the film is not good", "the cast was bad"]
    first = get_model(name).predict_proba(probe)
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "elsewhere"))
    clear_model_cache()
    again = retrain_hf("tiny-hf", source, "sentiment", out, settings=settings, original=ORIGINAL,
                      heldout=HELDOUT)
    assert again == name
    np.testing.assert_allclose(get_model(again).predict_proba(probe), first, atol=1e-6)


def test_harden_page_retrains_to_completion(saved_run, tiny_parent, tmp_path, monkeypatch):
    """AppTest: the page lists the run, retrains the tiny model on the LC it fails, shows before/after."""
    import shutil

    from streamlit.testing.v1 import AppTest

    from alict_app import progress
    from alict_core.common.config import artefact_dir
    from alict_core.data import splits
    from alict_core.training import retrain as training

    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    monkeypatch.setattr(splits, "task_splits", lambda task: SPLITS_OF_TOY_TASK)
    # the bar's clock moves a second at every reading: the finished bar kept for later runs must be the text the
    # bar showed, not one made again later (it said "4 s so far" where the bar had said "3 s", on a loaded machine)
    monkeypatch.setattr(progress, "time", SimpleNamespace(monotonic=itertools.count().__next__))
    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]  # the store holds a run under its id
    shutil.copytree(saved_run, artefact_dir("runs") / run_id)
    page = str(Path(__file__).resolve().parent.parent / "pages" / "harden.py")
    at = AppTest.from_file(page, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="harden_model").value == "tiny-embedded"
    run_label = at.selectbox(key="harden_run").options[0]  # the run by its name (when · LCs · models), not its id
    assert f" · 2 LCs · tiny-embedded · {run_id[:8]}" in run_label and run_id[:12] not in run_label, run_label
    assert at.multiselect(key="harden_lcs").value == ["toy-lc01"]  # toy-lc02 passes: not preselected
    assert at.dataframe[0].value.set_index("lc_id").loc["toy-lc02", "reason"].startswith("the model fails only 0%")
    at.button(key="harden_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error], [e.value for e in at.error]
    result = at.session_state["harden_result"]
    assert result["child"].startswith("tiny-embedded@")
    trained = [row for row in result["lcs"] if row["trained"]][0]
    assert trained["fail_before"] == 1.0 and trained["fail_after"] < 0.5
    assert any("is now selectable" in i.value for i in at.info)
    assert any(c.value.startswith("Leak check: 0 of") for c in at.caption)
    assert any("1 texts equal to a training text left out" in c.value for c in at.caption)
    # the other LC got worse (0 % -> 100 %): flagged in red with its delta, interval and paired test after Holm
    worse = shown(next(m.value for m in at.markdown if m.value.startswith(":red[**Worse after hardening (1):**]")))
    assert "toy-lc02: fail rate 0.0% → 100.0% (+100.0 points, 95 % CI +" in worse
    assert "paired p < 0.001, Holm p < 0.001)" in worse and "not significant" not in worse
    other = next(row for row in result["lcs"] if not row["trained"])
    assert other["regression"] and other["p_holm"] < 0.05
    assert any(c.value.startswith("Before and after on exactly the same cases: paired, seed-clustered exact sign "
                                  "test") and "Holm (family-wise error) across LCs" in c.value for c in at.caption)
    bar = at.get("progress")[0].proto
    assert bar.value == 100 and bar.text.startswith("step 3 of 3, testing") and "ETA 0 s" in bar.text
    at.run()  # a rerun from elsewhere (the sidebar's probe resolving) keeps the finished bar and the result
    assert not at.exception, [e.value for e in at.exception]
    bars = at.get("progress")
    assert len(bars) == 1 and bars[0].proto.text == bar.text and bars[0].proto.value == 100
    assert any(m.value.startswith(":red[**Worse after hardening (1):**]") for m in at.markdown)


def test_readiness_preselects_only_trainable_lcs_the_model_fails_with_a_big_enough_test_split(saved_run, tiny_parent,
                                                                                              monkeypatch):
    from alict_core.harden.export import corpus_test_membership, export_rows
    from alict_core.harden.split import SplitRatios

    ready = {r.lc_id: r for r in run_readiness(saved_run, tiny_parent)}
    assert ready["toy-lc01"].ready and ready["toy-lc01"].fail_rate == 1.0 and ready["toy-lc01"].test_cases == 6
    assert not ready["toy-lc02"].ready and ready["toy-lc02"].reason.startswith("the model fails only 0%")
    assert guards.preselected(list(ready.values())) == ["toy-lc01"]
    monkeypatch.setattr(guards, "MIN_TEST_CASES", 10)
    strict = run_readiness(saved_run, tiny_parent)
    assert [r.reason for r in strict if r.lc_id == "toy-lc01"] == [
        "its test split holds 6 cases, under the minimum of 10"]
    assert guards.preselected(strict) == []
    # an LC whose expectation cannot be trained on (INV) is never ready, however often the model fails it
    rows = [{**c.to_dict(), "lc_id": "toy-inv", "expected": {"kind": "invariance"},
             "failed_by": {tiny_parent: True}} for c in _cases()[:60]]
    parts = export_rows(rows, ratios=SplitRatios(), seed=13, held_out=corpus_test_membership("sentiment"))
    (inv,) = guards.lc_readiness(rows, tiny_parent, parts, min_test_cases=1)
    assert not inv.ready and inv.fail_rate == 1.0 and inv.reason.startswith("its expectation cannot be trained on")


def test_a_test_split_under_the_minimum_is_refused_naming_the_lc_its_size_and_the_minimum(
        saved_run, tiny_parent, tmp_path, monkeypatch, capsys):
    from alict_core import cli
    from alict_core.data import splits
    from alict_core.training import retrain as training
    from alict_core.training.retrain import retrain_embedded

    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    monkeypatch.setattr(splits, "task_splits", lambda task: SPLITS_OF_TOY_TASK)
    monkeypatch.setattr(guards, "MIN_TEST_CASES", 10)  # the real rule; the toy LCs' test splits hold 6 cases
    message = "the test split of toy-lc01 holds 6 cases, under the minimum of 10 per trained LC"
    with pytest.raises(AlictError, match=message):  # the export of `fix` and the page: refused before writing
        export_hardening_data(saved_run, tmp_path / "refused", lcs=["toy-lc01"], min_test_cases=10)
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "plain"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], formats=("jsonl",))  # a bare export may be small
    with pytest.raises(AlictError, match=message):  # training refuses it (CLI `harden train` and the page)
        retrain_embedded(tiny_parent, out)
    assert retrain_embedded(tiny_parent, out, min_test_cases=6).startswith("tiny-embedded@")
    code = cli.main(["harden", "fix", "--run", str(saved_run), "--lcs", "toy-lc01", "--out", str(tmp_path / "fix"),
                     "--model", tiny_parent, "--formats", "jsonl"])
    captured = capsys.readouterr()
    assert code == 2 and message in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "fix").exists()
    assert cli.main(["harden", "train", "--export", str(out), "--model", tiny_parent]) == 2
    assert message in capsys.readouterr().err
    assert cli.main(["harden", "export", "--run", str(saved_run), "--lcs", "toy-lc01", "--out", str(tmp_path / "x"),
                     "--formats", "jsonl"]) == 0
    assert f"note: {message}" in capsys.readouterr().out


def test_regressions_list_what_got_worse_with_its_paired_test_and_interval():
    from alict_core.harden.evaluate import regression_note, regression_text, regressions

    lc = {"trained": False, "n_cases": 20, "ci_low_before": 0, "ci_high_before": 1, "ci_low_after": 0,
          "ci_high_after": 1}
    result = {"lcs": [{**lc, "lc_id": "a", "fail_before": 0.5, "fail_after": 0.75, "diff_low": -0.05,
                       "diff_high": 0.55, "p_value": 0.0313, "p_holm": 0.0626, "regression": False},
                      {**lc, "lc_id": "b", "fail_before": 0.5, "fail_after": 0.25, "diff_low": -0.5,
                       "diff_high": 0.0, "p_value": 0.0313, "p_holm": 0.0626, "regression": False}],
              "heldout": {"parent": {"accuracy": 0.8, "macro_f1": 0.7, "n": 100},
                          "child": {"accuracy": 0.78, "macro_f1": 0.71, "n": 100}},
              "heldout_test": {"newly_wrong": 4, "newly_right": 2, "p_value": 0.6875, "diff_low": -0.07,
                               "diff_high": 0.03}}
    worse = regressions(result)
    assert [(w["what"], w["measure"]) for w in worse] == [("a", "fail rate"), ("corpus test split", "accuracy")]
    assert worse[0]["ci"] == (-0.05, 0.55) and not worse[0]["clear"]  # raw p < 0.05, not after Holm
    assert regression_text(worse[0]) == ("a: fail rate 50.0% → 75.0% (+25.0 points, 95 % CI -5.0 to +55.0, "
                                         "paired p = 0.031, Holm p = 0.063)")
    assert regression_note(worse[0]) == "not significant after Holm's correction across the LCs"
    assert regression_text(worse[1]) == ("corpus test split: accuracy 0.800 → 0.780 (-2.0 points, 95 % CI -7.0 to "
                                         "+3.0, paired p = 0.688)")
    assert regression_note(worse[1]) == "not significant (McNemar's exact test)"
    flagged = regressions({"lcs": [{**result["lcs"][0], "p_holm": 0.004, "regression": True}]})
    assert flagged[0]["clear"] and regression_note(flagged[0]) == ""


def test_before_after_is_compares_paired_seed_clustered_test_with_holm_across_lcs(saved_run, tiny_parent,
                                                                                   tmp_path, capsys, monkeypatch):
    """Parent and version score the same cases: each LC gets the exact sign test on its seed groups' net
    discordance (checked against scipy on the version's own predictions), Holm across the LCs (statsmodels)
    flags what got worse, accuracy gets McNemar's exact test; the CLI says which test and correction."""
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    from alict_core import cli
    from alict_core.data import splits
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.models.registry import get_model
    from alict_core.training.retrain import RetrainSettings, retrain_embedded

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    name = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL, heldout=HELDOUT)
    comparison = evaluate_versions(tiny_parent, name, out, heldout=HELDOUT, original=ORIGINAL, save=False)
    lcs = comparison.lcs.set_index("lc_id")
    test = read_split(out, "test")
    texts = [r["text"] for r in test]
    passed = {}
    for model in (tiny_parent, name):
        classifier = get_model(model)
        labels = [classifier.labels[i] for i in classifier.predict_proba(texts).argmax(axis=1)]
        passed[model] = [y in r["expected"]["labels"] for y, r in zip(labels, test, strict=True)]
    net: dict[str, int] = {}
    for r, before, after in zip(test, passed[tiny_parent], passed[name], strict=True):
        net[r["seed_id"]] = net.get(r["seed_id"], 0) + int(before and not after) - int(after and not before)
    up, down = sum(d > 0 for d in net.values()), sum(d < 0 for d in net.values())
    assert down > up == 0  # the version fixed whole seed groups of the trained LC
    assert lcs.loc["toy-lc01", "p_value"] == pytest.approx(binomtest(up, up + down, 0.5).pvalue)
    assert lcs.loc["toy-lc01", "seed_groups"] == len(net) < lcs.loc["toy-lc01", "n_cases"]  # groups, not cases
    holm = multipletests(lcs["p_value"].to_numpy(), method="holm")[1]
    assert lcs["p_holm"].to_numpy() == pytest.approx(holm)
    assert (lcs["regression"] == ((lcs["p_holm"] < 0.05) & (lcs["fail_after"] > lcs["fail_before"]))).all()
    changed_cases = sum(b != a for b, a in zip(passed[tiny_parent], passed[name], strict=True))
    assert lcs.loc["toy-lc01", "p_value"] > binomtest(0, changed_cases, 0.5).pvalue  # cases are not independent
    assert lcs.loc["toy-lc01", "diff_low"] <= lcs.loc["toy-lc01", "delta"] <= lcs.loc["toy-lc01", "diff_high"]
    paired = comparison.heldout_test
    n = comparison.heldout["parent"]["n"]
    assert paired["newly_right"] - paired["newly_wrong"] == pytest.approx(
        (comparison.heldout["child"]["accuracy"] - comparison.heldout["parent"]["accuracy"]) * n, abs=0.01)
    discordant = paired["newly_right"] + paired["newly_wrong"]
    expected_p = binomtest(paired["newly_wrong"], discordant, 0.5).pvalue if discordant else 1.0
    assert paired["p_value"] == pytest.approx(expected_p)
    monkeypatch.setattr(splits, "task_splits", lambda task: SPLITS_OF_TOY_TASK)
    assert cli.main(["harden", "evaluate", "--export", str(out), "--version", name]) == 0
    printed = capsys.readouterr().out
    assert ("before/after on the same cases: paired, seed-clustered exact sign test on seed groups' net discordance"
            in printed and "Holm (family-wise error) across LCs: an LC got worse when its Holm-adjusted p < 0.05"
            in printed and "p_holm" in printed)
    assert f"newly wrong, McNemar's exact test on the same corpus test texts: p = {paired['p_value']:.3g}" in printed


def test_staged_progress_is_one_bar_that_never_goes_back_and_gives_an_eta():
    from alict_app.progress import StagedProgress, eta_text

    class Bar:
        def __init__(self):
            self.calls = []

        def progress(self, value, text):
            self.calls.append((value, text))

    bar = Bar()
    overall = StagedProgress(bar, {"exporting": 0.1, "retraining": 0.4, "testing": 0.5})
    overall.update("exporting", 1, 1)
    overall.update("retraining", 50, 100, "encoding")
    overall.update("retraining", 10, 100, "a late, smaller count")
    overall.update("testing", 1, 2)
    values = [v for v, _ in bar.calls]
    assert values == pytest.approx([0.1, 0.3, 0.3, 0.75]) and values == sorted(values)
    assert bar.calls[1][1].startswith("step 2 of 3, retraining: encoding · 30% · ") and "ETA " in bar.calls[1][1]
    assert eta_text(0.01, 5) == "ETA after the first steps" and eta_text(0.5, 30) == "ETA 30 s"
    assert eta_text(0.25, 30) == "ETA 1 min 30 s"


def test_harden_page_refuses_a_short_test_split_and_writes_nothing(saved_run, tiny_parent, monkeypatch):
    """AppTest: with the real minimum no toy LC is preselected; choosing one warns, and retraining is refused
    with the LC, its test split's size and the minimum; no export and no version is written."""
    import shutil

    from streamlit.testing.v1 import AppTest

    from alict_core.common.config import artefact_dir
    from alict_core.harden.versions import list_versions

    monkeypatch.setattr(guards, "MIN_TEST_CASES", 10)
    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]  # the store holds a run under its id
    shutil.copytree(saved_run, artefact_dir("runs") / run_id)
    page = str(Path(__file__).resolve().parent.parent / "pages" / "harden.py")
    at = AppTest.from_file(page, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="harden_lcs").value == []
    reasons = at.dataframe[0].value.set_index("lc_id")["reason"]
    assert reasons["toy-lc01"] == "its test split holds 6 cases, under the minimum of 10"
    at.multiselect(key="harden_lcs").set_value(["toy-lc01"]).run()
    message = "the test split of toy-lc01 holds 6 cases, under the minimum of 10 per trained LC"
    assert any(shown(w.value).startswith(message) for w in at.warning)
    at.button(key="harden_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(message in shown(e.value) for e in at.error), [e.value for e in at.error]  # drawn escaped
    at.run()  # a rerun from elsewhere (the sidebar's probe resolving) keeps the refusal: it was wiped under load
    assert any(message in shown(e.value) for e in at.error), [e.value for e in at.error]
    at.multiselect(key="harden_lcs").set_value([]).run()  # other inputs: the refusal was about the old ones
    assert not any(message in shown(e.value) for e in at.error), [e.value for e in at.error]
    assert "harden_result" not in at.session_state
    assert not list(artefact_dir("harden").iterdir()) and not list_versions()


@pytest.mark.parametrize("parent", ["hf", "textattack/bert-base-uncased-SST-2"])
def test_cli_fix_and_evaluate_with_a_local_hf_model(parent, saved_run, tmp_path, capsys, monkeypatch):
    """``--model hf --hf-dir`` (or a hub id with --hf-dir) trains, then compares the version with exactly the
    weights it was retrained from, never a hub download."""
    from alict_core import cli
    from alict_core.common.jsonl import read_json
    from alict_core.data import splits
    from alict_core.harden.evaluate import heldout_scores
    from alict_core.harden.versions import version_dir
    from alict_core.models.hf import HFClassifier
    from alict_core.training import retrain as training

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(training, "original_training_data", lambda task: ORIGINAL)
    monkeypatch.setattr(splits, "task_splits", lambda task: SPLITS_OF_TOY_TASK)
    source = _tiny_hf(tmp_path / "tiny-hf")
    export = tmp_path / "e"
    code = cli.main(["harden", "fix", "--run", str(saved_run), "--lcs", "toy-lc01", "--out", str(export),
                     "--model", parent, "--hf-dir", str(source), "--task", "sentiment", "--formats", "jsonl",
                     "--max-steps", "2", "--learning-rate", "0.001"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    name = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("retrained version: "))
    assert name.startswith(f"{parent}@") and "leak check: 0 of" in out
    kept = ([t for t in HELDOUT[0] if t not in ORIGINAL[0]], [y for t, y in zip(*HELDOUT, strict=True)
                                                               if t not in ORIGINAL[0]])
    before = heldout_scores(HFClassifier(str(source), "sentiment"), *kept)
    assert read_json(version_dir(name) / "evaluation.json")["heldout"]["parent"] == before
    assert cli.main(["harden", "evaluate", "--export", str(export), "--version", name, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["heldout"]["parent"] == before
    # weights changed under the recorded folder: the parent is no longer what was retrained; refused
    (source / "config.json").write_text((source / "config.json").read_text().replace("}", ', "x": 1}', 1))
    assert cli.main(["harden", "evaluate", "--export", str(export), "--version", name]) == 2
    assert "changed since it was retrained" in capsys.readouterr().err


def test_cases_carry_their_seeds_source_sentences():
    """What the leak-free split groups by: a seed's ``source_ids`` reach its case and its expansions' cases."""
    from alict_core.cases.testcases import build_cases

    seed = {"id": "s1", "lc_id": "lc", "text": "it is good", "test_type": "MFT", "rule": "r",
            "expected": {"kind": "label", "labels": ["positive"]}, "source_ids": ["sst-test-3", "sst-train-4"]}
    cases = build_cases([seed], [{"id": "x1", "seed_id": "s1", "text": "it is very good", "words": ["very"]}],
                        variants_fn=lambda text: [])
    assert [c.meta["source_ids"] for c in cases] == [["sst-test-3", "sst-train-4"]] * 2
    assert cases[1].meta["words"] == ["very"]


def shown(markdown: str) -> str:
    """The text a Markdown string shows (its backslash escapes undone): pages escape the values they draw."""
    return re.sub(r"\\(.)", r"\1", markdown)
