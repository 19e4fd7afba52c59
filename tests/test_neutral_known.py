"""Neutral means known and neutral: unknown words are never neutral, nor accepted as inserted words."""

from __future__ import annotations

from alict_core.data.annotate import annotate_text
from alict_core.data.polarity_lexicon import token_polarity
from alict_core.expansion import expand, rejection_counts


def test_unknown_and_other_pos_polar_words_are_not_neutral():
    assert token_polarity("zorblatt", "zorblatt", "ADJ") == "unknown"
    assert token_polarity("great", "great", "ADV") == "unknown"  # SentiWordNet has no adverb "great"
    assert token_polarity("French", "French", "ADJ") == "neutral"
    assert token_polarity("the", "the", "DET") == "neutral"  # function words carry no polarity
    annotation = annotate_text("a zorblatt film")
    classes = dict(zip(annotation.tokens, annotation.classes, strict=True))
    assert not any(c.startswith("neutral_") for c in classes["zorblatt"])


class WordParser:
    fingerprint = "flat"

    def parse_batch(self, token_lists):
        import nltk

        return [nltk.Tree("S", [nltk.Tree("X", [t]) for t in tokens]) for tokens in token_lists]


class Masked:
    def __init__(self, seed_id, tokens, positions, tags):
        self.seed_id, self.tokens, self.mask_positions, self.mask_tags = seed_id, tokens, positions, tags

    @property
    def text(self):
        return " ".join(self.tokens)

    def to_dict(self):
        return {"text": self.text, "tokens": self.tokens, "mask_positions": self.mask_positions}


def noun_masker(seed_id, tree, top_k, max_masks):
    tokens = tree.leaves()
    i = tokens.index("movie")
    return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"])]


class MadeUpSuggester:
    """An MLM that proposes a made-up word first (MLMs do: sub-word pieces glued into non-words)."""

    fingerprint = "made-up"

    def suggest(self, masked_texts, top_k=10):
        return [[[("blorptastic", 0.6), ("french", 0.3)]] for _ in masked_texts]


def test_an_unknown_inserted_word_is_never_accepted(tmp_path):
    seeds = [{"id": "s1", "lc_id": "LC1", "task": "sentiment", "text": "the movie opens friday .",
              "protected_spans": []}]
    # "french" is a nationality word, which attested_modifier refuses by design: the check is off here
    spec = {"id": "LC1", "task": "sentiment", "expansion": {"allowed_polarity": ["neutral"], "max_per_seed": 5,
                                                            "checks": {"attested_modifier": {"enabled": False}}}}
    result = expand(seeds, spec, WordParser(), MadeUpSuggester(), masker=noun_masker, out_dir=tmp_path,
                    predicate_check=lambda spec, seed, text: (True, "ok"))
    by_word = {r["words"][0]: r for r in result.rows}
    assert not by_word["blorptastic"]["accepted"]
    assert "unknown to SentiWordNet" in by_word["blorptastic"]["reasons"]["polarity"]
    assert [r["text"] for r in result.accepted()] == ["the french movie opens friday ."]
    assert rejection_counts(result.rows)["polarity:unknown"] == 1
    assert result.counts["LC1"]["rejected"]["polarity:unknown"] == 1
