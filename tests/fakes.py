"""Tiny deterministic stand-in backends (parser, masked LM, models) for app tests and demos.

``install()`` registers them in the core registries under ``fake-*`` names and returns a function
that removes them again. They load instantly, so AppTest runs take seconds.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

NEGATIVE_WORDS = frozenset({"bad", "terrible", "boring", "awful", "worst", "dull", "not", "never", "no", "hate"})
POSITIVE_WORDS = frozenset({"good", "great", "love", "best", "wonderful", "fun", "funny", "beautiful", "nice"})
# a spurious cue the keyword model has "learned": emphasis read as praise, so a meaning-neutral "is [indeed] ..."
# expansion of a neutral seed turns its prediction positive (a pass-to-fail pair for the app tests to find)
EMPHASIS_AS_PRAISE = frozenset({"indeed"})
HATE_WORDS = frozenset({"hate", "kill", "disgusting", "vermin", "scum", "animals"})
# the last two are known-neutral
FILL_WORDS = ("good", "great", "really", "bad", "so", "very", "new", "own", "french", "indeed")


class FakeParser:
    """Shallow trees over spaCy's tags: noun phrases (possessives nested, "(NP (NP Lohman 's) film)"), a copula
    with its adjective or noun phrase ("(VP (VBZ is) (ADJP (JJ funny)))"), a verb with its object; other
    tokens hang from S. Enough for the reference grammar to find modifier slots; instant after spaCy loads."""

    name = "fake-parser"
    fingerprint = "fake-parser:2"  # 2: shallow phrases over spaCy tags (was right-branching over the words)

    def parse_batch(self, token_lists: Sequence[Sequence[str]]) -> list[Any]:
        import nltk

        from alict_core.expansion.constraints.fill_checks import tag_token_lists

        token_lists = [list(tokens) or ["."] for tokens in token_lists]
        tagged = tag_token_lists(token_lists)
        return [nltk.Tree("S", _phrases(tokens, list(t.tags))) for tokens, t in zip(token_lists, tagged, strict=True)]


NP_TAGS = frozenset({"DT", "PRP$", "JJ", "NN", "NNS", "NNP", "NNPS", "CD", "POS"})


def _noun_phrase(words: list[Any]) -> Any:
    """An NP from its preterminals; a possessive ("Lohman 's") becomes an inner NP."""
    import nltk

    cut = max((i for i, w in enumerate(words) if w.label() == "POS"), default=-1)
    if 0 <= cut < len(words) - 1:
        return nltk.Tree("NP", [nltk.Tree("NP", words[:cut + 1]), *words[cut + 1:]])
    return nltk.Tree("NP", words)


def _phrases(tokens: list[str], tags: list[str]) -> list[Any]:
    import nltk

    leaves = [nltk.Tree(tag, [token]) for token, tag in zip(tokens, tags, strict=True)]
    out: list[Any] = []
    i = 0
    while i < len(leaves):
        j = i
        while j < len(leaves) and tags[j] in NP_TAGS and (j > i or tags[j] != "POS"):
            j += 1
        if j > i:  # a noun phrase (a lone adjective after a copula is taken by the verb below)
            out.append(_noun_phrase(leaves[i:j]))
            i = j
            continue
        if tags[i].startswith("VB") and i + 1 < len(leaves) and tags[i + 1] in NP_TAGS - {"POS"}:
            j = i + 1
            while j < len(leaves) and tags[j] in NP_TAGS:
                j += 1
            complement = leaves[i + 1:j]
            if all(w.label() == "JJ" for w in complement):
                out.append(nltk.Tree("VP", [leaves[i], nltk.Tree("ADJP", complement)]))
            else:
                out.append(nltk.Tree("VP", [leaves[i], _noun_phrase(complement)]))
            i = j
            continue
        out.append(leaves[i])
        i += 1
    return out


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
        self.fingerprint = f"keyword:{name}:2"  # 2: emphasis read as praise

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = set(str(text).lower().split())
            if self.task == "sentiment":
                score = len(words & (POSITIVE_WORDS | EMPHASIS_AS_PRAISE)) - len(words & NEGATIVE_WORDS)
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

    add("alict_core.parsing", "PARSERS", "fake-parser", lambda **kw: FakeParser(), "shallow test parser (spaCy tags)",
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
