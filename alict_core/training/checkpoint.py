"""Resumable training: atomic checkpoints a killed build resumes from, ending with the same artefact.

A build of ``<root>/<profile>/<target>`` keeps its checkpoints beside the target, outside the staging
folder (which the next build deletes)::

    <root>/<profile>/.<target>.checkpoint/
        step-00000050/
            state.json            key, step, the trainer's JSON state, optimiser groups, RNG states
            tensors.safetensors   trained tensors, optimiser tensors, torch RNG state
            <extra>/              folders the trainer asks to keep (the parser's best-dev model)

A checkpoint is written into a ``.tmp-*`` folder and renamed into place (``state.json`` last, with the sha256
of every other file: a checkpoint whose files changed is removed, not resumed), so a build killed at any point
leaves the previous checkpoint intact. It is keyed by a hash of everything
that decides the result (settings, data, code format): a checkpoint with another key is removed, not
resumed. Nothing here unpickles: tensors go through safetensors, everything else through JSON; the
trainer restores every RNG it uses, so the resumed run continues bit for bit.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json, write_json
from alict_core.common.manifest import sha256_file

FORMAT = 3  # 2: state.json records the sha256 of every file of the checkpoint; 3: and its own (``sealed``)
SEAL = "sealed"  # state.json's hash of all its other fields: an edited training state is never resumed
STATE_FILE = "state.json"
TENSORS_FILE = "tensors.safetensors"
STEP_PREFIX = "step-"
EVERY_ENV = "ALICT_CHECKPOINT_EVERY"  # overrides the profile's checkpoint interval (0 = none)


def _file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file of a checkpoint folder but its state.json, by relative path."""
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != STATE_FILE}


def _sealed(state: dict[str, Any]) -> bool:
    """Whether state.json's fields are the ones written (its ``sealed`` hash of all the others matches)."""
    return state.get(SEAL) == hash_json({k: v for k, v in state.items() if k != SEAL})


def checkpoint_dir(folder: Path) -> Path:
    """The persistent checkpoint folder of the target folder ``folder``."""
    return folder.parent / f".{folder.name}.checkpoint"


@dataclasses.dataclass
class Resumed:
    """A checkpoint to resume from: its step, the trainer's JSON state, tensors and kept folders."""

    step: int
    state: dict[str, Any]
    tensors: dict[str, Any]
    folder: Path

    def extra(self, name: str) -> Path | None:
        path = self.folder / name
        return path if path.is_dir() else None


