"""Hostile pass 10 (CLI) table (notes: attack_pass10_cli.md): one row per finding, each failing on the code before
its fix."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from contextlib import nullcontext
try:
    from alict_core.common.outlock import exclusive_output
except ImportError:  # the code before the fix: nothing to hold (the row then shows the second writer let through)
    exclusive_output = lambda _folder: nullcontext()
with exclusive_output(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


# F-a: two writers of one --out at once: the second stops before any work, naming the folder -------------------

OUT_COMMANDS = {
    "run": ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "2", "--quiet"],
    "lego": ["lego", "--task", "sentiment", "--lc", "lc4", "--max-seeds", "2"],
    "seeds": ["seeds", "--task", "sentiment", "--lc", "4", "--max", "3"],
}


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_fa_a_second_writer_of_one_out_folder_is_refused_before_any_work(cli, tmp_path, command):
    """Was: two ``run|lego|seeds --out X`` at once both said "saved to X"; one result was silently gone. Now the
    command holds its folder from its first step: a second one (here while another process holds it) stops with
    one exit-2 line naming the folder, and writes nothing."""
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"  # the lock is held now
        outcome = cli(*OUT_COMMANDS[command], "--out", str(out))
    finally:
        holder.communicate("", timeout=60)
    assert_clean_error(outcome, 2, str(out), "another command")
    assert not out.exists() and not list(tmp_path.glob(".out*"))


def test_fa_sequential_writers_still_replace_the_folder(cli, tmp_path):
    """The lock is released when a command ends: a later run into the same folder replaces it (as before)."""
    out = tmp_path / "out"
    for lc in ("lc4", "lc5"):
        outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", lc, "--max-seeds", "2", "--quiet",
                      "--out", str(out))
        assert outcome.code == 0, outcome.err[-600:]
    with open(out / "summary.csv", newline="", encoding="utf-8") as handle:
        assert {row["lc_id"] for row in csv.DictReader(handle)} == {"sentiment-lc05"}


# F-b: the temporary file of a killed spec save is removed by a later save (own, sealed, old enough) ------------

KILLED_SAVE = """
import os, signal, sys
from pathlib import Path
from alict_core.lcspec.workspace import save_spec_text
os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # killed between the write and the rename
save_spec_text(Path(sys.argv[1]), "sentiment-lc04", "id: sentiment-lc04\\n# new\\n", overwrite=True)
"""


def test_fb_stale_temp_file_of_a_killed_spec_save_is_removed_by_the_next_save(tmp_path):
    """Was: a spec save killed before its rename left ``.sentiment-lc04.yaml.<token>.tmp`` (344 MB in the attack)
    in the workspace for ever. Now the next save removes such files of this program once older than an hour; a
    user's look-alike and a younger temp file (a save in progress) are kept."""
    from alict_core.lcspec.workspace import save_spec_text

    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "sentiment-lc04.yaml").write_text("id: sentiment-lc04\n# old\n")
    killed = subprocess.run([sys.executable, "-c", KILLED_SAVE, str(folder)], cwd=ROOT, timeout=120)
    assert killed.returncode == -9
    left = list(folder.glob(".*.tmp"))
    assert len(left) == 1 and (folder / "sentiment-lc04.yaml").read_text().endswith("# old\n")
    hour_ago = time.time() - 7200
    os.utime(left[0], (hour_ago, hour_ago))
    users = folder / ".notes.yaml.0123456789ab.tmp"  # same pattern, not sealed by this program
    users.write_text("mine")
    os.utime(users, (hour_ago, hour_ago))
    save_spec_text(folder, "sentiment-lc05", "id: sentiment-lc05\n")
    assert not left[0].exists()
    assert users.exists()


# P14: a spec every later load would refuse is refused at the save ---------------------------------------------

