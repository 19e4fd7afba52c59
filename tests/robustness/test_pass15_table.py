"""Hostile pass 15 table (notes: attack_pass15_{cli,pages,kill}.md): one row per finding fixed, each failing on the
code before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(300)]

RUN_ARGS = ("run", "--task", "sentiment", "--models", "vader", "--lc", "2", "--sample-per-lc", "3")


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
    return cache


def _sampled_task(cli, tmp_path: Path, db: str, *extra: str) -> Path:
    """A run of RUN_ARGS, review task 'a' of it in ``db`` and its export (``f.csv``); the run folder."""
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert cli("review", "sample", "--cases", str(out), "--db", db, "--name", "a", "--task", "sentiment",
               "--size", "3", "--sets", "1", "--k", "1", *extra).code == 0
    assert cli("review", "export", "a", "--out", str(tmp_path / "f.csv"), "--db", db).code == 0
    return out


def _signed(tmp_path: Path, **first: str) -> Path:
    """The export ``f.csv`` with every row judged by ann (4, 4) and ``first`` set on its first row: ``g.csv``."""
    import csv

    rows = list(csv.DictReader((tmp_path / "f.csv").open(encoding="utf-8")))
    for row in rows:
        row.update(reviewer="ann", relevance="4", label_score="4")
    rows[0].update(first)
    with (tmp_path / "g.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return tmp_path / "g.csv"


def _interrupted(folder: Path) -> None:
    """``folder`` as a run killed after its cases were staged: progress, cases, no results, no meta."""
    for name in ("meta.json", "manifest.json", "summary.csv", "story.json"):
        (folder / name).unlink(missing_ok=True)
    for sub in ("counts", "results"):
        for part in (folder / sub).iterdir():
            part.unlink()
    progress = json.loads((folder / "progress.json").read_text())
    (folder / "progress.json").write_text(json.dumps({**progress, "status": "running", "pid": 2 ** 22 + 17,
                                                      "shards_done": 0, "parts": {}}))


# CLI F1 / kill F1: an interrupted `run --out DIR` could not be resumed by the same command ("already holds other
# files"): the early check knew only a finished run's names -------------------------------------------------------

def test_cli_f1_an_interrupted_out_folder_is_resumed_by_the_same_command(cli, tmp_path, own_cache):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    finished = (out / "summary.csv").read_text()
    _interrupted(out)
    outcome = cli(*RUN_ARGS, "--out", str(out))
    assert outcome.code == 0, outcome.err[-500:]
    assert (out / "summary.csv").read_text() == finished
    assert cli("report", str(out), "--out", str(tmp_path / "r.html")).code == 0


# kill F2: temporary files of killed writes inside the shard folders were carried into the finished run -----------

def test_kill_f2_a_resume_removes_killed_writes_temporary_files(cli, tmp_path, own_cache):
    from alict_core.common.jsonl import atomic_path

    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    _interrupted(out)
    for target in (out / "results" / "part-00000.parquet", out / "progress.json"):
        with pytest.raises(RuntimeError), atomic_path(target) as tmp:  # a write killed before its rename
            tmp.write_text("half")
            shutil.copy(tmp, tmp.with_name(tmp.name + ".keep"))
            raise RuntimeError
        keep = next(target.parent.glob(".*.tmp.keep"))
        keep.rename(keep.with_name(keep.name[:-len(".keep")]))
    assert list(out.rglob(".*.tmp"))
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert not list(out.rglob(".*.tmp"))


# CLI F2: a part file added by hand to a saved sharded run passed the manifest check and was read (counts doubled) --

@pytest.mark.parametrize("sub,suffix", [("results", ".parquet"), ("cases", ".jsonl"), ("counts", ".json")])
def test_cli_f2_an_unlisted_part_in_a_saved_run_is_refused(cli, tmp_path, own_cache, sub, suffix):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    shutil.copy(out / sub / f"part-00000{suffix}", out / sub / f"part-00001{suffix}")
    outcome = cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, f"{sub}/part-00001{suffix}", "not one of its recorded files")
    assert not (tmp_path / "r.html").exists()


# CLI F3 / F8: a bad ALICT_OFFLINE / ALICT_ONLINE_TIMEOUT was read at the end of a run: exit 2 with a half run left --

@pytest.mark.parametrize("name,value", [("ALICT_OFFLINE", "maybe"), ("ALICT_ONLINE_TIMEOUT", "nan"),
                                        ("ALICT_MODEL_CACHE_SIZE", "-1")])
def test_cli_f3_a_bad_setting_is_refused_before_any_work(cli, tmp_path, own_cache, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    out = tmp_path / "run"
    outcome = cli(*RUN_ARGS, "--out", str(out))
    assert_clean_error(outcome, 2, name)
    assert not out.exists()


# CLI F5: `--db sqlite:///<path>` of a writing review command was created inside a built model or a saved run -----

@pytest.mark.parametrize("where", ["model-store", "run"])
def test_cli_f5_a_new_review_database_is_never_created_inside_an_artefact(cli, tmp_path, own_cache, where):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    folder = own_cache / "models" / "quick" / "classifiers" if where == "model-store" else out
    folder.mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in folder.iterdir())
    database = folder / "review.sqlite"
    outcome = cli("review", "sample", "--cases", str(out), "--db", f"sqlite:///{database}", "--name", "a",
                  "--task", "sentiment", "--size", "3")
    assert_clean_error(outcome, 2, "--db")
    assert sorted(p.name for p in folder.iterdir()) == before


# CLI F6: a refused writing review command still created (and migrated) a new SQLite database --------------------

def test_cli_f6_a_refused_command_leaves_no_new_database(cli, tmp_path, own_cache, fresh_engines):
    database = tmp_path / "new.sqlite"
    rows = tmp_path / "j.csv"
    rows.write_text("task,case_id,text_hash,reviewer,relevance,label_score\nnope,c1,h1,ann,1,1\n", encoding="utf-8")
    outcome = cli("review", "import", str(rows), "--db", f"sqlite:///{database}")
    # since pass 37 a missing database is refused before anything else (no task can be in it)
    assert_clean_error(outcome, 2, "no review database at", "nothing was created")
    assert not list(tmp_path.glob("new.sqlite*"))


def test_cli_f6_a_named_task_must_exist_even_for_a_file_without_judgements(cli, tmp_path, own_cache, fresh_engines):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    database = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert cli("review", "sample", "--cases", str(out), "--db", database, "--name", "a", "--task", "sentiment",
               "--size", "3").code == 0
    assert cli("review", "export", "a", "--out", str(tmp_path / "f.csv"), "--db", database).code == 0
    outcome = cli("review", "import", str(tmp_path / "f.csv"), "--task", "nope", "--db", database)
    assert_clean_error(outcome, 2, "no review task named 'nope'")


# CLI F7: explain's refusal of a pickle model said "pass --trust-pickle", an option explain did not have -----------

def test_cli_f7_explain_takes_the_trust_pickle_option_it_names(cli, tmp_path, own_cache):
    outcome = cli("explain", "--text", "a fine film", "--model", f"sklearn:path={tmp_path / 'm.joblib'},"
                  "task=sentiment")
    assert_clean_error(outcome, 2, "--trust-pickle")
    trusted = cli("explain", "--text", "a fine film", "--model", f"sklearn:path={tmp_path / 'm.joblib'},"
                  "task=sentiment", "--trust-pickle")
    assert trusted.code == 2 and "unrecognized arguments" not in trusted.err, trusted.err
    assert "m.joblib" in trusted.err


# Pages F1: a deep link to a run whose request.json / meta.json has the wrong shape: a traceback with server paths --

@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("page", ["pages/failures.py", "pages/report.py"])
def test_pages_f1_a_deep_link_to_a_tampered_run_is_a_clean_page(tmp_path, tmp_runs, saved_run, page):
    from streamlit.testing.v1 import AppTest

    shutil.copytree(saved_run, tmp_runs / "zzbad")
    meta = json.loads((tmp_runs / "zzbad" / "meta.json").read_text())
    (tmp_runs / "zzbad" / "meta.json").write_text(json.dumps({**meta, "run_id": "zzbad", "models": 7}))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = "zzbad"
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(str(getattr(el, "value", "")) for el in [*at.error, *at.warning, *at.info, *at.markdown,
                                                                *at.caption])
    assert "Unexpected error" not in shown and str(tmp_path) not in shown
    assert "zzbad" in shown  # named as left out


# Pages F6: a note with a control character raised inside the score button's callback, outside the page's error
# boundary: Streamlit's redacted error box, no word on the note, the judgement lost -------------------------------

def test_pages_f6_a_refused_note_is_one_message_and_the_scores_stay(tmp_path, monkeypatch):
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import dispose_engines
    from alict_core.runner import build_cases
    from tests.robustness.support import review_page

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    seeds = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "test_type": "MFT",
              "text": f"a fine film number {i}", "expected": {"kind": "label", "labels": ["positive"],
                                                               "tolerance": None}} for i in range(2)]
    store = ReviewStore(url)
    task, _ = create_review_task(store, "t", "sentiment", build_cases(seeds), SamplingPlan(n_sets=1, k=1, size=2))
    store.claim_set(task.id, "ann")
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    dispose_engines()
    at = review_page("t", "ann")
    note = next(t for t in at.text_input if (t.key or "").startswith("review_note_"))
    note.set_value("pasted\x0bfrom a document").run()
    at.button(key="review_relevance_4").click().run()
    at.button(key="review_label_4").click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any("Not saved" in e and "control character" in e for e in errors), errors
    assert not ReviewStore(url, read_only=True).judgements(task.id)
    note = next(t for t in at.text_input if (t.key or "").startswith("review_note_"))
    note.set_value("pasted from a document").run()
    at.button(key="review_label_4").click().run()  # the relevance score was kept: only the last question again
    assert not at.exception and not at.error, [e.value for e in at.error]
    saved = ReviewStore(url, read_only=True).judgements(task.id)
    assert [(j["relevance"], j["label_score"], j["note"]) for j in saved] == [(4, 4, "pasted from a document")]


# Pages F3: a user model's default display name (kind:<first field>) skipped the display-name checks: line breaks,
# an escape and 1,530 characters went into the run's meta.json and every table --------------------------------

@pytest.mark.parametrize("value", ["http://h/x\r\ninjected", "http://h/\x1b[31mred", "http://h/" + "a" * 1530])
def test_pages_f3_a_default_display_name_passes_the_display_name_checks(value):
    from alict_app.user_models import default_label, user_model_problem

    label = default_label("http", value)
    assert user_model_problem({}, label) is None and label.startswith("http:") and len(label) <= 100
    assert default_label("http", "http://h/ok") == "http:http://h/ok"  # a fit value stays readable


# Pages F4: the Specs page saved a spec of the other task into this task's folder ("Spec is valid"); every page of
# that task then failed for every session, naming the server path of the workspace file -------------------------

def test_pages_f4_a_spec_of_the_other_task_is_not_saved_with_this_tasks_specs(tmp_path):
    from alict_core.lcspec.workspace import save_refusal

    target = tmp_path / "hate_speech-lc04.yaml"
    refusal = save_refusal(target, "hate_speech-lc04", False, spec_task="hate_speech", task="sentiment")
    assert refusal is not None and refusal[0] == "error" and "task: hate_speech" in refusal[1]
    assert save_refusal(target, "hate_speech-lc04", False, spec_task="hate_speech", task="hate_speech") is None


# Pages F5 (and F1, F2): messages shown in the browser named the server's folders (the workspace file that exists,
# the model store of a missing model): the error boundary names them by role -------------------------------------

def test_pages_f5_the_error_boundary_names_server_folders_by_role(tmp_path, monkeypatch):
    from alict_app.formatting import without_server_paths
    from alict_core.common import config
    from alict_core.lcspec.workspace import save_spec_text

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ALICT_WORKSPACE_DIR", raising=False)
    folder = config.workspace_dir() / "specs" / "sentiment"
    folder.mkdir(parents=True)
    (folder / "x.yaml").write_text("id: x\n")
    with pytest.raises(Exception) as raised:
        save_spec_text(folder, "x", "id: x\n")
    assert str(tmp_path) not in str(raised.value) and "x.yaml already exists" in str(raised.value)
    shown = without_server_paths(f"{folder / 'x.yaml'}: bad; model store {config.cache_dir() / 'models'}; "
                                 f"{config.REPO_ROOT / 'alict_core' / 'cli.py'}")
    assert str(tmp_path) not in shown and str(config.REPO_ROOT) not in shown
    assert "<workspace>/specs/sentiment/x.yaml" in shown and "<cache>/models" in shown


# Pages F7: the NLPLego page parsed any typed length (max_chars is the browser's; 56,000 characters: ~28 s) --------

@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_pages_f7_a_typed_sentence_over_the_analysis_limit_is_one_message(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_LIMIT_ANALYSIS_CHARS", "50")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=420).run()
    at.switch_page("pages/lego.py").run()
    at.text_input(key="lego_text").set_value("a fine film " * 20).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any("the typed sentence has 239 characters, over the limit of 50" in e for e in errors), errors


# Harden (debatable in pass 15): "0:0:1" was accepted, then refused after a whole export was written ------------

def test_harden_a_split_without_a_training_share_is_refused_at_once():
    from alict_core.common.errors import AlictError
    from alict_core.harden.split import SplitRatios

    with pytest.raises(AlictError, match="training split a share"):
        SplitRatios.parse("0:0:1")
    assert SplitRatios.parse("8:0:2").validation == 0


# CLI F9: a case id given twice (a suite under two names, a run's exported cases beside its LC seeds) was run and
# counted twice -----------------------------------------------------------------------------------------------

def test_cli_f9_a_case_given_twice_is_refused(cli, tmp_path, own_cache):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert cli("report", str(out), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "exp")).code == 0
    suite = tmp_path / "exp" / "cases.jsonl"
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(suite.read_bytes())
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(suite), "--suite", str(copy),
                  "--no-lcs", "--out", str(tmp_path / "twice"))
    assert_clean_error(outcome, 2, "comes twice")
    assert not (tmp_path / "twice").exists()


# CLI F13: a cached pair explanation (<cache>/explain/pairs/<key>.json) was read as is: an edited entry served --------

@pytest.mark.parametrize("damage", ["edited", "truncated", "wrong-shape"])
def test_cli_f13_a_damaged_cached_pair_is_computed_again(tmp_path, monkeypatch, damage):
    from alict_core.explain.pairs import compare_pair
    from tests.test_explain_template import FILLER, Negation

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))

    class Fingerprinted(Negation):
        fingerprint = "negation-v1"

    args = (Fingerprinted(), "the plot is enthralling", "the plot is not enthralling")
    first = compare_pair(*args, seed=0, vocabulary=FILLER, cache=True)
    entry = next((tmp_path / "cache" / "explain" / "pairs").glob("*[0-9a-f].json"))
    body = json.loads(entry.read_text())
    if damage == "edited":
        body["seed"]["tokens"][0] = "HACKED"
        entry.write_text(json.dumps(body))
    elif damage == "truncated":
        entry.write_text(entry.read_text()[:40])
    else:
        entry.write_text(json.dumps([1, 2, 3]))
    again = compare_pair(*args, seed=0, vocabulary=FILLER, cache=True)
    assert again.to_dict() == first.to_dict()


# CLI F15: a damaged corpus-statistics file failed every later `expand` with an internal error -------------------

def test_cli_f15_a_damaged_corpus_statistics_file_is_built_again(tmp_path, monkeypatch):
    from alict_core.expansion.constraints import corpus_stats

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)
    monkeypatch.setattr(corpus_stats, "SOURCES", ("sst/tiny.txt",))
    monkeypatch.setattr(corpus_stats, "_sentences", lambda path, rel: [["a", "fine", "film"], ["a", "film"]])
    (data / "sst" / "tiny.txt").write_text("a fine film\n")
    monkeypatch.setattr(corpus_stats, "_LOADED", {})
    stats = corpus_stats.load_corpus_stats(data)
    assert stats is not None and stats.bigram("a", "film") == 1
    stats.path.write_bytes(b"garbage, not a database")
    monkeypatch.setattr(corpus_stats, "_LOADED", {})
    again = corpus_stats.load_corpus_stats(data)
    assert again is not None and again.bigram("a", "film") == 1 and again.count("fine") == 1


# CLI F17: a spec title with ESC / CR / bidi controls was accepted and printed raw to the operator's terminal -----

@pytest.mark.parametrize("field,value", [("title", "Evil \x1b[2K\rtitle"), ("capability", "Neg\u202eation"),
                                         ("description", "line one\nline \x1b]0;x\x07two")])
def test_cli_f17_spec_texts_hold_no_control_characters(field, value):
    import yaml

    from alict_core.lcspec.loader import spec_path
    from alict_core.lcspec.schema import LCSpec

    spec = yaml.safe_load(spec_path("sentiment", "sentiment-lc04").read_text())
    with pytest.raises(ValueError, match="control character"):
        LCSpec.model_validate({**spec, field: value})
    LCSpec.model_validate({**spec, "description": "two\nlines\twith a tab"})


# kill F2: a finished `--out` run whose manifest was deleted, garbage or cut was refused by the same command ("holds
# other files": its story.json was not a run's name) instead of repaired --------------------------------------

@pytest.mark.parametrize("damage", ["deleted", "garbage", "cut"])
def test_kill_f2_a_run_with_a_damaged_manifest_is_repaired_by_the_same_command(cli, tmp_path, own_cache, damage):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert (out / "story.json").exists()
    summary = (out / "summary.csv").read_text()
    manifest = out / "manifest.json"
    {"deleted": manifest.unlink, "garbage": lambda: manifest.write_text("{not json"),
     "cut": lambda: manifest.write_bytes(manifest.read_bytes()[:40])}[damage]()
    outcome = cli(*RUN_ARGS, "--out", str(out))
    assert outcome.code == 0, outcome.err[-400:]
    assert (out / "summary.csv").read_text() == summary
    assert cli("report", str(out), "--out", str(tmp_path / "r.html")).code == 0


# kill F4: an extra results part in a finished run: `run` said "saved" (nothing repaired), `report` refused for ever --

def test_kill_f4_an_extra_part_is_repaired_by_the_same_command(cli, tmp_path, own_cache):
    out = tmp_path / "run"
    args = (*RUN_ARGS, "--shard-size", "2", "--out", str(out))
    assert cli(*args).code == 0
    shutil.copy(out / "results" / "part-00000.parquet", out / "results" / "part-00012.parquet")
    assert cli("report", str(out), "--out", str(tmp_path / "r.html")).code == 2
    assert cli(*args).code == 0
    assert not (out / "results" / "part-00012.parquet").exists()
    assert cli("report", str(out), "--out", str(tmp_path / "r.html")).code == 0


# S1 (kill pass, off-area): a single-value option given twice kept the last without a word
# (`harden export --lcs lc02 --lcs lc04` exported lc04 only) ----------------------------------------------------

@pytest.mark.parametrize("argv", [("harden", "export", "--run", "x", "--lcs", "lc02", "--lcs", "lc04", "--out", "y"),
                                  ("report", "--out", "a.html", "--out", "b.html"),
                                  ("run", "--task", "sentiment", "--task", "hate_speech")])
def test_s1_a_single_value_option_given_twice_is_refused(cli, tmp_path, own_cache, argv):
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, "given twice")


# CLI F16: the run id held the models' fingerprints, not their display names: `--models vader,name=prod-candidate`
# returned the earlier `vader` run "as is" (tables, summary JSON and JUnit named vader) ------------------------

def test_cli_f16_a_run_under_another_display_name_is_another_run(cli, tmp_path, own_cache):
    args = ("run", "--task", "sentiment", "--lc", "2", "--sample-per-lc", "3")
    assert cli(*args, "--models", "vader").code == 0
    renamed = cli(*args, "--models", "vader,name=prod-candidate", "--summary-json", str(tmp_path / "s.json"))
    assert renamed.code == 0, renamed.err[-300:]
    assert "prod-candidate" in (tmp_path / "s.json").read_text()
    assert "vader" not in json.dumps([m for m in json.loads((tmp_path / "s.json").read_text()).get("models", [])])


# CLI F14: a reviewer row edited to '' or holding ESC, or two rows 'ann' / 'ANN', were read as reviewers ---------

@pytest.mark.parametrize("edit", ["UPDATE reviewers SET name = '' WHERE id = 1",
                                  "UPDATE reviewers SET name = 'a' || char(27) || 'b' WHERE id = 1",
                                  "INSERT INTO reviewers (name, created_at) VALUES ('ANN', '2026-01-01 00:00:00')"])
def test_cli_f14_a_damaged_reviewer_row_is_one_message(cli, tmp_path, own_cache, fresh_engines, edit):
    import sqlite3

    path = tmp_path / "r.sqlite"
    db = f"sqlite:///{path}"
    _sampled_task(cli, tmp_path, db, "--reviewers", "ann")
    assert cli("review", "import", str(_signed(tmp_path)), "--db", db).code == 0
    from alict_core.review.store import dispose_engines

    dispose_engines()
    conn = sqlite3.connect(path)
    conn.execute(edit)
    conn.commit()
    conn.close()
    assert_clean_error(cli("review", "stats", "a", "--db", db), 2, "damaged rows", "reviewer")


# Notes of pass 15: `build --out <cache>/runs` started a build in the run store; `validate` of an empty seeds file
# said "0 flagged cases" -----------------------------------------------------------------------------------------

def test_notes_build_out_in_the_cache_and_validate_of_nothing(cli, tmp_path, own_cache):
    (own_cache / "runs").mkdir(parents=True)
    assert_clean_error(cli("build", "mlm", "--profile", "micro", "--out", str(own_cache / "runs")), 2, "cache")
    assert list((own_cache / "runs").iterdir()) == []
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    outcome = cli("validate", "--task", "sentiment", "--seeds", str(empty))
    assert outcome.code == 2 and "nothing to validate" in outcome.err, outcome.err


# CLI F4: a sharded run whose manifest.json and progress.json were both removed was read unchecked as a run from
# before manifests (edited results reported, exit 0) --------------------------------------------------------------

def test_cli_f4_a_sharded_run_without_its_manifest_is_refused(cli, tmp_path, own_cache):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    (out / "manifest.json").unlink()
    (out / "progress.json").unlink()
    outcome = cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "lost its manifest")
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0  # the same inputs repair it
    assert cli("report", str(out), "--out", str(tmp_path / "r.html")).code == 0


# CLI F8 / F10: a validity score given for a seed was dropped without a word; an expansion row naming another LC than
# its seed's was run under the seed's LC -------------------------------------------------------------------------

def test_cli_f10_an_expansion_of_another_lc_than_its_seed_is_refused():
    from alict_core.cases.testcases import CaseError, build_cases

    seed = {"id": "s0", "lc_id": "sentiment-lc04", "task": "sentiment", "test_type": "MFT", "text": "a fine film",
            "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}}
    row = {"id": "e0", "seed_id": "s0", "text": "a very fine film", "accepted": True}
    assert len(build_cases([seed], [{**row, "lc_id": "sentiment-lc04"}])) == 2
    with pytest.raises(CaseError, match="not its seed's LC"):
        build_cases([seed], [{**row, "lc_id": "sentiment-lc01"}])


def test_cli_f8_a_validity_score_for_a_seed_is_refused(cli, tmp_path, own_cache, fresh_engines):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    _sampled_task(cli, tmp_path, db)
    _signed(tmp_path, validity="5")
    assert_clean_error(cli("review", "import", str(tmp_path / "g.csv"), "--db", db), 2, "is a seed")


# CLI F11: `report --task` without --export was accepted and had no effect, even against the run's task ----------

def test_cli_f11_report_checks_a_given_task(cli, tmp_path, own_cache):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert_clean_error(cli("report", str(out), "--out", str(tmp_path / "r.html"), "--task", "hate_speech"), 2,
                       "--task hate_speech")
    assert not (tmp_path / "r.html").exists()
    assert cli("report", str(out), "--out", str(tmp_path / "r.html"), "--task", "sentiment").code == 0


# CLI F12: `parse` printed "(" and ")" tokens raw (`(CD ))`: the tree read back wrong) and control characters raw --

def test_cli_f12_parse_prints_a_tree_that_reads_back(cli, tmp_path, own_cache):
    from nltk import Tree

    from alict_core.commands.parse import _bracketed

    tree = Tree("S", [Tree("-LRB-", ["("]), Tree("NN", ["film"]), Tree("-RRB-", [")"])])
    printed = _bracketed(tree).pformat(margin=100)
    assert Tree.fromstring(printed).leaves() == ["-LRB-", "film", "-RRB-"]
    assert tree.leaves() == ["(", "film", ")"]  # the parser's own tree is unchanged


# Pass 16, pages P1: "Apply to YAML" pressed with the editor's new text of another shape raised in the callback
# (StopIteration, TypeError, RecursionError): the page was Streamlit's redacted error box -------------------------

@pytest.mark.usefixtures("fake_backends", "tmp_runs")
@pytest.mark.parametrize("typed", ["id: x\n", "search: abc\n", "search: [abc]\n",
                                   "search: " + "[" * 3000 + "]" * 3000 + "\n"],
                         ids=["key-gone", "scalar", "list-of-scalars", "deep"])
def test_p16_pages_1_apply_to_yaml_over_text_of_another_shape_is_one_message(typed):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=420)
    at.query_params["lc"] = "sentiment-lc01"
    at.run()
    at.text_area(key="spec_yaml::sentiment::sentiment-lc01").set_value(typed)
    next(b for b in at.button if b.label == "Apply to YAML").click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors
    assert at.text_area(key="spec_yaml::sentiment::sentiment-lc01").value == typed  # the typed text is kept


# Pass 16, pages P3 / P5: a request.json of the wrong shape in one run folder broke the Run page for every session; a
# request.json copied into another run's folder made that run answer the request -------------------------------

def test_p16_pages_3_the_request_index_skips_tampered_and_foreign_requests(tmp_path, tmp_runs, saved_run):
    from alict_app import runs

    good = json.loads((saved_run / "meta.json").read_text())
    models = [{"name": m["name"], "kwargs": {}, "label": m["name"]} for m in good["models"]]
    for name, request in (("a0", {"status": "done"}), ("a1", [1, 2]),
                          ("a2", {"status": "done", "key": "k-own", "request": {"models": models}}),
                          ("a3", {"status": "done", "key": "k-foreign",
                                  "request": {"models": [{"name": "textblob", "label": "textblob"}]}})):
        shutil.copytree(saved_run, tmp_runs / name)
        meta = json.loads((tmp_runs / name / "meta.json").read_text())
        (tmp_runs / name / "meta.json").write_text(json.dumps({**meta, "run_id": name}))
        (tmp_runs / name / "request.json").write_text(json.dumps(request))
    assert runs._request_index() == {"k-own": "a2"}
    assert runs.resolve("k-foreign") == "k-foreign"  # unknown: never another run's results


# Pass 16, pages P4: the Review page showed the operator's review database (a SQLite path outside the known folders;
# a PostgreSQL user, host and port in the driver's text) --------------------------------------------------------

@pytest.mark.parametrize("url", ["sqlite:////srv/secret/review.sqlite", "postgresql+psycopg://bob:pw@db.internal:5432/r"])
def test_p16_pages_4_messages_name_the_review_database_by_role(monkeypatch, url):
    from alict_app.formatting import without_server_paths
    from alict_core.review.store import safe_url

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    shown = without_server_paths(f"review database {safe_url(url)} cannot be used (connection to server at "
                                 "'db.internal', port 5432 failed; /srv/secret/review.sqlite)")
    hidden = ["secret"] if url.startswith("sqlite") else ["db.internal", "bob"]
    assert not [word for word in hidden if word in shown], shown


# Pass 16, pages P2: every Expansions page view wrote an expansion artefact per seed and slider setting to the cache
# (without bound): a page view writes nothing -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.no_models  # fake backends: runs beside the build
@pytest.mark.usefixtures("fake_backends")
def test_p16_pages_2_an_expansions_page_view_writes_no_artefact(tmp_path, monkeypatch):
    from alict_app.artefacts import expand_seed
    from alict_core.data.corpus import load_corpus
    from alict_core.lcspec import get_spec
    from alict_core.seeds import find_seeds

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    spec = get_spec("sentiment", "sentiment-lc04")
    seed = find_seeds(spec, load_corpus("sentiment"), max_seeds=1, seed=0).seeds[0]
    rows = expand_seed("fake-parser", "fake-mlm", spec, seed)
    assert rows, "the seed was expanded"
    assert not list((tmp_path / "cache" / "expansions").rglob("*"))


# Pass 16, CLI N1: ALICT_MODEL_PROFILE / ALICT_DEFAULT_PARSER were read after the run's work (a half run left) -----

@pytest.mark.parametrize("name,value", [("ALICT_MODEL_PROFILE", "huge"), ("ALICT_DEFAULT_PARSER", "nosuch")])
def test_p16_cli_1_model_settings_are_read_before_any_work(cli, tmp_path, own_cache, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    out = tmp_path / "run"
    assert_clean_error(cli(*RUN_ARGS, "--out", str(out)), 2, name)
    assert not out.exists()


# Pass 16, CLI N2: outputs were accepted inside the run store (`report --summary-json <cache>/runs/s.json`,
# `seeds --out <cache>/runs/sd`: a stray folder then named as a run) ---------------------------------------------

@pytest.mark.parametrize("argv", [("report", "{run}", "--out", "{tmp}/r.html", "--summary-json", "{runs}/s.json"),
                                  ("seeds", "--task", "sentiment", "--lc", "2", "--out", "{runs}/sd"),
                                  ("review", "export", "a", "--out", "{runs}/e.csv")])
def test_p16_cli_2_no_output_in_the_run_store(cli, tmp_path, own_cache, argv):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    runs = own_cache / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in runs.iterdir())
    given = [a.format(run=out, tmp=tmp_path, runs=runs) for a in argv]
    assert_clean_error(cli(*given), 2, "run store")
    assert sorted(p.name for p in runs.iterdir()) == before


# Pass 16, CLI N3 / N4: lego named --trust-pickle without having it; explain --results checked --method / --label
# after a shard folder was written -------------------------------------------------------------------------------

def test_p16_cli_3_lego_takes_the_trust_pickle_option_it_names(cli, tmp_path, own_cache):
    pickle = f"sklearn:path={tmp_path / 'm.joblib'}"
    assert_clean_error(cli("lego", "--task", "sentiment", "--lc", "1", "--max-seeds", "1", "--judge", pickle,
                           "--out", str(tmp_path / "lg")), 2, "--trust-pickle")
    trusted = cli("lego", "--task", "sentiment", "--lc", "1", "--max-seeds", "1", "--judge", pickle,
                  "--trust-pickle", "--out", str(tmp_path / "lg"))
    assert trusted.code == 2 and "unrecognized arguments" not in trusted.err and "m.joblib" in trusted.err


@pytest.mark.parametrize("option,value", [("--method", "foo"), ("--label", "nosuch")])
def test_p16_cli_4_explain_results_checks_method_and_label_first(cli, tmp_path, own_cache, option, value):
    out = tmp_path / "run"
    assert cli(*RUN_ARGS, "--out", str(out)).code == 0
    assert_clean_error(cli("explain", "--results", str(out), "--lc", "2", option, value), 2, value)
    assert not (own_cache / "explain").exists() or not list((own_cache / "explain").rglob("*.jsonl"))


# Pass 16, kill K1 / K2: the retraining embeddings cache had no manifest (an edited entry trained a version under the
# same name); a checked file was renamed into place before its manifest (a reader between quarantined it) --------

def test_p16_kill_1_an_edited_embeddings_entry_is_encoded_again(tmp_path, monkeypatch):
    import numpy as np

    from alict_core.training.retrain import _cached_embeddings

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))

    class Encoder:
        fingerprint = "enc-v1"
        calls = 0

        def encode(self, texts):
            Encoder.calls += 1
            return np.arange(len(texts) * 3, dtype=np.float32).reshape(len(texts), 3) + 1

    first = _cached_embeddings(Encoder(), ["a", "b"])
    assert _cached_embeddings(Encoder(), ["a", "b"]).tolist() == first.tolist() and Encoder.calls == 1
    entry = next((tmp_path / "cache" / "embeddings").rglob("*.npy"))
    with open(entry, "wb") as handle:
        np.save(handle, np.zeros_like(first), allow_pickle=False)
    assert _cached_embeddings(Encoder(), ["a", "b"]).tolist() == first.tolist() and Encoder.calls == 2


def test_p16_kill_2_a_checked_file_has_its_manifest_before_it_is_in_place(tmp_path):
    from alict_core.common.manifest import file_manifest_path, load_checked, save_checked

    path = tmp_path / "entry.json"
    seen = []

    def write(tmp):
        tmp.write_text('{"x": 1}', encoding="utf-8")

    import alict_core.common.manifest as manifest

    original = manifest.write_file_manifest

    def spy(*args, **kwargs):
        seen.append(path.exists())  # the file is not yet in place when its manifest is written
        return original(*args, **kwargs)

    manifest.write_file_manifest = spy
    try:
        save_checked(path, "entry", "k", 1, write)
    finally:
        manifest.write_file_manifest = original
    assert seen == [False] and file_manifest_path(path).exists()
    assert load_checked(path, "entry", "k", lambda p: p.read_text()) == '{"x": 1}'
