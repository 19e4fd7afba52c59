"""Self-BLEU (Zhu et al., Texygen): mean BLEU-4 of each sentence against all the others as references.

Exact multi-reference BLEU with NLTK's ``method1`` smoothing and closest-reference brevity penalty,
computed in O(total n-grams) by keeping, per n-gram, its two largest per-sentence counts (so the
clipping count "max over the other sentences" is O(1)).
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter
from typing import Sequence

EPSILON = 0.1  # nltk SmoothingFunction().method1


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def self_bleu(
    texts: Sequence[str], max_n: int = 4, sample_size: int | None = 1000, seed: int = 0,
    tokenize=str.split,
) -> float:
    """Self-BLEU in [0, 1] (higher = less diverse). ``sample_size`` hypotheses are drawn (seeded);
    every text serves as a reference. Fewer than 2 texts → 0.0."""
    tokens = [tuple(tokenize(t.lower())) for t in texts]
    n_texts = len(tokens)
    if n_texts < 2:
        return 0.0
    counts = [[_ngrams(tok, n) for tok in tokens] for n in range(1, max_n + 1)]
    top: list[dict[tuple, tuple[int, int, int]]] = []  # ngram → (max count, holder, second max)
    for per_n in counts:
        table: dict[tuple, tuple[int, int, int]] = {}
        for idx, counter in enumerate(per_n):
            for gram, c in counter.items():
                best, holder, second = table.get(gram, (0, -1, 0))
                if c > best:
                    table[gram] = (c, idx, best)
                elif c > second:
                    table[gram] = (best, holder, c)
        top.append(table)
    lengths = sorted((len(tok), i) for i, tok in enumerate(tokens))
    hyps = list(range(n_texts))
    if sample_size is not None and sample_size < n_texts:
        hyps = random.Random(seed).sample(hyps, sample_size)
    total = 0.0
    for h in hyps:
        total += _bleu_one(h, tokens[h], counts, top, lengths, max_n)
    return total / len(hyps)


def _closest_other_length(h: int, hyp_len: int, lengths: list[tuple[int, int]]) -> int:
    pos = bisect.bisect_left(lengths, (hyp_len, -1))
    best = None
    for j in range(max(0, pos - 2), min(len(lengths), pos + 3)):
        length, idx = lengths[j]
        if idx == h:
            continue
        key = (abs(length - hyp_len), length)  # ties → shorter reference (as nltk)
        if best is None or key < best[0]:
            best = (key, length)
    return best[1] if best else hyp_len


def _bleu_one(h, tok, counts, top, lengths, max_n) -> float:
    hyp_len = len(tok)
    if hyp_len == 0:
        return 0.0
    log_sum = 0.0
    for n in range(max_n):
        hyp_counts = counts[n][h]
        denom = max(1, sum(hyp_counts.values()))
        matched = 0
        for gram, c in hyp_counts.items():
            best, holder, second = top[n][gram]
            other = second if holder == h else best
            matched += min(c, other)
        if n == 0 and matched == 0:  # no unigram matches: BLEU is 0 (as nltk)
            return 0.0
        if not hyp_counts:  # hypothesis shorter than n: nltk yields p_n = 0 → smoothed
            matched_p = EPSILON / denom
        else:
            matched_p = matched / denom if matched else EPSILON / denom
        log_sum += math.log(matched_p) / max_n
    ref_len = _closest_other_length(h, hyp_len, lengths)
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(log_sum)
