"""Pass 26 rows (found by the p26cli helper, fixed by the lead): each failed before its fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("manifest", ["empty file", "a folder", "a dangling link"])
def test_p26_cli_1_build_never_replaces_a_user_folder_whose_manifest_is_unreadable(cli, tmp_path, own_cache,
                                                                                   manifest):
    """Was: `build parser --profile micro --out bo` with bo/micro/parser holding mine.txt and an unreadable
    manifest.json (empty, a folder, a link to nothing) built over it, exit 0, mine.txt gone: the pass-25 check
    returns early when the manifest cannot be read."""
    target = tmp_path / "bo" / "micro" / "parser"
    target.mkdir(parents=True)
    (target / "mine.txt").write_text("precious")
    if manifest == "empty file":
        (target / "manifest.json").write_text("")
    elif manifest == "a folder":
        (target / "manifest.json").mkdir()
    else:
        (target / "manifest.json").symlink_to(tmp_path / "nowhere")
    outcome = cli("build", "parser", "--profile", "micro", "--out", str(tmp_path / "bo"), "--no-wait")
    assert outcome.code == 2, outcome.err[-400:]
    assert (target / "mine.txt").read_text() == "precious"


def test_p26_cli_2_a_review_db_under_a_non_utf8_folder_is_refused_or_usable(cli, tmp_path, own_cache, monkeypatch):
    """Was: from a working folder whose name is not UTF-8, `review sample --db sqlite:///rv.sqlite` created the
    database (exit 0), and every later command on it (stats, export, a second sample) said "cannot open the review
    database ... surrogates not allowed": a write no command can use again."""
    from tests.robustness.support import small_cases

    odd = Path(os.fsdecode(bytes(tmp_path) + b"/cw\xffd"))
    odd.mkdir()
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    monkeypatch.chdir(odd)
    outcome = cli("review", "sample", "--db", "sqlite:///rv.sqlite", "--name", "t", "--task", "sentiment", "--cases",
                  str(cases), "--size", "3", "--sets", "1", "--k", "1")
    if outcome.code == 0:
        assert cli("review", "stats", "--db", "sqlite:///rv.sqlite", "t").code == 0
    else:
        assert_clean_error(outcome, 2)
        assert sorted(p.name for p in odd.iterdir()) == []


def test_p26_cli_3_build_never_writes_through_a_linked_profile_folder_into_a_saved_run(cli, tmp_path, own_cache):
    """Was: `build parser --profile micro --out bo` with bo/micro a link to a saved run (or to the data folder, or
    to the model store's quick/ folder) built bo/micro/parser inside it, exit 0: `--out r` itself is refused
    ("lies inside the saved artefact"), the profile folder under --out was never checked."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    run = tmp_path / "r"
    assert cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet",
               "--out", str(run)).code == 0
    before = sorted(p.name for p in run.iterdir())
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "micro").symlink_to(run)
    outcome = cli("build", "parser", "--profile", "micro", "--out", str(tmp_path / "bo"), "--no-wait")
    assert outcome.code == 2, outcome.err[-400:]
    assert sorted(p.name for p in run.iterdir()) == before


def test_p26_cli_4_run_out_over_a_saved_run_never_takes_a_users_files_with_it(cli, tmp_path, own_cache):
    """Was (debatable: the lead may call it design): `run --out r` over a saved run r to which the user had added
    notes.txt and mine/a.txt replaced it (other models), exit 0, both gone without a word; `build` refuses a built
    artefact holding a file of the user's (pass 25), and a fresh folder holding results/mine.xlsx is refused."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    run = ["run", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds), "--quiet", "--no-story", "--out",
           str(tmp_path / "r")]
    assert cli(*run, "--models", "vader").code == 0
    (tmp_path / "r" / "notes.txt").write_text("precious")
    outcome = cli(*run, "--models", "textblob")
    assert_clean_error(outcome, 2, "notes.txt")
    assert (tmp_path / "r" / "notes.txt").read_text() == "precious"


@pytest.mark.parametrize("line", ["a\t1\t0.5\t0\tgood#0", "a\t1\t7\t0\tgood#1", "a\t1\tnan\t0\tgood#1",
                                  "a\t1\t-2\t0\tgood#1"])
def test_p26_cli_5_a_damaged_sentiwordnet_line_is_a_data_error(tmp_path, monkeypatch, line):
    """Was: a SentiWordNet line with sense number 0 (`good#0`) failed with ZeroDivisionError (`seeds --task
    sentiment --lc 1`: exit 3 "internal error"); a score of 7, nan or -2 was read as it stood (nan: neutral), where
    a damaged HateXplain label is a data error since pass 25."""
    import gzip

    from alict_core.common.errors import AlictError
    from alict_core.data.polarity_lexicon import load_sentiwordnet

    folder = tmp_path / "data" / "sentiwordnet"
    folder.mkdir(parents=True)
    (folder / "sentiwordnet_3.0_nogloss.tsv.gz").write_bytes(gzip.compress((line + "\n").encode()))
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    load_sentiwordnet.cache_clear()
    try:
        with pytest.raises(AlictError, match="sentiwordnet"):
            load_sentiwordnet()
    finally:
        load_sentiwordnet.cache_clear()


