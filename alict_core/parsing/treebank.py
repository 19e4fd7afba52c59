"""The Penn Treebank sample (``treebank/treebank.zip``): extraction, cleaning and the fixed split.

Cleaning follows the usual parser-training conventions: function tags and indices are
stripped (``NP-SBJ-1`` → ``NP``), ``-NONE-`` traces and the constituents left empty by
removing them are dropped, and the unlabelled outer bracket becomes ``TOP``.

Split (by file, deterministic): the 199 WSJ files sorted by name; files whose number
ends in 0 are the **test** set (≈10 %), those ending in 5 the **dev** set (≈10 %),
the rest **train** (≈80 %).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import nltk

from alict_core.common.errors import DataNotFoundError
from alict_core.common.hashing import hash_files
from alict_core.data.files import data_file

TREEBANK_REL = "treebank/treebank.zip"
_FUNCTION_TAG = re.compile(r"^(-[A-Z]+-|[^-=]+)(?:[-=].*)?$")
PUNCT_TAGS = frozenset({"''", "``", ".", ":", ","})


def treebank_zip() -> Path:
    """Path of the treebank zip under the data directory."""
    return data_file(TREEBANK_REL)


def treebank_hash() -> str:
    """Content hash of the treebank zip (keys cached grammars and models)."""
    return hash_files([treebank_zip()])


def _members() -> dict[str, str]:
    """``wsj_XXXX.mrg`` → member name inside the zip (read in place, never extracted)."""
    path = treebank_zip()
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.startswith("treebank/combined/") and n.endswith(".mrg")]
    except zipfile.BadZipFile as exc:
        raise DataNotFoundError(f"treebank archive {path} is not a valid zip: {exc}") from exc
    if not names:
        raise DataNotFoundError(f"no treebank/combined/*.mrg files inside {path}")
    return {Path(n).name: n for n in names}


def file_ids() -> list[str]:
    """The WSJ file names, sorted."""
    return sorted(_members())


def split_of(file_id: str) -> str:
    """'train', 'dev' or 'test' for one WSJ file name (wsj_0010.mrg → test, wsj_0015.mrg → dev)."""
    number = int(re.sub(r"\D", "", file_id) or 0)
    if number % 10 == 0:
        return "test"
    if number % 10 == 5:
        return "dev"
    return "train"


def strip_label(label: str) -> str:
    """``NP-SBJ-1`` → ``NP``; ``-NONE-``, ``-LRB-`` kept; ``PP=2`` → ``PP``."""
    match = _FUNCTION_TAG.match(label)
    return match.group(1) if match else label


def clean_tree(tree: nltk.Tree) -> nltk.Tree | None:
    """Strip function tags, drop ``-NONE-`` and emptied constituents; None when nothing is left."""
    if isinstance(tree, str):
        return tree
    label = strip_label(tree.label())
    if label == "-NONE-":
        return None
    children = [clean_tree(child) for child in tree]
    children = [child for child in children if child is not None]
    if not children:
        return None
    return nltk.Tree(label, children)


def with_top(tree: nltk.Tree) -> nltk.Tree:
    """Give the tree a ``TOP`` root (the treebank's unlabelled outer bracket)."""
    if tree.label() in ("", "TOP", "ROOT"):
        return nltk.Tree("TOP", list(tree))
    return nltk.Tree("TOP", [tree])


def split_brackets(text: str) -> list[str]:
    """Top-level bracketed expressions of a .mrg file, one per sentence."""
    out: list[str] = []
    depth = 0
    begin = 0
    for i, char in enumerate(text):
        if char == "(":
            if depth == 0:
                begin = i
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                out.append(text[begin : i + 1])
    return out


def _trees(text: str) -> list[nltk.Tree]:
    return [nltk.Tree.fromstring(chunk) for chunk in split_brackets(text)]


def load_split(split: str | None = None, limit: int | None = None) -> list[nltk.Tree]:
    """Cleaned trees (with TOP roots) of one split ('train', 'dev', 'test') or all (None).

    The archive is opened once for the whole split (reading its directory per file was half the load time)."""
    out: list[nltk.Tree] = []
    members = _members()
    with zipfile.ZipFile(treebank_zip()) as archive:
        for file_id in sorted(members):
            if split is not None and split_of(file_id) != split:
                continue
            for tree in _trees(archive.read(members[file_id]).decode("utf-8")):
                cleaned = clean_tree(tree)
                if cleaned is not None and cleaned.leaves():
                    out.append(with_top(cleaned))
                if limit is not None and len(out) >= limit:
                    return out
    return out
