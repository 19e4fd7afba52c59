"""Pass 39 rows (the h1unparsed helper, pass-38 findings P38-cli-1, P38-cli-10, P38-pages-4): a chat model's
answers that could not be parsed (scored as its fallback label) are said by every reader of the run, not only by
the summary JSON and the HTML report (pass 37)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.robustness.support import LoopbackService, chat_answer

REFUSAL = "I cannot help with that."  # names no label: unparsed, scored as the fallback label (neutral)


class _Service(LoopbackService):
    """A loopback endpoint: ``…/chat/completions`` answers ``answer`` (OpenAI-compatible), ``…/predict`` answers
    ``label`` for every text (the JSON ``http`` protocol)."""

    def __init__(self, answer: str = REFUSAL, label: str = "negative") -> None:
        self.answer, self.label = answer, label
        super().__init__()

    def respond(self, path, headers, request, number):
        if path.endswith("/chat/completions"):
            return 200, chat_answer(self.answer)
        return 200, {"labels": [self.label] * len(request["texts"])}

    @property
    def chat(self) -> str:
        return f"openai-chat:base_url={self.base}/v1,model=m,name=chat"

    @property
    def http(self) -> str:
        return f"http:url={self.base}/predict,name=ep"


@pytest.fixture
def service():
    served = _Service()
    yield served
    served.close()


@pytest.fixture
def seeds(tmp_path) -> Path:
    """Three sentiment seeds expecting neutral: the chat model's fallback label passes them all."""
    path = tmp_path / "seeds.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a plain film {i}",
                                        "test_type": "MFT", "expected": {"kind": "label", "labels": ["neutral"]}})
                            + "\n" for i in range(3)))
    return path


def _run(cli, model: str, seeds: Path, *more: str):
    outcome = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", *more)
    assert outcome.code == 0, outcome.err[-600:]
    return outcome


def _chat_suite(path: Path) -> ET.Element:
    xml = ET.parse(path).getroot()
    import xmlschema

    xmlschema.XMLSchema(str(Path(__file__).resolve().parents[1] / "fixtures" / "junit.xsd")).validate(str(path))
    return next(suite for suite in xml.iter("testsuite") if suite.get("name") == "ALiCT.chat")


@pytest.mark.parametrize("writer", ["run", "report"])
def test_p38_cli_1_junit_says_a_models_unparsed_answers(cli, tmp_path, own_cache, service, seeds, writer):
    """Was (the p38cli helper, low-medium): a chat model answering "I cannot help with that." to every case passed
    every LC green in the JUnit XML (`run --junit`, `report --junit`): fail rate 0 %, no word of its 3 of 3 unparsed
    answers (scored as the fallback label). Its suite now has the property `unparsed_answers`, a system-err line and
    a test case in error "Answers that could not be parsed"."""
    run = tmp_path / "run"
    junit = ("--junit", str(tmp_path / "j.xml")) if writer == "run" else ()
    _run(cli, service.chat, seeds, "--out", str(run), *junit)
    if writer == "report":
        outcome = cli("report", str(run), "--junit", str(tmp_path / "j.xml"), "--fail-threshold", "*=0.5")
        assert outcome.code == 0, outcome.err[-600:]
    suite = _chat_suite(tmp_path / "j.xml")
    assert suite.get("errors") == "1" and suite.get("tests") == "2", suite.attrib
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties.get("unparsed_answers") == "3", properties
    errors = [case for case in suite.iter("testcase") if case.find("error") is not None]
    assert [case.get("name") for case in errors] == ["Answers that could not be parsed"]
    assert errors[0].find("error").get("type") == "UnparsedAnswers"
    assert "3 answer(s) could not be parsed" in (suite.findtext("system-err") or "")


def test_p38_cli_1_control_a_model_that_answered_has_no_error_case(cli, tmp_path, own_cache, service, seeds):
    """Control: a model whose every answer was parsed keeps its suite as it was (no error case, no property)."""
    _run(cli, service.http, seeds, "--out", str(tmp_path / "run"), "--junit", str(tmp_path / "j.xml"))
    suite = next(ET.parse(tmp_path / "j.xml").getroot().iter("testsuite"))
    assert suite.get("errors") == "0" and suite.get("tests") == "1"
    assert "unparsed_answers" not in {p.get("name") for p in suite.iter("property")}


def test_p38_cli_10_compare_says_each_sides_unparsed_answers(cli, tmp_path, own_cache, service, seeds):
    """Was (the p38cli helper, low-medium): `compare` of an endpoint (all fail) with a chat model that answered
    nothing parseable said "3 newly pass" with no word, in text or JSON, of the fallback label scoring them. Both the
    text (a warning on stderr, the headline) and the JSON (`unparsed_answers`, `warnings`) now say it, per side."""
    _run(cli, service.http, seeds, "--out", str(tmp_path / "a"))
    _run(cli, service.chat, seeds, "--out", str(tmp_path / "b"))
    outcome = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "c.json"))
    assert outcome.code == 0, outcome.err[-600:]
    assert "3 newly pass" in outcome.out
    assert "warning: chat: 3 answer(s) could not be parsed" in outcome.err, outcome.err[-600:]
    assert "Warning: chat: 3 answer(s) could not be parsed" in outcome.out  # the headline
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["unparsed_answers"] == {"a": 0, "b": 3}
    assert len(document["warnings"]) == 1 and "chat: 3 answer(s)" in document["warnings"][0]
    assert "could not be parsed" in document["headline"]
    swapped = cli("compare", str(tmp_path / "b"), str(tmp_path / "a"))  # side A's are said too
    assert "warning: chat: 3 answer(s) could not be parsed" in swapped.err


def test_p38_cli_10_control_no_warning_when_every_answer_was_parsed(cli, tmp_path, own_cache, service, seeds):
    """Control: two runs whose answers were all parsed compare without a warning."""
    _run(cli, service.http, seeds, "--out", str(tmp_path / "a"))
    _run(cli, "vader", seeds, "--out", str(tmp_path / "b"))
    outcome = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "c.json"))
    assert outcome.code == 0 and "could not be parsed" not in outcome.out + outcome.err
    document = json.loads((tmp_path / "c.json").read_text())
    assert document.get("unparsed_answers", {"a": 0, "b": 0}) == {"a": 0, "b": 0} and not document.get("warnings")


def _app(run_id: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = run_id
    return at.run()


@pytest.mark.parametrize("page", ["pages/report.py", "pages/failures.py", "story (demo mode)"])
def test_p38_pages_4_the_pages_say_a_models_unparsed_answers(cli, own_cache, service, seeds, page, monkeypatch):
    """Was (the p38pages helper, low-medium): the Report page said a green "No failures in this run." (and the
    Failures page and demo mode's Story nothing) for a run every answer of which could not be parsed: the fallback
    label's passes shown as the model's. Each page now warns, per model, from the run's `unparsed_answers`."""
    _run(cli, service.chat, seeds)  # into the run store (ALICT_CACHE_DIR)
    (run_id,) = [p.name for p in (own_cache / "runs").iterdir() if (p / "meta.json").exists()]
    if page.startswith("story"):
        monkeypatch.setenv("ALICT_DEMO_MODE", "1")  # the demo opens on the Story
    at = _app(run_id) if page.startswith("story") else _app(run_id).switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value.replace("\\", "") for w in at.warning if "could not be parsed" in w.value]  # literal()
    assert warnings and "chat: 3 answer(s)" in warnings[0], [w.value for w in at.warning]
    assert not [s.value for s in at.success if "No failure" in s.value]
