"""Reviewed validity for run reports: a column beside each LC's fail rate and the exclusion count."""

from __future__ import annotations

from typing import Any

import pandas as pd

from alict_core.review.writeback import lc_validity

COLUMN = "reviewed validity"


def validity_text(entry: dict[str, Any] | None) -> str:
    """'91.3 % of 23 reviewed (2 rejected)' for one LC; '' when no case of it was reviewed."""
    if not entry or not entry.get("reviewed"):
        return ""
    return f"{100 * entry['confirmed']:.1f}% of {entry['reviewed']} reviewed ({entry['rejected']} rejected)"


def with_review(result: Any, table: pd.DataFrame, *, url: str | None = None) -> tuple[pd.DataFrame, str]:
    """The per-LC table with a reviewed-validity column (when any LC was reviewed) and an HTML note.

    The note says how many rejected cases the run left out and how to show them.
    """
    tasks = sorted({c.task for c in result.case_list if getattr(c, "task", None)})
    lcs = set(table["lc_id"]) if "lc_id" in table else set()
    validity: dict[str, dict[str, Any]] = {}
    for task in tasks:
        validity.update(lc_validity(task, lcs, url=url))
    excluded = int((getattr(result, "extra", None) or {}).get("review_excluded", 0))
    if validity and len(table):
        table = table.copy()
        table[COLUMN] = [validity_text(validity.get(lc)) for lc in table["lc_id"]]
    parts = []
    if excluded:
        parts.append(f"{excluded} case(s) rejected by human reviewers were excluded from this run "
                     "(run with <code>--include-rejected</code> to show them).")
    if validity:
        parts.append("Reviewed validity: share of an LC's human-reviewed cases that reviewers confirmed (label agrees "
                     "with the expectation by majority and LC relevance above 2 of 5).")
    note = "".join(f"<p class=meta>{p}</p>" for p in parts)
    return table, note
