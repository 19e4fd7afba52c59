"""Per-LC and whole-suite diversity metrics of test cases."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from alict_core.metrics.diversity import parse_texts, syntactic_diversity
from alict_core.metrics.selfbleu import self_bleu


def suite_metrics(cases: Sequence, sample_size: int = 1000, seed: int = 0, parser_name: str | None = None,
                  syntax: bool = True) -> pd.DataFrame:
    """Rows per LC and kind (seed / expansion / all) plus ``ALL`` rows: n, Self-BLEU, distinct productions
    (NaN when no parser is built; each distinct text is parsed once)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for case in cases:
        for key in ((case.lc_id, case.kind), (case.lc_id, "all"), ("ALL", case.kind), ("ALL", "all")):
            groups.setdefault(key, []).append(case.text)
    trees = None
    if syntax:
        unique = list(dict.fromkeys(c.text for c in cases))
        parsed = parse_texts(unique, parser_name)
        trees = dict(zip(unique, parsed, strict=True)) if parsed is not None else None
    rows = []
    for (lc, kind), texts in groups.items():
        div = syntactic_diversity(trees[t] for t in dict.fromkeys(texts)) if trees else None
        rows.append({"lc_id": lc, "kind": kind, "n": len(texts),
                     "self_bleu": self_bleu(texts, sample_size=sample_size, seed=seed),
                     "distinct_productions": div["distinct_productions"] if div else float("nan")})
    return pd.DataFrame(rows)
