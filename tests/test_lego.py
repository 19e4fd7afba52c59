"""NLPLego: disassembly, derivation trees, mutations, oracles, CLI (hand-checked sentences, real SST data)."""

from __future__ import annotations

import json

import nltk
import numpy as np
import pytest

from alict_core.lego.assemble import Assembler
from alict_core.lego.checks import problems
from alict_core.lego.disassemble import disassemble
from alict_core.lego.oracles import tree_cases
from alict_core.lego.settings import LegoSettings
from alict_core.runner import run_suite

PAPER = "On May 3, downtown Jacksonville was ravaged by a fire that started as a kitchen fire."


class KeywordModel:
    """A transparent test model: a word list decides the label, everything else is neutral."""

    def __init__(self, name: str, labels: tuple[str, ...], words: dict[str, str]) -> None:
        self.name, self.labels, self.words = name, labels, words

    def predict_proba(self, texts):
        out = np.full((len(texts), len(self.labels)), 0.1)
        for row, text in enumerate(texts):
            hits = [self.words[w] for w in text.lower().replace(",", " ").replace(".", " ").split() if w in self.words]
            label = hits[-1] if hits else "neutral" if "neutral" in self.labels else self.labels[0]
            out[row, self.labels.index(label)] = 1.0
        return out / out.sum(axis=1, keepdims=True)


class FakeSuggester:
    """Always proposes the same words; records how many batched calls it got."""

    name = "fake"
    fingerprint = "fake"

    def __init__(self, words: list[str]) -> None:
        self.words, self.calls = words, []

    def suggest(self, masked_texts, top_k=10):
        self.calls.append(list(masked_texts))
        return [[[(w, 0.1) for w in self.words[:top_k]] for _ in range(t.count("[MASK]"))] for t in masked_texts]


@pytest.fixture(scope="module")
def tagger():
    from alict_core.data.annotate import get_nlp

    return get_nlp()


def test_paper_example_template_adjuncts_and_chain(tagger):
    dis = disassemble(PAPER)
    assert dis.template == "Downtown Jacksonville was ravaged by a fire."
    assert [dis.adjunct_text(a) for a in dis.adjuncts] == ["On May 3", "that started as a kitchen fire"]
    assert [a.kind for a in dis.adjuncts] == ["prepositional phrase", "subordinate clause"]
    assert dis.template_with_slots() == "[1] downtown Jacksonville was ravaged by a fire [2]."
    tree = Assembler(LegoSettings(mlm_top_k=0), tagger=tagger).build(dis)
    assert [n.text for n in tree.chain()] == [
        "Downtown Jacksonville was ravaged by a fire.",
        "On May 3, downtown Jacksonville was ravaged by a fire.",
        PAPER,
    ]
    assert [n.level for n in tree.chain()] == [0, 1, 2]


def test_sentence_without_adjunct_gives_one_node_tree(tagger):
    dis = disassemble("The movie is good.")
    assert dis.adjuncts == [] and dis.template == "The movie is good."
    tree = Assembler(LegoSettings(), tagger=tagger).build(dis)
    assert len(tree.nodes) == 1 and tree.root.parent is None and tree.edges() == []


@pytest.mark.parametrize(
    "text, template, adjuncts",
    [
        ("The cat is in the house.", "The cat is in the house.", []),  # predicate PP stays
        ("The plot relies on tired clichés.", "The plot relies on clichés.", ["tired"]),  # verb's PP object stays
        ("The actors are not good.", "The actors are not good.", []),  # negation is never an adjunct
        ("The film, which is long, is good.", "The film is good.", ["which is long"]),
        ("A gorgeous, witty, seductive film was shown.", "A film was shown.", ["gorgeous", "witty", "seductive"]),
        ("Sadly, I think that the film is too long.", "I think that the film is too long.", ["Sadly"]),
        ("It brings a group of people together.", "It brings a group of people together.", []),  # particle adverb
        ("The story never quite gets over its lopsided conception.", "The story never quite gets over its conception.",
         ["lopsided"]),  # PP after a verb without object stays
        ("He lives in Paris with his old dog.", "He lives in Paris.", ["with his old dog"]),
    ],
)
def test_disassembly_hand_checked(text, template, adjuncts):
    dis = disassemble(text)
    assert dis.template == template
    assert [dis.adjunct_text(a) for a in dis.adjuncts] == adjuncts
    assert dis.render(range(1, len(adjuncts) + 1)) == text


