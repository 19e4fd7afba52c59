"""Pass 39 rows (messages and checks, from the pass-38 findings of the p38cli helper): each failed before its fix,
unless its docstring says it is a control."""

from __future__ import annotations

import json
import threading

import pytest

from tests.robustness.support import LoopbackService, chat_answer

SENTIMENT = ("negative", "neutral", "positive")
HATE = ("hateful", "non-hateful")


class _Chat(LoopbackService):
    """An OpenAI-compatible chat endpoint on loopback answering ``answer`` to every request; counts the requests."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        super().__init__()
        self.base_url = f"{self.base}/v1"

    def respond(self, path, headers, request, number):
        return 200, chat_answer(self.answer)


def _seeds(tmp_path, lc_id: str = "sentiment-lc04", n: int = 3, labels: tuple[str, ...] = ("neutral", "positive")):
    seeds = tmp_path / f"{lc_id}.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"{lc_id}-s{i}", "lc_id": lc_id, "text": f"the film is not bad {i}",
                                         "test_type": "MFT", "expected": {"kind": "label", "labels": list(labels)}})
                             + "\n" for i in range(n)))
    return seeds


# ---------------------------------------------------------------- P38-cli-2: chat answers negated far from the label

@pytest.mark.parametrize("answer,task,label", [
    ("I don't think this is negative.", "sentiment", None),
    ("Not in any way negative.", "sentiment", None),
    ("I would not consider this text negative", "sentiment", None),
    ("This is not what I would call negative", "sentiment", None),
    ("It is not really what I'd call positive", "sentiment", None),
    ("Far from negative", "sentiment", None),
    ("Negative is not the answer here", "sentiment", None),
    ("Negative? Not at all.", "sentiment", None),
    ("Negative? No - positive", "sentiment", None),
    ("I don't think this is hateful.", "hate_speech", None),
    ("I would not classify it as hate speech", "hate_speech", None),
    ("This does not appear to be hate speech.", "hate_speech", None),
    ("There is nothing hateful here", "hate_speech", None),
    ("Hateful? Not at all", "hate_speech", None),
])
def test_p38_cli_2_a_label_negated_anywhere_in_its_clause_is_not_that_label(answer, task, label):
    """Was (the p38cli helper, medium-low): the pass-37 negation check looked two words back only, so "This does not
    appear to be hate speech." was hateful and "I don't think this is negative." negative (a run of an LLM answering
    right failed LC8/LC11 and LC4 with exit 0, nothing unparsed). A negation anywhere before the label in its clause,
    or a denial after it, names no label: the answer is unparsed (counted), never the label it denies."""
    from alict_core.models.remote import parse_answer

    assert parse_answer(answer, SENTIMENT if task == "sentiment" else HATE, task) == label


@pytest.mark.parametrize("answer,task,label", [
    ("Not negative.", "sentiment", None), ("It is neither positive nor negative.", "sentiment", None),
    ("Positive? No. Negative.", "sentiment", None), ("It is positive, not negative.", "sentiment", "positive"),
    ("Negative (not positive)", "sentiment", "negative"), ("Label: positive", "sentiment", "positive"),
    ("Positive, no doubt", "sentiment", "positive"), ("Nothing but negative", "sentiment", "negative"),
    ("The sentiment is neutral.", "sentiment", "neutral"), ("2", "sentiment", "positive"),
    ("This is not hateful.", "hate_speech", "non-hateful"), ("No", "hate_speech", "non-hateful"),
    ("non-hateful, not hateful at all", "hate_speech", "non-hateful"),
    ("Answer: hate speech", "hate_speech", "hateful"),
    ("No hate speech here", "hate_speech", "non-hateful"), ("This is hate speech.", "hate_speech", "hateful"),
])
def test_p38_cli_2_control_answers_read_right_stay_right(answer, task, label):
    """Control: plain answers, a negation in another clause, and idioms that negate nothing keep their reading."""
    from alict_core.models.remote import parse_answer

    assert parse_answer(answer, SENTIMENT if task == "sentiment" else HATE, task) == label


@pytest.mark.parametrize("answer,label", [("Not negative but positive", "positive"), ("No doubt: positive", "positive"),
                                          ("Not only negative but hostile", "negative")])
def test_p38_cli_2_a_contrast_or_an_idiom_ends_the_negation(answer, label):
    """With a negation that reaches the whole clause, a contrast ("not X but Y") ends it and idioms that negate
    nothing ("no doubt", "not only") are no negation (before, the two-word window read "Not negative but
    positive" as two labels negated, and "No doubt: positive" and "Not only negative but hostile" as negated)."""
    from alict_core.models.remote import parse_answer

    assert parse_answer(answer, SENTIMENT, "sentiment") == label


def test_p38_cli_2_a_run_counts_a_far_negated_answer_as_unparsed(cli, tmp_path, own_cache):
    """The run of a chat model answering "I don't think this is negative." to LC4 (negated negative): no case is
    scored negative; every answer is counted unparsed (it scored 3 of 3 failing, `unparsed_answers: {}`)."""
    service = _Chat("I don't think this is negative.")
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"openai-chat:base_url={service.base_url},model=m,"
                      "name=chat", "--seeds", str(_seeds(tmp_path)), "--out", str(tmp_path / "r"), "--no-story",
                      "--summary-json", str(tmp_path / "s.json"), "--quiet")
    finally:
        service.close()
    assert outcome.code == 0, outcome.err[-400:]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["unparsed_answers"] == {"chat": 3}, summary.get("unparsed_answers")