def test_p14_save_refuses_a_spec_over_the_size_limit_before_writing(tmp_path):
    """Was: ``save_spec_text`` wrote a 400 MB text that every later load refused (over ALICT_LIMIT_SPEC_BYTES)."""
    from alict_core.common.errors import SpecError
    from alict_core.common.limits import limits
    from alict_core.lcspec.workspace import save_spec_text

    text = "id: sentiment-lc04\n# " + "x" * limits().spec_bytes + "\n"
    with pytest.raises(SpecError, match="over the spec size limit"):
        save_spec_text(tmp_path, "sentiment-lc04", text)
    assert list(tmp_path.iterdir()) == []


# F-c / F-d: names of an imported suite -------------------------------------------------------------------------

def _case(lc_id: str, capability: str, text: str = "a good film", description: str = "", n: int = 0) -> dict:
    return {"case_id": f"c{n}", "lc_id": lc_id, "kind": "seed", "seed_id": f"c{n}", "text": text,
            "expected": {"kind": "label", "labels": ["negative"]}, "test_type": "MFT", "capability": capability,
            "task": "sentiment", "description": description}


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_fc_junit_xml_is_well_formed_when_suite_names_hold_xml_illegal_characters(cli, tmp_path):
    """Was: a suite whose capability or description held U+FFFF or C0 controls gave a JUnit file that no XML reader
    parses ("not well-formed (invalid token)"), so CI could not read the report of a failed run. Now every such
    character is written as a visible escape."""
    suite = _write_jsonl(tmp_path / "hostile.jsonl", [
        _case("lc-a", "cap]]><x/>\uffff", description="desc\x0b\x01 end", n=0),
        _case("lc-a", "cap]]><x/>\uffff", text="a great film", description="desc\x0b\x01 end", n=1)])
    junit = tmp_path / "ci.xml"
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--quiet",
                  "--out", str(tmp_path / "run"), "--junit", str(junit), "--fail-threshold", "*=0.0")
    assert outcome.code == 1, outcome.err[-600:]  # both cases fail (expected negative): the gate fails
    tree = ET.parse(junit)  # well-formed
    names = [case.get("classname") for case in tree.iter("testcase")]
    assert names and all("\\uffff" in name for name in names)


@pytest.mark.parametrize("field, value", [
    ("lc_id", "lc-\x01ctl\x1b[31m"), ("lc_id", "lc\x7f"), ("capability", "cap\u202eevil"), ("capability", "c\x9b2K"),
])
def test_fd_suite_import_refuses_control_characters_in_names(cli, tmp_path, field, value):
    """Was: lc_id/capability with terminal escapes or bidi overrides were imported and printed raw (a hostile
    suite could colour, erase or reorder CLI lines). Now the import refuses them: one line naming file, line, field."""
    row = _case("lc-ok", "cap")
    row[field] = value
    suite = _write_jsonl(tmp_path / "hostile.jsonl", [_case("lc-ok", "cap", n=1), row])
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--quiet",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "hostile.jsonl:2", field, "control character")
    assert "\x1b" not in outcome.err and not (tmp_path / "run").exists()


def test_fd_checklist_test_name_with_escapes_is_refused(cli, tmp_path):
    """A CheckList test name becomes the LC id: the same refusal."""
    suite = tmp_path / "cl.json"
    suite.write_text(json.dumps({"t\x1b[2K\rok": {"type": "MFT", "capability": "Vocab", "data": ["a good film"],
                                                  "labels": 2}}))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--quiet",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "cl.json", "control character")
    assert "\x1b" not in outcome.err


