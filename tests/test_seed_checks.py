"""Seed defects a person catches (issue #27, P1–P10): the guards that avoid them and the checks that flag them."""

from __future__ import annotations

import pytest

from alict_core.cases.validity import validate
from alict_core.lcspec import get_spec
from alict_core.lcspec.predicates import is_clause
from alict_core.seeds import find_seeds
from alict_core.seeds.checks import fragment_defects, seed_defects
from alict_core.seeds.fairness import identity_swaps
from alict_core.seeds.types import Seed, Segment


def replace_seed(text: str, inserted: str = "not") -> Seed:
    """A replace-rule seed whose protected span is the first target holding ``inserted``."""
    tokens = text.split()
    index = tokens.index(inserted)
    start = len(" ".join(tokens[: index - 2])) + (1 if index > 2 else 0)
    end = len(" ".join(tokens[: index + 1]))
    return Seed(id="s1", lc_id="sentiment-lc04", task="sentiment", text=text, test_type="MFT",
                expected={"kind": "one_of", "labels": ["positive", "neutral"]}, source_ids=["x"],
                rule="negate_verb", rule_kind="replace", slots={}, protected_spans=[[start, end]],
                segments=[Segment("g", "x", 0, len(text))])


def concat_seed(prefix: str, body: str, suffix: str = "", task: str = "hate_speech") -> Seed:
    text = " ".join(p for p in (prefix, body, suffix) if p)
    start = len(prefix) + 1
    spans = [[0, len(prefix)]] + ([[start + len(body) + 1, len(text)]] if suffix else [])
    return Seed(id="c1", lc_id=f"{task}-lc05", task=task, text=text, test_type="MFT",
                expected={"kind": "label", "labels": ["hateful"]}, source_ids=["x"], rule="r",
                rule_kind="concat", slots={}, protected_spans=spans,
                segments=[Segment("g", "x", start, start + len(body))])


@pytest.mark.parametrize("text, reason", [
    ("If horses could fly , this is not surely what they 'd look like .", "negation_before_adverb"),
    ("This is not ultimately a frustrating patchwork .", "negation_before_adverb"),
    ("A sometimes incisive and sensitive portrait that is not undercut by its awkward structure .",
     "negated_relative_clause"),
    ("the mediocrity that is not Kung Pow : Enter the Fist .", "negated_relative_clause"),
    ("This is not a train wreck of an action film -- a stupefying attempt by the filmmakers .",
     "negation_outside_scope"),
    ("This is not Carion 's debut feature but his script and direction hums with a confidence .",
     "negation_outside_scope"),
    ("Watchable up until the point -- that is not to say , when Carol Kane appears on the screen .",
     "negated_idiom"),
    ("you could call this How Martha Got Her Groove Back -- assuming , that is not , she ever had one .",
     "negated_idiom"),
])
def test_replace_defects_of_the_issue_are_flagged(text, reason):
    assert reason in [r for r, _ in seed_defects(replace_seed(text))]


@pytest.mark.parametrize("text", [
    "This is not so bad .", "This is not one of the biggest disappointments of the year .",
    "Of all the Halloween 's , this is not the most visually unappealing .", "This is not a superior horror flick .",
])
def test_good_negations_are_not_flagged(text):
    assert seed_defects(replace_seed(text)) == []


def test_stance_on_them_needs_a_group_in_the_post():
    bad = concat_seed("i heard that", "aw now what the trouble are ya a little butthurt", "and i also hate them .")
    good = concat_seed("people say", "muslims are taking over the city", "and i hate them too .")
    assert [r for r, _ in seed_defects(bad)] == ["stance_without_group"]
    assert seed_defects(good) == []


def test_a_template_that_needs_a_clause_flags_fragments():
    fragment = concat_seed("I do not think that", "a witty , gorgeous movie", task="sentiment")
    clause = concat_seed("I do not think that", "the film is a delight", task="sentiment")
    fragment2 = Seed(**{**vars(fragment), "id": "c2"})
    flagged = fragment_defects([fragment2, Seed(**{**vars(clause), "id": "c3"})])
    assert list(flagged) == ["c2"] and flagged["c2"][0][0] == "template_before_fragment"


@pytest.mark.parametrize("tags, lower, expected", [
    (["DT", "NN", "VBZ", "DT", "NN"], ["the", "film", "is", "a", "delight"], True),
    (["DT", "NN", "WDT", "VBZ", "JJ"], ["a", "film", "that", "is", "funny"], False),
    (["CC", "PRP", "VBZ", "JJ"], ["but", "it", "is", "good"], False),
    (["VBZ", "DT", "NN"], ["offers", "a", "lot"], False),
    (["DT", "JJ", ",", "JJ", "NN"], ["a", "witty", ",", "gorgeous", "movie"], False),
    (["RB", "JJ", "IN", "PRP", "VBP"], ["so", "awful", "that", "you", "hope"], False),
    (["IN", "PRP", "VBP", "PRP", ",", "PRP", "MD", "VB"], ["if", "you", "like", "it", ",", "you", "'ll", "love"],
     True),
])
def test_clause_reading(tags, lower, expected):
    assert is_clause(tags, lower) is expected


def test_shipped_negation_specs_give_no_flagged_seed(sentiment_corpus):
    for lc in ("LC4", "LC5", "x01"):
        seeds = find_seeds(get_spec("sentiment", lc), sentiment_corpus, max_seeds=None).seeds
        assert seeds, lc
        report = validate(seeds, task="sentiment")
        assert not [f for f in report.flags if f.reason.startswith(("negat", "negated"))], (lc, report.flags[:3])
        assert not any(" that is not " in s.text and not s.text.lower().startswith("that") and
                       s.text.split(" that is not ")[0].split()[-1].isalpha() for s in seeds), lc


def test_sentiment_lc07_keeps_the_positive_in_the_negation_scope(sentiment_corpus):
    seeds = find_seeds(get_spec("sentiment", "LC7"), sentiment_corpus, max_seeds=40).seeds
    assert seeds and all(", given that " in s.text and " , that " in s.text for s in seeds)
    report = validate(seeds, task="sentiment")
    # the tagger reads a sentence in the corpus and the same words inside the template a little differently
    # ("Plays like ..." NNS at the start of a sentence, VBZ after "that"): the check may still catch a few
    assert len([f for f in report.flags if f.reason == "template_before_fragment"]) <= len(seeds) // 10


