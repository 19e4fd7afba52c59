"""Pass 35 rows (the p35cli, p35pages and p35kill helpers; fixed by the lead): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("tail", ["j.sqlite%00x", "j%00.sqlite"])
def test_p35_cli_1_a_review_database_url_with_a_nul_is_refused(cli, tmp_path, fresh_engines, tail):
    """Was (the p35cli helper): `review sample --db 'sqlite:///<dir>/j.sqlite%00x'` (or $ALICT_REVIEW_DB_URL, or
    `review export`) said "internal error (ValueError: embedded null byte)" (exit 3)."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    folder = tmp_path / "db"
    folder.mkdir()
    outcome = cli("review", "sample", "--db", f"sqlite:///{folder}/{tail}", "--name", "t", "--task", "sentiment",
                  "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2, "NUL")
    assert list(folder.iterdir()) == []


def test_p35_cli_2_a_read_only_review_command_with_a_nul_in_the_url_is_refused(cli, tmp_path, fresh_engines):
    """Neighbour of p35cli 1: `review export --db 'sqlite:///<dir>/j%00.sqlite' t1 --out x.csv` (exit 3)."""
    outcome = cli("review", "export", "--db", f"sqlite:///{tmp_path}/j%00.sqlite", "t1",
                  "--out", str(tmp_path / "x.csv"))
    assert_clean_error(outcome, 2, "NUL")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("check", ["check_output_file", "check_output_dir", "check_new_database"])
def test_p35_cli_3_an_output_path_with_a_nul_is_refused_in_words(tmp_path, check):
    """Neighbour of p35cli 1: an output path holding a NUL (a URL's '%00' decoded, a typed path) reached os.path and
    said "embedded null byte" as an internal error."""
    from alict_core.common import manifest
    from alict_core.common.errors import AlictError

    with pytest.raises(AlictError, match="NUL"):
        getattr(manifest, check)(f"{tmp_path}/a\x00b", "--out")


@pytest.mark.usefixtures("fake_backends")
def test_p35_pages_1_a_run_stopped_by_a_page_visit_is_said_and_cancel_then_says_nothing_runs():
    """Was (the p35pages helper, Chromium): ▶ Run of 562 cases, then a click on Specs while it ran (Streamlit stops
    the script: the run was dropped before its first shard, without a word), then back on Run and "■ Cancel": the
    page said "Run cancelled. Finished batches are cached: running again resumes." with nothing running (the flag
    set before the run was left set by the stopped script). AppTest cannot stop a script mid-run: the row leaves the
    session as the stopped script left it."""
    from alict_app.run_view import RUN_ACTIVE
    from tests.test_app import start

    at = start()
    at.switch_page("pages/run.py").run()
    at.session_state[RUN_ACTIVE] = "sentiment"  # what a run stopped by a page switch leaves behind
    at.switch_page("pages/specs.py").run()
    at.switch_page("pages/run.py").run()
    assert any("stopped before it finished" in i.value for i in at.info), [i.value for i in at.info]
    at.button(key="run_cancel").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("Run cancelled" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("nothing to cancel" in i.value for i in at.info)


def test_p35_pages_2_another_session_never_spends_a_users_endpoint_secret(tmp_path, monkeypatch):
    """Was (the p35pages helper): a run with an endpoint model whose URL holds ?token= (added by user A on the Run
    page, or from the command line); user B, in another browser session, opened the run on Failures and ticked
    "Explain this case" for that model: the server sent ~11 requests to A's endpoint with A's token
    (runs.run_model_ref rebuilt the model from the shared run's request.json). B never gave nor saw the token."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from streamlit.testing.v1 import AppTest

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            seen.append(self.path)
            out = json.dumps({"probabilities": [[0.2, 0.3, 0.5] for _ in body.get("texts", [])]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cache = tmp_path / "cache"
        monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
        monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
        url = f"http://127.0.0.1:{server.server_port}/p?token=SECRETTOK"
        a = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240).run()  # user A
        a.switch_page("pages/run.py").run()
        a.selectbox(key="um_kind").set_value("http").run()
        a.text_input(key="um_url").input(url)
        a.text_input(key="um_label").input("aliceprivate")
        next(b for b in a.button if b.label == "Add model").click().run()
        a.sidebar.multiselect(key="models").set_value(["vader"]).run()
        a.multiselect(key="run_lcs").set_value(["sentiment-lc04"]).run()
        a.number_input(key="max_seeds").set_value(2).run()
        a.button(key="run_go").click().run()
        assert not a.exception and not a.error, [e.value for e in [*a.exception, *a.error]]
        (folder,) = (cache / "runs").iterdir()
        run_id = folder.name
        case = json.loads((folder / "cases" / "part-00000.jsonl").read_text().splitlines()[0])["case_id"]
        assert any("SECRETTOK" in p for p in seen)  # A's own run used A's endpoint
        seen.clear()
        at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240)
        for key, value in {"task": "sentiment", "run": run_id, "outcome": "all", "model": "aliceprivate",
                           "case": f"{case}::aliceprivate"}.items():
            at.query_params[key] = value
        at.run()
        at.switch_page("pages/failures.py").run()
        at.toggle(key="explain_on").set_value(True).run()
        assert not at.exception, [e.value for e in at.exception]
        assert not [p for p in seen if "SECRETTOK" in p], seen
        assert any("added in another session" in e.value for e in at.error), [e.value for e in at.error]
    finally:
        server.shutdown()


@pytest.mark.parametrize("flag", ["--seeds", "--lc"])
def test_p35_cli_4_an_empty_lego_seed_source_is_bad_input(cli, tmp_path, flag):
    """p35cli: `lego --seeds ''` (or `--lc ''`) said "internal error (TypeError: '<=' not supported between instances
    of 'int' and 'NoneType')" (exit 3): the empty value is falsy, so commands/lego.py:_seeds took the --corpus-sample
    branch with N=None."""
    outcome = cli("lego", "--task", "sentiment", flag, "", "--judge", "vader", "--mlm-top-k", "0",
                  "--out", str(tmp_path / "lego"))
    assert_clean_error(outcome, 2)
    assert not (tmp_path / "lego").exists()


def test_p35_cli_5_an_empty_run_argument_is_not_the_newest_run(cli, tmp_path, run_store):
    """p35cli: `report '' --out x.html` (an unset shell variable) wrote the report of the newest stored run, exit 0,
    where `compare ''`, `explain --results ''` and `harden export --run ''` refuse an empty run (and pass 34 refused
    `--ray-address ''` for the same reason). `review sample --cases ''` takes the newest run the same way."""
    outcome = cli("report", "", "--out", str(tmp_path / "x.html"))
    assert_clean_error(outcome, 2)
    assert not (tmp_path / "x.html").exists()


def test_p35_cli_6_validate_show_prints_case_texts_escaped(cli, tmp_path):
    """p35cli: `validate --show` printed a flagged seed's text raw ("\\x1b]0;PWN\\x07\\x1b[2J" set the terminal's
    title and cleared the screen; U+202E reversed the line), where `explain --text` and `parse` print such texts
    escaped. (`review writeback`'s preview prints rejected case texts raw the same way.)"""
    row = {"id": "s1", "lc_id": "sentiment-lc04", "task": "sentiment", "test_type": "MFT",
           "text": "This is not not a \x1b]0;PWN\x07\x1b[2Jfilm \u202e .",
           "expected": {"kind": "one_of", "labels": ["positive", "neutral"], "tolerance": None}}
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(row) + "\n")
    outcome = cli("validate", "--task", "sentiment", "--lc", "4", "--seeds", str(seeds), "--show", "5")
    assert "double_negation" in outcome.out, outcome.out[-600:]
    assert "\x1b" not in outcome.out + outcome.err and "\u202e" not in outcome.out + outcome.err


