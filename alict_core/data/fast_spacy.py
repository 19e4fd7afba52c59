"""Drop-in speed-ups for spaCy's ``attribute_ruler`` and rule ``lemmatizer`` (identical output).

The English pipeline's attribute ruler holds ~180 patterns, almost all of one token (tag map,
morph rules). Its ``Matcher`` tries every pattern at every token, which made it the slowest
component when validation tags ~10k short expanded sentences. Here a one-token pattern is decided
once per distinct ``(TAG, LOWER, DEP, IS_SPACE)`` of a token and remembered; the few multi-token
patterns still go through a ``Matcher`` holding only them. The ruler then applies the matches
exactly as before (sorted by rule index, later rules win). A pattern this module does not
understand leaves the ruler untouched.

The English rule lemmatizer caches its result only for inflected forms; base forms (most tokens)
run ``is_base_form`` every time. Its result depends only on (word, POS, morphology), so
``speed_up_lemmatizer`` memoises every call on that key.
"""

from __future__ import annotations

import re
from typing import Any

TokenKey = tuple[str, str, str, bool]
_ATTR_INDEX = {"TAG": 0, "LOWER": 1, "DEP": 2, "IS_SPACE": 3}


class UnsupportedPattern(ValueError):
    """A token pattern with an attribute or operator the lookup does not implement."""


def _value_matches(spec: Any, actual: Any) -> bool:
    if not isinstance(spec, dict):
        return actual == spec
    for op, arg in spec.items():
        if op == "IN":
            ok = actual in arg
        elif op == "NOT_IN":
            ok = actual not in arg
        elif op == "REGEX":
            ok = re.search(arg, str(actual)) is not None
        else:
            raise UnsupportedPattern(op)
        if not ok:
            return False
    return True


def token_pattern_matches(pattern: dict[str, Any], key: TokenKey) -> bool:
    """Whether a one-token Matcher pattern matches a token with attributes ``key``."""
    for attr, spec in pattern.items():
        if attr not in _ATTR_INDEX:
            raise UnsupportedPattern(attr)
        if not _value_matches(spec, key[_ATTR_INDEX[attr]]):
            return False
    return True


class CachedRulerMatch:
    """Replacement for ``AttributeRuler.match``: per-token-key lookup + a Matcher for multi-token rules."""

    def __init__(self, ruler: Any) -> None:
        from spacy.matcher import Matcher

        self.strings = ruler.vocab.strings
        self.multi = Matcher(ruler.vocab, validate=False)
        self.cache: dict[TokenKey, list[tuple[int, int]]] = {}
        # candidate patterns by literal TAG, else by literal LOWER, else checked for every key
        self.by_tag: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        self.by_lower: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        self.general: list[tuple[int, int, dict[str, Any]]] = []
        self.multi_starts: list[tuple[int, int, dict[str, Any]]] = []  # first tokens of multi-token rules
        self.may_start: dict[TokenKey, bool] = {}
        self.keys: dict[tuple[int, ...], TokenKey] = {}
        for attr_id, entry in enumerate(ruler.patterns):
            match_id = self.strings[str(attr_id)]
            long = [p for p in entry["patterns"] if len(p) != 1]
            for pattern in entry["patterns"]:
                if len(pattern) == 1:
                    token = pattern[0]
                    token_pattern_matches(token, ("", "", "", False))  # raises if unsupported
                    item = (attr_id, match_id, token)
                    if isinstance(token.get("TAG"), str):
                        self.by_tag.setdefault(token["TAG"], []).append(item)
                    elif isinstance(token.get("LOWER"), str):
                        self.by_lower.setdefault(token["LOWER"], []).append(item)
                    else:
                        self.general.append(item)
            if long:
                self.multi.add(str(attr_id), long)
                self.multi_starts.extend((attr_id, match_id, pattern[0]) for pattern in long)

    def _hits(self, key: TokenKey) -> list[tuple[int, int]]:
        hits = self.cache.get(key)
        if hits is None:
            candidates = self.by_tag.get(key[0], []) + self.by_lower.get(key[1], []) + self.general
            hits = sorted({(a, m) for a, m, p in candidates if token_pattern_matches(p, key)})
            self.cache[key] = hits
        return hits

    def _may_start_multi(self, key: TokenKey) -> bool:
        verdict = self.may_start.get(key)
        if verdict is None:
            verdict = self.may_start[key] = any(token_pattern_matches(p, key) for _, _, p in self.multi_starts)
        return verdict

    def _key(self, row: list[int]) -> TokenKey:
        """Token key from the hashes of (TAG, LOWER, DEP) and IS_SPACE, decoded once per distinct row."""
        raw = tuple(row)
        key = self.keys.get(raw)
        if key is None:
            tag, lower, dep, space = raw
            name = lambda h: self.strings[h] if h else ""  # noqa: E731
            key = self.keys[raw] = (name(tag), name(lower), name(dep), bool(space))
        return key

    def __call__(self, doc: Any) -> list[tuple[int, int, int, int]]:
        from spacy.attrs import DEP, IS_SPACE, LOWER, TAG

        matches = []
        run_multi = False
        for i, row in enumerate(doc.to_array([TAG, LOWER, DEP, IS_SPACE]).tolist()):
            key = self._key(row)
            for attr_id, match_id in self._hits(key):
                matches.append((attr_id, match_id, i, i + 1))
            run_multi = run_multi or self._may_start_multi(key)
        if run_multi:  # only when some token can start a multi-token rule
            for match_id, start, end in self.multi(doc, allow_missing=True):
                matches.append((int(self.strings[match_id]), match_id, start, end))
        matches.sort()
        return matches


