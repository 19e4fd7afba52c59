"""Parser backend: treebank split and cleaning, evalb scorer, productions, parse cache, build + load."""

from __future__ import annotations

import nltk
import pytest

from alict_core.common.errors import AlictError, ArtefactMissingError
from alict_core.models.artefacts import is_built
from alict_core.parsing import PARSERS, Parser, clear_loaded, get_parser, productions, treebank
from alict_core.parsing.benepar_backend import BeneparParser, ParseCache
from alict_core.parsing.evalb import evalb
from alict_core.parsing.trees import from_json, to_json, unwrap_root

GOLD = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"


def T(text: str) -> nltk.Tree:
    return nltk.Tree.fromstring(text)


# -- treebank -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "label,expected",
    [("NP-SBJ-1", "NP"), ("PP-CLR", "PP"), ("NP=2", "NP"), ("-NONE-", "-NONE-"), ("-LRB-", "-LRB-"), ("S", "S"),
     ("PRP$", "PRP$")],
)
def test_strip_label(label, expected):
    assert treebank.strip_label(label) == expected


def test_split_is_fixed_by_file_and_disjoint():
    ids = treebank.file_ids()
    assert len(ids) == 199 and ids == sorted(ids)
    splits = {name: [f for f in ids if treebank.split_of(f) == name] for name in ("train", "dev", "test")}
    assert [len(splits[n]) for n in ("train", "dev", "test")] == [160, 20, 19]
    assert treebank.split_of("wsj_0010.mrg") == "test" and treebank.split_of("wsj_0015.mrg") == "dev"
    test_trees = treebank.load_split("test")
    assert len(test_trees) == 351
    assert all(t.label() == "TOP" for t in test_trees)
    leaves = [leaf for t in test_trees for leaf in t.leaves()]
    assert "*T*-1" not in leaves and "0" not in [t.label() for t in test_trees]
    labels = {node.label() for t in test_trees for node in t.subtrees()}
    assert "-NONE-" not in labels and not any(label.startswith("NP-") for label in labels)


# -- evalb ----------------------------------------------------------------------------------------
def test_evalb_perfect_and_one_wrong_bracket():
    gold = T(GOLD)
    assert evalb([gold], [gold]).f1 == 1.0
    wrong = T("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on)) (NP (DT the) (NN mat))) (. .)))")
    score = evalb([gold], [wrong])
    assert (score.matched, score.gold, score.predicted) == (4, 5, 5)
    assert score.f1 == pytest.approx(0.8)


def test_evalb_ignores_punctuation_attachment_and_counts_tags():
    gold = T(GOLD)
    # the final "." attached inside the VP: same brackets once punctuation is deleted (evalb COLLINS.prm)
    moved = T("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))) (. .))))")
    assert evalb([gold], [moved]).f1 == 1.0
    mistagged = T("(TOP (S (NP (DT The) (NN cat)) (VP (VBN sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))")
    assert evalb([gold], [mistagged]).tag_accuracy == pytest.approx(5 / 6)
    with pytest.raises(ValueError, match="different words"):
        evalb([gold], [T("(TOP (S (NP (DT A) (NN cat))))")])


# -- productions and tree helpers ------------------------------------------------------------------
def test_productions_strip_function_tags_and_skip_preterminals():
    tree = T("(TOP (S (NP-SBJ (DT The) (NN movie)) (VP (VBD was) (ADJP-PRD (JJ good))) (. .)))")
    assert productions(tree) == [
        ("S", ("NP", "VP", ".")),
        ("NP", ("DT", "NN")),
        ("VP", ("VBD", "ADJP")),
        ("ADJP", ("JJ",)),
    ]
    assert unwrap_root(tree).label() == "S"


def test_tree_json_round_trip_with_bracket_tokens():
    tree = nltk.Tree("S", [nltk.Tree("-LRB-", ["("]), nltk.Tree("NN", ["x"]), nltk.Tree("-RRB-", [")"])])
    assert from_json(to_json(tree)) == tree


def test_parse_cache_round_trip(tmp_path):
    cache = ParseCache("fp", tmp_path)
    tree = T("(S (NP (PRP I)) (VP (VBP agree)))")
    cache.put_many([(["I", "agree"], tree), ([""], T("(NP (NN ))"))])
    assert ParseCache.key([]) != ParseCache.key([""])
    fresh = ParseCache("fp", tmp_path)  # reads the shard written above
    assert fresh.get(["I", "agree"]) == tree
    assert fresh.get(["I", "disagree"]) is None
    assert list((tmp_path / "fp").glob("*.jsonl"))


def test_transformers_compat_gives_special_token_wrapping():
    from transformers import AutoTokenizer

    from alict_core.parsing import compat

    compat.ensure()
    from alict_core.models.encoder import encoder_path

    tokenizer = AutoTokenizer.from_pretrained(encoder_path())
    assert tokenizer.build_inputs_with_special_tokens([7]) == [tokenizer.cls_token_id, 7, tokenizer.sep_token_id]


