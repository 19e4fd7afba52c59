"""Reference grammar and Algorithm 1 (superstructure masks) on hand-written trees and the real PTB sample."""

from __future__ import annotations

import json

import nltk
import pytest

from alict_core.common.errors import AlictError
from alict_core.grammar import (
    MASK,
    MaskedSentence,
    ReferenceGrammar,
    align,
    extra_symbols,
    grammar_path,
    is_subsequence,
    load_reference_grammar,
    masked_sentences,
)
from alict_core.parsing.treebank import clean_tree


def T(text: str) -> nltk.Tree:
    return nltk.Tree.fromstring(text)


@pytest.fixture(scope="module")
def ptb() -> ReferenceGrammar:
    return load_reference_grammar()


@pytest.fixture()
def toy() -> ReferenceGrammar:
    """A grammar induced from hand-written trees (counts are easy to check)."""
    trees = [
        T("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (PRP him))))"),
        T("(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD saw) (RB again) (NP (PRP him))))"),
        T("(S (NP (DT the) (JJ big) (NN cat)) (VP (VBD ran)))"),
        T("(S (NP (DT the) (NN cat) (PP (IN of) (NP (NNS friends)))) (VP (VBD ran)))"),
    ]
    return ReferenceGrammar.from_trees(trees)


def test_subsequence_and_alignment():
    assert is_subsequence(("DT", "NN"), ("DT", "JJ", "NN"))
    assert not is_subsequence(("NN", "DT"), ("DT", "JJ", "NN"))
    assert is_subsequence((), ("DT",))
    assert align(("DT", "NN"), ("DT", "JJ", "NN")) == [0, 2]
    assert extra_symbols(("DT", "NN"), ("DT", "JJ", "NN", "NN")) == ["JJ", "NN"]


def test_toy_grammar_counts_and_probabilities(toy):
    assert toy.counts["NP"][("DT", "JJ", "NN")] == 2
    assert toy.probability("NP", ("DT", "NN")) == pytest.approx(1 / 7)  # 7 NPs in all
    for lhs in toy.counts:
        assert sum(p for _, p in toy.rules(lhs)) == pytest.approx(1.0)
    assert "JJ" in toy.pos_tags and "NP" not in toy.pos_tags


def test_superstructures_same_lhs_ordered_subsequence_ranked(toy):
    found = toy.superstructures("NP", ("DT", "NN"), top_k=5)
    assert [rhs for rhs, _ in found] == [("DT", "JJ", "NN"), ("DT", "NN", "PP")]
    assert toy.superstructures("NP", ("DT", "NN"), top_k=1) == [(("DT", "JJ", "NN"), pytest.approx(2 / 7))]
    # phrasal extra (PP) excluded when only word slots are wanted
    assert [rhs for rhs, _ in toy.superstructures("NP", ("DT", "NN"), pos_only=True)] == [("DT", "JJ", "NN")]
    assert toy.superstructures("VP", ("VBD", "NP")) == [(("VBD", "RB", "NP"), pytest.approx(1 / 4))]
    assert toy.superstructures("ADJP", ("JJ",)) == []


def test_masks_inserted_between_children(toy):
    tree = T("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (PRP him))))")
    by_text = {m.text: m for m in masked_sentences("seed-1", tree, toy)}
    assert set(by_text) == {"the [MASK] dog saw him", "the dog saw [MASK] him"}
    m = by_text["the dog saw [MASK] him"]
    assert m.seed_id == "seed-1"
    assert m.tokens[m.mask_positions[0]] == MASK and m.mask_positions == [3]
    assert m.mask_tags == ["RB"]
    assert m.seed_production == ("VP", ("VBD", "NP"))
    assert m.reference_production == ("VP", ("VBD", "RB", "NP"))
    assert m.reference_probability == pytest.approx(0.25)


def test_paper_example_or_both(ptb):
    """TOSEM §3.2: NP → DT in "Or both ." vs reference NP → DT NNS gives "Or both [MASK] ."."""
    tree = T("(TOP (FRAG (CC Or) (NP (DT both)) (. .)))")
    results = masked_sentences("paper", tree, ptb)
    matches = [m for m in results if m.reference_production == ("NP", ("DT", "NNS"))]
    assert len(matches) == 1
    m = matches[0]
    assert m.text == "Or both [MASK] ." and m.mask_tags == ["NNS"] and m.mask_positions == [2]
    assert m.seed_production == ("NP", ("DT",))
    assert m.reference_probability == pytest.approx(ptb.probability("NP", ("DT", "NNS")))


def test_top_k_and_mask_cap(ptb):
    tree = T("(S (NP (DT The) (NN movie)) (VP (VBD was) (ADJP (JJ good))) (. .))")
    results = masked_sentences("s", tree, ptb, top_k=2, max_masks=1)
    assert results
    assert all(len(m.mask_positions) == 1 for m in results)
    per_node: dict = {}
    for m in results:
        per_node.setdefault(m.seed_production, []).append(m)
        assert ptb.is_word_slot(m.mask_tags[0])
        assert is_subsequence(m.seed_production[1], m.reference_production[1])
        assert m.seed_production[0] == m.reference_production[0]
        assert m.text.split() == m.tokens and m.tokens.count(MASK) == 1
    assert all(len(group) <= 2 for group in per_node.values())
    more = masked_sentences("s", tree, ptb, top_k=5, max_masks=2)
    assert len(more) > len(results)
    assert any(len(m.mask_positions) == 2 for m in more)
    with pytest.raises(AlictError, match="top_k"):
        masked_sentences("s", tree, ptb, top_k=0)


def test_masked_sentence_round_trip(ptb):
    tree = T("(S (NP (PRP I)) (VP (VBD loved) (NP (PRP it))) (. .))")
    results = masked_sentences("rt", tree, ptb)
    assert results
    for m in results:
        data = json.loads(json.dumps(m.to_dict()))
        assert MaskedSentence.from_dict(data) == m


def test_reference_grammar_from_real_treebank(ptb):
    assert len(ptb) > 3000
    labels = set(ptb.counts)
    assert {"S", "NP", "VP", "PP", "SBAR"} <= labels
    assert not any("-" in label.strip("-") for label in labels), "function tags must be stripped"
    symbols = {s for rules in ptb.counts.values() for rhs in rules for s in rhs}
    assert "-NONE-" not in symbols and "NP-SBJ" not in symbols
    assert ptb.rules("NP")[0][1] >= ptb.rules("NP")[-1][1]
    assert grammar_path().exists()
    again = ReferenceGrammar.from_dict(json.loads(grammar_path().read_text()))
    assert again.counts == ptb.counts and again.pos_tags == ptb.pos_tags


def test_clean_tree_strips_tags_traces_and_empty_constituents():
    raw = T("(S (NP-SBJ-1 (-NONE- *T*-1)) (VP (VBD said) (SBAR (-NONE- 0) (S (NP-SBJ (PRP he)) (VP (VBD won)))))"
            " (. .))")
    cleaned = clean_tree(raw)
    assert cleaned == T("(S (VP (VBD said) (SBAR (S (NP (PRP he)) (VP (VBD won))))) (. .))")
