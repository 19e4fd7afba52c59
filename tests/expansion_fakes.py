"""Stand-ins for the parser, masked LM, masker and predicate check of sharded expansion, registered by name.

Shared by the in-process tests and the subprocess that a test kills (sharded workers load backends by name).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

PARSER, MLM, MASKER, CHECK = "fake-flat-parser", "fake-fixed-mlm", "fake-adjective", "fake-always"
# fills like "french" that attested_modifier refuses by design (test_expansion_modifiers.py): the check is off
SPEC = {"id": "LC1", "task": "sentiment", "expansion": {"allowed_polarity": ["neutral"], "max_per_seed": 2,
                                                        "checks": {"attested_modifier": {"enabled": False}}}}
WORDS = [("french", 0.4), ("good", 0.2), ("dog", 0.1), ("american", 0.08), ("wooden", 0.05), ("italian", 0.04)]


def seeds(n: int) -> list[dict[str, Any]]:
    """``n`` seed dicts, each with one or two nouns to put an adjective before."""
    texts = ["the movie was fun .", "i liked the film and the movie .", "nothing to fill here .",
             "the film ended ."]
    return [{"id": f"LC1-{i:04d}", "lc_id": "LC1", "task": "sentiment", "text": texts[i % len(texts)],
             "protected_spans": []} for i in range(n)]


@dataclass
class Masked:
    seed_id: str
    tokens: list[str]
    mask_positions: list[int]
    mask_tags: list[str]

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"seed_id": self.seed_id, "text": self.text, "mask_positions": self.mask_positions,
                "mask_tags": self.mask_tags}


class FlatParser:
    fingerprint = "flat-parser"

    def parse_batch(self, token_lists):
        import nltk

        return [nltk.Tree("S", [nltk.Tree("X", [t]) for t in tokens]) for tokens in token_lists]


class FixedSuggester:
    name = MLM
    fingerprint = "fixed-v1"
    calls = 0  # per process, across instances
    delay_s = 0.0

    def suggest(self, masked_texts, top_k=10):
        FixedSuggester.calls += 1
        time.sleep(FixedSuggester.delay_s)
        return [[WORDS[:top_k] for _ in range(t.count("[MASK]"))] for t in masked_texts]


def adjective_masker():
    def masker(seed_id, tree, top_k, max_masks):
        tokens = tree.leaves()
        return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"])
                for i, t in enumerate(tokens) if t in {"movie", "film"}][:top_k]

    masker.fingerprint = "adjective-before-nouns"  # type: ignore[attr-defined]
    return masker


def always():
    return lambda spec, seed, text: (True, "predicates hold")


def register() -> None:
    """Add the stand-ins to the registries (idempotent)."""
    from alict_core.expansion.sharded import MASKERS, PREDICATE_CHECKS
    from alict_core.mlm import SUGGESTERS
    from alict_core.parsing import PARSERS

    for registry, name, factory in ((PARSERS, PARSER, FlatParser), (SUGGESTERS, MLM, FixedSuggester),
                                    (MASKERS, MASKER, adjective_masker), (PREDICATE_CHECKS, CHECK, always)):
        if name not in registry:
            registry.add(name, factory, "test stand-in")


def unregister() -> None:
    from alict_core.expansion.sharded import MASKERS, PREDICATE_CHECKS
    from alict_core.mlm import SUGGESTERS
    from alict_core.parsing import PARSERS

    for registry, name in ((PARSERS, PARSER), (SUGGESTERS, MLM), (MASKERS, MASKER), (PREDICATE_CHECKS, CHECK)):
        if name in registry:
            registry.remove(name)
