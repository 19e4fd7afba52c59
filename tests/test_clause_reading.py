"""``is_clause``: one complete declarative clause after a wrapping template (issue #27, H3)."""

from __future__ import annotations

import pytest

from alict_core.lcspec.predicates import is_clause


@pytest.mark.parametrize("tags, lower, expected", [
    # an opening subordinator whose one verb is its own: no main clause
    (["IN", "RB", "PRP", "VBD", "DT", "NN"], ["if", "only", "he", "had", "a", "plan"], False),
    (["IN", "JJ", "IN", "PRP", "VBZ", "JJ"], ["as", "dull", "as", "it", "is", "long"], False),
    (["IN", "DT", "NN", "VBZ", "JJ"], ["that", "this", "show", "is", "dull"], False),  # "that that ..."
    # subordinate clause + main clause, with or without a comma
    (["IN", "PRP", "VBD", "JJR", "PRP", "MD", "VB"], ["if", "it", "were", "shorter", "it", "would", "work"], True),
    (["IN", "DT", "NN", ",", "DT", "NN", "VBZ", "JJ"], ["in", "the", "end", ",", "the", "plot", "is", "thin"], True),
    # a prepositional phrase, then the subject
    (["IN", "NNS", "IN", "NN", "DT", "NN", "VBZ", "JJ"],
     ["in", "terms", "of", "pace", "this", "show", "is", "slow"], True),
    # an adjective then a new noun phrase: a predicate without a subject
    (["RB", "JJ", "DT", "NN", "VBZ", "JJ"], ["so", "sad", "the", "show", "is", "dull"], False),
    (["RB", "JJ", "NNS", "VBP", "JJ"], ["very", "good", "shows", "are", "rare"], True),
    # an interjection opening
    (["UH", "DT", "NN", "VBZ", "JJ"], ["oh", "the", "show", "is", "dull"], False),
])
def test_complete_clause(tags, lower, expected):
    assert is_clause(tags, lower) is expected
