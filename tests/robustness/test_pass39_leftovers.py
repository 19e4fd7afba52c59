"""Pass-37 leftovers fixed after pass 38 (docs/ROBUSTNESS.md "Pass 37": the p37cli cosmetic list and the p37kill
notes). Each row failed before its fix unless it says it is a control."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.robustness.test_pass39_endpoint import _seeds


def test_p37_cli_7a_a_negative_zero_threshold_is_zero():
    """Was: `--fail-threshold 4=-0` was taken and printed as "threshold -0.000"."""
    from alict_core.commands.run import parse_thresholds

    value = parse_thresholds(["4=-0"])["4"]
    assert value == 0.0 and str(value) == "0.0"


def test_p37_cli_7b_the_model_profile_is_listed_one_way(monkeypatch):
    """Was: an empty ALICT_MODEL_PROFILE was told "one of full, quick", a wrong one "full, quick, micro, legacy"."""
    from alict_core.common.errors import AlictError
    from alict_core.models.artefacts import candidates

    said = []
    for value in ("", "huge"):
        monkeypatch.setenv("ALICT_MODEL_PROFILE", value)
        with pytest.raises(AlictError) as refused:
            candidates("parser")
        said.append(str(refused.value).rsplit("one of ", 1)[1])
    assert said[0] == said[1]


def test_p37_cli_7c_a_split_of_huge_shares_is_their_ratio():
    """Was: `--split 1e308:1e308:1e308` was refused as "expected three finite … numbers" (they are: their sum
    overflowed). Their ratio is 1:1:1."""
    from alict_core.harden.split import SplitRatios

    ratios = SplitRatios.parse("1e308:1e308:1e308")
    assert ratios.train == pytest.approx(1 / 3) and ratios.test == pytest.approx(1 / 3)


def test_p37_cli_7d_a_broken_ipv6_database_host_is_said_in_words(cli):
    """Was: "invalid literal for int() with base 10: ':1:5'" (Python's words) for an unclosed IPv6 bracket."""
    outcome = cli("review", "stats", "--db", "postgresql+psycopg://u:pw@[::1:5/db")
    assert outcome.code == 2
    assert "host or port cannot be read" in outcome.err and "invalid literal" not in outcome.err
    assert "pw" not in outcome.err


def test_p37_cli_7e_stored_predictions_are_not_explained_as_missing_texts(cli, tmp_path):
    """Was: "model 'ok': no stored prediction for 16 texts, e.g. '.'" — true, yet a stored-predictions model can
    never be explained (an explanation asks about perturbed copies); said as that."""
    stored = tmp_path / "ok.csv"
    stored.write_text("text,label\nThis is not so bad .,positive\n")
    outcome = cli("explain", "--text", "This is not so bad .", "--model", f"static:path={stored},task=sentiment")
    assert outcome.code == 2 and "perturbed copies" in outcome.err and "no stored prediction" not in outcome.err


def test_p37_cli_7f_a_models_task_other_than_the_runs_is_said(cli, tmp_path):
    """Was: `run --task sentiment --models static:path=ok.csv,task=hate_speech` said the file needs hate-speech
    label columns; the task is what is wrong."""
    stored = tmp_path / "ok.csv"
    stored.write_text("text,label\na fine film 0,positive\n")
    outcome = cli("run", "--task", "sentiment", "--models", f"static:path={stored},task=hate_speech", "--seeds",
                  str(_seeds(tmp_path, 1)), "--quiet")
    assert outcome.code == 2 and "is not the run's task sentiment" in outcome.err


def test_p37_cli_7g_seeds_of_another_task_are_not_merged_into_a_folder(cli, tmp_path):
    """Was: `seeds --task hate_speech --out W` merged a hate-speech LC file into a folder of sentiment seeds."""
    folder = tmp_path / "seeds"
    folder.mkdir()
    row = {"id": "s0", "lc_id": "sentiment-lc01", "text": "a fine film", "test_type": "MFT",
           "expected": {"kind": "label", "labels": ["positive"]}}
    (folder / "sentiment-lc01.jsonl").write_text(json.dumps(row) + "\n")
    outcome = cli("seeds", "--task", "hate_speech", "--lc", "1", "--out", str(folder))
    assert outcome.code == 2 and "LC files of task sentiment" in outcome.err
    assert sorted(p.name for p in folder.iterdir()) == ["sentiment-lc01.jsonl"]


def test_p37_cli_7h_explain_of_a_run_of_two_models_asks_which(cli, tmp_path, own_cache):
    """Was: `explain --results <run of two models> --lc 1` explained the first model only, while the help said
    "the run's model"; now it asks for --model, and a --model the run lacks is named."""
    run = tmp_path / "run"
    made = cli("run", "--task", "sentiment", "--models", "vader,textblob", "--seeds", str(_seeds(tmp_path, 2)),
               "--quiet", "--out", str(run), "--no-story")
    assert made.code in (0, 1), made.err[-400:]
    asked = cli("explain", "--results", str(run), "--lc", "1")
    assert asked.code == 2 and "name the one to explain with --model" in asked.err and "'textblob'" in asked.err
    wrong = cli("explain", "--results", str(run), "--lc", "1", "--model", "bert")
    assert wrong.code == 2 and "is not a model of the run" in wrong.err


def test_p37_kill_note_a_finished_run_left_beside_its_folder_by_a_kill_is_removed(cli, tmp_path, own_cache):
    """Was (p37kill note): a kill right after a re-write's swap left the whole old run as `.run.pending` for a week.
    The next command that finds the run finished removes it (under the run's lock: no writer of it is alive)."""
    run = tmp_path / "run"
    seeds = str(_seeds(tmp_path, 2))
    assert cli("run", "--task", "sentiment", "--models", "vader", "--seeds", seeds, "--quiet", "--out", str(run),
               "--no-story").code in (0, 1)
    shutil.copytree(run, tmp_path / ".run.pending")
    assert cli("run", "--task", "sentiment", "--models", "vader", "--seeds", seeds, "--quiet", "--out", str(run),
               "--no-story").code in (0, 1)
    assert not (tmp_path / ".run.pending").exists() and (run / "meta.json").is_file()


def test_p37_kill_note_a_damaged_own_database_is_called_damaged(cli, review_db, tmp_path, fresh_engines):
    """Was (p37kill note): a review database with one page overwritten was "another application's database or
    another version's"; it is called damaged."""
    import sqlite3

    from alict_core.review.store import dispose_engines

    dispose_engines()  # the sample's connections closed
    path = tmp_path / "review.sqlite"
    with sqlite3.connect(path) as connection:  # the tables into the file itself (out of the WAL)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")
    connection.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) >= 3 * page
    data[page:2 * page] = b"\xff" * page  # the second page: a table's b-tree
    path.write_bytes(bytes(data))
    outcome = cli("review", "stats", "--db", f"sqlite:///{path}")
    assert outcome.code == 2, outcome.err[-400:]
    assert "is damaged (" in outcome.err and "another application's" not in outcome.err
    assert "not a SQLite database" not in outcome.err


