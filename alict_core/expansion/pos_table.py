"""Fills and acceptances per inserted POS (the slot tags of a row's masked sentence), with the share a
reviewer judged valid where review judgements exist: the measure the slot policy is decided on."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

VALID_SCORE = 4  # a 1–5 validity judgement of 4 or 5 counts as valid (mean over reviewers)


def slot_pos(row: Mapping[str, Any]) -> str:
    """The inserted POS of a row: its slot tags joined by '+' ("JJ", "DT+JJ"); "?" when unknown."""
    tags = (row.get("masked") or {}).get("mask_tags") or []
    return "+".join(str(t) for t in tags) or "?"


def judged_validity(judgements: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """Case id (and text) → judged valid, from review judgement rows of expansions (mean validity ≥ 4)."""
    scores: dict[str, list[int]] = {}
    for row in judgements:
        if row.get("kind") != "expansion" or row.get("validity") is None:
            continue
        for key in (str(row.get("case_id") or ""), "text:" + str(row.get("text") or "")):
            scores.setdefault(key, []).append(int(row["validity"]))
    return {key: sum(v) / len(v) >= VALID_SCORE for key, v in scores.items() if key not in ("", "text:")}


def pos_table(rows: Iterable[Mapping[str, Any]], judged: Mapping[str, bool] | None = None) -> list[dict[str, Any]]:
    """One row per inserted POS: fills, accepted, judged (accepted ones with a judgement) and judged valid."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = table.setdefault(slot_pos(row), {"pos": slot_pos(row), "fills": 0, "accepted": 0, "judged": 0,
                                                 "valid": 0})
        entry["fills"] += 1
        if not row.get("accepted"):
            continue
        entry["accepted"] += 1
        verdict = None
        if judged:
            verdict = judged.get(str(row.get("id"))) if str(row.get("id")) in judged \
                else judged.get("text:" + str(row.get("text")))
        if verdict is not None:
            entry["judged"] += 1
            entry["valid"] += int(verdict)
    return sorted(table.values(), key=lambda e: (-e["fills"], e["pos"]))


def format_pos_table(table: list[dict[str, Any]]) -> str:
    """Plain-text table; "judged valid" is "valid/judged" or "—" where no accepted fill was judged."""
    lines = [f"  {'inserted POS':<14} {'fills':>7} {'accepted':>8} {'judged valid':>12}"]
    for e in table:
        valid = f"{e['valid']}/{e['judged']}" if e["judged"] else "—"
        lines.append(f"  {e['pos']:<14} {e['fills']:>7} {e['accepted']:>8} {valid:>12}")
    return "\n".join(lines)
