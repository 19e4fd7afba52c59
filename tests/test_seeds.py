"""Seed engine: predicates and rules on small hand-made corpora; every shipped spec on the real corpora."""

from __future__ import annotations

import textwrap

import pytest

from alict_core.data.corpus import corpus_from_records
from alict_core.data.records import LabelledText
from alict_core.lcspec import load_task_specs, parse_spec_text
from alict_core.seeds import (
    expansion_predicates_hold,
    expected_passes,
    find_seeds,
    identity_swaps,
    match_groups,
)


def record(i: int, text: str, label: str, split: str = "train") -> LabelledText:
    return LabelledText(f"t{i}", text, label, split, tuple(text.split()))


@pytest.fixture(scope="module")
def tiny():
    texts = [
        ("This is a film about a town .", "neutral"),
        ("This is a great movie .", "positive"),
        ("That is terrible .", "negative"),
        ("The plot is thin and the acting is awful .", "negative"),
        ("A lovely , warm story .", "positive"),
        ("It opens on Friday .", "neutral"),
        ("These are the scenes of the film .", "neutral"),
        ("She said the women were late .", "neutral"),
    ]
    return corpus_from_records("tiny", "sentiment", [record(i, text, label) for i, (text, label) in enumerate(texts)])


def spec_of(body: str):
    head = "schema_version: 1\nid: t\ntask: sentiment\ncapability: c\ntitle: t\ndescription: d\n"
    return parse_spec_text(head + textwrap.dedent(body), "t.yaml")


def ids(corpus, predicate_yaml: str) -> list[str]:
    spec = spec_of(f"""\
        search:
          - name: g
            predicates:
{textwrap.indent(textwrap.dedent(predicate_yaml), ' ' * 14)}
        rules:
          - name: r
            select: g
            expected: {{label: neutral}}
        """)
    return [item.id for item in match_groups(spec, corpus)["g"]]


def test_length_and_label_predicates(tiny):
    assert ids(tiny, "- length: {lt: 6}") == ["t2", "t5"]
    assert ids(tiny, "- length: {ge: 9, le: 10}") == ["t3"]
    assert ids(tiny, "- label: [positive, negative]") == ["t1", "t2", "t3", "t4"]


def test_lexicon_any_all_include_exclude(tiny):
    assert ids(tiny, "- lexicon: {include: [positive_adj], mode: any}") == ["t1", "t4"]
    assert ids(tiny, "- lexicon: {include: [negative_adj, neutral_noun], mode: all}") == ["t3", "t7"]
    assert "t1" not in ids(tiny, "- lexicon: {exclude: [positive_adj, negative_adj], mode: any}")
    both = ids(tiny, "- lexicon: {exclude: [negative_adj, neutral_noun], mode: all}")
    assert "t3" not in both and "t7" not in both and "t0" in both and "t2" in both


def test_words_phrases_and_anchors(tiny):
    assert ids(tiny, "- words: {include: [film, movie], mode: any}") == ["t0", "t1", "t6"]
    assert ids(tiny, "- words: {include: [film, town], mode: all}") == ["t0"]
    assert ids(tiny, "- phrases: {include: [the acting is]}") == ["t3"]
    assert ids(tiny, "- starts_with: [This is, These are]") == ["t0", "t1", "t6"]
    assert ids(tiny, "- ends_with: [on Friday .]") == ["t5"]
    assert ids(tiny, "- lexicon: {include: [identity, pronoun]}") == ["t7"]


def test_replace_rule_marks_inserted_text_protected(tiny):  # bare-verb pairs: first match in the sentence
    spec = spec_of("""\
        search:
          - name: g
            predicates:
              - starts_with: ["This is", "These are"]
        rules:
          - name: negate
            replace: {group: g, pairs: [{src: is, tgt: is not}, {src: are, tgt: are not}]}
            expected: {label: neutral}
        """)
    seeds = find_seeds(spec, tiny).seeds
    texts = {s.text for s in seeds}
    assert texts == {"This is not a film about a town .", "This is not a great movie .",
                     "These are not the scenes of the film ."}
    seed = next(s for s in seeds if s.text.startswith("These"))
    start, end = seed.protected_spans[0]
    assert seed.text[start:end] == "are not"
    assert seed.source_ids == ["t6"] and seed.rule_kind == "replace"


