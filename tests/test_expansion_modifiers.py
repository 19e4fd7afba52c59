"""The ``attested_modifier`` constraint (modifiers.py): each insertion type accepted on its own example and
refused for each stated reason, with the real corpus counts and spaCy tags."""

from __future__ import annotations

import pytest

from alict_core.data.annotate import annotate_token_lists
from alict_core.expansion.constraints.acceptance import resolve_constraints
from alict_core.expansion.constraints.corpus_stats import load_corpus_stats
from alict_core.expansion.constraints.modifiers import DEFAULTS, attested_modifier_problem, pool_candidate

ALL_TYPES = {**DEFAULTS, "types": ["degree_adverb", "emphasis", "own", "adjective"]}


@pytest.fixture(scope="module")
def corpus():
    stats = load_corpus_stats()
    assert stats is not None, "the data folder's corpora are needed"
    return stats


def _problem(text: str, position: int, corpus, params=DEFAULTS):
    tokens = text.split()
    tags = annotate_token_lists([tokens])[0].tags
    return attested_modifier_problem(tokens, tags, [position], [tokens[position]], corpus, params)


def test_degree_adverb_before_a_predicative_adjective_is_accepted(corpus):
    assert _problem("that 's so fun for kids of any age .", 2, corpus) is None
    assert _problem("it 's so realistic about love .", 2, corpus) is None


@pytest.mark.parametrize(("text", "position", "reason"), [
    ("it is not so funny .", 3, "after 'not'"),  # after a negator: "not so funny" weakens the claim
    ("the results are so far more alienating .", 3, "gradable adverb"),  # "so far" changes the meaning
    ("the film is so wildly funny .", 3, "itself modifies"),  # "so wildly funny": the adverb is a modifier
    ("the best ideas I have so ever seen .", 5, "not a gradable adverb"),
    ("it is a so funny film .", 3, "attributive"),  # "a so funny film" is ungrammatical
    ("Pumpkin wants so to have it both ways .", 2, "plain adjective or adverb"),
    ("thick women are fat women who so fat is in places .", 6, "a verb follows"),
    ("the movie is so funny .", 3, None),
])
def test_degree_adverb_refused_for_each_reason(corpus, text, position, reason):
    problem = _problem(text, position, corpus)
    assert (problem is None) if reason is None else (problem is not None and reason in problem)


def test_degree_adverb_pair_must_be_attested(corpus):
    problem = _problem("the plot is so rectangular .", 3, corpus)
    assert problem is not None and "seen" in problem and "'so' 'rectangular'" in problem


def test_emphasis_after_a_copula_is_accepted_and_refused_elsewhere(corpus):
    assert _problem("The Komediant is indeed a tale worth catching .", 3, corpus) is None
    assert "copula" in _problem("The Komediant indeed is a tale worth catching .", 2, corpus)
    assert "complement" in _problem("the film is indeed not funny .", 3, corpus)  # before a negator
    assert "adverb" in _problem("the gays are indeed undoubtedly ruining it .", 3, corpus)


def test_own_after_a_possessive_is_accepted_and_refused_elsewhere(corpus):
    assert _problem("a father who returns to his own son 's home .", 6, corpus) is None
    assert "possessive" in _problem("But this is the own film .", 4, corpus)
    assert "idiom" in _problem("put this one in its own place .", 5, corpus)  # "in its place"


@pytest.mark.parametrize(("text", "position", "reason"), [
    # the blind expansion study (study11): both reviewers scored these 2-3 (meaning or label shifted)
    ("But this is Lohman 's own film .", 5, "possessive pronoun"),  # a contrast that is not there
    ("It 's a children 's own film in the truest sense .", 5, "possessive pronoun"),
    ("if we had to choose my own wife and i would pick him .", 6, "coordination"),
    ("we do not like your own kind around here .", 5, "idiom"),  # "your kind"
    ("Do I agree that the film is so cool ? no .", 7, "denies"),  # "no" then denies only the degree
    ("I had heard that the film is indeed hampered by its script , but that was not true .", 7, "denies"),
    ("she is so gay .", 2, "identity word"),  # grades the identity: slang, no longer neutral
    ("jews are so white .", 2, "identity word"),
])
def test_blind_study_rejections_are_refused(corpus, text, position, reason):
    problem = _problem(text, position, corpus)
    assert problem is not None and reason in problem, problem


