"""Pass 30 rows (the p30cli, p30pages and p30kill helpers; fixed by the lead): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


@pytest.mark.parametrize("flag", ["yes", "on", "y", "t", "%20true", "x&uri=y"])
def test_p30_cli_1_a_sqlite_uri_flag_spelt_as_sqlalchemy_reads_it_never_loses_the_task(cli, tmp_path, monkeypatch,
                                                                                      fresh_engines, flag):
    """Was (the p30cli helper): pass 29 refused options smuggled into a `file:` URI with `?uri=true`/`?uri=1`, but
    SQLAlchemy's pysqlite dialect reads `uri` with asbool (yes/on/y/t are true too) while the store's checks
    (`check_sqlite_url`, `sqlite_path`) only know "true"/"1": `review sample --db
    'sqlite:///file:<db>%3Fmode%3Dmemory?uri=yes'` printed "review task 't': 3 seeds ..." (exit 0) into an in-memory
    database, and made folders `./file:/<db's folder>` in the working folder (sqlite_path took the whole `file:...` text
    for a relative path)."""
    from tests.robustness.support import small_cases

    monkeypatch.chdir(tmp_path)
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    database = tmp_path / "db" / "review.sqlite"
    database.parent.mkdir()
    url = f"sqlite:///file:{database}%3Fmode%3Dmemory?uri={flag}"
    outcome = cli("review", "sample", "--db", url, "--name", "t", "--task", "sentiment", "--cases", str(cases),
                  "--size", "3", "--sets", "1", "--k", "1")
    assert not (tmp_path / "file:").exists()  # no folder nobody asked for
    if outcome.code == 2:
        assert_clean_error(outcome, 2)
        return
    assert outcome.code == 0, outcome.err[-600:]
    exported = cli("review", "export", "--db", f"sqlite:///{database}", "t", "--out", str(tmp_path / "f.jsonl"))
    assert exported.code == 0, exported.err[-600:]


def test_p30_cli_1b_a_sqlite_uri_flag_spelt_on_never_puts_the_database_in_the_model_store(cli, tmp_path, own_cache,
                                                                                        fresh_engines):
    """Was (the p30cli helper): `--db sqlite:///file:<cache>/models/x.sqlite?uri=on` wrote the review database into the
    model store (exit 0), where `sqlite:///<cache>/models/x.sqlite` and `?uri=true` are refused ("lies in the model
    store")."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    store = own_cache / "models"
    store.mkdir(parents=True)
    outcome = cli("review", "sample", "--db", f"sqlite:///file:{store / 'x.sqlite'}?uri=on", "--name", "t",
                  "--task", "sentiment", "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2)
    assert not (store / "x.sqlite").exists()


@pytest.mark.parametrize("flag", ["yes", "on", "%20true"])
def test_p30_cli_1c_the_store_reads_a_sqlite_uri_flag_as_sqlalchemy_does(tmp_path, flag):
    """Was (the p30cli helper): with a confirmed write-back in <db>, `ALICT_REVIEW_DB_URL=sqlite:///file:<db>?uri=yes
    run --task sentiment --models vader --lc 1 --max-seeds 3` ran the 3 rejected seeds (exit 0) where the plain URL said
    "no test cases to run (3 rejected by reviewers left out)": store.sqlite_path took 'file:<db>' for a missing relative
    file, so the write-back filter saw no database, while SQLAlchemy (asbool) opened <db> itself."""
    from alict_core.review.store import sqlite_path

    database = tmp_path / "review.sqlite"
    assert sqlite_path(f"sqlite:///file:{database}?uri={flag}") == sqlite_path(f"sqlite:///file:{database}?uri=true")


def test_p30_cli_4_a_resealed_parse_whose_leaves_are_not_its_tokens_is_never_served(tmp_path, own_cache):
    """Was (the p30cli helper, low): a parse-cache shard re-sealed (sha256 in its .manifest.json recomputed) whose row
    keeps its `key`/`tokens` but holds the tree of another sentence is served by ParseCache.get: `expand --task
    sentiment --lc 4 --max-seeds 1 --no-cache` then wrote 61 candidates with seed_text "This is not a film living far
    too much in its own head ." and texts "I would hate this awful film ." (all rejected here by the protected-span /
    predicate checks, so no run used them; an LC without protected spans and a neutral forged tree would pass).
    Like a prediction shard whose rows are no probabilities (pass 28/29), a row whose tree leaves are not its
    tokens is impossible content: quarantine it and parse again."""
    import hashlib

    from alict_core.parsing.benepar_backend import ParseCache

    cache = ParseCache("fp", root=tmp_path / "parses")
    import nltk

    tokens = "A fine film .".split()
    cache.put_many([(tokens, nltk.Tree.fromstring("(S (NP (DT A) (JJ fine) (NN film)) (. .))"))])
    shard = next((tmp_path / "parses" / "fp").glob("*.jsonl"))
    row = json.loads(shard.read_text())
    row["tree"] = ["S", ["NP", ["PRP", "I"]], ["VP", ["VBP", "hate"], ["NP", ["NN", "it"]]], [".", "."]]
    shard.write_text(json.dumps(row) + "\n")
    manifest = Path(str(shard) + ".manifest.json")
    sealed = json.loads(manifest.read_text())
    sealed["files"][shard.name] = hashlib.sha256(shard.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(sealed))
    tree = ParseCache("fp", root=tmp_path / "parses").get(tokens)
    assert tree is None or tree.leaves() == tokens


@pytest.mark.parametrize("second", ["other task", "no seeds", "expand --suite"])
def test_p30_cli_5_a_seeds_or_expansions_folder_written_by_alict_is_guarded_against_outputs(cli, tmp_path, saved_run,
                                                                                         second):
    """Was (the p30cli helper): manifest._lc_files_kind recognises a seeds/expansions folder only when EVERY
    <lc>.jsonl's first row names the file's LC and all share one task. Folders ALiCT itself writes fail that, and an
    output then replaces a file in them (exit 0), where the same output into a plain `seeds --lc 1` folder is refused
    ("lies inside the saved artefact ... (seeds, written by `seeds`)"): - other task: `seeds --task sentiment --lc 1
    --out W/sd` then `seeds --task hate_speech --lc 1 --out W/sd`; - no seeds: a merged LC that found nothing (`seeds
    --spec <spec matching nothing> --out W/sd`) is an empty file; - expand --suite: `expand --suite suite1.json --out
    W/exs` writes suite1_simple_tests.jsonl whose rows say lc_id 'suite1:simple tests'. Seen: `compare run1 run1
    --model-a vader --model-b textblob --json W/sd/sentiment-lc01.jsonl` and `review export ... --out` of the same path
    replaced the seeds / expansions."""
    folder = tmp_path / "sd"
    folder.mkdir()
    target = folder / "sentiment-lc01.jsonl"
    if second == "expand --suite":
        target = folder / "suite1_simple_tests.jsonl"
        row = {"id": "suite1:simple tests-0-8acf7c0f-x714350448b", "seed_id": "suite1:simple tests-0-8acf7c0f",
               "lc_id": "suite1:simple tests", "task": "sentiment", "seed_text": "The film was long .",
               "text": "The film was a long .", "accepted": False}
        target.write_text(json.dumps(row) + "\n")
        (folder / "suite1_simple_tests.meta.json").write_text("{}")
    if second == "no seeds":
        (folder / "sentiment-lc02.jsonl").write_text("")
    for task in {"other task": ("sentiment", "hate_speech"), "no seeds": ("sentiment",), "expand --suite": ()}[second]:
        row = {"id": f"{task}-lc01-0123456789ab", "lc_id": f"{task}-lc01", "task": task, "text": "A fine film .",
               "test_type": "MFT", "expected": {"kind": "label", "labels": ["neutral" if task == "sentiment"
                                                                            else "non-hateful"], "tolerance": None}}
        (folder / f"{task}-lc01.jsonl").write_text(json.dumps(row) + "\n")
    before = target.read_text()
    outcome = cli("report", str(saved_run), "--out", str(tmp_path / "r.html"), "--summary-json", str(target))
    assert_clean_error(outcome, 2)
    assert target.read_text() == before


@pytest.mark.parametrize("url", ["postgresql://bob@127.0.0.1:1/db?password=TOPSECRET",
                                 "postgresql:///db?host=127.0.0.1&port=1&user=bob&password=TOPSECRET"])
def test_p30_cli_6_a_database_password_in_the_url_query_is_never_printed(cli, fresh_engines, url):
    """Was (the p30cli helper): `review stats --db 'postgresql://bob@127.0.0.1:1/db?password=TOPSECRET' t` said "error:
    cannot open the review database postgresql://bob@127.0.0.1:1/db?password=TOPSECRET (...)": libpq (psycopg) takes the
    password as a query option, and store.safe_url masks only the user-info password. With ALICT_REVIEW_DB_URL set so (a
    CI secret), every `run` printed it."""
    outcome = cli("review", "stats", "--db", url, "t")
    assert outcome.code == 2, outcome.err[-600:]
    assert "TOPSECRET" not in outcome.err + outcome.out


@pytest.mark.parametrize("argument", ["headers=X", "label_map=abc"])
def test_p30_cli_7a_a_mapping_argument_of_an_http_model_is_refused_in_words(cli, tmp_path, argument):
    """Was (the p30cli helper): `run --models 'http:url=http://127.0.0.1:9/p,task=sentiment,headers=X'` ended in "error:
    internal error (ValueError: dictionary update sequence element #0 has length 1; 2 is required)", exit 3 (remote.py:
    dict(headers)); `label_map=abc` the same."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    outcome = cli("run", "--task", "sentiment", "--models", f"http:url=http://127.0.0.1:9/p,task=sentiment,{argument}",
                  "--lc", "4", "--seeds", str(seeds), "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argument, attribute, value", [("batch_size=8", "batch_size", 8),
                                                        ("timeout=5", "timeout", 5.0),
                                                        ("retries=2", "retries", 2),
                                                        ("max_requests=100", "max_requests", 100)])
def test_p30_cli_7b_numeric_arguments_of_an_http_model_are_numbers_or_refused(argument, attribute, value):
    """Was (the p30cli helper): every `KIND:key=value` value reaches the constructor as text: `http:...,batch_size=8`
    failed at the first uncached request with "'str' object cannot be interpreted as an integer" (timeout=5: "Timeout
    value connect was 5, but it must be an int, float or None."), and with the texts already cached the same run exited
    0."""
    from alict_core.common.errors import AlictError
    from alict_core.models.refs import resolve_models

    try:
        model = resolve_models(f"http:url=http://127.0.0.1:9/p,task=sentiment,{argument}", "sentiment")[0]
    except AlictError:
        return  # refused in words before any work: fine
    assert getattr(model, attribute) == value and not isinstance(getattr(model, attribute), str)


@pytest.mark.parametrize("pair", [("pop", "\u0440\u043e\u0440"), ("ann", "\u0251nn"), ("ann-b", "ann\u2212b"),
                                  ("ann", "ann\u3164"), ("ann", "ann\ufe0f"), ("ann", "ann\u2800")])
def test_p30_cli_3_reviewer_names_that_look_alike_are_refused(tmp_path, fresh_engines, pair):
    """Was (the p30cli and p30pages helpers): `--reviewers 'pop,рор'` (wholly Cyrillic), 'ann' beside 'ɑnn' (a Latin
    alpha), 'ann−b' (a minus sign), or 'ann' + an invisible character (U+3164, U+FE0F, U+2800) were two reviewers
    who read alike; the Review page then let one visible person hold two sets."""
    from alict_core.review.store import ReviewError, ReviewStore, check_reviewers

    with pytest.raises(ReviewError):
        check_reviewers(list(pair))
    store = ReviewStore(f"sqlite:///{tmp_path / 'rv.sqlite'}")
    first = store.reviewer(pair[0]).id
    with pytest.raises(ReviewError):
        store.reviewer(pair[1])
    assert store.reviewer(pair[0]).id == first


@pytest.mark.parametrize("alike", ["race\u3164", "race\u2800", "race\ufe0f", "r\u0251ce", "r\u0430ce",
                                   "RACE"])
def test_p30_pages_2c_look_alike_review_task_names_are_refused(tmp_path, fresh_engines, alike):
    """Was (the p30pages helper): 'race' and 'race' + U+3164 (or U+2800, U+FE0F), 'rɑce' were created as separate
    review tasks; the Review page's menu showed three 'race' entries."""
    from alict_core.review.store import ReviewError, ReviewStore

    store = ReviewStore(f"sqlite:///{tmp_path / 'rv.sqlite'}")
    store.create_task("race", "sentiment", {}, [])
    with pytest.raises(ReviewError):
        store.create_task(alike, "sentiment", {}, [])
    assert [task.name for task in store.tasks()] == ["race"]
    store.create_task("josé", "sentiment", {}, [])  # names that differ by an accent stay apart
    store.create_task("jose", "sentiment", {}, [])


@pytest.mark.parametrize("label", ["vader\u3164", "\u3164vader", "vader\u2800", "vader\ufe0f", "vader\u034f",
                                   "v\u0251der", "textbl\u0585b", "minilm\u2212sst", "m\u0131n\u0131lm-sst",
                                   "\u1d20ader"])
def test_p30_pages_2a_a_user_model_named_like_a_registered_one_is_refused(label):
    """Was (the p30pages helper): the Run page's "Display name" took 'vɑder' (a Latin alpha), 'vader' + U+3164
    (invisible), 'minilm−sst' (a minus sign): the caption read "Models: minilm-sst, vader, vader"."""
    from alict_app.user_models import user_model_problem
    from alict_core.models.refs import registered_look_alike

    assert registered_look_alike(label) is not None
    assert user_model_problem({}, label) is not None


def test_p30_pages_4_an_odd_progress_note_shows_no_impossible_figures():
    """Was (the p30pages helper): progress.json {"n_cases": 10**40, "cases_done": 5, "updated_at": -1e20, ...} was
    drawn as "cases 5/0 · 5000000000 cases/s"."""
    from alict_core.runner.reader import progress_view

    view = progress_view({"n_cases": 10**40, "cases_done": 5, "started_at": 0, "updated_at": -1e20,
                          "n_shards": 10**40, "shards_done": 10**40, "status": "done"}, now=100.0)
    assert view["cases_done"] <= view["n_cases"] and view["shards_done"] <= view["n_shards"]
    assert view["rate"] == 0.0 and view["eta_s"] is None
    backwards = progress_view({"n_cases": 10, "cases_done": 5, "started_at": 50.0, "updated_at": 40.0,
                               "status": "done"}, now=100.0)
    assert backwards["rate"] == 0.0


def test_p30_pages_5_a_resealed_story_with_failures_not_in_the_run_is_not_used(saved_run):
    """Was (the p30pages helper): story.json's candidates were type-checked but never compared with the run: a story
    whose candidate texts, predictions and confidences were replaced (its sha256 computed again; the run untouched)
    was read, and the demo Story page showed the made-up sentences as the model's failures."""
    from alict_core.report.story import _content_sha256, build_story, read_story, save_story, story_path
    from alict_core.runner.run import RunResult

    story = build_story(RunResult.load(saved_run), None)
    assert story["candidates"], "vader fails some of the small cases"
    save_story(saved_run, story)
    assert read_story(saved_run) is not None  # the story as written is the run's
    forged = json.loads(story_path(saved_run).read_text())
    forged["candidates"][0].update(text="FORGED: a wonderful film", confidence=0.99)
    forged["sha256"] = _content_sha256(forged)
    story_path(saved_run).write_text(json.dumps(forged))
    assert read_story(saved_run) is None
    forged["candidates"] = json.loads(json.dumps(story["candidates"]))
    forged["contributions"] = {"vader\nFORGED text": {"tokens": ["FORGED", "text"], "scores": [1.0, 0.0]}}
    forged["sha256"] = _content_sha256(forged)
    story_path(saved_run).write_text(json.dumps(forged))
    assert read_story(saved_run) is None


def _app():
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240).run()


def test_p30_pages_6_run_options_survive_a_visit_to_another_page(own_cache):
    """Was (the p30pages helper): the Run page's batch size and "Include expansions" (and the Harden settings) went
    back to their defaults after a visit to another page, without a word; the next press used the defaults."""
    at = _app()
    at.switch_page("pages/run.py").run()
    at.number_input(key="run_batch").set_value(32).run()
    at.checkbox(key="run_expand").check().run()
    at.switch_page("pages/specs.py").run()
    at.switch_page("pages/run.py").run()
    assert not at.exception
    assert at.number_input(key="run_batch").value == 32 and at.checkbox(key="run_expand").value is True


def test_p30_pages_3_phrase_lists_are_matched_through_an_index_with_the_same_answers():
    """Was (the p30pages helper): a spec within every limit holding 24 `phrases` predicates of 1,000 items kept the
    Specs page's live counts busy for minutes (every phrase tried at every position of every sentence). The text's
    n-grams are now looked up in an index built once per predicate; the answers are the same as the plain reading."""
    import random

    from alict_core.lcspec.predicates import _value_index, lower_tokens, phrases_hold, set_semantics
    from alict_core.lcspec.schema import ClassSet

    words = ["not", "good", "bad", "film", "very", "it", "was", "."]
    rng = random.Random(0)
    for _ in range(300):
        values = [" ".join(rng.choices(words, k=rng.randint(1, 3))) for _ in range(rng.randint(1, 4))]
        side = rng.choice(["include", "exclude"])
        spec = ClassSet(**{side: values}, mode=rng.choice(["any", "all"]))
        tokens = lower_tokens(" ".join(rng.choices(words, k=rng.randint(0, 8))))
        plain = {v for v in values if any(tokens[i:i + len(lower_tokens(v))] == lower_tokens(v)
                                          for i in range(len(tokens) - len(lower_tokens(v)) + 1))}
        assert phrases_hold(spec, tokens) == set_semantics(spec, plain), (spec, tokens)
    big = ClassSet(exclude=[f"{i} q0" for i in range(1000)])
    assert _value_index(big, "phrases", lower_tokens) is _value_index(big, "phrases", lower_tokens)  # built once


def test_p30_cli_2_a_version_retrained_again_gets_a_version_name():
    """Was (the p30cli helper): `harden train --model minilm-sst@5ca0c2fb` (a version, as the help offers) always ended
    in "'minilm-sst@5ca0c2fb@b5ee7d68' is not a model version name"."""
    from alict_core.harden.versions import VERSION_NAME
    from alict_core.training.retrain import RetrainSettings, _version_name

    name = _version_name("minilm-sst@5ca0c2fb", "fingerprint", "data", (["a"], ["positive"]), RetrainSettings())
    assert VERSION_NAME.match(name) and name.startswith("minilm-sst@")
    assert name != _version_name("minilm-sst", "other", "data", (["a"], ["positive"]), RetrainSettings())


@pytest.mark.parametrize("url", ["http://bob:TOPSECRET@127.0.0.1:9/p", "http://127.0.0.1:9/p?token=TOPSECRET"])
def test_p30_cli_8_an_endpoint_url_with_a_secret_is_never_the_models_name(cli, tmp_path, url):
    """Was (the p30cli helper): `--models 'http:url=http://u:pw@host/p'` was refused as "the form of a stored model
    version" and printed the password; a token in the URL's query became the model's name in meta.json, summary.csv and
    the reports."""
    from alict_core.models.refs import ModelRef

    name = ModelRef("http", {"url": url, "task": "sentiment"}).run_name()
    assert "TOPSECRET" not in name and name == "http://127.0.0.1:9/p"
    outcome = cli("explain", "--text", "a fine film", "--model", f"http:url={url},task=sentiment,retries=0")
    assert outcome.code == 2 and "unrecognized" not in outcome.err
    assert "TOPSECRET" not in outcome.out + outcome.err
