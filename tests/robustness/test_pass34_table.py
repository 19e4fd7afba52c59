"""Pass 34 rows (the p34cli, p34pages and p34kill helpers, and the pass-33 leftovers; fixed by the lead): each
failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("address", ["", "  "])
def test_p34_leftover_1_an_empty_ray_address_is_refused(cli, tmp_path, address):
    """Was (pass-33 leftover): `run --executor ray --ray-address ''` started a local Ray as if the flag were absent,
    where the user named a cluster and left its address out by mistake."""
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--executor", "ray",
                  "--ray-address", address, "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "--ray-address is empty")
    assert not (tmp_path / "run").exists()


def test_p34_leftover_2_a_masked_lm_turned_off_and_named_is_refused(cli, tmp_path):
    """Was (pass-32 leftover): `lego --mlm-top-k 0 --mlm <name>` ran without the masked LM it was given, without a
    word (as `--parser` with `--no-constituency` did before pass 23)."""
    outcome = cli("lego", "--task", "sentiment", "--lc", "1", "--max-seeds", "1", "--mlm-top-k", "0",
                  "--mlm", "distilroberta-base", "--out", str(tmp_path / "lego"))
    assert_clean_error(outcome, 2, "--mlm-top-k 0 turns off")
    assert not (tmp_path / "lego").exists()


def _word(number: int) -> str:
    """A distinct lower-case word for ``number`` (digits are no word for the corpus counts)."""
    return "".join(chr(97 + number // 26 ** place % 26) for place in range(3))


def test_p34_kill_1_a_full_disk_under_a_cache_sqlite_build_is_said_and_leaves_no_journal(cli, tmp_path, monkeypatch):
    """Was (the p34kill helper, a cache on a tmpfs with 9 MiB free): `expand` building the corpus statistics said
    "internal error (OperationalError: database or disk is full) ... please report it" (exit 3: SQLite's error is no
    OSError), and the failed build's `.<name>.tmp-journal` stayed in the cache for ever. A real SQLITE_FULL here:
    the build's database may hold only a few pages."""
    import sqlite3
    import types

    from alict_core.commands import validate
    from alict_core.expansion.constraints import corpus_stats

    root = tmp_path / "data"
    (root / "sst").mkdir(parents=True)
    (root / "sst" / "datasetSentences.txt").write_text(
        "sentence_index\tsentence\n" + "".join(f"{i}\t{_word(i)} and {_word(i + 1)} again\n" for i in range(3000)))

    def small_connect(database, *args, **kwargs):
        connection = sqlite3.connect(database, *args, **kwargs)
        if not kwargs.get("uri"):
            connection.execute("PRAGMA max_page_count = 4")
        return connection

    monkeypatch.setattr(corpus_stats, "sqlite3", types.SimpleNamespace(connect=small_connect))
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(validate, "run", lambda args: corpus_stats.load_corpus_stats(root))
    outcome = cli("validate", "--task", "sentiment")
    assert_clean_error(outcome, 2, "out of space")
    folder = tmp_path / "cache" / "corpus_stats"
    assert [p.name for p in folder.iterdir() if "tmp" in p.name] == []


