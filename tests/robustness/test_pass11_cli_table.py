"""Hostile pass 11 (CLI) table (notes: attack_pass11_cli.md N1-N8, attack_pass11_pages.md P11-7/8/10): one row per
finding, each failing on the code before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "2", "--quiet"]


# N1: the "inside a saved artefact" guard knows only folders this program wrote ------------------------------------

@pytest.fixture(scope="module")
def seeds_file(tmp_path_factory) -> Path:
    from alict_core.cli import main

    root = tmp_path_factory.mktemp("p11seeds")
    assert main(["seeds", "--task", "sentiment", "--lc", "4", "--max", "3", "--out", str(root / "sd")]) == 0
    return root / "sd" / "sentiment-lc04.jsonl"


@pytest.mark.parametrize("marker", ["seeds", "export.json", "manifest.json"])
def test_n1_a_users_project_folder_does_not_block_outputs_beneath_it(cli, tmp_path, seeds_file, marker):
    """Was: a project folder holding one copied seeds file, another tool's export.json or any manifest.json made
    every output beneath it refused ("lies inside the saved artefact ... (seeds, written by `seeds`)"). Now only
    folders the program wrote count, and a seeds folder guards only what lies right in it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    if marker == "seeds":
        shutil.copy(seeds_file, proj / seeds_file.name)
    else:
        (proj / marker).write_text(json.dumps({"mine": 1}))
    out = proj / "runs" / "r1"
    outcome = cli(*RUN, "--out", str(out))
    assert outcome.code == 0, outcome.err
    assert (out / "meta.json").is_file()


def test_n1_a_seeds_folder_still_guards_what_lies_right_in_it(cli, seeds_file):
    """Pass 10's guard holds for a folder `seeds` wrote: an output folder right in it is refused."""
    outcome = cli("lego", "--task", "sentiment", "--lc", "4", "--out", str(seeds_file.parent / "inner"))
    assert_clean_error(outcome, 2, "lies inside the saved artefact", str(seeds_file.parent))


# N4/N5/P11-8: hardened model versions are checked against the hashes recorded at training, reads guarded ---------

from tests.test_harden import saved_run, tiny_parent  # noqa: E402,F401  (fixtures: a toy run and its parent model)


@pytest.fixture()
def version(saved_run, tiny_parent, tmp_path):  # noqa: F811
    """A retrained toy version (its name) and its export folder."""
    from alict_core.harden.export import export_hardening_data
    from alict_core.training.retrain import RetrainSettings, retrain_embedded
    from tests.harden_toy import HELDOUT, ORIGINAL

    out = tmp_path / "export"
    export_hardening_data(saved_run, out, lcs=["toy-lc01"], seed=3)
    name = retrain_embedded(tiny_parent, out, settings=RetrainSettings(seed=5), original=ORIGINAL, heldout=HELDOUT)
    return name, out


def _load(name: str):
    from alict_core.models.registry import get_model

    return get_model(name)


@pytest.mark.parametrize("damage", ["head-truncated", "meta-deep", "labels-swapped"])
def test_n4_n5_a_damaged_or_edited_version_is_refused_naming_it(version, damage):
    """Was: head.npz truncated → exit 3 (BadZipFile); meta.json 50,000 deep → exit 3 (RecursionError); labels
    swapped in meta.json → results silently inverted. Now each is one AlictError naming the version and file."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.versions import version_dir

    name, _ = version
    folder = version_dir(name)
    if damage == "head-truncated":
        data = (folder / "head.npz").read_bytes()
        (folder / "head.npz").write_bytes(data[:100])
        needle = "head.npz"
    elif damage == "meta-deep":
        (folder / "meta.json").write_text("[" * 50_000 + "]" * 50_000)
        needle = "meta.json"
    else:
        meta = json.loads((folder / "meta.json").read_text())
        meta["labels"] = list(reversed(meta["labels"]))
        (folder / "meta.json").write_text(json.dumps(meta))
        needle = "meta.json"
    with pytest.raises(AlictError) as caught:
        _load(name).predict_proba(["a fine day"])
    assert name in str(caught.value) and needle in str(caught.value)


@pytest.mark.parametrize("record", ["[]", "{not json", '{"name": "x@00000000", "parent": "p", "kind": "embedded", '
                                    '"task": "sentiment", "created": 5}'])
def test_p11_8_a_bad_version_record_is_left_out_of_the_listing(version, record, caplog):
    """Was: one version.json that is a list, broken JSON or has an int 'created' took the listing (the sidebar of
    every page, the Harden page) down. Now the bad version is left out with a logged note."""
    from alict_core.harden.versions import list_versions, versions_root

    name, _ = version
    bad = versions_root() / "zzbad@00000000"
    bad.mkdir()
    (bad / "version.json").write_text(record)
    assert [v["name"] for v in list_versions()] == [name]
    assert "zzbad@00000000" in caplog.text


# N6: harden evaluate/train read an export's split files only when they match the hashes in export.json ------------

@pytest.mark.parametrize("split", ["test", "train"])
def test_n6_a_tampered_export_split_is_refused(version, tiny_parent, split):  # noqa: F811
    """Was: expected labels swapped in test.jsonl → `harden evaluate` rc0 with a 0% fail rate instead of 50%: the
    data hash covered only case ids and splits. Now each split file is checked against export.json's hash."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.evaluate import evaluate_versions
    from tests.harden_toy import HELDOUT, ORIGINAL

    name, out = version
    path = out / f"{split}.jsonl"
    path.write_text(path.read_text().replace('"negative"', '"@@"').replace('"positive"', '"negative"')
                    .replace('"@@"', '"positive"'))
    with pytest.raises(AlictError) as caught:
        evaluate_versions(tiny_parent, name, out, heldout=HELDOUT, original=ORIGINAL)
    assert f"{split}.jsonl" in str(caught.value) and "export.json" in str(caught.value)