def test_comma_lists_reassemble_cleanly():
    dis = disassemble("A gorgeous, witty, seductive film was shown.")
    assert dis.render([1]) == "A gorgeous film was shown."
    assert dis.render([1, 2]) == "A gorgeous, witty film was shown."


def test_subordinate_clause_from_constituency_parse():
    class OneTreeParser:
        def parse_batch(self, token_lists):
            assert token_lists == [["John", "left", "early", "when", "he", "was", "tired", "."]]
            return [
                nltk.Tree.fromstring(
                    "(S (NP (NNP John)) (VP (VBD left) (ADVP (RB early)) (SBAR (WHADVP (WRB when)) (S (NP (PRP he)) "
                    "(VP (VBD was) (ADJP (JJ tired)))))) (. .))"
                )
            ]

    dis = disassemble("John left early when he was tired.", parser=OneTreeParser())
    assert dis.template == "John left."
    assert "when he was tired" in [dis.adjunct_text(a) for a in dis.adjuncts]


def test_empty_sentence_is_one_clear_error():
    from alict_core.common.errors import AlictError

    with pytest.raises(AlictError, match="empty"):
        disassemble("   ")


def test_synonyms_keep_number_and_tense(tagger):
    dis = disassemble("The talented actors were great.")
    tree = Assembler(LegoSettings(mlm_top_k=0, breadth=4), tagger=tagger).build(dis)
    mutated = [n for n in tree.nodes if n.mutation.kind == "synonym"]
    assert mutated and all(n.parent == tree.root.id for n in mutated)
    assert all(n.text.endswith("actors were great.") for n in mutated)
    from alict_core.lego.lexicon import inflected_synonyms

    assert "began" in inflected_synonyms("started", "start", "VERB", "VBD")
    assert all(w.endswith("s") for w in inflected_synonyms("actors", "actor", "NOUN", "NNS"))


def test_budget_bounds_tree_and_every_node_keeps_its_parent(tagger):
    text = "Yesterday the very talented young actors in Paris gave a wonderful show that moved the old critics."
    dis = disassemble(text)
    assert len(dis.adjuncts) >= 3
    tree = Assembler(LegoSettings(mlm_top_k=0, breadth=3, max_nodes=8), tagger=tagger).build(dis)
    assert len(tree.nodes) <= 8
    index = tree.by_id()
    for node in tree.nodes[1:]:
        assert index[node.parent].level == node.level - 1
    assert tree.chain()[-1].text == text  # the unmutated chain survives any budget
    children: dict[str, int] = {}
    for node in tree.nodes[1:]:
        children[node.parent] = children.get(node.parent, 0) + 1
    assert max(children.values()) <= 3


def test_masked_lm_fills_are_batched_filtered_and_in_context(tagger):
    suggester = FakeSuggester(["the", "wonderful", "quickly", "brilliant"])
    dis = disassemble("I liked the funny film.")
    tree = Assembler(LegoSettings(synonyms_per_word=0, breadth=5), suggester=suggester, tagger=tagger).build(dis)
    assert len(suggester.calls) == 1
    assert suggester.calls[0] == ["I liked the [MASK] film."]
    fills = sorted(n.text for n in tree.nodes if n.mutation.kind == "mlm")
    assert fills == ["I liked the brilliant film.", "I liked the wonderful film."]  # stop word and adverb dropped


SENTIMENT_WORDS = {"wonderful": "positive", "brilliant": "positive", "boring": "negative", "tedious": "negative"}


