"""Hostile pass 10, output folders and uploads (notes: attack_pass10_cli.md, F-j, F-l, F-k): one row per finding,
each failing on the code before its fix."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import tree_snapshot

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory) -> dict[str, Path]:
    """Two saved runs, a report export, a hardening export, an NLPLego folder, a seeds and an expansions folder,
    each written by the program's own writer (the expansions file by hand: `expand` needs the masked LM)."""
    from alict_core.cli import main
    from alict_core.lego.pipeline import LegoResult, save
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    root = tmp_path_factory.mktemp("p10out")
    run_a = run_suite(small_cases(4), [KeywordModel()], cache_root=root / "p").save(root / "run-a")
    run_b = run_suite(small_cases(6), [KeywordModel()], cache_root=root / "p").save(root / "run-b")
    assert main(["report", str(run_a), "--out", str(root / "a.html"), "--export", str(root / "export")]) == 0
    assert main(["harden", "export", "--run", str(run_a), "--lcs", "sentiment-lc01", "--out", str(root / "hx")]) == 0
    save(LegoResult(trees=[], cases=[]), root / "lego", {"task": "sentiment"})
    assert main(["seeds", "--task", "sentiment", "--lc", "4", "--max", "3", "--out", str(root / "seeds")]) == 0
    (root / "expansions").mkdir()
    row = {"id": "sentiment-lc04-1-x1", "seed_id": "sentiment-lc04-1", "lc_id": "sentiment-lc04", "task": "sentiment",
           "seed_text": "this is not bad .", "text": "this is not so bad ."}
    (root / "expansions" / "sentiment-lc04.jsonl").write_text(json.dumps(row) + "\n")
    (root / "expansions" / "sentiment-lc04.meta.json").write_text("{}")
    seeds = root / "input-seeds.jsonl"
    seeds.write_text((root / "seeds" / "sentiment-lc04.jsonl").read_text())
    return {"a": run_a, "b": run_b, "export": root / "export", "hx": root / "hx", "lego": root / "lego",
            "seeds": root / "seeds", "expansions": root / "expansions", "input": seeds, "root": root}


def _unchanged(artefacts: dict[str, Path]) -> dict[str, dict[str, bytes]]:
    return {name: tree_snapshot(path) for name, path in artefacts.items() if path.is_dir() and name != "root"}


# F-j: an output folder is replaced only by an artefact of its own kind; the run store is never an export target ---

def test_fj_report_export_never_replaces_another_saved_run(cli, artefacts, tmp_path):
    """Was: `report A --export B` (B another saved run) deleted run B and wrote the export there, exit 0
    (`_check_replaceable` took any manifest of ours, whatever its kind). Now exit 2 naming B and what it holds."""
    before = _unchanged(artefacts)
    outcome = cli("report", str(artefacts["a"]), "--out", str(tmp_path / "r.html"), "--export", str(artefacts["b"]))
    assert_clean_error(outcome, 2, "--export", str(artefacts["b"]), "holds a saved run")
    assert _unchanged(artefacts) == before and not (tmp_path / "r.html").exists()
    assert cli("report", str(artefacts["b"]), "--out", str(tmp_path / "b.html")).code == 0  # run B is whole


def test_fj_report_export_never_goes_into_the_run_store(cli, artefacts, tmp_path, monkeypatch):
    """Was: `report A --export <cache>/runs/<id>` deleted the stored run (`report <id>`: "not a saved run"), exit 0.
    Now any folder of the run store is refused, the stored run's and a new one's."""
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    stored = run_suite(small_cases(5), [KeywordModel()], cache_root=tmp_path / "p").save()
    assert stored.parent == tmp_path / "cache" / "runs"
    before = tree_snapshot(stored.parent)
    for target in (stored, stored.parent / "new-folder"):
        outcome = cli("report", str(artefacts["a"]), "--out", str(tmp_path / "r.html"), "--export", str(target))
        assert_clean_error(outcome, 2, "--export", str(target), "run store")
    assert tree_snapshot(stored.parent) == before and not (tmp_path / "r.html").exists()
    assert cli("report", stored.name, "--out", str(tmp_path / "s.html")).code == 0