def test_hate_stance_lcs_name_a_group_and_reject_plain_slurs(hate_corpus):
    from alict_core.data.annotate import term_classes

    for lc in ("LC5", "LC6"):
        seeds = find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=200).seeds
        assert seeds
        assert not [f for f in validate(seeds, task="hate_speech", check_seed_clauses=False).flags
                    if f.reason == "stance_without_group"]
        for seed in (s for s in seeds if s.expected["labels"] == ["non-hateful"] and "hateful" in s.source_labels):
            body = seed.text[seed.segments[0].start : seed.segments[0].end].split()
            assert not any("slur" in marks for marks in term_classes(body)), seed.text


def test_identity_terms_carry_no_polarity(hate_corpus):
    """'gay' is not SentiWordNet's 'merry': an identity term is never a positive word (hate LC7, LC12)."""
    for item in hate_corpus.items[:3000]:
        for classes in item.annotation.classes:
            if "identity" in classes:
                assert not any(c.startswith(("positive_", "negative_")) for c in classes), item.text


@pytest.mark.parametrize("text, kept", [
    ("The men and women of the unit are great .", "men and women"),
    ("Shot in black and white , it looks great .", "black and white"),
])
def test_identity_swaps_keep_fixed_pairs(text, kept):
    assert all(kept in variant for variant in identity_swaps(text))


def test_pronouns_after_a_named_antecedent_are_not_swapped():
    assert identity_swaps("Mr. Broomfield turns the camera on himself and his family .") == []
    assert identity_swaps("The film gives Nicholson a role , and he knows it .") == []
    assert identity_swaps("She is a great actor .") == []  # ninth pass: a pronoun is a particular person


# Issue #27, second blind reading: template choices and conditions that keep each seed on its LC.

def _matches(spec, corpus, text: str) -> dict[str, bool]:
    """Whether the corpus sentence ``text`` is matched by each search group of ``spec``."""
    from alict_core.lcspec.predicates import group_matcher

    item = next(i for i in corpus if i.text == text)
    return {group.name: group_matcher(group)(item) for group in spec.search}


def test_sentiment_lc06_denies_one_whole_claim(sentiment_corpus):
    spec = get_spec("sentiment", "LC6")
    # the paper's "I agreed that X but I didn't" contradicts itself; the ending denies the whole statement
    seeds = find_seeds(spec, sentiment_corpus, max_seeds=80).seeds
    assert len(seeds) == 80
    assert all(s.text.startswith(("I thought that ", "I had heard that ")) for s in seeds)
    assert all(s.text.endswith((", but that was not true .", ", but it turned out not to be true .")) for s in seeds)
    assert not any("I agreed that" in s.text or "but I did n't" in s.text for s in seeds)
    # real SST sentences the ending cannot deny: a first-person aside, a contrast that keeps a claim standing
    for text in ("Average , at best , I 'm afraid .",
                 "Though everything might be literate and smart , it never took off and always seemed static ."):
        assert not any(_matches(spec, sentiment_corpus, text).values()), text
    assert _matches(spec, sentiment_corpus, "Pretentious editing ruins a potentially terrific flick .")["negative"]


def test_sentiment_lc03_past_opinion_opposes_the_present(sentiment_corpus):
    spec = get_spec("sentiment", "LC3")
    seeds = find_seeds(spec, sentiment_corpus, max_seeds=60).seeds
    past_negative = [s for s in seeds if s.expected["labels"] == ["positive"]]
    assert past_negative and all(s.text.endswith("now I like it .") for s in past_negative)
    # "I used to disagree with saying that <negative>" was a past positive opinion: no change of mind
    assert not any("disagree" in s.text or "much as to say" in s.text.replace("so much as to say", "")
                   for s in seeds)
    # fourth pass: a claim with a negative adjective ("It 's Splash without the jokes" has none: now skipped)
    assert _matches(spec, sentiment_corpus, "The film is flat .")["short_negative"]
    assert not _matches(spec, sentiment_corpus, "It 's Splash without the jokes .")["short_negative"]
    assert not _matches(spec, sentiment_corpus, "Basically , it 's pretty but dumb .")["short_negative"]


def test_sentiment_lc07_middle_sentence_is_neutral(sentiment_corpus):
    spec = get_spec("sentiment", "LC7")
    # neutral-labelled SST sentences with polar words or a contrast were read as opinions in the middle
    for text in ("Tsai Ming-liang 's ghosts are painfully aware of their not-being .",
                 "Fubar is very funny , but not always in a laugh-out-loud way ."):
        assert not _matches(spec, sentiment_corpus, text)["short_neutral"], text
    # study2 read "Haneke keeps us at arm 's length" as a judgement too (fourth pass: no "us", "you", "I")
    assert not _matches(spec, sentiment_corpus, "Haneke keeps us at arm 's length .")["short_neutral"]
    assert _matches(spec, sentiment_corpus, "It tells more than it shows .")["short_neutral"]
    seeds = find_seeds(spec, sentiment_corpus, max_seeds=None).seeds
    assert len(seeds) >= 20  # few SST sentences are neutral in this sense: 8 middles, 24 seeds


def test_hate_lc09_question_endorses_the_post(hate_corpus):
    seeds = find_seeds(get_spec("hate_speech", "LC9"), hate_corpus, max_seeds=30).seeds
    assert len(seeds) == 30 and all(s.expected["labels"] == ["hateful"] for s in seeds)
    # "why do you agree with that ...?" challenges the post (read as not hateful); a rhetorical question endorses it
    assert all(s.text.startswith(("is it not true that ", "would you not agree that ")) and s.text.endswith(" ?")
               for s in seeds)


@pytest.mark.parametrize("text", [
    # a second clause whose hate stands after "i do not think that" negates the first
    "canadian doctors no longer swear the hypocratic oath because moslems will not commit themselves to helping "
    "infidels i have been tortured by every moslem doctor nurse diagnostician lab tech pharmacist and receptionist",
    "i disagree blm want to destroy me and my family they hate all white people and believe they are a superior race",
    "huma is a muzrat spy married to a congressman and advising killary",  # a slur HateCheck's list lacks
    "user gemini as a whole here a msg i hate you",  # addressed, an insult: nothing to deny
])
def test_hate_lc08_negates_only_single_claims(hate_corpus, text):
    spec = get_spec("hate_speech", "LC8")
    item = next((i for i in hate_corpus if i.text.startswith(text[:60])), None)
    assert item is not None and item.label == "hateful"
    assert not _matches(spec, hate_corpus, item.text)["hateful"]


