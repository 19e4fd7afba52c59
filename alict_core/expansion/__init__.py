"""Syntax-based expansion of seeds (ALiCT §3.3): masked-LM fills of grammar-derived slots, validated.

``expand(seeds, spec, parser, suggester, ...) -> ExpansionSet``; ``validate_fill(...)`` runs the four
checks (POS in context, SentiWordNet polarity, LC predicates, protected spans) on one fill.
"""

from alict_core.expansion.constraints.fill_checks import (
    CHECKS,
    ExpansionError,
    FillVerdict,
    Tagged,
    check_polarity,
    check_pos,
    check_predicates,
    check_protected,
    tag_token_lists,
    validate_fill,
)
from alict_core.expansion.search import (
    ExpansionSet,
    expand,
    expansion_key,
    fill_combinations,
    rejection_counts,
    rejection_reasons,
)
from alict_core.expansion.sharded import ExpansionSummary, expand_sharded

__all__ = ["CHECKS", "ExpansionError", "ExpansionSet", "rejection_counts", "rejection_reasons", "FillVerdict", "Tagged",
           "check_pos", "check_polarity",
           "check_predicates", "check_protected", "expand", "expand_sharded", "ExpansionSummary", "expansion_key",
           "fill_combinations",
           "tag_token_lists", "validate_fill"]