def test_p34_kill_2_an_orphan_journal_of_a_failed_build_is_swept(tmp_path):
    """Was (the p34kill helper): the sweep of killed writers' files removed a SQLite journal only together with its
    temporary file; a journal whose temporary file was already gone (a build failed on a full disk) stayed for ever,
    even after a later successful build."""
    import os
    import time

    from alict_core.common import jsonl

    tmp = jsonl.new_temp_file(tmp_path / "x.sqlite")
    journal = tmp.parent / (tmp.name + "-journal")
    journal.write_bytes(b"j" * 100)
    tmp.unlink()
    user_file = tmp_path / ".x.sqlite.0123456789ab.tmp-journal"  # not sealed by this program: a user's file
    user_file.write_bytes(b"mine")
    old = time.time() - 3 * 3600
    for path in (journal, user_file):
        os.utime(path, (old, old))
    jsonl.clean_stale_temp_files(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [user_file.name]


def _first_use(url: str, barrier, answers) -> None:
    from alict_core.review import store

    barrier.wait()
    try:
        store.engine_for(url)  # the first use of a new database migrates it
        answers.put("ok")
    except Exception as exc:  # noqa: BLE001 - the answer is what the row checks
        answers.put(f"{type(exc).__name__}: {exc}")


def test_p34_kill_3_first_uses_of_a_new_sqlite_review_database_at_once_all_succeed(tmp_path):
    """Was (the p34kill helper): two `review sample --db sqlite:///<new file>` started together; one failed with
    "cannot open the review database ...: table schema_migrations already exists" (1 of 3 trials with two, 3 of 3
    with four): the migration's check-then-create raced, and only PostgreSQL's migrations were serialised."""
    import multiprocessing

    url = f"sqlite:///{tmp_path}/new.sqlite"
    context = multiprocessing.get_context("fork")
    barrier, answers = context.Barrier(4), context.Queue()
    processes = [context.Process(target=_first_use, args=(url, barrier, answers)) for _ in range(4)]
    for process in processes:
        process.start()
    results = [answers.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(60)
    assert results == ["ok"] * 4, results


@pytest.mark.parametrize("case_id", ["", " ", "\n", "a\u202eb", "x\x1b[2Jy"])
def test_p34_cli_1_a_checklist_case_id_is_checked_like_a_cases_row_id(cli, tmp_path, case_id):
    """Was (the p34cli helper): a CheckList test's `case_ids` took any string: an empty id, a bare newline or a
    right-to-left override ran (exit 0), went into results.csv and the review export, and `review writeback` printed
    them raw; the run's exported cases.jsonl was then refused by `run --suite` (the same empty id is refused there)."""
    import json

    suite = tmp_path / "c.json"
    suite.write_text(json.dumps({"t1": {"type": "MFT", "data": ["a good film", "a bad film"], "labels": 2,
                                        "case_ids": ["fine", case_id]}}))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite),
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "case_ids")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("seed_id", ["", "\n", "a\u202eb"])
def test_p34_cli_2_a_seed_id_is_checked_like_a_case_id(tmp_path, seed_id):
    """Neighbour of p34cli 1: a `--seeds` row's id becomes the case id of the seed and of its expansions."""
    from alict_core.cases.rowschema import SeedRow, row_problem

    row = {"id": seed_id, "lc_id": "sentiment-lc01", "text": "a good film", "test_type": "MFT",
           "expected": {"kind": "label", "labels": ["positive"]}}
    assert row_problem(SeedRow, row) is not None
    assert row_problem(SeedRow, {**row, "id": "fine"}) is None


@pytest.mark.parametrize("tail", ["rep.html/.", "rep.html/..", "rep.html/./"])
def test_p34_cli_3_an_output_file_ending_in_slash_dot_is_refused(cli, tmp_path, saved_run, tail):
    """Was (the p34cli helper): `report --out o/rep.html/.` wrote the file o/rep.html (pathlib drops the '/.'), where
    `--out o/rep.html/` has been refused since pass 32 (the same for compare --json, review export --out, --junit)."""
    (tmp_path / "o").mkdir()
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "o" / "x") + "/" + tail)
    assert_clean_error(outcome, 2, "names a folder")
    assert list((tmp_path / "o").iterdir()) == []


@pytest.mark.parametrize("database, said", [("a.sqlite/.", "ends with '/'"), ("e.sqlite/..", "ends with '/'"),
                                            ("nonexist/../j.sqlite", "steps back")])
def test_p34_cli_4_a_review_database_path_through_dots_is_refused(cli, tmp_path, fresh_engines, database, said):
    """Was (the p34cli helper): `review sample --db sqlite:///<dir>/a.sqlite/.` created a.sqlite; `e.sqlite/..` made a
    folder e.sqlite and then could not open the database; `nonexist/../j.sqlite` created the folder nonexist."""
    import json

    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    folder = tmp_path / "db"
    folder.mkdir()
    outcome = cli("review", "sample", "--db", f"sqlite:///{folder}/{database}", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, said)
    assert list(folder.iterdir()) == []


