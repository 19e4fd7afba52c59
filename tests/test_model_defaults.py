"""Online-first defaults: tiny bert-style models in a temporary Hugging Face cache stand in for the paper's."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from alict_core import mlm, parsing
from alict_core.models import defaults as model_defaults
from alict_core.models.defaults import resolved_defaults

torch = pytest.importorskip("torch")

WORDS = ["the", "a", "movie", "film", "was", "is", "good", "bad", "great", "and", "i", "loved", "it", "very",
         "these", "people", "are", "awful", "nice"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _snapshot(hub: Path, repo_id: str) -> Path:
    """An empty snapshot folder laid out as huggingface_hub's cache does (refs/main → snapshots/<commit>)."""
    repo = hub / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    folder = repo / "snapshots" / COMMIT
    folder.mkdir(parents=True)
    return folder


def _tiny(kind: str, folder: Path, id2label: dict[int, str] | None = None) -> None:
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertTokenizer

    vocab = SPECIALS + WORDS
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32)
    torch.manual_seed(0)
    if kind == "mlm":
        model = BertForMaskedLM(config)
    else:
        config.num_labels = len(id2label or {})
        config.id2label = dict(id2label or {})
        config.label2id = {v: k for k, v in (id2label or {}).items()}
        model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    BertTokenizer(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True).save_pretrained(folder)