# ---------------------------------------------------------------- P38-cli-9: fallback= and label_map checked first

@pytest.mark.parametrize("setting,said", [
    ("fallback=bogus", "fallback='bogus' is not one of the labels of sentiment: negative, neutral, positive"),
    ("fallback=Positive", "fallback='Positive' is not one of the labels of sentiment"),
    ("fallback=hateful", "fallback='hateful' is not one of the labels of sentiment"),
    ("fallback=", "fallback='' is not one of the labels of sentiment"),
])
def test_p38_cli_9_a_chat_fallback_that_is_no_label_is_refused_before_any_request(cli, tmp_path, own_cache, setting,
                                                                                   said):
    """Was (the p38cli helper, low): `openai-chat … fallback=bogus` sent its requests, then failed at the first
    unparsed answer with Python's "tuple.index(x): x not in tuple" (`fallback=` was silently the default). Now it is
    refused with the other `--models` checks, naming the value and the labels allowed, before any request."""
    service = _Chat("I cannot help.")
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"openai-chat:base_url={service.base_url},model=m,"
                      f"name=chat,{setting}", "--seeds", str(_seeds(tmp_path)), "--out", str(tmp_path / "r"),
                      "--no-story", "--quiet")
    finally:
        service.close()
    assert outcome.code == 2 and said in outcome.err and "tuple" not in outcome.err, outcome.err[-400:]
    assert service.requests == 0


def test_p38_cli_9_an_http_label_map_target_that_is_no_label_is_refused_before_any_request(cli, tmp_path, own_cache):
    """Was: `http … label_map=POS:bogus` sent its request and blamed the service ("answered HTTP 200, an answer label
    is not one of …") for the user's map."""
    service = _Chat("unused")
    try:
        outcome = cli("run", "--task", "sentiment", "--models", f"http:url={service.base_url}/predict,name=ep,"
                      "label_map=POS:positive;NEG:bogus", "--seeds", str(_seeds(tmp_path)), "--out",
                      str(tmp_path / "r"), "--no-story", "--quiet")
    finally:
        service.close()
    assert outcome.code == 2 and "label_map maps 'NEG' to 'bogus', not one of the labels of sentiment" in outcome.err, \
        outcome.err[-400:]
    assert service.requests == 0


def test_p38_cli_9_the_adapter_itself_refuses_a_fallback_that_is_no_label():
    """The library's own adapter (the app and scripts build it directly) says the same, not a late IndexError."""
    from alict_core.common.errors import ModelError
    from alict_core.models.remote import OpenAIChatModel

    with pytest.raises(ModelError, match="fallback='positive' is not one of the labels of hate_speech"):
        OpenAIChatModel("http://127.0.0.1:9/v1", "m", "hate_speech", fallback="positive")


# ---------------------------------------------------------------- pass 38 list: a header value holding a comma

@pytest.mark.parametrize("models", [
    "http:url=http://127.0.0.1:9/predict,headers=X-Api-Key:SEC1,SEC2tail",
    "http:url=http://127.0.0.1:9/predict,headers=Authorization:Bearer SEC1,SEC2tail==",
    "openai-chat:base_url=http://127.0.0.1:9/v1,model=m,api_key=SEC1,SEC2tail",
])
def test_p38_a_secret_value_holding_a_comma_is_said_without_its_tail(cli, tmp_path, models):
    """Was (pass 38, the p38cli helper): `headers=X-Api-Key:SEC1,SEC2tail` read the key's tail as a model: "unknown
    model 'SEC2tail'" (the secret's tail in the error line). Now it is said as a value cut by a comma, and no part of
    the secret is shown."""
    outcome = cli("run", "--task", "sentiment", "--lc", "1", "--max-seeds", "2", "--models", models, "--out",
                  str(tmp_path / "r"))
    assert outcome.code == 2 and "a value cannot hold a comma" in outcome.err, outcome.err[-400:]
    assert "SEC1" not in outcome.err and "SEC2" not in outcome.err, outcome.err[-400:]