def test_p39_kill_13_a_default_output_held_by_another_report_is_said_as_the_default(cli, saved_run, tmp_path,
                                                                                    monkeypatch):
    """Was (p39kill, cosmetic): two `report` commands at once without --out: the second was refused for "--out
    'alict-report.html'", an option nobody gave, as a "folder". It names the default and a path to give."""
    from alict_core.common.outlock import exclusive_output

    monkeypatch.chdir(tmp_path)
    with exclusive_output("alict-report.html"):
        outcome = cli("report", str(saved_run))
    assert outcome.code == 2 and "the default --out (none was given)" in outcome.err
    assert "folder" not in outcome.err and "give another path" in outcome.err


def test_p39_pages_9_the_server_log_a_page_points_to_holds_the_answer(capsys):
    """Was (p39pages, low): "the answer is in the server log", but the app configured no handler for alict_core:
    the server's output held nothing. Its warnings are lines on the server's stderr, escaped, added once."""
    import logging

    from alict_app.server_log import ServerLogHandler, configure_server_log
    from alict_core.models.remote import refused_answer

    logger = logging.getLogger("alict_core")
    before = list(logger.handlers)
    cli_handlers = [h for h in before if type(h).__name__ == "_StderrHandler"]
    try:
        for handler in cli_handlers:
            logger.removeHandler(handler)
        configure_server_log()
        configure_server_log()
        assert sum(isinstance(h, ServerLogHandler) for h in logger.handlers) == 1
        capsys.readouterr()
        message = str(refused_answer("auth", "http://127.0.0.1:9/x", 401, "not 200 OK", "bad key \x1b[31mred"))
        err = capsys.readouterr().err
    finally:
        for handler in list(logger.handlers):
            if handler not in before:
                logger.removeHandler(handler)
        for handler in cli_handlers:
            logger.addHandler(handler)
        for name in ("alict_app",):
            for handler in list(logging.getLogger(name).handlers):
                if isinstance(handler, ServerLogHandler):
                    logging.getLogger(name).removeHandler(handler)
    assert "logged as a warning" in message and "needs credentials" in message
    assert "answered HTTP 401" in err and "bad key" in err and "\x1b" not in err


