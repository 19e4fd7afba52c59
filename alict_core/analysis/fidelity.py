"""Fidelity report: per LC, our seed (and expansion) counts beside the paper's, and the validity checks.

- ``paper seeds / exps``: TOSEM Tables 8/9 (full corpora), from each spec's ``paper`` block;
- ``ours``: seeds the LC can produce on the whole corpus. Select and replace rules are counted
  exactly (every distinct seed); concat rules give their number of candidate combinations (an upper
  bound, as the paper's counts for those LCs are);
- ``sampled`` / ``flagged``: the seeds drawn under the spec's cap and how many the validity checks flag;
- ``exps``: accepted expansions, when expansion files are given.

LCs 1, 2, 4, 5 (sentiment) and 1-4, 11 (hate speech) have no cross product: their counts are the anchors.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Mapping

from alict_core.cases.validity import validate
from alict_core.data.corpus import Corpus
from alict_core.lcspec.schema import LCSpec
from alict_core.seeds import find_seeds


@dataclass(frozen=True)
class FidelityRow:
    lc_id: str
    title: str
    extension: bool
    paper_seeds: int | None
    ours: int
    exact: bool  # ours is an exact count of distinct seeds (else the number of concat combinations)
    sampled: int
    flagged: int
    flagged_reasons: str
    paper_expansions: int | None
    expansions: int | None

    @property
    def ratio(self) -> float | None:
        """ours / paper (None without a paper count)."""
        return self.ours / self.paper_seeds if self.paper_seeds else None


def _exact(spec: LCSpec) -> bool:
    return all(rule.kind != "concat" for rule in spec.rules)


def fidelity_rows(specs: Iterable[LCSpec], corpus: Corpus, expansions: Iterable[Mapping[str, Any]] = (),
                  progress: Callable[[str], None] | None = None) -> list[FidelityRow]:
    """One row per spec (see the module docstring for what each count means)."""
    accepted: dict[str, int] = {}
    rows_by_lc: dict[str, list[Mapping[str, Any]]] = {}
    for row in expansions:
        rows_by_lc.setdefault(str(row.get("lc_id")), []).append(row)
        if row.get("accepted", True) is True:  # absent: accepted, as `run` reads it
            accepted[str(row.get("lc_id"))] = accepted.get(str(row.get("lc_id")), 0) + 1
    out = []
    for spec in specs:
        if progress:
            progress(spec.id)
        exact = _exact(spec)
        if exact:
            ours = len(find_seeds(spec, corpus, max_seeds=None, max_per_source=10**6).seeds)
        else:
            ours = find_seeds(spec, corpus, max_seeds=1).n_candidates
        sampled = find_seeds(spec, corpus).seeds
        report = validate(sampled, rows_by_lc.get(spec.id, []), task=spec.task, specs={spec.id: spec})
        reasons = report.counts().get(spec.id, {})
        out.append(FidelityRow(
            spec.id, spec.title, spec.is_extension, spec.paper.seeds if spec.paper else None, ours, exact,
            len(sampled), len(report.flagged_ids), ", ".join(f"{r}={n}" for r, n in reasons.items()),
            spec.paper.expansions if spec.paper else None, accepted.get(spec.id) if rows_by_lc else None,
        ))
    return out


def _fmt(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def markdown_table(rows: list[FidelityRow]) -> str:
    """The report as a Markdown table (for docs/ and the terminal)."""
    lines = ["| LC | title | paper seeds | ours | ours / paper | sampled | flagged | paper exps | exps |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ours = _fmt(r.ours) + ("" if r.exact else " (combinations)")
        ratio = "—" if r.ratio is None else f"{r.ratio:.2f}"
        flagged = f"{r.flagged}" + (f" ({r.flagged_reasons})" if r.flagged_reasons else "")
        lc = r.lc_id + (" (extension)" if r.extension else "")
        lines.append(f"| {lc} | {r.title} | {_fmt(r.paper_seeds)} | {ours} | {ratio} | {r.sampled} | {flagged} "
                     f"| {_fmt(r.paper_expansions)} | {_fmt(r.expansions)} |")
    return "\n".join(lines)


def as_records(rows: list[FidelityRow]) -> list[dict[str, Any]]:
    return [{**asdict(r), "ratio": r.ratio} for r in rows]