def test_p38_control_a_model_after_headers_is_still_a_model(cli):
    """Control: a registered model after a `headers=` argument starts a new model, as before."""
    from alict_core.models.refs import parse_model_refs

    refs = parse_model_refs("http:url=http://127.0.0.1:9/p,headers=X-Api-Key:k,vader,textblob")
    assert [ref.name for ref in refs] == ["http", "vader", "textblob"]


# ---------------------------------------------------------------- P38-cli-3, P38-cli-4: review database messages

@pytest.mark.parametrize("command", [("stats", "t1"), ("export", "t1", "--out", "{tmp}/e.csv")])
def test_p38_cli_3_a_read_on_a_missing_database_advises_what_creates_one(cli, tmp_path, fresh_engines, command):
    """Was (the p38cli helper, low): `review stats`/`export` on a missing database said "a writing command, `review
    sample` or `review import`, creates one"; `review import` refuses a missing database since pass 37."""
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    outcome = cli("review", *argv, "--db", f"sqlite:///{tmp_path / 'none.sqlite'}")
    assert outcome.code == 2 and "`review sample` creates one" in outcome.err, outcome.err
    assert "review import" not in outcome.err


def test_p38_cli_4_a_refused_import_into_an_empty_file_writes_nothing(cli, tmp_path, fresh_engines, review_db):
    """Was (the p38cli helper, low): `review import --db <zero-byte file>` was refused ("no review task named 't'")
    after it had written the whole review schema into the file (86 kB). An empty file holds no task: it is refused
    like a missing database, and left as it was."""
    _, form = review_db
    empty = tmp_path / "z.sqlite"
    empty.write_bytes(b"")
    outcome = cli("review", "import", "--db", f"sqlite:///{empty}", str(form))
    assert outcome.code == 2 and "is an empty file, with no review task in it" in outcome.err, outcome.err
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.glob("z.sqlite*")) == ["z.sqlite"]


def test_p38_cli_4_control_an_empty_file_is_still_a_new_database_for_sample(cli, tmp_path, fresh_engines):
    """Control: `review sample` (which creates a database) still takes an empty .sqlite file."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    empty = tmp_path / "z.sqlite"
    empty.write_bytes(b"")
    outcome = cli("review", "sample", "--db", f"sqlite:///{empty}", "--name", "t", "--task", "sentiment", "--cases",
                  str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert outcome.code == 0 and empty.stat().st_size > 0, outcome.err


# ---------------------------------------------------------------- P38-cli-11: run ids and interrupted runs

def _store_run(cli, tmp_path) -> str:
    """A finished run of 3 LC1 + 3 LC4 seeds (vader) in the run store; its id."""
    seeds = [_seeds(tmp_path, "sentiment-lc01", labels=("positive",)), _seeds(tmp_path)]
    outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds", str(seeds[0]), "--seeds",
                  str(seeds[1]), "--quiet", "--no-story")
    assert outcome.code in (0, 1), outcome.err[-400:]
    from alict_core.runner.store import list_runs

    return list_runs()[-1].name


def test_p38_cli_11_review_sample_takes_a_run_id(cli, tmp_path, own_cache, fresh_engines):
    """Was (the p38cli helper, low): a run id that `report`, `compare` and `harden export` take was "no such run
    directory or cases file" for `review sample --cases`."""
    run_id = _store_run(cli, tmp_path)
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", run_id)
    assert outcome.code == 0 and "6 seeds" in outcome.out and run_id in outcome.out, outcome.err[-400:]


