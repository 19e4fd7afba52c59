"""Pass 37 rows (CI and the p37 helpers; fixed by the lead): each failed before its fix."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

import pytest

from tests.robustness.support import LoopbackService


def test_p37_ci_1_a_first_use_waits_while_another_session_writes_a_new_database(tmp_path, fresh_engines):
    """Was (CI, 1 of ~30 trials of the pass-34 row): two of four first uses of a new SQLite file at once failed
    "another session holds a lock on it and did not release it in 30 s" at once: SQLite refuses the switch to WAL
    without its busy handler while another connection writes. Now the switch waits like any statement."""
    from alict_core.review import store

    path = tmp_path / "new.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another session's write transaction on the new (rollback-journal) file
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    try:
        engine = store.engine_for(f"sqlite:///{path}")
    finally:
        release.join()
        holder.close()
    assert time.monotonic() - started >= 0.9  # it waited for the other session instead of failing
    assert store.schema_version(engine) == store.SCHEMA_VERSION
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_p37_ci_2_a_lock_held_past_the_wait_is_still_one_message(tmp_path, fresh_engines, monkeypatch):
    """A lock that outlasts the wait is still the one DatabaseLockedError naming the database (not a hang)."""
    from alict_core.review import store

    monkeypatch.setattr(store, "LOCK_TIMEOUT_S", 0.5)
    path = tmp_path / "new.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(store.ReviewError, match="another session holds a lock on it"):
            store.engine_for(f"sqlite:///{path}")
        assert time.monotonic() - started < 10
    finally:
        holder.close()


def _cases_file(tmp_path):
    import json

    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    return cases


def test_p37_kill_1_a_refused_sample_never_removes_a_database_another_command_made_meanwhile(
        cli, tmp_path, fresh_engines, monkeypatch):
    """Was (the p37kill helper, medium; 4 of 8 trials): `review sample --task hate_speech` (a refused task) and a
    valid `review sample` started together on one new SQLite file: the refused one had found no file at its start,
    created it, and on failing removed "the database it created" (no task in it yet); the other command then
    committed its task into the removed file and said "review task 'b'", a task nobody could find. A refused sample
    now opens no database, and a failed command never removes one."""
    import subprocess
    import sys

    import alict_core.review as review

    path = tmp_path / "race.sqlite"
    url = f"sqlite:///{path}"
    other: list[sqlite3.Connection] = []
    read_cases = review.load_cases

    def another_command_makes_the_database(source):  # the other command's first use, while this one reads cases
        subprocess.run([sys.executable, "-c", f"from alict_core.review.store import engine_for; engine_for({url!r})"],
                       check=True, timeout=120)
        connection = sqlite3.connect(path, isolation_level=None)
        connection.execute("SELECT COUNT(*) FROM review_tasks").fetchone()  # it holds the file open, about to write
        other.append(connection)
        return read_cases(source)

    monkeypatch.setattr(review, "load_cases", another_command_makes_the_database)
    outcome = cli("review", "sample", "--db", url, "--task", "hate_speech", "--cases", str(_cases_file(tmp_path)),
                  "--name", "a", "--size", "3", "--sets", "1", "--k", "1")
    assert outcome.code == 2 and "not hate_speech" in outcome.err, outcome.err[-400:]
    other[0].execute("PRAGMA user_version = 7")  # the other command's write, after the refusal
    other[0].close()
    assert path.exists()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 7


def test_p37_kill_1b_a_refused_sample_on_a_new_database_creates_nothing(cli, tmp_path, fresh_engines):
    """The refused task is refused before the database is opened: no file, no journal."""
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'new.sqlite'}", "--task", "hate_speech",
                  "--cases", str(_cases_file(tmp_path)), "--name", "a", "--size", "3", "--sets", "1", "--k", "1")
    assert outcome.code == 2 and "not hate_speech" in outcome.err
    assert not any(p.name.startswith("new.sqlite") for p in tmp_path.iterdir())


def test_p37_kill_1c_an_import_into_a_missing_database_is_refused_without_creating_it(cli, tmp_path, fresh_engines):
    """An import needs a review task, so a missing database is refused before it is created (it was created,
    migrated, then removed again on "no review task")."""
    judgements = tmp_path / "j.csv"
    judgements.write_text("case_id,text_hash,reviewer,relevance,label_score\na,b,ann,5,4\n")
    outcome = cli("review", "import", "--db", f"sqlite:///{tmp_path / 'new.sqlite'}", "--task", "t",
                  str(judgements))
    assert outcome.code == 2 and "no review database at" in outcome.err, outcome.err[-400:]
    assert not any(p.name.startswith("new.sqlite") for p in tmp_path.iterdir())


def test_p37_cli_1_a_long_parse_tree_keeps_its_line_breaks_and_escapes_its_tokens(cli, monkeypatch):
    """Was (the p37cli helper, low): `parse --text <a long sentence>` printed a tree longer than 100 characters as one
    line of literal `\\n` escapes: the terminal escaping (pass 35) escaped the tree's own line breaks too."""
    from nltk import Tree

    import alict_core.parsing as parsing

    words = ["The", "movie", "was", "not", "very", "good", "but", "the", "actors", "did", "a", "wonderful", "job",
             "with", "the", "weak", "script", "they", "had", "been", "given", "x\x1b[2Jy"]

    class FlatParser:
        def parse_batch(self, token_lists):
            return [Tree("S", [Tree("NN", [word]) for word in tokens]) for tokens in token_lists]

    monkeypatch.setattr(parsing, "get_parser", lambda name=None: FlatParser())
    outcome = cli("parse", "--text", " ".join(words))
    assert outcome.code == 0, outcome.err
    tree_lines = outcome.out.split("  S -> ")[0].splitlines()
    assert len(tree_lines) > 3 and tree_lines[0] == "(S"
    assert "\\n" not in outcome.out and "\x1b" not in outcome.out and "x\\x1b[2Jy" in outcome.out


