"""Pass 40 rows (endpoint models: chat answers, request caps, secrets in messages), from the pass-39 findings of the
p39cli helper: each failed before its fix, unless its docstring says it is a control."""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import LoopbackService, chat_answer

SENTIMENT = ("negative", "neutral", "positive")
HATE = ("hateful", "non-hateful")


class _Service(LoopbackService):
    """A loopback endpoint answering every POST: a chat completion of ``answer`` (or ``{"labels": [answer]}`` for
    ``http``) with ``status``; the first ``slow_first`` requests answered after ``slow_s``. Counts the requests."""

    def __init__(self, answer: str = "positive", status: int = 200, slow_first: int = 0, slow_s: float = 0.0) -> None:
        self.answer, self.status, self.slow_first, self.slow_s = answer, status, slow_first, slow_s
        super().__init__()
        self.base_url = f"{self.base}/v1"

    def respond(self, path, headers, request, number):
        if number <= self.slow_first:
            time.sleep(self.slow_s)
        return self.status, {**chat_answer(self.answer), "labels": [self.answer]}


def _seeds(tmp_path, n: int = 3, label: str = "positive"):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a good film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": [label]}})
                             + "\n" for i in range(n)))
    return seeds


def _parse(answer: str, task: str):
    from alict_core.models.remote import parse_answer

    return parse_answer(answer, SENTIMENT if task == "sentiment" else HATE, task)


# ---------------------------------------------------------------- P39-cli-1: denied / questioned labels are unparsed

@pytest.mark.parametrize("answer,task", [
    ("This cannot be called positive.", "sentiment"),
    ("The review cannot be negative.", "sentiment"),
    ("This cannot be considered hate speech.", "hate_speech"),
    ("This text cannot be classified as hateful.", "hate_speech"),
    ("Negative? Definitely not.", "sentiment"),
    ("Negative? Absolutely not.", "sentiment"),
    ("Negative? Of course not.", "sentiment"),
    ("Hateful? Certainly not.", "hate_speech"),
    ("Hateful? Not in the slightest.", "hate_speech"),
    ("Hateful? Not one bit.", "hate_speech"),
    ("Hateful? I don't think so.", "hate_speech"),
    ("Positive? I doubt it.", "sentiment"),
    ("Positive? Far from it.", "sentiment"),
    ("Positive? No way.", "sentiment"),
    ("Non-hateful? No.", "hate_speech"),
    ("Is it non-hateful? No.", "hate_speech"),
    ("Negative. Definitely not.", "sentiment"),
    ("Hateful. Not in the slightest.", "hate_speech"),
    ('{"hateful": false}', "hate_speech"),
    ("Hate speech: false", "hate_speech"),
    ("hateful: 0", "hate_speech"),
    ("It is unlikely to be hate speech.", "hate_speech"),
    ("This lacks hate speech.", "hate_speech"),
])
def test_p39_cli_1_a_label_denied_or_questioned_is_never_that_label(answer, task):
    """Was (the p39cli helper, medium-low): 'cannot' was no negation, a "<Label>? <denial>" reply beyond a short list
    ("Definitely not.", "I doubt it.") and a structured false ("hate speech: false") were read as the label they
    deny, and "Non-hateful? No." as non-hateful (the reply 'no' is its synonym): a run of such answers passed with
    nothing unparsed. A label questioned, denied by a reply, or given a false value is now unparsed (counted)."""
    assert _parse(answer, task) is None


@pytest.mark.parametrize("answer,task,label", [
    ("Positive.", "sentiment", "positive"), ("Positive (confidence 0.9)", "sentiment", "positive"),
    ("positive: 0.9", "sentiment", "positive"), ("Positive! Not bad at all", "sentiment", "positive"),
    ("Positive. No negative aspects.", "sentiment", "positive"),
    ("Sentiment: neutral", "sentiment", "neutral"), ("Negative - the reviewer hated it.", "sentiment", "negative"),
    ("The sentiment is negative, without a doubt.", "sentiment", "negative"), ("0", "sentiment", "negative"),
    ("Non-hateful. The post does not attack anyone.", "hate_speech", "non-hateful"),
    ("No, it is not hateful.", "hate_speech", "non-hateful"),
    ('{"hateful": true}', "hate_speech", "hateful"), ("Answer: no", "hate_speech", "non-hateful"),
    ("Hateful: yes", "hate_speech", "hateful"), ("It is hate speech; it attacks a group.", "hate_speech", "hateful"),
])
def test_p39_cli_1_control_right_answers_stay_right(answer, task, label):
    """Control: plain answers, an explanation after the label, a confidence number and structured true values keep
    their reading."""
    assert _parse(answer, task) == label


