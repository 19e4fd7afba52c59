"""Story page speed: time to the filled page (cards with their word colours) on a warm server.

    python benchmarks/bench_story.py [--seeds 20] [--repeat 3] [--drop-story]

Makes two small runs of the quick ``minilm-sst`` model in a temporary run store (through the app's own run
path, so a finished run gets its precomputed ``story.json``), then, in one process (one "server"), opens the
Story of run A (cold: imports, model load), then of run B (warm server, a run not yet shown), then run B again
(warm caches). ``--drop-story`` deletes the runs' ``story.json`` first: the page then computes the story itself,
as for a run saved before stories were precomputed (and saves it, so the repeat reads it).
Prints seconds per step (AppTest script time: the page's script from start to the last card).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
LC_SETS = (("sentiment-lc01", "sentiment-lc04"), ("sentiment-lc05", "sentiment-lc08"))


def make_run(lcs: tuple[str, ...], seeds: int) -> str:
    from alict_app import runs
    from alict_core.lcspec import load_task_specs

    specs = {s.id: s for s in load_task_specs("sentiment") if s.id in lcs}
    request = runs.RunRequest(task="sentiment", lc_ids=list(lcs), max_seeds=seeds,
                              models=[{"name": "minilm-sst", "kwargs": {}, "label": "minilm-sst"}])
    return runs.execute(request, specs, lambda _message, _fraction: None)


def open_story(key: str) -> float:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.query_params["run"] = key
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Story", at.title[0].value
    cards = [m.value for m in at.markdown if m.value.startswith("Expected **")]
    colours = sum('class="alict-contrib"' in m.value for m in at.markdown)
    assert cards and colours == len(cards), (len(cards), colours)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3, help="how often to reopen run B (median printed)")
    parser.add_argument("--drop-story", action="store_true", help="delete story.json: time the fallback")
    args = parser.parse_args()
    from alict_app import runs

    root = Path(tempfile.mkdtemp(prefix="bench-story-"))
    runs.runs_root = lambda: root  # type: ignore[assignment]
    os.environ["ALICT_DEMO_MODE"] = "1"  # the app opens on the Story of ?run=
    started = time.perf_counter()
    keys = [make_run(lcs, args.seeds) for lcs in LC_SETS]
    print(f"two runs of {args.seeds} seeds per LC made in {time.perf_counter() - started:.1f} s "
          f"(story.json written: {[(root / k / 'story.json').is_file() for k in keys]})")
    if args.drop_story:
        for key in keys:
            (root / key / "story.json").unlink(missing_ok=True)
    print(f"Story of run A, cold server: {open_story(keys[0]):.2f} s")
    print(f"Story of run B, warm server, first view: {open_story(keys[1]):.2f} s")
    again = [open_story(keys[1]) for _ in range(args.repeat)]
    print(f"Story of run B again (median of {args.repeat}): {statistics.median(again):.2f} s")


if __name__ == "__main__":
    main()
