"""Build profiles: every setting that decides an artefact, per target (step counts, data slices, seeds).

``quick`` is what the tests need (a working parser, MLM head and classifiers; about 10 minutes in all on
2 free cores); ``full`` is the quality the docs report. ``micro`` exists for unit tests of the build
machinery (seconds, not a usable model). Builds stop at ``steps``, never at a wall-clock time, with a
fixed seed, data order and thread count, so a profile gives the same artefact and figures on any machine.
``checkpoint_every`` (not a setting of the result, so not in the manifest) makes a build resumable: the
full profile's builds take hours, the quick ones (minutes) write no checkpoints.
"""

from __future__ import annotations

import sys
from typing import Any

SEED = 13
THREADS = 2  # part of the profile: float reductions may differ with the thread count

PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "micro": {
        "parser": {"train_sentences": 32, "dev_sentences": 8, "test_sentences": 8, "max_len": 15, "steps": 6,
                   "batch_size": 8, "check_every": 3, "warmup_steps": 1, "d_model": 64, "num_layers": 1,
                   "checkpoint_every": 2},
        "mlm": {"train_sentences": 400, "held_out_sentences": 60, "eval_sentences": 60, "steps": 4, "batch_size": 8,
                "max_length": 32, "include_task_text": False, "top_layers": 1, "checkpoint_every": 2},
        "classifiers": {"train": 60, "dev": 30, "test": 30, "classic": False},
    },
    "quick": {
        # ~1.2 epochs of the PTB sample: dev F1 about 0.72 (the full run passed 0.726 after its first epoch)
        "parser": {"train_sentences": None, "dev_sentences": 120, "test_sentences": None, "max_len": 120,
                   "steps": 120, "batch_size": 32, "check_every": 60, "warmup_steps": 40},
        "mlm": {"train_sentences": None, "held_out_sentences": None, "eval_sentences": 300, "steps": 150,
                "batch_size": 32, "max_length": 40, "include_task_text": False},
        "classifiers": {"train": 2000, "dev": 800, "test": None, "classic": True},
    },
    "full": {
        # the step count the earlier time-capped build needed for test F1 0.857 (d_model 512, 4 layers)
        "parser": {"train_sentences": None, "dev_sentences": None, "test_sentences": None, "max_len": 120,
                   "steps": 1664, "batch_size": 32, "check_every": 101, "warmup_steps": 80, "checkpoint_every": 50},
        # the earlier resumed runs reached top-1 33.0 % after 6,986 steps of batch 32
        "mlm": {"train_sentences": None, "held_out_sentences": None, "eval_sentences": 1000, "steps": 7000,
                "batch_size": 32, "max_length": 40, "include_task_text": True, "checkpoint_every": 100},
        "classifiers": {"train": None, "dev": None, "test": None, "classic": True},
    },
}


def settings(profile: str, target: str) -> dict[str, Any]:
    """The settings of ``target`` under ``profile`` (with the profile's seed and thread count)."""
    if profile not in PROFILES:
        from alict_core.common.errors import AlictError

        raise AlictError(f"unknown build profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return {"seed": SEED, "threads": THREADS, **PROFILES[profile][target]}


def progress_interval() -> float:
    """Seconds between progress-bar refreshes: live on a terminal, every 30 s into a log file."""
    return 0.5 if sys.stderr.isatty() else 30.0
