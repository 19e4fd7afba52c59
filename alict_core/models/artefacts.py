"""Built model artefacts: locate, verify and describe them (runtime side; never imports training code).

Layout under ``<cache>/models`` (``config.models_dir()``)::

    <profile>/<target>/          profile "full" or "quick" (or "micro", tests only); target below
        manifest.json            written last by the build: see ``Manifest``
        ...                      the target's own files (every one listed with its sha256)
    <target>/                    legacy artefacts of the earlier, time-capped builds (no manifest)

Targets: ``parser`` (benepar directory), ``mlm`` (MiniLM masked-LM delta), ``classifiers``
(embedded heads, one sub-folder per model). ``locate`` prefers ``full``, then ``quick``, then the
legacy folder; ``ALICT_MODEL_PROFILE`` pins one profile. ``verify`` checks every file's sha256
against the manifest (once per process per unchanged folder).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from alict_core.common import config
from alict_core.common.errors import AlictError, ArtefactMissingError
from alict_core.common.jsonl import read_json
from alict_core.common.manifest import sha256_file  # the one file checksum (shared with artefact manifests)

MANIFEST = "manifest.json"
FORMAT = 1
TARGETS: dict[str, str] = {
    "parser": "benepar ChartParser on frozen MiniLM features (PTB sample)",
    "mlm": "MiniLM-L6 masked-LM head (fine-tuned top layers)",
    "classifiers": "MiniLM embeddings + logistic heads (minilm-sst, minilm-hatexplain)",
}
TARGET_ALIASES = {"models": "classifiers"}
PROFILES = ("full", "quick")  # runtime preference order; "micro" exists only for tests
LEGACY = "legacy"
PROFILE_ENV = "ALICT_MODEL_PROFILE"
# The files whose presence makes a legacy (manifest-less) folder usable, per target.
LEGACY_MARKERS: dict[str, tuple[str, ...]] = {
    "parser": ("benepar_model.bin", "config.json", "metrics.json"),
    "mlm": ("mlm_delta.safetensors", "meta.json"),
    "classifiers": ("minilm-sst/head.npz", "minilm-sst/meta.json", "minilm-hatexplain/head.npz",
                    "minilm-hatexplain/meta.json"),
}


class ArtefactCorruptError(AlictError):
    """A built artefact does not match its manifest (a file changed, vanished or was added)."""


@dataclasses.dataclass(frozen=True)
class Artefact:
    """One located artefact folder: its target, profile and manifest (``{}`` for legacy folders)."""

    target: str
    profile: str
    path: Path
    manifest: dict[str, Any]

    @property
    def steps(self) -> int | None:
        return self.manifest.get("steps") if self.manifest else self.figures.get("steps")

    @property
    def figures(self) -> dict[str, Any]:
        """Held-out figures: from the manifest, or read from a legacy folder's own metrics files."""
        if self.manifest:
            figures = self.manifest.get("figures", {})
            return dict(figures) if isinstance(figures, dict) else {}  # a hand-edited manifest: no figures
        return legacy_figures(self.target, self.path)

    def describe(self) -> dict[str, Any]:
        """JSON-able summary (for ``build --report``, the sidebar and run metadata)."""
        return {"target": self.target, "profile": self.profile, "path": str(self.path), "steps": self.steps,
                "seed": self.manifest.get("seed"), "figures": self.figures,
                "built_at": self.manifest.get("built_at"), "verified": bool(self.manifest)}


def canonical(target: str) -> str:
    """The target's canonical name (``models`` → ``classifiers``); unknown names list the valid ones."""
    name = TARGET_ALIASES.get(target, target)
    if name not in TARGETS:
        raise AlictError(f"unknown model target {target!r}; choose one of {', '.join([*TARGETS, *TARGET_ALIASES])}")
    return name


def models_root(root: Path | str | None = None) -> Path:
    """The models folder: ``root`` when given (``build --out``), else ``<cache>/models``."""
    return Path(root).expanduser() if root else config.models_dir()  # not created by a read (writers create
    # their folders): `build --report` on an empty cache wrote <cache>/models