class _Redeployable(LoopbackService):
    """A JSON endpoint on loopback that answers one label for every text; ``label`` changes with a redeploy. With
    ``key``, a request without the header ``X-Api-Key: <key>`` is answered 401."""

    def __init__(self, label: str, key: str | None = None) -> None:
        self.label, self.key, self.texts_asked = label, key, []
        super().__init__()
        self.url = f"{self.base}/predict"

    def respond(self, path, headers, request, number):
        texts = request["texts"]
        allowed = self.key is None or headers.get("X-Api-Key") == self.key
        self.texts_asked += texts if allowed else []
        return (200, {"labels": [self.label] * len(texts)}) if allowed else (401, {"error": "no key"})


def _predicted(run_dir) -> set[str]:
    import pandas as pd

    return set(pd.concat(pd.read_parquet(part) for part in sorted((run_dir / "results").glob("*.parquet")))
               ["predicted"].astype(str))


def test_p37_pages_3_a_redeployed_endpoint_is_asked_again_by_the_next_run(cli, tmp_path, own_cache):
    """Was (the p37pages helper, medium-low): an endpoint's answers were kept on disk under its URL, so after the
    service behind it was redeployed, running the same settings again served the old run ("loaded from cache", 0
    requests), and even a run under a new name took the old answers from the prediction cache: the Run page's "press
    Run to run them again as they are now" re-showed the old service. An endpoint's answers are now kept for one run
    (and its resume) only."""
    import json

    service = _Redeployable("positive")
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a fine film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i in range(4)))
    try:
        model = f"http:url={service.url},name=svc"
        first = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", "--out",
                    str(tmp_path / "run"))
        assert first.code == 0, first.err[-400:]
        assert _predicted(tmp_path / "run") == {"positive"} and service.texts_asked.count("a fine film 0") == 1
        service.label = "negative"  # redeployed
        again = cli("run", "--task", "sentiment", "--models", model, "--seeds", str(seeds), "--quiet", "--out",
                    str(tmp_path / "run"))
        assert again.code in (0, 1), again.err[-400:]
        assert _predicted(tmp_path / "run") == {"negative"} and service.texts_asked.count("a fine film 0") >= 2
        asked = service.texts_asked.count("a fine film 0")
        other = cli("run", "--task", "sentiment", "--models", f"http:url={service.url},name=svc2", "--seeds",
                    str(seeds), "--quiet", "--out", str(tmp_path / "run2"))
        assert other.code in (0, 1), other.err[-400:]
        assert service.texts_asked.count("a fine film 0") > asked  # not from a prediction cache either
    finally:
        service.close()


