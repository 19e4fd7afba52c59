"""Model adapters: label mapping, HF (tiny local BERT), lexicon / ONNX / profanity models, sklearn,
static predictions, HTTP JSON and OpenAI-compatible endpoints against local servers, the registry."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from alict_core.common.errors import AlictError, ModelError
from alict_core.common.trust import TrustError
from alict_core.data.records import TASK_LABELS
from alict_core.models import MODELS, checked_proba, get_model
from alict_core.models.labels import binary_to_three, map_columns, score_to_three
from alict_core.models.remote import HttpJsonModel, OpenAIChatModel, parse_answer
from alict_core.models.run_scope import run_scope

TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + "the movie is good a bad film it ok".split()


def make_tiny_bert(directory: Path, id2label: dict[int, str], seed: int = 0) -> Path:
    """A randomly initialised 2-layer BERT classifier with a 14-word WordPiece vocab, saved locally."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(TINY_VOCAB) + "\n")
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(TINY_VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64, num_labels=len(id2label),
                        id2label=id2label, label2id={v: k for k, v in id2label.items()})
    BertForSequenceClassification(config).save_pretrained(directory)
    BertTokenizer(str(directory / "vocab.txt")).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_hf_model(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tinybert"), {0: "NEGATIVE", 1: "POSITIVE"})


# ---------------------------------------------------------------- label mapping

def test_binary_to_three_boundaries_are_neutral():
    rows = binary_to_three(np.array([0.0, 0.3333, 1 / 3, 0.5, 2 / 3, 0.6667, 1.0]))
    assert rows.sum(axis=1).tolist() == [1.0] * 7  # never an all-zero row
    assert rows.argmax(axis=1).tolist() == [0, 0, 1, 1, 1, 2, 2]
    custom = binary_to_three(np.array([0.45, 0.55]), low=0.5, high=0.5)
    assert custom.argmax(axis=1).tolist() == [0, 2]
    assert binary_to_three(np.array([0.5]), low=0.5, high=0.5).argmax() == 1
    with pytest.raises(ModelError, match="low <= high"):
        binary_to_three(np.array([0.5]), low=0.8, high=0.2)


def test_map_columns_and_scores():
    native = np.array([[0.7, 0.2, 0.1]])
    out = map_columns(native, ["hate_speech", "offensive", "neither"],
                      {"hate_speech": "hateful", "offensive": "non-hateful", "neither": "non-hateful"},
                      TASK_LABELS["hate_speech"], "m")
    assert out.tolist() == [[pytest.approx(0.3), pytest.approx(0.7)]]
    with pytest.raises(ModelError, match="'m'.*'odd' has no mapping"):
        map_columns(native, ["odd", "b", "c"], {"b": "hateful"}, TASK_LABELS["hate_speech"], "m")
    three = score_to_three(np.array([-0.5, -0.04, 0.0, 0.04, 0.5]), 0.05)
    assert three.argmax(axis=1).tolist() == [0, 1, 1, 1, 2]


# ---------------------------------------------------------------- Hugging Face

def test_hf_binary_sentiment_rule(tiny_hf_model, monkeypatch):
    from alict_core.models.hf import HFClassifier

    model = HFClassifier(tiny_hf_model, "sentiment", name="tiny")
    assert model.labels == TASK_LABELS["sentiment"] and model.binary and model.native == ["NEGATIVE", "POSITIVE"]
    proba = checked_proba(model, ["the movie is good", "a bad film", "unknownword"])
    assert proba.shape == (3, 3) and set(proba.flatten()) <= {0.0, 1.0}
    # force p(pos) to exactly 1/3 and 2/3: both boundaries are neutral (one-hot, not all-zero)
    logits = np.log(np.array([[2.0, 1.0], [1.0, 2.0], [9.0, 1.0], [1.0, 9.0]]))
    monkeypatch.setattr(model, "logits", lambda texts: logits[: len(texts)])
    assert model.predict_proba(["a"] * 4).argmax(axis=1).tolist() == [1, 1, 0, 2]
    assert model.predict_proba(["a"] * 4).sum(axis=1).tolist() == [1.0] * 4
    assert model.fingerprint == HFClassifier(tiny_hf_model, "sentiment", name="tiny").fingerprint
    assert model.fingerprint != HFClassifier(tiny_hf_model, "sentiment", low=0.4).fingerprint


def test_hf_three_class_and_hate_mapping(tmp_path):
    from alict_core.models.hf import HFClassifier

    three = make_tiny_bert(tmp_path / "three", {0: "negative", 1: "neutral", 2: "positive"})
    model = HFClassifier(three, "sentiment")
    proba = checked_proba(model, ["good", "bad film"])
    assert not model.binary and proba.shape == (2, 3) and 0 < proba.min()
    hate = make_tiny_bert(tmp_path / "hate", {0: "NON_HATE", 1: "HATE"})
    hm = get_model("Hate-speech-CNERG/dehatebert-mono-english", model_id=str(hate), name="dehate-local")
    assert hm.labels == ("non-hateful", "hateful") and checked_proba(hm, ["it is bad"]).shape == (1, 2)
    odd = make_tiny_bert(tmp_path / "odd", {0: "A", 1: "B", 2: "C"})
    with pytest.raises(ModelError, match="native label 'A' has no mapping"):
        HFClassifier(odd, "sentiment")
    with pytest.raises(ModelError, match="could not load"):
        HFClassifier(tmp_path / "nothing-here", "sentiment", local_files_only=True)


# ---------------------------------------------------------------- classic offline models

@pytest.mark.parametrize("name,text,label", [
    ("vader", "This movie is wonderful and I love it.", "positive"),
    ("vader", "A horrible, boring waste of time.", "negative"),
    ("textblob", "This movie is wonderful.", "positive"),
    ("textblob", "The table is in the room.", "neutral"),
    ("hatesonar", "I hate all of those people, kill them", "hateful"),
    ("hatesonar", "I had a lovely walk with my dog today", "non-hateful"),
    ("profanity-check", "what the fuck is this shit", "hateful"),
    ("profanity-check", "have a nice day", "non-hateful"),
])
def test_classic_models(name, text, label):
    model = get_model(name)
    assert model.labels == TASK_LABELS[MODELS.entry(name).tags["task"]]
    proba = checked_proba(model, [text, text])
    assert model.labels[int(proba[0].argmax())] == label
    assert checked_proba(model, []).shape == (0, len(model.labels))


def test_sklearn_requires_trust(tmp_path):
    import joblib
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(CountVectorizer(), LogisticRegression()).fit(
        ["good film", "great movie", "bad film", "awful movie"], ["positive", "positive", "negative", "negative"])
    path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, path)
    with pytest.raises(TrustError, match="refusing to load a pickle"):
        get_model("sklearn", path=str(path), task="sentiment")
    model = get_model("sklearn", path=str(path), task="sentiment", trusted=True)
    proba = checked_proba(model, ["good movie", "awful film"])
    assert proba[:, 1].tolist() == [0.0, 0.0] and proba.argmax(axis=1).tolist() == [2, 0]