def test_fj_run_out_never_replaces_a_report_export(cli, artefacts):
    """Was (the reverse): `run --out <a report export folder>` replaced the export by the run, exit 0."""
    before = _unchanged(artefacts)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(artefacts["input"]),
                  "--quiet", "--keep-flagged", "--out", str(artefacts["export"]))
    assert_clean_error(outcome, 2, str(artefacts["export"]), "holds a report export", limit_s=15)
    assert _unchanged(artefacts) == before


def test_fj_a_report_export_still_replaces_an_earlier_export(cli, artefacts, tmp_path):
    """The same kind is still replaced: an export over an earlier export of another run; but not when a file was
    added to the earlier export (pass 26: a user's notes went with it)."""
    import shutil

    again = tmp_path / "export"
    shutil.copytree(artefacts["export"], again)
    (again / "notes.txt").write_text("the user's own file")
    outcome = cli("report", str(artefacts["b"]), "--out", str(tmp_path / "r.html"), "--export", str(again))
    assert outcome.code == 2 and "notes.txt" in outcome.err and (again / "notes.txt").is_file()
    (again / "notes.txt").unlink()
    outcome = cli("report", str(artefacts["b"]), "--out", str(tmp_path / "r.html"), "--export", str(again))
    assert outcome.code == 0, outcome.err
    assert json.loads((again / "manifest.json").read_text())["kind"] == "export"
    assert len((again / "cases.jsonl").read_text().splitlines()) == 6


# F-l: a file output is refused inside every artefact folder the program writes -------------------------------------

INSIDE = [  # (artefact, file inside it, option and argv that writes a file there)
    ("hx", "export.json", ["report", "{a}", "--out", "{tmp}/r.html", "--summary-json", "{target}"]),
    ("hx", "train.csv", ["review", "export", "t", "--out", "{target}"]),
    ("hx", "hf_dataset/x.json", ["report", "{a}", "--out", "{tmp}/r.html", "--junit", "{target}"]),
    ("lego", "cases.jsonl", ["review", "export", "t", "--out", "{target}", "--format", "jsonl"]),
    ("lego", "meta.json", ["report", "{a}", "--out", "{target}"]),
    ("seeds", "sentiment-lc04.jsonl", ["review", "export", "t", "--out", "{target}", "--format", "jsonl"]),
    ("seeds", "sentiment-lc04.jsonl", ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds",
                                       "{input}", "--quiet", "--out", "{tmp}/run", "--summary-json", "{target}"]),
    ("expansions", "sentiment-lc04.meta.json", ["report", "{a}", "--out", "{tmp}/r.html", "--junit", "{target}"]),
]


@pytest.fixture
def review_task(cli, tmp_path, monkeypatch):
    """A review task 't' of 4 seed cases in a fresh SQLite database (what `review export` writes from)."""
    from tests.test_review import make_cases

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in make_cases(expansions=0)))
    assert cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(cases), "--size", "4",
               "--sets", "1", "--k", "1").code == 0


@pytest.mark.parametrize("artefact,name,argv", INSIDE, ids=[f"{a}-{n}-{v[0]}" for a, n, v in INSIDE])
def test_fl_no_file_output_inside_an_artefact_folder(cli, artefacts, review_task, tmp_path, artefact, name, argv):
    """Was: `review export --out <harden export>/train.csv`, `--out <lego>/cases.jsonl`, `--out <seeds>/<lc>.jsonl`,
    `--summary-json <harden export>/export.json` all exit 0, the artefact's file replaced by unrelated content: the
    guard knew only folders carrying manifest.json. Now every artefact folder is recognised by its own markers."""
    target = artefacts[artefact] / name
    fill = {"a": str(artefacts["a"]), "tmp": str(tmp_path), "target": str(target), "input": str(artefacts["input"])}
    before = _unchanged(artefacts)
    outcome = cli(*[part.format(**fill) for part in argv])
    assert_clean_error(outcome, 2, str(target), "lies inside the saved artefact", str(artefacts[artefact]),
                       limit_s=15)
    assert _unchanged(artefacts) == before and not (tmp_path / "run").exists() and not (tmp_path / "r.html").exists()


