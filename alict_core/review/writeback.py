"""Write-back of reviews into runs and reports.

Each reviewer counts once per case (their latest judgement over every review task of the suite task). A
reviewer **rejects** a case on the label when their label disagrees with the case's expectation, and on
relevance when they score it ≤ 2. A case is **rejected** when, on the label or on relevance, at least
``min_agreeing`` reviewers (default 2) reject it *and* they are a strict majority of its reviewers: one
reviewer's judgement never rejects a case alone (unless ``min_agreeing`` is set to 1).

The write-back takes effect only once it is confirmed for the suite task (``ReviewStore.confirm_writeback``:
the Review page's confirmation, or ``review writeback --confirm``), which also stores ``min_agreeing``. From
then on runs leave out the rejected cases *and* the expansions of a rejected seed (they inherit its label):
the caller of a run hands the runner ``RejectionFilter()`` as its ``exclude``; ``run --include-rejected`` shows
them. Cases are matched by case id and the content hash of their text, so a regenerated case with the same id
but another text is not excluded; a case rejected on its expected label alone runs again once its LC expects
another label (the reviewers' verdict was on that expectation). A case without a ``task`` field is checked
against the run's task when the caller names it, else against every suite task whose write-back is confirmed.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping, Sequence

from alict_core.common.hashing import hash_text
from alict_core.review.metrics import label_consistent, per_case, validity_metrics
from alict_core.review.store import HotJournalError, ReviewError, ReviewStore, default_url, sqlite_path

logger = logging.getLogger(__name__)

DEFAULT_MIN_AGREEING = 2
LOW_RELEVANCE = 2  # a relevance score at or below this rejects the case on relevance


def _store_if_exists(url: str | None) -> ReviewStore | None:
    """The store, read-only, or None when it is a SQLite file nobody has created yet (runs must not create it)."""
    url = url or default_url()
    path = sqlite_path(url)
    if path is not None and not path.exists():
        return None
    try:
        return ReviewStore(url, read_only=True)
    except HotJournalError as exc:  # a killed writer's unfinished write this process may not roll back: the run
        if url not in _WARNED:  # goes on without rejections and says so (it blocked every run; pass 39)
            _WARNED.add(url)
            logger.warning("%s; this command goes on without the reviewers' rejections (rejected cases are "
                           "included)", exc)
        return None


_WARNED: set[str] = set()  # the databases whose unreadable state was said (once per process)


def check_min_agreeing(value: Any) -> int:
    """``min_agreeing`` as a whole number ≥ 1 (ReviewError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ReviewError(f"the minimum number of agreeing reviewers must be a whole number >= 1, got {value!r}")
    return value


def case_verdicts(rows: Iterable[Mapping[str, Any]], task: str, min_agreeing: int = DEFAULT_MIN_AGREEING
                  ) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (case id, text hash): reviewers, label rejections, low-relevance votes, mean relevance, rejected."""
    check_min_agreeing(min_agreeing)
    out = {}
    for key, judged in per_case(rows).items():
        n = len(judged)
        disagree = sum(label_consistent(task, j["expected"], int(j["label_score"])) is False for j in judged)
        low = sum(int(j["relevance"]) <= LOW_RELEVANCE for j in judged)
        relevance = sum(int(j["relevance"]) for j in judged) / n
        agreed = [votes >= min_agreeing and votes * 2 > n for votes in (disagree, low)]
        out[key] = {"lc_id": judged[0]["lc_id"], "kind": judged[0]["kind"], "seed_id": judged[0].get("seed_id"),
                    "text": judged[0].get("text", ""), "n": n, "disagree": disagree, "low_relevance": low,
                    "relevance": relevance, "rejected": any(agreed),
                    # rejected for its expected label alone: a verdict on that expectation, not on the case
                    "label_only": agreed[0] and not agreed[1], "expected": judged[0].get("expected")}
    return out


def active_min_agreeing(store: ReviewStore, task: str) -> int | None:
    """The confirmed rule's minimum number of agreeing reviewers (None: write-back not confirmed)."""
    rule = store.writeback_rule(task)
    return None if rule is None else int(rule.min_agreeing)


def rejected_keys(task: str, lc: str | None = None, *, url: str | None = None, min_agreeing: int | None = None,
                  confirmed_only: bool = True) -> set[tuple[str, str]]:
    """(case id, text hash) of the rejected cases of a suite task (optionally one LC).

    By default only once the write-back is confirmed, under its stored ``min_agreeing``; ``confirmed_only=False``
    previews it (``min_agreeing`` default 2)."""
    store = _store_if_exists(url)
    if store is None:
        return set()
    active = active_min_agreeing(store, task)
    if confirmed_only and active is None:
        return set()
    rule = min_agreeing or active or DEFAULT_MIN_AGREEING
    verdicts = case_verdicts(store.judgements(suite_task=task), task, rule)
    return {key for key, v in verdicts.items() if v["rejected"] and (lc is None or v["lc_id"] == lc)}


def label_rejections(task: str, *, url: str | None = None) -> dict[tuple[str, str], Any]:
    """(case id, text hash) → the expectation reviewers rejected, of the cases rejected on their label alone (the
    confirmed write-back's rule): such a case runs again once its LC expects another label (pass 37)."""
    store = _store_if_exists(url)
    active = active_min_agreeing(store, task) if store is not None else None
    if store is None or active is None:
        return {}
    verdicts = case_verdicts(store.judgements(suite_task=task), task, active)
    return {key: v["expected"] for key, v in verdicts.items() if v["rejected"] and v["label_only"]}


def rejection_state(*, url: str | None = None) -> str:
    """A short hash of what runs leave out now: per suite task with a confirmed write-back, the cases its rule
    rejects (with the expectation of those rejected on their label alone); "" without any. A cache of anything read
    through :class:`RejectionFilter` is keyed on it: a write-back confirmed, revoked or judged again since is seen
    (the Harden page's readiness table was kept from before a write-back; pass 38)."""
    from alict_core.common.hashing import hash_json

    store = _store_if_exists(url)
    if store is None:
        return ""
    state: dict[str, list[Any]] = {}
    for task in sorted({t.suite_task for t in store.tasks()}):
        active = active_min_agreeing(store, task)
        if active is None:
            continue
        verdicts = case_verdicts(store.judgements(suite_task=task), task, active)
        state[task] = [[*key, v["label_only"] and v["expected"]]
                       for key, v in sorted(verdicts.items()) if v["rejected"]]
    return hash_json(state) if state else ""


def same_expectation(a: Any, b: Any) -> bool:
    """Whether two expectations ask for the same thing (kind and labels; their order and extra fields aside)."""
    def key(value: Any) -> tuple[str, tuple[str, ...]]:
        value = value if isinstance(value, Mapping) else {}
        return str(value.get("kind")), tuple(sorted(str(label) for label in value.get("labels") or ()))

    return key(a) == key(b)


def rejected_cases(task: str, *, url: str | None = None, min_agreeing: int | None = None) -> list[dict[str, Any]]:
    """The rejected cases of a suite task with why (reviewers, label rejections, low-relevance votes, mean
    relevance), under ``min_agreeing`` (default: the confirmed rule's, else 2), confirmed or not."""
    store = _store_if_exists(url)
    if store is None:
        return []
    rule = min_agreeing or active_min_agreeing(store, task) or DEFAULT_MIN_AGREEING
    verdicts = case_verdicts(store.judgements(suite_task=task), task, rule)
    return [{"case_id": case_id, "lc_id": v["lc_id"], "kind": v["kind"], "text": v["text"], "reviewers": v["n"],
             "label_rejections": v["disagree"], "low_relevance_votes": v["low_relevance"],
             "mean_relevance": round(v["relevance"], 2)}
            for (case_id, _), v in sorted(verdicts.items()) if v["rejected"]]


def writeback_status(task: str, *, url: str | None = None, min_agreeing: int | None = None) -> dict[str, Any]:
    """What the write-back does for a suite task: confirmed or not, the rule, and the cases it (would) exclude.

    A rejected seed also takes its expansions out of runs; they are counted here when a review item names them.
    """
    store = _store_if_exists(url)
    rule = store.writeback_rule(task) if store is not None else None
    rejected = rejected_cases(task, url=url, min_agreeing=min_agreeing)
    return {"task": task, "confirmed": rule is not None,
            "min_agreeing": min_agreeing or (rule.min_agreeing if rule else DEFAULT_MIN_AGREEING),
            "rule_in_force": rule.min_agreeing if rule else None,  # None: nothing in force (min_agreeing: a preview)
            "confirmed_by": rule.confirmed_by if rule else None,
            "confirmed_at": rule.confirmed_at.isoformat() if rule and rule.confirmed_at else None,
            "rejected": rejected, "rejected_seeds": sorted(r["case_id"] for r in rejected if r["kind"] == "seed")}


def rejected_case_ids(task: str, lc: str | None = None, *, url: str | None = None,
                      confirmed_only: bool = True) -> set[str]:
    """Ids of the cases reviewers rejected in a suite task (optionally one LC)."""
    return {case_id for case_id, _ in rejected_keys(task, lc, url=url, confirmed_only=confirmed_only)}


class RejectionFilter:
    """``filter(case)`` is True for a case a run must leave out: rejected itself, or an expansion of a rejected seed.

    Seeds are matched by id and text hash; an expansion follows its seed when the seed came first (runs give a seed
    and its expansions together), else the seed's id among the rejected seeds decides. ``default_task`` is the
    run's task for cases without a ``task`` field (None: every suite task with a confirmed write-back).
    """

    def __init__(self, *, url: str | None = None, default_task: str | None = None) -> None:
        self.url = url
        self.default_task = default_task
        self.keys: dict[str, set[tuple[str, str]]] = {}
        self.label_only: dict[str, dict[tuple[str, str], Any]] = {}  # task → key → the expectation rejected
        self.seen_seeds: dict[str, bool] = {}  # seed id → rejected
        self._confirmed: list[str] | None = None

    def _tasks(self, case: Any) -> list[str]:
        task = getattr(case, "task", None) or self.default_task
        if task:
            return [task]
        if self._confirmed is None:
            store = _store_if_exists(self.url)
            self._confirmed = sorted({t.suite_task for t in store.tasks()
                                      if store.writeback_rule(t.suite_task) is not None}) if store else []
        return self._confirmed

    def _keys(self, task: str) -> set[tuple[str, str]]:
        if task not in self.keys:
            self.keys[task] = rejected_keys(task, url=self.url)
        return self.keys[task]

    def _still_rejected(self, case: Any, key: tuple[str, str]) -> bool:
        """A case rejected on its expected label alone is not, once its LC expects another label."""
        for task in self._tasks(case):
            if task not in self.label_only:
                self.label_only[task] = label_rejections(task, url=self.url)
            if key in self.label_only[task]:
                return same_expectation(self.label_only[task][key], getattr(case, "expected", None))
        return True

    def __call__(self, case: Any) -> bool:
        keys: set[tuple[str, str]] = set().union(*(self._keys(t) for t in self._tasks(case)))
        key = (case.case_id, hash_text(case.text))
        if case.kind == "seed":
            rejected = bool(keys) and key in keys and self._still_rejected(case, key)
            self.seen_seeds[case.seed_id] = rejected
            return rejected
        if not keys:
            return False
        if key in keys:
            return self._still_rejected(case, key)
        if case.seed_id in self.seen_seeds:
            return self.seen_seeds[case.seed_id]
        return any(self._still_rejected(case, seed) for seed in keys if seed[0] == case.seed_id)


def drop_rejected(cases: Sequence[Any], *, url: str | None = None,
                  default_task: str | None = None) -> tuple[list[Any], int]:
    """The cases without the rejected ones and the expansions of rejected seeds, and how many were dropped."""
    from alict_core.runner.run import drop_excluded

    return drop_excluded(cases, RejectionFilter(url=url, default_task=default_task))


def lc_validity(task: str, lcs: Iterable[str] | None = None, *, url: str | None = None) -> dict[str, dict[str, Any]]:
    """Per LC: reviewed cases, rejected cases, confirmed share (1 − rejected / reviewed) and the paper's metrics."""
    store = _store_if_exists(url)
    if store is None:
        return {}
    rows = store.judgements(suite_task=task)
    wanted = set(lcs) if lcs is not None else None
    rule = active_min_agreeing(store, task) or DEFAULT_MIN_AGREEING
    verdicts = case_verdicts(rows, task, rule)
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
