"""Where data is read from and where built artefacts and caches are written."""

from __future__ import annotations

import os
from pathlib import Path

from alict_core.common.errors import AlictError, DataNotFoundError

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
REPO_ROOT = PACKAGE_ROOT.parent
# built-in specs, read-only defaults: the checkout's top-level specs/, shipped in the wheel as alict_core/builtin_specs
SPECS_DIR = REPO_ROOT / "specs" if (REPO_ROOT / "specs").is_dir() else PACKAGE_ROOT / "builtin_specs"
DATA_ENV = "ALICT_DATA_DIR"
CACHE_ENV = "ALICT_CACHE_DIR"
WORKSPACE_ENV = "ALICT_WORKSPACE_DIR"

# The files whose presence marks a usable data directory.
DATA_MARKERS = ("sst/train.txt", "hatexplain/hatexplain.csv", "sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz")


def data_dir_candidates() -> list[tuple[str, Path]]:
    """Candidate data directories in priority order, each with how it was found."""
    candidates: list[tuple[str, Path]] = []
    if DATA_ENV in os.environ:
        return [(f"${DATA_ENV}", Path(os.environ[DATA_ENV]).expanduser())]
    candidates.append(("../shared/data beside the checkout", REPO_ROOT.parent / "shared" / "data"))
    candidates.append(("../shared/data from the working directory", Path.cwd().parent / "shared" / "data"))
    candidates.append(("download cache", cache_dir() / "data"))
    return candidates


def data_dir() -> Path:
    """The data directory: $ALICT_DATA_DIR, then ../shared/data, then the download cache.

    Raises DataNotFoundError naming every place looked at and how to fix it.
    """
    if DATA_ENV in os.environ:
        return _checked_env_data_dir(os.environ[DATA_ENV])
    looked = []
    for how, path in data_dir_candidates():
        if path.is_dir() and any((path / marker).exists() for marker in DATA_MARKERS):
            return path
        looked.append(f"  - {path} ({how})")
    raise DataNotFoundError(
        "ALiCT data directory not found. Looked in:\n" + "\n".join(looked) + "\n"
        f"Fix: set {DATA_ENV}=/path/to/data (the folder holding sst/, hatexplain/, sentiwordnet/ ...), "
        "or run `python -m alict_core data download` when online."
    )


def _checked_env_data_dir(value: str) -> Path:
    """$ALICT_DATA_DIR as set: it must be a folder holding the data (no silent fallback to another one)."""
    if not value.strip():
        raise DataNotFoundError(f"{DATA_ENV} is set but empty; unset it or set it to the data folder")
    path = Path(value).expanduser()
    if not path.exists():
        raise DataNotFoundError(f"{DATA_ENV}={value!r} does not exist; set it to the folder holding sst/, "
                                "hatexplain/ ...")
    if not path.is_dir():
        raise DataNotFoundError(f"{DATA_ENV}={value!r} is not a folder; set it to the folder holding sst/, "
                                "hatexplain/ ...")
    if not any((path / marker).exists() for marker in DATA_MARKERS):
        raise DataNotFoundError(f"{DATA_ENV}={value!r} holds none of the data files ({', '.join(DATA_MARKERS)}); "
                                "set it to the data folder, or unset it to use ../shared/data")
    return path


def env_setting(name: str, what: str = "a folder") -> str | None:
    """A path or URL setting: None when unset; set but empty (or blank) is refused, never read as unset (an empty
    ``ALICT_CACHE_DIR`` silently opened the shared ~/.cache/alict-studio)."""
    if name not in os.environ:
        return None
    value = os.environ[name]
    if not value.strip():
        raise AlictError(f"{name} is set but empty; unset it or set it to {what}")
    return value


def cache_dir() -> Path:
    """Root of caches and built model artefacts (outside git): $ALICT_CACHE_DIR or ~/.cache/alict-studio."""
    root = Path(env_setting(CACHE_ENV) or Path.home() / ".cache" / "alict-studio").expanduser()
    _check_cache_root(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AlictError(f"cache folder from {CACHE_ENV} (or ~/.cache/alict-studio) cannot be used: "
                         f"{exc.strerror or exc}; set {CACHE_ENV} to a writable folder") from None
    return root


_CHECKED_ROOTS: set[str] = set()  # cache roots found fit in this process (checked once each)


def _check_cache_root(root: Path) -> None:
    """Refuse a cache folder that is (or lies inside) a data folder, the shipped specs, or a saved artefact (a run,
    an export: its ``manifest.json`` or ``meta.json``): every command writes its caches, locks and runs there."""
    key = str(root)
    if key in _CHECKED_ROOTS:
        return
    try:
        resolved = root.resolve()
    except (OSError, RuntimeError):
        return  # said by the mkdir below
    specs = SPECS_DIR.resolve()
    if resolved == specs or resolved.is_relative_to(specs):
        raise AlictError(f"{CACHE_ENV} {key!r} lies among the shipped LC specs; set it to a folder of its own")
    for folder in (resolved, *resolved.parents):
        if any((folder / marker).is_file() for marker in DATA_MARKERS):
            raise AlictError(f"{CACHE_ENV} {key!r} is (or lies inside) a data folder ({folder}); every command "
                             "writes its caches there: set it to a folder of its own")
    if (resolved / "manifest.json").exists() or (resolved / "meta.json").exists():
        raise AlictError(f"{CACHE_ENV} {key!r} holds a saved artefact (its manifest.json or meta.json); set it to a "
                         "folder of its own")
    _CHECKED_ROOTS.add(key)


def artefact_dir(kind: str) -> Path:
    """Directory for one kind of cached artefact (e.g. 'annotations', 'parses', 'predictions')."""
    path = cache_dir() / kind
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AlictError(f"cache folder {kind!r} cannot be created: {exc.strerror or exc}; "
                         f"check {CACHE_ENV} points at a writable folder") from None
    return path


def workspace_dir() -> Path:
    """The user's workspace (specs edited or created by the user): $ALICT_WORKSPACE_DIR or <cache_dir>/workspace.

    Not created here: only saving a spec creates it.
    """
    configured = env_setting(WORKSPACE_ENV)  # set but empty: refused (no silent fallback to the default)
    if configured is None:
        return cache_dir() / "workspace"
    configured = configured.strip()
    path = Path(configured).expanduser()
    if path.exists() and not path.is_dir():
        raise AlictError(f"{WORKSPACE_ENV} names a file, not a folder; point it at a folder (it is created when a "
                         "spec is first saved) or unset it")
    if path.is_symlink() and not path.exists():  # a dangling or looping link: its specs would vanish silently
        raise AlictError(f"{WORKSPACE_ENV} names a link that leads nowhere ({configured}); point it at a folder")
    return path


def models_dir() -> Path:
    """Where the project's own build scripts put trained offline models (not created here: a read such as `build
    --report` or `harden versions` created it; the writers create their own folders)."""
    return cache_dir() / "models"


OFFLINE_ENVS = ("ALICT_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def offline_forced() -> bool:
    """Whether the environment says not to touch the network (HF_HUB_OFFLINE, ALICT_OFFLINE ...)."""
    from alict_core.common.limits import setting_flag

    # ours strictly (an unknown spelling is one message); the hub's own switches as the hub reads them
    return setting_flag(OFFLINE_ENVS[0]) or any((os.environ.get(name) or "").strip().lower() in
                                                {"1", "true", "yes", "on"} for name in OFFLINE_ENVS[1:])
