"""Capability-first names for LCs: each LC id's title and capability group, for charts, tables and reports.

Shipped LCs take both from their spec (``capability`` and ``title``); cases of imported suites
(CheckList, HateCheck, JSONL) carry a free-form capability that :func:`capability_group` maps onto the
same groups, with the LC id as title. Ids stay available (``LCInfo.id``) for hovers and links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

GROUPS = ("Vocabulary", "Negation", "Temporal", "SRL", "Questions", "Opinion", "Coreference", "Taxonomy",
          "Fairness", "Identity terms", "Counter speech", "Hate/Slur", "Robustness", "Other")
# keyword (lower case, matched as a word prefix) -> group, for capabilities not named exactly as a group
_KEYWORDS = (
    ("negat", "Negation"), ("vocab", "Vocabulary"), ("profan", "Vocabulary"), ("tempor", "Temporal"),
    ("srl", "SRL"), ("semantic role", "SRL"), ("question", "Questions"), ("opinion", "Opinion"),
    ("coref", "Coreference"), ("taxonom", "Taxonomy"), ("fair", "Fairness"), ("ident", "Identity terms"),
    ("counter", "Counter speech"), ("slur", "Hate/Slur"), ("hate", "Hate/Slur"), ("threat", "Hate/Slur"),
    ("derog", "Hate/Slur"), ("robust", "Robustness"), ("typo", "Robustness"), ("spell", "Robustness"),
    ("ner", "Vocabulary"),
)


@dataclass(frozen=True)
class LCInfo:
    """How an LC is shown: ``title`` and ``capability`` group first, ``id`` on hover."""

    id: str
    title: str
    capability: str

    @property
    def label(self) -> str:
        """``"Negation · Negated positive should be negative"`` (the id alone when there is no title)."""
        return f"{self.capability} · {self.title}" if self.title != self.id else f"{self.capability} · {self.id}"


def capability_group(capability: str | None) -> str:
    """The group of a free-form capability name: an exact group name, else the first keyword match, else Other."""
    name = (capability or "").strip()
    if not name:
        return "Other"
    for group in GROUPS:
        if name.lower() == group.lower():
            return group
    lowered = name.lower()
    for keyword, group in _KEYWORDS:
        if re.search(rf"(^|[^a-z]){re.escape(keyword)}", lowered):
            return group
    return name


def spec_infos() -> dict[str, LCInfo]:
    """Title and group of every LC spec of both tasks (empty if the specs cannot be read).

    The spec loader caches by the spec files' stamps, so an edited spec shows its new title.
    """
    from alict_core.common.errors import AlictError
    from alict_core.lcspec import load_task_specs
    from alict_core.tasks import TASK_NAMES

    out: dict[str, LCInfo] = {}
    for task in TASK_NAMES:
        try:
            out.update({s.id: LCInfo(s.id, s.title, capability_group(s.capability)) for s in load_task_specs(task)})
        except (AlictError, OSError, ValueError):
            continue
    return out


def _fallback(lc_id: str, capability: str | None) -> LCInfo:
    return LCInfo(lc_id, lc_id, capability_group(capability if capability and capability != lc_id else None))


def lc_info(lc_id: str, capability: str | None = None) -> LCInfo:
    """Title and group of one LC: from its spec when shipped, else from the case's ``capability``."""
    return spec_infos().get(lc_id) or _fallback(lc_id, capability)


def capability_name(lc_id: str, capability: str | None) -> str:
    """The capability to show for a case or summary row: its own when it names one, else (cases of shipped LCs
    carry their LC id there) the group of the LC's spec; the id itself only for an unknown LC."""
    if capability and capability != lc_id:
        return capability
    known = spec_infos().get(lc_id)
    return known.capability if known else (capability or lc_id)


def lc_catalog(lc_ids: Iterable[str], capabilities: Mapping[str, str] | None = None) -> dict[str, LCInfo]:
    """:func:`lc_info` for many LCs (``capabilities``: LC id -> the capability its cases carry)."""
    capabilities = capabilities or {}
    known = spec_infos()
    return {lc: _as_run(known.get(lc), lc, capabilities.get(lc)) for lc in dict.fromkeys(lc_ids)}


def _as_run(spec: LCInfo | None, lc_id: str, capability: str | None) -> LCInfo:
    """The spec's title and group, unless the run's cases carry another capability: the spec was edited since the
    run, whose LC is then shown in its own group under its id (one visitor's spec save regrouped and retitled every
    earlier run, pass 37)."""
    if spec is None:
        return _fallback(lc_id, capability)
    if capability and capability != lc_id and capability_group(capability) != spec.capability:
        return LCInfo(lc_id, lc_id, capability_group(capability))
    return spec


def group_order(groups: Iterable[str]) -> list[str]:
    """Groups in the canonical order (known groups first, then the others alphabetically)."""
    unique = set(groups)
    known = [g for g in GROUPS if g in unique]
    return known + sorted(unique - set(known))
