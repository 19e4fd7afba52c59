"""Fetch data files from their canonical sources (only used when no local data directory has them)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from alict_core.errors import DataNotFoundError
from alict_core.jsonl import atomic_path

# Canonical sources of the files the data layer reads (relative path -> URL).
CANONICAL_URLS: dict[str, str] = {
    "hatexplain/hatexplain.csv": "https://raw.githubusercontent.com/hate-alert/HateXplain/master/Data/dataset.json",
    "hatexplain/post_id_divisions.json": "https://raw.githubusercontent.com/hate-alert/HateXplain/master/Data/post_id_divisions.json",
    "hatecheck/template_placeholders.csv": "https://raw.githubusercontent.com/paul-rottger/hatecheck-data/main/templates/template_placeholders.csv",
    "hurtlex/hurtlex_EN.tsv": "https://raw.githubusercontent.com/valeriobasile/hurtlex/master/lexica/EN/1.2/hurtlex_EN.tsv",
    "treebank/treebank.zip": "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/treebank.zip",
    "sst/train.txt": "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip",
}


def download_file(relative: str, target_root: Path, timeout: float = 30.0) -> Path:
    """Download one data file into ``target_root``; raise a clear error when offline or unknown."""
    url = CANONICAL_URLS.get(relative)
    target = Path(target_root) / relative
    if url is None:
        raise DataNotFoundError(
            f"data file {relative!r} is missing and has no automatic download; "
            "set ALICT_DATA_DIR to a folder holding it (see ../shared/data/README.md for the layout)."
        )
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, atomic_path(target) as tmp:
            tmp.write_bytes(response.read())
    except OSError as exc:
        raise DataNotFoundError(
            f"data file {relative!r} is missing locally and downloading it from {url} failed ({exc}). "
            "Set ALICT_DATA_DIR to a folder holding the ALiCT data bundle."
        ) from exc
    return target