def test_static_predictions(tmp_path):
    csv_path = tmp_path / "preds.csv"
    csv_path.write_text("text,negative,neutral,positive\ngood,0.1,0.1,0.8\nbad,2,1,1\n")
    model = get_model("static", path=str(csv_path), task="sentiment")
    assert checked_proba(model, ["bad", "good"]).tolist() == [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]
    with pytest.raises(ModelError, match="no stored prediction.*'other'"):
        model.predict_proba(["other"])
    jl = tmp_path / "preds.jsonl"
    jl.write_text(json.dumps({"text": "x", "label": "hateful"}) + "\n" + json.dumps({"text": "y", "label": 0}) + "\n")
    hate = get_model("static", path=str(jl), task="hate_speech")
    assert hate.predict_proba(["x", "y"]).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    jl.write_text(json.dumps({"text": "x", "label": "spam"}) + "\n")
    with pytest.raises(ModelError, match=r"preds.jsonl:1: label 'spam'"):
        get_model("static", path=str(jl), task="hate_speech", name="v2")


# ---------------------------------------------------------------- local HTTP servers

class _Server:
    def __init__(self, handler_fn):
        outer = self
        self.requests: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, answer = handler_fn(self.path, body)
                data = json.dumps(answer).encode() if not isinstance(answer, bytes) else answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_http_json_endpoint():
    def answer(path, body):
        texts = body["texts"]
        if texts and texts[0] == "broken":
            return 500, {"error": "boom"}
        if texts and texts[0] == "labels":
            return 200, {"labels": ["positive"] * len(texts)}
        return 200, {"probabilities": [{"positive": 0.9, "negative": 0.05, "neutral": 0.05} if "good" in t
                                       else [0.8, 0.1, 0.1] for t in texts]}

    server = _Server(answer)
    try:
        model = HttpJsonModel(server.url + "/predict", "sentiment", batch_size=2, max_requests=3, name="endpoint")
        with run_scope():  # the cap counts per run
            proba = checked_proba(model, ["good", "bad", "good again"])
            assert proba.argmax(axis=1).tolist() == [2, 0, 2] and len(server.requests) == 2
            assert model.predict_proba(["labels"]).tolist() == [[0.0, 0.0, 1.0]]
            with pytest.raises(ModelError, match="'endpoint': request cap of 3 per command reached"):
                model.predict_proba(["one more"])
        other = HttpJsonModel(server.url + "/predict", "sentiment", name="endpoint2", retries=0)
        with pytest.raises(ModelError, match="answered HTTP 500"):
            other.predict_proba(["broken"])
        assert len(server.requests) == 4  # the capped call sent nothing
    finally:
        server.close()


@pytest.mark.parametrize("answer,label", [
    ("Positive.", "positive"), ("**negative**", "negative"), ("The sentiment is neutral.", "neutral"),
    ("Label: positive", "positive"), ("2", "positive"), ("I cannot tell", None),
])
def test_parse_sentiment_answers(answer, label):
    assert parse_answer(answer, TASK_LABELS["sentiment"], "sentiment") == label


