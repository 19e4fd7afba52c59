"""Hostile pass 9 table (notes: attack_pass9.md): one row per finding, each failing on the code before its fix."""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LINK = "[Sign in again](https://evil.example/login)"
IMAGE = "![img](https://evil.example/pixel.png)"
HOSTILE = f"{LINK} {IMAGE} :red[**ALERT**] a bad film"


def _live_markdown(text: str) -> bool:
    """Whether ``text`` (drawn as Markdown) holds a live link, image or colour from the hostile values."""
    return any(sign in text for sign in ("](https://evil", "![img", ":red[**ALERT", ":red[**CAP", "`suite`"))


# F1–F4, the class: no f-string into st.markdown & co. interpolates a value that is not escaped ----------------

DRAWS = {"markdown", "caption", "error", "info", "warning", "success", "write", "subheader", "header", "title",
         "toast"}
ESCAPES = {"literal", "failure_card", "code"}  # alict_app.formatting: the escaping helper, a card escaping each
# value, and inline code (a code span renders no Markdown; a back-tick in the value is replaced)
NUMBERS = {"len", "int", "round", "float"}  # a number is safe
# Values known to be safe in Markdown: numbers, fixed labels of the program, fragments built just above from
# escaped values or numbers. A new data value drawn unescaped fails the scan (add it here only if it cannot
# hold text from a run, a suite, the review database, a user, a URL or an exception).
SAFE = {
    "' (loaded from cache)' if how == 'cached' else ''", "', '.join(missing)", "CORPUS_NAMES[task]",
    "OUTCOME_NAMES[outcome]",
    "STATE_ICONS.get(row['state'], '⚪')", "TARGET_TITLES[target]", "TASK_TITLES.get(task, task)",
    "TASK_TITLES[suite_task]", "accepted", "agree['n_shared']", "at_field", "baseline['capability'].nunique()",
    "checks['other_lc_cases_excluded_for_overlap']", "comparison.correction", "comparison.gate_correction",
    "comparison.test", "confidence", "count", "d", "describe_kappa(agree)", "dropped",
    "elsewhere[0].get('profile')", "figures_text(target, row)", "flag", "fmt(agree['krippendorff_alpha_label'])",
    "fmt(agree['krippendorff_alpha_relevance'])", "hint", "html.escape(row['error'])", "html.escape(row['note'])",
    "html.escape(row['state'])", "html.escape(row['what'])", "index + 1", "inserted", "item.kind", "item.set_no + 1",
    "item_steps.index(step) + 1", "label.lower()", "leak['leaking']", "leak['n_training']", "left_out", "link",
    "mark", "more", "n", "none_hint", "paired['newly_right']", "paired['newly_wrong']", "progress['n_shards']",
    "progress['shards_done']", "reached", "reasons", "rule.min_agreeing", "run_id[:12]",
    "s + 1", "saved.label_score", "saved.relevance", "saved.validity", "seeds", "shown", "story['method'].upper()",
    "story['samples']", "target", "template.get('model_calls', '?')", "template.get('p_thresh', '?')",
    "template.get('samples_used', '?')", "tests['correction']", "tests['heldout']", "tests['lcs']", "text", "title",
    "total", "total - done", "type(exc).__name__", "view['run_id'][:12]", "where",
    "literal(', field ' + o['field']) if o.get('field') else ''", "stats['n_cases']", "stats['n_judgements']",
}


def _unescaped(fstring: ast.JoinedStr) -> list[str]:
    out = []
    for part in fstring.values:
        if not isinstance(part, ast.FormattedValue):
            continue
        value = part.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ESCAPES | NUMBERS:
            continue
        if part.format_spec is not None and any(c in ast.unparse(part.format_spec) for c in "dfge%,"):
            continue  # a number formatted as one
        if ast.unparse(value) not in SAFE:
            out.append(ast.unparse(value))
    return out


