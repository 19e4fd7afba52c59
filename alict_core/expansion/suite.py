"""Grow an imported suite with ALiCT (TOSEM Fig. 5): its MFT cases become seeds of ``expand()``.

Each imported case (CheckList JSON, HateCheck CSV, cases JSONL) is a seed with no protected text and no
LC search predicates (an imported case has no corpus search to re-check); its expansions get the same
POS, polarity (known and neutral) and protected-text checks as LC expansions and inherit the case's
expectation. INV/DIR cases are skipped: their variants would not follow an expansion of the text.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from alict_core.cases.testcases import TestCase, build_cases
from alict_core.lcspec.predicates import tokenize

NO_PREDICATES = "imported suite case: no LC search predicates to re-check"


def suite_seeds(cases: Sequence[TestCase], task: str) -> dict[str, list[dict[str, Any]]]:
    """MFT cases as seed dicts (PTB-tokenised text, like corpus seeds), grouped by their LC / functionality. A suite's
    expansion cases (a run's exported cases.jsonl) are no seeds: an expansion of one hung on an expansion (pass 37)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        if case.test_type != "MFT" or case.variants or case.kind == "expansion":
            continue
        groups.setdefault(case.lc_id, []).append({
            "id": case.case_id, "lc_id": case.lc_id, "task": case.task or task, "text": " ".join(tokenize(case.text)),
            "test_type": "MFT", "expected": case.expected, "protected_spans": [], "segments": [],
            "capability": case.capability, "description": case.description,
        })
    return groups


def suite_spec(lc_id: str, task: str) -> dict[str, Any]:
    """The stand-in spec of an imported group: its id and task, the default (neutral-only) expansion policy."""
    return {"id": lc_id, "task": task, "expansion": {"allowed_polarity": ["neutral"], "max_per_seed": 5}}


def no_predicates(spec: Any, seed: Any, text: str) -> tuple[bool, str]:
    return True, NO_PREDICATES


def expand_suite(cases: Sequence[TestCase], task: str, parser: Any, suggester: Any,
                 progress: Callable[[str, int, int, str], None] | None = None, max_seeds: int | None = None,
                 **settings: Any) -> dict[str, Any]:
    """``{lc_id: ExpansionSet}`` of every imported MFT group (at most ``max_seeds`` cases each)."""
    from alict_core.expansion.search import expand

    out = {}
    for lc_id, seeds in suite_seeds(cases, task).items():
        chosen = seeds[:max_seeds] if max_seeds is not None else seeds

        def report(done: int, total: int, stage: str, _lc: str = lc_id) -> None:
            if progress:
                progress(_lc, done, total, stage)

        out[lc_id] = expand(chosen, suite_spec(lc_id, task), parser, suggester, predicate_check=no_predicates,
                            progress=report, **settings)
    return out


def suite_expansion_cases(cases: Sequence[TestCase], expansions: Sequence[dict[str, Any]], task: str,
                          keep_flagged: bool = False) -> tuple[list[TestCase], dict[str, Any]]:
    """Test cases of the accepted expansions of imported cases (each inherits its case's expectation),
    with the text validity checks applied; (cases, validity record)."""
    from alict_core.cases.validity import exclusion_note, validate

    seeds_of = [c for c in cases if c.test_type == "MFT" and not c.variants and c.kind != "expansion"]
    ids = {c.case_id for c in seeds_of}
    rows = [r for r in expansions if str(r.get("seed_id")) in ids and r.get("accepted", True)]
    if not rows:
        return [], {}
    seeds = [{"id": c.case_id, "lc_id": c.lc_id, "task": c.task or task, "text": c.text, "test_type": c.test_type,
              "expected": c.expected, "capability": c.capability, "description": c.description}
             for c in seeds_of]
    grown = [c for c in build_cases(seeds, rows) if c.kind == "expansion"]
    report = validate(seeds, rows, task=task)
    grown_ids = {c.case_id for c in grown}
    report.flags = [f for f in report.flags if f.case_id in grown_ids]  # the imported cases are the suite's own
    record = {**report.to_dict(), "kept_flagged": keep_flagged, "note": exclusion_note(report, keep_flagged)}
    kept = grown if keep_flagged else [c for c in grown if c.case_id not in report.flagged_ids]
    return kept, record
