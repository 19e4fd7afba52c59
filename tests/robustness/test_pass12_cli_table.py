"""Hostile pass 12 (CLI) table (notes: attack_pass12_cli.md A-G): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

RUN = ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "2", "--quiet"]


# A: a suite field's message names the element at fault ---------------------------------------------------------

@pytest.mark.parametrize(("labels", "where", "got"), [
    ([True, 0], "labels[0]", "got bool"),
    ([1.5, 0], "labels[0]", "got float"),
    (["positive", {"a": 1}], "labels[1]", "got dict"),
])
def test_a_checklist_label_message_names_the_bad_element(cli, tmp_path, labels, where, got):
    """Was: "field 'labels': Input should be a valid integer (got list)" for every one (the try of the whole
    list as one label): the list is allowed, its element is not."""
    suite = tmp_path / "cl.json"
    suite.write_text(json.dumps({"t1": {"type": "MFT", "capability": "Vocab", "data": ["good movie", "bad movie"],
                                        "labels": labels}}))
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--strict",
                  "--out", str(tmp_path / "out"))
    assert_clean_error(outcome, 2, f"field {where!r}", got)
    assert not (tmp_path / "out").exists()


# B, C: review scores and write-back rules --------------------------------------------------------------------------

@pytest.mark.parametrize("relevance", [10 ** 400, int("9" * 4000)], ids=["10**400", "4000 nines"])
def test_b_a_huge_integer_score_is_a_bad_score(cli, tmp_path, review_db, relevance):
    """Was: exit 3 "internal error (OverflowError: int too large to convert to float)" (check_score compared the
    score with float(value) outside its guard)."""
    url, form = review_db
    row = json.loads(form.read_text().splitlines()[0])
    row.update(reviewer="ann", relevance=relevance, label_score=3)
    upload = tmp_path / "judged.jsonl"
    upload.write_text(json.dumps(row) + "\n")
    outcome = cli("review", "import", "--db", url, str(upload))
    assert_clean_error(outcome, 2, "judged.jsonl:1", "relevance must be an integer from 1 to 5")
    assert cli("review", "export", "--db", url, "t", "--judgements", "--out", str(tmp_path / "j.jsonl")).code == 0
    assert (tmp_path / "j.jsonl").read_text() == ""  # nothing imported


@pytest.mark.parametrize(("column", "value", "needle"), [
    ("min_agreeing", "abc", "damaged write-back rule"),
    ("min_agreeing", 0, "damaged write-back rule"),
    ("confirmed_at", "garbage", "damaged write-back rules"),
])
def test_c_a_damaged_writeback_rule_is_refused_naming_it(cli, tmp_path, review_db, monkeypatch, column, value,
                                                         needle):
    """Was: min_agreeing 'abc' or confirmed_at 'garbage' (edited outside ALiCT) → exit 3 (ValueError) from
    `review writeback` and from every `run`; min_agreeing 0 was used as the default rule 2 without a word."""
    url, _ = review_db
    assert cli("review", "writeback", "--db", url, "--task", "sentiment", "--confirm", "--by", "lead").code == 0
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        db.execute(f"UPDATE writeback_rules SET {column} = ?", (value,))
    outcome = cli("review", "writeback", "--db", url, "--task", "sentiment")
    assert_clean_error(outcome, 2, needle, "changed outside ALiCT")
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    outcome = cli(*RUN, "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, needle)


# D: a built model folder is an artefact to the output guards -------------------------------------------------------

@pytest.fixture()
def built_model(tmp_path) -> Path:
    """A folder laid out and checksummed as `build` leaves a model (models.artefacts.verify accepts it)."""
    from alict_core.models.artefacts import file_hashes, verify

    folder = tmp_path / "models" / "quick" / "mlm"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"note": "a model's own file"}))
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "target": "mlm", "profile": "quick",
                                                      "files": file_hashes(folder)}))
    verify(folder, "mlm")
    return folder


@pytest.mark.parametrize("option", ["--summary-json", "--report", "--out"])
def test_d_an_output_inside_a_built_model_is_refused(cli, tmp_path, built_model, option):
    """Was: `run --summary-json <cache>/models/quick/mlm/s.json` (or --report, `harden export --out` beneath
    classifiers/) wrote there, rc 0, and the model then failed its check ("unexpected: s.json"): every later
    run/expand/lego refused until a rebuild. The model's manifest.json read as another program's."""
    from alict_core.models.artefacts import verify

    target = {"--summary-json": built_model / "s.json", "--report": built_model / "r.html",
              "--out": built_model / "sub" / "run"}[option]
    argv = [*RUN, option, str(target)] + ([] if option == "--out" else ["--out", str(tmp_path / "r")])
    outcome = cli(*argv)
    assert_clean_error(outcome, 2, "lies inside the saved artefact", "a built model")
    verify(built_model, "mlm")  # still whole: nothing was added


def test_d_a_built_model_folder_is_not_replaced_by_an_export(cli, tmp_path, built_model, saved_run):
    """`report --export <a built model folder>` is refused naming what the folder holds."""
    outcome = cli("report", str(saved_run), "--export", str(built_model))
    assert_clean_error(outcome, 2, "holds a built model")


# F: a resumed shard loop joins only parts as they were written ------------------------------------------------------

PAIRS = [("The film is good .", "The film is not good at all ."), ("A great movie .", "A great movie , sadly not ."),
         ("I love this film .", "I hardly love this film ."), ("Nice acting .", "Nice acting , but boring .")]


@pytest.fixture()
def pairs_run(cli, tmp_path) -> Path:
    """A vader run of 4 seeds and 4 expansions with pass-to-fail pairs in LC 'my-lc'."""
    expected = {"kind": "label", "labels": ["positive"], "tolerance": None}
    rows = []
    for i, (seed, expansion) in enumerate(PAIRS):
        common = {"lc_id": "my-lc", "seed_id": f"s{i}", "expected": expected, "test_type": "MFT",
                  "capability": "Negation", "task": "sentiment"}
        rows += [{"case_id": f"s{i}", "kind": "seed", "text": seed, **common},
                 {"case_id": f"e{i}", "kind": "expansion", "text": expansion, **common}]
    suite = tmp_path / "cases.jsonl"
    suite.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "run"
    assert cli("run", "--task", "sentiment", "--models", "vader", "--no-lcs", "--suite", str(suite), "--quiet",
               "--out", str(out)).code == 0
    return out


def test_f_an_edited_part_of_a_killed_explain_is_computed_again(pairs_run, tmp_path):
    """Was: a finished part-NNNNN.jsonl of a stopped (or killed) `explain --results` edited on disk (a token
    'TAMPERED', score -99) was joined as is on resume and printed; the artefact's manifest then vouched for it."""
    from alict_core.executors.base import ExecutorCancelled
    from alict_core.explain.sharded import explain_failures_sharded

    options = {"model_name": "vader", "shard_size": 1, "method": "lemna", "n_samples": 40, "templates": False,
               "out_dir": tmp_path / "explain"}
    calls = []
    with pytest.raises(ExecutorCancelled):
        explain_failures_sharded(pairs_run, "my-lc", should_stop=lambda: bool(calls.append(1)) or len(calls) > 1,
                                 **options)
    parts = sorted((tmp_path / "explain").glob("*.shards/part-*.jsonl"))
    assert parts, "the stop left no finished part"
    row = json.loads(parts[0].read_text().splitlines()[0])
    row["seed"]["tokens"][0], row["seed"]["scores"][0] = "TAMPERED", -99.0
    parts[0].write_text(json.dumps(row) + "\n")
    explained = explain_failures_sharded(pairs_run, "my-lc", **options)
    pairs = [pair.to_dict() for pair in explained.iter_pairs()]
    assert pairs and "TAMPERED" not in json.dumps(pairs)