def test_f1_to_f4_no_page_draws_an_unescaped_value_as_markdown():
    """Was: 9 lines in 4 files (Report demo view, Failures case detail, Review write-back line, the error boundary
    ``show_error``) drew case texts, capabilities, lc_ids, reviewer names and exception messages as Markdown: a
    link, an image fetched by every viewer's browser, colours. Now every value goes through ``literal``; this scan
    of pages/ and alict_app/ keeps it so."""
    found = []
    for path in sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("alict_app/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DRAWS
                    and node.args):
                continue
            for inner in ast.walk(node.args[0]):
                if isinstance(inner, ast.JoinedStr):
                    found += [f"{path.relative_to(ROOT)}:{node.lineno}: {v}" for v in _unescaped(inner)]
            drawn = node.args[0]
            if isinstance(drawn, ast.BinOp):  # "text " + value: each side
                parts = [drawn.left, drawn.right]
            else:
                parts = [drawn]
            for part in parts:
                if isinstance(part, (ast.Constant, ast.BinOp)) or any(
                        isinstance(inner, ast.JoinedStr) or _escaped(inner) for inner in ast.walk(part)):
                    continue  # f-strings are checked above, value by value
                if any(k.arg == "unsafe_allow_html" for k in node.keywords):
                    continue  # HTML built by charts / sidebar helpers, escaped there with html.escape
                if ast.unparse(part) not in SAFE_CALLS:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(part)[:80]}")
    assert not found, "\n".join(found)


