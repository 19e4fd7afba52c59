"""``data``: show where the data is read from; fetch missing files when online."""

from __future__ import annotations

import argparse
import os

from alict_core.data.download import SOURCES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "data",
        help="show the data directory and cache (info), or download missing data files when online (download)",
        description="The data directory is $ALICT_DATA_DIR, else ../shared/data beside the checkout, "
        "else files downloaded from their canonical sources into the cache.",
    )
    parser.add_argument("action", choices=["info", "download"])
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from alict_core.common.config import DATA_ENV, cache_dir, data_dir, data_dir_candidates
    from alict_core.data.files import data_file

    if DATA_ENV in os.environ:
        data_dir()  # a $ALICT_DATA_DIR that is not a data folder is one message (exit 2), not "0/9 files"

    if args.action == "download":
        for relative in SOURCES:
            print(f"{relative}: {data_file(relative)}")
        return 0
    for how, path in data_dir_candidates():
        present = [rel for rel in SOURCES if (path / rel).exists()]
        print(f"{how:<45} {path}  ({len(present)}/{len(SOURCES)} files)")
    print(f"cache directory: {cache_dir()}")
    return 0