# N8: `review writeback` without --confirm/--revoke only reads ----------------------------------------------------

def test_n8_showing_the_writeback_status_writes_no_database(cli, tmp_path):
    """Was: `review writeback --db <missing or empty file> --task sentiment` exit 0 "0 rejected case(s)" and an
    86 KB database created with the full review schema. Now a missing one is refused, an empty one left as is."""
    missing, empty = tmp_path / "nosuch.sqlite", tmp_path / "empty.sqlite"
    outcome = cli("review", "writeback", "--db", f"sqlite:///{missing}", "--task", "sentiment")
    assert_clean_error(outcome, 2, "no review database", str(missing))
    assert not missing.exists()
    empty.write_bytes(b"")
    assert cli("review", "writeback", "--db", f"sqlite:///{empty}", "--task", "sentiment").code == 0
    assert empty.stat().st_size == 0


# P11-7: two reviewers claiming at the same instant never share a set planned for one reviewer ----------------------

from tests.test_review import url  # noqa: E402,F401  (fixture: a fresh SQLite database, or opt-in PostgreSQL)


def test_p11_7_same_instant_claims_of_a_one_reviewer_set_give_it_once(cli, tmp_path, url):  # noqa: F811
    """Was: both reviewers counted set 0 as open (0 of k = 1) before either inserted: both got it. Now the count and
    the insert are one locked step. The two claims are held together right after their counts (a barrier on the
    count statement; with the lock the second claim waits before its count, the barrier gives up and the first
    goes on), so the old interleaving is forced, not hoped for."""
    import threading

    from sqlalchemy import event

    from alict_core.review.store import ReviewStore, engine_for
    from tests.test_review import make_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in make_cases(expansions=0)))
    assert cli("review", "sample", "--db", url, "--name", "race", "--task", "sentiment", "--cases", str(cases),
               "--size", "4", "--sets", "1", "--k", "1").code == 0
    store = ReviewStore(url)
    task_id = store.task("race").id
    for name in ("ann", "bob"):
        store.reviewer(name)
    barrier, racing = threading.Barrier(2, timeout=3), threading.local()

    def hold(_conn, _cursor, statement, *_args) -> None:
        if getattr(racing, "on", False) and "count(" in statement.lower() and "assignments" in statement:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass

    got: dict[str, int | None] = {}

    def claim(name: str) -> None:
        racing.on = True
        got[name] = ReviewStore(url).claim_set(task_id, name)

    engine = engine_for(url)
    event.listen(engine, "after_cursor_execute", hold)
    try:
        threads = [threading.Thread(target=claim, args=(name,)) for name in ("ann", "bob")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        event.remove(engine, "after_cursor_execute", hold)
    assert sorted(got.values(), key=str) == [0, None], got


# N3 / P11-10: a suite file with a UTF-8 byte-order mark (Excel's "CSV UTF-8") is read ------------------------------

def test_n3_a_hatecheck_csv_with_a_bom_is_read(tmp_path):
    """Was: "HateCheck CSV lacks columns ['functionality'] (has ['\\ufefffunctionality', ...])"."""
    from alict_core.suites.hatecheck import read_hatecheck

    path = tmp_path / "hc_bom.csv"
    path.write_bytes(b"\xef\xbb\xbffunctionality,case_id,test_case,label_gold\nf,1,x,hateful\ng,2,y,non-hateful\n")
    assert len(read_hatecheck(path).cases) == 2


def test_p11_10_a_cases_jsonl_with_a_bom_is_read(tmp_path):
    """suites/tables.py opened the cases file as plain UTF-8: its first row failed as "not JSON"."""
    from alict_core.suites.tables import read_cases_jsonl
    from tests.test_review import make_cases

    path = tmp_path / "cases.jsonl"
    text = "".join(json.dumps(c.to_dict()) + "\n" for c in make_cases(expansions=0))
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert len(read_cases_jsonl(path).cases) == len(text.splitlines())


# N7: `run --out <folder of another artefact kind>` is refused before any work, naming --out ------------------------

def test_n7_run_out_another_artefact_kind_is_refused_before_any_work(cli, tmp_path):
    """Was: refused only at save time, after the cases were built and run ("output folder ... holds an NLPLego
    folder"). Now before any work, naming --out (shown: no case was run, no prediction cached)."""
    from alict_core.lego.pipeline import LegoResult, save

    save(LegoResult(trees=[], cases=[]), tmp_path / "lg", {"task": "sentiment"})
    before = sorted(p.name for p in (tmp_path / "lg").iterdir())
    outcome = cli(*RUN, "--out", str(tmp_path / "lg"))
    assert_clean_error(outcome, 2, "--out", str(tmp_path / "lg"), "NLPLego")
    assert "case" not in outcome.err.split("error:")[0]  # no progress line before the refusal
    assert sorted(p.name for p in (tmp_path / "lg").iterdir()) == before


# N2: --seeds rows of other LCs are named, never dropped without a word -------------------------------------------

def test_n2_seeds_rows_of_other_lcs_are_named(cli, tmp_path, seeds_file, caplog):
    """Was: `run --lc lc5 --seeds <lc4 seeds>` → "no test cases: give LCs of the task (default), --seeds, or --suite
    files" though --seeds was given; a mixed file ran its lc5 rows and dropped the lc4 rows without a word."""
    outcome = cli(*RUN[:-4], "lc5", "--quiet", "--seeds", str(seeds_file), "--out", str(tmp_path / "r1"))
    assert_clean_error(outcome, 2, "--seeds", "none of its 3 row(s)", "sentiment-lc04")
    from alict_core.cli import main

    assert main(["seeds", "--task", "sentiment", "--lc", "5", "--max", "2", "--out", str(tmp_path / "sd5")]) == 0
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(seeds_file.read_text() + (tmp_path / "sd5" / "sentiment-lc05.jsonl").read_text())
    outcome = cli(*RUN[:-4], "lc5", "--quiet", "--seeds", str(mixed), "--out", str(tmp_path / "r2"))
    assert outcome.code == 0, outcome.err
    assert "3 of 5 row(s) left out" in caplog.text + outcome.err and "sentiment-lc04" in caplog.text + outcome.err


# Nit (P8): the lock file of an --out is removed when its command lets go ------------------------------------------

def test_p8_no_lock_file_is_left_per_out_path(cli, tmp_path, monkeypatch):
    """Was: one 0-byte <cache>/locks/out-<hash>.lock per --out path ever used, never removed."""
    from alict_core.common.errors import AlictError
    from alict_core.common.outlock import exclusive_output

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    locks = tmp_path / "cache" / "locks"
    with exclusive_output(tmp_path / "a"):
        assert len(list(locks.glob("out-*.lock"))) == 1
        with pytest.raises(AlictError, match="being written by another command"):
            with exclusive_output(tmp_path / "a"):
                pass
    assert list(locks.glob("out-*.lock")) == []
    with exclusive_output(tmp_path / "a"):  # taken again after the removal
        pass


# Nits: messages that list only what failed --------------------------------------------------------------------------

def test_nits_messages_say_what_failed(cli):
    """Was: "--confidence: 1 is out of range [0.0, 1.0]" (1 itself is refused later: strictly between); "--split
    1:0:0" told to be ">= 0, sum to 1 and give the test split a share" though only the last failed."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.split import SplitRatios

    outcome = cli("review", "sample", "--name", "x", "--task", "sentiment", "--confidence", "1")
    assert outcome.code == 2 and "strictly between 0.0 and 1.0" in outcome.err
    with pytest.raises(AlictError) as caught:
        SplitRatios.parse("1:0:0")
    assert "test split a share" in str(caught.value) and "sum to 1" not in str(caught.value)