def test_sentiment_relation_and_runner_verdicts(tagger, tmp_path):
    suggester = FakeSuggester(["wonderful", "boring", "tall"])
    trees = Assembler(LegoSettings(synonyms_per_word=0, breadth=4), suggester=suggester, tagger=tagger).build_many(
        [disassemble("I watched the strange film.")], ["s1"]
    )
    judge = KeywordModel("judge", ("negative", "neutral", "positive"), SENTIMENT_WORDS)
    cases = tree_cases(trees, "sentiment", judge)
    by_component = {c.meta["component"]: c for c in cases}
    assert set(by_component) == {"wonderful", "boring"}  # neutral components give no test
    assert by_component["wonderful"].expected["labels"] == ["negative"]
    assert by_component["wonderful"].expected["direction"] == "down"
    assert by_component["boring"].expected["labels"] == ["positive"]
    assert all(c.test_type == "DIR" and c.expected["tolerance"] == 0.1 for c in cases)
    contrarian = KeywordModel("contrarian", judge.labels, {"wonderful": "negative", "boring": "positive"})
    result = run_suite(cases, [judge, contrarian], cache_root=tmp_path)
    failed = {o.name: int((~o.passed).sum()) for o in result.outcomes}
    assert failed == {"judge": 0, "contrarian": 2}


def test_hate_relation():
    from alict_core.lego.assemble import DerivationTree, Mutation, Node

    def tree(parent_text: str, child_text: str, component: str) -> DerivationTree:
        root = Node("t-n0", None, 0, parent_text, 0, "", ())
        child = Node("t-n1", "t-n0", 1, child_text, 1, component, (1,), {}, Mutation())
        return DerivationTree("t", child_text, {}, [root, child])

    judge = KeywordModel("judge", ("non-hateful", "hateful"), {"vermin": "hateful"})
    clean = tree_cases([tree("They moved here.", "They moved here last year.", "last year")], "hate_speech", judge)[0]
    assert (clean.expected["labels"], clean.expected["direction"]) == (["non-hateful"], "up")
    dilute = tree_cases(
        [tree("They are vermin.", "They are vermin from the city.", "from the city")], "hate_speech", judge
    )[0]
    assert dilute.expected["direction"] == "down"


def test_validity_checks():
    assert problems("The film is good..") == ["double mark"]
    assert problems("The the film is good.") == ["repeated word"]
    assert problems("The film is good and.") == ["broken join"]
    assert problems("On May 3, downtown Jacksonville was ravaged by a fire.") == []


def _sst_sentences(n: int) -> list:
    from alict_core.lego.pipeline import seeds_from_corpus

    return seeds_from_corpus("sentiment", n, seed=1)


def test_corpus_sample_from_the_annotated_corpus_equals_the_raw_split():
    """The app samples from its loaded annotated corpus (``records``): the same sentences as from the raw split."""
    from alict_core.data.corpus import is_annotated, load_corpus
    from alict_core.lego.pipeline import LegoSeed, seeds_from_corpus

    if not is_annotated("sentiment"):
        pytest.skip("the sentiment corpus is not annotated here")
    test_items = [item for item in load_corpus("sentiment").items if item.split == "test"]
    from_corpus = seeds_from_corpus("sentiment", 8, seed=1, records=test_items)
    assert from_corpus == _sst_sentences(8) and len(from_corpus) == 8
    own = LegoSeed("own-1", "The film that I saw yesterday bored me.")
    assert seeds_from_corpus("sentiment", 1, records=[own]) == [own]  # the records given, not the raw split


def test_sst_trees_are_mostly_valid_without_models():
    from alict_core.lego.pipeline import generate_trees

    trees = generate_trees(_sst_sentences(60), LegoSettings(mlm_top_k=0, use_constituency=False))
    generated = [n.text for t in trees for n in t.nodes[1:] if n.text != t.seed]
    assert len(generated) >= 60
    flagged = [t for t in generated if problems(t)]
    assert len(flagged) / len(generated) < 0.05, flagged[:5]


