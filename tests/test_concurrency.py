"""Shared models and load-once caches under concurrent use (threads stand in for browser sessions)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from test_trust import make_tiny_bert

from alict_core.common.caching import LoadOnceCache
from alict_core.models import MODELS, get_model


def test_one_load_per_key_however_many_callers_wait():
    calls = []
    gate = threading.Event()

    def load():
        calls.append(1)
        gate.wait(5)
        return object()

    cache: LoadOnceCache[object] = LoadOnceCache("t", max_entries=4)
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(cache.get, "k", load) for _ in range(8)]
        time.sleep(0.2)
        gate.set()
        values = {id(f.result()) for f in futures}
    assert len(calls) == 1 and len(values) == 1


def test_a_slow_load_does_not_block_other_keys():
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(120)  # released below, after "b": a "b" held up by "a" would return only after this load
        return "slow"

    cache: LoadOnceCache[str] = LoadOnceCache("t", max_entries=4)
    thread = threading.Thread(target=cache.get, args=("a", slow))
    thread.start()
    assert started.wait(5)
    assert cache.get("b", lambda: "fast") == "fast"
    assert "a" not in cache  # "b" was served while "a" is still loading: no clock needed
    release.set()
    thread.join(5)
    assert cache.get("a", lambda: "again") == "slow"


def test_bounded_with_eviction_and_close():
    class Closable:
        closed = False

        def close(self):
            self.closed = True

    cache: LoadOnceCache[Closable] = LoadOnceCache("t", max_entries=2)
    first = cache.get(1, Closable)
    cache.get(2, Closable)
    cache.get(1, Closable)  # 1 is now the most recently used
    cache.get(3, Closable)  # evicts 2
    assert len(cache) == 2 and 2 not in cache and 1 in cache and not first.closed
    evicted = cache.peek(3)
    cache.get(4, Closable)
    cache.get(5, Closable)
    assert evicted is not None and evicted.closed


def test_a_failed_load_raises_and_the_next_caller_tries_again():
    cache: LoadOnceCache[str] = LoadOnceCache("t")
    with pytest.raises(RuntimeError, match="boom"):
        cache.get("k", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    assert "k" not in cache and cache.get("k", lambda: "ok") == "ok"


def test_get_model_loads_per_model_without_a_global_lock():
    release, started = threading.Event(), threading.Event()
    built = []

    class Fake:
        labels = ("negative", "neutral", "positive")

        def __init__(self, name):
            self.name = name

    def slow_factory(**_):
        built.append(1)
        started.set()
        release.wait(120)  # released below: a fast model held up by this load would come back only after it
        return Fake("slow")

    MODELS.add("slow-test-model", slow_factory, "test", task="sentiment", offline=True, kind="test")
    MODELS.add("fast-test-model", lambda **_: Fake("fast"), "test", task="sentiment", offline=True, kind="test")
    try:
        with ThreadPoolExecutor(3) as pool:
            first = pool.submit(get_model, "slow-test-model")
            assert started.wait(5)
            second = pool.submit(get_model, "slow-test-model")  # waits for the in-flight load
            assert get_model("fast-test-model").name == "fast"  # another model is not held up:
            assert not second.done()  # served while the slow load is still in flight
            release.set()
            assert first.result(5) is second.result(5)
        assert len(built) == 1
    finally:
        release.set()
        MODELS.remove("slow-test-model")
        MODELS.remove("fast-test-model")


def test_shared_transformer_model_under_8_threads_matches_serial(tmp_path):
    import torch

    from alict_core.models.hf import HFClassifier

    threads_before = torch.get_num_threads()
    model = HFClassifier(make_tiny_bert(tmp_path / "tiny"), "sentiment")
    assert torch.get_num_threads() == threads_before  # constructors leave the process settings alone
    words = "the movie is good a bad film it ok".split()
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 12))) for _ in range(50)]
    serial = [model.predict_proba([t]) for t in texts]
    active, peak, forward = [0], [0], model.model.forward
    counter = threading.Lock()

    def watched_forward(*args, **kwargs):  # records how many forwards overlap
        with counter:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            time.sleep(0.001)
            return forward(*args, **kwargs)
        finally:
            with counter:
                active[0] -= 1

    model.model.forward = watched_forward

    def worker(offset: int) -> list[np.ndarray]:
        order = [(i + offset) % len(texts) for i in range(len(texts))]
        return [(i, model.predict_proba([texts[i]])) for i in order]

    with ThreadPoolExecutor(8) as pool:
        results = [pair for chunk in pool.map(worker, range(8)) for pair in chunk]
    assert len(results) == 400 and peak[0] == 1  # tokenizer + forward serialised per model instance
    for i, proba in results:
        np.testing.assert_allclose(proba, serial[i], atol=1e-6)