def test_p35_cli_7_lego_seed_ids_are_checked_like_case_ids(cli, tmp_path):
    """p35cli: `lego --seeds` took a JSONL seed id "a\\x1b[2Jb" and wrote it into trees.jsonl and cases.jsonl
    (case_id/seed_id "a\\x1b[2Jb-n1"), which `run --suite` then refused ("contains the control character U+001B"):
    the pass-34 id check (CheckList, cases rows, seeds, expansions, HateCheck) misses lego's seed files."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps({"id": "a\x1b[2Jb", "text": "The film was good in the end ."}) + "\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--judge", "vader", "--mlm-top-k", "0",
                  "--out", str(tmp_path / "lego"))
    assert_clean_error(outcome, 2, "U+001B")
    assert not (tmp_path / "lego").exists()


@pytest.mark.parametrize("option", ["--db", "--cases"])
def test_p35_cli_8_an_empty_review_option_is_not_the_default(cli, tmp_path, run_store, fresh_engines, option):
    """Was (the p35cli helper): `review sample --db ''` wrote the default <cache>/review/review.sqlite, and `--cases ''`
    took the newest run (an unset shell variable picked another input without a word)."""
    argv = {"--db": ["--db", "", "--cases", str(run_store)], "--cases": ["--cases", ""]}[option]
    outcome = cli("review", "sample", *argv, "--name", "t", "--task", "sentiment", "--size", "3", "--sets", "1",
                  "--k", "1")
    assert_clean_error(outcome, 2, f"{option} is empty")


def test_p35_cli_9_a_nul_in_a_postgresql_url_is_refused():
    """Was (the p35cli helper): `review stats --db 'postgresql://u:p%00@127.0.0.1:9/db'` connected to port 5432 (the
    driver cut its settings at the NUL: the port, the database and sslmode=require were dropped without a word)."""
    from alict_core.review.store import ReviewError, check_sqlite_url

    for url in ("postgresql://u:p%00@127.0.0.1:9/db", "postgresql://u@127.0.0.1:9/db%00?sslmode=require"):
        with pytest.raises(ReviewError, match="NUL"):
            check_sqlite_url(url)


def test_p35_kill_1_an_output_that_is_a_mount_point_is_said_in_words():
    """Was (the p35kill helper, a tmpfs mounted at --out, as a container volume is): `run --out <mount point>`
    (and seeds/lego --out, report --export, a bind-mounted --out file) said "internal error (OSError: [Errno 16]
    Device or resource busy ...)" (exit 3): a mount point cannot be renamed away."""
    import errno

    from alict_core.common.faults import environment_fault

    said = environment_fault(OSError(errno.EBUSY, "Device or resource busy", "/out"))
    assert said and "mount point" in said and "inside it" in said


PAGE_FAULT = """
import errno

from alict_app.guard import guarded

with guarded("running the tests"):
    raise OSError(errno.{fault}, "the fault", "/cache/runs/.stream.tmp-ab12")
"""


@pytest.mark.parametrize("fault", ["ENOSPC", "EROFS"])
def test_p35_kill_2_a_page_says_a_full_or_read_only_cache_as_a_problem(fault):
    """Was (the p35kill helper): the Run page's press with the cache on a full disk (or a read-only mount), and the
    Expansions page on a read-only cache, said "Unexpected error ... OSError: [Errno 28] No space left on device"
    with a traceback, where the CLI says it in one line."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(PAGE_FAULT.format(fault=fault), default_timeout=60).run()
    assert [e.value for e in at.error] and all("Problem while" in e.value for e in at.error)
    assert not at.expander
