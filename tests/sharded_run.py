"""A synthetic sharded run folder (docs/ARCHITECTURE.md, "Streaming runs"), written directly with pyarrow.

Fast enough for 200k rows in a test and 1M in ``benchmarks/bench_bigrun.py``. Shard N holds whole seeds
(a seed and its expansions); every model fails a fixed share of the rows, so counts are known exactly.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

LCS = (("sentiment-lc01", "Vocabulary"), ("sentiment-lc04", "Negation"), ("sentiment-lc05", "Negation"))
LABELS = ["negative", "neutral", "positive"]
Fails = Callable[[np.ndarray, np.ndarray, int], np.ndarray]  # (case index, seed number, model index) -> failed


def write_sharded_run(folder: Path, n_cases: int, *, shard_size: int = 10_000, models: tuple[str, ...] = ("m1", "m2"),
                      expansions_per_seed: int = 3, status: str = "done", shards_done: int | None = None,
                      pid: int | None = None, fails: Fails | None = None) -> dict[str, int]:
    """Write ``n_cases`` cases × ``models`` as results/part-*.parquet (+ progress/meta); return known counts.

    Case i of seed s fails for model m when ``(i + m_index) % 4 == 0``, or where ``fails(i, seed_number,
    m_index)`` (arrays) says so. ``status`` "running" leaves meta.json
    and summary.csv out and writes only ``shards_done`` parts.
    """
    group = expansions_per_seed + 1
    shard_size -= shard_size % group
    n_shards = -(-n_cases // shard_size)
    shards_done = n_shards if shards_done is None else shards_done
    (folder / "results").mkdir(parents=True, exist_ok=True)
    n_fail = n_rows = 0
    for shard in range(shards_done):
        idx = np.arange(shard * shard_size, min(n_cases, (shard + 1) * shard_size))
        seed_of = idx - idx % group
        kind = np.where(idx % group == 0, "seed", "expansion")
        lc = np.array([lc for lc, _ in LCS])[(idx // group) % len(LCS)]
        cap = np.array([cap for _, cap in LCS])[(idx // group) % len(LCS)]
        case_id = np.char.add("c", idx.astype(str))
        seed_id = np.char.add("c", seed_of.astype(str))
        text = np.char.add("synthetic sentence number ", idx.astype(str))
        tables = []
        for m_index, model in enumerate(models):
            failed = (idx + m_index) % 4 == 0 if fails is None else np.asarray(fails(idx, idx // group, m_index))
            proba = np.tile(np.array([0.1, 0.2, 0.7]), (len(idx), 1))
            proba[failed] = [0.7, 0.2, 0.1]
            tables.append(pa.table({
                "case_id": case_id, "lc_id": lc, "capability": cap, "test_type": np.full(len(idx), "MFT"),
                "kind": kind, "seed_id": seed_id, "text": text, "expected": np.full(len(idx), "positive"),
                "model": np.full(len(idx), model), "predicted": np.where(failed, "negative", "positive"),
                "probabilities": pa.array(proba.tolist(), type=pa.list_(pa.float64())), "passed": ~failed,
                "n_variants": np.zeros(len(idx), dtype=np.int64), "n_failing_variants": np.zeros(len(idx), np.int64),
                "failing_variant": pa.nulls(len(idx), pa.string()),
            }))
            n_fail += int(failed.sum())
            n_rows += len(idx)
        pq.write_table(pa.concat_tables(tables), folder / "results" / f"part-{shard:05d}.parquet")
    now = time.time()
    cases_done = min(n_cases, shards_done * shard_size)
    progress = {"status": status, "pid": os.getpid() if pid is None else pid, "host": socket.gethostname(),
                "started_at": now - 100, "updated_at": now, "n_shards": n_shards, "shards_done": shards_done,
                "n_cases": n_cases, "cases_done": cases_done, "models": list(models), "message": ""}
    (folder / "progress.json").write_text(json.dumps(progress))
    if status == "done":
        meta = {"run_id": folder.name, "seconds": 100.0, "extra": {}, "layout": "sharded", "shard_size": shard_size,
                "n_cases": n_cases, "n_shards": n_shards, "executor": "local", "workers": 1,
                "models": [{"name": m, "fingerprint": f"fp-{m}", "labels": LABELS} for m in models]}
        from alict_core.runner.reader import RunReader

        RunReader.open(folder).summary().to_csv(folder / "summary.csv", index=False)
        (folder / "meta.json").write_text(json.dumps(meta))
        from alict_core.common.manifest import write_manifest

        write_manifest(folder, "run", folder.name, n_rows)  # a finished run carries its manifest, as a real one does
    return {"n_rows": n_rows, "n_fail": n_fail, "n_shards": n_shards, "shard_size": shard_size}