def profile_dir(target: str, profile: str, root: Path | str | None = None) -> Path:
    """Where ``target`` of ``profile`` lives (``legacy``: the old un-profiled folder)."""
    base = models_root(root)
    target = canonical(target)
    return base / target if profile == LEGACY else base / profile / target


def artefact_files(folder: Path) -> list[str]:
    """Relative paths of every file of an artefact folder except the manifest, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def file_hashes(folder: Path) -> dict[str, str]:
    return {rel: sha256_file(folder / rel) for rel in artefact_files(folder)}


def has_manifest(folder: Path) -> bool:
    """Whether the folder has a manifest entry of any kind: one that is not a regular file (a pipe, a folder) is
    a broken artefact for ``verify`` to name, never "not built"."""
    return os.path.lexists(folder / MANIFEST)


def _build_name(target: str) -> str:
    """The `alict build` target that builds ``target`` (classifiers are built as ``models``)."""
    return "models" if target == "classifiers" else target


def not_regular(folder: Path) -> list[str]:
    """Entries of an artefact folder that are neither folders nor regular files (pipes, devices, sockets, dangling
    links): reading one would block or fail, so ``verify`` names them before it hashes anything."""
    found = []
    for entry in sorted(folder.rglob("*")):
        if not entry.is_dir() and not entry.is_file():
            found.append(entry.relative_to(folder).as_posix())
    return found


def is_legacy_complete(target: str, folder: Path) -> bool:
    return folder.is_dir() and all((folder / marker).exists() for marker in LEGACY_MARKERS[target])


_VERIFIED: dict[tuple[str, tuple], dict[str, Any]] = {}
_VERIFY_LOCK = threading.Lock()


def _identity(folder: Path) -> tuple:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return tuple((p.as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in files)


def verify(folder: Path | str, target: str | None = None) -> dict[str, Any]:
    """The folder's manifest after checking every file's sha256 against it; raises ArtefactCorruptError.

    The result is remembered per process while no file of the folder changes (size or mtime).
    """
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not os.path.lexists(manifest_path):
        raise ArtefactMissingError(f"{folder} has no {MANIFEST}; rebuild it with `alict build`")
    odd = not_regular(folder) + ([MANIFEST] if manifest_path.is_dir() else [])
    if odd:  # a pipe would block the hash or the manifest read; a folder manifest cannot be read
        raise ArtefactCorruptError(f"artefact {folder}: {', '.join(odd[:3])} {'is' if len(odd) == 1 else 'are'} not "
                                   f"a regular file (a pipe, device, socket, folder or dangling link); fix: "
                                   f"`alict build {_build_name(folder.name)} --profile {folder.parent.name}`")
    key = (str(folder.resolve()), _identity(folder))
    with _VERIFY_LOCK:
        if key in _VERIFIED:
            return _VERIFIED[key]
    manifest = read_manifest(manifest_path)
    if target is not None and manifest.get("target") != canonical(target):
        raise ArtefactCorruptError(f"{folder} holds a {manifest.get('target')!r} artefact, not {target!r}")
    expected: dict[str, str] = manifest.get("files", {})
    actual = artefact_files(folder)
    extra = sorted(set(actual) - set(expected))
    missing = sorted(set(expected) - set(actual))
    changed = sorted(rel for rel in set(expected) & set(actual) if sha256_file(folder / rel) != expected[rel])
    if extra or missing or changed:
        problems = [f"{label}: {', '.join(names[:3])}" for label, names in
                    (("changed", changed), ("missing", missing), ("unexpected", extra)) if names]
        fix = f"alict build {manifest.get('target', '')} --profile {manifest.get('profile', 'quick')}"
        raise ArtefactCorruptError(f"artefact {folder} does not match its manifest ({'; '.join(problems)}); "
                                   f"fix: `{fix}`")
    with _VERIFY_LOCK:
        _VERIFIED[key] = manifest
    return manifest


def check_build_folder(folder: Path, target: str) -> None:
    """Refuse, before a build, a target folder holding what ALiCT did not build there: the build swaps the folder
    whole (a user's files in ``<out>/quick/parser`` were deleted, a saved run copied there too, a link was renamed
    aside). An artefact of this target (files its manifest lists) or one whose manifest is cut short is rebuilt."""
    folder = Path(folder)
    if folder.parent.is_symlink():  # `<out>/micro` a link to the data folder, a saved run or the store's quick/
        raise AlictError(f"{folder.parent} is a symbolic link: a build writes {folder.name} into the folder it points "
                         "to (which no check of --out covers); give --out where the profile folder is itself")
    if folder.is_symlink():
        raise AlictError(f"{folder} is a symbolic link: a build replaces the folder whole (the link, not the folder "
                         "it points to); give --out where the folder is itself")
    if not folder.exists():
        return
    if not folder.is_dir():
        raise AlictError(f"{folder} exists and is not a folder; move it away to build {target} there")
    names = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*")
                   if path.is_symlink() or not path.is_dir())
    listed = {MANIFEST}
    path = folder / MANIFEST
    try:
        manifest = read_json(path) if os.path.lexists(path) else None
    except (ValueError, OSError):
        if _cut_short_manifest(path):  # ALiCT's manifest cut short (a damaged artefact): `build` repairs it, when
            _check_cut_short_folder(folder, target, names)  # everything beside it may be the target's own
            return
        manifest = None  # an empty file, a folder, a dangling link of that name: nothing says ALiCT built it
    if isinstance(manifest, dict) and manifest.get("target") == canonical(target):
        files = manifest.get("files")
        listed |= set(map(str, files)) if isinstance(files, dict) else set()
    else:
        listed = set()  # no manifest, or another program's: nothing there was built by ALiCT
    foreign = [name for name in names if name not in listed]
    if foreign:
        shown = ", ".join(repr(name) for name in foreign[:3]) + (f" and {len(foreign) - 3} more"
                                                                  if len(foreign) > 3 else "")
        raise AlictError(f"{folder} holds files ALiCT did not build there ({shown}); a build replaces the folder "
                         f"whole: move them away or give another --out")


# Files a build of each target writes besides those of LEGACY_MARKERS (tokenizer files of the encoder it uses).
BUILT_FILES: dict[str, tuple[str, ...]] = {
    "parser": ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "merges.txt",
               "vocab.json", "added_tokens.json"),
    "classifiers": ("accuracy.json",),
}


def _check_cut_short_folder(folder: Path, target: str, names: list[str]) -> None:
    """Refuse to repair a target folder whose manifest is cut short when it holds a file no build of the target
    writes and the cut manifest does not name (a user's mine.txt went with the repair)."""
    name = canonical(target)
    try:
        text = (folder / MANIFEST).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    known = {MANIFEST, *LEGACY_MARKERS.get(name, ()), *BUILT_FILES.get(name, ())}
    foreign = [entry for entry in names if entry not in known and json.dumps(entry) not in text
               and f"\"{entry}\"" not in text]
    if foreign:
        shown = ", ".join(repr(entry) for entry in foreign[:3]) + (f" and {len(foreign) - 3} more"
                                                                    if len(foreign) > 3 else "")
        raise AlictError(f"{folder} holds a damaged build (its {MANIFEST} is cut short) and files no build of "
                         f"{name} writes ({shown}); a build replaces the folder whole: move them away (or remove "
                         "the folder) and build again")


def _cut_short_manifest(path: Path) -> bool:
    """Whether ``path`` is a regular file that begins as ALiCT's manifests do (cut short by a kill or a full disk)."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with open(path, "rb") as handle:
            return b"".join(handle.read(64).split()).startswith(b'{"format"')  # spaces and line breaks aside
    except OSError:
        return False


def read_manifest(path: Path) -> dict[str, Any]:
    """An artefact's manifest, checked for shape: a JSON object whose ``files`` (if any) maps names to sha256
    texts, whose ``steps`` is a whole number (or absent) and whose ``target``/``profile`` are texts; anything else
    (edited by hand, cut short) is ArtefactCorruptError naming the file and the fix, never an AttributeError."""
    fix = f"fix: `alict build {_build_name(path.parent.name)} --profile {path.parent.parent.name}`"
    try:
        manifest = read_json(path)
    except (ValueError, OSError) as exc:
        raise ArtefactCorruptError(f"{path} is not valid JSON ({str(exc)[:80]}); {fix}") from None
    files = manifest.get("files", {}) if isinstance(manifest, dict) else None
    steps = manifest.get("steps") if isinstance(manifest, dict) else None
    shaped = (isinstance(manifest, dict) and isinstance(files, dict)
              and (steps is None or (isinstance(steps, int) and not isinstance(steps, bool)))
              and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
              and all(isinstance(manifest.get(key, ""), str) for key in ("target", "profile")))
    if not shaped:
        raise ArtefactCorruptError(f"{path} is damaged (not the manifest ALiCT writes: edited outside ALiCT?); {fix}")
    folder, profile = path.parent.name, path.parent.parent.name
    if folder in TARGETS and profile in (*PROFILES, "micro"):  # a quick build copied into full/ passed as full
        for key, where in (("profile", profile), ("target", folder)):
            if manifest.get(key) and manifest[key] != where:
                raise ArtefactCorruptError(f"{path.parent} holds a {manifest[key]!r} {key}'s artefact, not {where!r} "
                                           f"(copied or moved by hand?); {fix}")
    return dict(manifest)


def candidates(target: str, root: Path | str | None = None) -> list[tuple[str, Path]]:
    """(profile, folder) in preference order: the pinned profile alone, else full, quick, legacy."""
    target = canonical(target)
    pinned = os.environ.get(PROFILE_ENV, "").strip()
    allowed = ", ".join((*PROFILES, "micro", LEGACY))  # one list in both messages (pass 37)
    if PROFILE_ENV in os.environ and not pinned:  # set but empty: refused, never read as unset (the default order)
        raise AlictError(f"{PROFILE_ENV} is set but empty; unset it or set it to one of {allowed}")
    if pinned and pinned not in (*PROFILES, "micro", LEGACY):  # a name, never a path ('../../etc' was joined on)
        raise AlictError(f"{PROFILE_ENV}={pinned[:40]!r} is not a profile; unset it or set it to one of {allowed}")
    order = [pinned] if pinned else [*PROFILES, LEGACY]
    return [(profile, profile_dir(target, profile, root)) for profile in order]


def locate(target: str, root: Path | str | None = None, *, check: bool = True) -> Artefact | None:
    """The best usable artefact of ``target`` (verified when ``check``), or None when none is built."""
    target = canonical(target)
    for profile, folder in candidates(target, root):
        if profile == LEGACY:
            if is_legacy_complete(target, folder) and not has_manifest(folder):
                return Artefact(target, LEGACY, folder, {})
            continue
        if has_manifest(folder):
            if not check and not (folder / MANIFEST).is_file():
                continue  # a pipe or folder in its place: unusable (``verify`` names it); never read unchecked
            manifest = verify(folder, target) if check else read_manifest(folder / MANIFEST)
            return Artefact(target, profile, folder, manifest)
    return None


def require(target: str, root: Path | str | None = None) -> Artefact:
    """Like ``locate`` but raises ArtefactMissingError naming where it looked and the build command."""
    found = locate(target, root)
    if found is None:
        looked = ", ".join(str(path) for _, path in candidates(target, root))
        name = "models" if canonical(target) == "classifiers" else canonical(target)
        pinned = os.environ.get(PROFILE_ENV, "").strip()
        profile = pinned if pinned and pinned != LEGACY else "quick"  # build the profile that is asked for
        raise ArtefactMissingError(f"the offline {canonical(target)} artefact is not built (looked in {looked}); "
                                   f"fix: `alict build {name} --profile {profile}` (or `make models`)")
    return found


def is_built(target: str, root: Path | str | None = None) -> bool:
    """Whether any usable artefact of ``target`` exists (no hashing: cheap enough for a status probe)."""
    return locate(target, root, check=False) is not None


def built_heads(names: Iterable[str], root: Path | str | None = None) -> set[str]:
    """The embedded classifiers of ``names`` whose head is built (no hashing: cheap enough for a status probe)."""
    found = locate("classifiers", root, check=False)
    return set() if found is None else {name for name in names if (found.path / name / "head.npz").exists()}


def built_profile(target: str, profile: str, root: Path | str | None = None) -> Artefact | None:
    """The artefact of exactly ``profile`` (verified), or None."""
    folder = profile_dir(target, profile, root)
    target = canonical(target)
    if profile == LEGACY:
        return Artefact(target, LEGACY, folder, {}) if is_legacy_complete(target, folder) else None
    return Artefact(canonical(target), profile, folder, verify(folder, target)) if has_manifest(folder) else None


def legacy_figures(target: str, folder: Path) -> dict[str, Any]:
    """Held-out figures recorded by the earlier, time-capped builds in their own files."""
    try:
        if target == "parser":
            metrics = read_json(folder / "metrics.json")
            test = metrics.get("test", {})
            return {"test_f1": test.get("labelled_f1"), "dev_f1": metrics.get("dev", {}).get("labelled_f1"),
                    "steps": metrics.get("steps")}
        if target == "mlm":
            meta = read_json(folder / "meta.json")
            held = meta.get("held_out", {})
            return {"top1": held.get("top1"), "top10": held.get("top10"), "steps": meta.get("steps")}
        out: dict[str, Any] = {}
        for name in ("minilm-sst", "minilm-hatexplain"):
            meta_path = folder / name / "meta.json"
            if meta_path.exists():
                meta = read_json(meta_path)
                out[name] = {"test": meta.get("test"), "dev": meta.get("dev"), "n_train": meta.get("n_train")}
        return out
    except (OSError, ValueError):
        return {}


def report(root: Path | str | None = None) -> list[dict[str, Any]]:
    """Every built artefact of every target and profile (best first per target), described."""
    rows: list[dict[str, Any]] = []
    for target in TARGETS:
        for profile in (*PROFILES, "micro", LEGACY):
            try:
                found = built_profile(target, profile, root)
            except AlictError as exc:
                rows.append({"target": target, "profile": profile, "error": str(exc)})
                continue
            if found is not None:
                rows.append(found.describe())
    return rows


def classifier_accuracies(root: Path | str | None = None) -> dict[str, dict[str, Any]]:
    """Dev/test accuracy and macro-F1 of the classifiers in use (``accuracy.json``; {} when not built)."""
    found = locate("classifiers", root, check=False)
    if found is None or not (found.path / "accuracy.json").exists():
        return {}
    return dict(read_json(found.path / "accuracy.json"))


def progress_path(target: str, profile: str, root: Path | str | None = None) -> Path:
    """The small JSON file a running build of ``target`` updates (step, total, ETA)."""
    folder = profile_dir(target, profile, root)
    return folder.parent / f".{folder.name}.progress.json"


def build_progress(root: Path | str | None = None) -> list[dict[str, Any]]:
    """Builds in progress (for the sidebar): target, profile, step, total, eta_seconds, pid, updated.

    A progress file whose build process is gone (killed) is not reported.
    """
    rows: list[dict[str, Any]] = []
    for profile in (*PROFILES, "micro"):
        for target in TARGETS:
            path = progress_path(target, profile, root)
            try:
                row = _running_row(read_json(path))
            except (OSError, ValueError, RecursionError):
                continue
            if row is not None:
                rows.append(row)
    return rows


def _running_row(row: Any) -> dict[str, Any] | None:
    """A build-progress row of a live build, its step / total / ETA kept only when they are numbers that make sense
    (else ``None``, and ``"unreadable": True``): the file lives in the shared cache and may be edited by hand."""
    if not isinstance(row, dict) or row.get("state") != "running":
        return None
    pid = row.get("pid", 0)
    if isinstance(pid, bool) or not isinstance(pid, int) or not process_alive(pid):
        return None
    cleaned = dict(row)
    for key, least in (("step", 0), ("total", 1), ("eta_seconds", 0)):
        value = row.get(key)
        if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and math.isfinite(value) and least <= value < 1e12):
            cleaned[key], cleaned["unreadable"] = None, True
    return cleaned


MAX_PID = 2**22  # Linux's largest pid (pid_max); larger ones overflow os.kill


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (a process of another user counts as alive)."""
    if pid <= 0 or pid > MAX_PID:  # a pid out of the kernel's range (a tampered file) names no process
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True
