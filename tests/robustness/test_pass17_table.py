"""Hostile pass 17 table: the pass-16 leftovers taken up (``l16_*``) and pass 17's findings (notes:
attack_pass17_{cli,pages,kill}.md); one row per fix, each failing on the code before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import expansion_argv, seed_row
from tests.test_harden import saved_run, tiny_parent  # noqa: F401 - fixtures of the Harden page row

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.parametrize("argv", [["--confirm", "--by", "lead"], ["--revoke"], []], ids=["confirm", "revoke", "show"])
def test_l16_writeback_never_creates_a_database_at_a_mistyped_path(cli, tmp_path, argv):
    """Was: `review writeback --confirm` (or --revoke) on a mistyped SQLite path created and migrated a new
    database holding a rule nobody would ever read."""
    path = tmp_path / "reveiw.sqlite"
    outcome = cli("review", "writeback", "--task", "sentiment", "--db", f"sqlite:///{path}", *argv)
    assert_clean_error(outcome, 2, "no review database at", "nothing was created")
    assert list(tmp_path.iterdir()) == []


def _expansions(folder: Path) -> Path:
    folder.mkdir()
    rows = [{"id": f"e{i}", "seed_id": "sentiment-lc02-s1", "lc_id": "sentiment-lc02", "task": "sentiment",
             "text": f"an expanded text {i}", "accepted": True} for i in range(2)]
    (folder / "exp.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder / "exp.jsonl"


@pytest.mark.parametrize("command", [["fidelity", "--task", "sentiment", "--lc", "2"],
                                     ["validate", "--task", "sentiment", "--lc", "2"]])
@pytest.mark.parametrize("how", ["file-twice", "file-and-folder"])
def test_l16_expansions_given_twice_are_refused(cli, tmp_path, own_cache, command, how):
    """Was: `fidelity --expansions x.jsonl --expansions <its folder>` counted every accepted expansion twice (the
    same name twice was already refused)."""
    file = _expansions(tmp_path / "exps")
    second = file if how == "file-twice" else file.parent
    outcome = cli(*command, "--expansions", str(file), "--expansions", str(second))
    needles = ("twice", "name each once") if how == "file-twice" else ("comes twice", "given twice", "exp.jsonl:1")
    assert_clean_error(outcome, 2, *needles)


def test_l16_expansions_given_once_are_read(cli, tmp_path, own_cache):
    file = _expansions(tmp_path / "exps")
    outcome = cli("fidelity", "--task", "sentiment", "--lc", "2", "--expansions", str(file))
    assert outcome.code == 0, outcome.err


DAMAGED_MANIFESTS = {"not-json": "garbage{", "a-list": "[1, 2]", "a-hash-a-number": '{"files": {"a": 1}}',
                     "files-a-list": '{"files": [1]}', "target-a-number": '{"files": {"a": "b"}, "target": 3}',
                     "steps-a-text": '{"files": {"a": "b"}, "steps": "many"}'}


@pytest.mark.parametrize("text", DAMAGED_MANIFESTS.values(), ids=DAMAGED_MANIFESTS.keys())
def test_l16_a_damaged_model_manifest_is_named_not_raised(own_cache, text):
    """Was: a model-store manifest.json of another shape raised AttributeError / JSONDecodeError from the sidebar's
    overview (every page's sidebar broke) and from `build --report`."""
    from alict_core.models.defaults import overview

    folder = own_cache / "models" / "quick" / "parser"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(text)
    info = overview()
    assert info["roles"]["parser"]["built"] is False and info["roles"]["parser"]["damaged"] is True
    assert "alict build parser --profile quick" in info["artefacts"]["parser"]["error"]


@pytest.mark.usefixtures("fake_backends")
def test_l16_the_sidebar_names_a_damaged_model_without_server_paths(own_cache):
    from streamlit.testing.v1 import AppTest

    folder = own_cache / "models" / "quick" / "parser"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("[1, 2]")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(c.value for c in at.sidebar.caption) + " ".join(m.value for m in at.sidebar.markdown)
    assert "damaged" in shown and str(own_cache) not in shown


@pytest.mark.usefixtures("fake_backends")
def test_l16_a_linked_reviewer_name_over_the_limit_is_said_not_cut(tmp_path, monkeypatch):
    """Was: `?reviewer=<150 characters>` was cut to 100 by the field without a word (judgements recorded under a
    name the reviewer never typed)."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import dispose_engines
    from alict_core.runner import build_cases
    from tests.robustness.support import review_page

    path = tmp_path / "review.sqlite"
    cases = build_cases([{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a fine film {i}",
                          "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"],
                                                           "tolerance": None}} for i in range(4)])
    create_review_task(ReviewStore(f"sqlite:///{path}"), "t", "sentiment", cases, SamplingPlan(size=4, n_sets=1, k=1))
    dispose_engines()
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{path}")
    at = review_page("t", "a" * 150)
    assert not at.exception, [e.value for e in at.exception]
    assert any("longer than 100 characters" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.text_input(key="reviewer").value == ""
    dispose_engines()


# pass 17, CLI ------------------------------------------------------------------------------------------------------
RUN = ("run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--lc", "4", "--sample-per-lc", "3")


@pytest.fixture
def saved(cli, tmp_path, own_cache) -> Path:
    out = tmp_path / "run"
    assert cli(*RUN, "--out", str(out)).code == 0
    return out


@pytest.mark.parametrize("option,name", [("--summary-json", "summary.csv"), ("--out", "results.csv"),
                                         ("--junit", "manifest.json"), ("--junit", "j.xml")])
def test_p17_cli_1_no_output_inside_the_export_folder(cli, tmp_path, saved, option, name):
    """Was: `report RUN --export D --summary-json D/summary.csv` replaced the export's summary.csv (its manifest still
    listing the CSV's hash); `--out D/results.csv` said "report written" over the export's CSV; a user's D/j.xml was
    deleted by the next export to D."""
    export = tmp_path / "exp"
    argv = ["report", str(saved), "--export", str(export), option, str(export / name)]
    if option != "--out":
        argv += ["--out", str(tmp_path / "r.html")]
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, option, "inside the --export folder")
    assert not export.exists() and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("threshold", ["lc99=0.1", "sentiment-lc02=0.5"])
def test_p17_cli_2_report_refuses_an_lc_not_run_before_writing(cli, tmp_path, saved, threshold):
    """Was: the report HTML and the JUnit file were written, then "--fail-threshold names LC …" and exit 2."""
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r.html"), "--junit", str(tmp_path / "j.xml"),
                  "--fail-threshold", threshold)
    assert_clean_error(outcome, 2, "--fail-threshold names LC", "which was not run")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "j.xml").exists()


@pytest.mark.parametrize("short", ["lc01", "LC1", "1"])
def test_p17_cli_2_report_takes_short_lc_names_like_run(cli, tmp_path, saved, short):
    """Was: `report --fail-threshold lc01=…` was refused as "not run" (`run` takes the short forms)."""
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r.html"), "--junit", str(tmp_path / "j.xml"),
                  "--fail-threshold", f"{short}=1.0")
    assert outcome.code == 0, outcome.err
    assert (tmp_path / "j.xml").is_file()


@pytest.mark.parametrize("value", ["no", 1, None, "false"])
def test_p17_cli_3_expansions_accepted_must_be_a_boolean(cli, tmp_path, own_cache, value):
    """Was: `fidelity` counted `"accepted": "no"` (and 1) as accepted expansions, silently."""
    file = tmp_path / "x.jsonl"
    file.write_text(json.dumps({"id": "e1", "seed_id": "sentiment-lc01-s1", "lc_id": "sentiment-lc01",
                                "text": "a text", "accepted": value}) + "\n")
    outcome = cli("fidelity", "--task", "sentiment", "--lc", "1", "--expansions", str(file))
    assert_clean_error(outcome, 2, "x.jsonl:1", "accepted must be true or false")


def test_p17_cli_3_fidelity_counts_an_absent_accepted_as_accepted_like_run(cli, tmp_path, own_cache):
    file = tmp_path / "x.jsonl"
    file.write_text(json.dumps({"id": "e1", "seed_id": "sentiment-lc02-s1", "lc_id": "sentiment-lc02",
                                "text": "a text"}) + "\n")
    outcome = cli("fidelity", "--task", "sentiment", "--lc", "2", "--json", "--expansions", str(file))
    assert outcome.code == 0, outcome.err
    assert json.loads(outcome.out)[0]["expansions"] == 1


def test_p17_cli_4_a_damaged_model_manifest_is_broken_in_the_report_and_rebuilt_by_missing(cli, tmp_path):
    """Was: `build --report`, `build missing` (the repair), `expand` and a `run` of lexicon models (at its end) exited
    3 with JSONDecodeError / AttributeError on a model manifest cut short or of another shape."""
    from alict_core.models import artefacts
    from alict_core.training.targets import build, missing
    from tests.test_builds import _fake_trainer

    root = tmp_path / "models"
    build("mlm", "quick", root, trainer=_fake_trainer({"mlm_delta.safetensors": "w", "meta.json": "{}"}),
          log=lambda _: None)
    manifest = root / "quick" / "mlm" / artefacts.MANIFEST
    manifest.write_text(manifest.read_text()[:40])
    outcome = cli("build", "--report", "--out", str(root))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert "BROKEN" in outcome.out and "alict build mlm --profile quick" in outcome.out
    assert "mlm" in missing("quick", root)
    rebuilt = build("mlm", "quick", root, trainer=_fake_trainer({"mlm_delta.safetensors": "v", "meta.json": "{}"}),
                    force=False, log=lambda _: None)
    assert artefacts.verify(rebuilt.path, "mlm")["files"] and "mlm" not in missing("quick", root)


# pass 17, kill -----------------------------------------------------------------------------------------------------
def test_p17_kill_1_a_parse_cache_reader_never_quarantines_a_shard_under_its_writer(own_cache, monkeypatch):
    """Was: `ParseCache.put_many` renamed its shard into place, then wrote its manifest; a reader loading the cache
    in between (another `expand`, `parse`, the app) quarantined the shard, and the writer failed ("cannot access
    <cache>/parses/…jsonl")."""
    import threading
    import time

    import nltk

    from alict_core.common import manifest
    from alict_core.parsing import benepar_backend
    from alict_core.parsing.benepar_backend import ParseCache

    real = manifest.write_file_manifest
    reader_done = threading.Event()

    def slow_manifest(*args, **kwargs):  # the writer between its two steps while a reader loads the cache
        reader = threading.Thread(target=lambda: (ParseCache("fp")._load(), reader_done.set()))
        reader.start()
        reader.join(timeout=3)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(manifest, "write_file_manifest", slow_manifest)
    monkeypatch.setattr(benepar_backend, "write_file_manifest", slow_manifest, raising=False)
    tree = nltk.Tree.fromstring("(S (NP (DT the) (NN film)) (VP (VBD was) (ADJP (JJ good))))")
    ParseCache("fp").put_many([(["the", "film", "was", "good"], tree)])
    assert reader_done.is_set()
    assert not (own_cache / "quarantine").exists()
    assert ParseCache("fp").get(["the", "film", "was", "good"]) == tree


def test_p17_kill_1_a_reader_waits_for_the_writer_of_an_entry_before_quarantining_it(own_cache):
    """A reader that finds an entry beside a manifest that does not match it (a writer between its manifest and its
    rename) waits for the entry's lock and reads the finished entry; a bad entry nobody writes is quarantined."""
    import threading
    import time

    from alict_core.common.manifest import entry_lock, load_checked, save_checked, write_file_manifest

    path = own_cache / "x" / "a.txt"
    path.parent.mkdir(parents=True)
    save_checked(path, "t", "k", 1, lambda tmp: tmp.write_text("old"))
    started = threading.Event()

    def writer():
        with entry_lock(path):
            path.write_text("new")  # the old manifest no longer matches, for a moment
            started.set()
            time.sleep(0.5)
            write_file_manifest(path, "t", "k", 1)

    thread = threading.Thread(target=writer)
    thread.start()
    started.wait()
    assert load_checked(path, "t", "k", lambda p: p.read_text()) == "new"
    thread.join()
    path.write_text("edited")
    assert load_checked(path, "t", "k", lambda p: p.read_text()) is None
    assert not path.exists() and (own_cache / "quarantine").exists()


# pass 17, pages ----------------------------------------------------------------------------------------------------
def test_p17_pages_1_a_server_path_too_long_is_one_message(tmp_path, monkeypatch):
    """Was: the Report page's "… or a path on the server" with a long path inside the data root gave "Unexpected
    error … OSError: [Errno 36] File name too long" and a traceback under Technical details."""
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import browser_suite_path

    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", str(tmp_path))
    with pytest.raises(AlictError, match="suite file: the path cannot be read"):
        browser_suite_path(str(tmp_path) + "/" + "a/" * 3000 + "x.json")


def test_p17_pages_2_a_wide_csv_header_is_checked_in_linear_time(tmp_path):
    """Was: a header of 100k unique columns (689 KB, far under the upload limit) took 151 s (quadratic count)."""
    import time

    from alict_core.common.userfiles import InputFileError, csv_rows

    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(100_000)) + ",c7\n")
    started = time.process_time()
    with pytest.raises(InputFileError, match="the column 'c7' twice"):
        csv_rows(wide, "predictions file")
    assert time.process_time() - started < 10