def test_p39_cli_1_a_labelled_digit_is_read():
    """Was unparsed: "Label: 2" (a digit after a 'Label:' is the digit, as "2" is)."""
    assert _parse("Label: 2", "sentiment") == "positive"


@pytest.mark.parametrize("answer", ["No comment.", "I have no way to tell.", "No idea.", "No, I can't classify this.",
                                    "no answer", "No label applies.", "I'm not able to determine; no clear answer",
                                    "Yes, I can help with that.", "Yes, here is my analysis:", "No, not at all."])
def test_p39_cli_13_a_refusal_beginning_with_yes_or_no_is_no_label(answer):
    """Was (the p39cli helper, medium-low): on hate_speech 'no'/'yes' anywhere were non-hateful/hateful, so "No
    comment." passed every non-hateful LC with nothing unparsed and "Yes, I can help with that." was hateful. A bare
    yes/no is a label only as the whole answer."""
    assert _parse(answer, "hate_speech") is None


@pytest.mark.parametrize("answer,label", [("No", "non-hateful"), ("Yes.", "hateful"), ("no!", "non-hateful"),
                                          ("Answer: no", "non-hateful"), ("No, it is not hateful.", "non-hateful"),
                                          ("Yes, this is hate speech.", "hateful")])
def test_p39_cli_13_control_a_bare_yes_or_no_and_a_named_label_are_read(answer, label):
    """Control: "No" / "Yes." as the whole answer, and an answer naming the label after its yes/no, keep their
    reading."""
    assert _parse(answer, "hate_speech") == label


def test_p39_cli_1_a_run_of_cannot_answers_counts_them_unparsed(cli, tmp_path, own_cache):
    """The run of a chat model answering "This cannot be called positive." to positive seeds: every answer is counted
    unparsed (it passed with `unparsed_answers: {}`, each case read as positive)."""
    service = _Service("This cannot be called positive.")
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"openai-chat:base_url={service.base_url},model=m,"
                      "name=chat", "--seeds", str(_seeds(tmp_path)), "--out", str(tmp_path / "r"), "--no-story",
                      "--summary-json", str(tmp_path / "s.json"), "--quiet")
    finally:
        service.close()
    assert outcome.code in (0, 1), outcome.err[-400:]
    assert json.loads((tmp_path / "s.json").read_text())["unparsed_answers"] == {"chat": 3}


# ---------------------------------------------------------------- P39-cli-10: parsing is linear in the answer

@pytest.mark.parametrize("answer,task,label", [
    ("positive " * 23000, "sentiment", "positive"), ("hate speech, " * 16000, "hate_speech", "hateful"),
    ("not positive " * 16000, "sentiment", None), ("Negative? " * 20000, "sentiment", None),
], ids=["repeated-label", "repeated-clauses", "repeated-negation", "repeated-question"])
def test_p39_cli_10_a_long_looping_answer_is_parsed_in_seconds(answer, task, label):
    """Was (the p39cli helper, hang): parsing was quadratic in the answer's length (144 KB took 35 s, 1.6 MB over an
    hour, per text), far past the request's timeout. A ~200 KB answer is now parsed well within 20 s (a guard, not a
    timing: it took minutes)."""
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_parse(answer, task)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "parse_answer did not finish within 20 s"
    assert outcome == [label]


def test_p39_cli_10_control_a_repeated_label_is_still_that_label():
    """Control: a long answer repeating one plain label still reads as that label."""
    assert _parse("positive. " * 20000, "sentiment") == "positive"


# ---------------------------------------------------------------- P39-cli-3: every try counts against max_requests