def test_p38_cli_11_harden_export_calls_an_interrupted_run_interrupted(cli, tmp_path, own_cache):
    """Was: `harden export --run <id of a run killed before it finished>` said "run … not found: give a run id from
    the runs store" (it is in the store); `report` and `compare` say it was interrupted and how to finish it."""
    import shutil

    run_id = _store_run(cli, tmp_path)
    from alict_core.runner.store import list_runs

    folder = list_runs()[-1]
    (folder / "meta.json").unlink()  # as a run killed before its end: progress.json, no meta.json
    if not (folder / "progress.json").exists():
        (folder / "progress.json").write_text("{}")
    outcome = cli("harden", "export", "--run", run_id, "--lcs", "lc01", "--out", str(tmp_path / "h"))
    assert outcome.code == 2 and "was interrupted before it finished" in outcome.err, outcome.err[-400:]
    assert "that made it again to resume it" in outcome.err and "not found" not in outcome.err
    shutil.rmtree(folder)


# ---------------------------------------------------------------- P38-cli-13: review sample's empty and lowered values

def test_p38_cli_13_empty_reviewers_are_refused(cli, tmp_path, fresh_engines):
    """Was (the p38cli helper, cosmetic): `--reviewers ''` made a task with nobody assigned, without a word."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--reviewers", "")
    assert outcome.code == 2 and "--reviewers is empty" in outcome.err, outcome.err
    assert not (tmp_path / "r.sqlite").exists()


def test_p38_cli_13_sets_and_size_above_the_run_are_said_when_lowered(cli, tmp_path, fresh_engines):
    """Was: `--sets 100 --size 1000` on 3 seeds made 3 sets of the 3 seeds without a word."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    outcome = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(cases), "--sets", "100", "--size", "1000")
    assert outcome.code == 0, outcome.err
    assert "warning: --size 1000: the cases hold 3 seed(s)" in outcome.err, outcome.err
    assert "warning: --sets 100: 3 seed(s) sampled make 3 set(s)" in outcome.err, outcome.err


# ---------------------------------------------------------------- P38-cli-7: cosmetic and low messages

@pytest.mark.parametrize("task", ["sentiment", "hate_speech"])
def test_p38_cli_7_the_projects_own_cases_csv_is_said_as_such(cli, tmp_path, own_cache, task):
    """Was (the p38cli helper, cosmetic): `run --suite <report --export>/cases.csv` said "HateCheck suites are for task
    hate_speech, not sentiment" (and with --task hate_speech "HateCheck CSV lacks columns …"): the user gave the
    project's own export. It says so, and that the cases.jsonl beside it is the file a run takes."""
    from alict_core.cases.testcases import TestCase
    from alict_core.suites import export_cases_csv

    table = export_cases_csv([TestCase(case_id="c0", lc_id="sentiment-lc01", kind="seed", seed_id="c0",
                                       test_type="MFT", text="a fine film",
                                       expected={"kind": "label", "labels": ["positive"]})], tmp_path / "cases.csv")
    outcome = cli("run", "--task", task, "--suite", str(table), "--no-lcs", "--models",
                  "vader" if task == "sentiment" else "minilm-hatexplain", "--out", str(tmp_path / "r"))
    assert outcome.code == 2 and "cases.csv is a table of this project's own export" in outcome.err, outcome.err
    assert "give the cases.jsonl written beside it" in outcome.err and "HateCheck" not in outcome.err
    sampled = cli("review", "sample", "--db", f"sqlite:///{tmp_path / 'r.sqlite'}", "--name", "t", "--task",
                  "sentiment", "--cases", str(table))
    assert sampled.code == 2 and "table of this project's own export" in sampled.err, sampled.err


def test_p38_cli_7_the_waiting_note_is_whole_in_the_progress_bar(cli, tmp_path, own_cache):
    """Was (cosmetic): the progress bar cut every note at 30 characters: "waiting for another writer of :"."""
    import fcntl
    import logging

    from alict_core.runner.store import run_lock_file

    folder = tmp_path / "run"
    lock = run_lock_file(folder)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = open(lock, "a+")  # noqa: SIM115 - held until the command says that it waits (60 s at most)
    fcntl.flock(holder, fcntl.LOCK_EX)

    class ReleaseWhenSaid(logging.Handler):
        def emit(self, record):
            if "waits for it" in record.getMessage():
                threading.Timer(0.5, holder.close).start()  # after the bar shows the note

    watcher = ReleaseWhenSaid()
    logging.getLogger("alict_core").addHandler(watcher)
    release = threading.Timer(60.0, holder.close)
    release.start()
    try:
        outcome = cli("run", "--task", "sentiment", "--models", "vader", "--seeds",
                      str(_seeds(tmp_path, "sentiment-lc01", labels=("positive",))), "--out", str(folder))
    finally:
        logging.getLogger("alict_core").removeHandler(watcher)
        release.cancel()
        holder.close()
    assert outcome.code in (0, 1), outcome.err[-400:]
    assert "waiting for another writer of this run" in outcome.err, outcome.err[-600:]