def test_fd_names_of_a_saved_run_are_printed_escaped(cli, tmp_path):
    """A run saved before the import check (or written through the library) still reaches the terminal only
    through ``printable``: ``report --fail-threshold`` printed ``FAIL: lc-^[[31m…`` raw."""
    from alict_core.runner import run_streaming
    from alict_core.runner.stream import group_by_seed
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment", lc_id="lc-\x1b[31m\u202e") for case in small_cases(8)]
    run = run_streaming(group_by_seed(cases), ["vader"], run_dir=tmp_path / "run", shard_size=4,
                        cache_root=tmp_path / "pred")
    outcome = cli("report", str(run), "--out", str(tmp_path / "r.html"), "--fail-threshold", "*=0.0")
    assert outcome.code == 1, outcome.err[-600:]
    assert "FAIL: lc-\\x1b[31m\\u202e" in outcome.err
    assert "\x1b" not in outcome.out + outcome.err and "\u202e" not in outcome.out + outcome.err


# F-e: what a non-HTTP service sends never reaches the user's message --------------------------------------------

SECRET = b"SECRET db_password=hunter2 internal admin console\r\n\r\n"


@pytest.fixture
def banner_server():
    """A loopback TCP service that answers every request with a non-HTTP line (an internal service's banner)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    conn.sendall(SECRET)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=5)
    server.close()


@pytest.mark.parametrize("kind", ["http", "openai-chat"])
def test_fe_connection_error_message_holds_no_bytes_of_the_peer(cli, tmp_path, banner_server, kind):
    """Was: "failed after 4 tries: ('Connection aborted.', BadStatusLine('SECRET db_password=hunter2 …'))": the
    first line an internal service sent was in the message (CLI, and the browser through the same ModelError).
    Now a fixed reason by the exception's class; the exception's text only in the log (level INFO)."""
    base = f"http://127.0.0.1:{banner_server}"
    model = (f"http:url={base}/p,task=sentiment" if kind == "http"
             else f"openai-chat:base_url={base}/v1,model=m,task=sentiment")
    outcome = cli("run", "--task", "sentiment", "--models", model, "--lc", "lc4", "--max-seeds", "2", "--quiet",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "did not answer valid HTTP", limit_s=30)
    assert "SECRET" not in outcome.err + outcome.out and "hunter2" not in outcome.err + outcome.out


# F-f: explain --model takes the model syntax of run/lego ----------------------------------------------------------

@pytest.fixture
def json_endpoint():
    """A loopback JSON classifier: positive when the text holds 'good', else negative."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            texts = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["texts"]
            rows = [[0.1, 0.1, 0.8] if "good" in text else [0.8, 0.1, 0.1] for text in texts]
            body = json.dumps({"probabilities": rows}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/p"
    httpd.shutdown()
    httpd.server_close()


def test_ff_explain_takes_a_model_with_arguments(cli, json_endpoint):
    """Was: ``explain --model 'http:url=…,task=sentiment'`` → "unknown model …; valid names: … http …" (names only,
    though the list offers kinds that need arguments). Now the same syntax as ``run --models``."""
    outcome = cli("explain", "--model", f"http:url={json_endpoint},task=sentiment", "--text", "a good film",
                  "--samples", "32", "--no-template")
    assert outcome.code == 0, outcome.err[-600:]
    assert "good" in outcome.out


def test_ff_explain_says_what_a_kind_without_a_task_needs(cli, json_endpoint):
    outcome = cli("explain", "--model", f"http:url={json_endpoint}", "--text", "a good film")
    assert_clean_error(outcome, 2, "task=")


# F-g / F-i: --seeds rows checked by every reader, naming file and line ---------------------------------------------

CASE_ROW = {"case_id": "a", "lc_id": "sentiment-lc04", "kind": "seed", "seed_id": "a", "text": "this is not good"}


@pytest.mark.parametrize("command", [
    ["validate", "--task", "sentiment", "--lc", "lc4"],
    ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--quiet"],
])
def test_fg_fi_a_seeds_row_without_id_is_one_message_naming_file_and_line(cli, tmp_path, command):
    """Was: ``validate --seeds`` of a row without ``id`` (a run's cases row) ended in exit 3 "internal error
    (KeyError: 'id')"; ``run --seeds`` said "seed #0 (?): missing field 'id'", naming neither file nor line."""
    seeds = _write_jsonl(tmp_path / "noid.jsonl", [CASE_ROW])
    out = ["--out", str(tmp_path / "run")] if command[0] == "run" else []
    outcome = cli(*command, *out, "--seeds", str(seeds))
    assert_clean_error(outcome, 2, "--seeds noid.jsonl:1", "missing field 'id'")


# F-h: an --expansions file none of whose rows is used is refused, not ignored ----------------------------------------

@pytest.mark.parametrize("command", [
    ["validate", "--task", "sentiment", "--lc", "lc4", "--max-seeds", "3"],
    ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "3", "--quiet"],
])
def test_fh_expansions_whose_rows_hang_on_no_seed_of_the_command_are_refused(cli, tmp_path, command):
    """Was: a wrong file as ``--expansions`` (a run's cases part: rows whose seed is not in the run) gave exit 0 and
    the run of no ``--expansions`` at all, without a word."""
    out = ["--out", str(tmp_path / "run")] if command[0] == "run" else []
    rows = _write_jsonl(tmp_path / "cases.jsonl", [CASE_ROW])  # a case row: said to be no expansion row (pass 21)
    assert_clean_error(cli(*command, *out, "--expansions", str(rows)), 2, "--expansions", "not an expansion row",
                       limit_s=60)
    bare = _write_jsonl(tmp_path / "bare.jsonl", [{k: v for k, v in CASE_ROW.items() if k != "kind"}])
    assert_clean_error(cli(*command, *out, "--expansions", str(bare)), 2, "--expansions", "seed_id 'a'", limit_s=60)
    assert not (tmp_path / "run").exists()


# P104 / P121: what an input is, said plainly -------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--seeds", "--expansions"])
def test_p104_a_fifo_input_is_named_as_one(cli, tmp_path, option):
    """Was: "--seeds file … not found" / "no such JSONL file" for a named pipe that is there."""
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--quiet",
                  "--out", str(tmp_path / "run"), option, str(fifo))
    assert_clean_error(outcome, 2, option, "named pipe")


