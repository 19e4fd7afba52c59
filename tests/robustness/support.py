"""Small real fixtures shared by the robustness tables: a keyword model and a handful of cases."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from alict_core.runner import build_cases


class KeywordModel:
    """negative if 'bad' in text, positive if 'good', else neutral; counts the texts it predicts."""

    labels = ("negative", "neutral", "positive")

    def __init__(self, name: str = "kw") -> None:
        self.name = name
        self.fingerprint = f"kw-robustness:{name}"
        self.seen: list[str] = []

    def predict_proba(self, texts):
        self.seen.extend(texts)
        out = np.full((len(texts), 3), 0.1)
        for i, t in enumerate(texts):
            out[i, 0 if "bad" in t else 2 if "good" in t else 1] = 0.8
        return out


TEXTS = ["a good film", "a bad film", "a film", "good and bad", "truly good", "so bad it hurts", "plain", "good grief"]


def small_cases(n: int = 8, label: str = "positive"):
    """``n`` MFT seed cases of one LC expecting ``label`` (some pass, some fail with KeywordModel)."""
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"{TEXTS[i % len(TEXTS)]} {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": [label]}, "capability": "Vocabulary"} for i in range(n)]
    return build_cases(seeds)


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """relative path -> bytes of every file under ``root`` (to compare artefacts before and after)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(Path(root).rglob("*")) if p.is_file()}


@contextmanager
def as_unprivileged_real_user() -> Iterator[None]:
    """As root, make the real user and group ``nobody`` for the block (the effective ids stay root, so files open
    as before). ``os.access`` checks the real ids, so a folder only root may write reads as not writable, as it
    does for any other user: the permission checks are exercised as root too. Not root: nothing changes."""
    if os.geteuid() != 0:
        yield
        return
    nobody = pwd.getpwnam("nobody")
    os.setresgid(nobody.pw_gid, 0, 0)
    os.setresuid(nobody.pw_uid, 0, 0)
    try:
        yield
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)


def review_page(review: str, reviewer: str):
    """The Review page (AppTest, the whole app) opened from a shared link ``?review=…&reviewer=…``."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["review"] = review
    at.query_params["reviewer"] = reviewer
    at.run()
    return at.switch_page("pages/review.py").run()


def seed_row(**change) -> dict:
    """One sentiment LC4 seed row as a `--seeds` file holds it, with ``change`` applied."""
    return {"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a fine film", "test_type": "MFT",
            "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}, **change}


def expansion_argv(tmp_path: Path, command: str, change: dict) -> list[str]:
    """``command`` (validate, run or fidelity) of LC4 over one seed and one accepted expansion row with ``change``
    applied: the seeds in ``s.jsonl``, the row in ``x.jsonl``, a run's output in ``r``."""
    import json

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    exps = tmp_path / "x.jsonl"
    exps.write_text(json.dumps({"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment",
                                "text": "a very fine film", "accepted": True, **change}) + "\n")
    argv = {"validate": ["validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds)],
            "run": ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
                    str(tmp_path / "r")],
            "fidelity": ["fidelity", "--task", "sentiment", "--lc", "4"]}[command]
    return [*argv, "--expansions", str(exps)]


def workspace_spec(workspace: Path, spec_id: str) -> Path:
    """A workspace copy of the shipped sentiment LC1 spec under the id ``spec_id`` (``<workspace>/specs/sentiment``)."""
    folder = workspace / "specs" / "sentiment"
    folder.mkdir(parents=True, exist_ok=True)
    shipped = Path(__file__).resolve().parents[2] / "specs" / "sentiment" / "sentiment-lc01.yaml"
    mine = folder / f"{spec_id}.yaml"
    mine.write_text(shipped.read_text(encoding="utf-8").replace("id: sentiment-lc01", f"id: {spec_id}"),
                    encoding="utf-8")
    return mine


def cancelled_run(folder: Path, cases: list, cache: Path) -> None:
    """A streaming run of ``cases`` (shards of 10, the test models) into ``folder``, cancelled after its second
    shard: an unfinished run with finished shards, as a kill leaves it."""
    import pytest

    from alict_core.runner import RunCancelled
    from alict_core.runner.stream import run_streaming
    from tests.test_stream import MODELS

    seen: list[int] = []
    with pytest.raises(RunCancelled):
        run_streaming(cases, MODELS, run_dir=folder, shard_size=10, cache_root=cache,
                      progress=lambda done, total, message: seen.append(done) if total else None,
                      should_stop=lambda: len(seen) > 1)


class SleepyWorker:
    """A shard worker that writes its pid to ``<task["pid_file"]>`` and sleeps ``task["seconds"]`` (orphan tests)."""

    def __call__(self, task: dict) -> dict:
        import os
        import time

        Path(task["pid_file"]).write_text(str(os.getpid()))
        time.sleep(float(task["seconds"]))
        return {"shard": 0}


class LoopbackService:
    """A JSON service on loopback for the endpoint rows: each POST is answered by ``respond(path, headers, request,
    number)`` -> (status, JSON body); ``number`` counts the POSTs (also ``requests``). ``base``: its root URL."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self
        self.requests = 0
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                with outer.lock:
                    outer.requests += 1
                    number = outer.requests
                status, body = outer.respond(self.path, self.headers, request, number)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client timed out and left
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def respond(self, path: str, headers, request, number: int) -> tuple[int, object]:
        raise NotImplementedError

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_answer(content: str) -> dict:
    """An OpenAI-compatible chat completion answering ``content``."""
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}
