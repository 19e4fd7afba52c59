"""Explaining failures: token contributions (SHAP, LEMNA, LIME), masking templates (TOSEM Algorithm 2),
pass-to-fail comparisons and per-LC template aggregation. See docs/explain.md."""

from alict_core.explain.base import CachedModel, Contributions, ExplainError, ProgressFn, tokenize
from alict_core.explain.explainers import DEFAULT_SAMPLES, EXPLAINERS, explain
from alict_core.explain.pairs import (
    PairExplanation,
    compare_pair,
    explain_lc_failures,
    inserted_positions,
    recurring_template_tokens,
)
from alict_core.explain.sharded import ExplainedFailures, explain_failures_sharded
from alict_core.explain.template import MASK, MaskingTemplate, masking_template
from alict_core.explain.vocabulary import Vocabulary, corpus_vocabulary, default_vocabulary

__all__ = [
    "CachedModel", "Contributions", "DEFAULT_SAMPLES", "EXPLAINERS", "ExplainError", "MASK", "MaskingTemplate",
    "PairExplanation", "ProgressFn", "Vocabulary", "compare_pair", "corpus_vocabulary", "default_vocabulary",
    "ExplainedFailures", "explain", "explain_failures_sharded",
    "explain_lc_failures", "inserted_positions", "masking_template", "recurring_template_tokens",
    "tokenize",
]
