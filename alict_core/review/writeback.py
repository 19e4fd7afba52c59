"""Write-back of reviews into runs and reports.

A case is **rejected** when, over every review task of its suite task, a strict majority of its
judgements give a label that disagrees with the case's expectation, or its mean LC relevance is ≤ 2.
Cases are matched by case id *and* the content hash of their text, so a regenerated case with the same
id but another text is not excluded. Rejected cases are left out of runs (``run_suite`` calls
``drop_rejected``; ``include_rejected=True`` shows them).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from alict_core.hashing import hash_text
from alict_core.review.metrics import label_consistent, validity_metrics
from alict_core.review.store import ReviewStore, default_url, sqlite_path

REJECT_RELEVANCE = 2.0


def _store_if_exists(url: str | None) -> ReviewStore | None:
    """The store, read-only, or None when it is a SQLite file nobody has created yet (runs must not create it)."""
    url = url or default_url()
    path = sqlite_path(url)
    if path is not None and not path.exists():
        return None
    return ReviewStore(url, read_only=True)


def case_verdicts(rows: Iterable[Mapping[str, Any]], task: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (case id, text hash): judgements, label disagreements, mean relevance and whether it is rejected."""
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[(row["case_id"], row["text_hash"])].append(row)
    out = {}
    for key, judged in grouped.items():
        verdicts = [label_consistent(task, j["expected"], int(j["label_score"])) for j in judged]
        disagree = sum(v is False for v in verdicts)
        relevance = sum(int(j["relevance"]) for j in judged) / len(judged)
        out[key] = {"lc_id": judged[0]["lc_id"], "kind": judged[0]["kind"], "text": judged[0].get("text", ""),
                    "n": len(judged), "disagree": disagree, "relevance": relevance,
                    "rejected": disagree * 2 > len(judged) or relevance <= REJECT_RELEVANCE}
    return out


def rejected_keys(task: str, lc: str | None = None, *, url: str | None = None) -> set[tuple[str, str]]:
    """(case id, text hash) of the rejected cases of a suite task (optionally one LC)."""
    store = _store_if_exists(url)
    if store is None:
        return set()
    verdicts = case_verdicts(store.judgements(suite_task=task), task)
    return {key for key, v in verdicts.items() if v["rejected"] and (lc is None or v["lc_id"] == lc)}


def rejected_cases(task: str, *, url: str | None = None) -> list[dict[str, Any]]:
    """The rejected cases of a suite task with why: judgements, label disagreements, mean relevance."""
    store = _store_if_exists(url)
    if store is None:
        return []
    verdicts = case_verdicts(store.judgements(suite_task=task), task)
    return [{"case_id": case_id, "lc_id": v["lc_id"], "kind": v["kind"], "text": v["text"], "judgements": v["n"],
             "label_disagreements": v["disagree"], "mean_relevance": round(v["relevance"], 2)}
            for (case_id, _), v in sorted(verdicts.items()) if v["rejected"]]


def rejected_case_ids(task: str, lc: str | None = None, *, url: str | None = None) -> set[str]:
    """Ids of the cases reviewers rejected in a suite task (optionally one LC)."""
    return {case_id for case_id, _ in rejected_keys(task, lc, url=url)}


def drop_rejected(cases: Sequence[Any], *, url: str | None = None) -> tuple[list[Any], int]:
    """The cases without the rejected ones (matched by id and text hash), and how many were dropped."""
    tasks = {c.task for c in cases if c.task}
    rejected: set[tuple[str, str]] = set()
    for task in tasks:
        rejected |= rejected_keys(task, url=url)
    if not rejected:
        return list(cases), 0
    kept = [c for c in cases if (c.case_id, hash_text(c.text)) not in rejected]
    return kept, len(cases) - len(kept)


def lc_validity(task: str, lcs: Iterable[str] | None = None, *, url: str | None = None) -> dict[str, dict[str, Any]]:
    """Per LC: reviewed cases, rejected cases, confirmed share (1 − rejected / reviewed) and the paper's metrics."""
    store = _store_if_exists(url)
    if store is None:
        return {}
    rows = store.judgements(suite_task=task)
    wanted = set(lcs) if lcs is not None else None
    verdicts = case_verdicts(rows, task)
    out: dict[str, dict[str, Any]] = {}
    for lc in sorted({r["lc_id"] for r in rows}):
        if wanted is not None and lc not in wanted:
            continue
        mine = [v for v in verdicts.values() if v["lc_id"] == lc]
        rejected = sum(v["rejected"] for v in mine)
        metrics = validity_metrics([r for r in rows if r["lc_id"] == lc], task)
        out[lc] = {"reviewed": len(mine), "rejected": rejected,
                   "confirmed": (len(mine) - rejected) / len(mine) if mine else None,
                   "label_cons": metrics["label_cons"]["value"], "lc_rel": metrics["lc_rel"]["value"],
                   "exp_validity": metrics["exp_validity"]["value"]}
    return out
