"""Word and bigram counts over the text in the data folder: the corpus evidence of expansion checks.

Counted once over SST's sentences and the NLTK corpora (Brown, movie reviews, sentence polarity,
subjectivity, webtext), lower-cased, alphabetic tokens only (``n't`` and ``'s`` count as words), and stored
as a plain SQLite file under ``artefact_dir("corpus_stats")`` named by a hash of the source files' contents
and ``STATS_VERSION``: a changed corpus or tokeniser gives a new file, never a stale one.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import zipfile
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator

from alict_core.common.config import artefact_dir, data_dir
from alict_core.common.hashing import hash_files, hash_json
from alict_core.common.jsonl import atomic_path
from alict_core.common.manifest import folder_lock, load_checked, write_file_manifest

STATS_VERSION = 1
SOURCES = ("sst/datasetSentences.txt", "nltk_corpora/brown.zip", "nltk_corpora/movie_reviews.zip",
           "nltk_corpora/sentence_polarity.zip", "nltk_corpora/subjectivity.zip", "nltk_corpora/webtext.zip")
_WORDLIKE = re.compile(r"^[a-z]+(?:['-][a-z]+)*$|^'[a-z]+$|^n't$")
_RAW_TOKEN = re.compile(r"n't|'[a-z]+|[a-z]+(?:-[a-z]+)*|[^\sa-z]", re.IGNORECASE)


def is_wordlike(token: str) -> bool:
    """Whether a (lower-cased) token is counted: letters, inner hyphens/apostrophes, clitics."""
    return bool(_WORDLIKE.match(token))


def _sentences(path: Path, relative: str) -> Iterator[list[str]]:
    """Token lists (lower-cased) of one source file."""
    if relative.endswith(".txt"):  # SST: "index<TAB>sentence", PTB-tokenised
        with open(path, encoding="utf-8", errors="replace") as handle:
            next(handle, None)
            for line in handle:
                yield line.rstrip("\n").split("\t", 1)[-1].lower().split()
        return
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if name.endswith("/") or "README" in name or name.endswith((".py", "cats.txt", "CONTENTS")):
                continue
            text = archive.read(name).decode("latin-1")
            for line in text.splitlines():
                if "brown/" in name:  # word/TAG tokens
                    yield [t.rsplit("/", 1)[0].lower() for t in line.split()]
                elif "webtext/" in name:  # raw text
                    yield [t.lower() for t in _RAW_TOKEN.findall(line)]
                else:  # tokenised, one sentence (or review line) per line
                    yield line.lower().split()


def count_tokens(sentences: Iterable[list[str]]) -> tuple[Counter, Counter]:
    """(unigram counts, bigram counts) of word-like tokens; a bigram never spans a non-word token."""
    unigrams: Counter = Counter()
    bigrams: Counter = Counter()
    for tokens in sentences:
        previous = None
        for token in tokens:
            if not is_wordlike(token):
                previous = None
                continue
            unigrams[token] += 1
            if previous is not None:
                bigrams[(previous, token)] += 1
            previous = token
    return unigrams, bigrams


class CorpusStats:
    """Read-only word and bigram counts (one SQLite connection per thread)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.fingerprint = self.path.stem
        self._local = threading.local()
        self._memo: dict[tuple[str, ...], int] = {}

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        return db

    def count(self, word: str) -> int:
        key = (word.lower(),)
        if key not in self._memo:
            row = self._db().execute("SELECT n FROM unigram WHERE w = ?", key).fetchone()
            self._memo[key] = int(row[0]) if row else 0
        return self._memo[key]

    def bigram(self, first: str, second: str) -> int:
        key = (first.lower(), second.lower())
        if key not in self._memo:
            row = self._db().execute("SELECT n FROM bigram WHERE a = ? AND b = ?", key).fetchone()
            self._memo[key] = int(row[0]) if row else 0
        return self._memo[key]


def source_paths(root: Path | None = None) -> list[tuple[str, Path]]:
    """The source files that exist under the data folder (missing corpora are skipped)."""
    root = Path(root) if root is not None else data_dir()
    return [(rel, root / rel) for rel in SOURCES if (root / rel).exists()]


def build_stats(sources: list[tuple[str, Path]], path: Path) -> Path:
    """Count ``sources`` and write the SQLite file atomically."""
    unigrams, bigrams = count_tokens(s for rel, p in sources for s in _sentences(p, rel))
    with atomic_path(path) as tmp:
        tmp.unlink()
        db = sqlite3.connect(tmp)
        try:
            db.execute("CREATE TABLE unigram (w TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
            db.execute("CREATE TABLE bigram (a TEXT, b TEXT, n INTEGER NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
            db.executemany("INSERT INTO unigram VALUES (?, ?)", unigrams.items())
            db.executemany("INSERT INTO bigram VALUES (?, ?, ?)", ((a, b, n) for (a, b), n in bigrams.items()))
            db.commit()
        finally:
            db.close()
    return path


_LOADED: dict[str, CorpusStats] = {}
_LOCK = threading.Lock()


def load_corpus_stats(root: Path | None = None) -> CorpusStats | None:
    """The counts for the data folder's corpora (built on first use, then read from the cache);
    ``None`` when none of the sources is present."""
    sources = source_paths(root)
    if not sources:
        return None
    key = hash_json([STATS_VERSION, [rel for rel, _ in sources], hash_files([p for _, p in sources])])
    with _LOCK:
        if key not in _LOADED:
            path = artefact_dir("corpus_stats") / f"{key}.sqlite"
            # checked against its manifest and opened once: a damaged or edited file is quarantined and built again
            # (a garbage file failed every later `expand` with an internal error until removed by hand)
            with folder_lock(path):  # one builder among processes (parallel expansion workers start together)
                if load_checked(path, "corpus statistics", key, _readable) is None:
                    build_stats(sources, path)
                    write_file_manifest(path, "corpus statistics", key, 0)
            _LOADED[key] = CorpusStats(path)
        return _LOADED[key]


def _readable(path: Path) -> Path:
    """``path`` once SQLite reads its two tables (a damaged file: ValueError, which ``load_checked`` quarantines)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            db.execute("SELECT COUNT(*) FROM unigram").fetchone()
            db.execute("SELECT n FROM bigram LIMIT 1").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ValueError(f"not a corpus statistics database ({exc})") from None
    return path