def test_hate_lc08_and_lc14_keep_single_claims(hate_corpus):
    lc8, lc14 = get_spec("hate_speech", "LC8"), get_spec("hate_speech", "LC14")
    assert _matches(lc8, hate_corpus, "islam must be eliminated")["hateful"]
    assert len(find_seeds(lc8, hate_corpus, max_seeds=None).seeds) >= 30
    seeds = find_seeds(lc14, hate_corpus, max_seeds=30).seeds
    assert len(seeds) == 30 and all(s.expected["labels"] == ["non-hateful"] for s in seeds)
    # "i cannot believe that <post>" can read as shock at a fact the author accepts
    assert not any(s.text.startswith("i cannot believe that ") for s in seeds)
    assert any(s.text.startswith("i cannot believe you would say that ") for s in seeds)


@pytest.mark.parametrize("lc, group, text", [
    # HateXplain's "offensive" counts as non-hateful; a slur or profanity aimed at a group reads as hate
    ("LC2", "nonhateful_with_slur", "whites should all transfer to other schools making this one exclusively a nigger "
     "institution"),
    ("LC2", "nonhateful_with_slur",
     "user user yeah alright retard black girls are the literal worst people on this earth"),
    ("LC4", "nonhateful_with_profanity", "fucking retarded white people on twitter saying the n word hiding behind an "
     "anime avi virgin"),
])
def test_hate_non_hateful_vocabulary_lcs_skip_posts_aimed_at_a_group(hate_corpus, lc, group, text):
    spec = get_spec("hate_speech", lc)
    assert next(i for i in hate_corpus if i.text == text).label == "non-hateful"
    assert not _matches(spec, hate_corpus, text)[group]


def test_hate_non_hateful_vocabulary_lcs_keep_casual_uses(hate_corpus):
    # eighth pass (study13): "a slut for <thing>" is an idiom, no slur used of a person (slur_names_person)
    assert not _matches(get_spec("hate_speech", "LC2"), hate_corpus, "i am a slut for a good hardcover book")[
        "nonhateful_with_slur"]
    assert _matches(get_spec("hate_speech", "LC4"), hate_corpus, "fuck you too soundwave")["nonhateful_with_profanity"]
    for lc, floor in (("LC2", 290), ("LC4", 250)):  # sixth pass: LC4 needs a swear word; ninth: LC2 319
        assert len(find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=None).seeds) >= floor


@pytest.mark.parametrize("lc, group, text", [
    # HateXplain "offensive" posts (non-hateful for the task) that a reader judges hateful or off the LC
    ("LC4", "nonhateful_with_profanity", "fuck u dumb hoe"),  # seventh pass: "retarded" keeps its first example out
    ("LC2", "nonhateful_with_slur", "hannah baker was a bitch wtf"),
    ("LC12", "nonnegative_identity",
     "there are no black south africans they are just invaders south africa belongs to the dutch settlers"),
])
def test_hate_non_hateful_lcs_take_only_posts_annotated_normal(hate_corpus, lc, group, text):
    from alict_core.seeds.engine import match_groups

    spec = get_spec("hate_speech", lc)
    assert spec.group(group).category == ["normal"]
    assert text not in {item.text for item in match_groups(spec, hate_corpus)[group]}
    without = spec.model_copy(update={"search": [g.model_copy(update={"category": None}) for g in spec.search]})
    assert text in {item.text for item in match_groups(without, hate_corpus)[group]} or lc == "LC12"


def test_hate_normal_category_keeps_normal_posts(hate_corpus):
    from alict_core.seeds.engine import match_groups

    groups = match_groups(get_spec("hate_speech", "LC4"), hate_corpus)
    matched = {item.text for item in groups["nonhateful_with_profanity"]}
    assert "real madrid is a fucking joke bro" in matched


def test_category_is_refused_outside_hate_speech():
    from pydantic import ValidationError

    from alict_core.lcspec.schema import LCSpec

    data = get_spec("sentiment", "LC2").model_dump(exclude_none=True)
    data["search"][0]["category"] = ["normal"]
    with pytest.raises(ValidationError, match="category filters HateXplain posts"):
        LCSpec.model_validate(data)


@pytest.mark.parametrize("lc, text", [
    # SST "neutral" sentences that judge through a polar adverb or verb, a negation or a rhetorical question
    ("LC1", "The film virtually chokes on its own self-consciousness ."),
    ("LC1", "A puzzling experience ."),
    ("LC1", "Did the film inform and educate me ?"),
    ("LC1", "A well-acted movie that simply does n't gel ."),
    # short polar sentences left mixed by a contrast, or turned by a negation
    ("LC2", "Competently directed but terminally cute drama ."),
    ("LC2", "Hardly a film that comes along every day ."),
    # affirming or denying a mixed sentence, or a negated one, has no one clear label (question LCs, LC8)
    ("LC9", "It 's fun , but it 's a real howler ."),
    ("LC10", "This is n't a `` Friday '' worth waiting for ."),
    ("LC8", "It 's fun , but it 's a real howler ."),
])
def test_sentiment_lcs_skip_sentences_a_reader_labels_otherwise(sentiment_corpus, lc, text):
    assert not any(_matches(get_spec("sentiment", lc), sentiment_corpus, text).values()), text


def test_sentiment_vocabulary_lcs_keep_plain_cases(sentiment_corpus):
    assert _matches(get_spec("sentiment", "LC1"), sentiment_corpus, "A portrait of an artist .")["short_neutral"]
    assert _matches(get_spec("sentiment", "LC2"), sentiment_corpus, "An impressive hybrid .")["short_positive"]
    assert len(find_seeds(get_spec("sentiment", "LC1"), sentiment_corpus, max_seeds=None).seeds) >= 15
    assert len(find_seeds(get_spec("sentiment", "LC2"), sentiment_corpus, max_seeds=None).seeds) >= 500  # 5th: 530


@pytest.mark.parametrize("text", [
    "i hope joe exotic gets gay raped to death by a tiger netflix",  # the author's own stance inside the report
    "user yup a lot of these black people are retarded trying to be like these white cave men",  # addressed
])
def test_hate_lc05_lc06_report_posts_that_speak_of_a_group_only(hate_corpus, text):
    for lc in ("LC5", "LC6"):
        assert not any(_matches(get_spec("hate_speech", lc), hate_corpus, text).values()), (lc, text)


