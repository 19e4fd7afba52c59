"""``expand()``: seeds → parse → masked sentences (reference grammar) → masked-LM fills → validation.

Every candidate fill is kept as a row (accepted or not, with its four verdicts and reasons) so the
UI can show why a fill was rejected. Artefact: JSONL under ``artefact_dir("expansions")`` keyed by
a content hash of (seeds, spec, parser, grammar, suggester, settings), plus a ``.meta.json`` sidecar
with the per-LC counts.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from alict_core.common.config import artefact_dir, cache_dir
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json, read_jsonl, write_json, write_jsonl
from alict_core.expansion.constraints.acceptance import CONSTRAINTS_VERSION, Constraints, constraints_of, slot_allowed
from alict_core.expansion.constraints.corpus_stats import is_wordlike, load_corpus_stats
from alict_core.expansion.constraints.fill_checks import (
    CHECKS,
    ExpansionError,
    PredicateCheck,
    allowed_polarity_of,
    check_predicates,
    check_protected,
    field_of,
    fill_tokens,
    masked_tokens,
    tag_token_lists,
    unchecked_verdict,
    validate_fill,
)
from alict_core.expansion.constraints.fluency import DEFAULT_MIN_WORD_SCORE, RULES_VERSION, checked_min_word_score
from alict_core.expansion.constraints.modifiers import pool_candidate
from alict_core.expansion.rows import ExpansionRow, SeedFields

# 5: unknown words rejected, length re-checked on the corpus part; 6: the fluency check (and its rules' version);
# 7: the acceptance constraints (open-class slots, corpus evidence, score margin, neighbour likelihood)
EXPANSION_VERSION = f"7.{RULES_VERSION}.{CONSTRAINTS_VERSION}"
MASK_TOKEN = "[MASK]"
ProgressFn = Callable[[int, int, str], None]
"""``progress(done, total, stage)`` with stage in parse / mask / suggest / validate."""
Masker = Callable[[str, Any, int, int], list]
"""``masker(seed_id, tree, top_k_productions, max_masks) -> list[MaskedSentence]``."""


@dataclass
class ExpansionSet:
    """All candidate expansions of a set of seeds (accepted and rejected) and per-LC counts."""

    rows: list[dict[str, Any]]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    key: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    path: Path | None = None

    def accepted(self, seed_id: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["accepted"] and (seed_id is None or r["seed_id"] == seed_id)]

    def for_seed(self, seed_id: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["seed_id"] == seed_id]

    def to_jsonl(self, path: Path) -> Path:
        path = Path(path)
        write_jsonl(path, self.rows)
        write_json(meta_path(path), {"key": self.key, "counts": self.counts, "settings": self.settings,
                                     "timings": self.timings, "version": EXPANSION_VERSION})
        self.path = path
        return path

    @classmethod
    def from_jsonl(cls, path: Path) -> "ExpansionSet":
        path = Path(path)
        rows = read_jsonl(path)
        meta = read_json(meta_path(path)) if meta_path(path).exists() else {}
        counts = meta.get("counts") or counts_from_rows(rows)
        return cls(rows, counts, meta.get("key", path.stem), meta.get("settings", {}), meta.get("timings", {}), path)


def meta_path(path: Path) -> Path:
    return Path(path).with_suffix(".meta.json")


_PREDICATE_KIND = re.compile(r"predicate (\w+)")


def _memo_lookup(memo: dict[tuple[int, str], tuple[bool, str]], key: tuple[int, str]) -> PredicateCheck:
    """A predicate check that answers from ``memo[key]`` (computed once per seed and text)."""

    def check(_spec: Any, _seed: Any, _text: str) -> tuple[bool, str]:
        return memo[key]

    return check


def rejection_reasons(row: dict[str, Any]) -> list[str]:
    """Why a candidate was rejected, one name per failing check: ``pos``, ``protected``, ``cap``,
    ``polarity:unknown`` (SentiWordNet does not know the word), ``polarity:negator``, ``polarity:polar``,
    ``predicates:<kind>`` (the LC predicate that fails, e.g. ``predicates:length``), ``fluency:<rule>`` (e.g.
    ``fluency:sentence_start``)."""
    if row.get("accepted"):
        return []
    out = []
    reasons = row.get("reasons") or {}
    for check, verdict in (row.get("verdicts") or {}).items():
        if verdict is not False:
            continue
        reason = str(reasons.get(check, ""))
        if check == "polarity":
            out.append("polarity:unknown" if "unknown to SentiWordNet" in reason
                       else "polarity:negator" if "negator" in reason else "polarity:polar")
        elif check == "predicates":
            match = _PREDICATE_KIND.search(reason)
            out.append(f"predicates:{match.group(1) if match else 'other'}")
        elif check == "fluency":
            out.append(f"fluency:{reason.split(':', 1)[0] or 'other'}")
        else:
            out.append(check)
    if not out and "cap" in reasons:
        out.append("cap")
    return out


def rejection_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many candidates each check (and each LC predicate kind) rejected; a row may count under several."""
    counts: dict[str, int] = {}
    for row in rows:
        for name in rejection_reasons(row):
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def counts_from_rows(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, Any]] = {}
    for row in rows:
        c = counts.setdefault(row["lc_id"], {"seeds": set(), "masked": set(), "suggestions": 0, "accepted": 0,
                                             "seeds_expanded": set()})
        c["seeds"].add(row["seed_id"])
        c["masked"].add((row["seed_id"], row["masked"].get("text")))
        c["suggestions"] += 1
        if row["accepted"]:
            c["accepted"] += 1
            c["seeds_expanded"].add(row["seed_id"])
    out = {lc: {k: (len(v) if isinstance(v, set) else v) for k, v in c.items()} for lc, c in counts.items()}
    for lc in out:
        out[lc]["rejected"] = rejection_counts(row for row in rows if row["lc_id"] == lc)  # type: ignore[assignment]
    return out


