"""Expansion: the four validation rules (passing and failing), fill combinations, and expand() end to end."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from alict_core.expansion import (
    ExpansionError,
    ExpansionSet,
    check_protected,
    expand,
    fill_combinations,
    tag_token_lists,
    validate_fill,
)
from alict_core.expansion.rows import ExpansionRow, SeedFields

ROW_KEYS = {"id", "seed_id", "lc_id", "task", "text", "accepted", "words", "score", "verdicts", "reasons", "masked"}


def always(spec, seed, text):
    return True, "predicates hold"


@dataclass
class Masked:
    """Stands in for alict_core.grammar.MaskedSentence (same fields)."""

    seed_id: str
    tokens: list[str]
    mask_positions: list[int]
    mask_tags: list[str]
    seed_production: str = "NP -> DT NN"
    reference_production: str = "NP -> DT JJ NN"
    reference_probability: float = 0.1

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    def to_dict(self) -> dict:
        return {"seed_id": self.seed_id, "text": self.text, "tokens": self.tokens,
                "mask_positions": self.mask_positions,
                "mask_tags": self.mask_tags, "seed_production": self.seed_production,
                "reference_production": self.reference_production,
                "reference_probability": self.reference_probability}


def seed(text: str, sid: str = "LC1-aaaa", spans=()) -> dict:
    return {"id": sid, "lc_id": "LC1", "task": "sentiment", "text": text, "protected_spans": [list(s) for s in spans]}


# the pipeline's mechanics on "the [MASK] movie" fills ("french"), which attested_modifier refuses by design
# (a nationality word; tested in test_expansion_modifiers.py): the check is off here
SPEC = {"id": "LC1", "task": "sentiment", "expansion": {"allowed_polarity": ["neutral"], "max_per_seed": 5,
                                                        "checks": {"attested_modifier": {"enabled": False}}}}
SLOT_JJ = Masked("LC1-aaaa", ["the", "[MASK]", "movie", "was", "fun", "."], [1], ["JJ"])


# ---------------------------------------------------------------------------------- rule 1: POS


def test_pos_passes_when_word_takes_the_slot_tag_in_context():
    v = validate_fill(SLOT_JJ, ["french"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert v.text == "the french movie was fun ."
    assert v.verdicts["pos"] and v.ok


def test_pos_fails_when_word_is_tagged_otherwise_in_the_sentence():
    v = validate_fill(SLOT_JJ, ["dog"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert not v.verdicts["pos"] and not v.ok
    assert "'dog' tagged NN not JJ" in v.reasons["pos"]


def test_tagging_keeps_the_given_tokens_aligned():
    (tagged,) = tag_token_lists([["it", "'s", "a", "well-made", "film", "."]])
    assert len(tagged.tags) == 6 and tagged.tags[1] == "VBZ"


# ---------------------------------------------------------------------------------- rule 2: polarity


def test_polarity_neutral_word_passes_by_default():
    v = validate_fill(SLOT_JJ, ["american"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert v.verdicts["polarity"] and "american neutral" in v.reasons["polarity"]


def test_polarity_positive_word_fails_unless_spec_allows_it():
    good = validate_fill(SLOT_JJ, ["good"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert good.verdicts["pos"] and not good.verdicts["polarity"]
    assert "'good' is positive" in good.reasons["polarity"]
    lenient = {**SPEC, "expansion": {**SPEC["expansion"], "allowed_polarity": ["neutral", "positive"]}}
    assert validate_fill(SLOT_JJ, ["good"], seed("the movie was fun ."), lenient, predicate_check=always).ok


def test_negators_are_never_inserted_even_when_sentiwordnet_calls_them_neutral():
    slot_rb = Masked("LC1-bbbb", ["the", "movie", "was", "[MASK]", "fun", "."], [3], ["RB"])
    negated = validate_fill(slot_rb, ["not"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert not negated.verdicts["polarity"] and "negator" in negated.reasons["polarity"]
    verdict = validate_fill(slot_rb, ["also"], seed("the movie was fun ."), SPEC, predicate_check=always)
    assert verdict.verdicts["polarity"]


def test_polarity_defaults_to_neutral_without_expansion_policy():
    v = validate_fill(SLOT_JJ, ["good"], seed("the movie was fun ."), {"id": "LC1"}, predicate_check=always)
    assert not v.verdicts["polarity"]


# ---------------------------------------------------------------------------------- rule 3: predicates


def test_predicates_verdict_and_reason_come_from_the_spec_check():
    seen = []

    def must_end_with_period(spec, s, text):
        seen.append((spec["id"], s["id"], text))
        return text.endswith("."), "ends with '.'" if text.endswith(".") else "no final period"

    ok = validate_fill(SLOT_JJ, ["french"], seed("the movie was fun ."), SPEC, predicate_check=must_end_with_period)
    assert ok.verdicts["predicates"] and seen == [("LC1", "LC1-aaaa", "the french movie was fun .")]
    no_period = Masked("LC1-aaaa", ["the", "[MASK]", "movie", "was", "fun"], [1], ["JJ"])
    bad = validate_fill(no_period, ["french"], seed("the movie was fun"), SPEC, predicate_check=must_end_with_period)
    assert not bad.verdicts["predicates"] and bad.reasons["predicates"] == "no final period"


def test_predicates_with_the_real_spec_check():
    from alict_core.lcspec import get_spec
    from alict_core.seeds import Seed

    spec = get_spec("sentiment", "sentiment-lc01")  # neutral sentences: no positive/negative adjective or noun
    real_seed = Seed.from_dict({
        "id": "sentiment-lc01-0bb7425b190d", "lc_id": "sentiment-lc01", "task": "sentiment",
        "text": "The New Guy is one of them .", "test_type": "MFT",
        "expected": {"kind": "label", "labels": ["neutral"], "tolerance": None}, "source_ids": ["sst-test-1964"],
        "rule": "as_is", "rule_kind": "select", "slots": {}, "protected_spans": [],
        "segments": [{"group": "short_neutral", "source_id": "sst-test-1964", "start": 0, "end": 28}],
        "source_labels": ["neutral"]})
    masked = Masked(real_seed.id, ["The", "[MASK]", "New", "Guy", "is", "one", "of", "them", "."], [1], ["JJ"])
    neutral = validate_fill(masked, ["american"], real_seed, spec)
    assert neutral.verdicts["predicates"], neutral.reasons["predicates"]
    lenient_policy = spec.expansion.model_copy(update={"allowed_polarity": ["positive"]})
    lenient = spec.model_copy(update={"expansion": lenient_policy})
    positive = validate_fill(masked, ["good"], real_seed, lenient)
    assert positive.verdicts["polarity"]  # the policy allows it, but the LC's predicates exclude positive adjectives
    assert not positive.verdicts["predicates"] and "positive_adj" in positive.reasons["predicates"]
    assert not positive.ok


# ---------------------------------------------------------------------------------- rule 4: protected spans


PROTECTED_TEXT = "i hate women and men ."
PROTECTED = [(7, 20)]  # "women and men"


def test_protected_insertion_inside_span_fails():
    tokens = ["i", "hate", "women", "[MASK]", "and", "men", "."]
    ok, reason = check_protected(PROTECTED_TEXT, PROTECTED, tokens, [3])
    assert not ok and "women and men" in reason


def test_protected_insertion_at_span_edges_passes():
    before = ["i", "hate", "[MASK]", "women", "and", "men", "."]
    after = ["i", "hate", "women", "and", "men", "[MASK]", "."]
    assert check_protected(PROTECTED_TEXT, PROTECTED, before, [2])[0]
    assert check_protected(PROTECTED_TEXT, PROTECTED, after, [5])[0]
    assert check_protected(PROTECTED_TEXT, [], ["i", "[MASK]", "hate", "women", "and", "men", "."], [1])[0]


def test_protected_text_changed_fails():
    changed = ["i", "hate", "women", "or", "men", "[MASK]", "."]
    ok, reason = check_protected(PROTECTED_TEXT, PROTECTED, changed, [5])
    assert not ok and "changed" in reason


def test_protected_verdict_through_validate_fill():
    masked = Masked("LC1-aaaa", ["i", "hate", "women", "[MASK]", "and", "men", "."], [3], ["RB"])
    v = validate_fill(masked, ["really"], seed(PROTECTED_TEXT, spans=PROTECTED), SPEC, predicate_check=always)
    assert not v.verdicts["protected"] and not v.ok


# ---------------------------------------------------------------------------------- inputs and combinations


def test_bad_masked_sentence_is_reported_clearly():
    broken = Masked("LC1-aaaa", ["the", "[MASK]", "movie"], [1], [])
    with pytest.raises(ExpansionError, match="1 mask positions but 0 mask tags"):
        validate_fill(broken, ["french"], seed("the movie"), SPEC, predicate_check=always)
    with pytest.raises(ExpansionError, match="2 words for 1 masks"):
        validate_fill(SLOT_JJ, ["a", "b"], seed("the movie was fun ."), SPEC, predicate_check=always)


def test_fill_combinations_rank_by_product_of_probabilities():
    per_mask = [[("very", 0.5), ("quite", 0.4)], [("long", 0.9), ("short", 0.1)]]
    combos = fill_combinations(per_mask, 3)
    assert [c[0] for c in combos] == [["very", "long"], ["quite", "long"], ["very", "short"]]
    assert combos[0][1] == pytest.approx(0.45)
    assert fill_combinations([[("a", 0.2)], []], 3) == []
    assert fill_combinations([[("a", 0.2), ("b", 0.1)]], 1) == [(["a"], 0.2)]


# ---------------------------------------------------------------------------------- expand() with stand-ins


class WordParser:
    """Stands in for a constituency parser: a flat tree; counts calls."""

    fingerprint = "flat-parser"

    def __init__(self):
        self.calls = 0

    def parse_batch(self, token_lists):
        import nltk

        self.calls += 1
        return [nltk.Tree("S", [nltk.Tree("X", [t]) for t in tokens]) for tokens in token_lists]


def adjective_masker(seed_id, tree, top_k, max_masks):
    """Insert one JJ slot before every noun 'movie'/'film' (stands in for Algorithm 1)."""
    tokens = tree.leaves()
    out = []
    for i, t in enumerate(tokens):
        if t in {"movie", "film"}:
            out.append(Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"]))
    return out[:top_k]


@dataclass
class FixedSuggester:
    name: str = "fixed"
    fingerprint: str = "fixed-v1"
    calls: list = field(default_factory=list)

    def suggest(self, masked_texts, top_k=10):
        self.calls.append(list(masked_texts))
        words = [("french", 0.4), ("good", 0.2), ("dog", 0.1), ("american", 0.08), ("wooden", 0.05),
                 ("italian", 0.04), ("british", 0.02)]
        return [[words[:top_k] for _ in range(t.count("[MASK]"))] for t in masked_texts]


SEEDS = [seed("the movie was fun .", "LC1-0001"), seed("i liked the film and the movie .", "LC1-0002"),
         seed("nothing to fill here .", "LC1-0003")]


def test_expand_keeps_rejected_rows_caps_and_counts(tmp_path):
    suggester = FixedSuggester()
    result = expand(SEEDS, SPEC, WordParser(), suggester, masker=adjective_masker, predicate_check=always,
                    max_per_seed=2, top_k_words=7, out_dir=tmp_path)
    assert len(suggester.calls[0]) == 3  # all masked sentences in one batch
    # then one round of the neighbour-likelihood check: the valid fills' neighbours masked, seed and expansion
    assert len(suggester.calls) == 2 and "the [MASK] movie was fun ." not in suggester.calls[1]
    assert "the french [MASK] was fun ." in suggester.calls[1] and "the [MASK] was fun ." in suggester.calls[1]
    assert all(set(row) >= ROW_KEYS for row in result.rows)
    assert all(list(row) == list(ExpansionRow.__dataclass_fields__) for row in result.rows)  # one row type
    by_seed = {sid: result.for_seed(sid) for sid in ("LC1-0001", "LC1-0002", "LC1-0003")}
    assert len(by_seed["LC1-0001"]) == 7 and by_seed["LC1-0003"] == []
    accepted = [r["text"] for r in result.accepted("LC1-0001")]
    assert accepted == ["the french movie was fun .", "the american movie was fun ."]  # best score first, cap 2
    wooden = next(r for r in by_seed["LC1-0001"] if r["words"] == ["wooden"])
    assert not wooden["accepted"] and all(wooden["verdicts"].values()) and "cap" in wooden["reasons"]
    good = next(r for r in by_seed["LC1-0001"] if r["words"] == ["good"])
    assert good["verdicts"] == {"pos": True, "polarity": False, "predicates": True, "protected": True, "fluency": True}
    dog = next(r for r in by_seed["LC1-0001"] if r["words"] == ["dog"])
    assert not dog["verdicts"]["pos"] and not dog["accepted"]
    assert good["masked"]["reference_production"] == "NP -> DT JJ NN" and good["score"] == pytest.approx(0.2)
    assert len(by_seed["LC1-0002"]) == 14 and len(result.accepted("LC1-0002")) == 2
    assert len({r["id"] for r in result.rows}) == len(result.rows)
    assert result.counts == {"LC1": {"seeds": 3, "masked": 3, "suggestions": 21, "accepted": 4, "seeds_expanded": 2,
                                     "rejected": {"cap": 5, "fluency:weak_fill": 6, "polarity:polar": 6, "pos": 3}}}
    italian = next(r for r in by_seed["LC1-0001"] if r["words"] == ["italian"])  # MLM score 0.04 < 0.05
    assert not italian["verdicts"]["fluency"] and italian["reasons"]["fluency"].startswith("weak_fill")


def test_expand_is_cached_by_content_and_round_trips(tmp_path):
    parser = WordParser()
    first = expand(SEEDS, SPEC, parser, FixedSuggester(), masker=adjective_masker, predicate_check=always,
                   out_dir=tmp_path)
    assert first.path is not None and first.path.parent == tmp_path and first.path.stem == first.key
    again = expand(SEEDS, SPEC, parser, FixedSuggester(), masker=adjective_masker, predicate_check=always,
                   out_dir=tmp_path)
    assert parser.calls == 1  # read from the artefact
    assert again.rows == first.rows and again.counts == first.counts
    other = expand(SEEDS, SPEC, parser, FixedSuggester(fingerprint="fixed-v2"), masker=adjective_masker,
                   predicate_check=always, out_dir=tmp_path)
    assert other.key != first.key and parser.calls == 2  # another suggester → another key
    loaded = ExpansionSet.from_jsonl(first.path)
    assert loaded.rows == first.rows and loaded.counts == first.counts


def test_masker_key_follows_its_code_and_unknown_maskers_are_never_read_back(tmp_path):
    """Two plain-function maskers that differ only in code get different keys; a closure (content unknown) is
    recomputed on every call instead of reading an artefact another closure wrote under the same key."""
    def noun_masker(seed_id, tree, top_k, max_masks):  # same output as adjective_masker, other code
        tokens = tree.leaves()
        return [Masked(seed_id, tokens[:i] + ["[MASK]"] + tokens[i:], [i], ["JJ"])
                for i, t in enumerate(tokens) if t in {"film", "movie"}][:top_k]

    parser = WordParser()
    first = expand(SEEDS, SPEC, parser, FixedSuggester(), masker=adjective_masker, predicate_check=always,
                   out_dir=tmp_path)
    other = expand(SEEDS, SPEC, parser, FixedSuggester(), masker=noun_masker, predicate_check=always,
                   out_dir=tmp_path)
    assert other.key != first.key and parser.calls == 2

    def closure_masker(word):
        def masker(seed_id, tree, top_k, max_masks):
            tokens = tree.leaves()
            return [Masked(seed_id, tokens[:1] + [word] + tokens[1:], [1], ["JJ"])][:top_k]
        return masker

    expand(SEEDS, SPEC, parser, FixedSuggester(), masker=closure_masker("[MASK]"), predicate_check=always,
           out_dir=tmp_path)
    expand(SEEDS, SPEC, parser, FixedSuggester(), masker=closure_masker("[MASK]"), predicate_check=always,
           out_dir=tmp_path)
    assert parser.calls == 4  # both closures recomputed: never read back


def test_same_text_from_slots_with_different_tags_keeps_the_valid_reading():
    def two_readings(seed_id, tree, top_k, max_masks):
        tokens = tree.leaves()
        masked = tokens[:2] + ["[MASK]"] + tokens[2:]
        return [Masked(seed_id, masked, [2], ["DT"]), Masked(seed_id, masked, [2], ["RB"])]

    class AlsoSuggester(FixedSuggester):
        def suggest(self, masked_texts, top_k=10):
            return [[[("also", 0.3)]] for _ in masked_texts]

    result = expand(SEEDS[:1], SPEC, WordParser(), AlsoSuggester(), masker=two_readings, predicate_check=always,
                    use_cache=False)
    (row,) = result.rows
    assert row["text"] == "the movie also was fun ." and row["accepted"]
    assert row["masked"]["mask_tags"] == ["RB"]


def test_fill_breaking_protected_text_is_not_tagged_and_left_unchecked(monkeypatch):
    protected_seed = seed("i saw the movie here .", "LC1-0009", spans=[(6, 15)])  # "the movie" inserted by a rule
    tagged_texts = []
    from alict_core.expansion import search as pipeline

    real_tagger = pipeline.tag_token_lists

    def counting_tagger(token_lists, *args, **kwargs):
        tagged_texts.extend(" ".join(t) for t in token_lists)
        return real_tagger(token_lists, *args, **kwargs)

    monkeypatch.setattr(pipeline, "tag_token_lists", counting_tagger)
    result = expand([protected_seed], SPEC, WordParser(), FixedSuggester(), masker=adjective_masker,
                    predicate_check=always, top_k_words=3, use_cache=False)
    assert len(result.rows) == 3 and not result.accepted()
    for row in result.rows:  # "the [MASK] movie" splits the protected "the movie"
        assert row["verdicts"] == {"pos": None, "polarity": None, "predicates": None, "protected": False,
                                   "fluency": None}
        assert "splits protected text" in row["reasons"]["protected"]
        assert row["reasons"]["pos"].startswith("not checked")
    assert tagged_texts == []


def test_expand_reports_progress_per_stage(tmp_path):
    stages = []
    expand(SEEDS, SPEC, WordParser(), FixedSuggester(), masker=adjective_masker, predicate_check=always,
           progress=lambda done, total, stage: stages.append((stage, done, total)), use_cache=False)
    assert [s for s in dict.fromkeys(st for st, _, _ in stages)] == ["parse", "mask", "suggest", "validate"]
    assert ("validate", 21, 21) in stages


def test_expand_rejects_bad_settings():
    with pytest.raises(ExpansionError, match="top_k_words must be >= 1"):
        expand(SEEDS, SPEC, WordParser(), FixedSuggester(), masker=adjective_masker, top_k_words=0)


def test_expand_with_tiny_hf_masked_lm(tmp_path):
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from alict_core.mlm import load_hf_suggester

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "film", "was", "fun", ".", "french",
             "american", "good", "##s", "i", "liked", "and", "nothing", "to", "fill", "here"]
    torch.manual_seed(1)
    model = BertForMaskedLM(BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32, max_position_embeddings=32))
    model.save_pretrained(tmp_path / "m")
    BertTokenizer(vocab={t: i for i, t in enumerate(vocab)}).save_pretrained(tmp_path / "m")
    suggester = load_hf_suggester(str(tmp_path / "m"))
    result = expand(SEEDS, SPEC, WordParser(), suggester, masker=adjective_masker, predicate_check=always,
                    top_k_words=4, use_cache=False)
    assert result.rows and all(w in vocab and w.isalpha() for r in result.rows for w in r["words"])
    assert all(r["accepted"] == all(r["verdicts"].values()) for r in result.rows)


# ---------------------------------------------------------------------------------- real models


@pytest.mark.slow
def test_expand_real_seeds_with_offline_models(tmp_path):
    from alict_core.models.artefacts import is_built

    if not is_built("mlm"):
        pytest.skip("MiniLM MLM head not built: run `python -m alict_core build mlm`")
    parsing = pytest.importorskip("alict_core.parsing", reason="parser package (#3 part A) not available")
    pytest.importorskip("alict_core.grammar", reason="grammar package (#3 part A) not available")
    seeds_mod = pytest.importorskip("alict_core.seeds", reason="alict_core.seeds (#2) not available")
    spec_mod = pytest.importorskip("alict_core.lcspec", reason="alict_core.lcspec (#2) not available")
    from alict_core.data.corpus import load_corpus
    from alict_core.mlm import get_suggester

    try:
        parser = parsing.get_parser()
    except Exception as exc:  # noqa: BLE001 - a parser that is not built is a skip, with its message
        pytest.skip(f"parser not available: {exc}")
    spec = spec_mod.load_task_specs("sentiment")[0]
    seeds = seeds_mod.find_seeds(spec, load_corpus("sentiment")).seeds[:4]
    result = expand(seeds, spec, parser, get_suggester(), top_k_words=10, out_dir=tmp_path)
    assert result.counts[spec.id]["masked"] > 0 and result.rows
    for row in result.rows:
        assert row["lc_id"] == spec.id and row["seed_id"] in {s.id for s in seeds}
        assert row["accepted"] <= all(row["verdicts"].values())
        assert all(w.isalpha() or "-" in w or "'" in w for w in row["words"])


def test_cli_expand_prints_counts_and_writes_jsonl(tmp_path, monkeypatch, capsys):
    """The CLI wiring on real seeds of sentiment-lc02, with stand-ins for the parser, grammar and MLM."""
    import alict_core.expansion.sharded as sharded
    import alict_core.parsing as parsing
    from alict_core.cli import main

    monkeypatch.setattr(parsing, "get_parser", lambda name=None: WordParser())
    monkeypatch.setattr(sharded, "suggester_by_name", lambda name: FixedSuggester())

    def first_word_masker(grammar=None):  # a JJ slot after the first word of every seed, whatever its words
        def masker(seed_id, tree, top_k, max_masks):
            tokens = tree.leaves()
            return [Masked(seed_id, tokens[:1] + ["[MASK]"] + tokens[1:], [1], ["JJ"])]
        return masker

    sharded.MASKERS.add("reference", first_word_masker)
    try:
        assert main(["expand", "--task", "sentiment", "--lc", "sentiment-lc02", "--max-seeds", "3",
                     "--shard-size", "2", "--no-cache", "--out", str(tmp_path)]) == 0
    finally:
        sharded.MASKERS.add("reference", sharded.default_masker)
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("sentiment-lc02"))
    files = list(tmp_path.glob("*.jsonl"))
    assert len(files) == 1 and str(files[0]) in line
    rows = ExpansionSet.from_jsonl(files[0]).rows
    assert line.split()[1] == "3" and int(line.split()[3]) == len(rows)
    assert all(r["lc_id"] == "sentiment-lc02" and set(r) >= ROW_KEYS for r in rows)
    header = out.splitlines().index(next(x for x in out.splitlines() if "inserted POS" in x))
    jj = out.splitlines()[header + 1].split()  # the per-POS table: every fill here is a JJ slot, none judged
    assert jj[0] == "JJ" and int(jj[1]) == len(rows) and int(jj[2]) == sum(r["accepted"] for r in rows)
    assert jj[3] == "—"


def test_seed_fields_read_a_seed_object_or_its_dict_once():
    @dataclass
    class SeedObject:
        id: str
        text: str
        lc_id: str = "LC1"
        task: str = ""

    plain = {"id": "s1", "text": "a fine film .", "lc_id": "", "task": None}
    assert SeedFields.of(plain, "LC9", "sentiment") == SeedFields("s1", "LC9", "sentiment", "a fine film .")
    assert SeedFields.of(SeedObject("s2", "fine ."), "LC9", "hate_speech") == SeedFields("s2", "LC1", "hate_speech",
                                                                                          "fine .")


def test_an_uncached_expansion_creates_no_cache_folder(tmp_path, monkeypatch):
    """Pass 30: the Expansions page's expansions (``use_cache=False``) made an empty ``<cache>/expansions`` folder:
    a page view writes nothing."""
    import alict_core.expansion.search as search

    monkeypatch.setattr(search, "cache_dir", lambda: tmp_path / "cache")
    expand(SEEDS[:1], SPEC, WordParser(), FixedSuggester(), predicate_check=always, use_cache=False)
    assert not (tmp_path / "cache").exists()


def test_reading_the_parse_cache_creates_no_folder_and_a_write_does(tmp_path, monkeypatch):
    """Pass 30: opening the parse cache (a page picking the parser) made an empty ``<cache>/parses`` folder."""
    import nltk

    from alict_core.parsing.benepar_backend import ParseCache

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    cache = ParseCache("fp")
    assert cache.get(["a", "film", "."]) is None and not (tmp_path / "cache" / "parses").exists()
    cache.put_many([(["a", "film", "."], nltk.Tree.fromstring("(S (NP (DT a) (NN film)) (. .))"))])
    assert cache.get(["a", "film", "."]).leaves() == ["a", "film", "."]
    assert list((tmp_path / "cache" / "parses" / "fp").glob("*.jsonl"))