def _small_cases_file(tmp_path):
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    return cases


def test_p39_cli_11a_an_empty_required_option_is_not_told_to_be_left_out(cli, tmp_path):
    """Was (p39cli, cosmetic): `harden export --run ""` said "leave it out for the default", and --run is required."""
    outcome = cli("harden", "export", "--run", "", "--lcs", "1", "--out", str(tmp_path / "h"))
    assert outcome.code == 2 and "--run is empty: give a value" in outcome.err
    assert "leave it out for the default" not in outcome.err


def test_p39_cli_11b_the_default_sets_are_lowered_without_a_warning(cli, tmp_path, fresh_engines):
    """Was (p39cli, cosmetic): "warning: --sets 10: …" on every small sample, for a default the user never gave; a
    --sets the user gave is still said (row p38_cli_13)."""
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(_small_cases_file(tmp_path)))
    assert outcome.code == 0, outcome.err
    assert "--sets" not in outcome.err


def test_p39_cli_11c_an_unfinished_run_names_the_command_that_resumes_it(cli, tmp_path, own_cache):
    """Was (p39cli, cosmetic): `report <unfinished run>` said "run the same command again to resume it": `report`
    again resumes nothing. It names `run`."""
    run = tmp_path / "run"
    assert cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(_seeds(tmp_path, 2)), "--quiet",
               "--no-story", "--out", str(run)).code in (0, 1)
    (run / "meta.json").unlink()
    outcome = cli("report", str(run), "--out", str(tmp_path / "r.html"))
    assert outcome.code == 2 and "the `run` command that made it again" in outcome.err


def test_p39_cli_11d_ctrl_c_of_expand_speaks_of_no_endpoint_shards(cli, monkeypatch):
    """Was (p39cli, cosmetic): Ctrl-C of `expand` spoke of "a run's finished shards" of a model endpoint."""
    from alict_core.cli import INTERRUPTED_NOTES

    assert "endpoint" not in INTERRUPTED_NOTES["expand"] and "endpoint" in INTERRUPTED_NOTES["run"]


def test_p39_cli_11f_an_endpoint_runs_pairs_are_refused_in_words(cli, tmp_path, own_cache):
    """Was (p39cli, cosmetic): `explain --results <endpoint run> --model c` called the run's own model unknown."""
    from tests.robustness.test_pass37_table import _Redeployable

    service = _Redeployable("negative")
    try:
        assert cli("run", "--task", "sentiment", "--models", f"http:url={service.url},name=c", "--seeds",
                   str(_seeds(tmp_path, 2)), "--quiet", "--no-story", "--out", str(tmp_path / "run")).code in (0, 1)
        outcome = cli("explain", "--results", str(tmp_path / "run"), "--lc", "1", "--model", "c")
    finally:
        service.close()
    assert outcome.code == 2 and "is a service (an endpoint)" in outcome.err and "unknown model" not in outcome.err


def test_p39_cli_11g_a_plain_path_as_database_gets_the_url_form(cli, tmp_path):
    """Was (p39cli, cosmetic): `--db /path/rv.sqlite` said "Could not parse SQLAlchemy URL"."""
    outcome = cli("review", "stats", "--db", str(tmp_path / "rv.sqlite"))
    assert outcome.code == 2 and "sqlite:////" in outcome.err and "SQLAlchemy" not in outcome.err


def test_p39_cli_11h_a_write_back_never_writes_into_an_empty_file(cli, tmp_path, fresh_engines):
    """Was (p39cli, low): `review writeback --confirm` on a zero-byte file wrote the schema and a rule into it."""
    empty = tmp_path / "e.sqlite"
    empty.write_bytes(b"")
    outcome = cli("review", "writeback", "--task", "sentiment", "--confirm", "--by", "lead", "--db",
                  f"sqlite:///{empty}")
    assert outcome.code == 2 and "an empty file" in outcome.err
    assert empty.stat().st_size == 0