@pytest.mark.parametrize("answer,label", [
    ("non-hateful", "non-hateful"), ("Hateful", "hateful"), ("This is not hateful.", "non-hateful"),
    ("Answer: hate speech", "hateful"), ("No", "non-hateful"), ("non-hateful, not hateful at all", "non-hateful"),
])
def test_parse_hate_answers(answer, label):
    assert parse_answer(answer, TASK_LABELS["hate_speech"], "hate_speech") == label


def test_openai_chat_endpoint():
    replies = iter(["Positive.", "**negative**", "no idea, sorry", "Neutral"])

    def answer(path, body):
        assert path == "/v1/chat/completions" and body["model"] == "fake-llm"
        return 200, {"choices": [{"message": {"role": "assistant", "content": next(replies)}}]}

    server = _Server(answer)
    try:
        model = OpenAIChatModel(server.url + "/v1", "fake-llm", "sentiment", api_key="sk-test", max_requests=3)
        with run_scope() as scope:
            proba = checked_proba(model, ["a", "b", "c"])
            assert proba.argmax(axis=1).tolist() == [2, 0, 1]  # unparseable → neutral fallback
            assert list(model.unparsed) == ["no idea, sorry"] and scope.unparsed_counts() == {model.name: 1}
            assert "Sentence: a" in server.requests[0]["body"]["messages"][0]["content"]
            assert server.requests[0]["auth"] == "Bearer sk-test"
            with pytest.raises(ModelError, match="request cap of 3"):
                model.predict_proba(["d"])
        assert len(server.requests) == 3
    finally:
        server.close()
    with pytest.raises(ModelError, match="must contain"):
        OpenAIChatModel("http://127.0.0.1:9", "m", "sentiment", prompt="no placeholder")


# ---------------------------------------------------------------- registry

def test_registry_tags_and_cache():
    for entry in MODELS:
        assert "task" in entry.tags and "offline" in entry.tags, entry.name
    assert {"minilm-sst", "vader", "textblob"} <= set(MODELS.names(task="sentiment", offline=True))
    assert {"minilm-hatexplain", "hatesonar", "profanity-check"} <= set(MODELS.names(task="hate_speech", offline=True))
    assert "distilbert-base-uncased-finetuned-sst-2-english" in MODELS.names(task="sentiment", offline=False)
    assert get_model("vader") is get_model("vader")
    with pytest.raises(AlictError, match="unknown model 'nope'.*vader"):
        get_model("nope")
    with pytest.raises(ModelError, match="model 'vader' takes no arguments; given: colour; unknown: colour"):
        get_model("vader", colour="red")


def test_embedded_head_model(tmp_path):
    from alict_core.common.errors import ArtefactMissingError
    from alict_core.common.jsonl import write_json
    from alict_core.models.embedded import EmbeddingHeadModel

    with pytest.raises(ArtefactMissingError, match="build models"):
        EmbeddingHeadModel("minilm-x", tmp_path / "missing")
    head = tmp_path / "head"
    head.mkdir()
    rng = np.random.default_rng(0)
    np.savez(head / "head.npz", weight=rng.normal(size=(2, 384)).astype(np.float32), bias=np.zeros(2, np.float32))
    write_json(head / "meta.json", {"labels": ["non-hateful", "hateful"]})
    model = EmbeddingHeadModel("minilm-x", head)
    proba = checked_proba(model, ["hello there", "another text"])
    assert proba.shape == (2, 2)
    emb = model.embed(["hello there"])
    assert np.linalg.norm(emb[0]) == pytest.approx(1.0, abs=1e-4)
    assert np.allclose(model.proba_from_embeddings(emb), proba[:1], atol=1e-5)


def test_a_resolver_handed_to_the_registry_registers_a_name_on_first_use(monkeypatch):
    """The registry knows no higher stage: a resolver (``harden.versions`` installs one) registers late names."""
    from alict_core.models import registry

    asked = []

    def resolver(name: str) -> bool:
        asked.append(name)
        if name != "late-vader":
            return False
        MODELS.add(name, lambda **kw: get_model("vader"), "registered on first use", task="sentiment")
        return True

    monkeypatch.setattr(registry, "_RESOLVERS", [])
    registry.add_resolver(resolver)
    registry.add_resolver(resolver)  # installed once
    try:
        with pytest.raises(AlictError, match="no-such-model"):
            registry.model_entry("no-such-model")
        assert registry.model_task("late-vader") == "sentiment" and "late-vader" in MODELS
        registry.model_entry("late-vader")  # registered now: the resolver is not asked again
        assert asked == ["no-such-model", "late-vader"]
    finally:
        MODELS.remove("late-vader")


def test_the_version_resolver_is_installed_by_importing_versions():
    import subprocess
    import sys

    probe = ("import alict_core.models.registry as r\nassert not r._RESOLVERS\n"
             "import alict_core.harden.versions as v\nassert r._RESOLVERS == [v.ensure_registered]\n"
             "assert v.MODEL_RESOLVERS == ('alict_core.harden.versions',)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
