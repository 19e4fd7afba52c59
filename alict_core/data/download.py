"""Fetch data files from their canonical sources when no local data directory has them (online users).

Each source is downloaded once into ``$ALICT_CACHE_DIR/data`` and converted to the layout of the
offline bundle (``../shared/data``), so the loaders read one format whatever the origin.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import urllib.request
import zipfile
from collections import Counter
from pathlib import Path
from typing import Callable

from alict_core.common.errors import DataNotFoundError
from alict_core.common.jsonl import atomic_path

SST_ZIP = "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip"
HATEXPLAIN_JSON = "https://raw.githubusercontent.com/hate-alert/HateXplain/master/Data/dataset.json"
HATEXPLAIN_SPLIT = "https://raw.githubusercontent.com/hate-alert/HateXplain/master/Data/post_id_divisions.json"
SENTIWORDNET_TXT = "https://raw.githubusercontent.com/aesuli/SentiWordNet/master/data/SentiWordNet_3.0.0.txt"
HATECHECK_PLACEHOLDERS = "https://raw.githubusercontent.com/paul-rottger/hatecheck-data/main/templates/template_placeholders.csv"
HURTLEX_EN = "https://raw.githubusercontent.com/valeriobasile/hurtlex/master/lexica/EN/1.2/hurtlex_EN.tsv"
TREEBANK_ZIP = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/treebank.zip"


def sst_split_from_zip(split: str) -> Callable[[bytes], bytes]:
    def convert(payload: bytes) -> bytes:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            return archive.read(f"trees/{split}.txt")

    return convert


def hatexplain_csv(payload: bytes) -> bytes:
    """dataset.json (per-annotator labels) -> the bundle's CSV with majority label and category."""
    categories = {"normal": 0, "hatespeech": 1, "offensive": 2}
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["", "text", "label", "category", "id"])
    for index, (post_id, post) in enumerate(json.loads(payload).items()):
        votes = Counter(a["label"] for a in post["annotators"])
        label, count = votes.most_common(1)[0]
        category = categories.get(label, 3) if count >= 2 else 3
        writer.writerow([post_id, " ".join(post["post_tokens"]).lower(), int(category == 1), category, index])
    return out.getvalue().encode("utf-8")


def sentiwordnet_nogloss(payload: bytes) -> bytes:
    """SentiWordNet_3.0.0.txt -> gzipped TSV without the gloss column."""
    lines = []
    for line in payload.decode("utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        lines.append("\t".join(line.split("\t")[:5]))
    return gzip.compress(("\n".join(lines) + "\n").encode("utf-8"))


def identity(payload: bytes) -> bytes:
    return payload


SOURCES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    **{f"sst/{split}.txt": (SST_ZIP, sst_split_from_zip(split)) for split in ("train", "dev", "test")},
    "hatexplain/hatexplain.csv": (HATEXPLAIN_JSON, hatexplain_csv),
    "hatexplain/post_id_divisions.json": (HATEXPLAIN_SPLIT, identity),
    "sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz": (SENTIWORDNET_TXT, sentiwordnet_nogloss),
    "hatecheck/template_placeholders.csv": (HATECHECK_PLACEHOLDERS, identity),
    "hurtlex/hurtlex_EN.tsv": (HURTLEX_EN, identity),
    "treebank/treebank.zip": (TREEBANK_ZIP, identity),
}


def download_file(relative: str, target_root: Path, timeout: float = 60.0) -> Path:
    """Download and convert one data file into ``target_root``; a clear error when offline or unknown."""
    if relative not in SOURCES:
        raise DataNotFoundError(
            f"data file {relative!r} is missing and has no automatic download; "
            "set ALICT_DATA_DIR to a folder holding it (see ../shared/data/README.md for the layout)."
        )
    url, convert = SOURCES[relative]
    target = Path(target_root) / relative
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            payload = response.read()
    except OSError as exc:
        raise DataNotFoundError(
            f"data file {relative!r} is missing locally and downloading it from {url} failed ({exc}). "
            "Set ALICT_DATA_DIR to a folder holding the ALiCT data bundle."
        ) from exc
    with atomic_path(target) as tmp:
        tmp.write_bytes(convert(payload))
    return target