def test_p39_cli_3_retries_of_an_http_endpoint_take_from_the_cap():
    """Was (the p39cli helper, low-medium): `max_requests` was taken once per batch, outside the retry loop:
    `http:…,max_requests=2,backoff=0` against a service answering 500 sent 4 requests. Every try counts now."""
    from alict_core.common.errors import ModelError
    from alict_core.models.remote import HttpJsonModel
    from alict_core.models.run_scope import run_scope

    service = _Service("positive", status=500)
    try:
        model = HttpJsonModel(service.base_url + "/predict", "sentiment", name="svc", max_requests=2, backoff=0)
        with run_scope(), pytest.raises(ModelError, match="request cap of 2 per command reached"):
            model.predict_proba(["a good film"])
    finally:
        service.close()
    assert service.requests == 2


def test_p39_cli_3_timed_out_chat_tries_count_through_a_run(cli, tmp_path, own_cache):
    """Was: a chat model with `max_requests=6,timeout=0.4` whose service answered its first 3 requests late sent 9
    requests for 6 texts (the 3 timed-out tries retried), exit 0. Now the run stops at the cap: 6 requests."""
    service = _Service("positive", slow_first=3, slow_s=1.0)
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"openai-chat:base_url={service.base_url},model=m,"
                      "name=c,max_requests=6,timeout=0.4,backoff=0", "--seeds", str(_seeds(tmp_path, 6)),
                      "--out", str(tmp_path / "r"), "--no-story", "--quiet")
        time.sleep(0.2)
    finally:
        service.close()
    assert service.requests <= 6, service.requests
    assert outcome.code == 2 and "request cap of 6 per command reached" in outcome.err, outcome.err[-400:]


# ---------------------------------------------------------------- P39-cli-4: explain --text has one cap per command

def test_p39_cli_4_explain_text_keeps_to_the_cap_of_the_whole_command(cli, tmp_path, own_cache):
    """Was (the p39cli helper, low-medium): `explain --text … --model openai-chat:…,max_requests=60` sent 91 requests
    (each explainer call had a cap of its own), exit 0. The command is one run scope now: at most 60 are sent, and
    the refusal speaks of the command, not of a run's shards only."""
    service = _Service("positive")
    try:
        outcome = cli("explain", "--text", "a good film about a kind old man", "--samples", "50",
                      "--template-samples", "50", "--model", f"openai-chat:base_url={service.base_url},model=m,name=c,"
                      "task=sentiment,max_requests=60")
    finally:
        service.close()
    assert service.requests <= 60, service.requests
    assert_clean_error(outcome, 2, "request cap of 60 per command reached", limit_s=60)


def test_p39_cli_4_control_explain_text_under_its_cap_finishes(cli, tmp_path, own_cache):
    """Control: an explanation that needs fewer requests than its cap finishes."""
    service = _Service("positive")
    try:
        outcome = cli("explain", "--text", "a good film", "--samples", "10", "--no-template", "--model",
                      f"openai-chat:base_url={service.base_url},model=m,name=c,task=sentiment,max_requests=100")
    finally:
        service.close()
    assert outcome.code == 0, outcome.err[-400:]
    assert 0 < service.requests <= 100


# ---------------------------------------------------------------- P39-cli-2: header values checked with the arguments

@pytest.mark.parametrize("spec,said", [
    ("openai-chat:base_url=http://127.0.0.1:9/v1,model=m,api_key=SECRETK1\nx", "api_key=… holds a line break"),
    ("openai-chat:base_url=http://127.0.0.1:9/v1,model=m,api_key=SECRETK2ключ", "api_key=… holds a line break"),
    ("http:url=http://127.0.0.1:9/p,headers=X-K:SECRETK3\r\nX-Evil: 1", "headers=… holds a line break"),
    ("http:url=http://127.0.0.1:9/p,headers=X K:SECRETK4", "headers=… names a header with a space"),
])
def test_p39_cli_2_a_header_value_http_cannot_carry_is_refused_with_the_arguments(cli, tmp_path, own_cache, spec,
                                                                                  said):
    """Was (the p39cli helper, low): a line break or a non-Latin-1 character in `api_key=`/`headers=` was blamed on the
    server ("the server did not answer valid HTTP", a header name with a space after 4 tries) or said with a codec's
    message. Now refused with the other `--models` checks, before any work, the value never echoed."""
    outcome = cli("run", "--task", "sentiment", "--models", spec, "--seeds", str(_seeds(tmp_path)), "--out",
                  str(tmp_path / "r"), "--no-story", "--quiet")
    assert_clean_error(outcome, 2, said, "nothing was sent")
    assert "SECRETK" not in outcome.err and not (tmp_path / "r").exists()


