"""Small validity checks on generated sentences (double final marks, repeated words, broken joins).

A local stand-in until the project-wide ``alict_core.cases.validity`` module lands; the lead unifies them.
"""

from __future__ import annotations

import re

_DOUBLE_MARK = re.compile(r"[.!?,;:]\s*[.!?,;:]")
_REPEATED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
_BROKEN_JOIN = re.compile(
    r"\b(?:the|a|an|of|to|with|in|on|at|by|for)\s*[,.!?;:]|\b(?:and|or|but|that|which)\s*[.!?;]\s*$", re.IGNORECASE
)
_ALLOWED_REPEATS = frozenset({"that", "had", "very", "ha", "bye", "no", "so"})


def problems(text: str) -> list[str]:
    """Names of the validity problems of ``text`` (empty when it looks well formed)."""
    found = []
    if _DOUBLE_MARK.search(text.replace("...", "…")):
        found.append("double mark")
    repeat = _REPEATED.search(text)
    if repeat and repeat.group(1).lower() not in _ALLOWED_REPEATS:
        found.append("repeated word")
    if _BROKEN_JOIN.search(text) or re.search(r"^\W|,\s*$", text.strip()):
        found.append("broken join")
    return found


def is_valid(text: str) -> bool:
    return not problems(text)