@pytest.mark.parametrize("cut", ["a list one term short", "a file cut short", "no Values column"])
def test_p26_cli_6_a_damaged_hatecheck_placeholder_file_is_a_data_error(tmp_path, monkeypatch, cut):
    """Was: hatecheck/template_placeholders.csv with IDENTITY_P one term short (or cut inside the IDENTITY_A line,
    or without its Values column) failed `seeds --task hate_speech --lc 2` with exit 3 "internal error (ValueError:
    zip() argument 2 is shorter than argument 1)" / KeyError: the lexicon loaders are not `reads_data` checked."""
    from alict_core.common.errors import AlictError
    from alict_core.data import lexicons

    text = ('Placeholder,Values\n[IDENTITY_S],"woman, trans person"\n[IDENTITY_P],"women, trans people"\n'
            '[IDENTITY_A],"female, trans"\n')
    if cut == "a list one term short":
        text = text.replace('"women, trans people"', '"trans people"')
    elif cut == "a file cut short":
        text = text[: text.index("female") + 8]
    else:
        text = text.replace("Placeholder,Values", "Placeholder,Vals")
    folder = tmp_path / "data" / "hatecheck"
    folder.mkdir(parents=True)
    (folder / "template_placeholders.csv").write_text(text)
    (tmp_path / "data" / "sst").mkdir()
    (tmp_path / "data" / "sst" / "train.txt").write_text("(3 (2 a) (3 good))\n")  # a data folder at all
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    lexicons.hatecheck_placeholders.cache_clear()
    lexicons.identity_groups.cache_clear()
    try:
        with pytest.raises(AlictError, match="template_placeholders"):
            lexicons.identity_groups()
    finally:
        lexicons.hatecheck_placeholders.cache_clear()
        lexicons.identity_groups.cache_clear()


@pytest.mark.parametrize("divisions", ['{"train": ["1"], "oops": ["2"]}', "[1, 2]", '{"train": [1'])
def test_p26_cli_7_damaged_hatexplain_divisions_are_a_data_error_in_the_split_lookup(tmp_path, monkeypatch,
                                                                                      divisions):
    """Was: `harden export --run <a hate_speech run> --lcs hate_speech-lc01 --out ho` with a damaged
    hatexplain/post_id_divisions.json gave exit 3 "internal error (KeyError: 'oops')" / AttributeError: the split
    lookup of data/splits.py reads the file unchecked (data/hatexplain.py's reader of the same file is checked)."""
    from alict_core.common.errors import AlictError
    from alict_core.data.splits import source_split_lookup

    folder = tmp_path / "data" / "hatexplain"
    folder.mkdir(parents=True)
    (folder / "post_id_divisions.json").write_text(divisions)
    (folder / "hatexplain.csv").write_text("post_id,text,label\n")  # a data folder at all
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(AlictError, match="post_id_divisions"):
        source_split_lookup("hate_speech")


