"""HateXplain: hate speech vs not (offensive counts as not hateful; undecided dropped), official split."""

from __future__ import annotations

import csv
from functools import lru_cache

from alict_core.common.jsonl import read_json
from alict_core.data.checked import reads_data
from alict_core.data.files import data_file
from alict_core.data.records import LabelledText

CATEGORY_UNDECIDED = "3"
CATEGORY_NAMES = {"0": "normal", "1": "hate", "2": "offensive"}
SPLIT_NAMES = {"train": "train", "val": "dev", "test": "test"}


@reads_data("hatexplain/hatexplain.csv (or post_id_divisions.json)")
def load_hatexplain() -> list[LabelledText]:
    """Posts with label ``hateful`` / ``non-hateful`` and split train/dev/test from post_id_divisions.json."""
    divisions = read_json(data_file("hatexplain/post_id_divisions.json"))
    split_of = {pid: SPLIT_NAMES[name] for name, ids in divisions.items() for pid in ids}
    rows = []
    with open(data_file("hatexplain/hatexplain.csv"), encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        text_col, label_col, category_col = header.index("text"), header.index("label"), header.index("category")
        for record in reader:
            post_id = record[0]
            if record[category_col] == CATEGORY_UNDECIDED or post_id not in split_of:
                continue
            tokens = tuple(record[text_col].split())
            if not tokens:
                continue
            if record[label_col] not in ("0", "1"):  # a damaged label ("7", "") was read as non-hateful
                raise ValueError(f"post {post_id[:40]!r}: label {record[label_col][:20]!r} is not 0 or 1")
            label = "hateful" if record[label_col] == "1" else "non-hateful"
            rows.append(LabelledText(f"hx-{post_id}", " ".join(tokens), label, split_of[post_id], tokens))
    return rows


@lru_cache(maxsize=1)
@reads_data("hatexplain/hatexplain.csv")
def hatexplain_categories() -> dict[str, str]:
    """Corpus id (``hx-<post id>``) -> annotator-majority category: "normal", "offensive" or "hate"."""
    with open(data_file("hatexplain/hatexplain.csv"), encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        category_col = header.index("category")
        return {f"hx-{record[0]}": CATEGORY_NAMES[record[category_col]]
                for record in reader if record[category_col] in CATEGORY_NAMES}