@pytest.fixture(scope="module")
def fake_hub(tmp_path_factory) -> Path:
    """A local HF cache with tiny stand-ins for bert-base-uncased and the paper's two fine-tuned classifiers."""
    hub = tmp_path_factory.mktemp("hf") / "hub"
    _tiny("mlm", _snapshot(hub, "bert-base-uncased"))
    _tiny("cls", _snapshot(hub, "textattack/bert-base-uncased-SST-2"), {0: "LABEL_0", 1: "LABEL_1"})
    _tiny("cls", _snapshot(hub, "Hate-speech-CNERG/dehatebert-mono-english"), {0: "NON_HATE", 1: "HATE"})
    return hub


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean environment: empty model cache, no pins, offline, fresh resolution and model caches."""
    for name in [*model_defaults.PIN_ENV.values(), *model_defaults.OFFLINE_ENVS, "HF_HOME", "NLTK_DATA"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from alict_core.models.registry import clear_model_cache

    clear_model_cache()
    yield monkeypatch
    clear_model_cache()
    resolved_defaults(refresh=True)


def test_paper_models_in_the_local_cache_are_the_defaults_and_load(env, fake_hub):
    env.setenv("HF_HUB_CACHE", str(fake_hub))
    resolved = resolved_defaults(refresh=True)
    json.dumps(resolved)  # recorded in run metadata as is
    assert resolved["mlm"]["name"] == "bert-base-uncased" and resolved["mlm"]["source"] == "local Hugging Face cache"
    assert resolved["classifier:sentiment"]["name"] == "textattack/bert-base-uncased-SST-2"
    assert resolved["classifier:hate_speech"]["name"] == "Hate-speech-CNERG/dehatebert-mono-english"
    assert all(resolved[r]["paper_model"] for r in ("mlm", "classifier:sentiment", "classifier:hate_speech"))
    assert resolved["parser"]["name"] == "benepar-offline" and resolved["parser"]["skipped"][0]["name"] == "benepar_en3"

    suggester = mlm.load_default_suggester()
    assert suggester.name == "bert-base-uncased"
    (slots,) = suggester.suggest(["the movie was [MASK] ."], top_k=3)
    assert len(slots[0]) == 3 and all(word in WORDS for word, _ in slots[0])

    sentiment = model_defaults.load_default_classifier("sentiment")
    proba = sentiment.predict_proba(["a good movie", "a bad film"])
    assert sentiment.name == "textattack/bert-base-uncased-SST-2" and proba.shape == (2, 3)
    assert np.allclose(proba.sum(axis=1), 1.0)  # binary SST-2 head mapped by the ALiCT 3-class rule
    hate = model_defaults.load_default_classifier("hate_speech")
    assert hate.native == ["NON_HATE", "HATE"] and hate.predict_proba(["these people are awful"]).shape == (1, 2)


def test_without_cache_or_network_the_offline_substitutes_resolve_fast(env):
    started = time.monotonic()
    resolved = resolved_defaults(refresh=True)
    assert time.monotonic() - started < 20  # probes time out in 1.5 s; slack for a loaded machine
    assert {r: resolved[r]["name"] for r in resolved} == {
        "parser": "benepar-offline", "mlm": "minilm-offline", "classifier:sentiment": "minilm-sst",
        "classifier:hate_speech": "minilm-hatexplain"}
    assert all(e["source"] == "offline substitute" and e["built"] is False for e in resolved.values())
    assert "offline" in resolved["mlm"]["skipped"][0]["why"]


def test_an_unreachable_host_is_given_up_quickly(env):
    env.delenv("HF_HUB_OFFLINE")
    env.setenv(model_defaults.TIMEOUT_ENV, "0.5")
    import socket

    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    assert model_defaults.reachable(("127.0.0.1", port)) is False
    assert model_defaults.reachable(("no-such-host.invalid", 443)) is False
    assert time.monotonic() - started < 20  # probes time out in 1.5 s; slack for a loaded machine
    env.setenv("ALICT_OFFLINE", "1")
    assert model_defaults.reachable(("127.0.0.1", 9)) is False  # forced offline: no probe at all


def test_a_pin_wins_and_is_recorded(env, fake_hub):
    env.setenv("HF_HUB_CACHE", str(fake_hub))
    env.setenv("ALICT_DEFAULT_MLM", "minilm-offline")
    env.setenv("ALICT_DEFAULT_SENTIMENT_MODEL", "vader")
    resolved = resolved_defaults(refresh=True)
    assert resolved["mlm"]["name"] == "minilm-offline" and resolved["mlm"]["source"] == "pinned by ALICT_DEFAULT_MLM"
    assert resolved["classifier:sentiment"]["name"] == "vader"
    assert resolved["classifier:hate_speech"]["name"] == "Hate-speech-CNERG/dehatebert-mono-english"


def test_an_installed_benepar_en3_is_the_default_parser(env, tmp_path):
    folder = tmp_path / "nltk" / "models" / "benepar_en3"
    folder.mkdir(parents=True)
    (folder / "benepar_model.bin").write_bytes(b"")
    env.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    entry = resolved_defaults(refresh=True)["parser"]
    assert (entry["name"], entry["path"], entry["paper_model"]) == ("benepar_en3", str(folder), True)


@pytest.mark.slow
@pytest.mark.no_models  # builds its own micro parser: runs beside the quick build
def test_benepar_en3_folder_loads_through_the_paper_path(env, tmp_path):
    """A benepar-format folder (a micro-profile build) installed as benepar_en3 parses through the default loader."""
    import shutil

    from alict_core.training.targets import build

    built = build("parser", "micro", tmp_path / "models", log=lambda _: None)
    folder = tmp_path / "nltk" / "models" / "benepar_en3"
    shutil.copytree(built.path, folder)
    env.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    resolved_defaults(refresh=True)
    parser = parsing.load_default_parser()
    (tree,) = parser.parse_batch([["The", "cat", "sat", "."]])
    assert parser.name == "benepar_en3" and tree.leaves() == ["The", "cat", "sat", "."]
    registered = "benepar_en3" in parsing.PARSERS
    try:  # a caller naming no parser gets the paper's one, through the same loading code
        default = parsing.get_parser()
        assert default.name == "benepar_en3" and default.parse_batch([["The", "cat", "sat", "."]]) == [tree]
    finally:
        if not registered:
            parsing.PARSERS.remove("benepar_en3")
        parsing.clear_loaded()


def _neutral_seeds(path: Path) -> Path:
    """Two seeds of a shipped LC (no corpus search, so the run takes a second)."""
    lc, texts = "sentiment-lc05", ["This is not a film .", "This is not a town ."]
    path.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": lc, "task": "sentiment", "text": t, "test_type": "MFT",
                                        "expected": {"kind": "label", "labels": ["neutral"]}}) + "\n"
                            for i, t in enumerate(texts)))
    return path


def test_a_cli_run_records_the_paper_models_of_the_local_cache(env, fake_hub, tmp_path):
    from alict_core.cli import main

    env.setenv("HF_HUB_CACHE", str(fake_hub))
    resolved_defaults(refresh=True)
    sst2 = "textattack/bert-base-uncased-SST-2"
    snapshot = model_defaults.cached_snapshot(sst2)
    argv = ["run", "--task", "sentiment", "--models", f"{sst2}:model_id={snapshot}", "--lc", "sentiment-lc05",
            "--seeds", str(_neutral_seeds(tmp_path / "seeds.jsonl")), "--quiet", "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    recorded = meta["model_defaults"]
    assert {role: recorded[role]["name"] for role in recorded} == {
        "parser": "benepar-offline", "mlm": "bert-base-uncased", "classifier:sentiment": sst2,
        "classifier:hate_speech": "Hate-speech-CNERG/dehatebert-mono-english"}
    assert recorded["mlm"]["source"] == "local Hugging Face cache" and recorded["mlm"]["paper_model"] is True
    assert recorded["mlm"]["path"] == str(model_defaults.cached_snapshot("bert-base-uncased"))
    assert [m["name"] for m in meta["models"]] == [sst2]  # the model actually used


def test_without_the_cache_a_run_records_the_offline_substitutes(env, tmp_path):
    from alict_core.cli import main

    started = time.monotonic()
    resolved_defaults(refresh=True)  # offline env, empty HF cache, empty model cache
    assert time.monotonic() - started < 20  # probes time out in 1.5 s; slack for a loaded machine
    argv = ["run", "--task", "sentiment", "--models", "vader", "--lc", "sentiment-lc05",
            "--seeds", str(_neutral_seeds(tmp_path / "seeds.jsonl")), "--quiet", "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    recorded = json.loads((tmp_path / "run" / "meta.json").read_text())["model_defaults"]
    assert {role: recorded[role]["name"] for role in recorded} == {
        "parser": "benepar-offline", "mlm": "minilm-offline", "classifier:sentiment": "minilm-sst",
        "classifier:hate_speech": "minilm-hatexplain"}
    assert all(e["source"] == "offline substitute" and e["built"] is False and not e["paper_model"]
               for e in recorded.values())


def test_default_parser_and_suggester_follow_the_resolved_defaults(env, fake_hub, tmp_path):
    assert parsing.default_parser_name() == "benepar-offline" and mlm.default_suggester() == ("minilm-offline", {})
    env.setenv("HF_HUB_CACHE", str(fake_hub))
    folder = tmp_path / "nltk" / "models" / "benepar_en3"
    folder.mkdir(parents=True)
    (folder / "benepar_model.bin").write_bytes(b"")
    env.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    resolved_defaults(refresh=True)
    registered = "benepar_en3" in parsing.PARSERS
    try:
        assert parsing.default_parser_name() == "benepar_en3" and "benepar_en3" in parsing.PARSERS
    finally:
        if not registered:
            parsing.PARSERS.remove("benepar_en3")
    snapshot = str(model_defaults.cached_snapshot("bert-base-uncased"))
    assert mlm.default_suggester() == ("hf", {"model": snapshot, "name": "bert-base-uncased"})
    suggester = mlm.get_suggester()  # no name: the paper's masked LM, loaded from the local cache
    assert suggester.name == "bert-base-uncased" and mlm.get_suggester() is suggester
    env.setenv("ALICT_DEFAULT_MLM", "minilm-offline")  # a pin wins over the cache
    resolved_defaults(refresh=True)
    assert mlm.default_suggester() == ("minilm-offline", {})


def test_a_substitute_built_after_resolution_shows_at_once(env, tmp_path):
    from alict_core.models import artefacts

    assert resolved_defaults(refresh=True)["mlm"]["built"] is False
    folder = artefacts.profile_dir("mlm", "quick")  # under the test's empty ALICT_CACHE_DIR
    folder.mkdir(parents=True)
    (folder / artefacts.MANIFEST).write_text(json.dumps({"target": "mlm", "profile": "quick", "files": {},
                                                         "steps": 150, "figures": {"top1": 0.19}}))
    entry = resolved_defaults()["mlm"]  # no refresh: the choice is kept, its artefact facts are current
    assert (entry["name"], entry["built"], entry["profile"], entry["steps"]) == ("minilm-offline", True, "quick", 150)
    assert entry["path"] == str(folder) and "why" not in entry
    assert model_defaults.artefact_identity("mlm").startswith(f"quick:{folder}:")


def test_without_offline_variables_an_unreachable_hub_falls_back_within_5_seconds(env):
    import socket

    env.delenv("HF_HUB_OFFLINE")
    env.setenv(model_defaults.TIMEOUT_ENV, "1.5")  # the default
    with socket.socket() as sock:  # a port with nobody listening stands in for the hub and GitHub
        sock.bind(("127.0.0.1", 0))
        closed = ("127.0.0.1", sock.getsockname()[1])
    env.setattr(model_defaults, "HUB_HOST", closed)
    env.setattr(model_defaults, "BENEPAR_HOST", closed)
    started = time.monotonic()
    resolved = resolved_defaults(refresh=True)
    assert time.monotonic() - started < 20  # probes time out in 1.5 s; slack for a loaded machine
    assert [resolved[r]["name"] for r in model_defaults.ROLES] == [
        "benepar-offline", "minilm-offline", "minilm-sst", "minilm-hatexplain"]