@pytest.mark.parametrize("name", ["t", "T"])
def test_p37_pages_2_a_taken_review_task_name_is_said_without_a_cli_option(review_db, fresh_engines, name):
    """Was (the p37pages helper, cosmetic): the Review page's "Create review task" said "a review task named 't'
    already exists; choose another --name" (also for a look-alike), an option the page does not have."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from tests.robustness.support import small_cases

    url, _ = review_db
    with pytest.raises(Exception, match="choose another name") as refused:
        create_review_task(ReviewStore(url), name, "sentiment", small_cases(3), SamplingPlan(size=3, n_sets=1, k=1))
    assert "--name" not in str(refused.value)


def test_p37_pages_5_a_run_keeps_its_capability_after_the_spec_is_edited(tmp_path, monkeypatch):
    """Was (the p37pages helper, medium-low): a workspace save of `sentiment-lc01` with another title and capability
    showed every earlier run's LC1 under the new title and counted it under the new capability (Failures, Report,
    Compare's per-capability table): past aggregates changed after the fact. A run's LC keeps the capability its
    cases carry; when the spec names another, the LC is shown under its id, not the new title."""
    from pathlib import Path

    from alict_core.lcspec.capabilities import lc_catalog

    workspace = tmp_path / "work"
    (workspace / "specs" / "sentiment").mkdir(parents=True)
    shipped = (Path(__file__).parents[2] / "specs" / "sentiment" / "sentiment-lc01.yaml").read_text()
    edited = shipped.replace("capability: Vocabulary", "capability: Negation").replace(
        "title: Short sentences with neutral adjectives and nouns", "title: ZZZ Negated positives")
    (workspace / "specs" / "sentiment" / "sentiment-lc01.yaml").write_text(edited)
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    old_run = lc_catalog(["sentiment-lc01"], {"sentiment-lc01": "Vocabulary"})["sentiment-lc01"]
    assert (old_run.capability, old_run.title) == ("Vocabulary", "sentiment-lc01")
    new_run = lc_catalog(["sentiment-lc01"], {"sentiment-lc01": "Negation"})["sentiment-lc01"]
    assert (new_run.capability, new_run.title) == ("Negation", "ZZZ Negated positives")


@pytest.mark.parametrize("row", [[-0.0005, 0.3005, 0.7], [1.0004, -0.0004, 0.0], [0.2, 0.3, 0.5005]])
def test_p37_cli_2_a_rounding_error_the_boundary_takes_is_saved_as_a_readable_distribution(tmp_path, row):
    """Was (the p37cli helper, medium-low): an endpoint answering `[-0.0005, 0.3005, 0.7]` passed the model boundary
    (tolerance 1e-3) and `run` saved it with exit 0, but every reader (report, compare, explain, harden export)
    refused the run ("cannot be read (ValueError); run it again"), and running it again gave the same run."""
    import numpy as np

    from alict_core.cases.testcases import TestCase
    from alict_core.models.protocol import checked_proba
    from alict_core.runner import run_suite
    from alict_core.runner.probabilities import are_probability_rows
    from alict_core.runner.run import RunResult

    class Rounding:
        name, labels = "rounding", ("negative", "neutral", "positive")

        def predict_proba(self, texts):
            return np.tile(row, (len(texts), 1))

    assert are_probability_rows(checked_proba(Rounding(), ["a", "b"]))
    case = TestCase(case_id="c", lc_id="lc", kind="seed", seed_id="c", test_type="MFT", text="good",
                    expected={"kind": "label", "labels": ["positive"]})
    run_suite([case], [Rounding()], cache_root=tmp_path / "predictions").save(tmp_path / "run")
    assert RunResult.load(tmp_path / "run").outcomes[0].name == "rounding"


def test_p37_kill_2_a_second_writer_of_a_run_says_that_it_waits(cli, tmp_path, own_cache):
    """Was (the p37kill helper, low): a second `run` of the same inputs waited for the first one's lock (minutes with
    a slow endpoint) behind a frozen "cases prepared" bar without a word. It says that another command is writing the
    run and that it waits for it."""
    import fcntl
    import json

    from alict_core.runner.store import run_lock_file

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a fine film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i in range(3)))
    folder = tmp_path / "run"
    lock = run_lock_file(folder)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = open(lock, "a+")  # noqa: SIM115 - held until the command says that it waits (60 s at most)
    fcntl.flock(holder, fcntl.LOCK_EX)

    class ReleaseWhenSaid(logging.Handler):
        def emit(self, record):
            if "waits for it" in record.getMessage():
                holder.close()

    watcher = ReleaseWhenSaid()
    logging.getLogger("alict_core").addHandler(watcher)
    release = threading.Timer(60.0, holder.close)
    release.start()
    try:
        outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds), "--quiet", "--out",
                      str(folder))
    finally:
        logging.getLogger("alict_core").removeHandler(watcher)
        release.cancel()
        holder.close()
    assert outcome.code in (0, 1), outcome.err[-400:]
    assert "another command is writing run run" in outcome.err and "waits for it" in outcome.err


def test_p37_pages_6_an_lc_title_is_drawn_as_text_in_the_run_progress(fake_backends, tmp_runs, tmp_path,
                                                                   monkeypatch):
    """Was (the p37pages helper, medium, a hole): an LC title from anyone's workspace spec went as Markdown into the
    Run page's progress text of every session that ran that LC: `![pb](http://host/beacon.png)` was fetched by the
    runner's browser and `[Sign in again](http://host/phish)` drawn as a live link in the app."""
    from pathlib import Path

    import streamlit

    from tests.test_app import run_with_fake_model, start

    workspace = tmp_path / "work"
    (workspace / "specs" / "sentiment").mkdir(parents=True)
    shipped = (Path(__file__).parents[2] / "specs" / "sentiment" / "sentiment-lc01.yaml").read_text()
    hostile = shipped.replace("id: sentiment-lc01", "id: sentiment-lc55").replace(
        "title: Short sentences with neutral adjectives and nouns",
        "title: '![pb](http://127.0.0.1:9/beacon.png) [Sign in again](http://127.0.0.1:9/phish)'")
    (workspace / "specs" / "sentiment" / "sentiment-lc55.yaml").write_text(hostile)
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    texts: list[str] = []
    real_progress = streamlit.progress

    def recording(value, text=None, **kwargs):
        bar = real_progress(value, text=text, **kwargs)
        texts.append(str(text))
        original = bar.progress

        def progress(value, text=None, **kw):
            texts.append(str(text))
            return original(value, text=text, **kw)

        bar.progress = progress
        return bar

    monkeypatch.setattr(streamlit, "progress", recording)
    at = run_with_fake_model(start(), lcs=("sentiment-lc55",))
    assert not at.exception
    titled = [text for text in texts if "beacon" in text]
    assert titled, texts
    assert not any("](http" in text for text in titled), titled