def test_p17_pages_2_a_predictions_file_without_rows_is_refused(tmp_path):
    """Was: a stored-predictions CSV with a header and no rows was added as a model (every case then failed)."""
    from alict_core.common.errors import AlictError
    from alict_core.models.static import StaticPredictionsModel

    empty = tmp_path / "p.csv"
    empty.write_text("text,label\n")
    with pytest.raises(AlictError, match="holds no prediction"):
        StaticPredictionsModel(empty, "sentiment")


def test_p17_pages_3_the_harden_run_is_chosen_by_id_not_by_position(saved_run, tiny_parent, monkeypatch):  # noqa: F811
    """Was: the Run menu held an index into the newest-first run list; a run finished by another session moved the
    positions, and "Retrain and compare" then retrained that run (with its preselected LCs), never shown here."""
    import shutil

    from streamlit.testing.v1 import AppTest

    from alict_app import run_picker
    from alict_core.common.config import artefact_dir
    from alict_core.harden import export

    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, artefact_dir("runs") / run_id)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages" / "harden.py"), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="harden_run").value == run_id
    real_runs, real_task_runs = export.list_runs, run_picker.task_runs

    def with_a_newer_run(*args, **kwargs):  # another session finished a run meanwhile
        rows = real_runs(*args, **kwargs)
        return [{**rows[0], "id": "0000newer"}, *rows]

    def with_its_label(*args, **kwargs):
        keys, labels = real_task_runs(*args, **kwargs)
        return ["0000newer", *keys], {"0000newer": "the newer run", **labels}

    monkeypatch.setattr(export, "list_runs", with_a_newer_run)
    monkeypatch.setattr(run_picker, "task_runs", with_its_label)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="harden_run").value == run_id