# ------------------------------------------------------------------------------------ pieces


def fingerprint_of(obj: Any) -> str:
    """A backend's fingerprint attribute, else its name, else its class name."""
    return str(getattr(obj, "fingerprint", None) or getattr(obj, "name", None) or type(obj).__name__)


def as_dict(obj: Any) -> Any:
    for method in ("to_dict", "model_dump"):
        if hasattr(obj, method):
            return getattr(obj, method)()
    if isinstance(obj, dict):
        return obj
    return vars(obj) if hasattr(obj, "__dict__") else str(obj)


def fill_combinations(per_mask: Sequence[Sequence[tuple[str, float]]], limit: int) -> list[tuple[list[str], float]]:
    """The ``limit`` best word combinations over the masks, scored by the product of probabilities."""
    if not per_mask or any(not options for options in per_mask):
        return []
    if len(per_mask) == 1:
        return [([w], p) for w, p in per_mask[0][:limit]]
    best = heapq.nlargest(limit, itertools.product(*per_mask), key=lambda combo: _product(p for _, p in combo))
    return [([w for w, _ in combo], _product(p for _, p in combo)) for combo in best]


def _product(values: Iterable[float]) -> float:
    out = 1.0
    for v in values:
        out *= v
    return out


def default_masker(grammar: Any = None) -> Masker:
    """Algorithm 1 of the grammar package: ``masked_sentences(seed_id, tree, grammar, top_k, max_masks)``."""
    from alict_core.grammar import load_reference_grammar, masked_sentences

    grammar = grammar if grammar is not None else load_reference_grammar()

    def masker(seed_id: str, tree: Any, top_k: int, max_masks: int) -> list:
        return masked_sentences(seed_id, tree, grammar, top_k=top_k, max_masks=max_masks)

    from alict_core.grammar.reference import GRAMMAR_VERSION

    source = getattr(grammar, "source", "") or fingerprint_of(grammar)
    masker.fingerprint = hash_json(["algorithm1", GRAMMAR_VERSION, source, len(grammar)])  # type: ignore[attr-defined]
    return masker