SAVE_UNDER_A_FILE_SIZE_LIMIT = """
import resource, signal, sys, types
import torch
from alict_core import cli
from alict_core.commands import validate
from alict_core.training.parser import save_model

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))
encoder = types.SimpleNamespace(config=types.SimpleNamespace(num_hidden_layers=1))
parser = types.SimpleNamespace(pretrained_model=encoder, config={"d_model": 8},
                               state_dict=lambda: {"w": torch.zeros(1000, 1000)})
validate.run = lambda args: save_model(parser, __import__("pathlib").Path(sys.argv[1]))
sys.exit(cli.main(["validate", "--task", "sentiment"]))
"""


def test_p34_kill_4_a_full_disk_at_the_parser_save_is_out_of_space(tmp_path):
    """Was (the p34kill helper, `build parser --profile micro --out <a 24 MiB tmpfs>`): "internal error (RuntimeError:
    [enforce fail at inline_container.cc:672] . unexpected pos 21056 vs 20950) ... please report it" (exit 3): torch's
    own file writer says a failed write without an errno. The parser's weights are now written by Python."""
    import subprocess
    import sys

    outcome = subprocess.run([sys.executable, "-c", SAVE_UNDER_A_FILE_SIZE_LIMIT, str(tmp_path / "parser")],
                             capture_output=True, text=True, timeout=300)
    assert outcome.returncode == 2, outcome.stderr[-800:]
    assert "out of space" in outcome.stderr and "internal error" not in outcome.stderr


def _started(query: dict | None = None):
    from tests.test_app import start  # one way to open the app under AppTest

    return start(query)


