"""Data layer on the real data bundle: locating, loaders, lexicons, annotation cache."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from alict_core.common import config
from alict_core.common.errors import DataNotFoundError
from alict_core.data import lexicons
from alict_core.data.annotate import annotate_text, term_classes
from alict_core.data.hatexplain import load_hatexplain
from alict_core.data.polarity_lexicon import load_sentiwordnet, word_polarity
from alict_core.data.sst import label_of_node, load_sst_phrases, load_sst_sentences, parse_tree


def test_data_dir_env_is_not_silently_replaced(monkeypatch, tmp_path):
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(config, "REPO_ROOT", tmp_path / "repo")
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError) as err:
        config.data_dir()
    message = str(err.value)
    assert str(tmp_path / "nowhere") in message and "ALICT_DATA_DIR" in message and "does not exist" in message


def test_data_dir_env_wins(monkeypatch):
    real = config.data_dir()
    monkeypatch.setenv("ALICT_DATA_DIR", str(real))
    assert config.data_dir() == Path(real)


def test_sst_tree_labels_map_to_three_classes():
    tree = parse_tree("(3 (2 The) (4 (4 great) (1 -LRB-film\\/show-RRB-)))")
    assert tree.leaves() == ["The", "great", "-LRB-film/show-RRB-"]
    assert [label_of_node(s) for s in range(5)] == ["negative", "negative", "neutral", "positive", "positive"]
    assert parse_tree("(1 (2 -LRB-) (1 bad))").leaves() == ["(", "bad"]


def test_sst_sentences_and_splits():
    rows = load_sst_sentences()
    assert len(rows) == 11855
    assert Counter(r.split for r in rows) == {"train": 8544, "dev": 1101, "test": 2210}
    assert set(Counter(r.label for r in rows)) == {"negative", "neutral", "positive"}
    assert rows[0].text.startswith("The Rock is destined")


def test_sst_phrases_include_subphrases_with_labels():
    phrases = load_sst_phrases(("dev",))
    labels = {p.text: p.label for p in phrases}
    assert len(phrases) > 20000
    assert len(labels) == len(phrases)  # distinct phrases
    assert set(labels.values()) == {"negative", "neutral", "positive"}
    assert any(len(p.tokens) == 1 for p in phrases)


def test_hatexplain_drops_undecided_and_uses_official_split():
    rows = load_hatexplain()
    assert len(rows) == 19229  # 20,148 posts minus the undecided ones
    splits = Counter(r.split for r in rows)
    assert set(splits) == {"train", "dev", "test"} and splits["train"] > 15000
    assert Counter(r.label for r in rows)["hateful"] == 5935


def test_sentiwordnet_keeps_the_sign():
    table = load_sentiwordnet()
    assert word_polarity("good", "adj").polarity == "positive"
    assert word_polarity("bad", "adj").polarity == "negative"
    assert word_polarity("terrible", "adj").score < 0  # a sign lost on even powers would make this positive
    assert word_polarity("movie", "noun").polarity == "neutral" and word_polarity("movie", "noun").objective
    assert len(table) > 100000


def test_hatecheck_lists_are_stripped_after_commas():
    table = lexicons.hatecheck_placeholders()
    assert table["IDENTITY_P"][1] == "trans people"  # not " trans people"
    assert "women" in lexicons.identity_terms() and "gay people" in lexicons.identity_terms()
    assert "faggot" in lexicons.slur_terms() and "wetback" in lexicons.slur_terms()


def test_profanity_is_swearing_not_topics():
    words = lexicons.profanity_terms()
    assert {"fuck", "shit", "bitch"} <= words
    assert not ({"gay", "god", "women", "muslim"} & words)
    assert len(lexicons.hurtlex()) > 5000


def test_annotation_marks_lexicon_classes_in_context():
    ann = annotate_text("This is not a good movie about gay people , damn it .")
    assert ann.tags[:3] == ("DT", "VBZ", "RB")
    classes = dict(zip(ann.tokens, ann.classes, strict=True))
    assert "positive_adj" in classes["good"]
    assert {"neutral_noun", "objective_noun"} <= classes["movie"]
    assert "identity" in classes["gay"] and "identity" in classes["people"]
    assert "profanity" in classes["damn"]
    assert not classes["is"]  # auxiliaries are not polar verbs


def test_multiword_terms_mark_every_token():
    marks = term_classes(["two", "trans", "people", "and", "he"])
    assert "identity" in marks[1] and "identity" in marks[2] and "pronoun" in marks[4] and not marks[3]


def test_annotation_cache_is_reused(sentiment_corpus):
    from alict_core.data.corpus import corpus_hash

    cached = list(config.artefact_dir("annotations").glob(f"sst-{corpus_hash('sst')}.parquet"))
    assert len(cached) == 1
    mtime = cached[0].stat().st_mtime_ns
    from alict_core.data.corpus import _LOADED

    _LOADED.clear()
    from alict_core.data.corpus import load_corpus

    again = load_corpus("sentiment")
    assert cached[0].stat().st_mtime_ns == mtime  # read, not rewritten
    assert [i.id for i in again.items[:50]] == [i.id for i in sentiment_corpus.items[:50]]
    assert again.items[0].annotation == sentiment_corpus.items[0].annotation


def test_download_converters_produce_the_bundle_layout():
    import gzip
    import json

    from alict_core.data.download import hatexplain_csv, sentiwordnet_nogloss

    post = {
        "p1": {"post_tokens": ["Some", "Text"],
               "annotators": [{"label": "hatespeech"}, {"label": "hatespeech"}, {"label": "normal"}]},
        "p2": {"post_tokens": ["x"],
               "annotators": [{"label": "normal"}, {"label": "offensive"}, {"label": "hatespeech"}]},
    }
    rows = hatexplain_csv(json.dumps(post).encode()).decode().splitlines()
    assert rows[1].startswith("p1,some text,1,1") and rows[2].startswith("p2,x,0,3")
    swn = sentiwordnet_nogloss(b"# comment\na\t1\t0.5\t0\tgood#1\tgloss text\n")
    assert gzip.decompress(swn).decode() == "a\t1\t0.5\t0\tgood#1\n"


def test_missing_file_offline_names_the_file(monkeypatch, tmp_path):
    import urllib.request

    from alict_core.data.download import download_file

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DataNotFoundError, match="hurtlex/hurtlex_EN.tsv"):
        download_file("hurtlex/hurtlex_EN.tsv", tmp_path)
    assert not (tmp_path / "hurtlex").exists() or not any((tmp_path / "hurtlex").iterdir())