def _store_run(root: Path, lc: str, finished: float) -> str:
    from alict_core.runner import build_cases, run_streaming

    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    seeds = [{"id": f"{lc}-s{i}", "lc_id": lc, "task": "sentiment", "text": f"a good film number {i} of {lc}",
              "test_type": "MFT", "expected": expected} for i in range(2)]
    request = {"key": lc, "status": "done", "started": 0, "finished": finished,
               "request": {"task": "sentiment", "lc_ids": [lc],
                           "models": [{"name": "vader", "kwargs": {}, "label": "vader"}]}}
    return run_streaming(build_cases(seeds), ["vader"], root=root, extra_files={"request.json": request}).name


def test_p17_pages_4_a_review_task_is_sampled_from_the_run_chosen(tmp_path, monkeypatch):
    """Was: "Run to sample from" had no key; a run finished by another session between the choice and the press
    reset the menu to the newest run, and the task was sampled from that run without a word."""
    import time

    from streamlit.testing.v1 import AppTest

    from alict_core.review.store import dispose_engines

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    root = tmp_path / "cache" / "runs"
    chosen = _store_run(root, "sentiment-lc04", time.time() - 100)
    _store_run(root, "sentiment-lc02", time.time() - 50)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["reviewer"] = "ann"
    at.run()
    at.switch_page("pages/review.py").run()
    menu = at.selectbox(key="review_create_run_sentiment")
    menu.set_value(chosen)  # the run id (the menu shows its label)
    next(t for t in at.text_input if t.label == "Review task name").set_value("picked")
    _store_run(root, "sentiment-lc01", time.time())  # another session finishes a run meanwhile
    next(n for n in at.number_input if n.label == "Sets").set_value(1)
    next(n for n in at.number_input if n.label == "Reviewers per case").set_value(1)
    next(b for b in at.button if b.label == "Create review task").click().run()
    assert not at.exception, [e.value for e in at.exception]
    from alict_core.review import ReviewStore

    store = ReviewStore(f"sqlite:///{tmp_path / 'review.sqlite'}")
    assert {item.lc_id for item in store.items(store.task("picked").id)} == {"sentiment-lc04"}
    dispose_engines()