def test_fairness_seeds_have_something_to_swap(sentiment_corpus):
    """An INV seed whose identity terms and pronouns all stay (fixed pair, named antecedent) tests nothing."""
    from alict_core.seeds import identity_swaps

    kept = ("For all its visual panache and compelling supporting characters , the heart of the film rests in the "
            "relationship between Sullivan and his son .")
    assert identity_swaps(kept) == []
    seeds = find_seeds(get_spec("sentiment", "LC11"), sentiment_corpus, max_seeds=None).seeds
    assert len(seeds) >= 30 and kept not in {s.text for s in seeds}  # ninth pass: 35 (generic terms, polar verdict)
    assert all(identity_swaps(s.text) for s in seeds)


@pytest.mark.parametrize("lc, group, text", [
    # LC5/LC6: "them" has no one referent (two plural nouns, or no plural group noun at all)
    ("LC5", "hateful_no_slur",
     "lefties will claim the headline is the problem not the violent immigrants ausfam auspol ausfam auspol ausfam "
     "auspol australia"),
    ("LC6", "hateful_no_slur", "it a shame theresa may never had children because now she will never get to see them "
                               "grow up and become victims of a muslim grooming gang"),
    ("LC6", "nonhateful", "gay rights danielle rose russell"),
    # LC3: an insult aimed at one person
    ("LC3", "hateful_with_profanity", "user i am sorry isabelle but you are fucking retarded"),
    # LC8-10, 13, 14: a word that leaves a fragment after the template, an unlisted pejorative
    ("LC10", "hateful", "better believe the kikes are behind these nigger attacks"),
    ("LC9", "hateful", "better believe the kikes are behind these nigger attacks"),
    ("LC8", "hateful", "the alt right is full of feminists white knight captain save a hoe beta cucks"),
])
def test_hate_third_pass_skips_posts_readers_rejected(hate_corpus, lc, group, text):
    assert not _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]


def test_hate_third_pass_keeps_plain_cases_and_seed_floors(hate_corpus):
    assert _matches(get_spec("hate_speech", "LC5"), hate_corpus, "immigrants founded this country")["nonhateful"]
    # LC3 118: the one slur matcher (issue #27, H1) drops posts with slur variants ("retarded", "muzzrat")
    floors = {"LC3": 110, "LC5": 15, "LC6": 15, "LC8": 30, "LC9": 300, "LC10": 300, "LC13": 95, "LC14": 60}  # 7th pass
    for lc, floor in floors.items():
        assert len(find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=None).seeds) >= floor, lc
    assert "i do not agree that" in get_spec("hate_speech", "LC8").rules[0].concat[0]


# Issue #27, study3 reading (fourth pass): the post opens with a plain noun-phrase subject (``subject``).
@pytest.mark.parametrize("lc, group, text", [
    # LC8: an insult or profanity is presupposed, not denied; a fragment or a word list after "that"
    ("LC8", "hateful", "orca the niggerette lesbian can go fuck gayle"),
    ("LC8", "hateful", "well cuz da jews suck dose babydicks"),
    ("LC8", "hateful", "most criminals in france are moslem or from some shit hole in africa so"),
    ("LC8", "hateful", "gang rape tommy fuck jews streetshitter420 maga gab gab torba gtkrwn turkroach fuckbees "
                       "gabcoin qlarp trusttheplan"),
    # LC10: "i think that" + a fragment
    ("LC10", "hateful", "part from da zhid turning up his toes this will serve well if true"),
    ("LC10", "hateful", "no problem naming the kike is just and righteous"),
    ("LC10", "hateful", "gonna get some nasty ass niggers to set fire to this neighborhood"),
    ("LC10", "hateful", "pro white married to a wetback he the best there is eat a fucking tide pod"),
    # LC5/LC6: "them" finds no referent in the post's subject
    ("LC5", "hateful", "no one likes overweight women either"),
    ("LC5", "hateful", "msm blamed this muzrat terrorist attack on women and dropped the story like it was a hot "
                       "potato"),
    ("LC6", "hateful", "the picture on the left is the audience at the bataclan theatre paris just before muslims "
                       "murdered raped mutilated them hope it happens to this stupid bitch"),
    ("LC6", "nonhateful", "villanelle likes women who are shorter than her"),
    ("LC6", "nonhateful", "so much for women can do everything a man can do"),
    ("LC5", "nonhateful", "we need some women on here with actual life experiences the bachelor"),
])
def test_hate_fourth_pass_skips_posts_readers_rejected(hate_corpus, lc, group, text):
    assert not _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]


def test_hate_fourth_pass_keeps_plain_claims_about_a_group(hate_corpus):
    from alict_core.seeds.checks import GROUP_NOUNS

    lc8 = get_spec("hate_speech", "LC8")
    assert _matches(lc8, hate_corpus, "we need to start punching arabs for saying the n word")["hateful"]
    lc10 = get_spec("hate_speech", "LC10")
    assert _matches(lc10, hate_corpus, "people are getting pissed about the evil muzrat cult and gov t complicity")[
        "hateful"]
    for lc in ("LC5", "LC6"):
        spec = get_spec("hate_speech", lc)
        # sixth pass: rule (a) takes posts with a slur, rule (b) the others, so both stances are drawn
        assert _matches(spec, hate_corpus, "the gays are undoutably ruining the nation")["hateful_no_slur"]
        assert _matches(spec, hate_corpus, "the sand niggers deserve the same")["hateful"]
        assert _matches(spec, hate_corpus, "immigrants founded this country")["nonhateful"]
        # the spec's group nouns and the stance check's are one list
        for group in spec.search:
            subject = next(p.subject for p in group.predicates if p.subject is not None)
            assert subject.words is not None and set(subject.words) == GROUP_NOUNS


@pytest.mark.parametrize("text", [
    # study3: a headline, "black" as a colour, "muslim" as the hadith collection, no praise of anyone
    "ukip sues muslim home secretary over tommy robinson arrest",
    "inadvertently released black snow on the web",
    "latinamerican fans muslim fans fighting kexols",
    "attention women of all genders",
])
def test_hate_lc12_takes_only_posts_that_approve(hate_corpus, text):
    assert not _matches(get_spec("hate_speech", "LC12"), hate_corpus, text)["nonnegative_identity"]


def test_hate_lc12_keeps_praise_of_a_group(hate_corpus):
    spec = get_spec("hate_speech", "LC12")
    for text in ("happy eid al adha to out muslim brothers and sisters", "i love white women", "gay moslem pride"):
        assert _matches(spec, hate_corpus, text)["nonnegative_identity"], text
    assert len(find_seeds(spec, hate_corpus, max_seeds=None).seeds) >= 10


