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
    from alict_core.data.download import download_file

    return download_file(relative, config.cache_dir() / "data")