def test_p39_pages_10_the_advice_to_add_an_endpoint_names_its_display_name(monkeypatch):
    """Was (p39pages, low): "add it on the Run page (Add your own model, with its URL)" — followed as said, the same
    refusal came back: only the run's display name matches. The advice names it."""
    import streamlit as st

    from alict_app import runs
    from alict_core.common.errors import AlictError

    monkeypatch.setattr(runs, "run_info", lambda key: {"request": {"models": [
        {"name": "http", "kwargs": {"url": "http://127.0.0.1:9/p", "name": "stub"}}]}})
    monkeypatch.setattr(st, "session_state", {}, raising=False)
    with pytest.raises(AlictError) as refused:
        runs.run_model_ref("r", "stub")
    assert "display name 'stub'" in str(refused.value)


@pytest.mark.parametrize("name", ["cases.csv", "results.TSV", "t.tab"])
def test_p39_cli_14_lego_takes_no_table_as_sentences(cli, tmp_path, name):
    """Was (p39cli, low): `lego --seeds cases.csv` took each raw line of the table, its header too, as a seed."""
    table = tmp_path / name
    table.write_text("case_id,lc_id,text\nc0,sentiment-lc01,a fine film\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(table), "--out", str(tmp_path / "lego"))
    assert outcome.code == 2 and "a table is no list of sentences" in outcome.err
    assert not (tmp_path / "lego").exists()


@pytest.mark.parametrize("download", ["jsonl", "csv"])
def test_p39_pages_8_the_report_pages_own_downloads_are_said_in_the_pages_terms(saved_run, tmp_path, download):
    """Was (p39pages, low): the Report page's own "results CSV" given back as a baseline was told to "give the
    cases.jsonl written beside it" (nothing is beside a download), its "results JSONL" refused in validator words.
    Both are said as this page's downloads, with the download to use instead."""
    from alict_app import reporting, runs
    from alict_core.common.csvsafe import csv_text
    from alict_core.common.errors import AlictError
    from alict_core.runner import RunResult

    cases = runs.cases_frame(RunResult.load(saved_run))
    stored = tmp_path / f"stored.{download}"
    stored.write_text(cases.to_json(orient="records", lines=True, force_ascii=False) if download == "jsonl"
                      else csv_text(cases))
    with pytest.raises(AlictError) as refused:
        reporting.import_baseline(stored, "sentiment", upload_name=f"alict-run.{download}")
    said = str(refused.value)
    assert "CheckList JSON download" in said and "beside it" not in said and "Input should be" not in said


def test_p40_pages_1_a_refused_answer_echoing_the_request_logs_no_secret(caplog):
    """Was (p40pages, low-medium): a service that echoes the request in its 401 body put the user's header value, key
    or `?token=` into the server log and the CLI's stderr. The request's secrets are cut out of the logged body, and
    the advice names the kind's own argument (`http` takes no api_key)."""
    import logging

    from alict_core.models.remote import refused_answer, request_secrets

    url = "http://u:pw-SECRET9@127.0.0.1:9/echo?token=tok-SECRET55"
    secrets = request_secrets(url, {"Authorization": "Bearer sk-SECRETKEY77"})
    with caplog.at_level(logging.WARNING, logger="alict_core"):
        body = "denied for Bearer sk-SECRETKEY77 path /echo?token=tok-SECRET55 pw-SECRET9"
        message = str(refused_answer("e", url, 401, "not 200 OK", body, secrets))
    assert "denied for" in caplog.text
    assert not any(secret in caplog.text for secret in ("sk-SECRETKEY77", "tok-SECRET55", "pw-SECRET9"))
    assert "`headers=`" in message and "api_key" not in message
    chat = str(refused_answer("c", "http://127.0.0.1:9/v1/chat/completions", 401, "not 200 OK", "no"))
    assert "`api_key=`" in chat


def test_p40_cli_3_lego_reads_ndjson_as_json_lines_and_takes_no_json_row_as_a_sentence(cli, tmp_path):
    """Was (p40cli, low): `lego --seeds seeds.ndjson` (JSON lines, as `run --seeds` reads them) took each raw JSON row
    as a seed sentence. `.ndjson` is read as JSON lines, and a JSON row in a text file is refused."""
    from alict_core.lego.pipeline import seeds_from_file

    row = json.dumps({"id": "s0", "lc_id": "sentiment-lc01", "text": "a fine film"})
    (tmp_path / "seeds.ndjson").write_text(row + "\n")
    assert [seed.text for seed in seeds_from_file(tmp_path / "seeds.ndjson", "sentiment")] == ["a fine film"]
    (tmp_path / "seeds.txt").write_text(row + "\n")
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(tmp_path / "seeds.txt"), "--out", str(tmp_path / "l"))
    assert outcome.code == 2 and "a JSON row is no sentence" in outcome.err and not (tmp_path / "l").exists()
