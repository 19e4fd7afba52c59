"""NLPLego assembly τ and mutation σ: derivation trees from a disassembled seed (paper §3.3, §4.2).

Level 0 is the template s0. Level i inserts adjunct b_i into every kept node of level i-1, in the
i-th slot: first b_i itself (so the tree always holds the chain s0 → … → seed), then mutations of
b_i where one non-stop content word (noun, verb, adjective, adverb) is replaced by (a) a WordNet
synonym in the same number / tense / degree, or (b) a masked-LM fill of that word in the context of
the parent sentence. Mutations that change the word's part of speech or trip the validity checks
are dropped. ``LegoSettings`` bounds the tree (children per node, nodes per tree).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from alict_core.common.hashing import hash_json
from alict_core.lego.checks import is_valid
from alict_core.lego.disassemble import NOT_ADJUNCT_WORDS, Adjunct, Disassembly
from alict_core.lego.lexicon import has_pos, inflected_synonyms
from alict_core.lego.settings import LegoSettings
from alict_core.mlm.suggesters import MASK

CONTENT_POS = ("NOUN", "VERB", "ADJ", "ADV")


@dataclass(frozen=True)
class Mutation:
    """How an inserted adjunct differs from the seed's: ``kind`` original | synonym | mlm."""

    kind: str = "original"
    token: int = -1
    source: str = ""
    word: str = ""


@dataclass
class Node:
    """One sentence of a derivation tree; ``parent`` is None only for the root (the template)."""

    id: str
    parent: str | None
    level: int
    text: str
    adjunct: int  # index of the adjunct inserted at this node (0 at the root)
    inserted_text: str  # that adjunct as inserted (mutated), "" at the root
    inserted: tuple[int, ...]
    replacements: dict[int, str] = field(default_factory=dict)
    mutation: Mutation = field(default_factory=Mutation)

    @property
    def original(self) -> bool:
        """On the chain s0 → seed: every inserted adjunct unmutated."""
        return not self.replacements

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["inserted"] = list(self.inserted)
        out["replacements"] = {str(k): v for k, v in self.replacements.items()}
        return out

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "Node":
        return cls(
            row["id"],
            row["parent"],
            int(row["level"]),
            row["text"],
            int(row["adjunct"]),
            row["inserted_text"],
            tuple(row["inserted"]),
            {int(k): v for k, v in (row.get("replacements") or {}).items()},
            Mutation(**(row.get("mutation") or {})),
        )