def test_replace_acts_on_the_matched_target_and_never_negates_twice():
    texts = [
        ("These are films where the hero is late .", "neutral"),
        ("The plot is thin , this is a mess .", "negative"),
        ("This is not a good film .", "negative"),
        ("That is n't funny .", "negative"),
        ("It never works , and this is why .", "negative"),
    ]
    corpus = corpus_from_records("neg", "sentiment", [record(i, text, label) for i, (text, label) in enumerate(texts)])
    spec = spec_of("""\
        search:
          - name: g
            predicates:
              - phrases: {include: ["This is", "That is", "These are"]}
        rules:
          - name: negate
            replace:
              group: g
              pairs:
                - {src: This is, tgt: This is not}
                - {src: That is, tgt: That is not}
                - {src: These are, tgt: These are not}
            expected: {one_of: [positive, neutral]}
        """)
    texts_out = sorted(s.text for s in find_seeds(spec, corpus).seeds)
    # "These are ... is ...": the matched target's verb, not the later "is"; a mid-sentence target keeps its case;
    # already negated sentences ("is not", "is n't", "never" elsewhere) are skipped: no double negation
    assert texts_out == ["The plot is thin , this is not a mess .", "These are not films where the hero is late ."]


def test_concat_puts_one_final_mark_and_pairs_groups(tiny):
    spec = spec_of("""\
        search:
          - name: neu
            predicates: [{label: neutral}]
          - name: pos
            predicates: [{label: positive}]
        rules:
          - name: paired
            concat: [["I wouldn't say"], {group: neu}, [","], {group: pos}]
            pairing: {mode: paired, seed: 3}
            expected: {label: negative}
        sampling: {max_seeds: null, max_per_source: 10}
        """)
    result = find_seeds(spec, tiny)
    assert result.n_candidates == 2  # min(4 neutral, 2 positive) pairs, not 4 x 2
    for seed in result.seeds:
        assert seed.text.startswith("I would n't say ") and seed.text.endswith(" .")
        assert seed.text.count(" . ") == 0 and not seed.text.endswith(". .")
    assert len({s.source_ids[0] for s in result.seeds}) == 2  # each sentence in one pair only
    again = find_seeds(spec, tiny)
    assert [s.text for s in again.seeds] == [s.text for s in result.seeds]


def test_concat_cross_product_provenance_and_labels(tiny):
    spec = spec_of("""\
        search:
          - name: pos
            predicates: [{label: positive}]
          - name: neg
            predicates: [{label: negative}]
        rules:
          - name: flip
            concat: [["I thought that", "They said"], {group: pos}, ["but now I don't like it."]]
            expected: {label: negative}
          - name: keep
            concat: [["Do I think that"], {group: neg}, ["? no"]]
            expected: {same_as_source: neg, source_map: {negative: [positive, neutral]}}
        sampling: {max_seeds: null}
        """)
    result = find_seeds(spec, tiny)
    assert result.n_candidates == 2 * 2 + 2 and len(result.seeds) == 6
    seed = next(s for s in result.seeds if s.text.startswith("They said this is a great movie"))
    # lower-cased head, inner '.' dropped
    assert seed.text == "They said this is a great movie but now I do n't like it ."
    assert seed.slots == {"part1": "They said", "part3": "but now I do n't like it ."}
    assert [seed.text[a:b] for a, b in seed.protected_spans] == ["They said", "but now I do n't like it ."]
    segment = seed.segments[0]
    assert seed.text[segment.start:segment.end] == "this is a great movie" and segment.source_id == "t1"
    question = next(s for s in result.seeds if s.rule == "keep")
    assert question.expected == {"kind": "one_of", "labels": ["positive", "neutral"], "tolerance": None}


def test_sampling_is_deterministic_and_capped(sentiment_corpus):
    spec = next(s for s in load_task_specs("sentiment") if s.id == "sentiment-lc03")
    first = find_seeds(spec, sentiment_corpus, max_seeds=50, seed=7)
    again = find_seeds(spec, sentiment_corpus, max_seeds=50, seed=7)
    other = find_seeds(spec, sentiment_corpus, max_seeds=50, seed=8)
    assert [s.text for s in first.seeds] == [s.text for s in again.seeds]
    assert [s.text for s in first.seeds] != [s.text for s in other.seeds]
    assert len(first.seeds) == 50 and first.n_candidates > 5000  # sampled, not exploded
    uses = {}
    for s in first.seeds:
        for source in s.source_ids:
            uses[source] = uses.get(source, 0) + 1
    assert max(uses.values()) <= spec.sampling.max_per_source


