"""The sped-up attribute ruler and lemmatizer give exactly the stock spaCy pipeline's tags, POS, morphology and
lemmas."""

from __future__ import annotations

import pytest

spacy = pytest.importorskip("spacy")

from alict_core.data.annotate import SPACY_MODEL  # noqa: E402
from alict_core.data.fast_spacy import speed_up_pipeline, token_pattern_matches  # noqa: E402
from alict_core.data.hatexplain import load_hatexplain  # noqa: E402
from alict_core.data.sst import load_sst_sentences  # noqa: E402

MULTI_TOKEN_CASES = [
    "i ai n't gon na let 's go , y' all got ta see nuthin' .",
    "there is a cat and I got it for you .",
    "but this is not what they 've done , is it ?",
]


def _analyse(nlp, token_lists):
    from spacy.tokens import Doc

    docs = nlp.pipe((Doc(nlp.vocab, words=words) for words in token_lists), batch_size=128)
    return [[(t.tag_, t.pos_, str(t.morph), t.lemma_) for t in doc] for doc in docs]


def test_token_patterns_follow_matcher_operators():
    key = ("IN", "because", "", False)
    assert token_pattern_matches({"TAG": "IN", "LOWER": {"IN": ["because", "if"]}}, key)
    assert not token_pattern_matches({"TAG": "IN", "LOWER": {"NOT_IN": ["because"]}}, key)
    assert token_pattern_matches({"LOWER": {"REGEX": "^bec"}}, key)
    assert not token_pattern_matches({"DEP": {"IN": ["aux"]}}, key)


def test_fast_ruler_output_equals_stock_spacy_on_real_sentences():
    stock = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "senter"])
    fast = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "senter"])
    assert speed_up_pipeline(fast)
    texts = [r.text.split() for r in load_sst_sentences(("test",))][:600]
    texts += [r.text.split() for r in load_hatexplain()][:400]
    texts += [t.split() for t in MULTI_TOKEN_CASES]
    expected, got = _analyse(stock, texts), _analyse(fast, texts)
    assert got == expected
    lemmas = {lemma for token in got[-3] for *_, lemma in [token]}
    assert {"be", "go", "us", "to"} <= lemmas  # the multi-token rules (ai n't, gon na, let 's) applied