def _escaped(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ESCAPES


# Whole strings drawn as Markdown that the program builds from numbers and fixed words (or escapes inside):
SAFE_CALLS = {
    "pass_to_fail_note(scope, candidates)", "first_line", "text", "model_headline(rates[rates['model'] == model])",
    "describe(view)", "size_line(request, {s.id: s for s in chosen})", "str(exc)", "role_line(role, entry)",
    "title", "caption", "CONTENT_NOTE", "'\\n'.join(lines)",
}


def test_f4_show_error_draws_the_message_as_text(monkeypatch):
    """Was: ``show_error`` put ``str(exc)`` into ``st.error``: a message quoting a user's input drew it as
    Markdown (``repr`` quoting escapes no Markdown)."""
    from alict_app import guard
    from alict_core.common.errors import AlictError

    drawn: list[str] = []
    monkeypatch.setattr(guard.st, "error", lambda text, **_: drawn.append(text))
    guard.show_error(AlictError(f"no such reviewer {LINK!r}"), "reading")
    guard.show_error(ValueError(f"bad {IMAGE}"), "reading")
    assert drawn and not any(_live_markdown(text) for text in drawn), drawn
    assert all("evil\\.example" in text for text in drawn)


@pytest.fixture
def hostile_run(tmp_path, tmp_runs):
    """A finished run (vader) of failing cases whose text, capability, lc_id, rule and slots are Markdown."""
    import dataclasses

    from alict_core.runner import build_cases, run_streaming
    from alict_core.runner.stream import group_by_seed

    seeds = [{"id": f"ev-{i}", "lc_id": "suite`evil", "text": f"{HOSTILE} {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}, "capability": "[Cap](https://evil.example/c) "
              ":red[**CAP**]", "meta": {"rule": "[rule](https://evil.example/r)", "slots": {"a": ":red[**ALERT**]"}}}
             for i in range(4)]
    cases = [dataclasses.replace(case, task="sentiment") for case in build_cases(seeds)]
    folder = run_streaming(group_by_seed(cases), ["vader"], run_dir=tmp_path / "run", shard_size=4,
                           cache_root=tmp_path / "pred")
    run_id = json.loads((folder / "meta.json").read_text())["run_id"]
    shutil.copytree(folder, tmp_runs / run_id)
    return run_id


def _drawn(at) -> list[str]:
    return [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success")
            for e in getattr(at, kind)]


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("page,query", [
    ("pages/report.py", {}),  # F1: the demo view's "most striking failures"
    ("pages/failures.py", {"outcome": "all"}),  # F2: the case detail (capability, lc_id, template)
])
def test_f1_f2_report_and_failures_draw_case_values_as_text(hostile_run, page, query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["run"] = hostile_run
    at.query_params["task"] = "sentiment"
    if page == "pages/failures.py":
        at.query_params["case"] = "ev-0"
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception
    texts = _drawn(at)
    assert any("evil\\.example" in t for t in texts), texts  # the values are shown, escaped
    assert not [t for t in texts if _live_markdown(t)], [t for t in texts if _live_markdown(t)]


def _review_db(tmp_path, monkeypatch) -> tuple:
    """A review database with task 't' (4 sentiment cases) named in ALICT_REVIEW_DB_URL; (store, task)."""
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.store import dispose_engines
    from tests.robustness.test_reviewer_names_table import _cases

    url = f"sqlite:///{tmp_path / 'review.sqlite'}"
    store = ReviewStore(url)
    task, _ = create_review_task(store, "t", "sentiment", _cases(), SamplingPlan(size=4, n_sets=1, k=1))
    monkeypatch.setenv("ALICT_REVIEW_DB_URL", url)
    dispose_engines()
    return store, task


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("by,reviewer", [
    (f"{LINK} :red[**ALERT**]", "ann"),  # F3: who confirmed the write-back, drawn to every reviewer
    (None, f"{LINK}\x07"),  # F4: a shared link's ?reviewer= quoted in the name error
], ids=["F3-confirmed-by", "F4-name-error"])
def test_f3_f4_the_review_page_draws_names_as_text(tmp_path, monkeypatch, by, reviewer):
    from alict_core.review import ReviewStore
    from alict_core.review.store import dispose_engines
    from tests.robustness.support import review_page

    store, task = _review_db(tmp_path, monkeypatch)
    store = ReviewStore(store.url)
    if by is not None:
        store.judge(store.items(task.id)[0].id, "ann", relevance=4, label_score=4)
        store.confirm_writeback("sentiment", 1, by)
    dispose_engines()
    at = review_page("t", reviewer)
    assert not at.exception, [e.value for e in at.exception]
    texts = _drawn(at)
    assert any("evil\\.example" in t for t in texts), texts
    assert not [t for t in texts if _live_markdown(t)], [t for t in texts if _live_markdown(t)]


# F10: an empty ALICT_CACHE_DIR / ALICT_REVIEW_DB_URL was read as unset: the shared cache, the default database -

@pytest.mark.parametrize("name", ["ALICT_CACHE_DIR", "ALICT_REVIEW_DB_URL"])  # workspace: test_userfiles_table
@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_f10_a_path_or_url_setting_set_but_empty_is_refused(cli, tmp_path, monkeypatch, name, value):
    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ALICT_REVIEW_DB_URL", raising=False)  # the default database: under the cache folder
    monkeypatch.setenv(name, value)
    assert_clean_error(cli("review", "stats", "t1"), 2, name, "is set but empty")


# F11: ALICT_DEMO_MODE=y (or enabled, 2) was read as off: a server meant read-only was fully writable ------------

@pytest.mark.parametrize("value", ["y", "enabled", "2", "tru"])
def test_f11_an_unknown_demo_mode_spelling_fails_closed_and_says_so(monkeypatch, value):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ALICT_DEMO_MODE", value)
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("ALICT\\_DEMO\\_MODE" in e.value and "demo mode is on" in e.value for e in at.error), at.error
    with pytest.raises(ValueError, match="Could not find a navigation page"):  # no Run page (writes): demo mode
        at.switch_page("pages/run.py").run()


@pytest.mark.parametrize("value,on", [("1", True), ("TRUE ", True), ("off", False), ("", False)])
def test_f11_documented_demo_mode_spellings_still_work(monkeypatch, value, on):
    from alict_app import demo

    monkeypatch.setenv("ALICT_DEMO_MODE", value)
    assert demo.enabled() is on and demo.problem() is None


@pytest.mark.parametrize("value", ["y", "enabled", "2"])
def test_f11_an_unknown_offline_spelling_is_one_message(monkeypatch, value):
    from alict_core.common.errors import AlictError
    from alict_core.models.defaults import offline_forced

    monkeypatch.setenv("ALICT_OFFLINE", value)
    with pytest.raises(AlictError, match="ALICT_OFFLINE=.*use 1/true/yes/on or 0/false/no/off"):
        offline_forced()


# F12: `review sample --cases` of a file mixing tasks dropped the other task's cases without a word -----------

def test_f12_a_cases_file_mixing_tasks_is_refused(cli, tmp_path, monkeypatch):
    import dataclasses

    from tests.robustness.test_reviewer_names_table import _cases

    cases = _cases(4)
    cases[2] = dataclasses.replace(cases[2], task="hate_speech")
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(case.to_dict()) + "\n" for case in cases))
    db = tmp_path / "review.sqlite"
    outcome = cli("review", "sample", "--db", f"sqlite:///{db}", "--name", "tm", "--task", "sentiment", "--cases",
                  str(path), "--size", "2")
    assert_clean_error(outcome, 2, "mix tasks", "1 of 4", "s2", "hate_speech")


# F13: a model kind given no (or wrong) arguments named a private function's signature ------------------------

@pytest.mark.parametrize("kind", ["hf", "http", "openai-chat", "static", "sklearn"])
def test_f13_a_model_kind_without_its_arguments_names_them(kind):
    from alict_core.common.errors import AlictError
    from alict_core.models.registry import MODELS, clear_model_cache, get_model

    clear_model_cache()
    with pytest.raises(AlictError) as caught:
        get_model(kind)
    message = str(caught.value)
    assert "positional argument" not in message and "_" + kind.split("-")[0] + "(" not in message, message
    for param in MODELS.entry(kind).params:
        assert f"{param.name}=<" in message, message
    assert "task=<sentiment or hate_speech>" in message and "given: none" in message, message


# F9 (and F7): a NUL in a note imported on SQLite, was refused on PostgreSQL as "another application's database";
# the reviewers of a refused file were created anyway --------------------------------------------------------

PG_URL = os.environ.get("ALICT_TEST_REVIEW_PG_URL")  # scripts/with_postgres.sh starts a throw-away server
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)"))]