class _Modules:
    def __call__(self, task: dict) -> dict:
        import sys

        return {"streamlit": "streamlit" in sys.modules}


@pytest.mark.usefixtures("fake_backends")
def test_l17_a_page_test_leaves_no_page_script_as_the_main_module_of_spawned_workers(own_cache):
    """Was (a suite flake, seen once under load): after an AppTest, ``sys.modules['__main__']`` was app.py, so the
    processes executor's spawned workers ran the whole app as their main module; one aborted at exit (-6)."""
    import sys

    from streamlit.testing.v1 import AppTest

    AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180).run()
    assert getattr(sys.modules["__main__"], "__file__", "").endswith("app.py")  # what Streamlit leaves behind


def test_l17_spawned_workers_do_not_import_the_app(own_cache):
    """Runs after the row above (same module, in order): the conftest fixture gave the real main module back."""
    from alict_core.executors.processes import ProcessExecutor

    executor = ProcessExecutor(workers=1)
    try:
        assert list(executor.map_shards(_Modules, {}, [{"n": 1}])) == [{"streamlit": False}]
    finally:
        executor.close()


def test_p17_cli_5_compare_counts_every_case_like_the_runs(cli, tmp_path, own_cache):
    """Was: `compare` dropped a second case of the same text in an LC (kept with --keep-flagged), so its rates
    (0.5 / 0.5) were not the runs' own (0.333 / 0.667)."""
    rows = [("1", "f1", "you are great", "non-hateful"), ("2", "f1", "you are great", "non-hateful"),
            ("3", "f1", "you are fine", "hateful")]  # one text twice, with one label (both labels: refused, p22)
    swapped = {"hateful": "non-hateful", "non-hateful": "hateful"}
    for name, labels in (("a", lambda r: r[3]), ("b", lambda r: swapped[r[3]])):
        (tmp_path / f"{name}.csv").write_text("case_id,functionality,test_case,label_gold\n" + "".join(
            f'{r[0]},{r[1]},"{r[2]}",{labels(r)}\n' for r in rows))
        assert cli("run", "--task", "hate_speech", "--models", "profanity-check", "--no-lcs", "--keep-flagged",
                   "--suite", str(tmp_path / f"{name}.csv"), "--out", str(tmp_path / name)).code == 0
    outcome = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "c.json"))
    assert outcome.code == 0, outcome.err
    lcs = json.loads((tmp_path / "c.json").read_text())["lcs"]
    assert [(row["n_a"], row["n_b"]) for row in lcs] == [(3, 3)], lcs
    assert [(round(row["rate_a"], 3), round(row["rate_b"], 3)) for row in lcs] == [(0.333, 0.667)], lcs


def test_p17_cli_6_lego_models_without_dir_tests_is_said(cli, tmp_path, own_cache):
    """Was: `lego --models vader` whose seeds gave no DIR test exited 3 (KeyError: 'probabilities')."""
    seeds = tmp_path / "s.txt"
    seeds.write_text("The acting was terrible in the end .\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--no-constituency", "--mlm-top-k", "0",
                  "--models", "vader", "--out", str(tmp_path / "lego"))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert "no model was run" in outcome.err


def test_p17_cli_7_the_exported_summary_is_strict_json(cli, tmp_path, saved):
    """Was: summary.jsonl of `report --export` held bare NaN (the expansion fail rate of a run without expansions):
    JavaScript's JSON.parse and strict Python parsers refused it."""
    assert cli("report", str(saved), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "exp")).code == 0

    def refuse(token: str):
        raise ValueError(token)

    for name in ("summary.jsonl", "results.jsonl"):
        for line in (tmp_path / "exp" / name).read_text().splitlines():
            json.loads(line, parse_constant=refuse)


def test_p17_cli_8_a_whole_run_that_lost_its_manifest_is_refused(cli, tmp_path, own_cache):
    """Was: a saved unsharded run (lego's, `RunResult.save`) whose manifest.json was removed was read as a run from
    before manifests: an edited results.parquet was served (fail rate 1.000 for 0.000)."""
    from alict_core.runner import build_cases, run_suite

    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    cases = build_cases([{"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "text": "a good film",
                          "test_type": "MFT", "expected": expected}])
    folder = run_suite(cases, ["vader"]).save(tmp_path / "whole")
    (folder / "manifest.json").unlink()
    outcome = cli("report", str(folder), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "has lost its manifest")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.usefixtures("fake_backends")
