"""Syntactic diversity: distinct grammar productions over the parses of a set of texts."""

from __future__ import annotations

import logging
from typing import Any, Iterable, Sequence

log = logging.getLogger(__name__)


def production_strings(tree: Any, lexical: bool = False) -> list[str]:
    """Phrasal productions of an nltk.Tree as "LHS -> RHS" (``alict_core.parsing.productions`` when
    available; POS → word productions only when ``lexical``)."""
    if not lexical:
        from alict_core.parsing import productions

        return [f"{lhs} -> {' '.join(rhs)}" for lhs, rhs in productions(tree)]
    return [str(p) for p in tree.productions() if lexical or not p.is_lexical()]


def syntactic_diversity(trees: Iterable[Any], lexical: bool = False) -> dict[str, float]:
    """Distinct productions among ``trees`` (phrasal ones unless ``lexical``), and per tree."""
    distinct: set[str] = set()
    n = 0
    for tree in trees:
        n += 1
        distinct.update(production_strings(tree, lexical))
    return {"n_texts": n, "distinct_productions": len(distinct), "per_text": len(distinct) / n if n else 0.0}


def parse_texts(texts: Sequence[str], parser_name: str | None = None) -> list[Any] | None:
    """Parse texts with the project's parser (``alict_core.parsing.get_parser``); None (logged) when the parser
    is not built. Any other failure raises: a metric must not silently disappear."""
    from alict_core.common.errors import ArtefactMissingError
    from alict_core.parsing import get_parser

    try:
        parser = get_parser(parser_name) if parser_name else get_parser()
    except ArtefactMissingError as exc:
        log.warning("syntactic diversity skipped: %s", exc)
        return None
    return list(parser.parse_batch([t.split() for t in texts]))


def texts_syntactic_diversity(texts: Sequence[str], parser_name: str | None = None) -> dict[str, float] | None:
    trees = parse_texts(texts, parser_name)
    return None if trees is None else syntactic_diversity(trees)