@pytest.mark.parametrize("lc, text", [
    # sentiment third pass (study2): LC1 a name alone, a verdict, a snide suggestion to the reader
    ("LC1", "Adam SANDLER !"),
    ("LC1", "In a word : No. ."),
    ("LC1", "In a word -- yes ."),
    ("LC1", "You want to call Domino 's ."),
    ("LC1", "The filmmakers might want to look it up ."),
    # x01: a comparison or a dash puts positive content outside the negation; no positive word to deny
    ("x01", "Like The Full Monty , this is sure to raise audience 's spirits and leave them singing long after "
            "the credits roll ."),
    ("x01", "For VeggieTales fans , this is more appetizing than a side dish of asparagus ."),
    ("x01", "Lauren Ambrose comes alive under the attention from two strangers in town - with honest performances "
            "and realistic interaction between the characters , this is a coming-of-age story with a twist ."),
    ("x01", "This is Christmas Future for a lot of baby boomers ."),
    ("x01", "This is the stuff that Disney movies are made of ."),
    # LC8 / LC10: a fragment with no plain subject, a reader addressed as "you"
    ("LC8", "Great over-the-top moviemaking if you 're in a slap-happy mood ."),
    ("LC10", "Heartwarming and gently comic even as the film breaks your heart ."),
    ("LC10", "You 'd be hard put to find a movie character more unattractive or odorous ( than Leon ) ."),
    ("LC10", "The difference is that I truly enjoyed most of Mostly Martha while I ne"),
    # LC5: a colon and a conditional addressed to the reader
    ("LC5", "I 'll put it this way : If you 're in the mood for a melodrama narrated by talking fish , "
            "this is the movie for you ."),
])
def test_sentiment_third_pass_skips_sentences_readers_rejected(sentiment_corpus, lc, text):
    assert not any(_matches(get_spec("sentiment", lc), sentiment_corpus, text).values()), (lc, text)


def test_sentiment_third_pass_negation_skips_a_pronoun_object(sentiment_corpus):
    # "this is not it" denies nothing a reader can label
    concept = "If ever a concept came handed down from the movie gods on a silver platter , this is it ."
    for lc, text in (("LC5", "This is it ."), ("x01", concept)):
        assert not any(seed.text.endswith("is not it .")
                       for seed in find_seeds(get_spec("sentiment", lc), sentiment_corpus, max_seeds=None).seeds), lc
        assert any(_matches(get_spec("sentiment", lc), sentiment_corpus, text).values()), (lc, text)


def test_sentiment_third_pass_keeps_plain_cases_and_seed_floors(sentiment_corpus):
    lc1 = get_spec("sentiment", "LC1")
    assert _matches(lc1, sentiment_corpus, "It 's been 20 years since 48 Hrs .")["short_neutral"]
    assert _matches(get_spec("sentiment", "x01"), sentiment_corpus, "This is a superior horror flick .")[
        "positive_this_is"]
    lc8 = get_spec("sentiment", "LC8")
    assert _matches(lc8, sentiment_corpus, "The film is flat .")["negative"]
    assert _matches(get_spec("sentiment", "LC10"), sentiment_corpus, "Adaptation is simply brilliant .")["positive"]
    floors = {"LC1": 15, "LC5": 5, "LC8": 200, "LC10": 500, "x01": 20}  # fifth pass: LC8 210, LC10 536
    for lc, floor in floors.items():
        assert len(find_seeds(get_spec("sentiment", lc), sentiment_corpus, max_seeds=None).seeds) >= floor, lc


# Issue #27, study4 reading (fifth pass): the posts the blind reviewers scored off their LC.
@pytest.mark.parametrize("lc, group, text", [
    # LC3: a slur is not profanity (HateCheck keeps them apart); hate at no protected group; no swear word at all
    ("LC3", "hateful_with_profanity", "sounds like a kike to me"),
    ("LC3", "hateful_with_profanity", "i fucking hate kids they re demons"),
    ("LC3", "hateful_with_profanity", "mike feed the queers to the steers pence lol ok i am all out"),
    # LC9/LC14: lyrics, slur-verbs and run-ons with no plain subject, garbled words read as verbs
    ("LC9", "hateful", "afterwards they can power their own dildoes faggots fry up well"),
    ("LC9", "hateful", "bad drunk dick in her throat skrt skrt this nigger"),
    ("LC9", "hateful", "typical sand nigger they are terrorists posing as refugees"),
    ("LC14", "hateful", "more kike propaganda in europe almost no one circumcises their boys it genital mutilation"),
    ("LC14", "hateful", "f cking censored kike loving degenerate commie scum burn in hell fagot trudeau"),
    ("LC14", "hateful", "this nigger just saved the uk"),
    # LC11: a fragment or headline is no statement; a negation; an insulting nickname SentiWordNet does not know
    ("LC11", "neutral_identity", "men vs women"),
    ("LC11", "neutral_identity", "gay minecraft porn"),
    ("LC11", "neutral_identity", "no we are not immigrants on campus however are"),
    ("LC11", "neutral_identity", "the muslim handler for killary obozo had valerie jarrett"),
    # LC7: nothing positive is said about a group, so denying it is not hate
    ("LC7", "nonhateful", "thick women are only fat women who fat is in places that men like fat"),
    ("LC7", "nonhateful", "it ain t about black or white cause we are all humans"),
    # LC5/LC6: "them" between several groups, a "proof ..." or headline fragment, a question inside the post
    ("LC5", "hateful", "kikes are the real problem pay all refugees and muslims to leave for uk and france"),
    ("LC5", "hateful", "proof sand niggers invented math"),
    ("LC6", "nonhateful", "number women and a child among the collateral damage in latest op obama bombed a doctors "
                          "without borders hospital scotus"),
    ("LC6", "nonhateful", "mexican women talk good in bed how do mexicans talk"),
    # LC8: garbled words read as verbs; a slogan tacked on ("deport ...")
    ("LC8", "hateful", "gama3a aslun homosexuals should get murdered begad ya3ne yaaaa3 ezay keda uf bakarahom"),
    ("LC8", "hateful", "illegal immigrants are stronger together deport mom and her spawn by dawn"),
])
def test_hate_fifth_pass_skips_posts_readers_rejected(hate_corpus, lc, group, text):
    assert not _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]