def _store_run(root, task: str, finished: float) -> str:
    from alict_core.runner import build_cases, run_streaming

    seeds = [{"id": f"{task}-s{i}", "lc_id": "sentiment-lc04", "task": "sentiment", "text": f"a good film {i} {task}",
              "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"], "tolerance": None}}
             for i in range(2)]
    request = {"key": task, "status": "done", "started": 0, "finished": finished,
               "request": {"task": task, "lc_ids": ["sentiment-lc04"],
                           "models": [{"name": "vader", "kwargs": {}, "label": "vader"}]}}
    return run_streaming(build_cases(seeds), ["vader"], root=root, extra_files={"request.json": request}).name


def _app():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)


def test_p37_pages_7a_a_link_to_a_run_of_the_other_task_is_said(tmp_path, monkeypatch):
    """Was (the p37pages helper, low-medium): `/failures?run=<a hate-speech run>` (a link naming only the run, as the
    docs give it; the task then defaults to sentiment) showed the newest sentiment run without a word."""
    import time

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "runs"
    hate = _store_run(root, "hate_speech", time.time() - 100)
    _store_run(root, "sentiment", time.time() - 50)
    at = _app()
    at.query_params["run"] = hate
    at.run()
    at = at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [c.value for c in at.caption if "named by the link is a run of" in c.value]
    assert notes and "Hate" in notes[0], [c.value for c in at.caption]


