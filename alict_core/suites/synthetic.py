"""Synthetic suites of any size from one LC's seeds, for scale tests and benchmarks (never for model quality).

``iter_synthetic_cases(task, lc_id, n, seed)`` finds the LC's seeds with its own rule set (every candidate,
``find_seeds(max_seeds=None)``), turns them into test cases as a run would (``build_cases``: INV variants,
expected outcomes) and then streams ``n`` distinct cases: case ``i`` is base case ``i mod S`` quoted under a
neutral attribution frame ("Review 12:", "Viewer 7 wrote:" …) whose number grows with ``i``, so every text is
distinct, reads as plausible, and keeps its base case's expected outcome (the frame carries no sentiment or
hate; it is applied to the variants of INV / DIR cases too). Deterministic in ``seed``; memory holds the base
cases only, whatever ``n``.
"""

from __future__ import annotations

import random
from typing import Iterator

from alict_core.cases.testcases import TestCase
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json

# neutral attributions: they name who said the text, never how they felt
FRAMES = (
    "Review {k}:", "Comment {k}:", "Post {k}:", "Entry {k}:", "Quote {k}:", "Message {k}:",
    "User {k} wrote:", "Reader {k} wrote:", "Viewer {k} said:", "Member {k} posted:", "Guest {k} wrote:",
    "Reply {k}:",
)
MAX_CASES = 100_000_000


def base_cases(task: str, lc_id: str, seed: int = 0) -> list[TestCase]:
    """Every seed of ``lc_id`` as a test case (in an order shuffled by ``seed``)."""
    from alict_core.cases.testcases import build_cases
    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec.loader import get_spec
    from alict_core.seeds import find_seeds

    spec = get_spec(task, lc_id)
    seeds = find_seeds(spec, load_corpus(task), max_seeds=None).seeds
    cases = build_cases([s.to_dict() for s in seeds])
    if not cases:
        raise AlictError(f"{lc_id}: the LC's rules give no seeds on the {task} corpus; pick another LC")
    random.Random(hash_json(["synthetic", lc_id, seed])).shuffle(cases)
    return cases


def frame_text(frame: str, k: int, text: str) -> str:
    """``text`` under attribution ``frame`` number ``k``."""
    return f"{frame.format(k=k)} {text}"


def iter_synthetic_cases(task: str, lc_id: str, n: int, seed: int = 0,
                         bases: list[TestCase] | None = None) -> Iterator[TestCase]:
    """``n`` distinct synthetic cases of ``lc_id`` (deterministic in ``seed``), one at a time.

    Each case is its own seed (``kind`` "seed", ``seed_id`` = ``case_id``) so a sharded run may cut anywhere;
    ``meta`` names the base case and frame. ``bases``: the base cases when already computed (``base_cases``).
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_CASES:
        raise AlictError(f"synthetic case count must be a whole number in [0, {MAX_CASES}], got {n!r}")
    bases = base_cases(task, lc_id, seed) if bases is None else bases
    frames = list(FRAMES)
    random.Random(hash_json(["synthetic-frames", lc_id, seed])).shuffle(frames)
    n_bases, n_frames = len(bases), len(frames)
    for i in range(n):
        base = bases[i % n_bases]
        rest = i // n_bases
        frame, k = frames[rest % n_frames], rest // n_frames + 1
        case_id = f"{lc_id}-syn{seed}-{i:08d}"
        yield TestCase(
            case_id=case_id, lc_id=base.lc_id, kind="seed", seed_id=case_id, text=frame_text(frame, k, base.text),
            expected=base.expected, test_type=base.test_type, capability=base.capability, task=base.task,
            variants=tuple(frame_text(frame, k, v) for v in base.variants), description=base.description,
            meta={"synthetic": True, "base_case": base.case_id, "frame": frame.format(k=k)},
        )