@dataclass
class DerivationTree:
    """The seed, its disassembly and every node (root first, level by level)."""

    seed_id: str
    seed: str
    disassembly: dict[str, Any]
    nodes: list[Node]

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def chain(self) -> list[Node]:
        """The unmutated path s0 → s1 → … → seed."""
        return [n for n in self.nodes if n.original]

    def edges(self) -> list[tuple[Node, Node]]:
        index = self.by_id()
        return [(index[n.parent], n) for n in self.nodes if n.parent is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed_id": self.seed_id,
            "seed": self.seed,
            "disassembly": self.disassembly,
            "nodes": [n.to_dict() for n in self.nodes],
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "DerivationTree":
        return cls(row["seed_id"], row["seed"], row["disassembly"], [Node.from_dict(n) for n in row["nodes"]])


def content_tokens(dis: Disassembly, adjunct: Adjunct) -> list[int]:
    """Positions of the adjunct's mutable words: non-stop nouns, verbs, adjectives, adverbs."""
    out = []
    for i in range(adjunct.start, adjunct.end):
        token = dis.tokens[i]
        in_compound = (i > 0 and dis.tokens[i - 1].text == "-") or (
            i + 1 < len(dis.tokens) and dis.tokens[i + 1].text == "-"
        )
        if (
            token.pos in CONTENT_POS
            and not token.is_stop
            and token.text.isalpha()
            and token.text.lower() not in NOT_ADJUNCT_WORDS
            and not in_compound  # "self-congratulatory": one word, not ours to split
        ):
            out.append(i)
    return out


def _mlm_words(suggestions: Sequence[tuple[str, float]], original: str, neighbours: set[str]) -> list[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    out = []
    for word, _ in suggestions:
        low = word.lower()
        if low == original.lower() or low in STOP_WORDS or low in neighbours or not word.isalpha():
            continue
        out.append(word[:1].upper() + word[1:] if original[:1].isupper() else word)
    return out


class Assembler:
    """Builds derivation trees; ``suggester`` (masked LM) and ``tagger`` (spaCy, POS check) are optional."""

    def __init__(
        self, settings: LegoSettings | None = None, *, suggester: Any | None = None, tagger: Any | None = None
    ) -> None:
        self.settings = settings or LegoSettings()
        self.suggester = suggester if self.settings.mlm_top_k > 0 else None
        self.tagger = tagger

    def _synonym_mutations(self, dis: Disassembly, adjunct: Adjunct, words: list[int]) -> list[Mutation]:
        out = []
        for i in words:
            token = dis.tokens[i]
            for word in inflected_synonyms(
                token.text, token.lemma, token.pos, token.tag, limit=self.settings.synonyms_per_word
            ):
                out.append(Mutation("synonym", i, token.text, word))
        return out

    def build(self, dis: Disassembly, seed_id: str | None = None) -> DerivationTree:
        return self.build_many([dis], [seed_id])[0]

    def build_many(
        self, disassemblies: Sequence[Disassembly], seed_ids: Sequence[str | None] | None = None
    ) -> list[DerivationTree]:
        """One tree per disassembly; the masked-LM queries of a level are batched across seeds."""
        ids = list(seed_ids) if seed_ids is not None else [None] * len(disassemblies)
        trees: list[DerivationTree] = []
        frontiers: list[list[Node]] = []
        rngs: list[random.Random] = []
        for dis, sid in zip(disassemblies, ids, strict=True):
            tree_id = sid or f"lego-{hash_json(dis.text, 10)}"
            root = Node(f"{tree_id}-n0", None, 0, dis.template, 0, "", ())
            trees.append(DerivationTree(tree_id, dis.text, dis.to_dict(), [root]))
            frontiers.append([root])
            rngs.append(random.Random(hash_json([self.settings.seed, dis.text])))
        depth = max((len(d.adjuncts) for d in disassemblies), default=0)
        for level in range(1, depth + 1):
            plans: list[_Plan] = []
            for s, dis in enumerate(disassemblies):
                if level > len(dis.adjuncts):
                    continue
                adjunct = dis.adjuncts[level - 1]
                words = content_tokens(dis, adjunct)
                rngs[s].shuffle(words)
                synonyms = self._synonym_mutations(dis, adjunct, words)
                # room for this level's new nodes beside the unmutated chain; parents past it are not expanded
                room = self.settings.max_nodes - len(trees[s].nodes) - (len(dis.adjuncts) - level) - 1
                for parent in frontiers[s]:  # the chain's node comes first
                    if room <= 0 and not parent.original:
                        break
                    mutable = room > 0
                    plans.append(_Plan(s, dis, parent, adjunct, words if mutable else [], synonyms if mutable else []))
                    room -= self.settings.breadth - 1 if parent.original else self.settings.breadth
            self._fill(plans)
            next_frontiers: list[list[Node]] = [[] for _ in disassemblies]
            for plan in plans:
                tree = trees[plan.seed]
                reserve = len(plan.dis.adjuncts) - level  # nodes kept for the rest of the unmutated chain
                for child in self._children(plan, tree, level):
                    if child.original or len(tree.nodes) + reserve < self.settings.max_nodes:
                        child.id = f"{tree.seed_id}-n{len(tree.nodes)}"
                        tree.nodes.append(child)
                        next_frontiers[plan.seed].append(child)
            frontiers = [new or old for new, old in zip(next_frontiers, frontiers, strict=True)]
        return trees

    def _fill(self, plans: list["_Plan"]) -> None:
        """Masked-LM fills of every plan's content words in its parent's context: one batched call per level."""
        if self.suggester is None:
            return
        queries: list[tuple[_Plan, int, str]] = []
        for plan in plans:
            inserted = (*plan.parent.inserted, plan.adjunct.index)
            for token in plan.words:
                masked = plan.dis.render(inserted, {**plan.parent.replacements, token: MASK})
                queries.append((plan, token, masked))
        if not queries:
            return
        results = self.suggester.suggest([q[2] for q in queries], top_k=self.settings.mlm_top_k)
        for (plan, token, _), per_mask in zip(queries, results, strict=True):
            if per_mask:
                tokens = plan.dis.tokens
                neighbours = {tokens[j].text.lower() for j in (token - 1, token + 1) if 0 <= j < len(tokens)}
                plan.fills.extend(
                    Mutation("mlm", token, tokens[token].text, w)
                    for w in _mlm_words(per_mask[0], tokens[token].text, neighbours)
                    if has_pos(w, tokens[token].pos)
                )

    def _children(self, plan: "_Plan", tree: DerivationTree, level: int) -> list[Node]:
        """The original insertion, then up to ``breadth - 1`` valid, distinct mutations (synonym / fill alternating)."""
        dis, parent, adjunct = plan.dis, plan.parent, plan.adjunct
        inserted = (*parent.inserted, adjunct.index)

        def node(mutation: Mutation) -> Node:
            replacements = dict(parent.replacements)
            if mutation.kind != "original":
                replacements[mutation.token] = mutation.word
            return Node(
                "",
                parent.id,
                level,
                dis.render(inserted, replacements),
                adjunct.index,
                dis.adjunct_text(adjunct, replacements),
                inserted,
                replacements,
                mutation,
            )

        first = node(Mutation())
        seen = {n.text for n in tree.nodes} | {first.text}
        mutated: list[Node] = []
        for pair in _interleave(plan.synonyms, plan.fills):
            for mutation in pair:
                child = node(mutation)
                if child.text not in seen and is_valid(child.text):
                    seen.add(child.text)
                    mutated.append(child)
            if len(mutated) >= 3 * self.settings.breadth:
                break
        return [first, *self._same_pos(dis, mutated)[: self.settings.breadth - 1]]

    def _same_pos(self, dis: Disassembly, nodes: list[Node]) -> list[Node]:
        """Keep mutations whose new word is tagged with the replaced word's part of speech (and, for nouns and
        verbs, its Penn tag: number, tense)."""
        if self.tagger is None or not nodes:
            return nodes
        kept = []
        for child, doc in zip(nodes, self.tagger.pipe([n.text for n in nodes]), strict=True):
            original = dis.tokens[child.mutation.token]
            word = child.mutation.word.lower()
            same_tag = original.pos in ("NOUN", "VERB")  # number of nouns, tense of verbs
            if any(
                t.lower_ == word and t.pos_ == original.pos and (not same_tag or t.tag_ == original.tag) for t in doc
            ):
                kept.append(child)
        return kept


@dataclass
class _Plan:
    """One (parent, adjunct) expansion of a level: its content words, synonym mutations and masked-LM fills."""

    seed: int
    dis: Disassembly
    parent: Node
    adjunct: Adjunct
    words: list[int]
    synonyms: list[Mutation]
    fills: list[Mutation] = field(default_factory=list)


def _interleave(a: list[Mutation], b: list[Mutation]) -> list[tuple[Mutation, ...]]:
    out: list[tuple[Mutation, ...]] = []
    for i in range(max(len(a), len(b))):
        out.append(tuple(x[i] for x in (a, b) if i < len(x)))
    return out
