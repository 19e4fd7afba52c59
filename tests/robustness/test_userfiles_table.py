"""User-file surfaces table: review import, lego seeds, harden split, report --export, workspace, settings.

Every bad file or value is one ``error:`` line with exit 2 (never the internal-error exit 3), refused before
any work, and nothing is written: no judgement, no review database for a bad file, no output folder.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.robustness.conftest import assert_clean_error


# ------------------------------------------------------------------ review import
@pytest.fixture
def review_task(cli, tmp_path, monkeypatch):
    """A review task 't' of 4 seed cases in a fresh SQLite database; returns its exported form rows."""
    from alict_core.review.store import dispose_engines
    from tests.test_review import make_cases

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in make_cases(expansions=0)))
    assert cli("review", "sample", "--name", "t", "--task", "sentiment", "--cases", str(cases), "--size", "4",
               "--sets", "1", "--k", "1").code == 0
    assert cli("review", "export", "t", "--out", str(tmp_path / "form.csv")).code == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "form.csv").read_bytes().decode(), newline="")))
    yield rows
    dispose_engines()


def _csv(rows: list[dict], columns: list[str] | None = None) -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns or list(rows[0]), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def _filled(rows, **change):
    return [{**r, "reviewer": "ann", "relevance": "5", "label_score": "4", **change} for r in rows]


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


REVIEW_FILES = [  # (name, make(rows) -> bytes, needles, env)
    ("bad.csv", lambda rows: b"\xff\xfe" + _csv(_filled(rows)), ["bad.csv", "not UTF-8"], {}),
    ("caf.csv", lambda rows: _csv(_filled(rows)).replace(b"ann", b"\xe9ann"), ["not UTF-8", "byte"], {}),
    ("long.csv", lambda rows: _csv(_filled(rows, note="x" * 140_000)), ["long.csv:2", "131,072", "field limit"], {}),
    ("none.csv", lambda rows: b"a,b,c\n1,2,3\n", ["lacks columns", "case_id", "review export"], {}),
    ("some.csv", lambda rows: _csv(_filled(rows), ["case_id", "text_hash", "reviewer"]), ["lacks columns"], {}),
    ("empty.csv", lambda rows: b"", ["lacks columns"], {}),
    ("ragged.csv", lambda rows: _csv(_filled(rows)) + b"x,y\n", ["ragged.csv:6", "fewer fields"], {}),
    ("score.csv", lambda rows: _csv(_filled(rows, relevance="9")), ["relevance must be an integer from 1 to 5"], {}),
    ("half.csv", lambda rows: _csv(_filled(rows, label_score="2.5")), ["label_score must be an integer"], {}),
    ("big.csv", lambda rows: _csv(_filled(rows)), ["over the limit", "ALICT_LIMIT_REVIEW_BYTES"],
     {"ALICT_LIMIT_REVIEW_BYTES": "100"}),
    ("rows.csv", lambda rows: _csv(_filled(rows)), ["more than 2 rows", "ALICT_LIMIT_REVIEW_ROWS"],
     {"ALICT_LIMIT_REVIEW_ROWS": "2"}),
    ("true.jsonl", lambda rows: _jsonl(_filled(rows, relevance=True)), ["relevance must be an integer", "True"], {}),
    ("false.jsonl", lambda rows: _jsonl(_filled(rows, label_score=False)), ["label_score must be an integer"], {}),
    ("inf.jsonl", lambda rows: _jsonl(_filled(rows)).replace(b'"relevance": "5"', b'"relevance": 1e999'),
     ["relevance must be an integer"], {}),
    ("nan.jsonl", lambda rows: _jsonl(_filled(rows)).replace(b'"relevance": "5"', b'"relevance": NaN'),
     ["not valid JSON", "NaN"], {}),
    ("who.jsonl", lambda rows: _jsonl(_filled(rows, reviewer=7)), ["reviewer must be text"], {}),
    ("case.jsonl", lambda rows: _jsonl(_filled(rows, case_id=["x"])), ["case_id must be text"], {}),
    ("keys.jsonl", lambda rows: b'{"text": "a film", "score": 5}\n', ["lacks fields", "case_id"], {}),
    ("list.jsonl", lambda rows: b"[1, 2]\n", ["expected a JSON object"], {}),
    ("broken.jsonl", lambda rows: b"{not json\n", ["broken.jsonl:1", "not valid JSON"], {}),
    ("deep.jsonl", lambda rows: b"[" * 100_000 + b"]" * 100_000 + b"\n", ["nested too deeply"], {}),
    ("other.jsonl", lambda rows: _jsonl(_filled(rows, case_id="nope")), ["case 'nope'", "is not in review task"], {}),
    ("form.txt", lambda rows: b"x", ["format must be csv or jsonl"], {}),
    # attack pass: scores nobody signed, a case judged twice, odd digits and names, notes the store would cut
    ("unsigned.csv", lambda rows: _csv(_filled(rows, reviewer="")), ["unsigned.csv:2", "but no reviewer"], {}),
    ("twice.csv", lambda rows: _csv(_filled(rows) + _filled(rows[:1], relevance="1")),
     ["twice.csv:6", "again (first at twice.csv:2)"], {}),
    ("wide.csv", lambda rows: _csv(_filled(rows, relevance="\uff14")), ["relevance must be an integer"], {}),
    ("nul.jsonl", lambda rows: _jsonl(_filled(rows, reviewer="a\u0000b")), ["control characters"], {}),
    ("note.csv", lambda rows: _csv(_filled(rows, note="n" * 2001)), ["note longer than 2000"], {}),
    # hostile pass 2: a column named twice (the row kept the last value: relevance 1 imported over 5, exit 0)
    ("twocols.csv", lambda rows: _csv(_filled(rows)).replace(b"relevance", b"relevance,relevance", 1).replace(
        b",ann,5,", b",ann,5,1,"), ["twocols.csv:1", "names the column 'relevance' twice"], {}),
    # hostile pass 3: a JSON key given twice (json.loads kept the last: relevance 5 imported over 1, exit 0),
    # and digits with an underscore (int("0_4") is 4)
    ("twokeys.jsonl", lambda rows: _jsonl(_filled(rows, relevance=1)).replace(b'"relevance": 1', b'"relevance": 1, '
                                                                            b'"relevance": 5'),
     ["twokeys.jsonl:1", "duplicate key 'relevance'"], {}),
    ("under.csv", lambda rows: _csv(_filled(rows, relevance="0_4")), ["relevance must be an integer", "0_4"], {}),
]


@pytest.mark.parametrize("name,make,needles,env", REVIEW_FILES, ids=[r[0] for r in REVIEW_FILES])
def test_review_import_bad_files(cli, tmp_path, monkeypatch, review_task, name, make, needles, env):
    from alict_core.review import ReviewStore

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    path = tmp_path / name
    path.write_bytes(make(review_task))
    outcome = cli("review", "import", str(path), *(["--task", "t"] if name.endswith(".jsonl") else []))
    assert_clean_error(outcome, 2, *needles, limit_s=30)
    assert ReviewStore().judgements() == []  # nothing written


def test_review_import_round_trip_with_a_bom_and_a_fresh_database_only_after_the_file_is_good(cli, tmp_path,
                                                                                              review_task):
    from alict_core.review import ReviewStore

    good = tmp_path / "good.csv"
    good.write_bytes(b"\xef\xbb\xbf" + _csv(_filled(review_task)))
    assert cli("review", "import", str(good)).code == 0
    assert len(ReviewStore().judgements()) == 4
    fresh = tmp_path / "fresh.sqlite"
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff")
    assert_clean_error(cli("review", "import", str(bad), "--db", f"sqlite:///{fresh}"), 2, "not UTF-8")
    assert not fresh.exists(), "a bad file opens no database"


@pytest.mark.parametrize("out", ["review.sqlite", "review.sqlite-wal", "sub/../review.sqlite"])
def test_review_export_onto_its_own_database_is_refused(cli, tmp_path, review_task, out):
    """`review export t --out <the review database>` replaced the database with a CSV (exit 0)."""
    from alict_core.review import ReviewStore

    (tmp_path / "sub").mkdir()
    before = (tmp_path / "review.sqlite").read_bytes()
    outcome = cli("review", "export", "t", "--format", "csv", "--out", str(tmp_path / out))
    assert_clean_error(outcome, 2, "is the review database")
    assert (tmp_path / "review.sqlite").read_bytes() == before
    assert [t.name for t in ReviewStore().tasks()] == ["t"]


@pytest.mark.parametrize("name,reviewers,needles", [
    ("", "", ["review task name must be 1–200 characters"]),
    ("   ", "", ["review task name must be 1–200 characters"]),
    (" t2", "", ["leading or trailing spaces"]),
    ("x" * 201, "", ["1–200 characters"]),
    ("a\nb", "", ["holds control characters"]),
    ("t2", "ann,b\x00b", ["reviewer name", "control characters"]),
], ids=["empty", "blank", "padded", "long", "newline", "reviewer-nul"])
def test_review_sample_bad_names(cli, tmp_path, review_task, name, reviewers, needles):
    """A task named '' (or padded, or with a line break) could never be named again on the command line."""
    from alict_core.review import ReviewStore

    cases = tmp_path / "cases.jsonl"
    outcome = cli("review", "sample", "--name", name, "--task", "sentiment", "--cases", str(cases), "--size", "2",
                  "--sets", "1", "--k", "2" if reviewers else "1", "--reviewers", reviewers)
    assert_clean_error(outcome, 2, *needles)
    assert [t.name for t in ReviewStore().tasks()] == ["t"]


@pytest.mark.parametrize("schema", ["CREATE TABLE review_tasks (id INTEGER, other TEXT)",
                                    "CREATE TABLE review_items (id INTEGER)",
                                    "CREATE TABLE judgements (x TEXT)"])
@pytest.mark.parametrize("command", [["review", "stats"], ["review", "import", "{good}", "--task", "t"],
                                     ["review", "export", "t", "--out", "{out}"]], ids=["stats", "import", "export"])
def test_review_against_a_foreign_database(cli, tmp_path, schema, command):
    import sqlite3

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute(schema)
    good = tmp_path / "good.csv"
    good.write_text("case_id,text_hash,reviewer,relevance,label_score\na,b,ann,5,4\n")
    argv = [a.format(good=good, out=tmp_path / "out.csv") for a in command]
    outcome = cli(*argv, "--db", f"sqlite:///{foreign}")
    assert outcome.code == 2 and "internal error" not in outcome.err and "Traceback" not in outcome.err, outcome.err
    assert not (tmp_path / "out.csv").exists()


# ------------------------------------------------------------------ lego
LEGO_SEEDS = [  # (file name, bytes, needles)
    ("s.jsonl", b"\xff\xfe\x00", ["s.jsonl", "not UTF-8"]),
    ("s.jsonl", b"not json\n", ["s.jsonl:1", "not valid JSON"]),
    ("s.jsonl", b"[" * 50_000 + b"]" * 50_000 + b"\n", ["nested too deeply"]),
    ("s.jsonl", b'["a film"]\n', ["expected a JSON object"]),
    ("s.jsonl", b'{"id": "a"}\n', ["s.jsonl:1: field 'text'", "must be text"]),
    ("s.jsonl", b'{"text": 5}\n', ["field 'text' must be text"]),
    ("s.jsonl", b'{"text": ""}\n', ["field 'text' is empty"]),
    ("s.jsonl", b'{"text": "a\\u0000b"}\n', ["NUL"]),
    ("s.jsonl", b'{"text": "a film", "id": true}\n', ["field 'id' must be text or a whole number"]),
    ("s.jsonl", b'{"text": "' + b"x" * 10_001 + b'"}\n', ["10,001 characters"]),
    ("s.txt", b"caf\xe9 is good\n", ["s.txt", "not UTF-8", "line 1"]),
    ("s.txt", b"a good film\n" + b"x" * 10_001 + b"\n", ["s.txt:2", "10,001 characters"]),
    ("s.txt", b"", ["no seed sentences"]),
]


@pytest.mark.parametrize("name,data,needles", LEGO_SEEDS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LEGO_SEEDS)])
def test_lego_bad_seed_files(cli, tmp_path, name, data, needles):
    path = tmp_path / name
    path.write_bytes(data)
    outcome = cli("lego", "--task", "sentiment", "--seeds", str(path), "--out", str(tmp_path / "out"))
    assert_clean_error(outcome, 2, *needles, limit_s=30)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv,needles", [
    (["--seeds", "{missing}"], ["not found"]),
    (["--seeds", "{dir}"], ["is not a file"]),
    (["--lc", "1", "--max-seeds", "-1"], ["--max-seeds", "out of range"]),
    (["--lc", "1", "--max-seeds", "0"], ["--max-seeds", "out of range"]),
    (["--lc", "1", "--max-seeds", "many"], ["--max-seeds", "not a whole number"]),
    (["--corpus-sample", "0"], ["--corpus-sample", "out of range"]),
    (["--corpus-sample", "-5"], ["--corpus-sample", "out of range"]),
    (["--corpus-sample", "1000000000"], ["--corpus-sample", "out of range"]),
    (["--corpus-sample", "99999"], ["--corpus-sample 99,999 is out of range", "texts"]),
], ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0].startswith("--") else None)
def test_lego_bad_options_are_refused_before_any_work(cli, tmp_path, argv, needles, sentiment_corpus):
    (tmp_path / "a-dir").mkdir()
    filled = [a.format(missing=tmp_path / "nope.jsonl", dir=tmp_path / "a-dir") for a in argv]
    outcome = cli("lego", "--task", "sentiment", *filled, "--out", str(tmp_path / "out"))
    assert_clean_error(outcome, 2, *needles, limit_s=60)
    assert not (tmp_path / "out").exists()


def test_lego_seed_file_over_the_seed_limit(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_LIMIT_MAX_SEEDS", "3")
    path = tmp_path / "s.txt"
    path.write_text("".join(f"sentence number {i}\n" for i in range(5)))
    assert_clean_error(cli("lego", "--task", "sentiment", "--seeds", str(path)), 2, "over the limit of 3",
                       "ALICT_LIMIT_MAX_SEEDS")


# ------------------------------------------------------------------ harden, report, settings, workspace
@pytest.mark.parametrize("split", ["8:nan:1", "nan:nan:nan", "inf:1:1", "8:1:-inf", "8:1", "a:b:c", "-1:1:1",
                                   "0:0:0", "8:1:0", "1e309:1:1", "",  # 1e308:1e308:1e308 is 1:1:1 (pass 37)
                                   "8_0:1:1", "\uff18:1:1"])  # hostile pass 3: read as 80:1:1 and 8:1:1
def test_harden_export_bad_split(cli, tmp_path, split):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    outcome = cli("harden", "export", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--split", split,
                  "--out", str(tmp_path / "hx"))
    assert_clean_error(outcome, 2, "split", limit_s=30)
    assert not (tmp_path / "hx").exists()


@pytest.mark.parametrize("formats", ["", ",,", " , "])
def test_harden_export_of_no_format_is_refused(cli, tmp_path, formats):
    """An export naming no format held only export.json and exited 0: nothing to train on, without a word."""
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    outcome = cli("harden", "export", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--formats", formats,
                  "--out", str(tmp_path / "hx"))
    assert_clean_error(outcome, 2, "no export format named", limit_s=30)
    assert not (tmp_path / "hx").exists()


@pytest.mark.parametrize("content", [".ssh/id", "thesis.tex", "train.jsonl.bak", "hf_dataset/x",
                                     "hf_dataset/dataset_dict.json"])
def test_harden_export_overwrite_replaces_only_an_export(cli, tmp_path, content):
    """`--out ~ --overwrite` replaced the whole folder (user files, .ssh and all) with the export."""
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    home = tmp_path / "home"
    (home / content).parent.mkdir(parents=True, exist_ok=True)
    (home / content).write_text("keep me")
    outcome = cli("harden", "export", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--out", str(home),
                  "--overwrite", "--formats", "jsonl")
    if content == "hf_dataset/dataset_dict.json":  # an earlier export's own folder: replaced, as --overwrite says
        # (a folder of that name without the datasets library's layout is the user's: pass 25)
        assert outcome.code == 0, outcome.err
        return
    assert_clean_error(outcome, 2, "holds files that are not an export's", limit_s=30)
    assert (home / content).read_text() == "keep me"
    assert sorted(p.name for p in home.iterdir()) == [content.split("/")[0]]


@pytest.mark.parametrize("file,data,needle", [
    ("train.jsonl", b"\xff\xfe\n", "not UTF-8"),
    ("train.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply"),
    ("train.jsonl", b"[1, 2]\n", "expected a JSON object"),
    ("export.json", b"\xff", "not UTF-8"),
    ("export.json", b"[1, 2]", "expected a JSON object"),
    ("export.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
], ids=["split-not-utf8", "split-deep", "split-list", "settings-not-utf8", "settings-list", "settings-deep"])
def test_harden_tampered_export_is_one_message(cli, tmp_path, file, data, needle):
    """`harden train/evaluate --export` of a tampered export was exit 3 (UnicodeDecodeError, RecursionError)."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import export_settings, read_split
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    assert cli("harden", "export", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--formats", "jsonl",
               "--out", str(tmp_path / "hx")).code == 0
    (tmp_path / "hx" / file).write_bytes(data)
    if file == "train.jsonl":  # the tampering recorded in export.json too: the reader's own checks must hold behind
        import json  # the file hashes `harden export` records (pass 11, N6), which refuse it first otherwise

        from alict_core.harden.export import split_hashes

        settings = json.loads((tmp_path / "hx" / "export.json").read_text(encoding="utf-8"))
        (tmp_path / "hx" / "export.json").write_text(json.dumps({**settings, "files": split_hashes(tmp_path / "hx")}))
    with pytest.raises(AlictError, match=needle):
        read_split(tmp_path / "hx", "train") if file == "train.jsonl" else export_settings(tmp_path / "hx")