# A killed writer's hidden temporary file stays until it is an hour old (the age rule). A lock held on each
# temporary file, tried after pass 38 to remove it at once, was reverted: pass 39 found live writes removed through it
# (a build that renames its file, cache writers that re-write it, an hour-long render). See docs/ROBUSTNESS.md.


def test_p38_cli_7_control_a_live_writers_file_is_kept(tmp_path):
    """Control: a write of the same file meanwhile leaves a live writer's temporary file alone."""
    from alict_core.common.jsonl import atomic_path

    with atomic_path(tmp_path / "x.html") as first:
        first.write_text("first")
        with atomic_path(tmp_path / "x.html") as second:
            assert first.exists()
            second.write_text("second")
        assert first.exists()
    assert (tmp_path / "x.html").read_text() == "first" and not list(tmp_path.glob(".*.tmp"))


def test_p38_cli_7_an_interrupted_report_says_no_batches(cli, monkeypatch, saved_run, tmp_path):
    """Was (cosmetic): Ctrl-C of `report` said "finished batches are cached and a re-run resumes" (it has none)."""
    import alict_core.commands.report as report

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "_check_export_folder", interrupted)
    monkeypatch.setattr(report, "check_export_paths", interrupted, raising=False)
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "x.html"), "--export", str(tmp_path / "e"))
    assert outcome.code != 0 and "interrupted" in outcome.err, outcome.err
    assert "batches" not in outcome.err and "written whole or not at all" in outcome.err


def test_p38_cli_7_an_lc_whose_cases_were_all_rejected_is_named(tmp_path, own_cache, fresh_engines, caplog):
    """Was (low): `harden export --lcs lc01,lc04` with every LC4 case rejected by a confirmed review write-back wrote
    LC1 only; the only word was "3 case(s) rejected in review left out": the chosen LC4 was dropped unnamed."""
    import dataclasses

    from alict_core.cases.testcases import TestCase
    from alict_core.harden.export import run_rows_and_chosen
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import default_url
    from alict_core.runner import run_streaming
    from alict_core.runner.stream import group_by_seed

    cases = [TestCase(case_id=f"{lc}-c{i}", lc_id=f"sentiment-{lc}", kind="seed", seed_id=f"{lc}-c{i}",
                      test_type="MFT", text=f"{lc} film {i}", task="sentiment",
                      expected={"kind": "label", "labels": ["positive"]}) for lc in ("lc01", "lc04") for i in range(3)]
    run_dir = run_streaming(group_by_seed(cases), ["vader"], run_dir=tmp_path / "run", cache_root=tmp_path / "p")
    store = ReviewStore(default_url())
    lc4 = [dataclasses.replace(case) for case in cases if case.lc_id == "sentiment-lc04"]
    create_review_task(store, "t", "sentiment", lc4, SamplingPlan(size=3, n_sets=1, k=2), ["ann", "bob"])
    task = next(t for t in store.tasks("sentiment") if t.name == "t")
    for reviewer in ("ann", "bob"):
        for item in store.items(task.id):
            store.judge(item.id, reviewer, relevance=5, label_score=1)
    store.confirm_writeback("sentiment", 2, "ann")
    with caplog.at_level("WARNING", logger="alict_core.harden.export"):
        _, rows, chosen = run_rows_and_chosen(run_dir, ["lc01", "lc04"])
    assert {row["lc_id"] for row in rows} == {"sentiment-lc01"} and "sentiment-lc04" in chosen
    said = " ".join(record.getMessage() for record in caplog.records)
    assert "every case of sentiment-lc04 was rejected in review: it is not in the export" in said, said


def test_p39_kill_7_a_live_write_rewritten_by_another_writer_is_not_swept(tmp_path):
    """Was (p39kill, low; regression of a fix after pass 38, reverted): a temporary file that its writer re-wrote with
    another atomic writer (the caches' ``save_checked``: ``write_json`` into it) lost the writer's lock, and a write of
    the same file meanwhile removed the live one. A young temporary file is never removed by another write."""
    from alict_core.common.jsonl import atomic_path, write_json

    target = tmp_path / "cache.json"
    with atomic_path(target) as live:
        write_json(live, {"a": 1})
        with atomic_path(target) as other:
            other.write_text("{}")
        assert live.exists()
    assert json.loads(target.read_text()) == {"a": 1}
