"""Pass 32 rows (the lead's own probes beside the p32cli, p32pages and p32kill helpers): each failed before its fix."""

from __future__ import annotations

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("model, said", [("vader:neutral_band=abc", "neutral_band"),
                                         ("vader:neutral_band=2", "neutral_band"),
                                         ("textblob:neutral_band=nan", "neutral_band"),
                                         ("vader:foo=1", "foo"), ("textblob:bogus=1", "bogus"),
                                         ("vader:=x", "no argument name")])
def test_p32_lead_1_a_lexicon_models_argument_is_typed_and_checked_before_the_seed_search(cli, tmp_path, own_cache,
                                                                                        monkeypatch, model, said):
    """Was (the lead, pass 32): the pass-30/31 typing and early checks covered the adapters of the user kinds only.
    `--models vader:neutral_band=abc` searched the seeds and failed at the first batch with numpy's text ("could not
    convert string to float: np.str_('abc')"); `neutral_band=2` ran with every case neutral; `textblob:neutral_band=nan`
    failed as "returned non-finite probabilities"; `vader:foo=1` was refused only after the seed search, and
    `vader:=x` as "takes no arguments; given: none; unknown: " (an empty name)."""
    import alict_core.seeds

    def no_search(*args, **kwargs):
        raise AssertionError("the seeds were searched before the model arguments were checked")

    monkeypatch.setattr(alict_core.seeds, "find_seeds", no_search)
    outcome = cli("run", "--task", "sentiment", "--models", model, "--lc", "4", "--sample-per-lc", "3",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, said)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argument", ["label_map=a:b;a:c", "headers=X-Key:1;X-Key:2"])
def test_p32_lead_2_a_mapping_argument_naming_one_key_twice_is_refused(argument):
    """Was (pass-31 leftover): `label_map=a:b;a:c` kept the last value without a word."""
    from alict_core.common.errors import AlictError
    from alict_core.models.refs import model_refs

    with pytest.raises(AlictError, match="twice"):
        model_refs(f"http:url=http://127.0.0.1:9/p,task=sentiment,{argument}", "sentiment")


def test_p32_lead_3_arguments_a_model_takes_still_reach_it():
    """The early check keeps what each kind takes (a name, a neutral band; an endpoint's own arguments)."""
    from alict_core.models.refs import model_refs

    refs = model_refs("vader:neutral_band=0.2,name=v2,http:url=http://127.0.0.1:9/p,task=sentiment,timeout=5,"
                      "label_map=POS:positive;NEG:negative", "sentiment")
    assert [ref.name for ref in refs] == ["vader", "http"]
    assert refs[0].kwargs["neutral_band"] == "0.2" and refs[1].kwargs["timeout"] == "5"


@pytest.mark.parametrize("url", ["http://127.0.0.1:18931/predict?token=TOPSECRET",
                                 "http://127.0.0.1:18931/predict#TOPSECRET",
                                 "https://api.example.com/v1/classify?api_key=TOPSECRET&x=1"])
def test_p32_pages_1_an_endpoints_default_display_name_carries_no_query_or_fragment(url):
    """Was (the p32pages helper, AppTest and Chromium): Run page > Add your own model > JSON HTTP endpoint
    `...?token=TOPSECRET`, no display name: the model was named `http:<the whole URL>` (the page handed it in as
    name=), so the token went into the shared run's request/meta/summary/results/story files and onto Failures,
    Compare, Report and Story in every session. The command line names it by the URL without user, query or
    fragment."""
    from alict_app.user_models import default_label

    label = default_label("http", url)
    assert "TOPSECRET" not in label and label.startswith("http:http")


def _app():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240).run()


def test_p32_pages_4a_an_unticked_user_model_and_a_typed_lego_sentence_survive_a_visit_to_another_page(
        own_cache, monkeypatch):
    """Was (the p32pages helper): a user model's "use …" box unticked on the Run page was ticked again after a visit
    to Specs (drawn with value=True), so the next Run press sent every case to the endpoint the user had switched off;
    the NLPLego page's typed sentence was emptied the same way."""
    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    at = _app()
    at.switch_page("pages/run.py").run()
    at.selectbox(key="um_kind").set_value("http").run()
    at.text_input(key="um_url").input("http://127.0.0.1:9/predict")
    at.text_input(key="um_label").input("mine")
    next(b for b in at.button if b.label == "Add model").click().run()
    at.checkbox(key="use::sentiment::mine").uncheck().run()
    at.switch_page("pages/specs.py").run()
    at.switch_page("pages/run.py").run()
    assert not at.exception and at.checkbox(key="use::sentiment::mine").value is False


