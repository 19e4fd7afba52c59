"""CLI robustness table: every bad option value, LC id and environment is one clean line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

RANGES = [  # (command prefix, option, bad values)
    (["run", "--task", "sentiment", "--models", "vader"], "--max-seeds", ["-1", "0", "4x", "1.5", "5000000000",
                                                                                 "0_3", "\uff13"]),
    (["run", "--task", "sentiment", "--models", "vader"], "--batch-size", ["0", "-3", "99999999", "nan"]),
    (["seeds", "--task", "sentiment"], "--max", ["-1", "0", "abc", "1e99", "10000000000"]),
    (["validate", "--task", "sentiment"], "--max-seeds", ["-1", "0", "1.5"]),  # 0 validated nothing, exit 0
    (["validate", "--task", "sentiment"], "--show", ["-1", "x"]),
    (["compare", "run-a"], "--show", ["-1", "1e3"]),
    (["seeds", "--task", "sentiment"], "--seed", ["-1", "x", "99999999999"]),
    (["expand", "--task", "sentiment"], "--max-seeds", ["-1", "0", "2000000000"]),
    (["expand", "--task", "sentiment"], "--top-k-words", ["0", "-2", "100000"]),
    (["expand", "--task", "sentiment"], "--top-k-productions", ["0", "1000"]),
    (["expand", "--task", "sentiment"], "--max-masks", ["0", "-1", "1000"]),
    (["expand", "--task", "sentiment"], "--max-per-seed", ["0", "-5", "1e3"]),
    (["explain", "--text", "a good film", "--model", "vader"], "--samples", ["0", "-10", "1000000000"]),
    (["explain", "--text", "a good film", "--model", "vader"], "--template-samples", ["0", "100000000"]),
    (["explain", "--text", "a good film", "--model", "vader"], "--p-thresh", ["-0.1", "1.5", "nan", "inf", "x",
                                                                                         "0_5"]),
    (["explain", "--text", "a good film", "--model", "vader"], "--max-pairs", ["0", "-1"]),
    (["explain", "--text", "a good film", "--model", "vader"], "--seed", ["-1", "1.5"]),
    (["parse", "--text", "a good film"], "--top-k", ["0", "-1", "1000"]),
    (["parse", "--text", "a good film"], "--max-masks", ["0", "500"]),
    # hostile pass 3: review sample read its numbers with plain int()/float() ("1_0" as 10, "-1" to the library)
    (["review", "sample", "--task", "sentiment", "--name", "t"], "--size", ["0", "1_0", "\uff13"]),
    (["review", "sample", "--task", "sentiment", "--name", "t"], "--sets", ["-1", "2_0"]),
    (["review", "sample", "--task", "sentiment", "--name", "t"], "--k", ["0", "1_0"]),
    (["review", "sample", "--task", "sentiment", "--name", "t"], "--margin", ["0.0_5", "nan", "2"]),
    (["review", "sample", "--task", "sentiment", "--name", "t"], "--seed", ["-1", "x"]),
    # hostile pass 4: options still read with plain int()/float() ("0_1" as 1.0: a DIR tolerance that passes all)
    (["lego", "--task", "sentiment", "--lc", "4"], "--threshold", ["0_1", "nan", "-0.1", "1.5", "\uff10.1"]),
    (["lego", "--task", "sentiment", "--lc", "4"], "--seed", ["-5", "1" + "0" * 30, "1_0"]),
    (["lego", "--task", "sentiment", "--lc", "4"], "--breadth", ["\uff13", "0", "21"]),
    (["lego", "--task", "sentiment", "--lc", "4"], "--max-nodes", ["0", "2_0"]),
    (["lego", "--task", "sentiment", "--lc", "4"], "--max-adjuncts", ["-1", "21"]),
    (["lego", "--task", "sentiment", "--lc", "4"], "--mlm-top-k", ["51", "-1"]),
    (["review", "writeback", "--task", "sentiment"], "--min-agreeing", ["1_0", "0", "\uff12"]),
    (["run", "--task", "sentiment", "--models", "vader"], "--inv-threshold", ["0_5", "nan", "-0.1", "inf", "2"]),
]
RANGE_CASES = [(prefix, option, value) for prefix, option, values in RANGES for value in values]


@pytest.mark.parametrize("prefix,option,value", RANGE_CASES, ids=[f"{p[0]}{o}={v}" for p, o, v in RANGE_CASES])
def test_numeric_option_out_of_range(cli, prefix, option, value):
    outcome = cli(*prefix, f"{option}={value}")
    assert_clean_error(outcome, 2, option)
    assert "out of range" in outcome.err or "not a whole number" in outcome.err or "not a number" in outcome.err


@pytest.mark.parametrize("value", ["0.2", "0", "1"])
def test_inv_threshold_without_a_suite_is_refused(cli, tmp_path, value):
    """It was accepted (even NaN) and had no effect: an option that silently does nothing. (A value out of [0, 1]
    is refused by the parser: RANGES.)"""
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--inv-threshold", value,
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "--inv-threshold applies to", "--suite")
    assert not any(tmp_path.iterdir()), "nothing written"


BAD_LCS = ["1.4", "-4", "4x", "hate_speech-lc04", "lc99", "12", "0", "lc", "LC 4", "sentiment-lc4x", "+4", "４"]
LC_COMMANDS = {
    "seeds": ["seeds", "--task", "sentiment", "--out", "{tmp}/seeds"],
    "expand": ["expand", "--task", "sentiment", "--out", "{tmp}/exp"],
    "run": ["run", "--task", "sentiment", "--models", "vader", "--out", "{tmp}/run"],
}
LC_CASES = [(command, value) for command in LC_COMMANDS for value in BAD_LCS]


@pytest.mark.parametrize("command,value", LC_CASES, ids=[f"{c}:{v}" for c, v in LC_CASES])
def test_lc_ids_are_strict(cli, tmp_path, command, value):
    argv = [a.format(tmp=tmp_path) for a in LC_COMMANDS[command]]
    outcome = cli(*argv, "--lc", value)
    assert_clean_error(outcome, 2, "valid names: sentiment-lc01")
    assert not any(tmp_path.iterdir()), "nothing written"


def test_hate_speech_lc_ids_are_listed_for_their_task(cli, tmp_path):
    outcome = cli("seeds", "--task", "hate_speech", "--lc", "sentiment-lc01", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "hate_speech-lc01")


@pytest.mark.parametrize("value", ["{missing}", "", "{file}", "{empty}"], ids=["missing", "blank", "file", "empty"])
@pytest.mark.parametrize("command", [["seeds", "--task", "sentiment", "--lc", "4"],
                                     ["run", "--task", "sentiment", "--models", "vader", "--lc", "4"]],
                         ids=["seeds", "run"])
def test_data_dir_variable_is_not_replaced(cli, tmp_path, monkeypatch, value, command):
    import alict_core.data.corpus as corpus

    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    path = value.format(missing=tmp_path / "nowhere", file=tmp_path / "a-file", empty=tmp_path / "empty")
    monkeypatch.setenv("ALICT_DATA_DIR", path)
    monkeypatch.setattr(corpus, "_LOADED", {})  # the corpus is really read again
    outcome = cli(*command, "--out", str(tmp_path / "out"))
    assert_clean_error(outcome, 2, "ALICT_DATA_DIR")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["{missing}", "", "{file}", "{empty}"], ids=["missing", "blank", "file", "empty"])
def test_data_info_names_a_data_dir_variable_that_is_no_data_folder(cli, tmp_path, monkeypatch, value):
    """`data info` does not answer "0/9 files" with exit 0 for a $ALICT_DATA_DIR that cannot be a data folder."""
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("ALICT_DATA_DIR", value.format(missing=tmp_path / "nowhere", file=tmp_path / "a-file",
                                                      empty=tmp_path / "empty"))
    assert_clean_error(cli("data", "info"), 2, "ALICT_DATA_DIR")


def test_cache_dir_that_is_a_file(cli, tmp_path, monkeypatch):
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--suite", str(tmp_path / "x.jsonl"))
    assert outcome.code == 2 and "Traceback" not in outcome.err


@pytest.mark.parametrize("argv,needles", [
    (["parse", "--text", ""], ["--text #1 is empty"]),
    (["parse", "--text", "   "], ["--text #1 is empty"]),
    (["parse", "--text", "word " * 20000], ["100,000 characters", "ALICT_LIMIT_ANALYSIS_CHARS"]),
    (["parse", "--text", "ok", "--text", "x" * 1001], ["--text #2", "1,001 characters"]),
    (["explain", "--model", "vader", "--text", "word " * 20000], ["text to explain", "100,000 characters"]),
    (["explain", "--model", "vader", "--text", " "], ["text to explain is empty"]),
    (["explain", "--text", "good"], ["--text needs --model"]),
    (["explain", "--results", "../../no-such-folder", "--lc", "1"], ["run folder '../../no-such-folder' not found"]),
    (["explain", "--results", "no-such-run", "--lc", "1"], ["run id 'no-such-run' not found"]),
    (["explain", "--results", ".hidden", "--lc", "1"], ["not a valid name"]),
    (["run", "--task", "sentiment", "--models", "no-such-model", "--lc", "1"], ["no-such-model"]),
    (["run", "--task", "sentiment", "--models", "hatesonar", "--lc", "1"], ["is for task hate_speech"]),
    (["run", "--task", "sentiment", "--models", ",", "--lc", "1"], ["--models is empty"]),
    (["run", "--task", "sentiment", "--models", "vader", "--fail-threshold", "x"], ["--fail-threshold"]),
    (["run", "--task", "sentiment", "--models", "vader", "--fail-threshold", "*=1.5"], ["RATE in [0, 1]"]),
    (["run", "--task", "sentiment", "--models", "vader", "--fail-threshold", "=0.5"], ["--fail-threshold"]),
    (["run", "--task", "sentiment", "--models", "vader", "--no-lcs"], ["no test cases"]),
    (["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", "nope.json"],
     ["'nope.json' not found"]),
    (["run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", "x.txt"], ["unknown suite format"]),
    (["run", "--task", "sentiment", "--models", "vader", "--expansions", "nope/"], ["--expansions nope/"]),
    (["seeds", "--task", "sentiment", "--spec", "nope.yaml"], ["nope.yaml", "cannot read spec file"]),
    (["report", "no/such/run"], ["saved run 'run' not found"]),
    (["no-such-command"], ["invalid choice"]),
    (["parse", "--parser", "nope", "--text", "a film"], ["unknown parser 'nope'", "valid names"]),
    (["explain", "--model", "vader", "--text", "a good film", "--method", "nope", "--no-template"],
     ["unknown explainer 'nope'"]),
    (["explain", "--model", "vader", "--text", "a good film", "--label", "nope", "--no-template"],
     ["label 'nope' is not one of"]),
    (["explain", "--model", "nope", "--text", "a good film"], ["unknown model 'nope'"]),
    (["build", "nope"], ["invalid choice"]),
    (["data", "nope"], ["invalid choice"]),
    (["run", "--task", "movies", "--models", "vader"], ["invalid choice"]),
    (["seeds"], ["--task"]),
])
def test_bad_input_is_one_clean_line(cli, argv, needles):
    assert_clean_error(cli(*argv), 2, *needles)


def test_internal_error_is_exit_3_with_traceback_only_under_debug(cli, monkeypatch):
    import alict_core.commands.parse as parse_command

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(parse_command, "run", broken)
    outcome = cli("parse", "--text", "fine")
    assert_clean_error(outcome, 3, "internal error (RuntimeError: boom)", "--debug")
    debug = cli("parse", "--text", "fine", "--debug")
    assert debug.code == 3 and "Traceback" in debug.err and "RuntimeError: boom" in debug.err


def test_invalid_limit_setting_names_the_variable(cli, monkeypatch):
    monkeypatch.setenv("ALICT_LIMIT_MAX_SEEDS", "lots")
    assert_clean_error(cli("seeds", "--task", "sentiment", "--max", "5"), 2, "ALICT_LIMIT_MAX_SEEDS")


@pytest.mark.parametrize("make", ["file", "foreign-folder"])
def test_output_path_that_cannot_be_replaced(cli, tmp_path, make):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    target = tmp_path / "export"
    if make == "file":
        target.write_text("keep me")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("keep me")
    outcome = cli("report", str(run_dir), "--out", str(tmp_path / "r.html"), "--export", str(target),
                  "--task", "sentiment")
    assert_clean_error(outcome, 2, "export")
    assert (target.read_text() if make == "file" else (target / "notes.txt").read_text()) == "keep me"


def _data_copy(tmp_path, corrupt: str, content: bytes):
    """A data folder of links to the real files, with one file replaced by ``content``."""
    from alict_core.common.config import data_dir

    real = data_dir()
    copy = tmp_path / "data"
    for path in real.rglob("*"):
        if path.is_file():
            target = copy / path.relative_to(real)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    (copy / corrupt).unlink()
    (copy / corrupt).write_bytes(content)
    return copy


CORRUPT_DATA = [
    ("sst/train.txt", lambda real: real[: len(real) // 2] + b"\n(3 (2 broken", "sentiment", "sst/<split>.txt"),
    ("sst/dev.txt", lambda real: b"\xff\xfe" + real[:100], "sentiment", "sst/<split>.txt"),
    ("hatexplain/hatexplain.csv", lambda real: real[:200] + b"\xe9\xff" + real[200:400], "hate_speech", "hatexplain"),
    ("hatexplain/hatexplain.csv", lambda real: b"", "hate_speech", "hatexplain"),
    ("sentiwordnet/sentiwordnet_3.0_nogloss.tsv.gz", lambda real: b"plain text, not gzip", "sentiment",
     "sentiwordnet"),
]


@pytest.mark.parametrize("relative,corrupt,task,needle", CORRUPT_DATA,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CORRUPT_DATA)])
def test_corrupt_data_file_is_a_clean_error(cli, tmp_path, monkeypatch, relative, corrupt, task, needle):
    import alict_core.data.corpus as corpus
    import alict_core.data.polarity_lexicon as lexicon
    import alict_core.data.sst as sst
    from alict_core.common.config import data_dir

    content = corrupt((data_dir() / relative).read_bytes())
    monkeypatch.setenv("ALICT_DATA_DIR", str(_data_copy(tmp_path, relative, content)))
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus, "_LOADED", {})
    sst._load_split.cache_clear()
    lexicon.load_sentiwordnet.cache_clear()
    try:
        outcome = cli("seeds", "--task", task, "--lc", "1", "--out", str(tmp_path / "out"))
    finally:
        sst._load_split.cache_clear()
        lexicon.load_sentiwordnet.cache_clear()
    assert_clean_error(outcome, 2, needle, "cannot be read", limit_s=60)
    assert not (tmp_path / "out").exists()


OUTPUTS = [  # (argv with {file} / {ro}, needle)
    (["seeds", "--task", "sentiment", "--lc", "1", "--out", "{file}"], "is not a folder"),
    (["seeds", "--task", "sentiment", "--lc", "1", "--out", "{file}/sub"], "is a file"),
    (["seeds", "--task", "sentiment", "--lc", "1", "--out", "{ro}/sub"], "not writable"),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--out", "{file}"], "is not a folder"),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--out", "{ro}/run"], "not writable"),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "1", "--report", "{dir}"], "is a folder"),
    (["expand", "--task", "sentiment", "--lc", "1", "--out", "{file}"], "is not a folder"),
    (["report", "--out", "{dir}"], "is a folder"),
    (["report", "--out", "{ro}/r.html"], "not writable"),
    (["report", "--export", "{file}"], "is not a folder"),
    (["explain", "--model", "vader", "--text", "good", "--json", "{dir}"], "is a folder"),
    (["explain", "--model", "vader", "--text", "good", "--json", "{file}/x.json"], "is a file"),
]


@pytest.mark.parametrize("argv,needle", OUTPUTS, ids=[f"{a[0]}-{i}" for i, (a, _) in enumerate(OUTPUTS)])
def test_output_path_checked_before_any_work(cli, tmp_path, argv, needle):
    import os
    import shutil
    import tempfile
    from contextlib import nullcontext

    from tests.robustness.support import as_unprivileged_real_user

    (tmp_path / "a-file").write_text("keep")
    (tmp_path / "a-dir").mkdir()
    ro = Path(tempfile.mkdtemp(prefix="alict-read-only-"))  # outside tmp_path: reachable by an unprivileged user
    os.chmod(ro, 0o555)
    try:
        filled = [a.format(file=tmp_path / "a-file", dir=tmp_path / "a-dir", ro=ro) for a in argv]
        with as_unprivileged_real_user() if needle == "not writable" else nullcontext():
            if needle == "not writable":
                assert os.access(ro, os.R_OK | os.X_OK) and not os.access(ro, os.W_OK)
            outcome = cli(*filled)
        assert_clean_error(outcome, 2, needle, limit_s=5)
        assert not any(ro.iterdir())
    finally:
        os.chmod(ro, 0o700)
        shutil.rmtree(ro)
    assert (tmp_path / "a-file").read_text() == "keep"


JSONL_INPUTS = [  # (option, content, needles)
    ("--seeds", b"not json\n", ["--seeds rows.jsonl:1", "not valid JSON"]),
    ("--seeds", b"[1, 2]\n", ["expected a JSON object"]),
    ("--seeds", b"\xff\xfe\x00", ["not UTF-8"]),
    ("--seeds", b'{"lc_id": "sentiment-lc01", "id": "s1"}\n', ["missing field"]),
    ("--expansions", b"{broken\n", ["--expansions rows.jsonl:1"]),
    ("--expansions", b"42\n", ["expected a JSON object"]),
]


@pytest.mark.parametrize("option,content,needles", JSONL_INPUTS,
                         ids=[f"{o}-{i}" for i, (o, _, _) in enumerate(JSONL_INPUTS)])
def test_bad_jsonl_inputs_of_run(cli, tmp_path, option, content, needles):
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(content)
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "1", option, str(rows), "--quiet",
                  "--out", str(tmp_path / "run"), *(["--seeds", str(rows)] if option == "--expansions" else []))
    assert_clean_error(outcome, 2, *needles, limit_s=30)
    assert not (tmp_path / "run").exists()


def test_seeds_all_of_a_huge_lc_is_refused_quickly(cli, tmp_path, sentiment_corpus, monkeypatch):
    # LC3 crosses its seeds with templates (5,544 candidates since the fifth pass): a lower cap makes it "huge"
    monkeypatch.setenv("ALICT_LIMIT_SPEC_CANDIDATES", "2000")
    outcome = cli("seeds", "--task", "sentiment", "--lc", "3", "--all", "--json", "--out", str(tmp_path / "s"))
    assert_clean_error(outcome, 2, "candidate seeds of sentiment-lc03", "ALICT_LIMIT_SPEC_CANDIDATES")


@pytest.mark.parametrize("damage", ["truncate-parquet", "bad-meta", "no-cases"])
def test_damaged_legacy_run_is_one_line(cli, tmp_path, damage):
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run_dir = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    (run_dir / "manifest.json").unlink()  # a run saved before manifests (no manifest, no layout): checked by reading
    meta = json.loads((run_dir / "meta.json").read_text())
    (run_dir / "meta.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "layout"}))
    if damage == "truncate-parquet":
        (run_dir / "results.parquet").write_bytes(b"PAR1")
    elif damage == "bad-meta":
        (run_dir / "meta.json").write_text('{"models": 5}')
    else:
        (run_dir / "cases.jsonl").unlink()
    outcome = cli("report", str(run_dir), "--out", str(tmp_path / "r.html"))
    assert_clean_error(outcome, 2, "run 'run' cannot be read")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("lc_id", ["../../etc", "sentiment-lc4", "hate_speech-lc01", 4, None],
                         ids=["path", "typo", "other-task", "number", "missing"])
def test_seeds_rows_of_no_lc_of_the_task_are_refused(cli, tmp_path, lc_id):
    """Hostile pass 2: a `--seeds` row whose lc_id is no LC of the task was dropped without a word (3 rows in, 2
    cases run, exit 0)."""
    import json

    rows = [{"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"the staff was {w}",
             "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}}
            for i, w in enumerate(["good", "fine", "great"])]
    rows[1]["lc_id"] = lc_id
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds), "--quiet",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "seeds.jsonl:2", "is not an LC of task 'sentiment'")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # the built offline parser
@pytest.mark.parametrize("word", ["\u200b", "\u00ad", "\u0301", "\ufeff", "\u2060"],
                         ids=["zero-width-space", "soft-hyphen", "combining-accent", "bom", "word-joiner"])
def test_parse_a_word_of_invisible_characters(cli, word):
    """Hostile pass 3: `parse --text $'\\u200b'` (or such a word inside a sentence, from any seed file or the Lego
    page) ended in the internal-error exit 3 (StopIteration in benepar's retokenizer: the word has no character
    its tokenizer reads). The word is parsed in place of a stand-in and kept as the tree's leaf."""
    alone = cli("parse", "--text", word)
    assert alone.code == 0, alone.err
    inside = cli("parse", "--text", f"a {word} good film")
    assert inside.code == 0, inside.err
    assert word in inside.out and "internal error" not in inside.err


