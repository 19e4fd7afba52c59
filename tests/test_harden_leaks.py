"""Leak check on the real corpora: the LCs the seed-level split leaked on (issue 28) split leak-free now."""

from __future__ import annotations

import pytest

from alict_core.cases.testcases import build_cases
from alict_core.data.splits import source_split_lookup, task_splits
from alict_core.harden.export import corpus_test_membership, export_rows
from alict_core.harden.leaks import find_leaks
from alict_core.harden.split import SplitRatios, split_cases

LEAKING_LCS = {"sentiment": ("lc02", "lc06", "lc07", "lc08"), "hate_speech": ("lc03",)}


def _rows(task: str, corpus) -> list[dict]:
    """The cases (seeds, with the spec's sampling caps) of the LCs that leaked, as a run stores them."""
    from alict_core.lcspec.loader import get_spec
    from alict_core.seeds.engine import find_seeds

    seeds = [s.to_dict() for lc in LEAKING_LCS[task] for s in find_seeds(get_spec(task, lc), corpus).seeds]
    return [case.to_dict() for case in build_cases(seeds, variants_fn=lambda text: [])]


@pytest.mark.parametrize("task", ["sentiment", "hate_speech"])
def test_harden_split_of_the_real_corpora_leaks_nothing(task, request):
    corpus = request.getfixturevalue("sentiment_corpus" if task == "sentiment" else "hate_corpus")
    rows = _rows(task, corpus)
    assert all(row["meta"]["source_ids"] for row in rows)  # every seed records its corpus sentences
    split_of = source_split_lookup(task)
    test_texts = task_splits(task)["test"][0]

    def leaks(parts):
        return find_leaks(parts["train"], parts["test"], heldout_texts=test_texts, source_split=split_of)

    # the old split (by seed only) puts corpus test sentences and shared sources into training: the check sees it
    by_seed = split_cases(rows, seed=13, sources_of=lambda row: [], text_of=lambda row: row["case_id"])
    before = leaks(by_seed)
    assert before.equal_text > 0 and before.shared_source > 0
    parts = export_rows(rows, ratios=SplitRatios(), seed=13, held_out=corpus_test_membership(task))
    after = leaks(parts)
    assert (after.leaking, after.equal_text, after.shared_source) == (0, 0, 0), after.examples[:3]
    # and the split still trains on more than half of the cases and tests on a tenth or more (sentiment: 54 %; LC6
    # and LC8 reuse each corpus sentence in several seeds, so whole groups touching the corpus's test split go there)
    n = len(rows)
    assert len(parts["train"]) > 0.5 * n and len(parts["test"]) >= 0.1 * n
    print(f"{task}: {n} cases; seed-only split: {before.leaking} of {before.n_training} training texts leak "
          f"({before.equal_text} equal, {before.shared_source} share a source); grouped split: 0 of "
          f"{after.n_training}; train/validation/test {len(parts['train'])}/{len(parts['validation'])}/"
          f"{len(parts['test'])}")