def test_p121_a_lego_folder_given_as_a_run_is_named_as_one(cli, tmp_path):
    """Was: ``report <lego folder>`` / ``compare A <lego folder>``: "run 'l1' cannot be read (FileNotFoundError)"."""
    lego = tmp_path / "lego"
    lego.mkdir()
    (lego / "trees.jsonl").write_text("")
    (lego / "cases.jsonl").write_text("")
    (lego / "meta.json").write_text(json.dumps({"key": "k", "task": "sentiment", "trees": 0}))
    outcome = cli("report", str(lego), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "NLPLego folder")


def test_p187_an_interrupted_run_folder_is_named_as_one(cli, tmp_path, saved_run):
    """Was: ``report <run killed mid-way>``: "not a saved run (no meta.json); run `python -m alict_core run` first",
    though re-running the same command resumes it."""
    (saved_run / "meta.json").unlink()  # as a kill leaves it: progress.json, no meta.json or manifest yet
    (saved_run / "manifest.json").unlink()
    assert (saved_run / "progress.json").exists()
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "interrupted", "the `run` command that made it again")


# Settings and defaults ------------------------------------------------------------------------------------------------

def test_model_profile_set_but_empty_is_refused(cli, tmp_path, monkeypatch):
    """Was: ``ALICT_MODEL_PROFILE=''`` silently meant the default profile order (set-but-empty read as unset)."""
    monkeypatch.setenv("ALICT_MODEL_PROFILE", "")
    outcome = cli("run", "--task", "sentiment", "--models", "minilm-sst", "--lc", "lc4", "--max-seeds", "2",
                  "--quiet", "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "ALICT_MODEL_PROFILE is set but empty", limit_s=60)


def test_mlm_from_a_folder_that_is_no_model_says_so(tmp_path):
    """Was: ``ALICT_DEFAULT_MLM=../../etc``: the library's advice on converting slow tokenizers (sentencepiece)."""
    from alict_core.common.errors import ModelError
    from alict_core.mlm.suggesters import load_hf_suggester

    with pytest.raises(ModelError, match="not a model folder"):
        load_hf_suggester(str(tmp_path))
