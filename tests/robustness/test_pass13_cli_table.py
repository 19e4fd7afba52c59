"""Hostile pass 13 (CLI) table (notes: attack_pass13_cli.md): one row per finding, each failing on the code before
its fix."""

from __future__ import annotations

import csv
import sqlite3

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.test_pass9_table import _db_url, _form_rows

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]


def judged_sqlite(cli, tmp_path):
    """A SQLite review database holding task 't' judged by 'ann' (imported from a filled form): (url, form)."""
    url = _db_url(tmp_path, "sqlite")
    rows = _form_rows(cli, tmp_path, url)
    form = tmp_path / "filled.csv"
    with open(form, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "reviewer": "ann", "relevance": "4", "label_score": "4"} for row in rows)
    assert cli("review", "import", str(form), "--db", url).code == 0
    return url, form


# A: a value of another type in a text column of a tampered SQLite review database --------------------------------

@pytest.mark.parametrize("command", ["stats", "import", "export"])
def test_a_a_blob_in_a_text_column_is_one_message(cli, tmp_path, command):
    """Was: after `update reviewers set name = X'414243'`, `review stats` exit 3 (TypeError: '<' not supported
    between bytes and str), `review import` exit 3 (normalize() argument 2 must be str), `review export
    --judgements` exit 0 naming the reviewer "b'ABC'". Now each is one exit-2 message naming the damage."""
    url, form = judged_sqlite(cli, tmp_path)
    with sqlite3.connect(tmp_path / "review.sqlite") as conn:
        conn.execute("UPDATE reviewers SET name = X'414243'")
    args = {"stats": ("review", "stats", "t", "--db", url),
            "import": ("review", "import", str(form), "--db", url),
            "export": ("review", "export", "t", "--judgements", "--out", str(tmp_path / "j.csv"), "--db", url)}
    outcome = cli(*args[command])
    assert_clean_error(outcome, 2, "damaged row", "bytes")
    assert not (tmp_path / "j.csv").exists()


# B: outputs written into a hardened model version (or anywhere in the model store) -------------------------------

@pytest.mark.parametrize("argv", [
    ("report", "{run}", "--summary-json", "{store}/versions/minilm-sst@3dca1baf/meta.json"),
    ("report", "{run}", "--out", "{store}/versions/minilm-sst@3dca1baf/r.html"),
    ("harden", "export", "--run", "{run}", "--lcs", "lc04", "--out", "{store}/versions/minilm-sst@deadbeef"),
])
def test_b_no_output_in_the_model_store(cli, tmp_path, monkeypatch, argv):
    """Was: `report --summary-json <cache>/models/versions/<v>/meta.json` (and review export / explain --json into a
    version's files) exit 0, the version then BROKEN; `harden export --out <cache>/models/versions/x` listed as a
    broken version. Now every output path in the model store is refused before any work."""
    from alict_core.common.config import models_dir

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    store = models_dir()
    (store / "versions" / "minilm-sst@3dca1baf").mkdir(parents=True)
    (store / "versions" / "minilm-sst@3dca1baf" / "meta.json").write_text('{"labels": ["a", "b"]}')
    run = tmp_path / "no-run"
    outcome = cli(*[a.format(run=run, store=store) for a in argv])
    assert_clean_error(outcome, 2, "lies in the model store")
    assert (store / "versions" / "minilm-sst@3dca1baf" / "meta.json").read_text() == '{"labels": ["a", "b"]}'
    assert sorted(p.name for p in (store / "versions").iterdir()) == ["minilm-sst@3dca1baf"]


# C: an edited sidecar (per-shard counts) of a killed expansion was joined into the artefact -----------------------

