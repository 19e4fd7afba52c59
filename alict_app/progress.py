"""Progress with an ETA for long jobs on a page (Run, Harden): elapsed time and time left from the share done."""

from __future__ import annotations

import time
from typing import Any, Mapping

from alict_app.formatting import literal

MIN_SHARE_FOR_ETA = 0.02  # before this share is done, the ETA would be a guess


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def eta_text(fraction: float, elapsed: float) -> str:
    """'ETA 1 min 05 s' from the share done and the seconds so far ('ETA after the first steps' before)."""
    if fraction < MIN_SHARE_FOR_ETA:
        return "ETA after the first steps"
    return f"ETA {duration_text(elapsed * (1 - fraction) / fraction)}"


class StagedProgress:
    """One overall bar over weighted stages (e.g. export 0.1, retrain 0.4, evaluate 0.5): each stage reports
    ``(done, total, message)``; the bar shows the overall share, the stage, time so far and the ETA."""

    def __init__(self, bar: Any, stages: Mapping[str, float]) -> None:
        total = sum(stages.values())
        self.bar = bar
        self.offsets: dict[str, tuple[float, float]] = {}
        start = 0.0
        for name, weight in stages.items():
            self.offsets[name] = (start, weight / total)
            start += weight / total
        self.started = time.monotonic()
        self.fraction = 0.0
        self.shown = ""  # the text the bar shows now: what a page keeps to redraw the finished bar as it was

    def text(self, stage: str, message: str) -> str:
        elapsed = time.monotonic() - self.started
        step = list(self.offsets).index(stage) + 1
        return (f"step {step} of {len(self.offsets)}, {stage}: {literal(message[:60])} · {self.fraction:.0%} · "
                f"{duration_text(elapsed)} so far · {eta_text(self.fraction, elapsed)}")

    def update(self, stage: str, done: int, total: int, message: str = "") -> None:
        start, width = self.offsets[stage]
        share = min(max(done / total, 0.0), 1.0) if total else 0.0
        self.fraction = max(self.fraction, start + width * share)  # never backwards
        self.shown = self.text(stage, message or stage)
        self.bar.progress(min(self.fraction, 1.0), text=self.shown)