def _db_url(tmp_path, backend: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'review.sqlite'}"
    from tests.robustness.test_pass8_table import _fresh_postgres

    return _fresh_postgres(str(PG_URL))


def _form_rows(cli, tmp_path, url: str) -> list[dict]:
    """Review task 't' (4 seed cases) in the database at ``url``; its exported form's rows."""
    import csv
    import io

    from tests.test_review import make_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c.to_dict()) + "\n" for c in make_cases(expansions=0)))
    assert cli("review", "sample", "--db", url, "--name", "t", "--task", "sentiment", "--cases", str(cases),
               "--size", "4", "--sets", "1", "--k", "1").code == 0
    assert cli("review", "export", "--db", url, "t", "--out", str(tmp_path / "form.csv")).code == 0
    return list(csv.DictReader(io.StringIO((tmp_path / "form.csv").read_text(), newline="")))


def _stored(url: str) -> tuple[int, int]:
    """(reviewers, judgements) in the review database at ``url``."""
    from alict_core.review import ReviewStore
    from alict_core.review.store import Reviewer

    store = ReviewStore(url)
    with store.session() as s:
        reviewers = len(list(s.scalars(select_all(Reviewer))))
    return reviewers, len(store.judgements())


def select_all(table):
    from sqlalchemy import select

    return select(table)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("note,needle", [("a\u0000b", "'\\x00'"), ("bell\u0007", "'\\x07'"), ("n" * 2001, "2000")],
                         ids=["nul", "bell", "long"])
