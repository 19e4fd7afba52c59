"""The acceptance constraints of expansion (constraints.py): each check on small real cases, spec tuning,
the neighbour-likelihood test and the per-POS table."""

from __future__ import annotations

import pytest

from alict_core.data.annotate import annotate_token_lists
from alict_core.expansion.constraints.acceptance import CHECK_NAMES, FillContext, constraints_of, resolve_constraints
from alict_core.expansion.constraints.corpus_stats import count_tokens, load_corpus_stats
from alict_core.expansion.constraints.fill_checks import ExpansionError
from alict_core.expansion.pos_table import format_pos_table, judged_validity, pos_table
from alict_core.expansion.search import neighbour_likelihood_problem


@pytest.fixture(scope="module")
def corpus():
    stats = load_corpus_stats()
    assert stats is not None, "the data folder's corpora are needed"
    return stats


def _context(text: str, positions: list[int], slot_tags: list[str], corpus=None, score=None, best=None):
    tokens = text.split()
    tags = annotate_token_lists([tokens])[0].tags
    return FillContext(tokens, tags, positions, [tokens[p] for p in positions], slot_tags, score, best, corpus)


def _failure(ctx, overrides=None):
    """The first failing check, ``attested_modifier`` off unless asked for: these examples test the other checks
    on insertions it refuses by design (its own tests: test_expansion_modifiers.py)."""
    found = resolve_constraints({"attested_modifier": {"enabled": False}, **(overrides or {})}).first_failure(ctx)
    return found[0] if found else None


def test_corpus_counts_words_and_bigrams_within_word_runs():
    unigrams, bigrams = count_tokens([["a", "great", "film", ",", "great", "fun"], ["is", "n't", "it"]])
    assert unigrams["great"] == 2 and bigrams[("a", "great")] == 1 and bigrams[("is", "n't")] == 1
    assert (",", "great") not in bigrams and ("film", "great") not in bigrams  # no pair across punctuation


def test_corpus_stats_know_common_pairs_and_not_broken_ones(corpus):
    assert corpus.bigram("horror", "film") >= 3 and corpus.bigram("tells", "to") == 0
    assert corpus.count("film") > 1000 and corpus.count("zzzqx") == 0


@pytest.mark.parametrize("text,positions,slots,expected", [
    ("he tells to us a story .", [2], ["TO"], "open_class_slot"),  # closed class is off by default
    ("it is a mixed bag film .", [4], ["NN"], "noun_modifier"),  # compound never seen
    ("it is an interesting film .", [3], ["JJ"], None),
    ("it is a interesting film .", [3], ["JJ"], "article_agreement"),
    ("a story of brothers and young sisters .", [5], ["JJ"], "coordination"),
    ("a story of young brothers and sisters .", [3], ["JJ"], None),
    ("it is a good horror film .", [4], ["NN"], None),
    ("it is a good film .", [3], ["JJ"], None),
    ("the jokes are almost funny .", [3], ["RB"], "scalar_adverb"),
    ("the jokes are also funny .", [3], ["RB"], None),
    ("it is funny and very touching .", [4], ["RB"], None),
])
def test_each_fill_check_on_its_own_example(corpus, text, positions, slots, expected):
    assert _failure(_context(text, positions, slots, corpus)) == expected


def test_corpus_and_score_checks(corpus):
    assert _failure(_context("it is a sesquipedalian film .", [3], ["JJ"], corpus)) == "commonness"
    assert _failure(_context("it was the also film .", [3], ["RB"], corpus)) == "corpus_bigram"
    ctx = _context("it is a good film .", [3], ["JJ"], corpus, score=0.06, best=0.9)
    assert _failure(ctx) == "score_margin"
    assert _failure(ctx, {"score_margin": {"min_ratio": 0.05}}) is None
    assert _failure(_context("it is a good film .", [3], ["JJ"], corpus, score=0.01, best=0.01)) == "weak_fill"


def test_a_spec_opts_in_to_closed_class_slots_and_disables_checks(corpus):
    spec = {"id": "lcx", "expansion": {"checks": {"open_class_slot": {"tags": ["JJ", "DT"]},
                                                  "corpus_bigram": {"enabled": False},
                                                  "attested_modifier": {"enabled": False}}}}
    constraints = constraints_of(spec)
    assert constraints.params("corpus_bigram") is None and list(constraints.params("open_class_slot")["tags"]) == \
        ["JJ", "DT"]
    ctx = _context("she saw these films .", [2], ["DT"], corpus)
    assert constraints.first_failure(ctx) is None and constraints_of({}).first_failure(ctx)[0] == "open_class_slot"