def test_p17_pages_5_discard_keeps_a_copy_another_session_saved_since(tmp_path, monkeypatch):
    """Was: "Discard my copy" deleted the workspace copy another session had saved since this one opened it."""
    import re

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    root = Path(__file__).resolve().parents[2]
    saved = tmp_path / "ws" / "specs" / "sentiment" / "sentiment-lc05.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text((root / "specs" / "sentiment" / "sentiment-lc05.yaml").read_text())

    def specs_page():
        at = AppTest.from_file(str(root / "app.py"), default_timeout=180)
        at.query_params["task"] = "sentiment"
        at.query_params["lc"] = "sentiment-lc05"
        at.run()
        return at.switch_page("pages/specs.py").run()

    first = specs_page()
    saved.write_text(re.sub(r"(?m)^title: .*$", "title: Saved by another session", saved.read_text()))
    editor = next(t for t in first.text_area if str(t.key).startswith("spec_yaml::"))
    first.checkbox(key=f"discard_ok::{editor.key}").check().run()
    first.button(key=f"discard::{editor.key}").click().run()
    assert not first.exception, [e.value for e in first.exception]
    assert saved.exists() and "Saved by another session" in saved.read_text()
    assert any("changed on disk since you opened it" in e.value for e in first.error), [e.value for e in first.error]


def _failed_build_panel():
    from alict_app import sidebar

    sidebar.build_controls({"what": "parser", "state": "missing", "note": ""})


def test_p17_pages_6_the_build_log_shown_in_the_sidebar_names_folders_by_role(own_cache, monkeypatch):
    """Was: a failed build's log was shown as is: the server's cache folder, the lock file."""
    from streamlit.testing.v1 import AppTest

    from alict_app import builds

    line = f"error: {own_cache}/models/quick/parser is being built by pid 1 (lock {own_cache}/models/quick/.l.lock)"
    monkeypatch.setattr(builds, "is_running", lambda target: False)
    monkeypatch.setattr(builds, "exit_code", lambda target: 2)
    monkeypatch.setattr(builds, "log_tail", lambda target, *args, **kwargs: line)
    at = AppTest.from_function(_failed_build_panel, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error)
    assert "building parser failed" in shown and "\\<cache\\>/models/quick/parser" in shown  # markdown-escaped
    assert str(own_cache) not in shown


