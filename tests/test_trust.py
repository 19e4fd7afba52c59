"""The trust model: endpoint allow-list, model/pickle/workspace roots, CLI --trust-pickle, per-run caps,
retries, unparsed answers, content fingerprints and cache keys (see docs/SECURITY.md)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from alict_core.common.trust import (
    HOSTS_ENV,
    MODEL_ROOTS_ENV,
    PICKLE_DIRS_ENV,
    WORKSPACE_ENV,
    TrustError,
    browser_suite_path,
    check_endpoint,
    save_upload,
)
from alict_core.models.refs import browser_model_kwargs
from alict_core.models.remote import HttpJsonModel, OpenAIChatModel
from alict_core.models.run_scope import run_scope


class Server:
    """A loopback HTTP server answering POSTs with ``answer(path, body) -> (status, json, headers)``."""

    def __init__(self, answer):
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body})
                status, payload, headers = answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def make_tiny_bert(directory, labels=("NEGATIVE", "NEUTRAL", "POSITIVE"), seed=0):
    """A random 2-layer BERT classifier with a 14-word vocabulary, saved to ``directory``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"the movie is good a bad film it ok".split()]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64, num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={v: k for k, v in enumerate(labels)})
    BertForSequenceClassification(config).save_pretrained(directory)
    BertTokenizer(str(directory / "vocab.txt")).save_pretrained(directory)
    return directory


# ---------------------------------------------------------------- endpoints
@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://10.1.2.3:8000/predict",
    "https://93.184.216.34/v1", "http://[::ffff:169.254.169.254]/", "http://0.0.0.0:9/",
])
def test_hosts_outside_the_allow_list_are_refused_before_any_request(url, monkeypatch):
    monkeypatch.delenv(HOSTS_ENV, raising=False)
    with pytest.raises(TrustError, match="metadata|allow-list") as info:
        HttpJsonModel(url, "sentiment")
    assert "metadata" in str(info.value) or HOSTS_ENV in str(info.value)
    with pytest.raises(TrustError):
        OpenAIChatModel(url, "m", "sentiment")


def test_metadata_address_is_refused_even_when_allow_listed(monkeypatch):
    monkeypatch.setenv(HOSTS_ENV, "169.254.0.0/16,169.254.169.254")
    with pytest.raises(TrustError, match="metadata"):
        check_endpoint("http://169.254.169.254/")


def test_allow_list_entries_and_bad_urls(monkeypatch):
    monkeypatch.delenv(HOSTS_ENV, raising=False)
    assert check_endpoint("http://127.0.0.1:8000/p") and check_endpoint("http://localhost:1/") and check_endpoint("http://[::1]/")
    monkeypatch.setenv(HOSTS_ENV, "10.0.0.0/8, 93.184.216.34")
    assert check_endpoint("http://10.1.2.3:8000/predict") and check_endpoint("https://93.184.216.34/v1")
    for bad, why in [("ftp://127.0.0.1/x", "http"), ("file:///etc/passwd", "http"),
                     ("http://u:p@127.0.0.1/", "credentials"),
                     ("http://no-such-host.invalid/", "cannot be resolved"), ("http://127.0.0.1:99999/", "port")]:
        with pytest.raises(TrustError, match=why):
            check_endpoint(bad)


def test_loopback_endpoint_works_and_retries_429_and_5xx():
    replies = iter([(429, {}, {"Retry-After": "0"}), (503, {}, {}), (200, {"labels": ["positive"]}, {})])
    with Server(lambda path, body: next(replies)) as server:
        model = HttpJsonModel(server.url + "/p", "sentiment", backoff=0.0)
        assert model.predict_proba(["good"]).tolist() == [[0.0, 0.0, 1.0]]
        assert len(server.requests) == 3
        model.close()
    with Server(lambda path, body: (500, {"error": "down"}, {})) as server:
        model = HttpJsonModel(server.url + "/p", "sentiment", retries=2, backoff=0.0)
        with pytest.raises(Exception, match="answered HTTP 500"):
            model.predict_proba(["good"])
        assert len(server.requests) == 3  # one try and two retries, then one clear error


def test_redirects_are_not_followed():
    with Server(lambda path, body: (307, {}, {"Location": "http://169.254.169.254/"})) as server:
        model = HttpJsonModel(server.url + "/p", "sentiment", retries=0)
        with pytest.raises(Exception, match="answered HTTP 307"):
            model.predict_proba(["x"])
        assert len(server.requests) == 1


# ---------------------------------------------------------------- LLM adapter: per-run cap, unparsed answers
def chat_server(answers: dict[str, str]) -> Server:
    def answer(path, body):
        text = body["messages"][0]["content"].rsplit("Sentence: ", 1)[-1]
        return 200, {"choices": [{"message": {"content": answers.get(text, "Positive")}}]}, {}

    return Server(answer)