@pytest.mark.parametrize("task", ["sentiment", "hate_speech"])
def test_every_shipped_spec_yields_seeds_on_the_real_corpus(task, sentiment_corpus, hate_corpus):
    corpus = sentiment_corpus if task == "sentiment" else hate_corpus
    for spec in load_task_specs(task):
        result = find_seeds(spec, corpus, max_seeds=20)
        assert result.seeds, spec.id
        for seed in result.seeds:
            assert seed.lc_id == spec.id and seed.source_ids and seed.expected["kind"]
            for a, b in seed.protected_spans:
                assert 0 <= a < b <= len(seed.text)


def test_expected_passes():
    assert expected_passes({"kind": "label", "labels": ["negative"]}, "negative")
    assert not expected_passes({"kind": "label", "labels": ["negative"]}, "neutral")
    assert expected_passes({"kind": "one_of", "labels": ["positive", "neutral"]}, "neutral")
    assert not expected_passes({"kind": "not_label", "labels": ["hateful"]}, "hateful")
    with pytest.raises(ValueError):
        expected_passes({"kind": "invariance", "labels": [], "tolerance": 0.1}, "neutral")


def test_identity_swaps_keep_form_and_case():
    variants = identity_swaps("Women are great and he knows it")
    assert "Trans people are great and he knows it" in variants
    assert "Immigrants are great and he knows it" in variants
    assert "Women are great and she knows it" not in variants  # pronouns are not swapped (ninth pass)
    assert all(v != "Women are great and he knows it" for v in variants)
    assert identity_swaps("a film about nothing") == []


def test_expansion_predicates_recheck_the_source_segment(sentiment_corpus):
    spec = next(s for s in load_task_specs("sentiment") if s.id == "sentiment-lc01")
    seed = next(s for s in find_seeds(spec, sentiment_corpus, max_seeds=None).seeds
                if " a " in s.text and len(s.text.split()) < 9)
    tokens = seed.text.split()
    at = tokens.index("a") + 1
    ok, why = expansion_predicates_hold(spec, seed, " ".join(tokens[:at] + ["French"] + tokens[at:]))
    bad, reason = expansion_predicates_hold(spec, seed, " ".join(tokens[:at] + ["wonderful"] + tokens[at:]))
    assert ok and not bad and "lexicon" in reason, (seed.text, why)


def test_expansion_predicates_ignore_length_on_rule_text(sentiment_corpus):
    spec = next(s for s in load_task_specs("sentiment") if s.id == "sentiment-lc03")
    seed = max(find_seeds(spec, sentiment_corpus, max_seeds=30).seeds, key=lambda s: len(s.segments[0].source_id))
    segment = seed.segments[0]
    inside = seed.text[: segment.end] + " really" + seed.text[segment.end :]
    assert expansion_predicates_hold(spec, seed, inside)[0]


def test_expansion_length_is_rechecked_on_the_corpus_part(sentiment_corpus):
    spec = next(s for s in load_task_specs("sentiment") if s.id == "sentiment-lc01")  # length < 10
    seed = next(s for s in find_seeds(spec, sentiment_corpus, max_seeds=None).seeds if len(s.text.split()) == 9)
    tokens = seed.text.split()
    ok, reason = expansion_predicates_hold(spec, seed, " ".join(tokens[:1] + ["French"] + tokens[1:]))
    assert not ok and "length" in reason


def test_seeds_cli_prints_counts_and_writes_jsonl(tmp_path, capsys, sentiment_corpus):
    import json

    from alict_core.cli import main
    from alict_core.seeds import SeedSet

    assert main(["seeds", "--task", "sentiment", "--lc", "LC4", "--lc", "11", "--max", "5", "--json",
                 "--out", str(tmp_path)]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert [c["lc_id"] for c in counts] == ["sentiment-lc04", "sentiment-lc11"]
    assert counts[0]["matches"] == 123 and counts[0]["seeds"] == 5
    seeds = SeedSet.read_seeds(tmp_path / "sentiment-lc04.jsonl")
    assert len(seeds) == 5 and all(" is not " in s.text or " are not " in s.text for s in seeds)
    assert main(["seeds", "--task", "sentiment", "--lc", "lc99", "--out", str(tmp_path)]) == 2
    assert "valid names" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["x", -1, True, 2.5])
def test_seed_cap_must_be_a_whole_number(bad, tiny):
    from alict_core.common.limits import LimitError

    spec = load_task_specs("sentiment")[0]
    with pytest.raises(LimitError, match=f"max_seeds of {spec.id} must be a whole number >= 0"):
        find_seeds(spec, tiny, max_seeds=bad)