# -- registry / missing artefact ------------------------------------------------------------------
def test_registry_and_missing_model_message(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    clear_loaded()
    assert "benepar-offline" in PARSERS.names()
    with pytest.raises(ArtefactMissingError, match="alict build parser"):
        get_parser("benepar-offline")
    with pytest.raises(AlictError, match="unknown parser"):
        get_parser("no-such-parser")
    clear_loaded()


# -- quick build (tiny slice) -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick_cache(tmp_path_factory):
    """A micro-profile parser (seconds of training) built into a temporary cache."""
    from alict_core.training.targets import build

    root = tmp_path_factory.mktemp("cache")
    artefact = build("parser", "micro", root / "models", log=lambda _: None)
    return root, artefact.path


@pytest.mark.slow
def test_micro_build_writes_a_benepar_model(quick_cache):
    from alict_core.models import artefacts
    from alict_core.training import parser as parser_training
    from alict_core.training.profiles import settings

    root, path = quick_cache
    assert path == root / "models" / "micro" / "parser"
    manifest = artefacts.verify(path, "parser")
    assert manifest["profile"] == "micro" and manifest["steps"] == settings("micro", "parser")["steps"]
    assert set(manifest["files"]) >= {"benepar_model.bin", "config.json", "metrics.json"}
    from alict_core.common.jsonl import read_json

    metrics = read_json(path / "metrics.json")
    cfg = settings("micro", "parser")
    assert 0.0 <= metrics["test"]["labelled_f1"] <= 1.0 and metrics["n_train"] == cfg["train_sentences"]
    assert metrics["history"] and manifest["figures"]["test_f1"] == round(metrics["test"]["labelled_f1"], 4)
    # benepar's own loader reads the saved directory
    import benepar

    from alict_core.parsing import compat

    compat.ensure()
    tree = benepar.Parser(str(path)).parse(["The", "cat", "sat", "."])
    assert tree.leaves() == ["The", "cat", "sat", "."]
    # dev F1 measured with cached encoder features during training == with the real encoder
    from benepar.parse_chart import ChartParser

    dev = [t for t in treebank.load_split("dev") if len(t.leaves()) <= cfg["max_len"]][: cfg["dev_sentences"]]
    model = ChartParser.from_trained(str(path))
    assert parser_training.evaluate(model, dev)["labelled_f1"] == pytest.approx(metrics["dev"]["labelled_f1"], abs=1e-4)


@pytest.mark.slow
def test_quick_model_parse_batch_caches_and_reports_progress(quick_cache, tmp_path):
    root, path = quick_cache
    parser = BeneparParser("quick", path, cache_root=tmp_path)
    assert isinstance(parser, Parser)
    batch = [["I", "loved", "it", "."], [], ["(", "really", ")", "bad"], ["I", "loved", "it", "."], [""]]
    seen: list[tuple[int, int]] = []
    trees = parser.parse_batch(batch, progress=lambda done, total: seen.append((done, total)))
    assert [t.leaves() for t in trees] == batch
    assert trees[0] == trees[3]
    assert seen[-1] == (5, 5)
    shards = list((tmp_path / parser.fingerprint).glob("*.jsonl"))
    assert shards
    again = parser.parse_batch([batch[2]])
    assert again[0] == trees[2]
    assert list((tmp_path / parser.fingerprint).glob("*.jsonl")) == shards, "a cached parse must not be re-parsed"


@pytest.mark.slow
def test_a_page_views_parser_reads_the_parse_cache_but_adds_nothing_to_it(quick_cache, tmp_path):
    """Pass 29: each sentence typed on the NLPLego page (and each seed of a browser-edited spec on the Expansions
    page) wrote a parse shard and its manifest: a browser user grew the shared cache without bound."""
    from alict_core.parsing import ReadOnlyParses

    _, path = quick_cache
    parser = BeneparParser("quick", path, cache_root=tmp_path)
    known = parser.parse_batch([["I", "loved", "it", "."]])[0]
    shards = sorted((tmp_path / parser.fingerprint).iterdir())
    view = ReadOnlyParses(parser)
    assert isinstance(view, Parser) and view.fingerprint == parser.fingerprint
    typed = view.parse_batch([["I", "loved", "it", "."], ["The", "fox", "that", "I", "saw", "ran", "."]])
    assert typed[0] == known and typed[1].leaves() == ["The", "fox", "that", "I", "saw", "ran", "."]
    assert sorted((tmp_path / parser.fingerprint).iterdir()) == shards
    assert parser.cache.get(["The", "fox", "that", "I", "saw", "ran", "."]) is None  # nor in memory


@pytest.mark.slow
def test_cli_parse_prints_tree_and_productions(quick_cache, monkeypatch, capsys):
    root, _ = quick_cache
    monkeypatch.setenv("ALICT_CACHE_DIR", str(root))
    monkeypatch.setenv("ALICT_MODEL_PROFILE", "micro")
    clear_loaded()
    from alict_core.cli import main

    assert main(["parse", "--text", "The movie was good .", "--masks", "--max-masks", "1"]) == 0
    out = capsys.readouterr().out
    assert "The" in out and " -> " in out
    clear_loaded()


# -- the real offline model --------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not is_built("parser"), reason="the offline parser is not built (`make test` builds it before the "
                    "slow tests; alone: `python -m alict_core build parser`)")
def test_real_offline_parser_on_real_sentences():
    clear_loaded()
    parser = get_parser()
    sentences = [
        "The movie was good .".split(),
        "I did n't like the ending , but the actors were great .".split(),
        "it 's a charming and often affecting journey .".split(),
        "these people should not be allowed to vote".split(),
    ]
    trees = parser.parse_batch(sentences)
    assert [t.leaves() for t in trees] == sentences
    first = productions(trees[0])
    assert first[0] == ("S", ("NP", "VP", "."))
    assert ("NP", ("DT", "NN")) in first
    assert [t.label() for t in trees[1].subtrees() if t.height() == 2][:3] == ["PRP", "VBD", "RB"]
    assert get_parser() is parser  # loaded once per process