def test_p26_cli_8_lego_with_a_cut_sentiwordnet_file_is_a_data_error(tmp_path, monkeypatch):
    """Was: `lego --task sentiment --seeds s.jsonl --out lg` with sentiwordnet_3.0_nogloss.tsv.gz cut short gave
    exit 3 "internal error (EOFError ...)" (lego/lexicon.py reads it unchecked); `seeds` says the data file cannot
    be read (exit 2)."""
    import gzip

    from alict_core.common.errors import AlictError
    from alict_core.lego import lexicon

    folder = tmp_path / "data" / "sentiwordnet"
    folder.mkdir(parents=True)
    body = gzip.compress(b"".join(b"a\t%d\t0\t0\tword%d#1\n" % (i, i) for i in range(5000)))
    (folder / "sentiwordnet_3.0_nogloss.tsv.gz").write_bytes(body[: len(body) // 2])
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    lexicon._synsets.cache_clear()
    try:
        with pytest.raises(AlictError, match="sentiwordnet"):
            lexicon._synsets()
    finally:
        lexicon._synsets.cache_clear()


@pytest.mark.parametrize("held", ["hf_dataset/mine.txt", "hf_dataset/train/notes.md", "hf_dataset/mine/a.txt"])
def test_p26_cli_9_harden_overwrite_never_takes_user_files_inside_hf_dataset(tmp_path, held):
    """Was: `harden export --run r --lcs 4 --out ho --overwrite` over an earlier export whose hf_dataset/ held a
    user's file (hf_dataset/mine.txt, hf_dataset/train/notes.md, hf_dataset/mine/a.txt) replaced it, exit 0, the
    files gone: any hf_dataset folder with a dataset_dict.json counted as the export's, whatever else it held (the
    pass-25 entry-type check of a run's shard folders, not applied here)."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import _check_only_export_files

    out = tmp_path / "ho"
    for split in ("train", "validation", "test"):
        (out / "hf_dataset" / split).mkdir(parents=True)
        for name in ("data-00000-of-00001.arrow", "dataset_info.json", "state.json"):
            (out / "hf_dataset" / split / name).write_text("{}")
        (out / f"{split}.jsonl").write_text("")
    (out / "hf_dataset" / "dataset_dict.json").write_text('{"splits": ["train", "validation", "test"]}')
    (out / "export.json").write_text("{}")
    _check_only_export_files(out)  # an export as written is replaceable
    mine = out / held
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("precious")
    with pytest.raises(AlictError, match="hf_dataset"):
        _check_only_export_files(out)


def test_p26_cli_4b_report_export_over_an_earlier_export_never_takes_a_users_file(cli, tmp_path, own_cache):
    """Was: `report r --out u.html --export ue` over an earlier export ue to which the user had added notes.txt
    replaced it, exit 0, notes.txt gone (a folder holding an artefact of the writer's own kind is replaced
    whatever else it holds); `lego --out` and `harden export --overwrite` refuse the same ("already holds other
    files")."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    assert cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet",
               "--no-story", "--out", str(tmp_path / "r")).code == 0
    argv = ["report", str(tmp_path / "r"), "--out", str(tmp_path / "u.html"), "--export", str(tmp_path / "ue")]
    assert cli(*argv).code == 0
    (tmp_path / "ue" / "notes.txt").write_text("precious")
    assert_clean_error(cli(*argv), 2, "notes.txt")
    assert (tmp_path / "ue" / "notes.txt").read_text() == "precious"


def test_p26_cli_10_a_missing_data_file_is_never_downloaded_with_alict_offline(tmp_path, monkeypatch):
    """Was: with ALICT_OFFLINE=1 and a data folder without treebank/treebank.zip, `build parser --profile micro
    --out bo` (any reader of a missing data file) fetched https://raw.githubusercontent.com/... (the error named the
    failed DNS look-up): data_file downloads "when online" without asking whether the user said offline."""
    import urllib.request

    from alict_core.common.errors import AlictError
    from alict_core.data.files import data_file

    (tmp_path / "data" / "sst").mkdir(parents=True)
    (tmp_path / "data" / "sst" / "train.txt").write_text("(3 (2 a) (3 good))\n")
    monkeypatch.setenv("ALICT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_OFFLINE", "1")
    calls = []

    def no_network(url, *args, **kwargs):
        calls.append(url)
        raise OSError("the test forbids the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(AlictError):
        data_file("treebank/treebank.zip")
    assert calls == []


@pytest.mark.parametrize("where", ["data", "run"])
def test_p26_cli_11_review_db_url_setting_is_guarded_like_db(cli, tmp_path, own_cache, monkeypatch, where):
    """Was: `ALICT_REVIEW_DB_URL=sqlite:///<data folder>/rv.sqlite review sample ...` (or a saved run's folder, the
    shipped specs, the model store) created the database there, exit 0; the same path as `--db` is refused since
    pass 25."""
    from tests.robustness.support import small_cases

    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)
    (data / "sst" / "train.txt").write_text("(3 (2 a) (3 good))\n")
    monkeypatch.setenv("ALICT_DATA_DIR", str(data))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    if where == "run":
        from tests.robustness.support import seed_row

        seeds = tmp_path / "s.jsonl"
        seeds.write_text(json.dumps(seed_row()) + "\n")
        assert cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--quiet",
                   "--no-story", "--out", str(tmp_path / "r")).code == 0
    folder = data if where == "data" else tmp_path / "r"
    before = sorted(p.name for p in folder.iterdir())
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{folder / 'rv.sqlite'}")
    outcome = cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(cases), "--size", "3",
                  "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, "elsewhere")
    assert sorted(p.name for p in folder.iterdir()) == before


def test_p26_cli_13_an_empty_file_of_another_kind_is_never_taken_for_a_review_database(cli, tmp_path, own_cache):
    """Was: `review sample --db sqlite:///empty.jsonl` turned the user's empty file into a SQLite database."""
    from tests.robustness.support import small_cases

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    outcome = cli("review", "sample", "--db", f"sqlite:///{empty}", "--name", "t", "--task", "sentiment", "--cases",
                  str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, "is an empty file, not a review database")
    assert empty.read_bytes() == b""
    fresh = tmp_path / "new.sqlite"
    fresh.write_text("")  # an empty file named as a database is one
    assert cli("review", "sample", "--db", f"sqlite:///{fresh}", "--name", "t", "--task", "sentiment", "--cases",
               str(cases), "--size", "3", "--sets", "1", "--k", "1").code == 0