def test_hate_fifth_pass_keeps_plain_cases_and_seed_floors(hate_corpus):
    def kept(lc: str, group: str, text: str) -> bool:
        return _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]

    assert kept("LC3", "hateful_with_profanity", "i hate jews so fuckin much")
    assert kept("LC7", "nonhateful", "islam is love")
    assert kept("LC9", "hateful", "god hates niggers") and kept("LC14", "hateful", "god hates niggers")
    assert kept("LC11", "neutral_identity", "she is gay")
    assert kept("LC11", "neutral_identity", "immigrants founded this country")
    assert kept("LC5", "nonhateful", "black women complain so much at restaurants")
    assert kept("LC8", "hateful", "jews and arabs will destroy america")
    # LC3 118: the one slur matcher (issue #27, H1) drops posts with slur variants ("retarded", "muzzrat")
    floors = {"LC3": 110, "LC5": 15, "LC6": 15, "LC7": 3, "LC8": 30, "LC9": 300, "LC11": 7, "LC14": 60}  # 7th pass
    for lc, floor in floors.items():
        assert len(find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=None).seeds) >= floor, lc


@pytest.mark.parametrize("lc, text", [
    # sentiment fourth pass (study5): LC7 middles that are a fragment, an aside or an opinion
    ("LC7", "You bet ."),
    ("LC7", "I wonder why ."),
    ("LC7", "I survived ."),
    ("LC7", "It 's haunting ."),
    ("LC7", "All prints of this film should be sent to and buried on Pluto ."),
    # LC7's positive: the negation must deny a claim about the film, not about its actors' share in it
    ("LC7", "Diggs and Lathan are among the chief reasons Brown Sugar is such a sweet and sexy film ."),
    # LC8: an author clause with no polar adjective or about something else; two different films
    ("LC8", "Death might be a release ."),
    ("LC8", "These are textbook lives of quiet desperation ."),
    ("LC8", "Paul Cox needed to show it ."),
    ("LC8", "Hollywood Ending is the most disappointing Woody Allen movie ever ."),
    # LC9 / LC10: a fragment, the author inside, a reader addressed, no polar adjective, a counterfactual,
    # a mixed claim, a cleft or "hard to believe" whose denial is ambiguous, a simile
    ("LC9", "A strangely compelling and brilliantly acted psychological drama ."),
    ("LC9", "I 'll go out on a limb ."),
    ("LC9", "I firmly believe that a good video game movie is going to show up soon ."),
    ("LC9", "You try to guess the order in which the kids in the house will be gored ."),
    ("LC9", "It 's a bit disappointing that it only manages to be decent instead of dead brilliant ."),
    ("LC9", "It 's like going to a house party and watching the host defend himself against a frothing "
            "ex-girlfriend ."),
    ("LC10", "A little more intensity and a little less charm would have saved this film a world of hurt ."),
    ("LC10", "Coppola has made a film of intoxicating atmosphere and little else ."),
    ("LC10", "It 's in the action scenes that things fall apart ."),
    ("LC10", "It 's just hard to believe that a life like this can sound so dull ."),
    ("LC10", "Frank Capra played this story straight ."),
    # LC3: the past opinion a fragment, garbled or not about the film
    ("LC3", "Vividly conveys both the pitfalls and the pleasures of over-the-top love ."),
    ("LC3", "An alternately raucous and sappy ethnic sitcom ... you 'd be wise to send your regrets ."),
    ("LC3", "It 's incredible the number of stories the Holocaust has generated ."),
    # LC4: a conditional before "this is" makes the negation deny something else
    ("LC4", "But if the essence of magic is its make-believe promise of life that soars above the material realm , "
            "this is the opposite of a truly magical movie ."),
])
def test_sentiment_fourth_pass_skips_sentences_readers_rejected(sentiment_corpus, lc, text):
    matched = _matches(get_spec("sentiment", lc), sentiment_corpus, text)
    if lc == "LC7":  # the middle (neutral) or the last (positive) sentence, by the reviewers' note
        assert not matched["short_neutral" if "Diggs" not in text else "short_positive"], text
    else:
        assert not any(matched.values()), (lc, text)


def test_sentiment_fourth_pass_keeps_clear_claims_and_seed_floors(sentiment_corpus):
    for lc in ("LC9", "LC10"):
        spec = get_spec("sentiment", lc)
        assert _matches(spec, sentiment_corpus, "Morton deserves an Oscar nomination .")["positive"] is False  # no adj
        assert _matches(spec, sentiment_corpus, "The film is flat .")["negative"], lc
        assert _matches(spec, sentiment_corpus, "The story is smart and entirely charming in intent and execution .")[
            "positive"], lc
    lc8 = get_spec("sentiment", "LC8")
    assert _matches(lc8, sentiment_corpus, "It 's a charming and often affecting journey .")["positive"]
    lc8_seeds = find_seeds(lc8, sentiment_corpus).seeds
    assert {s.rule for s in lc8_seeds} == {"mine_positive", "mine_negative"}  # both directions, not one
    assert all(s.text.startswith(("Some people think that", "Many people agree that", "They think that",
                                  "Others agree that")) for s in lc8_seeds)  # no "agree with that <clause>"
    lc7_seeds = find_seeds(get_spec("sentiment", "LC7"), sentiment_corpus).seeds
    assert len(lc7_seeds) >= 20
    floors = {"LC8": 200, "LC9": 500, "LC10": 500}  # fifth pass (study7 conditions): 210, 536, 536
    for lc, floor in floors.items():
        assert len(find_seeds(get_spec("sentiment", lc), sentiment_corpus).seeds) >= floor, lc