def test_f9_a_note_with_a_nul_is_refused_with_its_file_and_line_on_any_database(cli, tmp_path, backend, note,
                                                                                 needle):
    url = _db_url(tmp_path, backend)
    rows = _form_rows(cli, tmp_path, url)
    filled = [{**r, "reviewer": f"new{i}", "relevance": 5, "label_score": 4, "note": "fine"}
              for i, r in enumerate(rows)]
    filled[-1]["note"] = note
    path = tmp_path / "nul.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in filled))
    outcome = cli("review", "import", "--db", url, str(path))
    assert_clean_error(outcome, 2, f"nul.jsonl:{len(filled)}", "note", needle, limit_s=30)
    assert "another application" not in outcome.err
    assert _stored(url) == (0, 0)  # nothing stored: no judgement, no reviewer (F7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_f7_an_import_failing_in_its_transaction_leaves_no_reviewer(cli, tmp_path, monkeypatch, backend):
    """Was: the reviewers were created one commit each before the judgements' transaction: a file refused (or an
    import killed) in that transaction left its reviewers behind. Now one transaction creates both."""
    from alict_core.review import store as review_store

    url = _db_url(tmp_path, backend)
    rows = _form_rows(cli, tmp_path, url)
    filled = [{**r, "reviewer": f"new{i}", "relevance": 5, "label_score": 4} for i, r in enumerate(rows)]
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in filled))
    real = review_store.ReviewStore._upsert_insert

    def failing(self):  # the database fails at the judgements' write, after the reviewers' inserts
        raise review_store.ReviewError("the disk is full (simulated)")

    monkeypatch.setattr(review_store.ReviewStore, "_upsert_insert", failing)
    assert_clean_error(cli("review", "import", "--db", url, str(path)), 2, "simulated", limit_s=30)
    monkeypatch.setattr(review_store.ReviewStore, "_upsert_insert", real)
    assert _stored(url) == (0, 0)
    assert cli("review", "import", "--db", url, str(path)).code == 0
    assert _stored(url) == (len(filled), len(filled))


# F5: canonically equal names (composed / decomposed accents, full-width letters) were two reviewers ---------

TWINS = [("Am\u00e9lie", "Ame\u0301lie"), ("ann", "\uff41\uff4e\uff4e"), ("Stra\u00dfe", "STRASSE"),
         ("Ame\u0301lie", "AM\u00c9LIE")]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("first,second", TWINS, ids=["nfc-nfd", "full-width", "sharp-s", "nfd-upper"])
def test_f5_canonically_equal_names_are_one_reviewer(tmp_path, backend, first, second):
    from alict_core.review import ReviewStore

    store = ReviewStore(_db_url(tmp_path, backend))
    assert store.reviewer(first).id == store.reviewer(second).id
    assert _stored(store.url)[0] == 1


@pytest.mark.parametrize("first,second", TWINS, ids=["nfc-nfd", "full-width", "sharp-s", "nfd-upper"])
def test_f5_reviewers_named_twice_in_canonical_forms_are_refused(first, second):
    from alict_core.review.store import ReviewError, check_reviewers

    with pytest.raises(ReviewError, match="twice"):
        check_reviewers([first, second])


def test_f5_an_import_naming_one_reviewer_in_two_forms_is_one_reviewer(cli, tmp_path):
    url = _db_url(tmp_path, "sqlite")
    rows = _form_rows(cli, tmp_path, url)
    names = ["Am\u00e9lie", "Ame\u0301lie"]
    filled = [{**r, "reviewer": names[i % 2], "relevance": 5, "label_score": 4} for i, r in enumerate(rows)]
    path = tmp_path / "two_forms.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in filled))
    assert cli("review", "import", "--db", url, str(path)).code == 0
    assert _stored(url) == (1, len(filled))


# F8: two `harden export`s to one new --out: the second replaced the first although --overwrite was not given --