# E: ALICT_MODEL_PROFILE is a profile name, never a path ----------------------------------------------------------

@pytest.mark.parametrize("value", ["../../etc", "quick/../../x", "nosuch"])
def test_e_a_model_profile_that_is_no_profile_is_refused(cli, tmp_path, monkeypatch, value):
    """Was: ALICT_MODEL_PROFILE=../../etc joined on as a path ("not built (looked in <cache>/models/../../etc/
    classifiers)"), while the empty value's message said "one of full, quick"."""
    monkeypatch.setenv("ALICT_MODEL_PROFILE", value)
    outcome = cli("run", "--task", "sentiment", "--models", "minilm-sst", "--lc", "lc4", "--max-seeds", "2",
                  "--quiet", "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2, "ALICT_MODEL_PROFILE", "is not a profile", limit_s=60)


# G: the Review page shows a write-back rule the CLI may confirm -----------------------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
def test_g_the_review_page_shows_a_rule_above_twenty(tmp_path, monkeypatch):
    """Was: `review writeback --confirm --min-agreeing 50` (the store takes 1-100) made the Review page's write-back
    view fail: "Unexpected error while computing the validity metrics: StreamlitValueAboveMaxError" (its number
    input stopped at 20)."""
    from alict_core.review.store import ReviewStore, dispose_engines
    from tests.test_review_app import create_task_from_a_run

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    try:
        at = create_task_from_a_run(tmp_path, monkeypatch, "wide")
        ReviewStore(url).confirm_writeback("sentiment", 50, "lead")
        at.button(key="review_claim").click().run()
        at.button(key="review_relevance_4").click().run()  # a judgement: the write-back view is shown
        at.button(key="review_label_1").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(n.value == 50 for n in at.number_input), ([n.value for n in at.number_input],
                                                             [e.value for e in at.error])
    finally:
        dispose_engines()


# H (left by p12cli, fixed by the lead): a hardening export written into the run store ------------------------------

@pytest.mark.parametrize("command", ["export", "fix"])
def test_h_harden_out_in_the_run_store_is_refused_before_any_work(cli, tmp_path, monkeypatch, command):
    """Was: `harden export --out <cache>/runs/x` wrote the export among the saved runs (report --export refused the
    same folder). Now both refuse it with one message before anything is read or written."""
    from alict_core.runner.store import runs_root

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    out = runs_root() / "hx"
    extra = ["--model", "minilm-sst"] if command == "fix" else []
    outcome = cli("harden", command, "--run", "no-such-run", "--lcs", "lc04", "--out", str(out), *extra)
    assert_clean_error(outcome, 2, "lies in the run store")  # before the missing run (or the model) is named
    assert not out.exists()


# J (left by p12cli, fixed by the lead): a folder given as a spec was called "a pipe, device or socket" -------------

def test_j_a_folder_given_as_spec_is_named_a_folder(tmp_path):
    from alict_core.lcspec.loader import SpecValidationError, load_spec

    with pytest.raises(SpecValidationError) as caught:
        load_spec(tmp_path)
    assert "a folder, not a file" in str(caught.value) and "pipe" not in str(caught.value)