def masker_fingerprint(masker: Any) -> str | None:
    """What a masker computes, for the artefact key: its ``fingerprint`` attribute; else, for a plain function
    without a closure, a hash of its module, name and source (as ``joblib.Memory`` keys functions); else ``None``
    (a closure or callable object whose content cannot be known: its results are never read from a cache)."""
    given = getattr(masker, "fingerprint", None)
    if given:
        return str(given)
    if not inspect.isfunction(masker) or masker.__closure__:
        return None
    try:
        source = inspect.getsource(masker)
    except (OSError, TypeError):
        return None
    return hash_json(["function", masker.__module__, masker.__qualname__, source, repr(masker.__defaults__)])


def expansion_key(seeds: Sequence[Any], spec: Any, parser: Any, suggester: Any, masker: Any,
                  settings: dict[str, Any]) -> str:
    return hash_json({
        "version": EXPANSION_VERSION,
        "seeds": [as_dict(s) for s in seeds],
        "spec": as_dict(spec),
        "parser": fingerprint_of(parser),
        "grammar": masker_fingerprint(masker) or "not content-keyed",
        "suggester": fingerprint_of(suggester),
        "settings": settings,
    }, length=20)


# ------------------------------------------------------------------------------------ expand


def expand(seeds: Sequence[Any], spec: Any, parser: Any, suggester: Any, *, top_k_productions: int = 5,
           max_masks: int = 2, top_k_words: int = 10, max_per_seed: int | None = 5,
           progress: ProgressFn | None = None, masker: Masker | None = None, grammar: Any = None,
           predicate_check: PredicateCheck | None = None, use_cache: bool = True,
           out_dir: Path | None = None, batch_size: int = 64,
           min_word_score: float = DEFAULT_MIN_WORD_SCORE) -> ExpansionSet:
    """Expand every seed of one LC; keep every candidate with its verdicts, accept up to
    ``max_per_seed`` valid fills per seed (best MLM score first; ``None`` → the spec's cap).
    ``min_word_score``: the fluency check's floor on the masked LM's probability of a fill (0 turns it off).

    Cached: a second call with the same inputs reads the JSONL artefact instead of recomputing.
    """
    seeds = list(seeds)
    if max_per_seed is None:
        max_per_seed = int(field_of(field_of(spec, "expansion"), "max_per_seed", 5) or 5)
    for name, value in {"top_k_productions": top_k_productions, "max_masks": max_masks,
                        "top_k_words": top_k_words, "max_per_seed": max_per_seed}.items():
        if int(value) < 1:
            raise ExpansionError(f"expand(): {name} must be >= 1, got {value}")
    masker = masker or default_masker(grammar)
    constraints = constraints_of(spec, checked_min_word_score(min_word_score))
    corpus = load_corpus_stats()
    settings = {"top_k_productions": top_k_productions, "max_masks": max_masks, "top_k_words": top_k_words,
                "max_per_seed": max_per_seed, "allowed_polarity": list(allowed_polarity_of(spec)),
                "min_word_score": checked_min_word_score(min_word_score), "constraints": constraints.to_dict(),
                "corpus": getattr(corpus, "fingerprint", None)}
    key = expansion_key(seeds, spec, parser, suggester, masker, settings)
    path = Path(out_dir or cache_dir() / "expansions") / f"{key}.jsonl"  # created only to write (a page view: never)
    if use_cache and masker_fingerprint(masker) is not None:  # a masker of unknown content is never read back
        from alict_core.common.manifest import load_checked

        cached = load_checked(path, "expansions", key, ExpansionSet.from_jsonl)
        if cached is not None:
            return cached

    report = progress or (lambda done, total, stage: None)
    lc_id = str(field_of(spec, "id", "") or (field_of(seeds[0], "lc_id") if seeds else ""))
    task = str(field_of(spec, "task", "") or (field_of(seeds[0], "task") if seeds else ""))
    timings: dict[str, float] = {}

    started = time.perf_counter()
    trees = _parse(seeds, parser, batch_size, report)
    timings["parse"] = time.perf_counter() - started
    started = time.perf_counter()
    flat = _masked_sentences(seeds, trees, masker, constraints, top_k_productions, max_masks, report)
    timings["mask"] = time.perf_counter() - started
    started = time.perf_counter()
    prepared = [(si, m, *masked_tokens(m)) for si, m in flat]
    attested = constraints.params("attested_modifier")
    pool = max(top_k_words, int(attested.get("pool", 0))) if attested is not None else top_k_words
    suggestions = _suggest(prepared, suggester, pool, batch_size, report)
    timings["suggest"] = time.perf_counter() - started
    started = time.perf_counter()
    candidates = _candidates(seeds, prepared, suggestions, top_k_words)
    if attested is not None:
        candidates += _attested_candidates(seeds, prepared, suggestions, top_k_words, corpus, attested)
    verdicts = _validate(seeds, spec, candidates, constraints, corpus, predicate_check, min_word_score, batch_size,
                         report)
    candidates, verdicts = best_per_text(candidates, verdicts)
    timings["validate"] = time.perf_counter() - started
    started = time.perf_counter()
    check_neighbour_likelihood(seeds, candidates, verdicts, constraints, suggester, max_per_seed, batch_size)
    timings["likelihood"] = time.perf_counter() - started

    rows = _rows(seeds, candidates, verdicts, max_per_seed, lc_id, task)
    counts = {lc_id: {"seeds": len(seeds), "masked": len(flat), "suggestions": len(rows),
                      "accepted": sum(r["accepted"] for r in rows),
                      "seeds_expanded": len({r["seed_id"] for r in rows if r["accepted"]}),
                      "rejected": rejection_counts(rows)}}
    result = ExpansionSet(rows, counts, key, settings, {k: round(v, 3) for k, v in timings.items()})
    if use_cache:
        from alict_core.common.manifest import entry_lock, write_file_manifest

        if not out_dir:
            artefact_dir("expansions")  # created here, or one message naming the cache folder
        with entry_lock(path):  # a reader meanwhile waits, then reads it, never quarantines it (pass 17 K1)
            result.to_jsonl(path)
            write_file_manifest(path, "expansions", key, len(rows), companions=[meta_path(path)])
    return result