def test_c_an_edited_shard_sidecar_makes_its_part_run_again(tmp_path):
    """Was: after a killed `expand`, `part-00001.meta.json` edited (accepted 999, or counts "x") was taken as done:
    the artefact's counts said 999 accepted over rows holding none (served from the cache after), or exit 3 on a
    string. The seal now covers the part and its sidecar: an edit makes the shard run again."""
    from alict_core.executors.shards import part_finished, seal_part

    part = tmp_path / "part-00001.jsonl"
    part.write_text('{"id": 1}\n')
    sidecar = tmp_path / "part-00001.meta.json"
    sidecar.write_text('{"counts": {"lc": {"accepted": 0}}}')
    seal_part(part)
    assert part_finished(part)
    sidecar.write_text('{"counts": {"lc": {"accepted": 999}}}')
    assert not part_finished(part)
    assert not part.exists() and not sidecar.exists() and not (tmp_path / "part-00001.jsonl.sha256").exists()


@pytest.mark.parametrize("command", ["import", "sample"])
def test_a_a_damaged_reviewer_date_is_one_message(cli, tmp_path, command):
    """Was: after `update reviewers set created_at = 'garbage'`, `review import` and `review sample --reviewers …`
    exit 3 (ValueError: Invalid isoformat string): the reviewers were loaded outside the damaged-row guard."""
    url, form = judged_sqlite(cli, tmp_path)
    with sqlite3.connect(tmp_path / "review.sqlite") as conn:
        conn.execute("UPDATE reviewers SET created_at = 'garbage'")
    if command == "import":
        outcome = cli("review", "import", str(form), "--db", url)
    else:
        outcome = cli("review", "sample", "--db", url, "--name", "t2", "--task", "sentiment", "--cases",
                      str(tmp_path / "cases.jsonl"), "--size", "4", "--sets", "1", "--k", "1", "--reviewers", "ann")
    assert_clean_error(outcome, 2, "damaged")


# C (cache hit): the finished artefact's .meta.json (its counts) was not covered by its manifest ---------------------

def test_c_an_edited_finished_expansion_sidecar_is_not_served(tmp_path):
    """Was: editing `<key>.meta.json` of a finished expansion artefact ("accepted": 4242) was served from the cache
    as the counts; the manifest checked only the .jsonl. Now the manifest holds the sidecar's sha256 too."""
    from alict_core.common.manifest import load_checked, write_file_manifest

    path = tmp_path / "k.jsonl"
    path.write_text('{"id": 1}\n')
    meta = tmp_path / "k.meta.json"
    meta.write_text('{"counts": {"lc": {"accepted": 0}}}')
    write_file_manifest(path, "expansions", "k", 1, companions=[meta])
    assert load_checked(path, "expansions", "k", lambda p: p.read_text()) is not None
    meta.write_text('{"counts": {"lc": {"accepted": 4242}}}')
    assert load_checked(path, "expansions", "k", lambda p: p.read_text(), quarantine_root=tmp_path / "q") is None


# D: an output replaced the review database --------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["store", "elsewhere"])
def test_d_an_output_never_replaces_a_review_database(cli, tmp_path, monkeypatch, where):
    """Was: `report r1 --summary-json <cache>/review/review.sqlite` exit 0: every judgement gone, its -wal/-shm left
    beside the JSON. Now an output in the review store, or over any SQLite database, is refused before any work."""
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "review" if where == "store" else tmp_path / "mine"
    folder.mkdir(parents=True)
    database = folder / "review.sqlite"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE t (x)")
    before = database.read_bytes()
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "2", "--quiet",
                  "--out", str(tmp_path / "r1"), "--summary-json", str(database))
    assert_clean_error(outcome, 2, "review store" if where == "store" else "SQLite database")
    assert database.read_bytes() == before and not (tmp_path / "r1").exists()


# minor (p13cli): a long score echoed in full; a pinned profile's build advice named another profile ---------------

def test_minor_a_huge_score_is_not_echoed_in_full():
    from alict_core.review.store import ReviewError, check_score

    for value in (10**400, "9" * 5_000):
        with pytest.raises(ReviewError) as caught:
            check_score("relevance", value)
        assert len(str(caught.value)) < 200


def test_minor_a_pinned_profile_not_built_names_its_own_build(tmp_path, monkeypatch):
    from alict_core.common.errors import ArtefactMissingError
    from alict_core.models.artefacts import require

    monkeypatch.setenv("ALICT_MODEL_PROFILE", "micro")
    with pytest.raises(ArtefactMissingError, match="--profile micro"):
        require("parser", tmp_path / "models")
