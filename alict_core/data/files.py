"""One data file by its path under the data directory, fetched from its source when it is missing (online)."""

from __future__ import annotations

from pathlib import Path

from alict_core.common import config


def data_file(relative: str) -> Path:
    """Path of one data file under the data directory, downloading it when online and missing."""
    base = config.data_dir()
    path = base / relative
    if path.exists():
        return path
    if config.offline_forced():  # ALICT_OFFLINE: no network at all (a missing treebank was fetched anyway)
        from alict_core.common.errors import DataNotFoundError

        raise DataNotFoundError(f"data file {relative} is not in the data folder {base}, and ALICT_OFFLINE (or "
                                "HF_HUB_OFFLINE) forbids downloading it: add it to the data folder, or go online")
    from alict_core.data.download import download_file

    return download_file(relative, config.cache_dir() / "data")
