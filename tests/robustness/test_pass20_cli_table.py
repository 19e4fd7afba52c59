"""Hostile pass 20 table, CLI / rows / kill findings (notes: attack_pass20_{cli,rows,kill}.md, fixed in 491548e):
one row per finding, each failing on the code before its fix (positive controls say so)."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import seed_row

pytestmark = [pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
LONE = "\ud800"  # a lone surrogate: json.dumps writes it as the escape "\ud800"


def _inv(**change) -> dict:  # LC 11 is the sentiment LC of INV tests (a seed has its LC's test type)
    return seed_row(lc_id="sentiment-lc11", test_type="INV", expected={"kind": "invariance"}, **change)


def _lc(row: dict) -> str:
    return row["lc_id"].removeprefix("sentiment-lc")


def _case_row(**change) -> dict:
    return {"case_id": "c1", "lc_id": "sentiment-lc04", "kind": "seed", "seed_id": "c1", "text": "a fine film",
            "expected": {"kind": "label", "labels": ["positive"]}, "test_type": "MFT", "task": "sentiment",
            **change}


def _write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _run_argv(tmp_path: Path, seeds: Path, lc: str = "4") -> list[str]:
    return ["run", "--task", "sentiment", "--models", "vader", "--lc", lc, "--seeds", str(seeds), "--out",
            str(tmp_path / "r")]


def _validate_argv(seeds: Path, lc: str = "4") -> list[str]:
    return ["validate", "--task", "sentiment", "--lc", lc, "--seeds", str(seeds)]


def _suite_argv(tmp_path: Path, suite: Path) -> list[str]:
    return ["run", "--task", "sentiment", "--models", "vader", "--suite", str(suite), "--no-lcs", "--out",
            str(tmp_path / "r")]


def _deep_json(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


# 1: lone surrogate escapes and deep nesting in user JSON -----------------------------------------------------------

SURROGATE_SEEDS = {
    "text": seed_row(text=f"a fine {LONE} film"),
    "description": seed_row(description=f"d{LONE}"),
    "variants": _inv(text="women like the film", variants=[f"men like {LONE} the film"]),
    "meta": seed_row(meta={"k": f"v{LONE}"}),
}


@pytest.mark.parametrize("row", SURROGATE_SEEDS.values(), ids=SURROGATE_SEEDS.keys())
@pytest.mark.parametrize("command", ["validate", "run"])
def test_p20_rows_1_a_lone_surrogate_in_a_seed_row_is_refused(cli, tmp_path, own_cache, command, row):
    """Was: run exit 3 (UnicodeEncodeError at the cases' UTF-8 write), validate exit 0."""
    seeds = _write_rows(tmp_path / "s.jsonl", row)
    argv = _validate_argv(seeds, _lc(row)) if command == "validate" else _run_argv(tmp_path, seeds, _lc(row))
    assert_clean_error(cli(*argv), 2, "s.jsonl:1", "surrogate")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["validate", "run", "fidelity"])
def test_p20_rows_1_a_lone_surrogate_in_an_expansion_text_is_refused(cli, tmp_path, own_cache, command):
    """Was: validate, run and fidelity exit 3 (UnicodeEncodeError)."""
    seeds = _write_rows(tmp_path / "s.jsonl", seed_row())
    exps = _write_rows(tmp_path / "x.jsonl", {"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc04",
                                              "task": "sentiment", "text": f"a very {LONE} fine film",
                                              "accepted": True})
    argv = {"validate": _validate_argv(seeds), "run": _run_argv(tmp_path, seeds),
            "fidelity": ["fidelity", "--task", "sentiment", "--lc", "4"]}[command]
    assert_clean_error(cli(*argv, "--expansions", str(exps)), 2, "x.jsonl:1", "surrogate")


