"""Tree helpers: productions with function tags stripped, TOP unwrapping, bracket strings."""

from __future__ import annotations

from typing import Any

import nltk

from alict_core.parsing.treebank import strip_label

ROOT_LABELS = frozenset({"TOP", "ROOT", ""})

Production = tuple[str, tuple[str, ...]]


def is_preterminal(tree: nltk.Tree) -> bool:
    """A POS node: exactly one child, a word."""
    return isinstance(tree, nltk.Tree) and len(tree) == 1 and isinstance(tree[0], str)


def unwrap_root(tree: nltk.Tree) -> nltk.Tree:
    """Drop a TOP/ROOT wrapper with a single phrasal child (``(TOP (S ...))`` → ``(S ...)``)."""
    while (
        tree.label() in ROOT_LABELS and len(tree) == 1 and isinstance(tree[0], nltk.Tree) and not is_preterminal(tree)
    ):
        tree = tree[0]
    return tree


def production_of(node: nltk.Tree) -> Production:
    """The (lhs, rhs) of one phrasal node, function tags stripped."""
    rhs = tuple(strip_label(child.label()) if isinstance(child, nltk.Tree) else child for child in node)
    return strip_label(node.label()), rhs


def productions(tree: nltk.Tree) -> list[Production]:
    """Phrasal productions of a parse in pre-order (POS → word and TOP/ROOT productions excluded)."""
    out: list[Production] = []
    for node in tree.subtrees():
        if is_preterminal(node) or node.label() in ROOT_LABELS:
            continue
        out.append(production_of(node))
    return out


def to_json(tree: nltk.Tree | str) -> list | str:
    """A tree as nested JSON lists ``[label, child, ...]`` (safe for tokens like "(" or ")")."""
    if isinstance(tree, str):
        return tree
    return [tree.label(), *[to_json(child) for child in tree]]


def json_leaves(data: Any) -> list[str] | None:
    """The leaves of a tree in ``to_json`` form, or None when it is not one (a label that is no text, no label)."""
    if isinstance(data, str):
        return [data]
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        return None
    leaves: list[str] = []
    for child in data[1:]:
        below = json_leaves(child)
        if below is None:
            return None
        leaves.extend(below)
    return leaves


def from_json(data: list | str) -> nltk.Tree | str:
    """Inverse of ``to_json``."""
    if isinstance(data, str):
        return data
    return nltk.Tree(data[0], [from_json(child) for child in data[1:]])