# Issue #27, study6 reading (sixth pass): posts both blind reviewers scored off their LC (mean relevance < 3.5,
# most < 3). Each matched its group on the specs before this change.
@pytest.mark.parametrize("lc, group, text", [
    # LC1: a slur mentioned or quoted, not used against anyone
    ("LC1", "hateful_with_slur", "will i get in trouble for saying nigger or towelhead here"),
    ("LC1", "hateful_with_slur", "i think you indeed can call people nigger if you so please"),
    # LC3: "shit skin(s)" is a slur written as two words, not swearing
    ("LC3", "hateful_with_profanity", "canada shit skin moslem somali immigration minister ahmed hussen wants to "
     "bring number number of these filthy savage animals to canada to replace our white population"),
    ("LC3", "hateful_with_profanity", "this is absolute bullshit it a psychological trick to attempt to show "
     "moslem supremacy these low iq shit skins have no balls are dickless assholes"),
    # LC4: no swear word ("retarded", "rape", "omg" only); a group named ("queers", "hetero and homo"); racist
    ("LC4", "nonhateful_with_profanity", "traffic so retarded everywhere"),
    ("LC4", "nonhateful_with_profanity", "user by impregnated you mean raped omg"),
    ("LC4", "nonhateful_with_profanity", "the difference between hetero and homo couples part i"),
    ("LC4", "nonhateful_with_profanity", "why is it that everyone on the internet who doesn t care blows up your "
     "mentions for three hours take the l queers"),
    ("LC4", "nonhateful_with_profanity", "i am number and i followed my instincts i never liked negerball never "
     "watched the retarded bonobo chimps"),
    # LC12: the identity term only in passing (a partner, a question, the author), a request, a backhanded joke
    ("LC12", "nonnegative_identity", "i love my women but she thinks i m playing"),
    ("LC12", "nonnegative_identity", "is it gay if i love both of my best friends and we are also all dating"),
    ("LC12", "nonnegative_identity", "i am so pretty men and women love me"),
    ("LC12", "nonnegative_identity", "miss america shall embrace beer for beer makes fat women look beautiful"),
    ("LC12", "nonnegative_identity", "sand script muslim looking for someone that writes in sand script or a "
     "website thanks"),
    # LC5/LC6: a run-on (two finite verbs), "them" between a policy, a group and "equipment"; garbled; two groups
    ("LC5", "hateful", "affirmative action and queers weakened our military some equipment is old"),
    ("LC5", "hateful", "some mudslimes got ran over in london karma is a motherfucker"),
    ("LC5", "hateful", "sand niggers are gonna sand nog"),
    ("LC6", "hateful", "the delighted kikes broke his nose via sand nigger proxy"),
    # LC9/LC10: headlines, run-ons and tails after "that"
    ("LC9", "hateful", "news flash nigger africa is so racist"),
    ("LC9", "hateful", "an these nigger biches look like godzilla nasty"),
    ("LC9", "hateful", "anthony bourdain was a kike that advocated for white genocide good riddance"),
    ("LC10", "hateful", "a nigger bich smells like a baboons ass google it"),
    ("LC10", "hateful", "dumb yid cunt but most people know that anyway"),
    ("LC10", "hateful", "shock as nigger turns out to be a nigger"),
    ("LC10", "hateful", "jew faggot milo is king of the alt right great it not the alt right anymore"),
    ("LC10", "hateful", "degenerate jews hate white people jews"),
    # LC13/LC14: a remark about one person with a slur (denouncing it attacks its content), lyrics, fragments
    ("LC13", "hateful", "skrt skrt skrt sirop stripper pole fuck with us this nigger forever"),
    ("LC13", "hateful", "no but mestizo spic sure is"),
    ("LC13", "hateful", "thirteen year olds dont seig heil sand nigger in a vacuum lolololol"),
    ("LC14", "hateful", "he rattled a kike"),
    ("LC14", "hateful", "the nigger in the back is suppressing his laughter"),
    ("LC14", "hateful", "florida confirmed for sand nigger latitude"),
    ("LC14", "hateful", "niggerdom is a deadly disease please send thoughts and prayers"),
])
def test_hate_sixth_pass_skips_posts_readers_rejected(hate_corpus, lc, group, text):
    assert not _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]


def test_hate_sixth_pass_keeps_plain_cases_and_all_stances(hate_corpus):
    def kept(lc: str, group: str, text: str) -> bool:
        return _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]

    assert kept("LC1", "hateful_with_slur", "don lemon is a nigger")
    assert kept("LC4", "nonhateful_with_profanity", "my life is a fucking disaster and idk how to fix it")
    assert kept("LC12", "nonnegative_identity", "may allah increase and strengthen the iman of all muslims")
    assert kept("LC10", "hateful", "don lemon is a nigger")
    assert kept("LC9", "hateful", "russians are the niggers of europe")
    for lc in ("LC13", "LC14"):  # a claim about a group
        assert kept(lc, "hateful", "islam is a religion full of paedophiles and thick as shit sand niggers")
    # LC5/LC6: one seed per post, and the cap shared by the four stances draws each of them
    for lc in ("LC5", "LC6"):
        seeds = find_seeds(get_spec("hate_speech", lc), hate_corpus).seeds
        assert len({s.source_ids[0] for s in seeds}) == len(seeds) >= 15
        assert len({s.rule for s in seeds}) == 4, lc


@pytest.mark.parametrize("tags, lower, span", [
    (["DT", "DT", "JJ", "NNS", "VBP"], ["an", "these", "nigger", "biches", "look"], None),
    (["PDT", "DT", "NNS", "VBP"], ["all", "the", "jews", "are"], 3),
    (["DT", "DT", "NNS", "VBP"], ["all", "the", "jews", "are"], 3),
])
def test_two_determiners_end_a_subject(tags, lower, span):
    from alict_core.lcspec.predicates import subject_span

    assert subject_span(tags, lower) == span