def _with_deep_meta(row: dict, key: str, depth: int) -> str:
    """The row as one JSON line whose meta is {key: [[...[1]...]]} nested ``depth`` deep."""
    return json.dumps({**row, "meta": None}).replace('"meta": null', f'"meta": {{"{key}": {_deep_json(depth)}}}')


SUITE_ROWS = {  # suite cases JSONL lines the reader must refuse (exit 3, or accepted, before)
    "text-lone-surrogate": (json.dumps(_case_row(text=f"a fine {LONE} film")), "surrogate"),
    "meta-900-deep": (_with_deep_meta(_case_row(), "x", 900), "nested"),
    "meta-nan": (json.dumps(_case_row(meta={"x": float("nan")})), "NaN"),
    "meta-infinity": (json.dumps(_case_row(meta={"x": float("inf")})), "Infinity"),
}


@pytest.mark.parametrize(("line", "needle"), SUITE_ROWS.values(), ids=SUITE_ROWS.keys())
def test_p20_rows_1_suite_cases_jsonl_is_strict_json(cli, tmp_path, own_cache, line, needle):
    """Was: a lone surrogate or meta nested 900 deep -> run --suite exit 3 (UnicodeEncodeError / RecursionError in
    TestCase.to_dict); meta NaN or Infinity accepted, and the run's cases part then held bare NaN."""
    suite = tmp_path / "cases.jsonl"
    suite.write_text(line + "\n")
    assert_clean_error(cli(*_suite_argv(tmp_path, suite)), 2, "cases.jsonl:1", needle)
    assert not (tmp_path / "r").exists()


def test_p20_rows_1_a_seed_meta_nested_500_deep_is_refused(cli, tmp_path, own_cache):
    """Was: validate exit 0, run exit 3 (RecursionError in dataclasses.asdict at the cases' write)."""
    seeds = tmp_path / "s.jsonl"
    seeds.write_text(_with_deep_meta(seed_row(), "zz", 500) + "\n")
    assert_clean_error(cli(*_run_argv(tmp_path, seeds)), 2, "s.jsonl:1")
    assert_clean_error(cli(*_validate_argv(seeds)), 2, "s.jsonl:1")


def test_p20_rows_1_a_lone_surrogate_in_a_checklist_suite_is_refused(cli, tmp_path, own_cache):
    """Was: run --suite exit 3 (UnicodeEncodeError)."""
    suite = tmp_path / "cl.json"
    suite.write_text(json.dumps({"t1": {"type": "MFT", "capability": "Vocab", "data": [f"good {LONE} film"],
                                        "labels": [2]}}))
    assert_clean_error(cli(*_suite_argv(tmp_path, suite)), 2, "cl.json", "surrogate")
    assert not (tmp_path / "r").exists()


def test_p20_rows_1_a_lone_surrogate_in_lego_seeds_is_refused(cli, tmp_path, own_cache):
    """Was: lego --seeds JSONL exit 3 (UnicodeEncodeError hashing the text for its artefact key); on a machine
    without the classifiers artefact the old code refused that instead, after reading the seeds (no "surrogate")."""
    seeds = _write_rows(tmp_path / "lego.jsonl", {"id": "a", "text": f"a fine {LONE} film"})
    assert_clean_error(cli("lego", "--task", "sentiment", "--seeds", str(seeds), "--out", str(tmp_path / "lo")), 2,
                       "lego.jsonl:1", "surrogate")
    assert not (tmp_path / "lo").exists()


@pytest.mark.parametrize(("text", "problem"), [
    (json.dumps({"t": f"x{LONE}"}), "surrogate"),
    (json.dumps({"t": "\udc00 low half"}), "surrogate"),
    ('{"t": "x\\uD800"}', "surrogate"),
    (_deep_json(101), "nested"),
    ('{"a": ' * 101 + "1" + "}" * 101, "nested"),
], ids=["high-half", "low-half", "upper-case-escape", "list-101-deep", "object-101-deep"])
def test_p20_rows_1_strict_json_refuses_lone_surrogates_and_deep_nesting(text, problem):
    """Was: read (a later UTF-8 write raised UnicodeEncodeError; a later asdict / dump RecursionError)."""
    from alict_core.common.errors import AlictError
    from alict_core.common.userfiles import parse_json

    with pytest.raises(AlictError, match=problem):
        parse_json(text, "f.json")


