"""Spec language: every shipped spec validates; malformed specs give file, line and field."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alict_core.common.errors import SpecError
from alict_core.lcspec import LCSpec, SpecValidationError, get_spec, load_spec, load_task_specs, parse_spec_text
from alict_core.lcspec.predicates import tokenize

MINIMAL = textwrap.dedent(
    """\
    schema_version: 1
    id: demo
    task: sentiment
    capability: Negation
    title: demo
    description: a demo spec
    search:
      - name: neutral
        predicates:
          - label: neutral
          - length: {lt: 10}
    rules:
      - name: as_is
        select: neutral
        expected: {label: neutral}
    """
)


def test_shipped_specs_cover_both_paper_tables():
    sentiment, hate = load_task_specs("sentiment"), load_task_specs("hate_speech")
    paper = [s for s in sentiment if not s.is_extension]
    assert [s.id for s in paper] == [f"sentiment-lc{n:02d}" for n in range(1, 12)]
    assert [s.id for s in hate] == [f"hate_speech-lc{n:02d}" for n in range(1, 15)]
    assert [s.id for s in sentiment if s.is_extension] == ["sentiment-x01"]
    assert get_spec("sentiment", "x01").id == "sentiment-x01" and get_spec("sentiment", "1").id == "sentiment-lc01"
    assert get_spec("sentiment", "LC4").rules[0].expected.one_of == ["positive", "neutral"]
    assert all(isinstance(s, LCSpec) and s.description.strip() for s in sentiment + hate)
    assert get_spec("sentiment", "LC11").test_type == "INV"


def test_minimal_spec_parses():
    spec = parse_spec_text(MINIMAL, "demo.yaml")
    assert spec.search[0].predicates[0].label == ["neutral"]
    assert spec.rules[0].kind == "select"


@pytest.mark.parametrize(
    "broken, line, field, words",
    [
        (MINIMAL.replace("capability: Negation\n", ""), None, None, "missing required field 'capability'"),
        (MINIMAL.replace("lexicon", "x").replace("- length: {lt: 10}", "- lexicon: {include: [happy_adj]}"), 11,
         "search.0.predicates.1.lexicon.include", "valid names"),
        (MINIMAL.replace("{lt: 10}", "{lt: ten}"), 11, "search.0.predicates.1.length.lt", "integer"),
        (MINIMAL.replace("select: neutral", "select: nowhere"), None, None, "unknown search group 'nowhere'"),
        (MINIMAL.replace("label: neutral}", "label: hateful}"), None, None, "not a sentiment label"),
        (MINIMAL + "colour: blue\n", 16, "colour", "unknown field 'colour'"),
        (MINIMAL.replace("  - name: as_is", "  - name: as_is\n    eval: __import__('os')"), 14, "rules.0.eval",
         "unknown field"),
    ],
)
def test_malformed_specs_name_file_line_and_field(broken, line, field, words):
    with pytest.raises(SpecValidationError) as err:
        parse_spec_text(broken, "specs/demo.yaml")
    message = str(err.value)
    assert message.startswith("specs/demo.yaml") and words in message
    if line is not None:
        assert err.value.line == line and f"line {line}" in message
    if field is not None:
        assert err.value.field == field


def test_tag_count_predicate_counts_tagged_tokens():
    """``tag_count``: how many tokens carry one of some PTB tags (one finite verb: one claim)."""
    from alict_core.lcspec.predicates import predicate_holds
    from alict_core.lcspec.schema import Predicate

    one_claim = Predicate.model_validate({"tag_count": {"tags": ["VBZ", "VBD", "VBP", "MD"], "le": 1}})
    words = ["islam", "must", "be", "eliminated"]
    assert predicate_holds(one_claim, words, frozenset(), None, ["NNP", "MD", "VB", "VBN"])
    two = ["they", "hate", "us", "and", "believe", "they", "are", "superior"]
    two_tags = ["PRP", "VBP", "PRP", "CC", "VBP", "PRP", "VBP", "JJ"]
    assert not predicate_holds(one_claim, two, frozenset(), None, two_tags)
    assert predicate_holds(one_claim, two, frozenset(), None, None)  # tags unknown: holds, as `tags` does
    for bad, words_ in [({"tags": ["VERB"], "le": 1}, "unknown PTB tag 'VERB'"),
                        ({"tags": ["VBZ"]}, "at least one of lt, le"), ({"tags": [], "le": 1}, "at least 1")]:
        with pytest.raises(SpecValidationError, match=words_):
            parse_spec_text(MINIMAL.replace("- length: {lt: 10}", f"- tag_count: {bad}"), "x.yaml")


@pytest.mark.parametrize("text, tags, words, expected", [
    # tags as the corpus annotation gives them (HateXplain posts of the study3 reading, issue #27)
    ("most criminals in france are moslem", "JJS NNS IN NNP VBP JJ", None, True),
    ("the gays are undoutably ruining the nation", "DT NNS VBP RB VBG DT NN", ["gays"], True),
    ("well cuz da jews suck dose babydicks", "UH IN NNP NNPS VBP NN NNS", None, False),  # interjection first
    ("no problem naming the kike is just", "DT NN VBG DT NN VBZ RB", None, False),  # a verb inside
    ("gonna get some nasty ass niggers", "NNP VBP DT JJ NN NNS", None, False),  # "gonna" misread as a noun
    ("arab refugees the jews are fucking arabs", "JJ NNS DT NNPS VBP VBG NNS", None, False),  # a new phrase
    ("msm blamed this muzrat terrorist attack on women", "NN VBD DT JJ JJ NN IN NNS", ["women"], False),
    ("immigrants founded this country", "NNS VBD DT NN", ["women", "immigrants"], True),
    ("women u19", "NNS NN", None, False),  # no finite verb: no subject
])
def test_subject_predicate_reads_a_plain_noun_phrase_subject(text, tags, words, expected):
    """``subject``: the text opens "<noun phrase> <finite verb>", the phrase holding one of ``words``."""
    from alict_core.lcspec.predicates import predicate_holds
    from alict_core.lcspec.schema import Predicate

    predicate = Predicate.model_validate({"subject": {} if words is None else {"words": words}})
    assert predicate_holds(predicate, text.split(), frozenset(), None, tags.split()) is expected
    assert predicate_holds(predicate, text.split(), frozenset(), None, None)  # tags unknown: holds
    with pytest.raises(SpecValidationError, match="at least 1"):
        parse_spec_text(MINIMAL.replace("- length: {lt: 10}", "- subject: {words: []}"), "x.yaml")


def test_unknown_lexicon_lists_valid_names():
    broken = MINIMAL.replace("- length: {lt: 10}", "- lexicon: {include: [happy_adj]}")
    with pytest.raises(SpecValidationError) as err:
        parse_spec_text(broken, "x.yaml")
    assert "happy_adj" in str(err.value) and "positive_adj" in str(err.value) and err.value.line == 11


def test_invalid_yaml_and_missing_file(tmp_path):
    with pytest.raises(SpecValidationError) as err:
        parse_spec_text("id: [unclosed\n", "bad.yaml")
    assert "invalid YAML" in str(err.value)
    with pytest.raises(SpecError, match="cannot read spec file"):
        load_spec(tmp_path / "absent.yaml")


def test_unknown_lc_lists_valid_ids():
    with pytest.raises(SpecError, match="valid names: sentiment-lc01"):
        get_spec("sentiment", "lc42")


def test_tokenize_matches_sst_conventions():
    assert tokenize("now I don't like it.") == ("now", "I", "do", "n't", "like", "it", ".")
    assert tokenize("Previously, I") == ("Previously", ",", "I")


yaml_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 50), st.text(max_size=8))
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["id", "task", "search", "rules", "name", "predicates", "label", "length", "lt", "select", "expected",
         "concat", "group", "lexicon", "include", "mode", "capability", "title", "description", "schema_version"]),
        inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_values)
def test_random_yaml_gives_spec_or_clean_error(value):
    text = yaml.safe_dump(value)
    try:
        spec = parse_spec_text(text, "random.yaml")
    except SpecValidationError as err:
        assert str(err).startswith("random.yaml")
    else:
        assert isinstance(spec, LCSpec)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_random_text_gives_spec_or_clean_error(text):
    try:
        parse_spec_text(text, "t.yaml")
    except SpecValidationError:
        pass
