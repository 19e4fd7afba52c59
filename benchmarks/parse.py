"""Parser throughput: batched vs one-sentence-at-a-time parsing, and cached re-parses.

    python benchmarks/parse.py [--sentences 128] [--batch 64] [--threads 2] [--model PATH]

Parses real SST dev sentences (PTB-style tokens) with the offline benepar model, each mode with
an empty parse cache, and prints sentences/s for (a) ``parse_batch`` with network batches of
``--batch`` sentences, (b) batches of one sentence, (c) the same batch again from the cache,
and the ratios a/b and c/a.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing


def sst_sentences(limit: int) -> list[list[str]]:
    import nltk

    from alict_core.data.files import data_file

    out = []
    with open(data_file("sst/dev.txt"), encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                out.append(nltk.Tree.fromstring(line).leaves())
            if len(out) >= limit:
                break
    return out


def timed(parser, sentences) -> float:  # noqa: ANN001
    start = time.perf_counter()
    parser.parse_batch(sentences)
    return len(sentences) / (time.perf_counter() - start)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--sentences", type=int, default=128)
    args.add_argument("--batch", type=int, default=64)
    args.add_argument("--threads", type=int, default=2)
    args.add_argument("--model", default=None, help="model directory (default: the built offline parser)")
    opts = args.parse_args()

    import torch

    torch.set_num_threads(opts.threads)
    from alict_core.models import artefacts
    from alict_core.parsing.benepar_backend import BeneparParser

    model = Path(opts.model) if opts.model else artefacts.require("parser").path
    sentences = sst_sentences(opts.sentences)
    words = sum(len(s) for s in sentences)
    print(f"{len(sentences)} SST dev sentences, {words / len(sentences):.1f} tokens on average, {opts.threads} threads")
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        batched = BeneparParser("bench", model, cache_root=Path(a), batch_sentences=opts.batch)
        single = BeneparParser("bench", model, cache_root=Path(b), batch_sentences=1)
        timed(batched, sentences[:4])  # warm-up (not counted; also cached, so use other sentences below)
        timed(single, sentences[:4])
        rest = sentences[4:]
        rate_batched = timed(batched, rest)
        rate_single = timed(single, rest)
        rate_cached = timed(batched, rest)
    print(f"batched ({opts.batch}/batch): {rate_batched:8.1f} sentences/s")
    print(f"unbatched (1/batch):   {rate_single:8.1f} sentences/s")
    print(f"cached re-parse:       {rate_cached:8.1f} sentences/s")
    print(f"ratio batched/unbatched: {rate_batched / rate_single:.2f}x; "
          f"cached/batched: {rate_cached / rate_batched:.0f}x")


if __name__ == "__main__":
    main()
