"""The reference CFG: phrasal productions of the Penn Treebank sample with P(rhs | lhs)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nltk

from alict_core.common import config
from alict_core.common.jsonl import read_json, write_json
from alict_core.parsing import treebank
from alict_core.parsing.trees import is_preterminal, productions, unwrap_root

GRAMMAR_VERSION = 1
# POS tags of punctuation and symbols: not word slots a masked LM should fill.
NON_WORD_TAGS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "#", "$", "SYM", "LS", "-NONE-"})


def is_subsequence(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """True when ``short`` occurs in ``long`` in order (not necessarily contiguously)."""
    it = iter(long)
    return all(symbol in it for symbol in short)


@dataclass
class ReferenceGrammar:
    """Production counts by LHS; ``pos_tags`` are the word-level (preterminal) symbols."""

    counts: dict[str, dict[tuple[str, ...], int]]
    pos_tags: frozenset[str] = field(default_factory=frozenset)
    source: str = ""
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # query results

    @classmethod
    def from_trees(cls, trees: list[nltk.Tree], source: str = "") -> "ReferenceGrammar":
        counts: dict[str, Counter] = defaultdict(Counter)
        tags: set[str] = set()
        for tree in trees:
            root = unwrap_root(tree)
            for lhs, rhs in productions(root):
                counts[lhs][rhs] += 1
            tags.update(node.label() for node in root.subtrees(is_preterminal))
        return cls({lhs: dict(c) for lhs, c in counts.items()}, frozenset(tags), source)

    # -- queries -----------------------------------------------------------------------------
    def total(self, lhs: str) -> int:
        return sum(self.counts.get(lhs, {}).values())

    def probability(self, lhs: str, rhs: tuple[str, ...]) -> float:
        """P(rhs | lhs) by relative frequency (0 when unseen)."""
        total = self.total(lhs)
        return self.counts.get(lhs, {}).get(tuple(rhs), 0) / total if total else 0.0

    def rules(self, lhs: str) -> list[tuple[tuple[str, ...], float]]:
        """All productions of ``lhs`` with probabilities, most probable first (ties by RHS)."""
        key = ("rules", lhs)
        if key not in self._memo:
            total = self.total(lhs)
            rows = [(rhs, n / total) for rhs, n in self.counts.get(lhs, {}).items()]
            self._memo[key] = sorted(rows, key=lambda r: (-r[1], r[0]))
        return list(self._memo[key])

    def is_word_slot(self, symbol: str) -> bool:
        """A word-level POS tag a masked LM can fill (not punctuation or a symbol tag)."""
        return symbol in self.pos_tags and symbol not in NON_WORD_TAGS

    def superstructures(
        self, lhs: str, rhs: tuple[str, ...], top_k: int = 5, pos_only: bool = False
    ) -> list[tuple[tuple[str, ...], float]]:
        """Reference productions ``lhs → R`` where ``rhs`` is a proper ordered subsequence of ``R``.

        Ranked by probability, the ``top_k`` best. With ``pos_only`` only productions whose extra
        symbols are all fillable word-level POS tags (``is_word_slot``) are considered, before top-k.
        """
        rhs = tuple(rhs)
        key = ("super", lhs, rhs, top_k, pos_only)
        if key not in self._memo:
            self._memo[key] = self._superstructures(lhs, rhs, top_k, pos_only)
        return list(self._memo[key])

    def _superstructures(self, lhs: str, rhs: tuple[str, ...], top_k: int, pos_only: bool):
        found = []
        for candidate, prob in self.rules(lhs):
            if len(candidate) <= len(rhs) or not is_subsequence(rhs, candidate):
                continue
            if pos_only and not all(self.is_word_slot(s) for s in extra_symbols(rhs, candidate)):
                continue
            found.append((candidate, prob))
        return found[:top_k] if top_k else found

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "version": GRAMMAR_VERSION,
            "source": self.source,
            "pos_tags": sorted(self.pos_tags),
            "productions": [
                {"lhs": lhs, "rhs": list(rhs), "count": n}
                for lhs in sorted(self.counts)
                for rhs, n in sorted(self.counts[lhs].items())
            ],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "ReferenceGrammar":
        counts: dict[str, dict[tuple[str, ...], int]] = defaultdict(dict)
        for row in data["productions"]:
            counts[row["lhs"]][tuple(row["rhs"])] = int(row["count"])
        return cls(dict(counts), frozenset(data.get("pos_tags", [])), data.get("source", ""))

    def __len__(self) -> int:
        return sum(len(v) for v in self.counts.values())


def align(rhs: tuple[str, ...], reference: tuple[str, ...]) -> list[int]:
    """Leftmost alignment: for each seed symbol, its index in ``reference`` (``rhs`` must be a subsequence)."""
    out: list[int] = []
    j = 0
    for symbol in rhs:
        while reference[j] != symbol:
            j += 1
        out.append(j)
        j += 1
    return out


def extra_symbols(rhs: tuple[str, ...], reference: tuple[str, ...]) -> list[str]:
    matched = set(align(rhs, reference))
    return [s for i, s in enumerate(reference) if i not in matched]


def grammar_path() -> Path:
    return config.artefact_dir("grammar") / f"reference-v{GRAMMAR_VERSION}-{treebank.treebank_hash()}.json"


_CACHED: ReferenceGrammar | None = None


def load_reference_grammar(rebuild: bool = False) -> ReferenceGrammar:
    """The reference CFG from every PTB-sample sentence, built once and cached as JSON (keyed by treebank hash)."""
    global _CACHED
    if _CACHED is not None and not rebuild:
        return _CACHED
    path = grammar_path()
    from alict_core.common.manifest import load_checked, save_checked

    key = path.stem
    grammar = None if rebuild else load_checked(path, "grammar", key,
                                                lambda p: ReferenceGrammar.from_dict(read_json(p)))
    if grammar is None:
        grammar = ReferenceGrammar.from_trees(treebank.load_split(None), source=f"treebank {treebank.treebank_hash()}")
        data = grammar.to_dict()
        save_checked(path, "grammar", key, len(grammar), lambda tmp: write_json(tmp, data))
    _CACHED = grammar
    return grammar