def _round_trip(at) -> None:
    """The sidebar's task to Hate speech and back to Sentiment."""
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.usefixtures("fake_backends", "tmp_runs")
def test_p34_pages_1_the_failures_filters_come_back_after_a_task_round_trip():
    """Was (the p34pages helper): Failures with Models = [one model], LCs = [sentiment-lc04], then the sidebar's task
    to Hate speech and back: the run came back (pass 33) but both filters were empty (the link lost lcs= and
    models_f=), where "LCs to run" and "Models under test" come back since pass 33."""
    from tests.test_app import run_with_fake_model

    at = _started({"task": "hate_speech"})  # a run of each task: the other task's filters draw its own options
    at.sidebar.multiselect(key="models").set_value(["fake-hate"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["hate_speech-lc01"])
    at.number_input(key="max_seeds").set_value(5)
    at.run()
    at.button(key="run_go").click().run()
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    at = run_with_fake_model(at)
    at.switch_page("pages/failures.py").run()
    at.multiselect(key="w_lcs").set_value(["sentiment-lc04"]).run()
    at.multiselect(key="w_models_f").set_value(["fake-sentiment"]).run()
    _round_trip(at)
    assert at.multiselect(key="w_lcs").value == ["sentiment-lc04"]
    assert at.multiselect(key="w_models_f").value == ["fake-sentiment"]


@pytest.mark.usefixtures("fake_backends")
def test_p34_pages_2_the_chosen_lc_comes_back_after_a_task_round_trip():
    """Was (the p34pages helper): Specs / Seeds / Expansions on sentiment-lc04, a task round trip: sentiment-lc01 (the
    first LC) was shown, and the Expansions seed was the LC's first."""
    at = _started()
    at.switch_page("pages/specs.py").run()
    at.selectbox(key="lc").set_value("sentiment-lc04").run()
    _round_trip(at)
    assert at.selectbox(key="lc").value == "sentiment-lc04"


@pytest.mark.usefixtures("fake_backends")
def test_p34_pages_3_the_nlplego_suites_come_back_after_a_task_round_trip(monkeypatch):
    """Was (the p34pages helper): the Run page's "NLPLego suites" = [a sentiment suite], a task round trip with a
    hate-speech suite saved: none chosen on return, and a Run press ran without the suite."""
    from alict_core.lego import pipeline

    monkeypatch.setattr(pipeline, "saved_suites", lambda task: [
        {"path": f"/nowhere/{task}-{n}.jsonl", "label": f"{task} suite {n}"} for n in (1, 2)])
    at = _started()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lego").set_value(["/nowhere/sentiment-2.jsonl"]).run()
    _round_trip(at)
    assert at.multiselect(key="run_lego").value == ["/nowhere/sentiment-2.jsonl"]


@pytest.mark.usefixtures("fake_backends")
def test_p34_pages_4_a_chosen_lc_removed_during_a_round_trip_is_said(tmp_path, monkeypatch):
    """Was (the p34pages helper): "LCs to run" = [sentiment-lc02, a workspace LC]; on the other task the workspace
    spec was removed (another session's "Discard my copy"); back on Sentiment the LC was gone without the pass-22
    "No longer there" note (it was looked for in the other task's choice), and a Run press ran one LC fewer."""
    workspace = tmp_path / "workspace"
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    specs = workspace / "specs" / "sentiment"
    specs.mkdir(parents=True)
    own = specs / "sentiment-lc04b.yaml"
    source = (Path(__file__).parents[2] / "specs" / "sentiment" / "sentiment-lc04.yaml").read_text()
    own.write_text(source.replace("sentiment-lc04", "sentiment-lc04b"))
    at = _started()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc02", "sentiment-lc04b"]).run()
    at.sidebar.selectbox(key="task").set_value("hate_speech").run()
    own.unlink()
    at.sidebar.selectbox(key="task").set_value("sentiment").run()
    assert not at.exception
    assert at.multiselect(key="run_lcs").value == ["sentiment-lc02"]
    assert any("No longer there" in w.value and "lc04b" in w.value for w in at.warning), [w.value for w in at.warning]


def _reader(url: str, stop, answers) -> None:
    from alict_core.review import store

    errors = set()
    while not stop.is_set():
        try:
            store.engine_for(url, read_only=True)
        except Exception as exc:  # noqa: BLE001 - the answer is what the row checks
            errors.add(f"{type(exc).__name__}: {exc}"[:200])
        store.dispose_engines()
    answers.put(sorted(errors))


def _writer(url: str) -> None:
    import time

    from alict_core.review import store

    time.sleep(0.3)
    store.engine_for(url)


def test_p34_kill_5_a_reader_during_a_new_databases_first_migration_never_calls_it_foreign(tmp_path):
    """Was (the p34kill helper): `review stats` (or the Review page) while another process created the database
    said "is not an ALiCT review database (it records schema step 1 as applied but lacks its table 'judgements')" or
    "has schema version 1, older than this ALiCT's (2)": the steps were applied one by one and the reader read the
    tables before the steps. SQLite's migration is now one transaction, and the reader reads one snapshot."""
    import multiprocessing
    import time

    context = multiprocessing.get_context("fork")
    seen: list[str] = []
    for attempt in range(3):
        url = f"sqlite:///{tmp_path}/db{attempt}.sqlite"
        stop, answers = context.Event(), context.Queue()
        readers = [context.Process(target=_reader, args=(url, stop, answers)) for _ in range(2)]
        for reader in readers:
            reader.start()
        writer = context.Process(target=_writer, args=(url,))
        writer.start()
        writer.join(120)
        time.sleep(0.2)
        stop.set()
        for _ in readers:
            seen += answers.get(timeout=120)
        for reader in readers:
            reader.join(60)
    assert not [e for e in seen if "not an ALiCT review database" in e or "older than this ALiCT" in e], seen


def test_p34_pages_5_the_backends_panel_shows_no_markdown_and_no_users_display_names():
    """Was (the p34pages helper, two Chromium contexts): a display name `![](http://host/pixel.png) [Log in
    again](http://host/phish)` given to a user model in one session went as Markdown (html.escape only) into the
    sidebar "Backends" row of loaded models, which every session of the server shows: each visitor's browser fetched
    the image from any host and showed the link. The row's texts are escaped now, and a model a user added is named
    there by its kind only."""
    from streamlit.testing.v1 import AppTest

    from alict_app.backends import _shared_name

    def script():
        from alict_app import sidebar

        sidebar.backend_rows([{"what": "models", "state": "loaded",
                               "note": "![](http://127.0.0.1:9/pixel.png) [Log in again](http://127.0.0.1:9/phish)"}])

    at = AppTest.from_function(script, default_timeout=60).run()
    rows = [m.value for m in at.markdown if "pixel" in m.value]
    assert rows and all("![](" not in row and "](http" not in row for row in rows), rows
    assert _shared_name("http", "![](http://127.0.0.1:9/p.png)") == "http (added in a session)"
    assert _shared_name("vader", "vader") == "vader"


@pytest.mark.usefixtures("fake_backends")
def test_p34_pages_6_the_seeds_filters_and_the_baseline_path_are_kept_across_pages():
    """Was (the p34pages helper, cosmetic-low): the Seeds page's search text and Expected filter, and the Report
    page's baseline path, were empty after a visit to another page (the same class as the pass-31/32 menus)."""
    at = _started()
    at.switch_page("pages/seeds.py").run()
    at.text_input(key="seed_search").input("good").run()
    labels = at.multiselect(key="seed_labels").options
    at.multiselect(key="seed_labels").set_value(labels[:1]).run()
    at.switch_page("pages/specs.py").run()
    at.switch_page("pages/seeds.py").run()
    assert not at.exception
    assert at.text_input(key="seed_search").value == "good"
    assert at.multiselect(key="seed_labels").value == labels[:1]


@pytest.mark.parametrize("argv", [
    ["report", "{run}", "--out", "{loop}/r.html"],
    ["report", "{run}", "--out", "{tmp}/r.html", "--export", "{loop}/ex"],
    ["report", "{loop}", "--out", "{tmp}/r.html"],
    ["seeds", "--task", "sentiment", "--lc", "1", "--out", "{loop}"],
    ["explain", "--text", "a good film", "--model", "vader", "--json", "{loop}"]])
def test_p34_kill_6_a_path_through_a_loop_of_links_is_said(cli, tmp_path, saved_run, argv):
    """Was (the p34kill helper): `report R --out <a loop of links>/r.html` (and --export, seeds/run/explain/compare/
    harden/build outputs) said "internal error (RuntimeError: Symlink loop from ...)" (exit 3): Python 3.11's
    Path.resolve raises RuntimeError, not OSError, for a loop."""
    import os

    (tmp_path / "lp").mkdir()
    os.symlink("l1", tmp_path / "lp" / "l2")
    os.symlink("l2", tmp_path / "lp" / "l1")
    places = {"{run}": str(saved_run), "{loop}": str(tmp_path / "lp" / "l1"), "{tmp}": str(tmp_path)}
    for place, value in places.items():
        argv = [arg.replace(place, value) for arg in argv]
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, "loop of symbolic links")
    assert not (tmp_path / "r.html").exists()