def test_p32_pages_4b_menus_keep_their_choice_across_a_visit_to_another_page(monkeypatch):
    """Was (the p32pages helper): the Harden page's Run menu and LCs to train on, the NLPLego judge and the Run page's
    NLPLego suites went back to their defaults after a visit to another page (a press then retrained another run).
    Every menu drawn through ``state.ensure_choice``/``ensure_choices`` now keeps the user's choice."""
    from alict_app import state

    session: dict = {}
    monkeypatch.setattr(state.st, "session_state", session)
    state.ensure_choice("harden_run", ["new", "old"])
    session["harden_run"] = "old"  # chosen by the user
    state.ensure_choice("harden_run", ["new", "old"])
    state.ensure_choices("harden_lcs", ["lc01", "lc04"], default=[])
    session["harden_lcs"] = ["lc04"]
    state.ensure_choices("harden_lcs", ["lc01", "lc04"], default=[])
    del session["harden_run"], session["harden_lcs"]  # Streamlit forgets widgets a page run did not draw
    assert state.ensure_choice("harden_run", ["new", "old"]) == "old"
    assert state.ensure_choices("harden_lcs", ["lc01", "lc04"], default=[]) == ["lc04"]
    assert state.ensure_choice("harden_run", ["new"]) == "new"  # a choice no longer offered is not kept


def test_p32_pages_2_a_write_back_confirmed_under_a_look_alike_of_a_reviewer_is_refused(tmp_path, fresh_engines):
    """Was (the p32pages helper): with reviewer 'ann' in the task, "Your name" = 'ɑnn' (a Latin alpha) confirmed the
    write-back and recorded "confirmed by ɑnn", which reads as ann; every door that creates a reviewer refuses it."""
    from alict_core.review.store import ReviewError, ReviewStore

    store = ReviewStore(f"sqlite:///{tmp_path / 'r.sqlite'}")
    store.reviewer("ann")
    with pytest.raises(ReviewError, match="looks like"):
        store.confirm_writeback("sentiment", 1, confirmed_by="\u0251nn")
    assert store.confirm_writeback("sentiment", 1, confirmed_by="Ann").confirmed_by == "Ann"  # the same person
    assert store.confirm_writeback("sentiment", 1, confirmed_by="bob").confirmed_by == "bob"  # a new one


@pytest.mark.parametrize("first, alike", [("minilm-sst", "rninilm-sst"), ("mary", "rnary"), ("file", "\ufb01le")])
def test_p32_cli_2_tr39_prototypes_of_several_characters_are_read(first, alike):
    """Was (the p32cli helper): `--models vader:name=rninilm-sst` ran beside the registered minilm-sst, and review
    tasks / reviewers 'rnary' beside 'mary': the skeleton read only one-character prototypes, and TR39 maps 'm' to
    'rn' (and the ligature 'ﬁ' to 'fi')."""
    from alict_core.common.textsafe import looks_alike
    from alict_core.models.refs import registered_look_alike

    assert looks_alike(first, alike)
    assert registered_look_alike("rninilm-sst") is not None and registered_look_alike("rnovie-model") is None


@pytest.mark.parametrize("expected, said", [
    ({"kind": "direction", "labels": ["positive"], "directon": "down"}, "directon"),
    ({"kind": "invariance", "tolerence": 0.5}, "tolerence"),
    ({"kind": "direction", "labels": ["negative", "positive"], "direction": "down"}, "one label"),
    ({"kind": "invariance", "labels": ["positive"]}, "no labels"),
    ({"kind": "label", "labels": ["positive"], "tolerance": 0.5}, "tolerance"),
    ({"kind": "label", "labels": ["positive"], "direction": "up"}, "direction")])
def test_p32_cli_3_an_expectation_with_a_field_its_kind_does_not_read_is_refused(cli, tmp_path, expected, said):
    """Was (the p32cli helper): a suite case's `expected` read its known fields only: `"directon": "down"` ran as
    "up" (fail rate 1.0 instead of 0.0, exit 0), `"tolerence": 0.5` ran with 0.1, and a direction with two labels used
    the first. Every field of an expectation is now one its kind reads."""
    import json

    test_type = {"direction": "DIR", "invariance": "INV"}.get(expected["kind"], "MFT")
    row = {"case_id": "c1", "lc_id": "own1", "kind": "seed", "seed_id": "c1", "text": "the movie is good",
           "test_type": test_type, "capability": "Own", "task": "sentiment", "expected": expected,
           "variants": [] if test_type == "MFT" else ["the movie is terrible"]}
    suite = tmp_path / "s.jsonl"
    suite.write_text(json.dumps(row) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite),
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, said)
    assert not (tmp_path / "run").exists()


def test_p32_kill_1_a_read_only_cache_is_said_in_words(cli, tmp_path, monkeypatch):
    """Was (the p32kill helper, a read-only bind mount of the cache): `report <run> --out <writable>`, `seeds`, `run`
    ended in "internal error (OSError: [Errno 30] Read-only file system: '<cache>/locks/out-….lock')", exit 3; a
    folder without write permission was said in words (exit 2)."""
    import errno

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "cache" / "locks" / "out-x.lock"))

    monkeypatch.setattr("alict_core.common.outlock.exclusive_output", read_only)
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--max", "2", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "Read-only file system")
    assert "locks" in outcome.err and "internal error" not in outcome.err