def test_f8_two_exports_to_one_new_folder_one_wins_the_other_is_refused(tmp_path, monkeypatch):
    """The two exports are made to meet after their checks and staging, before the swap (each waits at a barrier
    for the other, up to 3 s): one swaps in its folder, the other finds it filled and is refused."""
    import threading

    from alict_core.common.errors import AlictError
    from alict_core.harden import export
    from tests.robustness.test_exports_table import _hostile_run

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))  # the folder locks
    run_dir = _hostile_run(tmp_path, "kw").save(tmp_path / "run")
    barrier = threading.Barrier(2)
    real_write = export._write

    def meeting(staging, parts, formats):
        real_write(staging, parts, formats)
        barrier.wait(timeout=3)

    monkeypatch.setattr(export, "_write", meeting)
    out = tmp_path / "cc_h"
    outcomes: dict[str, str] = {}

    def one(fmt: str) -> None:
        try:
            export.export_hardening_data(run_dir, out, lcs=["sentiment-lc01"], formats=(fmt,))
            outcomes[fmt] = "written"
        except AlictError as exc:
            outcomes[fmt] = str(exc)

    threads = [threading.Thread(target=one, args=(fmt,)) for fmt in ("jsonl", "csv")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [fmt for fmt, said in outcomes.items() if said == "written"]
    assert len(winners) == 1, outcomes
    loser = next(fmt for fmt in outcomes if fmt not in winners)
    assert "is not empty" in outcomes[loser] and "--overwrite" in outcomes[loser], outcomes
    assert (out / f"train.{winners[0]}").exists() and not (out / f"train.{loser}").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".cc_h")] == []  # no staging left


# F6: folders beside an --out that merely look like temporary ones (a user's `.photos.tmp-2019`, a backup
# `.out.old`, `.out.pending`) were removed, or moved into place as an interrupted swap ------------------------

def _foreign_neighbours(parent: Path, name: str) -> dict[str, str]:
    """A user's hidden folders beside ``parent/name``, old enough to be taken for a killed writer's; name → file."""
    made = {}
    for folder in (".photos.tmp-2019", f".{name}.tmp-abc", f".{name}.old", f".{name}.old-1", f".{name}.pending"):
        (parent / folder).mkdir(parents=True)
        (parent / folder / "precious.txt").write_text(folder)
        (parent / folder / "progress.json").write_text("{}")
        os.utime(parent / folder, (0, 0))
        made[folder] = folder
    return made


def _still_there(parent: Path, made: dict[str, str]) -> None:
    for folder, content in made.items():
        assert (parent / folder / "precious.txt").read_text() == content, folder


@pytest.mark.parametrize("exists", [False, True], ids=["new-out", "existing-out"])
def test_f6_atomic_dir_leaves_a_users_hidden_folders_alone(tmp_path, exists):
    from alict_core.common.manifest import atomic_dir

    made = _foreign_neighbours(tmp_path, "s2")
    if exists:
        with atomic_dir(tmp_path / "s2") as tmp:
            (tmp / "a.jsonl").write_text("old")
    with atomic_dir(tmp_path / "s2", owned=("*.jsonl",)) as tmp:
        (tmp / "b.jsonl").write_text("new")
    _still_there(tmp_path, made)
    assert sorted(p.name for p in (tmp_path / "s2").iterdir()) == ["b.jsonl"]


def test_f6_harden_export_and_run_leave_a_users_hidden_folders_alone(tmp_path, monkeypatch):
    from alict_core.harden.export import export_hardening_data
    from alict_core.runner import run_streaming
    from alict_core.runner.folders import clean_pending
    from alict_core.runner.store import list_runs
    from tests.robustness.test_exports_table import _hostile_run

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    made = _foreign_neighbours(out, "hx") | {f"runs/{k}": v for k, v in _foreign_neighbours(out / "runs", "r").items()}
    run_dir = _hostile_run(tmp_path, "kw").save(tmp_path / "run")
    export_hardening_data(run_dir, out / "hx", lcs=["sentiment-lc01"], formats=("jsonl",))
    clean_pending(out / "runs", max_age_s=0)
    list_runs(out / "runs")
    import dataclasses

    from alict_core.runner.stream import group_by_seed
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(4)]
    run_streaming(group_by_seed(cases), ["vader"], run_dir=out / "runs" / "r", shard_size=4,
                  cache_root=tmp_path / "pred")
    _still_there(out, made)


def test_f6_a_real_interrupted_swap_is_still_recovered(tmp_path):
    """The program's own old copy (its sealed name) is put back when the swap was killed between its renames."""
    from alict_core.common.manifest import _old_name, recover_dir

    target = tmp_path / "s3"
    old = _old_name(target)
    old.mkdir()
    (old / "lc4.jsonl").write_text("kept")
    recover_dir(target)
    assert (target / "lc4.jsonl").read_text() == "kept" and not old.exists()
