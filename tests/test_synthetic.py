"""Synthetic suites (``alict_core.suites.synthetic``): distinct, deterministic cases that keep their LC's outcome."""

from __future__ import annotations

import itertools

import pytest

from alict_core.common.errors import AlictError
from alict_core.suites.synthetic import base_cases, iter_synthetic_cases


@pytest.fixture(scope="module")
def lc01_bases():
    return base_cases("sentiment", "sentiment-lc01", seed=0)


def test_cases_are_distinct_deterministic_and_keep_the_base_outcome(lc01_bases):
    n = len(lc01_bases) * 30  # wraps round the bases and the frames more than once
    cases = list(iter_synthetic_cases("sentiment", "sentiment-lc01", n, seed=0, bases=lc01_bases))
    assert len(cases) == n
    assert len({c.text for c in cases}) == n and len({c.case_id for c in cases}) == n
    by_id = {b.case_id: b for b in lc01_bases}
    for case in cases[:: max(1, n // 200)]:
        base = by_id[case.meta["base_case"]]
        assert case.text == f"{case.meta['frame']} {base.text}"
        assert case.expected == base.expected == {"kind": "label", "labels": ["neutral"], "tolerance": None}
        assert case.lc_id == "sentiment-lc01" and case.kind == "seed" and case.seed_id == case.case_id
    again = list(iter_synthetic_cases("sentiment", "sentiment-lc01", 50, seed=0))
    assert [c.to_dict() for c in again] == [c.to_dict() for c in cases[:50]]
    other = [c.text for c in iter_synthetic_cases("sentiment", "sentiment-lc01", 50, seed=1)]
    assert other != [c.text for c in cases[:50]]


def test_streams_without_building_the_whole_suite(lc01_bases):
    big = iter_synthetic_cases("sentiment", "sentiment-lc01", 50_000_000, bases=lc01_bases)
    last = list(itertools.islice(big, 1000))[-1]
    assert last.case_id.endswith("00000999")


def test_inv_cases_frame_their_variants_too():
    bases = base_cases("sentiment", "sentiment-lc11")
    assert bases[0].test_type == "INV"
    case = next(c for c in iter_synthetic_cases("sentiment", "sentiment-lc11", 40, bases=bases) if c.variants)
    frame = case.meta["frame"]
    assert case.variants and all(v.startswith(frame + " ") for v in case.variants)
    assert case.text not in case.variants


@pytest.mark.parametrize("n", [-1, 1.5, True])
def test_bad_count_is_one_message(n):
    with pytest.raises(AlictError, match="synthetic case count"):
        next(iter_synthetic_cases("sentiment", "sentiment-lc01", n, bases=[]))