def test_p37_pages_7b_a_review_link_of_the_other_task_is_said(tmp_path, monkeypatch, fresh_engines):
    """Was (the p37pages helper, low-medium): `/review?review=<a hate-speech review task>&reviewer=yan` opened a
    sentiment review task without a word ("kept across a task switch" was assumed), and "Start reviewing" then
    claimed a set of that task for yan."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from tests.robustness.support import small_cases

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    plan = SamplingPlan(size=3, n_sets=1, k=1)
    create_review_task(ReviewStore(url), "sent-rt", "sentiment", small_cases(3), plan)
    create_review_task(ReviewStore(url), "hate-rt", "hate_speech", small_cases(3), plan)
    at = _app()
    at.query_params["review"] = "hate-rt"
    at.query_params["reviewer"] = "yan"
    at.run()
    at = at.switch_page("pages/review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning if "is a review task of" in w.value]
    assert warnings and "hate" in warnings[0].lower(), [w.value for w in at.warning]


def test_p37_kill_3_a_full_disk_is_said_with_its_folder(tmp_path, monkeypatch, own_cache):
    """Was (the p37kill helper, low): a full file system under `$ALICT_CACHE_DIR` beside an `--out` disk with room
    was said as "out of space while writing (No space left on device): free disk space ...": the user freed the wrong
    disk. The folder being written is named, else the cache when its disk is (nearly) full."""
    import errno
    import shutil
    from collections import namedtuple

    from alict_core.common import faults

    named = faults.environment_fault(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "o" / "x.json")))
    assert named is not None and f"into the folder {str(tmp_path / 'o')!r}" in named
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100, 100, 0))
    unnamed = faults.environment_fault(OSError(errno.ENOSPC, "No space left on device"))
    assert unnamed is not None and "cache folder" in unnamed and str(own_cache) in unnamed


@pytest.mark.parametrize("answer,label", [
    ("Not negative.", None), ("Not positive at all", None), ("It is neither positive nor negative.", None),
    ("I would not say positive", None), ("Positive? No. Negative.", None), ("It isn't negative.", None),
    ("It is positive, not negative.", "positive"), ("Negative (not positive)", "negative"), ("Positive.", "positive"),
])
def test_p37_cli_9_a_negated_label_is_not_that_label(answer, label):
    """Was (the p37cli helper, medium-low): `openai-chat` on sentiment read "Not negative." as negative and "It is
    neither positive nor negative." as positive (the earliest mention won): an LLM answering right failed the
    negation LCs, with exit 0 and no unparsed answer counted. A negated mention names no label; two labels named is
    unparsed (the run counts it)."""
    from alict_core.models.remote import parse_answer

    assert parse_answer(answer, ("negative", "neutral", "positive"), "sentiment") == label


def test_p37_cli_10_answers_scored_by_the_fallback_are_said_in_the_summary_and_report(tmp_path):
    """Was (the p37cli helper, medium-low): an `openai-chat` model answering "I cannot help with that." to every case
    passed a neutral LC (the fallback label is neutral): the summary JSON said `"passed": true` and the HTML report
    nothing of the 4 of 4 unparsed answers (only stderr and meta.json held them)."""
    import json

    import jsonschema

    from alict_core.cases.testcases import TestCase
    from alict_core.report.html import write_report
    from alict_core.report.summary import SUMMARY_SCHEMA, write_summary_json
    from alict_core.runner import run_suite
    from alict_core.runner.run import RunResult

    cases = [TestCase(case_id=f"c{i}", lc_id="sentiment-lc05", kind="seed", seed_id=f"c{i}", test_type="MFT",
                      text=f"a film {i}", expected={"kind": "label", "labels": ["neutral"]}) for i in range(2)]

    class Neutral:
        name, labels = "llm", ("negative", "neutral", "positive")

        def predict_proba(self, texts):
            import numpy as np

            return np.tile([0.0, 1.0, 0.0], (len(texts), 1))

    result = run_suite(cases, [Neutral()], cache_root=tmp_path / "p")
    result = RunResult(result.case_list, result.outcomes, extra={"unparsed_answers": {"llm": 2}})
    document = json.loads(write_summary_json(result, tmp_path / "s.json").read_text())
    jsonschema.validate(document, SUMMARY_SCHEMA)
    assert document["unparsed_answers"] == {"llm": 2}
    html = write_report(result, tmp_path / "r.html").read_text()
    assert "Answers that could not be parsed" in html and "llm: 2 answer(s)" in html


def test_p37_cli_11_a_run_of_an_endpoint_sends_no_unannounced_story_requests(cli, tmp_path, own_cache):
    """Was (the p37cli helper, low): `run` of a chat endpoint made 181 requests for a 4-case run: the Story's
    precompute explained each failure by sending dozens of perturbations to the (paid) service, unannounced, under a
    request budget of its own. A run of an endpoint asks it for its cases only; the Story page explains on demand."""
    import json

    service = _Redeployable("negative")  # every case fails: the Story would explain each
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a fine film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i in range(4)))
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"http:url={service.url},name=svc", "--seeds",
                      str(seeds), "--quiet", "--out", str(tmp_path / "run"))
    finally:
        service.close()
    assert outcome.code in (0, 1), outcome.err[-400:]
    assert len(service.texts_asked) == 4, len(service.texts_asked)
    assert "story of run not precomputed: model svc calls a service" in outcome.err


def test_p37_cli_6_credentials_in_an_http_url_are_refused_with_advice_that_works(cli, tmp_path):
    """Was (the p37cli helper, low): `--models "http:url=http://u:p@host/ok"` said "pass api_key instead", and
    `api_key=` was then refused ("model 'http' takes no argument 'api_key'"): the advice holds for openai-chat only."""
    outcome = cli("explain", "--text", "a fine film", "--model", "http:url=http://u:p@127.0.0.1:9/ok,task=sentiment")
    assert outcome.code == 2 and "headers=" in outcome.err and "pass api_key instead" not in outcome.err, outcome.err


def test_p37_cli_4_empty_expansions_are_said(cli, tmp_path, own_cache):
    """Was (the p37cli helper, low): an empty `--expansions` file (a zero-byte copy) was taken without a word (a
    seeds-only run, exit 0), and an empty folder was "no such JSONL file (or folder of them)" though it exists."""
    import json

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc01", "text": f"a fine film {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": ["positive"]}})
                             + "\n" for i in range(3)))
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "emptydir").mkdir()
    run = ("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds), "--quiet")
    taken = cli(*run, "--expansions", str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "r1"))
    assert taken.code in (0, 1) and "empty.jsonl holds no expansion rows" in taken.err, taken.err[-400:]
    folder = cli(*run, "--expansions", str(tmp_path / "emptydir"), "--out", str(tmp_path / "r2"))
    assert folder.code == 2 and "a folder that holds no *.jsonl file" in folder.err, folder.err[-400:]


@pytest.mark.parametrize("chosen", [["sentiment-lc04"], ["sentiment-lc01"], ["sentiment-lc01", "sentiment-lc04"]])
def test_p37_pages_1_the_readiness_table_is_the_split_trained(tmp_path, chosen):
    """Was (the p37pages helper, low-medium): the Harden page's table split every LC of the run (LC6: 11 test cases,
    "ready", preselected), the retrain split the chosen LCs only (a group shared with another LC then belonged to
    LC6: 9 test cases) and refused the page's default action. The export takes the chosen LCs' parts of the run's
    split of every LC: an LC's test split does not change with the others chosen."""
    from alict_core.cases.testcases import TestCase
    from alict_core.harden.export import export_hardening_data, run_readiness
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel

    def case(lc: str, i: int, source: str) -> TestCase:
        return TestCase(case_id=f"{lc}-s{i}", lc_id=lc, kind="seed", seed_id=f"{lc}-s{i}", test_type="MFT",
                        text=f"a good film {lc} {i}", task="sentiment", meta={"source_ids": [source]},
                        expected={"kind": "label", "labels": ["positive"]})

    cases = [case("sentiment-lc01", i, f"a{i}") for i in range(40)]
    cases += [case("sentiment-lc04", i, f"a{i}" if i < 33 else f"b{i}") for i in range(40)]  # most share a source
    run = run_suite(cases, [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "run")
    table = {r.lc_id: r.test_cases for r in run_readiness(run, "kw")}
    summary = export_hardening_data(run, tmp_path / "hx", lcs=chosen, formats=["jsonl"])
    assert {lc: summary.counts["test"].get(lc, 0) for lc in chosen} == {lc: table[lc] for lc in chosen}


def test_p37_cli_8_a_suites_expansion_cases_are_no_seeds(tmp_path):
    """Was (the p37cli helper, low): `expand --suite <a run's exported cases.jsonl>` expanded the suite's expansion
    cases as seeds, and `run --suite … --expansions` then took an expansion hanging on an expansion (its own seed
    group in the clustered intervals, paired seed→expansion with an expansion)."""
    from alict_core.cases.testcases import TestCase
    from alict_core.expansion.suite import suite_expansion_cases, suite_seeds

    expected = {"kind": "label", "labels": ["positive"]}
    seed = TestCase(case_id="s1", lc_id="sentiment-lc01", kind="seed", seed_id="s1", test_type="MFT",
                    text="a good film", expected=expected)
    grown = TestCase(case_id="s1-x1", lc_id="sentiment-lc01", kind="expansion", seed_id="s1", test_type="MFT",
                     text="a very good film", expected=expected)
    assert [s["id"] for s in suite_seeds([seed, grown], "sentiment")["sentiment-lc01"]] == ["s1"]
    row = {"id": "s1-x1-x2", "seed_id": "s1-x1", "lc_id": "sentiment-lc01", "text": "a very good new film",
           "accepted": True}
    kept, _ = suite_expansion_cases([seed, grown], [row], "sentiment", keep_flagged=True)
    assert kept == []


def test_p37_kill_4_a_live_staging_folder_is_not_swept_after_a_clock_jump(tmp_path):
    """Was (the p37kill helper, low): a run's staging folder keeps its creation time while the run writes into its
    `cases/`; after a clock jump of an hour, another run in the same folder swept it as stale and the live run failed
    naming a hidden file. A staging folder whose contents are recent is kept; a truly old one still goes."""
    import os
    import time

    from alict_core.common.manifest import clean_stale, staging_dir

    live, dead = staging_dir(tmp_path, ".stream.tmp-"), staging_dir(tmp_path, ".stream.tmp-")
    for folder in (live, dead):
        (folder / "cases").mkdir()
        (folder / "cases" / "part-00000.jsonl").write_text("{}\n")
    old = time.time() - 7200
    os.utime(live, (old, old))  # the folder's own time: its creation, two hours "ago" after the jump
    for path in (dead / "cases" / "part-00000.jsonl", dead / "cases", dead):
        os.utime(path, (old, old))
    clean_stale(tmp_path)
    assert live.exists() and not dead.exists()


def test_p37_cli_3_a_label_rejection_no_longer_applies_once_the_expected_label_is_changed(cli, tmp_path,
                                                                                         fresh_engines):
    """Was (the p37cli helper, low): reviewers rejected LC4's cases for their expected label ("positive or neutral"
    is wrong); after LC4's spec was corrected as they asked (negative), the same cases (same ids and texts) were
    still left out of every run ("3 rejected by reviewers left out"): the verdict on the old expectation was applied
    to the new one. A relevance rejection still applies whatever the label."""
    from alict_core.cases.testcases import TestCase
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.writeback import RejectionFilter

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    old = {"kind": "label", "labels": ["neutral", "positive"]}
    cases = [TestCase(case_id=f"c{i}", lc_id="sentiment-lc04", kind="seed", seed_id=f"c{i}", test_type="MFT",
                      text=f"not a bad film {i}", expected=old, task="sentiment") for i in range(3)]
    store = ReviewStore(url)
    create_review_task(store, "t", "sentiment", cases, SamplingPlan(size=3, n_sets=1, k=2), ["ann", "bob"])
    task = next(t for t in store.tasks("sentiment") if t.name == "t")
    for reviewer in ("ann", "bob"):
        for item in store.items(task.id):
            store.judge(item.id, reviewer, relevance=5, label_score=1)
    store.confirm_writeback("sentiment", 2, "ann")
    assert all(RejectionFilter(url=url)(case) for case in cases)  # the old expectation: left out
    corrected = [TestCase(**{**case.to_dict(), "expected": {"kind": "label", "labels": ["negative"]}})
                 for case in cases]
    assert not any(RejectionFilter(url=url)(case) for case in corrected)


def test_p37_cli_5_an_empty_seeds_file_is_named(cli, tmp_path):
    """Was (the p37cli helper, cosmetic): `run --seeds <empty file>` said "no test cases: give LCs of the task
    (default), --seeds, or --suite files" to a user who had given --seeds."""
    (tmp_path / "empty.jsonl").write_text("")
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds",
                  str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "r"))
    assert outcome.code == 2 and "empty.jsonl hold no seed" in outcome.err, outcome.err[-300:]