@pytest.mark.parametrize("text", [
    json.dumps({"t": "an emoji \U0001f600 as a surrogate pair"}),
    '{"t": "a written backslash-u \\\\ud800"}',
    _deep_json(99),
], ids=["surrogate-pair", "escaped-backslash", "list-99-deep"])
def test_p20_rows_1_positive_control_strict_json_reads_pairs_and_moderate_nesting(text):
    """Positive control (passes before and after): a surrogate pair is one character, a written backslash is no
    escape, and nesting under the limit is read."""
    from alict_core.common.userfiles import parse_json

    assert parse_json(text, "f.json") == json.loads(text)


@pytest.mark.usefixtures("fresh_engines")
def test_p20_rows_1_a_lone_surrogate_in_a_review_note_is_refused(cli, tmp_path, review_db):
    """Was: review import exit 3 (UnicodeEncodeError at the database write)."""
    url, form = review_db
    row = json.loads(form.read_text().splitlines()[0])
    row.update(reviewer="ann", relevance=4, label_score=4, note=f"n{LONE}")
    upload = _write_rows(tmp_path / "judged.jsonl", row)
    assert_clean_error(cli("review", "import", "--db", url, str(upload)), 2, "judged.jsonl:1", "surrogate")
    assert cli("review", "export", "--db", url, "t", "--judgements", "--out", str(tmp_path / "j.jsonl")).code == 0
    assert (tmp_path / "j.jsonl").read_text() == ""  # nothing imported


# 2: INV / DIR cases without variants; a test type its expectation does not make -------------------------------

UNTESTABLE_SEEDS = {  # no LC of the task is DIR: a DIR seed is refused by its LC's test type or for its variants
    "inv-no-identity-term": (_inv(text="my sister liked the film"), "has none"),
    "dir-no-variants": (seed_row(test_type="DIR", expected={"kind": "direction", "labels": ["positive"]}), "DIR"),
    "mft-with-invariance": (seed_row(expected={"kind": "invariance"}), "does not match"),
}


@pytest.mark.parametrize(("row", "needle"), UNTESTABLE_SEEDS.values(), ids=UNTESTABLE_SEEDS.keys())
def test_p20_rows_2_a_seed_that_tests_nothing_is_refused(cli, tmp_path, own_cache, row, needle):
    """Was: run exit 0 with the case counted as passed (no variant compared), or an MFT row judged as INV."""
    seeds = _write_rows(tmp_path / "s.jsonl", row)
    assert_clean_error(cli(*_run_argv(tmp_path, seeds, _lc(row))), 2, needle)
    assert not (tmp_path / "r").exists()


SUITE_UNTESTABLE = {
    "inv-empty-variants": _case_row(test_type="INV", expected={"kind": "invariance"}, variants=[]),
    "inv-no-variants": _case_row(test_type="INV", expected={"kind": "invariance"}, text="my sister liked it"),
    "dir-no-variants": _case_row(test_type="DIR", expected={"kind": "direction", "labels": ["positive"]}),
    "mft-with-invariance": _case_row(expected={"kind": "invariance"}, variants=["a fine movie"]),
}


@pytest.mark.parametrize("row", SUITE_UNTESTABLE.values(), ids=SUITE_UNTESTABLE.keys())
def test_p20_rows_2_a_suite_case_that_tests_nothing_is_refused(cli, tmp_path, own_cache, row):
    """Was: run --suite exit 0, the INV case passed without a variant (its export then refused as a CheckList)."""
    suite = _write_rows(tmp_path / "cases.jsonl", row)
    assert_clean_error(cli(*_suite_argv(tmp_path, suite)), 2, "cases.jsonl:1")
    assert not (tmp_path / "r").exists()


