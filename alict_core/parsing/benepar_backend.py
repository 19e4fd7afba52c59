"""A benepar ChartParser behind the project's ``Parser`` protocol: batched, with an on-disk parse cache."""

from __future__ import annotations

import dataclasses
import os
import pickle
import threading
import unicodedata
import warnings
from pathlib import Path
from typing import Any, Callable

import nltk

from alict_core.common import config
from alict_core.common.errors import ModelError
from alict_core.common.hashing import hash_files, hash_json, hash_text
from alict_core.common.jsonl import iter_jsonl, write_jsonl
from alict_core.common.manifest import save_checked
from alict_core.parsing import compat
from alict_core.parsing.trees import from_json, json_leaves, to_json, unwrap_root

Progress = Callable[[int, int], None]
STAND_IN = "-"  # parsed in place of a word with no character the parser's subword tokenizer reads


def readable(token: str) -> str:
    """``token``, or a stand-in when it holds only invisible characters (format, control, combining marks,
    spaces: U+200B, U+00AD, U+FEFF …): benepar's retokenizer finds no subword for it and fails (StopIteration)."""
    return token if any(unicodedata.category(c)[0] not in "CMZ" for c in token) else STAND_IN


def _with_leaves(tree: nltk.Tree, tokens: list[str]) -> nltk.Tree:
    """The tree with its leaves set back to ``tokens`` (the words parsed as a stand-in get their own text)."""
    positions = tree.treepositions("leaves")
    if len(positions) == len(tokens):
        for position, token in zip(positions, tokens, strict=True):
            tree[position] = token
    return tree


def load_chart_parser(name_or_path: str) -> Any:
    """benepar's ``load_trained_model`` (a released model's name, a released folder or a training checkpoint) with
    every ``torch.load`` restricted to tensors and plain settings (``weights_only=True``, also when
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` is set): benepar's own loader unpickled ``benepar_model.bin`` whole, and a
    forged one ran its code."""
    import torch
    from benepar import nkutil
    from benepar.integrations.downloader import locate_model
    from benepar.parse_chart import ChartParser
    from transformers import AutoConfig

    def tensors(path: str) -> Any:
        with warnings.catch_warnings():  # torch's notes on a file's pickle protocol name its own source lines
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)

    model_path = locate_model(name_or_path)
    if os.path.isdir(model_path):  # a released (exported) folder: settings in config.json, tensors in the .bin
        settings = AutoConfig.from_pretrained(model_path).benepar
        state_dict = tensors(os.path.join(model_path, "benepar_model.bin"))
        settings["pretrained_model_path"] = model_path
    else:  # a training checkpoint: one file of settings and tensors
        data = tensors(model_path)
        settings, state_dict = data["config"], data["state_dict"]
    hparams = settings["hparams"]
    hparams.setdefault("force_root_constituent", True)
    settings["hparams"] = nkutil.HParams(**hparams)
    parser = ChartParser(**settings)
    parser.load_state_dict(state_dict)
    return parser


CHUNK = 64  # sentences per network batch; finished chunks are cached (an interrupted run resumes)
MAX_WORDS = 200  # longer inputs are parsed in pieces joined under an S node


def _read_parse_shard(path: Path) -> list[dict]:
    rows = list(iter_jsonl(path))
    if not all(isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("tree"), list) for r in rows):
        raise ValueError("a row lacks its key or tree")
    return rows


class ParseCache:
    """Parses keyed by (parser fingerprint, hash of the token list); JSONL shards written atomically."""

    def __init__(self, fingerprint: str, root: Path | None = None) -> None:
        self._in_cache = root is None  # the shared cache folder, created at the first write (a read never makes it)
        self.dir = (root or config.cache_dir() / "parses") / fingerprint
        self._trees: dict[str, list] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def key(tokens: list[str]) -> str:
        return hash_json(list(tokens), 20)

    def _load(self) -> dict[str, list]:
        if self._trees is None:
            trees: dict[str, list] = {}
            if self.dir.is_dir():
                from alict_core.common.manifest import load_checked

                for shard in sorted(self.dir.glob("*.jsonl")):
                    rows = load_checked(shard, "parses", self.dir.name, _read_parse_shard)
                    for row in rows or []:
                        trees[row["key"]] = row["tree"]
            self._trees = trees
        return self._trees

    def get(self, tokens: list[str]) -> nltk.Tree | None:
        """The cached parse of ``tokens``, or None; a tree whose leaves are not these tokens is never served (a
        re-sealed shard served "I would hate this awful film ." as the parse of another seed): parsed again."""
        data = self._load().get(self.key(tokens))
        if data is None or json_leaves(data) != list(tokens):
            return None
        return from_json(data)

    def put_many(self, items: list[tuple[list[str], nltk.Tree]]) -> None:
        if not items:
            return
        rows: list[dict[str, Any]] = [
            {"key": self.key(tokens), "tokens": tokens, "tree": to_json(tree)} for tokens, tree in items
        ]
        with self._lock:
            if self._in_cache:
                config.artefact_dir("parses")  # or one message naming the cache folder
            self.dir.mkdir(parents=True, exist_ok=True)
            shard = self.dir / f"{hash_json([r['key'] for r in rows])}.jsonl"
            # manifest before the rename, under the entry's lock: a reader loading the cache meanwhile never
            # quarantines the shard under its writer (pass 17 K1: the writer then failed)
            save_checked(shard, "parses", self.dir.name, len(rows), lambda tmp: write_jsonl(tmp, rows))
            store = self._load()
            for row in rows:
                store[row["key"]] = row["tree"]


