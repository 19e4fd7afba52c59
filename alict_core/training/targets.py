"""Build targets by name: train one artefact of one profile safely into ``<root>/<profile>/<target>``."""

from __future__ import annotations

import importlib
import inspect
import os
import time
from pathlib import Path
from typing import Any, Callable

from alict_core.common.jsonl import write_json
from alict_core.models import artefacts
from alict_core.training import profiles
from alict_core.training.checkpoint import EVERY_ENV, Checkpoints, checkpoint_dir
from alict_core.training.staging import build_lock, new_staging, publish, recover

# target → module with ``train(out: Path, cfg: dict, progress, log) -> dict`` (imported lazily: torch)
TRAINERS: dict[str, str] = {
    "classifiers": "alict_core.training.classifiers",
    "parser": "alict_core.training.parser",
    "mlm": "alict_core.training.mlm",
}
ORDER = ("classifiers", "parser", "mlm")  # classifiers first: the app's pages need them soonest


def build(target: str, profile: str = "quick", root: Path | str | None = None, *, wait: bool = True,
          force: bool = True, progress: Callable[[int, int], None] | None = None,
          log: Callable[[str], None] = print,
          trainer: Callable[..., dict[str, Any]] | None = None) -> artefacts.Artefact:
    """Train ``target`` with ``profile`` into ``<root>/<profile>/<target>`` and return the sealed artefact.

    Holds the target's file lock throughout (``wait`` for a running build, else BuildLockedError); the
    previous artefact stays in place until the new one is complete. With ``force=False`` an existing
    artefact of that profile (perhaps just finished by the build we waited for) is kept.
    A trainer that takes ``checkpoints`` saves one every ``checkpoint_every`` steps (the profile's, or
    ``$ALICT_CHECKPOINT_EVERY``) into ``<root>/<profile>/.<target>.checkpoint/``; a killed build resumes
    from it and ends with the same artefact; it is removed once the artefact is in place.
    ``trainer`` replaces the target's training function (tests).
    """
    target = artefacts.canonical(target)
    cfg = profiles.settings(profile, target)
    every = checkpoint_interval(cfg.pop("checkpoint_every", None))  # not a setting of the result
    folder = artefacts.profile_dir(target, profile, root)
    with build_lock(folder, wait=wait, log=log):
        recover(folder)
        if not force and artefacts.has_manifest(folder):
            try:
                return artefacts.Artefact(target, profile, folder, artefacts.verify(folder, target))
            except artefacts.ArtefactCorruptError as exc:  # `build missing` repairs a damaged artefact
                log(f"{exc}: building it again")
        artefacts.check_build_folder(folder, target)  # never a user's folder replaced whole
        train = trainer or importlib.import_module(TRAINERS[target]).train
        staging = new_staging(folder)
        log(f"== building {target} ({profile} profile) into {folder}")
        reporter = ProgressFile(artefacts.progress_path(target, profile, root), target, profile, progress)
        checkpoints = Checkpoints(checkpoint_dir(folder), every, log)
        extra = {"checkpoints": checkpoints} if "checkpoints" in inspect.signature(train).parameters else {}
        try:
            info = train(staging, cfg, progress=reporter, log=log, **extra)
            manifest = publish(staging, folder, {"target": target, "profile": profile, "settings": cfg, **info})
            checkpoints.clear()
        finally:
            reporter.close()
    log(f"== {target} built at {folder}")
    return artefacts.Artefact(target, profile, folder, manifest)


def checkpoint_interval(profile_every: int | None) -> int | None:
    """Steps between checkpoints: ``$ALICT_CHECKPOINT_EVERY`` when set (0 = none), else the profile's."""
    raw = os.environ.get(EVERY_ENV, "").strip()
    if not raw:
        return profile_every or None
    if not (raw.isascii() and raw.isdigit()):  # "１０" and "1_0" are digits to int(), not to a person
        from alict_core.common.errors import AlictError

        raise AlictError(f"{EVERY_ENV}={raw!r} is not a whole number of steps (0 = no checkpoints)")
    return int(raw) or None


class ProgressFile:
    """Progress callback that also keeps ``<profile>/.<target>.progress.json`` current (at most every 2 s)."""

    def __init__(self, path: Path, target: str, profile: str,
                 forward: Callable[[int, int], None] | None = None) -> None:
        self.path, self.forward = path, forward
        self.started = time.time()
        self.last = 0.0
        self.first: tuple[int, float] | None = None
        self.row: dict[str, Any] = {"target": target, "profile": profile, "pid": os.getpid(), "state": "running",
                                    "step": 0, "total": None, "eta_seconds": None, "started": self.started}
        self._write()

    def _write(self) -> None:
        self.row["updated"] = time.time()
        write_json(self.path, self.row)

    def __call__(self, step: int, total: int) -> None:
        if self.forward:
            self.forward(step, total)
        now = time.time()
        if self.first is None:  # the rate counts from the first step (data loading is not a step)
            self.first = (step, now)
        if now - self.last < 2 and step < total:
            return
        self.last = now
        done, elapsed = step - self.first[0], now - self.first[1]
        eta = 0 if step >= total else (round((total - step) * elapsed / done) if done > 0 else None)
        self.row.update(step=step, total=total, eta_seconds=eta)
        self._write()

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def missing(profile: str, root: Path | str | None = None) -> list[str]:
    """Targets to build for ``build missing``: quick → those with no usable artefact of any profile
    (legacy included); full → those with no full artefact."""
    if profile == "full":
        return [t for t in ORDER if not artefacts.has_manifest(artefacts.profile_dir(t, "full", root))
                or _damaged(t, "full", root)]
    return [t for t in ORDER if _damaged(t, profile, root) or not _usable(t, root)]


def _usable(target: str, root: Path | str | None) -> bool:
    try:
        return artefacts.is_built(target, root)
    except artefacts.ArtefactCorruptError:  # a damaged manifest: built again, never a crash of the repair
        return False


def _damaged(target: str, profile: str, root: Path | str | None) -> bool:
    """Whether ``profile``'s artefact of ``target`` has a manifest that cannot be read (``build missing`` builds
    it again; a full ``verify`` with hashing is left to the loaders)."""
    folder = artefacts.profile_dir(target, profile, root)
    if not artefacts.has_manifest(folder):
        return False
    try:
        artefacts.read_manifest(folder / artefacts.MANIFEST)
    except artefacts.ArtefactCorruptError:
        return True
    return False