def test_unknown_check_or_parameter_is_one_clear_error():
    with pytest.raises(ExpansionError, match=r"LC lcx expansion\.checks: unknown check 'fluent'"):
        constraints_of({"id": "lcx", "expansion": {"checks": {"fluent": {}}}})
    with pytest.raises(ExpansionError, match=r"score_margin: unknown parameter 'ratio'"):
        resolve_constraints({"score_margin": {"ratio": 0.2}})
    assert CHECK_NAMES[0] == "open_class_slot" and CHECK_NAMES[-1] == "neighbour_likelihood"


def test_spec_schema_accepts_checks():
    from alict_core.lcspec import load_task_specs

    spec = load_task_specs("sentiment")[0]
    data = spec.model_dump()
    data["expansion"]["checks"] = {"commonness": {"min_count": 5}}
    again = type(spec).model_validate(data)
    assert constraints_of(again).params("commonness")["min_count"] == 5


def _fake_lm(table):
    """Masked texts → fills: ``table`` maps a masked text to its (word, probability) list."""
    return lambda texts: [table.get(t, [("other", 0.5)]) for t in texts]


def test_neighbour_likelihood_rejects_an_insertion_that_makes_a_neighbour_unlikely():
    seed = "he tells us a story".split()
    expanded = "he tells to us a story".split()
    lm = _fake_lm({"he tells [MASK] a story": [("us", 0.6), ("me", 0.2)],
                   "he tells to [MASK] a story": [("me", 0.3), ("us", 0.05)],
                   "he [MASK] us a story": [("tells", 0.5)], "he [MASK] to us a story": [("tells", 0.4)]})
    why = neighbour_likelihood_problem(seed, expanded, [2], lm, max_drop=0.7)
    assert why is not None and "'us'" in why
    assert neighbour_likelihood_problem(seed, expanded, [2], lm, max_drop=0.95) is None


def test_neighbour_unknown_to_the_seeds_fills_gives_no_evidence():
    lm = _fake_lm({})
    assert neighbour_likelihood_problem("a film".split(), "a good film".split(), [1], lm, max_drop=0.1) is None


def test_pos_table_counts_fills_accepted_and_judged_valid():
    rows = [{"id": "a", "text": "x", "accepted": True, "masked": {"mask_tags": ["JJ"]}},
            {"id": "b", "text": "y", "accepted": True, "masked": {"mask_tags": ["JJ"]}},
            {"id": "c", "text": "z", "accepted": False, "masked": {"mask_tags": ["JJ"]}},
            {"id": "d", "text": "w", "accepted": True, "masked": {"mask_tags": ["RB"]}}]
    judged = judged_validity([{"kind": "expansion", "case_id": "a", "text": "x", "validity": 5},
                              {"kind": "expansion", "case_id": "a", "text": "x", "validity": 4},
                              {"kind": "expansion", "case_id": "b", "text": "y", "validity": 2},
                              {"kind": "seed", "case_id": "d", "text": "w", "validity": None}])
    table = pos_table(rows, judged)
    assert table == [{"pos": "JJ", "fills": 3, "accepted": 2, "judged": 2, "valid": 1},
                     {"pos": "RB", "fills": 1, "accepted": 1, "judged": 0, "valid": 0}]
    text = format_pos_table(table)
    assert "1/2" in text.splitlines()[1] and text.splitlines()[2].split()[-1] == "—"


def test_expand_skips_closed_class_slots_before_the_masked_lm_unless_the_spec_opts_in(tmp_path):
    from test_expansion import FixedSuggester, Masked, WordParser, always, seed

    from alict_core.expansion import expand

    def masker(seed_id, tree, top_k, max_masks):
        tokens = tree.leaves()
        i = tokens.index("movie")
        return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"]),
                Masked(seed_id, tokens[:1] + ["[MASK]"] + tokens[1:], [1], ["IN"])]

    seeds = [seed("i saw the movie .", "LC1-0001")]
    spec = {"id": "LC1", "task": "sentiment", "expansion": {"allowed_polarity": ["neutral"], "max_per_seed": 2}}
    suggester = FixedSuggester()
    result = expand(seeds, spec, WordParser(), suggester, masker=masker, predicate_check=always, out_dir=tmp_path)
    assert suggester.calls[0] == ["i saw the [MASK] movie ."] and result.counts["LC1"]["masked"] == 1
    assert {tuple(r["masked"]["mask_tags"]) for r in result.rows} == {("JJ",)}
    opted = {**spec, "expansion": {**spec["expansion"], "checks": {"open_class_slot": {"tags": ["JJ", "IN"]}}}}
    suggester = FixedSuggester()
    result = expand(seeds, opted, WordParser(), suggester, masker=masker, predicate_check=always, out_dir=tmp_path)
    assert sorted(suggester.calls[0]) == ["i [MASK] saw the movie .", "i saw the [MASK] movie ."]
    assert result.settings["constraints"]["checks"]["open_class_slot"]["tags"] == ["JJ", "IN"]