def test_cli_writes_trees_and_cases_usable_as_suite(tmp_path, capsys):
    from alict_core.cli import main

    seeds = tmp_path / "seeds.txt"
    seeds.write_text(PAPER + "\nThe boring plot relies on tired clichés.\n", encoding="utf-8")
    out = tmp_path / "lego"
    code = main(
        [
            "lego",
            "--task",
            "sentiment",
            "--seeds",
            str(seeds),
            "--no-constituency",
            "--mlm-top-k",
            "0",
            "--judge",
            "vader",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    trees = [json.loads(line) for line in (out / "trees.jsonl").read_text().splitlines()]
    assert [t["disassembly"]["template"] for t in trees][0] == "Downtown Jacksonville was ravaged by a fire."
    assert json.loads((out / "meta.json").read_text())["trees"] == 2
    assert (out / "cases.jsonl").read_text().strip()
    code = main(
        [
            "run",
            "--task",
            "sentiment",
            "--models",
            "vader",
            "--suite",
            str(out / "cases.jsonl"),
            "--no-lcs",
            "--quiet",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == 0 and "nlplego" in capsys.readouterr().out


def test_cli_bad_input_is_one_message(tmp_path, capsys):
    from alict_core.cli import main

    code = main(
        [
            "lego",
            "--task",
            "sentiment",
            "--seeds",
            str(tmp_path / "missing.txt"),
            "--no-constituency",
            "--mlm-top-k",
            "0",
            "--judge",
            "vader",
        ]
    )
    assert code == 2 and "not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # refused by the option's range, before any work
        main(["lego", "--task", "sentiment", "--corpus-sample", "3", "--breadth", "0", "--judge", "vader"])
    assert stopped.value.code == 2 and "--breadth: 0 is out of range [1, 20]" in capsys.readouterr().err


@pytest.mark.slow
def test_generated_sst_sentences_parse_as_sentences_with_models():
    """Acceptance: with the project's parser and masked LM, generated sentences parse as S and < 5 % are flagged."""
    from alict_core.commands.expand import load_suggester
    from alict_core.lego.pipeline import generate_trees
    from alict_core.parsing import get_parser

    parser = get_parser()
    trees = generate_trees(
        _sst_sentences(40), LegoSettings(max_nodes=12), parser=parser, suggester=load_suggester("minilm-offline")
    )
    generated = list(dict.fromkeys(n.text for t in trees for n in t.nodes[1:] if n.text != t.seed))[:200]
    assert len(generated) >= 100
    flagged = [t for t in generated if problems(t)]
    assert len(flagged) / len(generated) < 0.05, flagged[:5]
    from alict_core.lego.disassemble import get_dependency_nlp

    parses = parser.parse_batch([[t.text for t in doc] for doc in get_dependency_nlp().pipe(generated)])
    clauses = sum(
        tree.label() in ("S", "SINV", "SQ", "SBARQ") or tree[0].label() in ("S", "SINV", "SQ") for tree in parses
    )
    assert clauses / len(parses) >= 0.95


def test_articles_follow_their_new_neighbour():
    dis = disassemble("It was an old film and a teacher liked it.")
    assert dis.template == "It was a film and a teacher liked it."
    assert dis.render([1], {7: "instructor"}) == "It was an old film and an instructor liked it."


def test_trees_and_cases_round_trip_through_jsonl(tmp_path, tagger):
    from alict_core.lego import pipeline

    settings = LegoSettings(mlm_top_k=0, use_constituency=False)
    trees = pipeline.generate_trees([pipeline.LegoSeed("s1", PAPER)], settings)
    judge = KeywordModel("judge", ("negative", "neutral", "positive"), {"started": "negative"})
    result = pipeline.LegoResult(trees, pipeline.make_cases(trees, "sentiment", judge, settings))
    pipeline.save(result, tmp_path / "out", {"task": "sentiment"})
    again = pipeline.load(tmp_path / "out")
    assert [t.to_dict() for t in again.trees] == [t.to_dict() for t in trees]
    assert [c.to_dict() for c in again.cases] == [c.to_dict() for c in result.cases] and again.cases
    assert pipeline.read_meta(tmp_path / "out")["nodes"] == len(trees[0].nodes)
