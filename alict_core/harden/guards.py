"""Guards of hardening: which LCs of a run can be trained on and tested, and test splits big enough to show a fix.

One place for the rules the CLI (``harden export/train/fix``) and the app's Harden page share:

* an LC is **ready** when some of its cases have a label to train towards (MFT or one-of expectations; not-label,
  INV and DIR cases cannot be trained on), its test split holds at least ``MIN_TEST_CASES`` cases, and the model
  fails at least ``MIN_FAIL_RATE`` of its cases in the run;
* training refuses an LC whose test split is under ``MIN_TEST_CASES`` (:func:`check_test_split`), naming the LC,
  its test split's size and the minimum.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from alict_core.common.errors import AlictError

MIN_TEST_CASES = 10  # per trained LC: fewer cannot show a fix (10 cases: a 95 % interval about ±30 points wide)
MIN_FAIL_RATE = 0.2  # LCs the model fails less often than this are not preselected


def minimum_test_cases(given: int | None = None) -> int:
    """``given``, else the rule's ``MIN_TEST_CASES`` (read when called)."""
    return MIN_TEST_CASES if given is None else int(given)


def short_test_splits(counts: Mapping[str, Mapping[str, int]], lcs: Sequence[str],
                      minimum: int | None = None) -> list[tuple[str, int]]:
    """(LC, test cases) of each LC in ``lcs`` whose test split (``counts["test"]``) is under the minimum."""
    need = minimum_test_cases(minimum)
    test = counts.get("test") or {}
    return [(lc, int(test.get(lc, 0))) for lc in lcs if int(test.get(lc, 0)) < need]


def split_size_message(short: Sequence[tuple[str, int]], minimum: int | None = None) -> str:
    need = minimum_test_cases(minimum)
    sizes = "; ".join(f"the test split of {lc} holds {n} case{'s' if n != 1 else ''}" for lc, n in short)
    return (f"{sizes}, under the minimum of {need} per trained LC (too few to show a fix): run more seeds of "
            f"{'this LC' if len(short) == 1 else 'these LCs'}, give the test split a larger share (split), or leave "
            f"{'it' if len(short) == 1 else 'them'} out")


def check_test_split(counts: Mapping[str, Mapping[str, int]], lcs: Sequence[str], minimum: int | None = None) -> None:
    """Refuse (AlictError) when a trained LC's test split is under the minimum; the message names each such LC,
    its test split's size and the minimum."""
    short = short_test_splits(counts, lcs, minimum)
    if short:
        raise AlictError(split_size_message(short, minimum))


@dataclass(frozen=True)
class LcReadiness:
    """Whether an LC of a run can be hardened for one model, and why not."""

    lc_id: str
    n_cases: int
    fail_rate: float
    trainable: int  # cases of its training split with a label to train towards
    test_cases: int  # cases of its test split
    ready: bool
    reason: str  # "" when ready

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lc_readiness(rows: Sequence[Mapping[str, Any]], model: str, parts: Mapping[str, Sequence[Mapping[str, Any]]],
                 *, min_test_cases: int | None = None, min_fail_rate: float | None = None) -> list[LcReadiness]:
    """Readiness of every LC in ``rows`` (a run's cases with ``failed_by``) for ``model``, given the export split
    ``parts`` of those rows; sorted by fail rate, highest first."""
    need = minimum_test_cases(min_test_cases)
    fail_floor = MIN_FAIL_RATE if min_fail_rate is None else min_fail_rate
    out = []
    for lc in dict.fromkeys(str(r["lc_id"]) for r in rows):
        mine = [r for r in rows if r["lc_id"] == lc]
        failed = sum(bool((r.get("failed_by") or {}).get(model)) for r in mine)
        fail_rate = failed / len(mine) if mine else 0.0
        trainable = sum(1 for r in parts.get("train", []) if r["lc_id"] == lc and r.get("allowed_labels"))
        test = sum(1 for r in parts.get("test", []) if r["lc_id"] == lc)
        if not any(r.get("allowed_labels") for split in parts.values() for r in split if r["lc_id"] == lc):
            reason = "its expectation cannot be trained on (not-label, INV or DIR)"
        elif not trainable:
            reason = "no case to train on in its training split (its seeds all went to testing)"
        elif test < need:
            reason = f"its test split holds {test} case{'s' if test != 1 else ''}, under the minimum of {need}"
        elif fail_rate < fail_floor:
            reason = f"the model fails only {fail_rate:.0%} of it (preselected from {fail_floor:.0%})"
        else:
            reason = ""
        out.append(LcReadiness(lc, len(mine), fail_rate, trainable, test, not reason, reason))
    return sorted(out, key=lambda r: (-r.fail_rate, r.lc_id))


def preselected(readiness: Sequence[LcReadiness], limit: int = 3) -> list[str]:
    """The ready LCs the model fails most (at most ``limit``)."""
    return [r.lc_id for r in readiness if r.ready][:limit]