def test_p37_cli_7_workers_without_a_pool_and_the_compare_help(cli, tmp_path, capsys):
    """Was (the p37cli helper, cosmetic): `run --workers 3` on the default local executor was ignored without a word
    ("1 worker(s)"), while `--ray-address` without `--executor ray` is refused; `compare --help` printed "95%%"."""
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--max-seeds", "2", "--workers",
                  "3", "--out", str(tmp_path / "r"))
    assert outcome.code == 2 and "--workers 3 needs --executor processes or ray" in outcome.err, outcome.err[-300:]
    helped = cli("compare", "--help")
    assert helped.code == 0 and "95%%" not in helped.out and "95 % seed-clustered" in helped.out


def test_p37_kill_5_report_without_a_run_names_the_run_it_reports(cli, tmp_path, own_cache):
    """Was (the p37kill helper, cosmetic): `report --out x.html` without a run reported the newest finished run and
    said only "report written to x.html", not which run it was."""
    import json

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"id": "s0", "lc_id": "sentiment-lc01", "text": "a fine film", "test_type": "MFT",
                                 "expected": {"kind": "label", "labels": ["positive"]}}) + "\n")
    assert cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds), "--quiet").code in (0, 1)
    outcome = cli("report", "--out", str(tmp_path / "x.html"))
    assert outcome.code == 0 and "reporting the newest finished run" in outcome.out, outcome.out[-300:]