@pytest.mark.parametrize("lc", ["1", "lc01", "LC1", "sentiment-lc01"])
def test_explain_results_takes_the_short_lc_forms(cli, tmp_path, lc):
    """Hostile pass 3: `explain --results RUN --lc 4` said "LC '4' is not in this run; its LCs are: sentiment-lc04"
    (exit 2), while every other command reads `4`, `lc04`, `LC4` as sentiment-lc04."""
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    run = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    outcome = cli("explain", "--results", str(run), "--lc", lc, "--no-template", "--samples", "10")
    assert "is not in this run" not in outcome.err, outcome.err
    assert outcome.code == 0, outcome.err
    refused = cli("explain", "--results", str(run), "--lc", "2", "--no-template")
    assert_clean_error(refused, 2, "'2' is not in this run", "sentiment-lc01")


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1", "localhost:1"])
def test_a_ray_address_where_nothing_answers_is_one_message(cli, tmp_path, address):
    """Hostile pass 3: `run --executor ray --ray-address 127.0.0.1:1` hung (no answer within 120 s: ray.init kept
    retrying the dead address); now one line within seconds, nothing written."""
    pytest.importorskip("ray")
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"id": "s1", "lc_id": "sentiment-lc04", "text": "a good film", "test_type": "MFT", '
                     '"expected": {"kind": "label", "labels": ["positive"]}}\n')
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", str(seeds),
                  "--executor", "ray", "--ray-address", address, "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, address, "nothing answers", limit_s=30)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["4=0_1", "4=\uff10.5"])
def test_fail_threshold_with_digits_nobody_types(cli, tmp_path, value):
    """Hostile pass 3: `--fail-threshold 4=0_1` was read as 1.0 (Python's digit separator): a gate that never
    fails, exit 0."""
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--fail-threshold", value,
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, "--fail-threshold", "expected LC=RATE")
    assert not any(tmp_path.iterdir())