class BeneparParser:
    """A trained benepar model (our offline one or benepar_en3); ``parse_batch`` takes PTB-style token lists."""

    def __init__(self, name: str, model_path: str | Path, fingerprint: str | None = None,
                 cache_root: Path | None = None, batch_sentences: int = CHUNK) -> None:
        import torch

        compat.ensure()
        self.name = name
        self.model_path = str(model_path)
        try:
            self._model = load_chart_parser(self.model_path)
        except pickle.UnpicklingError:  # torch's text advises loading it as a pickle: never
            raise ModelError(f"parser {name!r}: {self.model_path} holds more than tensors and settings (a pickle "
                             "that could run code); it is never loaded: rebuild the parser or use a released "
                             "one") from None
        except Exception as exc:  # noqa: BLE001 - report any loading failure with the model name
            raise ModelError(f"parser {name!r}: cannot load benepar model from {self.model_path}: {exc}") from exc
        self._model.eval()
        self._torch = torch
        self.batch_sentences = batch_sentences
        self._lock = threading.Lock()  # shared by sessions: one tokenizer + network pass at a time
        self.fingerprint = fingerprint or _fingerprint(Path(self.model_path))
        self.cache = ParseCache(self.fingerprint, cache_root)

    # -- network ------------------------------------------------------------------------------
    def _parse_uncached(self, token_lists: list[list[str]]) -> list[nltk.Tree]:
        from alict_core.parsing.examples import example_from_tokens, parse_examples

        out: list[nltk.Tree | None] = [None] * len(token_lists)
        todo = [(i, toks) for i, toks in enumerate(token_lists) if toks and len(toks) <= MAX_WORDS]
        for i, toks in enumerate(token_lists):
            if not toks:
                out[i] = nltk.Tree("S", [])
            elif len(toks) > MAX_WORDS:
                pieces = [toks[j : j + MAX_WORDS] for j in range(0, len(toks), MAX_WORDS)]
                out[i] = nltk.Tree("S", list(self._parse_uncached(pieces)))
        if todo:
            examples = [dataclasses.replace(example_from_tokens([readable(t) for t in toks]), tree=None)
                        for _, toks in todo]
            # no torch.inference_mode(): benepar's CKY decoder (torch-struct) needs autograd
            with self._lock:
                trees = parse_examples(self._model, examples)
            for (i, toks), tree in zip(todo, trees, strict=True):
                out[i] = _with_leaves(unwrap_root(tree), toks)
        return out  # type: ignore[return-value]

    def parse_batch(self, token_lists: list[list[str]], progress: Progress | None = None, *,
                    remember: bool = True) -> list[nltk.Tree]:
        """Parse token lists (leaves of the trees = the tokens); cached parses are reused, new ones kept unless
        ``remember`` is False (page views: see ``parsing.ReadOnlyParses``)."""
        token_lists = [[str(t) for t in toks] for toks in token_lists]
        results: list[nltk.Tree | None] = [self.cache.get(toks) for toks in token_lists]
        missing = [i for i, tree in enumerate(results) if tree is None]
        # deduplicate identical inputs within the batch
        unique: dict[str, list[int]] = {}
        for i in missing:
            unique.setdefault(ParseCache.key(token_lists[i]), []).append(i)
        groups = list(unique.values())
        total = len(token_lists)
        done = total - len(missing)
        if progress:
            progress(done, total)
        for start in range(0, len(groups), self.batch_sentences):
            chunk = groups[start : start + self.batch_sentences]
            trees = self._parse_uncached([token_lists[g[0]] for g in chunk])
            if remember:
                self.cache.put_many([(token_lists[g[0]], tree) for g, tree in zip(chunk, trees, strict=True)])
            for group, tree in zip(chunk, trees, strict=True):
                for i in group:
                    results[i] = tree.copy(deep=True)
                done += len(group)
            if progress:
                progress(done, total)
        return results  # type: ignore[return-value]


def _fingerprint(path: Path) -> str:
    files = [p for p in (path / "config.json", path / "benepar_model.bin") if p.exists()]
    if path.is_file():
        files = [path]
    return hash_files(files) if files else hash_text(str(path))
