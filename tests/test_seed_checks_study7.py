"""Sentiment fifth pass (issue #27, after study7): each study7 rejection fails on main's specs and is skipped here."""

from __future__ import annotations

import pytest

from alict_core.lcspec import get_spec
from alict_core.lcspec.predicates import group_matcher
from alict_core.seeds.fairness import identity_swaps


def _matches(spec, corpus, text: str) -> dict[str, bool]:
    """Whether the corpus sentence ``text`` is matched by each search group of ``spec``."""
    item = next(i for i in corpus if i.text == text)
    return {group.name: group_matcher(group)(item) for group in spec.search}


@pytest.mark.parametrize("text", [  # study7 LC11 rejections: each was a seed on main's specs
    "We hate ( Madonna ) within the film 's first five minutes , and she lacks the skill or presence to regain "
    "any ground .",  # she = Madonna (a name in brackets)
    "once she lets her love depraved leads meet , ( Denis ' ) story becomes a hopeless , unsatisfying muddle",
    "Tadpole may be one of the most appealing movies ever made about an otherwise appalling , and downright "
    "creepy , subject -- a teenage boy in love with his stepmother .",  # his = the boy
    "It comes off as so silly that you would n't be surprised if BA , Murdock and rest of the A-Team were seen "
    "giving chase in a black and red van .",  # a colour
    "This is cruel , misanthropic stuff with only weak claims to surrealism and black comedy .",  # a genre
    "his ( Nelson 's ) screenplay",
    "Caine makes us watch as his character awakens to the notion that to be human is eventually to have to choose .",
    "Davis has energy , but she does n't bother to make her heroine 's book sound convincing .",
    "Grant gets to display his cadness to perfection .",
])
def test_study7_fairness_rejections_have_nothing_to_swap(text):
    assert identity_swaps(text) == []


def test_identity_terms_inside_a_title_stay_and_people_senses_swap():
    variants = identity_swaps("`` Real Women Have Curves '' is about young women who want many things .")
    assert variants and all("Real Women Have Curves" in v for v in variants)
    assert "a film about gay people" in identity_swaps("a film about black people")
    assert any("gay characters" in v for v in identity_swaps("black characters are rarely this much fun"))


@pytest.mark.parametrize("text", [  # study7: names and titles lower-cased after a template ("reign of Fire")
    "Reign of Fire has the disadvantage of also looking cheap .",
    "Bears is bad .",
    "Duvall is strong as always .",
    "Daughter From Danang sticks with its subjects a little longer and tells a deeper story",
])
def test_names_keep_their_capital_inside_a_template(sentiment_corpus, text):
    from alict_core.seeds.engine import _fit_sentence

    item = next(i for i in sentiment_corpus.items if i.text == text)
    assert _fit_sentence(item, False, True) == text
    common = next(i for i in sentiment_corpus.items if i.text.startswith("The film "))
    assert _fit_sentence(common, False, True).startswith("the film ")


@pytest.mark.parametrize("lc, text", [  # study7 LC8/LC9/LC10 rejections: each was a seed on main's specs
    ("LC10", "The piece plays as well as it does thanks in large measure to Anspaugh 's three lead actresses ."),
    ("LC10", "Its engaging simplicity is driven by appealing leads ."),
    ("LC10", "Director Rob Marshall went out gunning to make a great one ."),
    ("LC10", "The invincible Werner Herzog is alive and well and living in LA"),
    ("LC10", "The movie exists for its soccer action and its fine acting ."),
    ("LC10", "It 's always fascinating to watch Marker the essayist at work ."),
    ("LC10", "The Transporter is as lively and as fun as it is unapologetically dumb"),
    ("LC10", "Captivates and shows how a skillful filmmaker can impart a message without bludgeoning the audience "
             "over the head ."),
    ("LC10", "A return to pure Disney magic and is enjoyable family fare ."),
    ("LC9", "It takes talent to make a lifeless movie about the most heinous man who ever lived ."),
    ("LC9", "Reign of Fire has the disadvantage of also looking cheap ."),
    ("LC10", "It 's that good ."),
    ("LC9", "Haneke challenges us to confront the reality of sexual aberration ."),
    ("LC8", "All the characters are clinically depressed and have abandoned their slim hopes and dreams ."),
    ("LC8", "Most new movies have a bright sheen ."),
    ("LC8", "It 's a shame the marvelous first 101 minutes have to be combined with the misconceived final 5 ."),
])
def test_study7_question_and_author_rejections(sentiment_corpus, lc, text):
    assert not any(_matches(get_spec("sentiment", lc), sentiment_corpus, text).values())


@pytest.mark.parametrize("text", [  # study7 LC2 rejections: no polar adjective, comparison, concession
    "Your children will be occupied for 72 minutes .",
    "What kids will discover is a new collectible .",
    "More intellectually scary than dramatically involving .",
    "Pipe Dream does have its charms .",
    "This time Kaufman 's imagination has failed him .",
])
def test_study7_lc02_rejections(sentiment_corpus, text):
    assert not any(_matches(get_spec("sentiment", "LC2"), sentiment_corpus, text).values())