def test_p20_rows_2_positive_control_an_inv_seed_with_an_identity_term_runs(cli, tmp_path, own_cache):
    """Positive control (passes before and after): an INV seed whose text has an identity term gets its variants
    made, and runs."""
    seeds = _write_rows(tmp_path / "s.jsonl", _inv(text="women think the show is good"))
    outcome = cli(*_run_argv(tmp_path, seeds, "11"))
    assert outcome.code == 0, outcome.err[-600:]


# 3: blank variants and ids; seed ids across --seeds files ----------------------------------------------------------

@pytest.mark.parametrize("command", ["validate", "run"])
def test_p20_rows_3_blank_seed_variants_are_refused(cli, tmp_path, own_cache, command):
    """Was: run exit 0, an empty variant's prediction counted (fail rate 1/3 from it); harden train then refused the
    run's own export as hand-edited."""
    seeds = _write_rows(tmp_path / "s.jsonl", _inv(text="women like the film", variants=["", "  "]))
    argv = _validate_argv(seeds, "11") if command == "validate" else _run_argv(tmp_path, seeds, "11")
    assert_clean_error(cli(*argv), 2, "s.jsonl:1", "variants")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["validate", "run"])
def test_p20_rows_3_blank_expansion_variants_are_refused(cli, tmp_path, own_cache, command):
    """Was: accepted as for seeds (the expansion row's variants had no check for an empty text either)."""
    seeds = _write_rows(tmp_path / "s.jsonl", _inv(text="women like the film"))
    exps = _write_rows(tmp_path / "x.jsonl", {"id": "e1", "seed_id": "s1", "lc_id": "sentiment-lc11",
                                              "task": "sentiment", "text": "women really like the film",
                                              "accepted": True, "variants": ["men really like the film", " "]})
    argv = _validate_argv(seeds, "11") if command == "validate" else _run_argv(tmp_path, seeds, "11")
    assert_clean_error(cli(*argv, "--expansions", str(exps)), 2, "x.jsonl:1", "variants")
    assert not (tmp_path / "r").exists()


BLANK_IDS = {"lc-empty": {"lc_id": ""}, "lc-spaces": {"lc_id": "   "}, "case-empty": {"case_id": "", "seed_id": ""}}


@pytest.mark.parametrize("change", BLANK_IDS.values(), ids=BLANK_IDS.keys())
def test_p20_rows_3_blank_suite_ids_are_refused(cli, tmp_path, own_cache, change):
    """Was: accepted; the summary printed the LC as NaN, compare said "run A () and run B ( )"."""
    suite = _write_rows(tmp_path / "cases.jsonl", _case_row(**change))
    assert_clean_error(cli(*_suite_argv(tmp_path, suite)), 2, "cases.jsonl:1", next(iter(change)))
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("same_text", [True, False], ids=["same-text", "other-text"])
def test_p20_rows_3_a_seed_id_in_two_seeds_files_is_refused_by_validate(cli, tmp_path, own_cache, same_text):
    """Was: validate exit 0 counting both seeds (run refused "duplicate case ids")."""
    first = _write_rows(tmp_path / "a.jsonl", seed_row())
    second = _write_rows(tmp_path / "b.jsonl", seed_row(text="a fine film" if same_text else "a good film"))
    outcome = cli("validate", "--task", "sentiment", "--lc", "4", "--seeds", str(first), "--seeds", str(second))
    assert_clean_error(outcome, 2, "'s1'", "comes twice")


# 4: terminal escapes -----------------------------------------------------------------------------------------------

