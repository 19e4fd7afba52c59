"""The expansions page's tables (plain functions over expansion rows, no streamlit): one row per candidate with
its verdicts, the masked sentences with their productions, and the row colours."""

from __future__ import annotations

import pandas as pd

from alict_core.expansion.constraints.fill_checks import CHECKS

VERDICTS = CHECKS  # the core's checks, in its order


def verdict_frame(rows: list[dict]) -> pd.DataFrame:
    """One row per candidate: text, filled words, score, the five verdicts and the reasons."""
    records = []
    for row in rows:
        verdicts = row.get("verdicts") or {}
        record = {
            "accepted": bool(row.get("accepted")),
            "text": row.get("text", ""),
            "words": ", ".join(map(str, row.get("words") or [])),
            "score": row.get("score"),
        }
        for name in VERDICTS:
            value = verdicts.get(name)
            record[name] = "✔" if value is True else ("✘" if value is False else ("—" if value is None else str(value)))
        reasons = row.get("reasons") or []
        if isinstance(reasons, dict):
            record["reasons"] = "; ".join(f"{k}: {v}" for k, v in reasons.items())
        else:
            record["reasons"] = "; ".join(map(str, reasons)) if isinstance(reasons, (list, tuple)) else str(reasons)
        masked = row.get("masked") or {}
        record["masked"] = masked.get("text") or masked.get("masked_text") or ""
        records.append(record)
    return pd.DataFrame(records)


def production_text(value) -> str:
    """['S', ['NP', 'VP']] → 'S → NP VP' (other shapes as they are)."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[1], (list, tuple)):
        return f"{value[0]} → {' '.join(map(str, value[1]))}"
    return str(value)


def masked_frame(masked: list[dict]) -> pd.DataFrame:
    """Masked sentences with the seed production and the reference superstructure it was found in."""
    rows = []
    for m in masked:
        rows.append({
            "masked sentence": m.get("text", ""),
            "seed production": production_text(m.get("seed_production")),
            "reference superstructure": production_text(m.get("reference_production")),
            "probability": m.get("reference_probability"),
            "mask tags": " ".join(map(str, m.get("mask_tags") or [])),
        })
    return pd.DataFrame(rows)


def highlight(row: pd.Series) -> list[str]:
    colour = "background-color: #e3f4e1" if row["accepted"] else "background-color: #fbe4e4"
    return [colour] * len(row)
