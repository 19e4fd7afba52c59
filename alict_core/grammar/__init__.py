"""Reference grammar (PTB-sample CFG with rule probabilities) and ALiCT's Algorithm 1 (masked sentences)."""

from alict_core.grammar.reference import (
    NON_WORD_TAGS,
    ReferenceGrammar,
    align,
    extra_symbols,
    grammar_path,
    is_subsequence,
    load_reference_grammar,
)
from alict_core.grammar.superstructure import MASK, MaskedSentence, insert_masks, masked_sentences

__all__ = [
    "MASK",
    "NON_WORD_TAGS",
    "MaskedSentence",
    "ReferenceGrammar",
    "align",
    "extra_symbols",
    "grammar_path",
    "insert_masks",
    "is_subsequence",
    "load_reference_grammar",
    "masked_sentences",
]