def test_p37_pages_4_answers_bought_with_a_key_are_not_served_without_it(cli, tmp_path, own_cache):
    """Was (the p37pages helper, medium-low, a hole): the operator ran an endpoint with its key; a browser user who
    named the same URL without the key got the operator's answers from the prediction cache (the fingerprint leaves
    credentials out) and a "finished" run, while the service refused that user. No endpoint answer is reused now."""
    import json

    service = _Redeployable("positive", key="k123")
    url = service.url
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps({"id": "s0", "lc_id": "sentiment-lc01", "text": "a fine film", "test_type": "MFT",
                                 "expected": {"kind": "label", "labels": ["positive"]}}) + "\n")
    run = ("run", "--task", "sentiment", "--seeds", str(seeds), "--quiet", "--no-story")
    try:
        keyed = cli(*run, "--models", f"http:url={url},name=op,retries=0,headers=X-Api-Key:k123", "--out",
                    str(tmp_path / "a"))
        assert keyed.code == 0, keyed.err[-300:]
        keyless = cli(*run, "--models", f"http:url={url},name=visitor,retries=0", "--out", str(tmp_path / "b"))
    finally:
        service.close()
    assert keyless.code == 2 and "401" in keyless.err, keyless.err[-300:]


# ---------------------------------------------------------------- pass 38 (a short pass on the pass-37 fixes)