def test_p20_cli_4_printable_frame_escapes_string_dtype_columns():
    """Was: only object columns were escaped; pandas 3 reads text columns as dtype "str", so nothing was."""
    import pandas as pd

    from alict_core.common.textsafe import printable_frame

    frame = pd.DataFrame({"text": pd.array(["\x1b[31mred", "plain"], dtype="string"), "n": [1, 2]})
    frame["other"] = pd.Series(["a\u202eb", "c"]).astype(str)
    shown = printable_frame(frame).to_string()
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "plain" in shown


def test_p20_cli_4_a_checklist_suite_named_with_an_escape_is_refused(cli, tmp_path, own_cache):
    """Was: the file name (the prefix of every LC id) reached the run table raw: `a\\x1b[31mred:t1`."""
    suite = tmp_path / "a\x1b[31mred.json"
    suite.write_text(json.dumps({"t1": {"type": "MFT", "capability": "Vocab", "data": ["good film"],
                                        "labels": [2]}}))
    outcome = cli(*_suite_argv(tmp_path, suite))
    assert_clean_error(outcome, 2, "control character")
    assert "\x1b" not in outcome.err
    assert not (tmp_path / "r").exists()


def test_p20_cli_4_compare_never_prints_an_escape_of_a_case_text(cli, tmp_path, own_cache):
    """Was: `compare` printed its newly failing cases' texts raw (printable_frame skipped pandas 3 string columns):
    a seed text with ESC / U+202E reached the terminal."""
    text = "great movie \x1b[2K\r\x1b[31mPWNED\u202e"
    seeds = _write_rows(tmp_path / "s.jsonl", seed_row(text=text))
    good = _write_rows(tmp_path / "pa.jsonl", {"text": text, "negative": 0.1, "neutral": 0.1, "positive": 0.8})
    bad = _write_rows(tmp_path / "pb.jsonl", {"text": text, "negative": 0.8, "neutral": 0.1, "positive": 0.1})
    assert cli("run", "--task", "sentiment", "--models", f"static:path={good},static:path={bad}", "--lc", "4",
               "--seeds", str(seeds), "--out", str(tmp_path / "r")).code == 0
    outcome = cli("compare", str(tmp_path / "r"), "--model-a", "pa", "--model-b", "pb")
    assert outcome.code == 0, outcome.err[-600:]
    assert "PWNED" in outcome.out  # the case is listed, escaped
    assert "\x1b" not in outcome.out + outcome.err
    assert "\u202e" not in outcome.out + outcome.err


# 5: static predictions -----------------------------------------------------------------------------------------

def _predictions(path: Path, **proba) -> Path:
    return _write_rows(path, {"text": "a fine film", "negative": 0.1, "neutral": 0.1, "positive": 0.8, **proba})


def test_p20_cli_5_a_huge_integer_probability_is_refused(cli, tmp_path, own_cache):
    """Was: exit 3 "OverflowError: int too large to convert to float"."""
    predictions = _predictions(tmp_path / "p.jsonl", positive=10 ** 400)
    seeds = _write_rows(tmp_path / "s.jsonl", seed_row())
    outcome = cli("run", "--task", "sentiment", "--models", f"static:path={predictions}", "--lc", "4", "--seeds",
                  str(seeds), "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "p.jsonl:1", "must be numbers")


def test_p20_cli_5_a_predictions_file_named_with_an_escape_is_shown_printable(cli, tmp_path, own_cache):
    """Was: the model's shown name was the file stem, unchecked: ESC printed raw in the run table."""
    predictions = _predictions(tmp_path / "a\x1b[31mred.jsonl")
    seeds = _write_rows(tmp_path / "s.jsonl", seed_row())
    outcome = cli("run", "--task", "sentiment", "--models", f"static:path={predictions}", "--lc", "4", "--seeds",
                  str(seeds), "--out", str(tmp_path / "r"))
    assert outcome.code == 0, outcome.err[-600:]
    assert "\x1b" not in outcome.out + outcome.err
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert "\x1b" not in json.dumps(meta, ensure_ascii=False)


# 6: harden evaluate reads the export's run only where its folder still holds it ------------------------------------

RUN_A, RUN_B = "a" * 16, "b" * 16


def _run_folder_of(tmp_path: Path, held: str) -> Path:
    folder = tmp_path / "run1"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"run_id": held}))
    return folder