def _parse(seeds: list[Any], parser: Any, batch_size: int, report: ProgressFn) -> list[Any]:
    """Step 1: a parse tree per seed, in batches."""
    trees: list[Any] = []
    token_lists = [str(field_of(s, "text")).split() for s in seeds]
    for start in range(0, len(seeds), batch_size):
        trees.extend(parser.parse_batch(token_lists[start:start + batch_size]))
        report(min(start + batch_size, len(seeds)), len(seeds), "parse")
    return trees


def _masked_sentences(seeds: list[Any], trees: list[Any], masker: Masker, constraints: Constraints,
                      top_k_productions: int, max_masks: int, report: ProgressFn) -> list[tuple[int, Any]]:
    """Step 2: (seed index, masked sentence) of every masked sentence whose slots the slot constraints allow."""
    masked_by_seed: list[list[Any]] = []
    for i, (seed, tree) in enumerate(zip(seeds, trees, strict=True)):
        masked_by_seed.append(list(masker(str(field_of(seed, "id")), tree, top_k_productions, max_masks)))
        report(i + 1, len(seeds), "mask")
    slot_checks = constraints.at("slot")
    return [(si, m) for si, ms in enumerate(masked_by_seed) for m in ms
            if all(slot_allowed(masked_tokens(m)[2], params) is None for _, params in slot_checks)]


def _suggest(prepared: list[tuple[Any, ...]], suggester: Any, top_k_words: int, batch_size: int,
             report: ProgressFn) -> list[Any]:
    """Step 3: the masked LM's suggestions, batched across all masked sentences."""
    texts = [" ".join(tokens) for _, _, tokens, _, _ in prepared]
    suggestions: list[Any] = []
    for start in range(0, len(texts), batch_size):
        suggestions.extend(suggester.suggest(texts[start:start + batch_size], top_k=top_k_words))
        report(min(start + batch_size, len(texts)), len(texts), "suggest")
    return suggestions