@pytest.mark.parametrize("models", [
    "openai-chat:base_url=http://127.0.0.1:9/v1,model=m,api_key=SEC9,api_key=SEC10",
    "openai-chat:base_url=http://127.0.0.1:9/v1,model=m,api_key=SEC9,=x",
    "http:url=http://127.0.0.1:9/predict?token=SEC9,,vader",
    "http:url=http://u:SEC9@127.0.0.1:9/predict,,vader",
    "http:url=http://127.0.0.1:9/predict,headers=Authorization:Bearer SEC9;Authorization:x",
])
def test_p38_cli_5_a_models_refusal_never_echoes_a_secret(cli, tmp_path, models):
    """Was (the p38cli helper, low-medium, a secret in a message: CI logs keep stderr): refusals of a `--models`
    text printed it whole: api keys, header values and a URL's `?token=`."""
    outcome = cli("run", "--task", "sentiment", "--lc", "1", "--max-seeds", "2", "--models", models, "--out",
                  str(tmp_path / "r"))
    assert outcome.code == 2 and "SEC9" not in outcome.err and "SEC10" not in outcome.err, outcome.err


def test_p38_pages_6_an_endpoints_explanation_is_not_kept_in_the_process_cache(monkeypatch):
    """Was (the p38pages helper, low-medium): the Failures page's "Explain this case" of an endpoint's case was kept
    in the server's process cache (`st.cache_data`, keyed by the URL): after a redeploy, the next session was shown
    the old service's explanation without a request."""
    import json

    from alict_app import artefacts

    monkeypatch.setenv("ALICT_ALLOWED_HOSTS", "127.0.0.1")
    service = _Redeployable("positive")
    try:
        ref = json.dumps({"name": "http", "kwargs": {"url": service.url, "task": "sentiment", "name": "ep"}})
        first = artefacts.explain_case(ref, "a fine film", "shap", 0, 16)
        asked = len(service.texts_asked)
        service.label = "negative"  # redeployed
        again = artefacts.explain_case(ref, "a fine film", "shap", 0, 16)
    finally:
        service.close()
    assert asked > 0 and len(service.texts_asked) > asked
    assert first != again
