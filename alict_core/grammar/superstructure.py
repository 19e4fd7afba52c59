"""Algorithm 1 of ALiCT (TOSEM §3.2): masked sentences from reference-grammar superstructures.

For every phrasal node of a seed's parse, production ``A → α``: each reference production
``A → β`` (same LHS) in which α is an ordered subsequence of β is a superstructure. Its extra
symbols are inserted as ``[MASK]`` tokens at their positions between the node's children. Only
word-level POS slots are filled (a reference production with a phrasal or punctuation extra is
skipped); candidates are ranked by probability, the ``top_k`` kept, and at most ``max_masks``
masks are inserted per sentence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import nltk

from alict_core.common.errors import AlictError
from alict_core.grammar.reference import ReferenceGrammar, align
from alict_core.parsing.trees import ROOT_LABELS, is_preterminal, production_of, unwrap_root

MASK = "[MASK]"


@dataclass
class MaskedSentence:
    """One masked sentence from one (seed node, reference production) pair."""

    seed_id: str
    text: str
    tokens: list[str]
    mask_positions: list[int]
    mask_tags: list[str]
    seed_production: tuple[str, tuple[str, ...]]
    reference_production: tuple[str, tuple[str, ...]]
    reference_probability: float

    def to_dict(self) -> dict:
        data = asdict(self)
        data["seed_production"] = [self.seed_production[0], list(self.seed_production[1])]
        data["reference_production"] = [self.reference_production[0], list(self.reference_production[1])]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "MaskedSentence":
        return cls(
            seed_id=data["seed_id"],
            text=data["text"],
            tokens=list(data["tokens"]),
            mask_positions=list(data["mask_positions"]),
            mask_tags=list(data["mask_tags"]),
            seed_production=(data["seed_production"][0], tuple(data["seed_production"][1])),
            reference_production=(data["reference_production"][0], tuple(data["reference_production"][1])),
            reference_probability=float(data["reference_probability"]),
        )


def _nodes_with_spans(tree: nltk.Tree) -> list[tuple[nltk.Tree, list[tuple[int, int]]]]:
    """Phrasal nodes (pre-order) with the token span [start, end) of each of their children."""
    out: list[tuple[nltk.Tree, list[tuple[int, int]]]] = []

    def walk(node: nltk.Tree | str, start: int) -> int:
        if isinstance(node, str):
            return start + 1
        if is_preterminal(node):
            return start + 1
        spans: list[tuple[int, int]] = []
        entry = (node, spans)
        if node.label() not in ROOT_LABELS:
            out.append(entry)
        position = start
        for child in node:
            end = walk(child, position)
            spans.append((position, end))
            position = end
        return position

    walk(tree, 0)
    return out


def insert_masks(tokens: list[str], child_spans: list[tuple[int, int]], node_end: int,
                 seed_rhs: tuple[str, ...], reference_rhs: tuple[str, ...]) -> tuple[list[str], list[int], list[str]]:
    """Tokens with ``[MASK]`` at the extra symbols' positions; returns (tokens, mask positions, tags)."""
    matched = align(seed_rhs, reference_rhs)
    # gap g = before seed child g (g == len(children): after the last child)
    inserts: dict[int, list[str]] = {}
    next_child = 0
    for ref_index, symbol in enumerate(reference_rhs):
        if next_child < len(matched) and matched[next_child] == ref_index:
            next_child += 1
        else:
            inserts.setdefault(next_child, []).append(symbol)
    # token index of each gap
    positions: list[tuple[int, list[str]]] = []
    for gap, symbols in inserts.items():
        at = child_spans[gap][0] if gap < len(child_spans) else node_end
        positions.append((at, symbols))
    out: list[str] = []
    mask_positions: list[int] = []
    mask_tags: list[str] = []
    by_token = dict(positions)
    for i in range(len(tokens) + 1):
        for symbol in by_token.get(i, []):
            mask_positions.append(len(out))
            mask_tags.append(symbol)
            out.append(MASK)
        if i < len(tokens):
            out.append(tokens[i])
    return out, mask_positions, mask_tags


def masked_sentences(seed_id: str, tree: nltk.Tree, grammar: ReferenceGrammar, top_k: int = 5,
                     max_masks: int = 2) -> list[MaskedSentence]:
    """Algorithm 1: every masked sentence of a seed parse, best reference probability first per node.

    A masked text with the same expected tags reached from several nodes is kept once (the most probable).
    """
    if top_k < 1 or max_masks < 1:
        raise AlictError(f"masked_sentences: top_k ({top_k}) and max_masks ({max_masks}) must be at least 1")
    tree = unwrap_root(tree)
    tokens = list(tree.leaves())
    results: dict[tuple[str, tuple[str, ...]], MaskedSentence] = {}
    for node, child_spans in _nodes_with_spans(tree):
        lhs, rhs = production_of(node)
        node_end = child_spans[-1][1] if child_spans else 0
        taken = 0
        for reference_rhs, probability in grammar.superstructures(lhs, rhs, top_k=0, pos_only=True):
            if len(reference_rhs) - len(rhs) > max_masks:
                continue
            new_tokens, positions, tags = insert_masks(tokens, child_spans, node_end, rhs, reference_rhs)
            candidate = MaskedSentence(
                seed_id=seed_id,
                text=" ".join(new_tokens),
                tokens=new_tokens,
                mask_positions=positions,
                mask_tags=tags,
                seed_production=(lhs, rhs),
                reference_production=(lhs, reference_rhs),
                reference_probability=probability,
            )
            key = (candidate.text, tuple(tags))
            kept = results.get(key)
            if kept is None or probability > kept.reference_probability:
                results[key] = candidate
            taken += 1
            if taken >= top_k:
                break
    return list(results.values())