def test_unparsed_answers_are_counted_and_never_cached(tmp_path):
    from alict_core.cases.testcases import TestCase
    from alict_core.runner import run_suite

    cases = [TestCase(case_id=f"c{i}", lc_id="lc-x", kind="seed", seed_id=f"c{i}", test_type="MFT", text=t,
                      expected={"kind": "label", "labels": ["positive"]})
             for i, t in enumerate(["good", "odd", "fine"])]
    with chat_server({"odd": "I would rather not say"}) as server:
        model = OpenAIChatModel(server.url + "/v1", "llm", "sentiment", name="llm", max_requests=3)
        first = run_suite(cases, [model], cache_root=tmp_path)
        assert first.extra["unparsed_answers"] == {"llm": 1} and len(server.requests) == 3
        # a new run: new cap, and every text asked again (an endpoint's answers are never reused by a later run:
        # the service behind the URL may have been redeployed, pass 37)
        second = run_suite(cases, [model], cache_root=tmp_path)
        assert len(server.requests) == 6 and second.extra["unparsed_answers"] == {"llm": 1}
        assert not any(tmp_path.rglob("*.json"))  # nothing of it on disk
        assert first.outcomes[0].passed.tolist() == [True, False, True]  # the fallback (neutral) fails, visibly


def test_an_unparsed_answer_is_asked_once_per_run_across_passes(tmp_path):
    from alict_core.cases.testcases import TestCase
    from alict_core.runner import run_suite

    cases = [TestCase(case_id=t, lc_id="lc-x", kind="seed", seed_id=t, test_type="MFT", text=t,
                      expected={"kind": "label", "labels": ["positive"]}) for t in ["good", "odd", "fine"]]
    with chat_server({"odd": "pass"}) as server:
        model = OpenAIChatModel(server.url + "/v1", "llm", "sentiment", name="llm")
        with run_scope() as scope:  # the app: one pass per LC, then a final pass over every case
            run_suite(cases[:2], [model], cache_root=tmp_path)
            final = run_suite(cases, [model], cache_root=tmp_path)
        assert len(server.requests) == 3 and scope.unparsed_counts() == {"llm": 1}
        assert final.extra["unparsed_answers"] == {"llm": 1}


def test_request_cap_is_per_run_not_per_shared_object(tmp_path):
    with chat_server({}) as server:
        model = OpenAIChatModel(server.url + "/v1", "llm", "sentiment", name="llm", max_requests=2)
        for _ in range(3):  # three runs of two requests each on one cached model object
            with run_scope():
                model.predict_proba(["a", "b"])
        with run_scope(), pytest.raises(Exception, match="request cap of 2 per command"):
            model.predict_proba(["a", "b", "c"])
        assert len(server.requests) == 8


# ---------------------------------------------------------------- browser references
def test_browser_model_references(tmp_path, monkeypatch):
    monkeypatch.delenv(PICKLE_DIRS_ENV, raising=False)
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    monkeypatch.setenv(MODEL_ROOTS_ENV, str(tmp_path / "models"))
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "preds.jsonl").write_text("")
    (tmp_path / "work" / "escape.jsonl").symlink_to("/etc/passwd")
    assert browser_model_kwargs("vader", {"name": "vader"}) == {"name": "vader"}
    checked = browser_model_kwargs("static", {"path": str(tmp_path / "work" / "preds.jsonl"), "task": "sentiment"})
    assert checked["path"] == str((tmp_path / "work" / "preds.jsonl").resolve())
    refusals = [
        ("static", {"path": "/etc/passwd"}, WORKSPACE_ENV),
        ("static", {"path": str(tmp_path / "work" / ".." / "x.csv")}, WORKSPACE_ENV),
        ("static", {"path": str(tmp_path / "work" / "escape.jsonl")}, WORKSPACE_ENV),
        ("sklearn", {"path": str(tmp_path / "work" / "p.joblib")}, PICKLE_DIRS_ENV),
        ("sklearn", {"path": "p.joblib", "trusted": True}, PICKLE_DIRS_ENV),
        ("hf", {"model_id": "someone/any-hub-model"}, MODEL_ROOTS_ENV),
        ("hf", {"model_id": "/"}, MODEL_ROOTS_ENV),
        ("http", {"url": "http://169.254.169.254/"}, "metadata"),
        ("openai-chat", {"base_url": "http://10.0.0.1/v1"}, HOSTS_ENV),
        ("vader", {"lexicon": "/tmp/x"}, "takes no arguments"),
        ("http", {"url": "http://127.0.0.1:1/", "headers": {"Host": "internal"}}, "takes only"),
        ("no-such-kind", {}, "not registered"),
    ]
    for name, kwargs, named in refusals:
        with pytest.raises(TrustError) as info:
            browser_model_kwargs(name, kwargs)
        assert named in str(info.value), (name, kwargs, str(info.value))
        assert "/etc/passwd" not in str(info.value)  # no server path echoed
    monkeypatch.setenv(PICKLE_DIRS_ENV, str(tmp_path / "work"))
    allowed = browser_model_kwargs("sklearn", {"path": str(tmp_path / "work" / "p.joblib"), "task": "sentiment"})
    assert allowed["trusted"] is True
    registered_hub = "distilbert-base-uncased-finetuned-sst-2-english"
    assert browser_model_kwargs("hf", {"model_id": registered_hub})["model_id"] == registered_hub