def test_p34_kill_7_a_typed_path_through_a_loop_of_links_is_a_problem_not_an_unexpected_error():
    """Neighbour of p34kill 6 on the pages: the error boundary showed a loop of links as "Unexpected error" with a
    traceback under "Technical details"."""
    from streamlit.testing.v1 import AppTest

    def script():
        from alict_app.guard import guarded

        with guarded("reading the baseline suite"):
            raise RuntimeError("Symlink loop from '/somewhere/l1'")

    at = AppTest.from_function(script, default_timeout=60).run()
    assert [e.value for e in at.error] and all("Problem while" in e.value and "loop of symbolic links" in e.value
                                               for e in at.error)
    assert not at.expander


def test_p34_kill_8_a_read_only_review_database_file_is_said_as_such(tmp_path):
    """Was (the p34kill helper, low): `review sample` into a review database whose file is read-only (its folder
    writable) said "cannot be used (attempt to write a readonly database); if it is another application's database
    or another version's, pass --db with a new or own review database": the database was blamed as foreign. The
    real driver error here comes from a connection SQLite keeps read-only (root writes through a file's mode)."""
    import argparse

    from sqlalchemy import create_engine, text

    from alict_core.commands.review import _foreign_schema
    from alict_core.review.store import ReviewError

    url = f"sqlite:///{tmp_path}/r.sqlite"

    def write(args: argparse.Namespace) -> int:
        with create_engine(url).connect() as connection:
            connection.execute(text("CREATE TABLE t (x)"))
            connection.execute(text("PRAGMA query_only = 1"))
            connection.execute(text("INSERT INTO t VALUES (1)"))
        return 0

    with pytest.raises(ReviewError) as refused:
        _foreign_schema(write)(argparse.Namespace(db=url))
    assert "is read-only" in str(refused.value) and "another application" not in str(refused.value)


