"""Stanford Sentiment Treebank: sentences and every labelled phrase, 3-class labels from tree nodes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from alict_core.data.checked import reads_data
from alict_core.data.files import data_file
from alict_core.data.records import LabelledText

SPLITS = ("train", "dev", "test")
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def label_of_node(score: int) -> str:
    """0-1 negative, 2 neutral, 3-4 positive (equivalently score <= .4 / (.4, .6] / > .6)."""
    if score <= 1:
        return "negative"
    if score == 2:
        return "neutral"
    return "positive"


@dataclass
class Node:
    score: int
    children: list["Node"]
    word: str | None = None

    def leaves(self) -> list[str]:
        if self.word is not None:
            return [self.word]
        return [w for child in self.children for w in child.leaves()]


def unescape_token(token: str) -> str:
    token = _UNESCAPE.get(token, token)
    return token.replace("\\/", "/").replace("\\*", "*")


def parse_tree(line: str) -> Node:
    """Parse one SST bracketed tree such as ``(3 (2 The) (2 Rock))``."""
    pos = 0
    text = line.strip()

    def parse() -> Node:
        nonlocal pos
        if text[pos:pos + 1] != "(":  # a damaged line: one clean message (reads_data), never an AssertionError
            raise ValueError(f"expected '(' at {pos}")
        pos += 1
        end = text.index(" ", pos)
        score = int(text[pos:end])
        pos = end + 1
        if text[pos] != "(":
            close = text.index(")", pos)
            word = unescape_token(text[pos:close])
            if not word.strip():  # `(2 )`: an empty token failed deep in the parser (spaCy E031, exit 3)
                raise ValueError(f"empty word at {pos}")
            pos = close + 1
            return Node(score, [], word)
        children = []
        while text[pos:pos + 1] == "(":
            children.append(parse())
            while pos < len(text) and text[pos] == " ":
                pos += 1
        if text[pos:pos + 1] != ")":
            raise ValueError(f"expected ')' at {pos}")
        pos += 1
        return Node(score, children)

    return parse()


def _iter_phrases(node: Node):
    yield node
    for child in node.children:
        yield from _iter_phrases(child)


@lru_cache(maxsize=4)
@reads_data("sst/<split>.txt")
def _load_split(path: Path) -> list[Node]:
    with open(path, encoding="utf-8") as handle:
        return [parse_tree(line) for line in handle if line.strip()]


def load_sst_sentences(splits: tuple[str, ...] = SPLITS) -> list[LabelledText]:
    """Every SST sentence with its root label; ids are ``sst-<split>-<index>``."""
    rows = []
    for split in splits:
        for index, tree in enumerate(_load_split(data_file(f"sst/{split}.txt"))):
            tokens = tuple(tree.leaves())
            label = label_of_node(tree.score)
            rows.append(LabelledText(f"sst-{split}-{index}", " ".join(tokens), label, split, tokens))
    return rows


def load_sst_phrases(splits: tuple[str, ...] = SPLITS) -> list[LabelledText]:
    """Every distinct labelled phrase of the SST trees (first occurrence wins), with its label."""
    seen: set[str] = set()
    rows = []
    for split in splits:
        for index, tree in enumerate(_load_split(data_file(f"sst/{split}.txt"))):
            for number, node in enumerate(_iter_phrases(tree)):
                tokens = tuple(node.leaves())
                text = " ".join(tokens)
                if text in seen:
                    continue
                seen.add(text)
                label = label_of_node(node.score)
                rows.append(LabelledText(f"sst-{split}-{index}-p{number}", text, label, split, tokens))
    return rows