def test_suite_paths_and_uploads(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    with pytest.raises(TrustError, match=WORKSPACE_ENV):
        browser_suite_path("/etc/hosts")
    saved = save_upload("../../evil name.json.gz", b"payload")
    assert saved.parent == (tmp_path / "cache" / "uploads").resolve() and saved.name.endswith(".json.gz")
    assert browser_suite_path(saved) == saved and saved.read_bytes() == b"payload"


# ---------------------------------------------------------------- command line
def make_pipeline_file(path):
    import joblib
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(CountVectorizer(), LogisticRegression()).fit(
        ["good film", "great movie", "bad film", "awful movie"], ["positive", "positive", "negative", "negative"])
    joblib.dump(pipe, path)
    return path


def test_cli_refuses_pickles_without_trust_pickle(tmp_path, capsys):
    from alict_core.cli import main
    from alict_core.models.refs import ModelRef, parse_model_refs, resolve_models

    path = make_pipeline_file(tmp_path / "pipe.joblib")
    code = main(["run", "--task", "sentiment", "--models", f"sklearn:path={path}", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--trust-pickle" in err and "Traceback" not in err
    refs = parse_model_refs(f"vader,sklearn:path={path},name=mine")
    assert refs == [ModelRef("vader", {}), ModelRef("sklearn", {"path": str(path), "name": "mine"})]
    assert parse_model_refs("http:url=http://127.0.0.1:8/p") == [ModelRef("http", {"url": "http://127.0.0.1:8/p"})]
    (model,) = resolve_models(f"sklearn:path={path},name=mine", "sentiment", trust_pickle=True)
    assert model.name == "mine" and model.predict_proba(["good movie"]).argmax() == 2


# ---------------------------------------------------------------- fingerprints and cache keys
def test_retraining_a_head_in_place_changes_the_fingerprint(tmp_path):
    import torch
    from transformers import BertForSequenceClassification

    from alict_core.common.fingerprint import state_dict_fingerprint
    from alict_core.models.hf import HFClassifier
    folder = make_tiny_bert(tmp_path / "tiny")
    before = HFClassifier(folder, "sentiment")
    assert HFClassifier(folder, "sentiment").fingerprint == before.fingerprint  # stable across loads
    module = BertForSequenceClassification.from_pretrained(folder)
    memory_before = state_dict_fingerprint(module)
    with torch.no_grad():
        module.classifier.weight[0, 0] += 0.5  # "retrain" only the head
    assert state_dict_fingerprint(module) != memory_before
    module.save_pretrained(folder)  # in place: same folder, same names
    after = HFClassifier(folder, "sentiment")
    assert after.fingerprint != before.fingerprint
    assert not np.allclose(after.predict_proba(["the movie is good"]), before.predict_proba(["the movie is good"]))


def test_a_model_without_fingerprint_is_not_cached_on_disk(tmp_path):
    from alict_core.cases.testcases import TestCase
    from alict_core.runner import run_suite

    class Anonymous:
        name, labels = "anon", ("negative", "neutral", "positive")

        def predict_proba(self, texts):
            return np.tile([0.1, 0.1, 0.8], (len(texts), 1))

    case = TestCase(case_id="c", lc_id="lc", kind="seed", seed_id="c", test_type="MFT", text="good",
                    expected={"kind": "label", "labels": ["positive"]})
    result = run_suite([case], [Anonymous()], cache_root=tmp_path / "predictions")
    assert result.outcomes[0].passed.tolist() == [True]
    assert not any((tmp_path / "predictions").rglob("*.json"))


def test_package_versions_come_from_installed_metadata():
    from importlib.metadata import version

    from alict_core.common.fingerprint import package_versions

    assert package_versions("numpy", "no-such-dist-xyz") == {"numpy": version("numpy"), "no-such-dist-xyz": "missing"}
