"""Check 5 (fluency) on fills the full-profile MLM proposed for SST seeds, tagged by the project's spaCy model."""

from __future__ import annotations

import pytest

from alict_core.expansion.constraints.fill_checks import tag_token_lists, validate_fill
from alict_core.expansion.constraints.fluency import check_fluency


def verdict(masked: str, word: str, score: float | None = 0.3) -> tuple[bool, str]:
    tokens = masked.split(" ")
    position = tokens.index("[MASK]")
    tokens[position] = word
    tags = tag_token_lists([tokens])[0].tags
    return check_fluency(tokens, tags, [position], [word], score)


ONE_PER_RULE = [
    ("[MASK] They should have found Orson Welles ' great-grandson .", "but", "sentence_start"),
    ("[MASK] I agreed that I wanted more but I did n't .", "and", "sentence_start"),
    ("This is not one [MASK] of Polanski 's best films .", "one", "repeated_word"),
    ("Frank McKlusky [MASK] C.I. is that movie !", "and", "splits_name"),
    ("I agreed that looks and feels like a low-budget hybrid of Scarface or Carlito 's [MASK] Way but I did n't .",
     "own", "splits_name"),
    ("In the telling of a story largely untold , [MASK] Bui chooses to produce something unfamiliar .", "the",
     "determiner_before_name"),
    ("Goldbacher draws on an elegant visual sense and a talent for [MASK] easy , seductive pacing .", "a", "article"),
    ("Do I agree that it 's better suited for [MASK] the history or biography channel ? yes .", "on",
     "stacked_function_word"),
    ("When a movie asks you to feel sorry for him , it already has [MASK] one strike against it .", "a",
     "stacked_function_word"),
    ("For proof of that on the cinematic front , look no [MASK] further than this edition .", "more",
     "stacked_function_word"),
    ("Mostly honest , this somber picture reveals itself [MASK] slowly , intelligently , artfully .", "and",
     "unbalanced_coordination"),
]


@pytest.mark.parametrize(("masked", "word"), [
    ("Fisher has bared his [MASK] soul and confronted his own shortcomings here .", "own"),
    ("The fate that lies in store for [MASK] moviegoers lured to the mediocrity .", "the"),
    ("It forces you to watch people doing unpleasant things , and it [MASK] maintains a cool distance .", "also"),
    ("For [MASK] VeggieTales fans , this is not more appetizing than a side dish of asparagus .", "the"),
    ("It is one of the most frantic Christmas season pics ever delivered by [MASK] Hollywood studios .", "the"),
    ("It 's an unpretentious , sociologically pointed slice of life , [MASK] a film that respects its audience .",
     "and"),
    ("I would n't say [MASK] you 've already seen Heartbreak if you 've watched Nurse Betty .", "that"),
    ("A chick flick for [MASK] guys .", "those"),
    ("It does n't try to surprise us with [MASK] plot twists , but rather seems to enjoy its own transparency .",
     "these"),
    ("His work with actors is [MASK] particularly impressive .", "also"),
    ("If [MASK] horses could fly , this would be a better movie .", "those"),
])
def test_fills_that_read_as_english_pass(masked: str, word: str) -> None:
    ok, reason = verdict(masked, word)
    assert ok, reason


def test_a_fill_the_masked_lm_barely_expects_is_a_weak_fill() -> None:
    masked = "Here 's my [MASK] advice , Kev ."
    assert verdict(masked, "own", score=0.007) == (False, "weak_fill: the masked LM gives it 0.007 < 0.05")
    assert verdict(masked, "own", score=0.09)[0]
    assert not verdict("A chick flick for [MASK] guys .", "those", score=0.04)[0]
    assert verdict("A chick flick for [MASK] guys .", "those", score=None)[0]  # no score: the floor is not applied
    # two slots: the floor applies to the geometric mean per word (0.09 × 0.09 → 0.09 ≥ 0.05, though 0.0081 < 0.05)
    tokens = "Fisher has bared his own soul and also confronted his shortcomings .".split()
    tags = tag_token_lists([tokens])[0].tags
    assert check_fluency(tokens, tags, [4, 7], ["own", "also"], 0.09 * 0.09)[0]