def test_p32_cli_4_harden_versions_says_when_there_are_none(cli, own_cache):
    """Was (the p32cli helper, cosmetic): `harden versions` with no versions printed nothing at all (exit 0)."""
    outcome = cli("harden", "versions")
    assert outcome.code == 0 and "no retrained model versions" in outcome.err


def test_p32_pages_5_one_run_never_holds_user_models_whose_names_read_alike(own_cache, monkeypatch):
    """Was (the p32pages helper): user models "mine", "MINE" and "ｍine" (a full-width m) were added on the Run page and
    ran as three models of one run; the pass-31 rule (two models of one run may not read alike) was the command
    line's only. The page refuses the second name, and the core's run refuses such a request from any front door."""
    from alict_app import runs
    from alict_core.common.errors import AlictError

    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    at = _app()
    at.switch_page("pages/run.py").run()
    for label in ("mine", "MINE"):
        at.selectbox(key="um_kind").set_value("http").run()
        at.text_input(key="um_url").input("http://127.0.0.1:9/predict")
        at.text_input(key="um_label").input(label)
        next(b for b in at.button if b.label == "Add model").click().run()
    assert not at.exception
    assert [m["label"] for m in at.session_state["user_models"]] == ["mine"]
    assert any("reads like your model 'mine'" in e.value for e in at.error)
    request = runs.RunRequest(task="sentiment", lc_ids=["sentiment-lc04"], models=[
        {"name": "vader", "kwargs": {"name": "mine"}, "label": "mine"},
        {"name": "textblob", "kwargs": {"name": "\uff4dine"}, "label": "\uff4dine"}])
    with pytest.raises(AlictError, match="read alike"):
        runs.execute(request, {}, lambda message, fraction: None)


def test_p32_kill_2_a_killed_sqlite_builds_journal_goes_with_its_temporary_file(tmp_path):
    """Was (the p32kill helper): a corpus-statistics build killed during its inserts left `.<key>.sqlite.<tok>.tmp`
    and SQLite's `…tmp-journal`; the pass-31 sweep removed the first, the journal stayed for ever."""
    import os
    import time

    from alict_core.common.jsonl import clean_stale_temp_files, new_temp_file

    tmp = new_temp_file(tmp_path / "stats.sqlite")
    tmp.write_bytes(b"SQLite format 3\x00")
    journal = tmp.with_name(tmp.name + "-journal")
    journal.write_bytes(b"j")
    mine = tmp_path / ".notes.sqlite-journal"  # a user's file of a like name: kept
    mine.write_bytes(b"m")
    old = time.time() - 3 * 3600
    for path in (tmp, journal, mine):
        os.utime(path, (old, old))
    assert clean_stale_temp_files(tmp_path) == 1
    assert not tmp.exists() and not journal.exists() and mine.exists()


def test_p32_cli_5_a_stored_versions_arguments_are_never_dropped():
    """Was (the p32cli helper): `--models 'minilm-sst@6a481356:bogus=1'` ran (exit 0) where `minilm-sst:bogus=1` is
    refused, and `name=mine` was dropped, so two copies of one version "share a name" with no way to name them apart:
    the version's factory took `**_`."""
    from alict_core.common.errors import ModelError
    from alict_core.harden import versions

    with pytest.raises(ModelError, match="bogus"):
        versions._factory("tiny-embedded@0123abcd", {"kind": "embedded"})(bogus=1)


@pytest.mark.parametrize("address", ["ray://u:SECRETR@127.0.0.1:1", "u:SECRETR@127.0.0.1:1"])
def test_p32_cli_6_a_ray_address_never_prints_its_password(address):
    """Was (the p32cli helper): `run --executor ray --ray-address 'ray://u:SECRETR@127.0.0.1:1'` (or RAY_ADDRESS) said
    "could not reach the Ray cluster at 'ray://u:SECRETR@127.0.0.1:1': nothing answers there (Name or service not
    known)": the host looked up was 'u:SECRETR@127.0.0.1'."""
    from alict_core.common.errors import AlictError
    from alict_core.executors.ray_executor import check_reachable

    with pytest.raises(AlictError) as refused:
        check_reachable(address, timeout=2)
    assert "SECRETR" not in str(refused.value) and "127.0.0.1:1" in str(refused.value)
    assert "service not known" not in str(refused.value)  # the host itself was asked, not 'u:SECRETR@127.0.0.1'


def test_p32_cli_7_an_output_file_named_as_a_folder_is_refused(cli, saved_run, tmp_path):
    """Was (the p32cli helper, cosmetic): `report <run> --out newdir/` wrote a file named `newdir`."""
    outcome = cli("report", str(saved_run), "--out", f"{tmp_path / 'newdir'}/")
    assert_clean_error(outcome, 2, "ends with '/'")
    assert not (tmp_path / "newdir").exists()
