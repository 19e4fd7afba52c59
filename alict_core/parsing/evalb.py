"""An evalb-style labelled bracket scorer (COLLINS.prm conventions).

Like ``evalb -p COLLINS.prm``: the root (TOP) and preterminals are not brackets;
punctuation tokens (gold POS ``, : . `` ''``) are deleted before span positions
are computed; ADVP and PRT are equivalent; brackets are matched as a multiset.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import nltk

PUNCT_TAGS = frozenset({"''", "``", ".", ":", ","})
ROOT_LABELS = frozenset({"TOP", "ROOT", ""})
EQUIVALENT = {"PRT": "ADVP"}


@dataclass
class BracketScore:
    """Corpus-level labelled bracket counts and derived figures."""

    matched: int = 0
    gold: int = 0
    predicted: int = 0
    tags_correct: int = 0
    tags_total: int = 0
    sentences: int = 0
    exact: int = 0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return self.matched / self.predicted if self.predicted else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def tag_accuracy(self) -> float:
        return self.tags_correct / self.tags_total if self.tags_total else 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            "labelled_f1": round(self.f1, 4),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "tag_accuracy": round(self.tag_accuracy, 4),
            "exact_match": round(self.exact / self.sentences, 4) if self.sentences else 0.0,
            "sentences": self.sentences,
            "gold_brackets": self.gold,
            "predicted_brackets": self.predicted,
        }


def _is_preterminal(tree: nltk.Tree) -> bool:
    return len(tree) == 1 and isinstance(tree[0], str)


def labelled_brackets(tree: nltk.Tree, keep: list[bool]) -> Counter:
    """Multiset of (label, start, end) over kept (non-punctuation) token positions."""
    brackets: Counter = Counter()
    # position of each token among kept tokens
    kept_index: list[int] = []
    count = 0
    for flag in keep:
        kept_index.append(count)
        count += int(flag)

    def walk(node: nltk.Tree, start: int, is_root: bool) -> int:
        if isinstance(node, str):
            return start + 1
        if _is_preterminal(node):
            return start + 1
        end = start
        for child in node:
            end = walk(child, end, False)
        label = EQUIVALENT.get(node.label(), node.label())
        if not is_root or label not in ROOT_LABELS:
            lo = kept_index[start] if start < len(kept_index) else count
            hi = kept_index[end - 1] + int(keep[end - 1]) if end > 0 else 0
            if hi > lo and not (is_root and label in ROOT_LABELS):
                brackets[(label, lo, hi)] += 1
        return end

    root = tree
    walk(root, 0, True)
    return brackets


def score_pair(gold: nltk.Tree, predicted: nltk.Tree, total: BracketScore) -> None:
    """Add one sentence's counts to ``total`` (trees must have the same leaves)."""
    gold_pos = gold.pos()
    pred_pos = predicted.pos()
    if [w for w, _ in gold_pos] != [w for w, _ in pred_pos]:
        raise ValueError(f"gold and predicted trees have different words: {gold.leaves()} vs {predicted.leaves()}")
    keep = [tag not in PUNCT_TAGS for _, tag in gold_pos]
    gold_b = labelled_brackets(_unwrap_root(gold), keep)
    pred_b = labelled_brackets(_unwrap_root(predicted), keep)
    matched = sum((gold_b & pred_b).values())
    total.matched += matched
    total.gold += sum(gold_b.values())
    total.predicted += sum(pred_b.values())
    total.sentences += 1
    total.exact += int(gold_b == pred_b)
    for (_, g_tag), (_, p_tag) in zip(gold_pos, pred_pos, strict=True):
        if g_tag not in PUNCT_TAGS:
            total.tags_total += 1
            total.tags_correct += int(g_tag == p_tag)


def _unwrap_root(tree: nltk.Tree) -> nltk.Tree:
    """Drop a TOP/ROOT wrapper so that both trees are scored from their first real bracket."""
    while isinstance(tree, nltk.Tree) and tree.label() in ROOT_LABELS and len(tree) == 1 and not _is_preterminal(tree):
        tree = tree[0]
    return tree


def evalb(gold_trees: list[nltk.Tree], predicted_trees: list[nltk.Tree]) -> BracketScore:
    """Corpus-level labelled bracket precision/recall/F1 and POS accuracy."""
    if len(gold_trees) != len(predicted_trees):
        raise ValueError(f"{len(gold_trees)} gold trees but {len(predicted_trees)} predicted trees")
    total = BracketScore()
    for gold, predicted in zip(gold_trees, predicted_trees, strict=True):
        score_pair(gold, predicted, total)
    return total