def test_fl_no_output_folder_inside_a_seeds_or_lego_folder(cli, artefacts):
    """The same markers guard output folders: `lego --out <seeds folder>/lego` would vanish at the next `seeds`."""
    before = _unchanged(artefacts)
    for parent in ("seeds", "hx", "lego"):
        outcome = cli("lego", "--task", "sentiment", "--lc", "4", "--out", str(artefacts[parent] / "inner"))
        assert_clean_error(outcome, 2, "lies inside the saved artefact", str(artefacts[parent]))
    assert _unchanged(artefacts) == before


def test_fl_a_folder_of_other_jsonl_files_is_no_artefact(cli, artefacts, tmp_path):
    """A user's folder of JSONL files (not named after their rows' LC) is not mistaken for a seeds folder."""
    (tmp_path / "mine.jsonl").write_text(json.dumps({"lc_id": "sentiment-lc04", "task": "sentiment"}) + "\n")
    outcome = cli("report", str(artefacts["a"]), "--out", str(tmp_path / "r.html"), "--junit", str(tmp_path / "j.xml"))
    assert outcome.code == 0, outcome.err
    assert (tmp_path / "j.xml").is_file()


# F-k: uploads: the least recently used make room, stale temporary files go, no server path in the refusal ---------

@pytest.fixture
def uploads(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_LIMIT_UPLOADS_BYTES", "2500")
    return tmp_path / "cache" / "uploads"


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_fk_old_uploads_make_room_for_new_ones(uploads):
    """Was: nothing removed uploads: once one browser user's distinct uploads filled the shared quota, every later
    upload of every user was refused until the operator deleted files by hand. Now the least recently used uploads
    not used for UPLOAD_IN_USE_S are evicted (oldest first; the same upload again counts as a use)."""
    from alict_core.common.trust import UPLOAD_IN_USE_S, save_upload

    first, second = save_upload("a.csv", b"a" * 1000), save_upload("b.csv", b"b" * 1000)
    _age(first, 3 * UPLOAD_IN_USE_S)
    _age(second, 2 * UPLOAD_IN_USE_S)
    assert save_upload("a-again.csv", b"a" * 1000) == first  # used again: now the most recent
    third = save_upload("c.csv", b"c" * 1000)
    assert first.is_file() and third.is_file() and not second.exists()
    assert sum(p.stat().st_size for p in uploads.iterdir()) <= 2500


def test_fk_uploads_in_use_are_kept_and_the_refusal_names_no_server_path(uploads):
    """Uploads of the last UPLOAD_IN_USE_S are never evicted (a session may be using them); the refusal, shown in the
    browser, no longer names the server's uploads folder."""
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import save_upload

    save_upload("a.csv", b"a" * 1000)
    save_upload("b.csv", b"b" * 1000)
    with pytest.raises(AlictError) as caught:
        save_upload("c.csv", b"c" * 1000)
    message = str(caught.value)
    assert "nothing was stored" in message and "ALICT_LIMIT_UPLOADS_BYTES" in message
    assert str(uploads.parent) not in message and "/uploads" not in message
    assert len(list(uploads.glob("*.csv"))) == 2


def test_fk_temporary_files_of_killed_uploads_do_not_count_forever(uploads):
    """Was: the hidden temporary file of a killed upload counted toward the quota forever. Now one older than
    STALE_TEMP_S is removed."""
    from alict_core.common.trust import STALE_TEMP_S, save_upload

    uploads.mkdir(parents=True)
    killed = uploads / ".0123456789abcdef.csv.0123456789ab.tmp"
    killed.write_bytes(b"k" * 2000)
    _age(killed, 2 * STALE_TEMP_S)
    stored = save_upload("new.csv", b"n" * 1000)
    assert stored.is_file() and not killed.exists()