def test_harden_tampered_split_is_refused_by_its_recorded_hash(cli, tmp_path):
    """Pass 11 (N6): a split edited after `harden export` (hashes not rewritten) is refused before it is read."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.export import read_split
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    assert cli("harden", "export", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--formats", "jsonl",
               "--out", str(tmp_path / "hx")).code == 0
    (tmp_path / "hx" / "train.jsonl").write_bytes(b"[1, 2]\n")
    with pytest.raises(AlictError, match="does not match the hash recorded in export.json"):
        read_split(tmp_path / "hx", "train")


@pytest.mark.parametrize("model,extra,needle", [
    ("nosuch", [], "nosuch"),
    ("vader", [], "not an embedded MiniLM classifier"),
    ("hf", ["--hf-dir", "{missing}", "--task", "sentiment"], "not found"),
    ("hf", ["--hf-dir", "{tmp}"], "--task is required"),
    ("a b", ["--hf-dir", "{tmp}", "--task", "sentiment"], "cannot name a version"),
], ids=["unknown", "not-embedded", "no-hf-dir", "no-task", "bad-name"])
def test_harden_fix_refuses_a_bad_model_before_the_export(cli, tmp_path, model, extra, needle):
    """`harden fix --model nosuch` wrote the whole export before the model was looked up."""
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    extra = [e.format(missing=tmp_path / "nope", tmp=tmp_path) for e in extra]
    outcome = cli("harden", "fix", "--run", str(run_dir), "--lcs", "sentiment-lc01", "--model", model, *extra,
                  "--out", str(tmp_path / "hx"))
    assert_clean_error(outcome, 2, needle, limit_s=60)
    assert not (tmp_path / "hx").exists()


@pytest.mark.parametrize("task", ["hate_speech"])
def test_report_export_of_another_tasks_run(cli, tmp_path, task):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    outcome = cli("report", str(run_dir), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "x"),
                  "--task", task)
    assert_clean_error(outcome, 2, f"--task {task}", "sentiment run")
    assert not (tmp_path / "x").exists() and not (tmp_path / "r.html").exists(), "nothing written"
    assert cli("report", str(run_dir), "--out", str(tmp_path / "r.html"), "--export", str(tmp_path / "x"),
               "--task", "sentiment").code == 0


@pytest.mark.parametrize("value", ["many", "0", "-2", "1.5", "99999", "0x10", "1e3"])
def test_torch_threads_setting(cli, monkeypatch, value):
    import alict_core.common.runtime as runtime

    monkeypatch.setenv("ALICT_TORCH_THREADS", value)
    monkeypatch.setattr(runtime, "_applied", type(runtime._applied)())  # a fresh process's start-up
    assert_clean_error(cli("parse", "--text", "a film"), 2, "ALICT_TORCH_THREADS", "from 1 to 1024")


def _ws_file(tmp_path):
    (tmp_path / "ws").write_text("not a folder")
    return str(tmp_path / "ws")


def _ws_loop(tmp_path):
    (tmp_path / "ws").symlink_to(tmp_path / "ws")
    return str(tmp_path / "ws")


def _ws_specs_file(tmp_path):
    (tmp_path / "ws" / "specs").mkdir(parents=True)
    (tmp_path / "ws" / "specs" / "sentiment").write_text("not a folder")
    return str(tmp_path / "ws")


@pytest.mark.parametrize("make,needle", [
    (_ws_file, "ALICT_WORKSPACE_DIR names a file"),
    (lambda tmp_path: "  ", "ALICT_WORKSPACE_DIR is set but empty"),  # was: the default workspace, silently
    (_ws_loop, "names a link that leads nowhere"),  # was: no workspace specs, silently
    (_ws_specs_file, "spec folder"),  # was: the user's specs left out, silently
], ids=["file", "blank", "looping-link", "specs-task-a-file"])
def test_workspace_dir_that_is_not_a_folder(cli, tmp_path, monkeypatch, make, needle):
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", make(tmp_path))
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, needle)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("file_name,change,needles", [
    ("sentiment-lc04.yaml", ("sentiment-lc05", "sentiment-lc05"), ["holds spec id 'sentiment-lc05'",
                                                                    "named 'sentiment-lc04.yaml'"]),
    ("sentiment-x99.yaml", ("sentiment-lc05", "sentiment-lc05"), ["holds spec id 'sentiment-lc05'"]),
    ("hate_speech-lc01.yaml", ("", ""), ["holds a hate_speech spec", "lies in the sentiment specs"]),
], ids=["lc05-named-lc04", "lc05-named-x99", "other-task"])
def test_workspace_spec_file_not_named_after_its_id(cli, tmp_path, monkeypatch, file_name, change, needles):
    from alict_core.common import config

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    folder = tmp_path / "ws" / "specs" / "sentiment"
    folder.mkdir(parents=True)
    source = "hate_speech/hate_speech-lc01.yaml" if file_name.startswith("hate") else "sentiment/sentiment-lc05.yaml"
    text = (config.SPECS_DIR / source).read_text(encoding="utf-8")
    (folder / file_name).write_text(text.replace(*change), encoding="utf-8")
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, *needles)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("link", ["loop", "dangling"])
def test_workspace_spec_link_that_cannot_be_followed(cli, tmp_path, monkeypatch, link):
    """A spec link pointing at itself was an internal error (exit 3: OSError ELOOP from the change stamp)."""
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    folder = tmp_path / "ws" / "specs" / "sentiment"
    folder.mkdir(parents=True)
    path = folder / "sentiment-lc04.yaml"
    path.symlink_to(path if link == "loop" else tmp_path / "gone.yaml")
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "sentiment-lc04.yaml", "cannot read spec file")
    assert not (tmp_path / "s").exists()


def test_workspace_spec_that_is_a_pipe(cli, tmp_path, monkeypatch):
    """Hostile pass 2: a workspace spec that is a named pipe hung every command that reads the specs (and the
    Specs page): the read waited for a writer for ever. Now it is refused before it is opened. (A writer is
    provided, so the test ends even where the file would be read: then the spec's content is refused instead.)"""
    import os
    import threading

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    folder = tmp_path / "ws" / "specs" / "sentiment"
    folder.mkdir(parents=True)
    pipe = folder / "sentiment-lc04.yaml"
    os.mkfifo(pipe)

    def writer() -> None:
        try:
            with open(pipe, "w", encoding="utf-8") as handle:
                handle.write("title: x\n")
        except OSError:
            pass

    threading.Thread(target=writer, daemon=True).start()
    try:
        outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--out", str(tmp_path / "s"))
    finally:
        reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets a writer still waiting finish
        os.close(reader)
    assert_clean_error(outcome, 2, "sentiment-lc04.yaml", "not a regular file")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
def test_review_import_reads_back_its_own_jsonl_with_unicode_line_separators(cli, tmp_path, review_task,
                                                                            separator):
    """Hostile pass 3: JSON writes U+2028/U+2029/U+0085 raw inside a string (our JSONL writers too: `review export
    --format jsonl`, `seeds --out`); the reader split lines with str.splitlines(), which breaks there, so a valid
    file of our own was refused as "not valid JSON (Unterminated string …)". Lines end only at \\n (or \\r)."""
    from alict_core.review import ReviewStore

    rows = _filled(review_task, note=f"first{separator}second")
    path = tmp_path / "form.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows), encoding="utf-8")
    outcome = cli("review", "import", str(path), "--task", "t")
    assert outcome.code == 0, outcome.err
    notes = {j["note"] for j in ReviewStore().judgements()}
    assert notes == {f"first{separator}second"}
