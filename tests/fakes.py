"""Tiny deterministic stand-in backends (parser, masked LM, models) for app tests and demos.

``install()`` registers them in the core registries under ``fake-*`` names and returns a function
that removes them again. They load instantly, so AppTest runs take seconds.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

NEGATIVE_WORDS = frozenset({"bad", "terrible", "boring", "awful", "worst", "dull", "not", "never", "no", "hate"})
POSITIVE_WORDS = frozenset({"good", "great", "love", "best", "wonderful", "fun", "funny", "beautiful", "nice"})
HATE_WORDS = frozenset({"hate", "kill", "disgusting", "vermin", "scum", "animals"})
# the last two are known-neutral
FILL_WORDS = ("good", "great", "really", "bad", "so", "very", "new", "own", "french", "indeed")


class FakeParser:
    """Right-branching trees: (S (NP w0) (VP (VB w1) (NP w2 ...)))."""

    name = "fake-parser"
    fingerprint = "fake-parser:1"

    def parse_batch(self, token_lists: Sequence[Sequence[str]]) -> list[Any]:
        import nltk

        trees = []
        for tokens in token_lists:
            tokens = list(tokens) or ["."]
            if len(tokens) == 1:
                trees.append(nltk.Tree("S", [nltk.Tree("NN", [tokens[0]])]))
                continue
            rest: Any = nltk.Tree("NP", [nltk.Tree("NN", [tokens[-1]])])
            for token in reversed(tokens[1:-1]):
                rest = nltk.Tree("VP", [nltk.Tree("JJ", [token]), rest])
            trees.append(nltk.Tree("S", [nltk.Tree("NP", [nltk.Tree("DT", [tokens[0]])]), rest]))
        return trees


class FakeSuggester:
    """Suggests the same short word list for every [MASK], with decreasing probabilities."""

    name = "fake-mlm"
    fingerprint = "fake-mlm:3"  # 2: known-neutral fill words added; 3: words attested_modifier accepts

    def suggest(self, masked_texts: list[str], top_k: int = 10) -> list[list[list[tuple[str, float]]]]:
        words = FILL_WORDS[:top_k]
        probs = [round(0.5 / (i + 1), 4) for i in range(len(words))]
        return [[list(zip(words, probs, strict=True)) for _ in range(text.count("[MASK]"))] for text in masked_texts]


class KeywordModel:
    """A keyword classifier: counts polar / hateful words (deterministic, instant)."""

    def __init__(self, name: str, task: str) -> None:
        from alict_core.data.records import TASK_LABELS

        self.name = name
        self.task = task
        self.labels = TASK_LABELS[task]
        self.fingerprint = f"keyword:{name}:1"

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = set(str(text).lower().split())
            if self.task == "sentiment":
                score = len(words & POSITIVE_WORDS) - len(words & NEGATIVE_WORDS)
                logits = np.array([-score, 0.3 - abs(score), score], dtype=float)
            else:
                score = len(words & HATE_WORDS)
                logits = np.array([0.5, score - 0.2], dtype=float)
            exp = np.exp(logits - logits.max())
            rows.append(exp / exp.sum())
        return np.array(rows)


def install() -> Callable[[], None]:
    """Register the fakes in the core registries that exist; return an uninstall function."""
    undo: list[Callable[[], None]] = []

    def add(module: str, registry: str, name: str, factory: Callable[..., Any], description: str, **tags: Any) -> None:
        import importlib

        try:
            reg = getattr(importlib.import_module(module), registry)
        except (ImportError, AttributeError):
            return
        reg.add(name, factory, description, **tags)
        undo.append(lambda: reg.remove(name))

    add("alict_core.parsing", "PARSERS", "fake-parser", lambda **kw: FakeParser(), "right-branching test parser",
        offline=True, menu=True)
    add("alict_core.mlm", "SUGGESTERS", "fake-mlm", lambda **kw: FakeSuggester(), "fixed-list test masked LM",
        offline=True, menu=True)
    add("alict_core.models", "MODELS", "fake-sentiment", lambda **kw: KeywordModel("fake-sentiment", "sentiment"),
        "keyword test model", task="sentiment", offline=True, kind="fake")
    add("alict_core.models", "MODELS", "fake-hate", lambda **kw: KeywordModel("fake-hate", "hate_speech"),
        "keyword test model", task="hate_speech", offline=True, kind="fake")

    def uninstall() -> None:
        for step in reversed(undo):
            step()

    return uninstall