def test_p34_cli_5_a_short_lc_form_never_names_a_suite_test(cli, tmp_path):
    """Was (the p34cli helper, low-medium): `harden export --run R --lcs 4` of a run of the CheckList test `calc4`
    exported `calc:calc4` (exit 0: the digits after the last 'lc' of any LC id were matched), where `explain --lc 4`
    and `report --fail-threshold 4=…` refuse '4' for that run; a hardening trained on cases nobody asked for."""
    import json

    suite = tmp_path / "calc.json"
    texts = [f"the film number {n} was {word}" for n, word in enumerate(["good", "bad", "fine"] * 4)]
    suite.write_text(json.dumps({"calc4": {"type": "MFT", "data": texts, "labels": 2}}))
    ran = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite),
              "--out", str(tmp_path / "run"))
    assert ran.code == 0, ran.err[-400:]
    for short in ("4", "lc04"):
        outcome = cli("harden", "export", "--run", str(tmp_path / "run"), "--lcs", short, "--out", str(tmp_path / "h"))
        assert_clean_error(outcome, 2, "not in this run")
        assert not (tmp_path / "h").exists()


def test_p34_cli_6_a_short_lc_form_reads_the_tasks_own_lcs_whatever_comes_first():
    """Was (the p34cli helper): with `calc:calc4` and `sentiment-lc04` in one run, `harden export --lcs 4` and
    `explain --results R --lc 4` said "LC '4' is not in this run" (explain took the task from the first LC id, a
    suite's; harden export found two LCs ending in 4)."""
    from alict_core.explain.pairs import run_lc
    from alict_core.harden.export import _match_lc

    known = ["calc:calc4", "sentiment-lc04"]
    assert run_lc("4", known) == _match_lc("4", known) == _match_lc("lc04", known) == "sentiment-lc04"


def test_p34_cli_7_a_new_review_database_in_a_read_only_folder_names_the_folder(tmp_path, monkeypatch, fresh_engines):
    """Was (the p34cli helper, cosmetic-low): a new review database in a read-only folder said "cannot open the
    review database ...: (sqlite3.OperationalError) unable to open database file", the driver's class and no folder
    (an existing database there names its folder since pass 33). Root writes through modes: the folder's write
    permission is read as the row says."""
    import os

    from alict_core.review import store

    folder = tmp_path / "ro"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(store.os, "access", lambda path, mode: False if Path(path) == folder and mode & os.W_OK
                        else real_access(path, mode))
    monkeypatch.setattr(store, "_make_engine", lambda url, read_only=False: __import__("sqlalchemy").create_engine(
        f"sqlite:///{tmp_path}/missing/dir/r.sqlite"))  # the driver's real "unable to open database file"
    with pytest.raises(store.ReviewError) as refused:
        store.engine_for(f"sqlite:///{folder}/r.sqlite")
    assert "read-only" in str(refused.value) and str(folder) in str(refused.value)
    assert "OperationalError" not in str(refused.value)
