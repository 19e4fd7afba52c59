"""The one dedupe-and-batch helper."""

from alict_core.common.batching import batches, distinct


def test_distinct_keeps_first_seen_order_and_skips_done_items():
    assert distinct(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
    assert distinct(["b", "a", "b", "c"], skip={"a"}.__contains__) == ["b", "c"]


def test_batches_cover_every_item_once_in_order():
    assert [list(b) for b in batches(list("abcde"), 2)] == [["a", "b"], ["c", "d"], ["e"]]
    assert [list(b) for b in batches(list("ab"), 0)] == [["a"], ["b"]]
    assert list(batches([], 3)) == []