def _candidates(seeds: list[Any], prepared: list[tuple[Any, ...]], suggestions: list[Any],
                top_k_words: int) -> list[dict[str, Any]]:
    """Step 4a: every fill that changes the seed, with its protected-span check (check 4 first: it needs no
    tagging)."""
    candidates: list[dict[str, Any]] = []
    for (si, m, tokens, positions, _tags), fills in zip(prepared, suggestions, strict=True):
        seed_text = str(field_of(seeds[si], "text"))
        spans = field_of(seeds[si], "protected_spans") or []
        combinations = fill_combinations([slot[:top_k_words] for slot in fills], top_k_words)
        best_score = combinations[0][1] if combinations else None
        for words, score in combinations:
            expanded = fill_tokens(tokens, positions, words)
            if " ".join(expanded) != seed_text:
                candidates.append({"si": si, "masked": m, "words": words, "score": score, "tokens": expanded,
                                   "best_score": best_score, "positions": positions,
                                   "protected": check_protected(seed_text, spans, expanded, positions)})
    return candidates


def _attested_candidates(seeds: list[Any], prepared: list[tuple[Any, ...]], suggestions: list[Any], top_k_words: int,
                         corpus: Any, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Step 4a': at each single slot, the words of the masked LM's pool beyond its top ``top_k_words`` that the
    corpus attests as a modifier there (``attested_modifier``); each scored against the best attested word."""
    candidates: list[dict[str, Any]] = []
    for (si, m, tokens, positions, tags), fills in zip(prepared, suggestions, strict=True):
        if len(positions) != 1 or not fills:
            continue
        words = [(w, p) for w, p in fills[0][top_k_words:]
                 if pool_candidate(tokens, positions[0], tags[0], w, corpus, params)]
        if not words:
            continue
        seed_text = str(field_of(seeds[si], "text"))
        spans = field_of(seeds[si], "protected_spans") or []
        best = max(p for _, p in words)
        for word, score in words:
            expanded = fill_tokens(tokens, positions, [word])
            candidates.append({"si": si, "masked": m, "words": [word], "score": score, "tokens": expanded,
                               "best_score": best, "positions": positions, "attested": True,
                               "protected": check_protected(seed_text, spans, expanded, positions)})
    return candidates


def _validate(seeds: list[Any], spec: Any, candidates: list[dict[str, Any]], constraints: Constraints, corpus: Any,
              predicate_check: PredicateCheck | None, min_word_score: float, batch_size: int,
              report: ProgressFn) -> list[Any]:
    """Step 4b: each candidate's verdicts; each distinct text is tagged once (one spaCy pass) and its predicates
    checked once per seed (the same text can come from slots with different tags)."""
    unique = list(dict.fromkeys(" ".join(c["tokens"]) for c in candidates if c["protected"][0]))
    tagged_by_text = dict(zip(unique, tag_token_lists([t.split(" ") for t in unique]), strict=True)) if unique else {}
    allowed = allowed_polarity_of(spec)
    predicate_memo: dict[tuple[int, str], tuple[bool, str]] = {}
    verdicts = []
    for i, cand in enumerate(candidates):
        if not cand["protected"][0]:
            verdicts.append(unchecked_verdict(cand["tokens"], cand["words"], cand["protected"][1]))
            continue
        text = " ".join(cand["tokens"])
        tagged = tagged_by_text[text]
        memo_key = (cand["si"], text)
        if memo_key not in predicate_memo:
            predicate_memo[memo_key] = check_predicates(spec, seeds[cand["si"]], text, predicate_check,
                                                        tagged.annotation)
        verdicts.append(validate_fill(cand["masked"], cand["words"], seeds[cand["si"]], spec, tagged=tagged,
                                      allowed_polarity=allowed, score=cand["score"], min_word_score=min_word_score,
                                      predicate_check=_memo_lookup(predicate_memo, memo_key),
                                      constraints=constraints, best_score=cand["best_score"], corpus=corpus,
                                      attested=bool(cand.get("attested"))))
        if (i + 1) % batch_size == 0 or i + 1 == len(candidates):
            report(i + 1, len(candidates), "validate")
    return verdicts


def _neighbour_slots(tokens: Sequence[str], positions: Sequence[int]) -> list[tuple[int, int]]:
    """(index in the expansion, index in the seed) of each word-like token next to an insertion."""
    inserted = sorted(set(positions))
    out: list[tuple[int, int]] = []
    for p in inserted:
        for step in (-1, 1):
            j = p + step
            while j in inserted:
                j += step
            if 0 <= j < len(tokens) and is_wordlike(tokens[j].lower()) and tokens[j].isalpha():
                pair = (j, j - sum(1 for q in inserted if q < j))
                if pair not in out:
                    out.append(pair)
    return out


def _word_probability(fills: Sequence[tuple[str, float]], word: str) -> tuple[float, bool]:
    """(probability of ``word`` among the fills (any case), whether it was listed); unlisted: the last
    listed probability, an upper bound."""
    listed = [p for w, p in fills if w.lower() == word.lower()]
    if listed:
        return sum(listed), True
    return (fills[-1][1] if fills else 0.0), False


def neighbour_likelihood_problem(seed_tokens: Sequence[str], tokens: Sequence[str], positions: Sequence[int],
                                 probability: Callable[[list[str]], list[Sequence[tuple[str, float]]]],
                                 max_drop: float) -> str | None:
    """Why the insertion makes a neighbouring word much less expected than in the seed, else None.

    Each neighbour is masked in the expansion and in the seed; ``probability`` maps masked texts to the masked
    LM's fills. A neighbour the seed's fills do not list gives no evidence and is skipped."""
    pairs = _neighbour_slots(tokens, positions)
    if not pairs:
        return None
    texts = []
    for j, k in pairs:
        texts.append(" ".join(MASK_TOKEN if i == j else t for i, t in enumerate(tokens)))
        texts.append(" ".join(MASK_TOKEN if i == k else t for i, t in enumerate(seed_tokens)))
    fills = probability(texts)
    for n, (j, _k) in enumerate(pairs):
        seed_p, seed_listed = _word_probability(fills[2 * n + 1], tokens[j])
        if not seed_listed or seed_p <= 0:
            continue
        new_p, _ = _word_probability(fills[2 * n], tokens[j])
        if new_p < (1.0 - max_drop) * seed_p:
            return (f"{tokens[j]!r} next to the insertion: the masked LM gives it {new_p:.3f}, "
                    f"in the seed {seed_p:.3f}")
    return None


def check_neighbour_likelihood(seeds: Sequence[Any], candidates: list[dict[str, Any]], verdicts: list[Any],
                               constraints: Constraints, suggester: Any, max_per_seed: int, batch_size: int) -> None:
    """The ``neighbour_likelihood`` constraint on fills that pass every other check, best score first per
    seed, in rounds until each seed's cap is filled: a failing fill's ``fluency`` verdict turns False."""
    params = constraints.params("neighbour_likelihood")
    if params is None:
        return
    max_drop, top_k = float(params.get("max_drop", 0.7)), int(params.get("top_k", 100))
    queues: dict[int, list[int]] = {}
    for i in sorted(range(len(candidates)), key=lambda i: (candidates[i]["si"], -candidates[i]["score"])):
        if verdicts[i].ok:
            queues.setdefault(candidates[i]["si"], []).append(i)
    passed: dict[int, int] = {}
    memo: dict[str, Sequence[tuple[str, float]]] = {}

    def probability(texts: list[str]) -> list[Sequence[tuple[str, float]]]:
        todo = [t for t in dict.fromkeys(texts) if t not in memo]
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            for text, fills in zip(chunk, suggester.suggest(chunk, top_k=top_k), strict=True):
                memo[text] = fills[0]
        return [memo[t] for t in texts]

    while True:
        batch = _next_round(queues, passed, max_per_seed)
        if not batch:
            break
        probability(_neighbour_texts(seeds, candidates, batch))  # one suggest call per round
        for i in batch:
            cand = candidates[i]
            seed_tokens = str(field_of(seeds[cand["si"]], "text")).split(" ")
            why = neighbour_likelihood_problem(seed_tokens, cand["tokens"], cand["positions"], probability, max_drop)
            if why is None:
                passed[cand["si"]] = passed.get(cand["si"], 0) + 1
            else:
                verdicts[i].verdicts["fluency"] = False
                verdicts[i].reasons["fluency"] = f"neighbour_likelihood: {why}"
    for queue in queues.values():
        for i in queue:
            verdicts[i].reasons["fluency"] += "; neighbour_likelihood not checked (the seed's cap was reached)"


def _next_round(queues: dict[int, list[int]], passed: dict[int, int], max_per_seed: int) -> list[int]:
    """The candidates of one round: from each seed's queue, as many as its cap has room for."""
    batch = []
    for si, queue in queues.items():
        room = max_per_seed - passed.get(si, 0)
        while room > 0 and queue:
            batch.append(queue.pop(0))
            room -= 1
    return batch


def _neighbour_texts(seeds: Sequence[Any], candidates: list[dict[str, Any]], batch: list[int]) -> list[str]:
    """Every masked text the round's check needs (each neighbour of an insertion masked, in the expansion and
    in the seed), collected first so the round makes one suggest call."""
    needed = []
    for i in batch:
        cand = candidates[i]
        for j, k in _neighbour_slots(cand["tokens"], cand["positions"]):
            seed_tokens = str(field_of(seeds[cand["si"]], "text")).split(" ")
            needed.append(" ".join(MASK_TOKEN if x == j else t for x, t in enumerate(cand["tokens"])))
            needed.append(" ".join(MASK_TOKEN if x == k else t for x, t in enumerate(seed_tokens)))
    return needed


def best_per_text(candidates: list[dict[str, Any]], verdicts: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """One candidate per (seed, expanded text): the one passing most checks, then the best score."""
    best: dict[tuple[int, str], int] = {}
    for i, (cand, verdict) in enumerate(zip(candidates, verdicts, strict=True)):
        key = (cand["si"], verdict.text)
        rank = (verdict.ok, _passed(verdict), cand["score"])
        j = best.get(key)
        if j is None or rank > (verdicts[j].ok, _passed(verdicts[j]), candidates[j]["score"]):
            best[key] = i
    keep = sorted(best.values())
    return [candidates[i] for i in keep], [verdicts[i] for i in keep]


def _passed(verdict: Any) -> int:
    return sum(1 for value in verdict.verdicts.values() if value is True)


def _rows(seeds: Sequence[Any], candidates: list[dict[str, Any]], verdicts: list[Any], max_per_seed: int,
          lc_id: str, task: str) -> list[dict[str, Any]]:
    order = sorted(range(len(candidates)), key=lambda i: (candidates[i]["si"], -candidates[i]["score"]))
    accepted_per_seed: dict[int, int] = {}
    masked_dicts: dict[int, Any] = {}  # a masked sentence is shared by many candidates: convert it once
    fields = [SeedFields.of(seed, lc_id, task) for seed in seeds]
    rows = []
    for i in order:
        cand, verdict = candidates[i], verdicts[i]
        seed = fields[cand["si"]]
        reasons = dict(verdict.reasons)
        accepted = verdict.ok
        if accepted:
            if accepted_per_seed.get(cand["si"], 0) >= max_per_seed:
                accepted = False
                reasons["cap"] = f"valid, but the seed already has {max_per_seed} accepted expansions"
            else:
                accepted_per_seed[cand["si"]] = accepted_per_seed.get(cand["si"], 0) + 1
        if id(cand["masked"]) not in masked_dicts:
            masked_dicts[id(cand["masked"])] = as_dict(cand["masked"])
        rows.append(ExpansionRow(
            id=f"{seed.id}-x{hash_json([seed.id, verdict.text], 10)}", seed_id=seed.id, lc_id=seed.lc_id,
            task=seed.task, seed_text=seed.text, text=verdict.text, accepted=accepted, words=list(cand["words"]),
            score=float(cand["score"]),
            verdicts={check: (None if verdict.verdicts[check] is None else bool(verdict.verdicts[check]))
                      for check in CHECKS},
            reasons=reasons, masked=masked_dicts[id(cand["masked"])],
        ).to_dict())
    return rows