# Issue #27, study8 reading (seventh pass): posts the blind reviewers scored off their LC (mean relevance < 3.5)
# or whose label they doubted (mean label score <= 3.5 on a hateful LC). Each matched its group on the specs
# before this change.
@pytest.mark.parametrize("lc, group, text", [
    # LC1: self-identification, a slur addressed to the reader ("u fags"), a sign-off
    ("LC1", "hateful_with_slur", "that not a compliment a compliment is you are sexy you turn me on not not one look "
     "at you and i know i am queer"),
    ("LC1", "hateful_with_slur", "uh oh u fags getting triggerer u fags getting triggered is because most women want "
     "like berserk and meh"),
    ("LC1", "hateful_with_slur", "quit commenting on unnecessary shit that so bothersome i make so many tweets that "
     "solicit comments that wasn t one bye niggers"),
    # LC2: the slur in an idiom, as a verb or in a title, not naming a person; "negro" beside it
    ("LC2", "nonhateful_with_slur", "woke up today to find bernie bros dragging the queer eye guys if you say "
     "anything less than complimentary about their guy regardless of when you said it or what marginalized group "
     "you belong to theyll come after you talons sharpened because that is how you build a movement"),
    ("LC2", "nonhateful_with_slur", "lol bitch slap our way to victory michael tenorio user um if this is what we are"
     " up against when we go to civil war we might as well just put our guns away and bitch slap our way to "
     "victory"),
    ("LC2", "nonhateful_with_slur", "my coworkers saw an ugly side of me today thanks to everyone who listened to me "
     "bitch today tho ily"),
    ("LC2", "nonhateful_with_slur", "truth sister truth we can only hope he gets bitch slap come election time"),
    ("LC2", "nonhateful_with_slur", "karma a bitch always remember what goes around comes around and you will get "
     "smacked in the face with it one day liar disrespect"),
    ("LC2", "nonhateful_with_slur", "split her like a twix smoking on zkittles high as a bitch"),
    ("LC2", "nonhateful_with_slur", "user sorry i am not a queer and if i was it be with a negro"),
    # LC3: slur variants ("sandwops", "niggerette", "rag head", "faggotry"); politicians, a quote, dating
    ("LC3", "hateful_with_profanity", "that happens with inbred sandwops from the middle east and africa so that is "
     "why never trust a word they utter taqiyyah deceit and lies muhammad says that is part of being a moslem "
     "shite"),
    ("LC3", "hateful_with_profanity", "ebonics williams a stupid leftoid niggerette on fox news should not be on fox "
     "news even though fox news is no longer fair and balanced nor conservative sheriff clarke a black man with a "
     "brain had to put up with niggerette bullshit"),
    ("LC3", "hateful_with_profanity", "were i a women they d have to drag my ass out move the fucking rag head better"
     " yet do not allow them on airplanes"),
    ("LC3", "hateful_with_profanity", "that guy was constantly posting thankyoualtright snarky bullshit as statues "
     "were being taken down after charlottesville that from a guy who i am sure has never done shit but post on "
     "the internet now he white knights lame faggotry"),
    ("LC3", "hateful_with_profanity", "agreed i am so tired of politicians acting like we cant ban it fuck them when "
     "they stop bombing our buildings killing our soilders raping our women begging us number save them from each "
     "other then we can talk"),
    ("LC3", "hateful_with_profanity", "i just read an instagram caption that said nothing like a monday morning send "
     "with the squad i fucking hate white people"),
    ("LC3", "hateful_with_profanity", "honestly the only woman i would not ever date is a solid black woman hispanics"
     " are aye okay asians are qu3 number i do not have yellow fever anymore but white girls can be crazy ass folk"
     " indian and arab women maybe but they gotta be shaved no negotiating that shit"),
    ("LC3", "hateful_with_profanity", "it ll be interesting to see the language in these executive orders on "
     "immigration tomorrow trump is being a bad ass and keeping his word i am enjoying this now he needs to get "
     "high risk undocumented refugees and illegal immigrants the hell out of this country especially muslim "
     "fighter types"),
    # LC4: racist and ableist words are not profanity
    ("LC4", "nonhateful_with_profanity", "user user my son died of dementia at the age of three and i am currently "
     "amidst killing my self so a stanky ass booty pic from your ching chong ass would make my life so much better"
     " rn"),
    ("LC4", "nonhateful_with_profanity", "when my big unc come back im snitchin tired of this retarded ass boi"),
    ("LC4", "nonhateful_with_profanity", "trump you damn elephant im sending you back to africa for being a illegal "
     "immagrant"),
    # LC9/LC10: fragments after "that", run-ons, slurs listed, absurd claims, the author speaking ("we")
    ("LC9", "hateful", "smoke signals ala kike style"),
    ("LC9", "hateful", "fucking hung nigger has a nice coat"),
    ("LC9", "hateful", "spic nigger chink are just three examples"),
    ("LC9", "hateful", "fuck prayer let throw the shitskin sand niggers out"),
    ("LC9", "hateful", "bees are yellow nigger skunks"),
    ("LC9", "hateful", "reminder to everyone wes bellamy is a nigger"),
    ("LC9", "hateful", "mickey mouse is a faggot"),
    ("LC9", "hateful", "this sounds like a kike national socialist"),
    ("LC9", "hateful", "this faggot kennedy speech does not even make any sense it an incoherent ramble of feels"),
    ("LC10", "hateful", "good thing nigger rhymes with nigger or lil wayne would be out of a job"),
    ("LC10", "hateful", "yfw deadpool is trolling niggers to death irl"),
    ("LC10", "hateful", "all libtards should each be given a moslem refugee"),
    ("LC10", "hateful", "we have to stop islam now"),
    ("LC10", "hateful", "god of israel is a faggot he a joke"),
    # LC13/LC14: the same openers and garbled posts inside the denouncement
    ("LC13", "hateful", "yfw deadpool is trolling niggers to death irl"),
    ("LC13", "hateful", "fuck prayer let throw the shitskin sand niggers out"),
    ("LC13", "hateful", "public service announcement god hates niggers and jews"),
    ("LC14", "hateful", "yfw deadpool is trolling niggers to death irl"),
    ("LC14", "hateful", "fuck prayer let throw the shitskin sand niggers out"),
    ("LC14", "hateful", "public service announcement god hates niggers and jews"),
])
def test_hate_seventh_pass_skips_posts_readers_rejected(hate_corpus, lc, group, text):
    assert not _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]


def test_hate_seventh_pass_keeps_plain_cases_and_seed_floors(hate_corpus):
    def kept(lc: str, group: str, text: str) -> bool:
        return _matches(get_spec("hate_speech", lc), hate_corpus, text)[group]

    assert kept("LC1", "hateful_with_slur", "don lemon is a nigger")
    assert kept("LC2", "nonhateful_with_slur", "imma red table talk type of bitch")
    assert not kept("LC2", "nonhateful_with_slur", "for such a queer campus berkeley undergrads was so heterosexually "
                    "slow oh my god")  # ninth pass: "queer" as a plain identity adjective is no slur use
    assert kept("LC3", "hateful_with_profanity", "i fucking hate white people")
    assert kept("LC4", "nonhateful_with_profanity", "my boyfriend is a fucking sweetheart")
    for lc in ("LC9", "LC10"):
        assert kept(lc, "hateful", "russians are the niggers of europe")
    for lc in ("LC13", "LC14"):
        assert kept(lc, "hateful", "they are vile barbaric low iq ugly sand niggers")
    floors = {"LC1": 1000, "LC2": 290, "LC3": 110, "LC4": 240, "LC9": 280, "LC10": 280, "LC13": 90, "LC14": 60}
    for lc, floor in floors.items():
        assert len(find_seeds(get_spec("hate_speech", lc), hate_corpus, max_seeds=None).seeds) >= floor, lc


@pytest.mark.parametrize("lower, holds", [
    (("ebonics", "williams", "a", "stupid", "leftoid", "niggerette"), False),
    (("snarky", "faggotry"), False),
    (("inbred", "sandwops", "from", "the", "middle", "east"), False),
    (("spicy", "food", "is", "good"), True),  # a stem is matched at the start of a token only: "spick", not "spic"
])
def test_word_prefixes_find_slur_variants(lower, holds):
    from alict_core.lcspec.predicates import predicate_holds
    from alict_core.lcspec.schema import Predicate

    predicate = Predicate.model_validate({"word_prefixes": {"exclude": ["nigg", "fagg", "sandwop", "spick"]}})
    assert predicate_holds(predicate, lower, frozenset(), None) is holds