class Checkpoints:
    """The checkpoints of one build: ``resume(key)`` once, then ``save`` whenever ``due``; ``clear`` at the end."""

    def __init__(self, folder: Path, every: int | None, log: Callable[[str], None] = print) -> None:
        self.folder, self.every, self.log = Path(folder), every or None, log
        self.key: str | None = None

    def due(self, step: int, total: int) -> bool:
        """Whether to checkpoint after ``step`` (never after the last step: the artefact follows)."""
        return self.every is not None and self.key is not None and step % self.every == 0 and step < total

    def _complete(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        found = [p for p in self.folder.glob(STEP_PREFIX + "*")  # `step-00000004.bak`, a user's copy: not ours
                 if p.name[len(STEP_PREFIX):].isascii() and p.name[len(STEP_PREFIX):].isdigit()  # not `step-²`
                 and (p / STATE_FILE).is_file()]
        return sorted(found, key=lambda p: int(p.name[len(STEP_PREFIX):]), reverse=True)

    def resume(self, key: str) -> Resumed | None:
        """Bind the build's ``key``; return the newest checkpoint with that key (others are removed)."""
        from safetensors.torch import load_file

        self.key = key
        if not self.folder.is_dir():
            return None
        for stale in self.folder.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        for path in self._complete():
            try:
                state = read_json(path / STATE_FILE)
                if not isinstance(state, dict):
                    raise ValueError("state.json is not a JSON object")
                if state.get("format") != FORMAT or state.get("key") != key:
                    self.log(f"removing checkpoint {path.name}: built with other settings or data")
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                if state.get("files") != _file_hashes(path) or not _sealed(state):  # an edited tensor or training
                    self.log(f"removing checkpoint {path.name}: its files changed since it was written")  # state
                    shutil.rmtree(path, ignore_errors=True)  # (best dev, learning rate) was resumed and sealed
                    continue
                step = int(state["step"])
                tensors = load_file(str(path / TENSORS_FILE))
            except (OSError, ValueError, TypeError, KeyError) as exc:
                self.log(f"removing unreadable checkpoint {path.name}: {exc}")
                shutil.rmtree(path, ignore_errors=True)
                continue
            return Resumed(step, state, tensors, path)
        return None

    def save(self, step: int, state: dict[str, Any], tensors: dict[str, Any],
             extras: dict[str, tuple[Path, Any]] | None = None) -> Path:
        """Write the checkpoint of ``step`` atomically; keep only it. ``extras``: name → (folder, version);
        a folder whose version equals the previous checkpoint's is hard-linked, not copied."""
        from safetensors.torch import save_file

        if self.key is None:
            raise RuntimeError("Checkpoints.resume(key) must be called before save")
        self.folder.mkdir(parents=True, exist_ok=True)
        previous = self._complete()
        old_versions = read_json(previous[0] / STATE_FILE).get("extras", {}) if previous else {}
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.folder))
        try:
            save_file({name: t.detach().contiguous().clone() for name, t in tensors.items()}, str(tmp / TENSORS_FILE))
            versions: dict[str, Any] = {}
            for name, (source, version) in (extras or {}).items():
                if not source.is_dir():
                    continue
                kept = previous[0] / name if previous else None
                if kept is not None and kept.is_dir() and name in old_versions and old_versions[name] == version:
                    shutil.copytree(kept, tmp / name, copy_function=os.link)
                else:
                    shutil.copytree(source, tmp / name)
                versions[name] = version
            record = {"format": FORMAT, "key": self.key, "step": step, "extras": versions,
                      "files": _file_hashes(tmp), **state}
            write_json(tmp / STATE_FILE, record)
            written = read_json(tmp / STATE_FILE)  # sealed as it reads back (arrays, tuples and keys as JSON has them)
            write_json(tmp / STATE_FILE, {**written, SEAL: hash_json(written)})
            final = self.folder / f"{STEP_PREFIX}{step:08d}"
            if final.exists():
                shutil.rmtree(final)
            tmp.rename(final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        for old in previous:
            if old != final:
                shutil.rmtree(old, ignore_errors=True)
        return final

    def clear(self) -> None:
        """Remove every checkpoint (the artefact is in place)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def pending(root: Path | str | None = None) -> list[dict[str, Any]]:
    """Checkpoints a build left behind (killed or stopped): target, profile, step, folder — resumable."""
    from alict_core.models import artefacts

    rows = []
    for profile in (*artefacts.PROFILES, "micro"):
        for target in artefacts.TARGETS:
            built = artefacts.profile_dir(target, profile, root)
            folder = checkpoint_dir(built)
            newest = Checkpoints(folder, None)._complete()
            if newest and _older_than_artefact(newest[0], built):  # a kill after the swap, before its removal:
                continue  # the build finished (a newer build's checkpoint is still resumable)
            if newest:
                rows.append({"target": target, "profile": profile, "step": int(newest[0].name[len(STEP_PREFIX):]),
                             "path": str(newest[0])})
    return rows


def _older_than_artefact(step: Path, built: Path) -> bool:
    """Whether checkpoint ``step`` was saved before the artefact in ``built`` was sealed (it is that build's)."""
    try:
        return (built / "manifest.json").stat().st_mtime >= step.stat().st_mtime
    except OSError:
        return False


# -- state that is not a module's parameters ------------------------------------------------------------
def rng_state(named: dict[str, random.Random] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON and tensor parts of the global Python, NumPy and torch RNG states (+ ``named`` Random instances)."""
    import numpy as np
    import torch

    name, keys, pos, has_gauss, cached = np.random.get_state()  # type: ignore[misc]
    as_json: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": [name, np.asarray(keys).tolist(), int(pos), int(has_gauss), float(cached)],
        "named": {key: rng.getstate() for key, rng in (named or {}).items()},
    }
    return as_json, {"rng.torch": torch.get_rng_state()}


def _python_state(saved: list[Any]) -> tuple[Any, ...]:
    version, internal, gauss = saved
    return version, tuple(internal), gauss


def restore_rng(state: dict[str, Any], tensors: dict[str, Any], named: dict[str, random.Random] | None = None) -> None:
    """Restore what ``rng_state`` captured."""
    import numpy as np
    import torch

    random.setstate(_python_state(state["python"]))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    for key, rng in (named or {}).items():
        rng.setstate(_python_state(state["named"][key]))
    torch.set_rng_state(tensors["rng.torch"])


def optimiser_state(optimiser: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON (param groups, scalar state) and tensor parts of an optimiser's state."""
    import torch

    saved = optimiser.state_dict()
    tensors: dict[str, Any] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for index, entry in saved["state"].items():
        for name, value in entry.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{index}.{name}"] = value
            else:
                scalars.setdefault(str(index), {})[name] = value
    return {"param_groups": saved["param_groups"], "scalars": scalars}, tensors


def restore_optimiser(optimiser: Any, state: dict[str, Any], tensors: dict[str, Any]) -> None:
    """Load what ``optimiser_state`` captured into ``optimiser`` (built with the same parameters)."""
    entries: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, index, name = key.split(".", 2)
            entries.setdefault(int(index), {})[name] = value
    for index, scalars in state["scalars"].items():
        entries.setdefault(int(index), {}).update(scalars)
    groups = [{k: tuple(v) if isinstance(v, list) and k != "params" else v for k, v in group.items()}
              for group in state["param_groups"]]
    optimiser.load_state_dict({"state": entries, "param_groups": groups})