# ---------------------------------------------------------------- P39-cli-7: model specs redacted in every message

def test_p39_cli_7_explain_results_never_echoes_the_model_spec_raw(cli, saved_run):
    """Was (the p39cli helper, low-medium): `explain --results RUN --model <spec>` quoted the first 60 characters of
    the spec as given (a URL's password and ?token=, an api_key). Now redacted as for `--models`."""
    for spec in ("http:url=http://u:SECRETX3@127.0.0.1:18931/p?tok=SECRETX4,headers=X:SECRETX5", "c,api_key=SECRETX6",
                 "openai-chat:base_url=http://127.0.0.1:18932/v1,api_key=SECRETX2"):
        outcome = cli("explain", "--results", str(saved_run), "--lc", "sentiment-lc01", "--model", spec)
        assert_clean_error(outcome, 2, "is not a model of the run")
        assert "SECRETX" not in outcome.err, outcome.err


def test_p39_cli_7_explain_text_of_two_models_and_compare_hide_the_key(cli, saved_run, own_cache):
    """Was: "--model '…,api_key=SECRETY2' names 2 models" and compare's "model 'c,api_key=SECRETY3' is not in the run"
    printed the key; explain --text refusals called its option "--models"."""
    two = cli("explain", "--text", "hi", "--model",
              "vader,openai-chat:base_url=http://127.0.0.1:18932/v1,model=m,api_key=SECRETY2")
    assert_clean_error(two, 2, "names 2 models")
    assert "SECRETY" not in two.err
    compared = cli("compare", str(saved_run), str(saved_run), "--model-a", "c,api_key=SECRETY3")
    assert compared.code == 2 and "SECRETY" not in compared.err, compared.err[-400:]
    named = cli("explain", "--text", "hi", "--model", "http:url=http://127.0.0.1:9/p,task=sentiment,bogus=1")
    assert named.code == 2 and "--models" not in named.err, named.err[-400:]


def test_p39_cli_7_lego_takes_one_judge(cli, tmp_path, own_cache):
    """Was: `lego --judge "vader,openai-chat:…"` used the first model as the judge and dropped the second silently."""
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(_seeds(tmp_path)), "--judge",
                  "vader,static:path=x.jsonl", "--out", str(tmp_path / "lg"))
    assert_clean_error(outcome, 2, "--judge names 2 models")


# ---------------------------------------------------------------- P39-cli-8: a pinned default classifier

SPEC_PIN = "openai-chat:base_url=http://h/v1,api_key=SECRETQ2"


def test_p39_cli_8_a_default_classifier_pin_a_run_does_not_use_stops_nothing(cli, tmp_path, own_cache, monkeypatch):
    """Was (the p39cli helper, low): `ALICT_DEFAULT_SENTIMENT_MODEL=<a --models spec with api_key>` refused
    `run --models vader` (which does not use it), echoing the key. Now the run goes on and the key is nowhere in its
    output or files (the pin is recorded redacted)."""
    from alict_core.models import defaults

    monkeypatch.setenv("ALICT_DEFAULT_SENTIMENT_MODEL", SPEC_PIN)
    defaults.resolved_defaults(refresh=True)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(_seeds(tmp_path)), "--out",
                  str(tmp_path / "r"), "--no-story", "--quiet")
    assert outcome.code in (0, 1), outcome.err[-400:]
    assert "SECRETQ2" not in outcome.err + outcome.out
    assert "SECRETQ2" not in (tmp_path / "r" / "meta.json").read_text()


def test_p39_cli_8_a_spec_pinned_as_default_classifier_is_refused_redacted_where_used(monkeypatch):
    """Where the pinned default is used, a `--models` spec is refused as no model folder nor hub id, key hidden."""
    from alict_core.common.errors import AlictError
    from alict_core.models import defaults

    monkeypatch.setenv("ALICT_DEFAULT_SENTIMENT_MODEL", SPEC_PIN)
    defaults.resolved_defaults(refresh=True)
    with pytest.raises(AlictError, match="ALICT_DEFAULT_SENTIMENT_MODEL=") as refused:
        defaults.load_default_classifier("sentiment")
    assert "SECRETQ2" not in str(refused.value) and "api_key=…" in str(refused.value)