@pytest.mark.parametrize("damage", ["edited", "cut", "manifest-removed"])
def test_p17_kill_3_a_tampered_nlplego_folder_is_neither_listed_nor_run(cli, tmp_path, own_cache, damage):
    """Was: `<cache>/lego/<key>` had no manifest; an edited cases.jsonl (a DIR direction flipped) was offered on the
    Run page with its old label and run as it stood (fail rate 1.0 for 0.0), a cut one too."""
    from alict_core.lego.pipeline import saved_suites

    seeds = tmp_path / "s.txt"
    seeds.write_text("The movie , which I saw yesterday , is good .\nThe acting , frankly , was terrible .\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--judge", "vader", "--mlm-top-k", "0",
                  "--no-constituency", "--max-nodes", "10")
    assert outcome.code == 0, outcome.err
    [entry] = saved_suites("sentiment")
    cases = Path(entry["path"])
    assert cases.read_text().strip(), "the seeds give DIR tests"
    text = cases.read_text()
    if damage == "edited":  # every DIR direction flipped
        flipped = text.replace('"up"', '"@"').replace('"down"', '"up"').replace('"@"', '"down"')
        assert flipped != text
        cases.write_text(flipped)
    elif damage == "cut":
        cases.write_text(text[: len(text) // 2])
    else:
        (cases.parent / "manifest.json").unlink()
    assert saved_suites("sentiment") == []
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(cases),
                  "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "NLPLego folder")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("folder", ["parses", "expansions", "lego", "quarantine"])
def test_p17_kill_d3_no_output_among_the_derived_caches(cli, tmp_path, saved, own_cache, folder):
    """Was: `compare --json <cache>/parses/x.json` (or any output) was written among ALiCT's checked cache entries,
    where the next reader quarantined it with a warning."""
    outcome = cli("report", str(saved), "--out", str(own_cache / folder / "x.html"))
    assert_clean_error(outcome, 2, f"lies in the {folder} cache")
    assert not (own_cache / folder / "x.html").exists()


@pytest.mark.parametrize("linked", ["0000deadbeef", "../runs", "x" * 500])
def test_p17_pages_d1_an_unknown_run_in_a_link_is_said(tmp_path, monkeypatch, linked):
    """Was: a mistyped, deleted or hostile `?run=` showed the newest run without a word (the link then named it)."""
    import time

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    newest = _store_run(tmp_path / "cache" / "runs", "sentiment-lc04", time.time())
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = linked
    at.run()
    at = at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [c.value for c in at.caption if "named by the link is not a finished run here" in c.value]
    assert notes and newest[:8] in notes[0], [c.value for c in at.caption]


@pytest.mark.parametrize("page", ["pages/failures.py", "pages/report.py"])
def test_p17_pages_d2_a_run_damaged_after_its_first_view_is_not_served_from_memory(tmp_path, monkeypatch, page):
    """Was: the run's tables were cached by run id alone: a part deleted (or a summary edited) after the first view
    was still shown, and its downloads served, until the server restarted."""
    import time

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    run_id = _store_run(tmp_path / "cache" / "runs", "sentiment-lc04", time.time())
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = run_id
    at.run()
    at = at.switch_page(page).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    part = next((tmp_path / "cache" / "runs" / run_id / "results").iterdir())
    part.unlink()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("is missing" in e.value and run_id in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize("variable", ["ALICT_DEFAULT_MLM"])
def test_p17_cli_d_a_pinned_model_neither_cached_nor_reachable_is_refused_first(cli, tmp_path, own_cache,
                                                                              monkeypatch, variable):
    """Was: `ALICT_DEFAULT_MLM=nonexist expand …` offline tried huggingface.co five times 8 s apart (a host call the
    probe had ruled out) before failing; now one message before any work. (A pinned default classifier is checked
    where it is used since pass 39: a run of other models does not use it; tests/robustness/test_pass40_chat.py.)"""
    from alict_core.models import defaults

    monkeypatch.setenv("ALICT_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv(variable, "no-such-org/no-such-model")
    defaults.resolved_defaults(refresh=True)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--max-seeds", "2",
                  "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, variable, "hub is not reachable")
    assert not (tmp_path / "r").exists()


# pass 18 ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url", ["http://db.internal:8080/p", "http://vm/", "https://example.com/v1"])
def test_p18_pages_4_a_browser_endpoint_name_no_entry_allows_is_not_looked_up(monkeypatch, url):
    """Was: any name typed in the browser was resolved (a DNS query to whoever runs the domain) and the refusal
    showed its address (`'vm' is a loopback address (127.0.0.1)`): a map of internal names."""
    import socket

    from alict_core.common.trust import TrustError, check_endpoint

    monkeypatch.delenv("ALICT_ALLOWED_HOSTS", raising=False)

    def no_lookup(*args, **kwargs):
        raise AssertionError(f"looked up {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    with pytest.raises(TrustError, match="not on the allow-list; nothing was sent") as refused:
        check_endpoint(url, loopback=False)
    assert "127.0.0.1" not in str(refused.value)


def _specs_page_of(root: Path, lc: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(root / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.query_params["lc"] = lc
    at.run()
    return at.switch_page("pages/specs.py").run()


@pytest.mark.usefixtures("fake_backends")
def test_p18_pages_2_revert_shows_the_file_as_it_is_at_the_press(tmp_path, monkeypatch):
    """Was: "Revert to the file on disk" put back the text of the last draw: another session's save since was not
    shown (and became the 'opened' text, though it was not)."""
    import re

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    root = Path(__file__).resolve().parents[2]
    saved = tmp_path / "ws" / "specs" / "sentiment" / "sentiment-lc05.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text((root / "specs" / "sentiment" / "sentiment-lc05.yaml").read_text())
    at = _specs_page_of(root, "sentiment-lc05")
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    editor.set_value(editor.value + "\n# my edit\n").run()
    saved.write_text(re.sub(r"(?m)^title: .*$", "title: Saved by another session", saved.read_text()))
    next(b for b in at.button if b.label == "Revert to the file on disk").click().run()
    assert not at.exception, [e.value for e in at.exception]
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    assert "title: Saved by another session" in editor.value and "# my edit" not in editor.value


@pytest.mark.usefixtures("fake_backends")
def test_p18_pages_3_apply_to_yaml_never_reverts_an_edit_sent_with_the_press(tmp_path, monkeypatch):
    """Was: an editor edit sent in the same message as "Apply to YAML" was overwritten by the form's stale values."""
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    root = Path(__file__).resolve().parents[2]
    at = _specs_page_of(root, "sentiment-lc05")
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    edited = editor.value + "\n# my edit sent with the press\n"
    editor.set_value(edited)
    next(b for b in at.button if b.label == "Apply to YAML").click().run()
    assert not at.exception, [e.value for e in at.exception]
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    assert "# my edit sent with the press" in editor.value
    assert any("changed after this form was drawn" in e.value for e in at.error), [e.value for e in at.error]


def test_p18_pages_1_a_link_under_an_allowed_folder_never_shows_where_it_leads(tmp_path, monkeypatch):
    """Was: a workspace-root symlink into another allowed folder showed its resolved target in the refusal
    ("baseline suite /…/hidden/secret-name.json not found"), a server path the user never typed."""
    import os

    from alict_app import reporting
    from alict_app.formatting import without_server_paths
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import browser_suite_path

    (tmp_path / "ws").mkdir()
    (tmp_path / "hidden").mkdir()
    os.symlink(tmp_path / "hidden" / "secret-name.json", tmp_path / "ws" / "link.json")
    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", f"{tmp_path / 'ws'}{os.pathsep}{tmp_path / 'hidden'}")
    with pytest.raises(AlictError) as refused:
        reporting.import_baseline(browser_suite_path(str(tmp_path / "ws" / "link.json")), "sentiment")
    shown = without_server_paths(str(refused.value))
    assert str(tmp_path) not in shown and "<allowed folder>/secret-name.json" in shown


BAD_SEED_ROWS = {
    "segment-end-huge": ({"segments": [{"group": "x", "source_id": "s", "start": 0, "end": 1e20}]}, "segments[0]"),
    "segment-start-bool": ({"segments": [{"group": "x", "source_id": "s", "start": True, "end": 1}]}, "segments[0]"),
    "segments-a-text": ({"segments": "abc"}, "segments must be a list"),
    "span-huge": ({"protected_spans": [[0, 1e20]]}, "protected_spans[0]"),
    "span-an-object": ({"protected_spans": [{"start": True, "end": "x"}]}, "protected_spans[0]"),
    "expected-a-text": ({"expected": "neutral"}, "expected must be an object"),
    "expected-kind-unknown": ({"expected": {"kind": "nope"}}, "expected"),
    "label-unknown": ({"expected": {"kind": "label", "labels": ["bogus"], "tolerance": None}}, "'bogus'"),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("change,needle", BAD_SEED_ROWS.values(), ids=BAD_SEED_ROWS.keys())
def test_p18_cli_1_a_damaged_seed_row_is_one_message(cli, tmp_path, own_cache, command, change, needle):
    """Was: segments / protected_spans of another shape gave "internal error (TypeError …)" (exit 3) in `validate`
    and `run`; `validate` accepted an unknown expectation kind or label that `run` refused only later."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row(**change)) + "\n")
    argv = ["validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds)] if command == "validate" else \
        ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
         str(tmp_path / "r")]
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, "s.jsonl:1", needle)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["validate", "run", "fidelity"])
def test_p18_cli_2_an_expansion_of_the_other_task_is_refused(cli, tmp_path, own_cache, command):
    """Was: an expansion row naming task hate_speech was counted as a sentiment expansion (run, validate, fidelity),
    though --seeds refuses the same."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    exps = tmp_path / "x.jsonl"
    exps.write_text(json.dumps({"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04", "task": "hate_speech",
                                "text": "a very fine film", "accepted": True}) + "\n")
    argv = {"validate": ["validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds)],
            "run": ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds),
                    "--out", str(tmp_path / "r")],
            "fidelity": ["fidelity", "--task", "sentiment", "--lc", "4"]}[command]
    outcome = cli(*argv, "--expansions", str(exps))
    assert_clean_error(outcome, 2, "x.jsonl:1", "names task 'hate_speech'")


def test_p18_cli_2_a_suite_case_of_the_other_task_is_refused(cli, tmp_path, own_cache):
    suite = tmp_path / "cases.jsonl"
    suite.write_text(json.dumps({"case_id": "c1", "lc_id": "x", "task": "hate_speech", "kind": "seed",
                                 "seed_id": "c1", "text": "a fine film", "test_type": "MFT",
                                 "expected": {"kind": "label", "labels": ["normal"], "tolerance": None}}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite),
                  "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "names task 'hate_speech'")


def test_p18_cli_3_validate_refuses_an_expansion_of_another_lc_than_its_seed(cli, tmp_path, own_cache):
    """Was: `run` refused it, `validate` counted it under its seed's LC."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    exps = tmp_path / "x.jsonl"
    exps.write_text(json.dumps({"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc01", "task": "sentiment",
                                "text": "a very fine film", "accepted": True}) + "\n")
    outcome = cli("validate", "--task", "sentiment", "--lc", "4", "--lc", "1", "--seeds", str(seeds),
                  "--expansions", str(exps))
    assert_clean_error(outcome, 2, "its seed is of sentiment-lc04")


@pytest.mark.parametrize("figures", [{"minilm-sst": {"test": "x"}}, {"minilm-sst": "x"}, "x",
                                     {"minilm-sst": {"test": {"accuracy": True}}}])
def test_p18_cli_5_build_report_shows_edited_figures_without_a_crash(cli, tmp_path, figures):
    """Was: a classifiers manifest whose figures were edited to another shape: `build --report` exit 3
    (AttributeError: 'str' object has no attribute 'get'); `accuracy: true` was printed as `acc True`."""
    from alict_core.training.targets import build
    from tests.test_builds import _fake_trainer

    root = tmp_path / "models"
    build("classifiers", "quick", root, trainer=_fake_trainer({"minilm-sst/head.npz": "h"}), log=lambda _: None)
    manifest = root / "quick" / "classifiers" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "figures": figures}))
    outcome = cli("build", "--report", "--out", str(root))
    assert outcome.code == 0 and "Traceback" not in outcome.err, outcome.err
    assert "acc True" not in outcome.out


def test_p18_cli_6_an_artefact_copied_into_another_profile_is_broken(cli, tmp_path):
    """Was: a quick parser copied into full/ was listed (and used) as the full build; `build missing --profile full`
    skipped it."""
    import shutil

    from alict_core.training.targets import build, missing
    from tests.test_builds import _fake_trainer

    root = tmp_path / "models"
    build("parser", "quick", root, trainer=_fake_trainer({"benepar_model.bin": "p"}), log=lambda _: None)
    shutil.copytree(root / "quick" / "parser", root / "full" / "parser")
    outcome = cli("build", "--report", "--out", str(root))
    assert outcome.code == 0, outcome.err
    assert "BROKEN" in outcome.out and "'quick' profile's artefact, not 'full'" in outcome.out
    assert "parser" in missing("full", root)


@pytest.mark.parametrize("argv", [["harden", "versions"], ["build", "--report"]])
def test_p18_cli_7_read_only_listings_create_no_folder(cli, tmp_path, monkeypatch, argv):
    """Was: `harden versions` created <cache>/models/versions and `build --report` <cache>/models."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
    assert cli(*argv).code == 0
    assert not (cache / "models").exists()


def test_p18_cli_8_seeds_lc_picks_among_the_given_spec_files(cli, tmp_path, own_cache):
    """Was: `seeds --spec lc01.yaml --lc lc4` wrote lc01's seeds without a word."""
    spec = Path(__file__).resolve().parents[2] / "specs" / "sentiment" / "sentiment-lc01.yaml"
    outcome = cli("seeds", "--task", "sentiment", "--spec", str(spec), "--lc", "lc4", "--max", "2",
                  "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "--lc sentiment-lc04 is not among the --spec files")
    outcome = cli("seeds", "--task", "sentiment", "--spec", str(spec), "--spec", str(spec), "--out",
                  str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "twice")
    assert "PosixPath" not in outcome.err


def test_p18_cli_10_overflowing_probabilities_are_refused_by_row(tmp_path):
    from alict_core.common.errors import AlictError
    from alict_core.models.static import StaticPredictionsModel

    file = tmp_path / "p.jsonl"
    file.write_text(json.dumps({"text": "a", "negative": 1e308, "neutral": 1e308, "positive": 1e308}) + "\n")
    with pytest.raises(AlictError, match=r"p.jsonl:1: probabilities sum to inf"):
        StaticPredictionsModel(file, "sentiment")


def test_p18_kill_d3_no_output_among_the_workspace_specs(cli, tmp_path, own_cache, saved):
    """Was: `report --out <workspace>/specs/sentiment/zz.yaml` was accepted; every later run of the task failed on
    it."""
    from alict_core.common.config import workspace_dir

    target = workspace_dir() / "specs" / "sentiment" / "zz.yaml"
    outcome = cli("report", str(saved), "--out", str(target))
    assert_clean_error(outcome, 2, "workspace's specs")
    assert not target.exists()


# pass 19 ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entries", ["203.0.113.0/24", "10.0.0.5,api.example.com"])
@pytest.mark.parametrize("url", ["http://vm:8080/p", "http://localhost:1/v1", "http://example.com/x"])
def test_p19_pages_1_a_browser_name_is_not_looked_up_beside_ip_entries(monkeypatch, entries, url):
    """Was: one IP or CIDR entry on the allow-list made every host name typed in the browser a DNS lookup, and the
    refusal showed its address ('vm' is a loopback address (127.0.0.1)) or whether it exists."""
    import socket

    from alict_core.common.trust import TrustError, check_endpoint

    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", entries)

    def no_lookup(*args, **kwargs):
        raise AssertionError(f"looked up {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    with pytest.raises(TrustError, match="not on the allow-list; nothing was sent") as refused:
        check_endpoint(url, loopback=False)
    assert "127.0.0.1" not in str(refused.value) and "cannot be resolved" not in str(refused.value)


@pytest.mark.parametrize("change", [{"source_ids": 5}, {"slots": "abc"}, {"slots": [1]}, {"source_labels": "neg"},
                                    {"rule": 5}], ids=["source-ids-a-number", "slots-a-text", "slots-a-list",
                                                       "source-labels-a-text", "rule-a-number"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_p19_cli_1_seed_provenance_of_another_shape_is_one_message(cli, tmp_path, own_cache, command, change):
    """Was: `source_ids: 5` or `slots: "abc"` in a seed row: "internal error (TypeError …)", exit 3."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row(**change)) + "\n")
    argv = ["validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds)] if command == "validate" else \
        ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds), "--out",
         str(tmp_path / "r")]
    assert_clean_error(cli(*argv), 2, "s.jsonl:1", next(iter(change)))


@pytest.mark.parametrize("change", [{"words": [1, 2]}, {"words": 5}, {"masked": "x"},
                                    {"masked": {"mask_positions": "x"}}],
                         ids=["words-numbers", "words-a-number", "masked-a-text", "positions-a-text"])
@pytest.mark.parametrize("command", ["validate", "run", "fidelity"])
def test_p19_cli_2_expansion_insertions_of_another_shape_are_one_message(cli, tmp_path, own_cache, command, change):
    """Was: `words: [1, 2]` or `masked: "x"` in an accepted expansion row: exit 3 in validate, run and fidelity."""
    assert_clean_error(cli(*expansion_argv(tmp_path, command, change)), 2, "x.jsonl:1", next(iter(change)))


def _rehashed(folder: Path, name: str, text: str) -> None:
    """``folder/name`` replaced by ``text`` and its sha256 written into the folder's manifest (a crafted artefact)."""
    import hashlib

    (folder / name).write_text(text)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("extra", ["x", {"validity": [1]}, {"validity": {"excluded": 5}}])
def test_p19_cli_3_a_run_whose_extra_has_another_shape_is_one_message(cli, tmp_path, saved, extra):
    """Was: `report` of a run whose meta.json `extra` was edited (and re-hashed into its manifest): exit 3."""
    meta = json.loads((saved / "meta.json").read_text())
    _rehashed(saved, "meta.json", json.dumps({**meta, "extra": extra}))
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r.html"))
    assert "Traceback" not in outcome.err and outcome.code in (0, 2), outcome.err
    if outcome.code == 2:
        assert_clean_error(outcome, 2, "cannot be read")


@pytest.mark.parametrize("name", ["../../../../../../etc/hostname", "/etc/hostname", "cases/../../x"])
def test_p19_cli_4_a_manifest_never_names_a_file_outside_its_folder(cli, tmp_path, saved, name):
    """Was: a manifest naming '../../etc/hostname' (or '/etc/hostname') with its real sha256: the file was opened and
    hashed (an oracle for any file) and its folder listed in the message ('/etc/PackageKit is not one of …')."""
    import hashlib

    manifest = json.loads((saved / "manifest.json").read_text())
    target = Path("/etc/hostname")
    manifest["files"][name] = hashlib.sha256(target.read_bytes()).hexdigest() if target.is_file() else "0" * 64
    (saved / "manifest.json").write_text(json.dumps(manifest))
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "not a file inside the artefact")
    assert "/etc/" not in outcome.err.replace(name, "")


def test_p19_cli_4_a_link_in_an_artefact_leading_out_is_refused(cli, tmp_path, saved):
    import hashlib
    import os

    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, saved / "extra.txt")
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["files"]["extra.txt"] = hashlib.sha256(outside.read_bytes()).hexdigest()
    (saved / "manifest.json").write_text(json.dumps(manifest))
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "leads outside the artefact's folder")