@pytest.mark.parametrize(("text", "position", "reason"), [
    # second blind expansion study (study12): the rule's own examples, written for this test
    ("the cast is clumsy , so obvious , preposterous .", 5, "predicatively"),  # a bare "so" in a list
    ("she grew from a shy girl to so strong , determined queen .", 7, "predicatively"),  # attributive "so"
    ("the film is smart , especially funny and warm .", 5, "list of adjectives"),  # one member of a list
    ("the film shows us why it is so compelling .", 7, "'why' opens"),  # presupposes "very compelling"
    ("i reject the notion that people are indeed obligated to pay .", 7, "'that' opens"),  # reported, not asserted
    ("the plot is so predictable , but the ending works .", 3, "contrast"),  # tips a mixed verdict
    ("the joke surely is indeed old .", 4, "stacked"),  # stacked on the adverb "surely"
    ("the best thing is indeed that it is watchable .", 4, "before a clause"),
])
def test_second_study_rejections_are_refused(corpus, text, position, reason):
    problem = _problem(text, position, corpus)
    assert problem is not None and reason in problem, problem


@pytest.mark.parametrize(("text", "position"), [
    ("I think that the film is so funny .", 6),  # a template's "that" complement is fine
    ("though the film is indeed static , it works .", 4),  # concessive "indeed" is natural
    ("that 's so fun for kids of any age .", 2),  # demonstrative "that"
    ("the film is so funny and smart .", 3),  # the degree word scopes over the coordination
])
def test_second_study_rules_keep_natural_insertions(corpus, text, position):
    assert _problem(text, position, corpus) is None


def test_adjectives_are_opt_in_and_refuse_identity_reference_and_restricted_nouns(corpus):
    assert "enabled type" in _problem("The Komediant is a human tale worth catching .", 4, corpus)
    assert _problem("The Komediant is a human tale worth catching .", 4, corpus, ALL_TYPES) is None
    assert "nationality" in _problem("the french movie was fun .", 1, corpus, ALL_TYPES)
    assert "which thing is meant" in _problem("one of the finest films of the third year .", 7, corpus, ALL_TYPES)
    assert "restricted" in _problem("the local people who live there .", 1, corpus, ALL_TYPES)


def test_one_modifier_at_a_time(corpus):
    tokens = "the movie is so very funny .".split()
    tags = annotate_token_lists([tokens])[0].tags
    problem = attested_modifier_problem(tokens, tags, [3, 4], ["so", "very"], corpus, DEFAULTS)
    assert problem is not None and "2 words" in problem


def test_pool_candidates_are_enabled_types_with_an_attested_pair(corpus):
    masked = "the movie is [MASK] funny .".split()
    assert pool_candidate(masked, 3, "RB", "so", corpus, DEFAULTS)
    assert not pool_candidate(masked, 3, "RB", "very", corpus, DEFAULTS)  # SentiWordNet rates "very" positive
    assert not pool_candidate(masked, 3, "RB", "so", None, DEFAULTS)  # no corpus: no evidence
    assert pool_candidate("is [MASK] a tale".split(), 1, "RB", "indeed", corpus, DEFAULTS)


def test_spec_can_tune_the_types_and_the_pair_count():
    constraints = resolve_constraints({"attested_modifier": {"types": ["own"], "min_pair_count": 5}})
    assert constraints.params("attested_modifier")["types"] == ["own"]
    assert resolve_constraints({"attested_modifier": {"enabled": False}}).params("attested_modifier") is None
