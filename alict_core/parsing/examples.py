"""benepar inputs and outputs: PTB token lists → benepar examples → trees (shared by parsing and training)."""

from __future__ import annotations

import dataclasses
from typing import Any

import nltk


@dataclasses.dataclass
class Example:
    """One sentence for benepar (its BaseInputExample interface): words, spacing and maybe a gold tree."""

    words: list[str]
    space_after: list[bool]
    tree: nltk.Tree | None = None
    escaped: list[str] | None = None
    tags: list[str] | None = None

    def leaves(self) -> list[str]:
        return self.tree.leaves() if self.tree is not None else list(self.escaped or self.words)

    def pos(self) -> list[tuple[str, str]]:
        if self.tree is not None:
            return self.tree.pos()
        return [(w, t) for w, t in zip(self.leaves(), self.tags or ["UNK"] * len(self.words), strict=True)]


def example_from_tokens(tokens: list[str], tree: nltk.Tree | None = None) -> Example:
    """An Example from PTB-style tokens (``-LRB-`` unescaped for the network, kept in the output)."""
    from benepar.ptb_unescape import guess_space_after, ptb_unescape

    words = [w if w.strip() and not any(c.isspace() for c in w) else "_" for w in ptb_unescape(tokens)]
    words = [w.replace(" ", "_") for w in words]
    return Example(words=words, space_after=guess_space_after(tokens), tree=tree, escaped=list(tokens))


def examples_from_trees(trees: list[nltk.Tree]) -> list[Example]:
    return [example_from_tokens(t.leaves(), t) for t in trees]


def parse_examples(parser: Any, examples: list[Example], batch_tokens: int = 600) -> list[nltk.Tree]:
    """Parse Examples with a benepar ChartParser; output trees have a TOP root and predicted POS tags."""
    outputs = parser.parse(examples, return_compressed=True, subbatch_max_tokens=batch_tokens)
    trees = []
    for example, output in zip(examples, outputs, strict=True):
        leaves = list(example.escaped or example.words)
        trees.append(output.to_tree(leaves, parser.decoder.label_from_index, parser.tag_from_index))
    return trees