def test_validate_fill_records_the_fluency_verdict_beside_the_other_checks() -> None:
    masked = {"text": "[MASK] The film virtually chokes on its own self-consciousness .",
              "mask_positions": [0], "mask_tags": ["CC"]}
    seed = {"text": "The film virtually chokes on its own self-consciousness .", "protected_spans": []}
    opted_in = {"id": "sentiment-lc01", "expansion": {"allowed_polarity": ["neutral"],
                                                      "checks": {"open_class_slot": {"tags": ["CC"]},
                                                                 # the modifier types would refuse "but" first
                                                                 "attested_modifier": {"enabled": False}}}}
    result = validate_fill(masked, ["but"], seed, opted_in, score=0.2, predicate_check=lambda *_: (True, "ok"))
    # the fluency rules are the acceptance constraint "grammar_rules"
    assert result.verdicts["fluency"] is False
    assert result.reasons["fluency"].startswith("grammar_rules: sentence_start:")
    assert result.verdicts["pos"] and result.verdicts["polarity"] and result.verdicts["protected"]
    assert not result.ok
    default = {"id": "sentiment-lc01", "expansion": {"allowed_polarity": ["neutral"]}}
    result = validate_fill(masked, ["but"], seed, default, score=0.2, predicate_check=lambda *_: (True, "ok"))
    assert result.reasons["fluency"].startswith("open_class_slot: slot tag CC")  # closed class: off by default


AGREEMENT_CLAUSE_COMPOUND_STACKING = [
    ("It throws cinematic history down the toilet in favor of [MASK] bright flashes and loud bangs .", "a",
     "agreement"),
    ("Its most obvious pleasure , but [MASK] it would count for very little .", "if", "dangling_clause"),
    ("A gorgeous , somnolent show [MASK] that is not splendidly mummified .", "comedy", "noun_compound"),
    ("Reggio falls victim to relying on [MASK] the very digital technology that he scorns .", "with",
     "stacked_function_word"),
    ("It is the exuberant openness with which [MASK] he expresses our most basic emotions .", "that",
     "stacked_function_word"),
    ("This is one of those films that [MASK] his work shows .", "the", "stacked_function_word"),
    ("n't , either , I liked a [MASK] lot of the smaller scenes .", "few", "agreement"),
    ("The rest of the film is an exploration of life problems most [MASK] people solved long ago .", "many",
     "stacked_function_word"),
    ("The power of the film rests in the voices of men and women who lived [MASK] there in the 1940s .", "in",
     "stacked_function_word"),
    ("It exploits the hot-button issue [MASK] of domestic abuse for cheap thrills .", "instead",
     "stacked_function_word"),
    ("The digital ink-and-paint make the thing look really [MASK] slick .", "so", "stacked_function_word"),
    ("The movie is an excuse to eat [MASK] popcorn .", "a", "determiner_before_bare_noun"),
    ("It is a movie I loved at [MASK] first sight .", "the", "determiner_before_bare_noun"),
]


COMMA_NUMBER_DEGREE = [
    ("It is a remake by the numbers , [MASK] linking a halfwit plot to a series of chases .", "but",
     "unbalanced_coordination"),
    ("Andy Garcia enjoys one [MASK] of his richest roles in years .", "member", "noun_compound"),
    ("I think that Ritchie 's film is [MASK] easier to swallow than the allegory .", "so", "stacked_function_word"),
    ("It has enough [MASK] laughs to sustain interest to the end .", "few", "stacked_function_word"),
]


REPEAT_COMPOUND_PREPOSITION = [
    ("If there [MASK] was ever a movie where the upbeat ending feels like a copout , this is the one .", "ever",
     "repeated_word"),
    ("The film acquires an undeniable entertainment [MASK] value as the slight , pale Mr. Broomfield continues .",
     "and", "splits_compound"),
    ("Fond memories should stay in [MASK] the past : a lesson this film teaches all too well .", "of",
     "stacked_function_word"),
    ("He sees himself on the Olympus of the art world , but [MASK] he would have done well to end it .", "that",
     "stacked_function_word"),
]


@pytest.mark.parametrize(("masked", "word", "rule"), ONE_PER_RULE + AGREEMENT_CLAUSE_COMPOUND_STACKING
                         + COMMA_NUMBER_DEGREE + REPEAT_COMPOUND_PREPOSITION)
def test_each_rule_rejects_the_fill_it_names(masked: str, word: str, rule: str) -> None:
    ok, reason = verdict(masked, word)
    assert not ok
    assert reason.startswith(f"{rule}:"), reason