class MergedRulerAnnotations:
    """Replacement for ``AttributeRuler.set_annotations``: when every match covers one token, each
    token gets its rules' attributes merged in rule order (later rules win, as when applied one by
    one); otherwise the ruler's own method runs."""

    def __init__(self, ruler: Any) -> None:
        from spacy.tokens._retokenize import set_token_attrs

        self.ruler = ruler
        self.original = type(ruler).set_annotations
        self.set_token_attrs = set_token_attrs
        self.merged: dict[tuple[int, ...], dict[Any, Any]] = {}

    def __call__(self, doc: Any, matches: list[tuple[int, int, int, int]]) -> None:
        if any(end - start != 1 for _, _, start, end in matches):
            self.original(self.ruler, doc, matches)
            return
        per_token: dict[int, list[int]] = {}
        for attr_id, _, start, _ in matches:  # sorted by rule index already
            per_token.setdefault(start, []).append(attr_id)
        for index, attr_ids in per_token.items():
            key = tuple(attr_ids)
            attrs = self.merged.get(key)
            if attrs is None:
                attrs = {}
                for attr_id in attr_ids:
                    attrs.update(self.ruler.attrs[attr_id])
                self.merged[key] = attrs
            self.set_token_attrs(doc[index], attrs)


def speed_up_attribute_ruler(nlp: Any, name: str = "attribute_ruler") -> bool:
    """Install the cached matcher on ``nlp``'s attribute ruler; False when left as it was."""
    if name not in nlp.pipe_names:
        return False
    ruler = nlp.get_pipe(name)
    if any(index not in (0, -1) for index, pattern in zip(ruler.indices, ruler.patterns, strict=True)
           if all(len(p) == 1 for p in pattern["patterns"])):
        return False
    try:
        match = CachedRulerMatch(ruler)
    except UnsupportedPattern:
        return False
    # instance attributes: AttributeRuler.__call__ calls self.match and self.set_annotations
    ruler.match = match
    ruler.set_annotations = MergedRulerAnnotations(ruler)
    return True


def speed_up_lemmatizer(nlp: Any, name: str = "lemmatizer") -> bool:
    """Memoise the rule lemmatizer on (ORTH, POS, MORPH); False when left as it was."""
    if name not in nlp.pipe_names:
        return False
    lemmatizer = nlp.get_pipe(name)
    if getattr(lemmatizer, "mode", None) != "rule" or not hasattr(lemmatizer, "lemmatize"):
        return False
    original = lemmatizer.lemmatize
    memo: dict[tuple[int, int, int], list[str]] = {}

    def lemmatize(token: Any) -> list[str]:
        key = (token.orth, token.pos, token.morph.key)
        forms = memo.get(key)
        if forms is None:
            forms = memo[key] = original(token)
        return forms

    lemmatizer.lemmatize = lemmatize  # instance attribute: Lemmatizer.__call__ calls self.lemmatize
    return True


def speed_up_pipeline(nlp: Any) -> bool:
    """Both speed-ups; True when at least one was installed."""
    ruler = speed_up_attribute_ruler(nlp)
    lemmas = speed_up_lemmatizer(nlp)
    return ruler or lemmas