def test_p20_cli_6_a_run_folder_holding_another_run_is_not_read(tmp_path, own_cache):
    """Was: `harden evaluate` read the "other LCs" from the export's run_dir whenever it held a meta.json: a run
    re-run into the same --out since was listed as the export's run (other LCs 50.0% -> 0.0% of another run)."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.evaluate import _run_folder

    folder = _run_folder_of(tmp_path, RUN_B)
    with pytest.raises(AlictError, match="no longer in its folder"):
        _run_folder({"run_dir": str(folder), "run_id": RUN_A})


def test_p20_cli_6_positive_control_a_run_folder_holding_the_run_is_read(tmp_path, own_cache):
    """Positive control (passes before and after): the folder that still holds the export's run is its run."""
    from alict_core.harden.evaluate import _run_folder

    folder = _run_folder_of(tmp_path, RUN_A)
    assert _run_folder({"run_dir": str(folder), "run_id": RUN_A}) == folder


# 7: out of space is one exit-2 message -----------------------------------------------------------------------------

def _limited(limit: int):
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_limit


def _subprocess_cli(argv: list[str], cache: Path, limit: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ALICT_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "alict_core", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=240, env=env, preexec_fn=_limited(limit))


def _assert_out_of_space(code: int, err: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2, (code, err[-600:])
    assert len(lines) == 1 and "out of space" in lines[0], err[-600:]
    assert "internal error" not in err and "Traceback" not in err


@pytest.fixture
def saved(cli, tmp_path, own_cache) -> Path:
    seeds = _write_rows(tmp_path / "s.jsonl", seed_row(), seed_row(id="s2", text="a dull film",
                                                                     expected={"kind": "label",
                                                                               "labels": ["negative"]}))
    assert cli(*_run_argv(tmp_path, seeds)).code == 0
    return tmp_path / "r"


@pytest.mark.parametrize("command", ["run", "report", "report-export", "harden-export"])
def test_p20_kill_7_a_file_size_limit_is_one_out_of_space_message(cli, tmp_path, own_cache, saved, command):
    """Was: exit 3 "internal error (OSError: [Errno 27] File too large) ... please report it" (RLIMIT_FSIZE, as
    `ulimit -f`; ENOSPC took the same path). Nothing half written is left."""
    argv = {"run": [*_run_argv(tmp_path, tmp_path / "s.jsonl")[:-1], str(tmp_path / "r2")],
            "report": ["report", str(saved), "--out", str(tmp_path / "r2.html")],
            "report-export": ["report", str(saved), "--export", str(tmp_path / "r2")],
            "harden-export": ["harden", "export", "--run", str(saved), "--lcs", "4", "--out", str(tmp_path / "r2")],
            }[command]
    done = _subprocess_cli(argv, own_cache, 1024)
    _assert_out_of_space(done.returncode, done.stderr)
    assert not any(p.name.startswith(("r2", ".r2")) for p in tmp_path.iterdir())


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EDQUOT], ids=["ENOSPC", "EDQUOT"])
def test_p20_kill_7_no_space_left_is_one_out_of_space_message(cli, tmp_path, saved, monkeypatch, number):
    """Was: exit 3 "internal error (OSError: [Errno 28] No space left on device) ... please report it"."""
    real = os.replace

    def full(src, dst, *args, **kwargs):
        if str(dst).endswith("r2.html"):
            raise OSError(number, os.strerror(number))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full)
    outcome = cli("report", str(saved), "--out", str(tmp_path / "r2.html"))
    assert_clean_error(outcome, 2, "out of space")
    assert not (tmp_path / "r2.html").exists()
