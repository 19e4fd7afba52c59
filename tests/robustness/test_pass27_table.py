"""Pass 27 rows: the pass-26 leftovers taken up, and what the pass-27 helpers found (fixed by the lead); each failed
before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error


def test_p27_left_1_a_repeated_item_in_a_link_filter_is_one_chip():
    """Was: `?kind=seed,seed` drew two equal "seeds" chips in the Failures filter."""
    from alict_app.view_state import decode_list

    assert decode_list("seed,seed,expansion,seed") == ["seed", "expansion"]
    assert decode_list(["vader", "vader"]) == ["vader"]


@pytest.mark.parametrize("control", ["\x1b[31m", "\x07", "\u202e", "\x85"])
def test_p27_left_2_a_control_character_in_an_error_is_shown_escaped(control):
    """Was: a typed server path holding a control character (a terminal escape, a bidi override) was echoed raw in
    the page's error ("baseline suite …a\\x1b[31mb.json not found")."""
    from streamlit.testing.v1 import AppTest

    def page(control: str) -> None:
        from alict_app.guard import guarded
        from alict_core.common.errors import AlictError

        with guarded("importing the baseline suite"):
            raise AlictError(f"baseline suite a{control}b.json not found\nsecond line")

    app = AppTest.from_function(page, kwargs={"control": control}, default_timeout=60).run()
    shown = app.error[0].value
    escape = control.encode("unicode_escape").decode("ascii")  # as Markdown source: the backslash escaped
    assert control not in shown  # escaped, or (U+0085, a line break to str.split) folded into a space
    assert escape.replace("\\", "\\\\").replace("[", "\\[") in shown or control.isspace()
    assert "second line" in shown


def test_p27_left_3_a_killed_request_json_write_leaves_no_temporary_file(tmp_path, own_cache):
    """Was: a run killed while writing request.json after its seal left `.request.json.<token>.tmp` in the run
    folder for good: the next press found the run finished and never wrote request.json again."""
    from alict_core.common.jsonl import is_own_temp_file, new_temp_file
    from alict_core.runner.stream import run_streaming
    from tests.robustness.support import small_cases

    cases = small_cases(3)
    folder = run_streaming(cases, ["vader"], root=tmp_path / "runs", extra_files={"request.json": {"who": "a"}})
    left = new_temp_file(folder / "request.json")  # what the killed write left
    left.write_text('{"who": "a"')
    assert is_own_temp_file(left)
    again = run_streaming(cases, ["vader"], root=tmp_path / "runs", extra_files={"request.json": {"who": "b"}})
    assert again == folder and not left.exists()
    assert json.loads((folder / "request.json").read_text()) == {"who": "a"}  # the run's own record is kept


@pytest.mark.parametrize("kept", ["counts/part-00000.json.bak", "results/part-00000.parquet.orig",
                                  "cases/part-x.jsonl", "results/part-00000.jsonl", ".draft-notes.tmp",
                                  "results/.mine.tmp", ".notes.yaml.0123456789ab.tmp"])
def test_p27_cli_1_run_out_over_a_run_never_takes_a_users_file_named_like_its_own(cli, tmp_path, own_cache, kept):
    """Was: `run --out r` over an earlier run r replaced it (exit 0) when a user's file in a shard folder merely
    began with `part-` (counts/part-00000.json.bak, results/part-00000.parquet.orig), or was any `.*.tmp` name (a
    user's `.draft-notes.tmp`, sealed by this program or not): the file went with the run. The refusal names it."""
    from tests.robustness.support import seed_row

    seeds = tmp_path / "s.jsonl"
    seeds.write_text(json.dumps(seed_row()) + "\n")
    run = tmp_path / "r"
    args = ("run", "--task", "sentiment", "--seeds", str(seeds), "--quiet", "--no-story", "--out", str(run))
    assert cli(*args, "--models", "vader").code == 0
    (run / kept).write_text("precious")
    outcome = cli(*args, "--models", "textblob")
    assert_clean_error(outcome, 2)
    assert (run / kept).read_text() == "precious" and repr(kept) in outcome.err


@pytest.mark.parametrize("progress", [{"n_cases": 10**8, "cases_done": 1, "started_at": -2_000_000},
                                      {"n_cases": int("9" * 400), "cases_done": int("9" * 399)},
                                      {"n_cases": 10**12, "cases_done": 1, "started_at": 1e-300}])
def test_p27_pages_1_an_odd_progress_json_never_takes_the_run_page_away(tmp_runs, tmp_path, own_cache, progress):
    """Was: a progress.json in the run store whose ETA is beyond datetime's range (or whose counts are 400 digits)
    replaced the whole Run page with "Unexpected error … OverflowError", for every session, until the folder was
    removed (progress.json is the writer's note, never trusted)."""
    import time

    from streamlit.testing.v1 import AppTest

    now = time.time()
    folder = tmp_runs / "aaaaetaoverflow3"
    folder.mkdir()
    started = progress.pop("started_at", -2000)
    note = {"status": "running", "pid": 999999, "n_shards": 4, "shards_done": 0, "models": ["vader"],
            "started_at": now + started if started < 0 else started, "updated_at": now, **progress}
    (folder / "progress.json").write_text(json.dumps(note))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240)
    at.run()
    at.switch_page("pages/run.py").run()
    assert not at.exception
    assert not [e.value for e in at.error if "Unexpected" in e.value]
    assert at.button(key="run_go")


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("touch", ["nothing", "another field"])
def test_p27_pages_2_apply_to_yaml_never_rewrites_strings_the_form_cannot_show(tmp_path, monkeypatch, touch):
    """Was: "Apply to YAML" rewrote every concat string list, changed or not: an empty postfix was dropped, a
    padded one stripped and one holding a line break split in two; the spec stayed valid and, saved, made other
    cases without a word."""
    from tests.robustness.test_pass17_table import _specs_page_of

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    at = _specs_page_of(Path(__file__).resolve().parents[2], "sentiment-lc03")
    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    odd = '["now I like it.", "", "  now I love it!  ", "now I hate\\nit."]'
    lines = editor.value.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("concat:"))
    postfix = next(i for i in range(first + 1, len(lines)) if lines[i].strip().startswith("- [") or
                   lines[i].strip() == "-")
    assert lines[postfix].strip().startswith("- ["), lines[first:first + 8]
    lines[postfix] = lines[postfix][:lines[postfix].index("- [")] + "- " + odd
    text = "\n".join(lines) + "\n"
    editor.set_value(text).run()
    if touch == "another field":
        field = next(t for t in at.text_area if str(t.key).endswith("::search/0/predicates"))
        field.set_value(field.value.replace("lt: 20", "lt: 15"))
    next(b for b in at.button if b.label == "Apply to YAML").click().run()
    assert not at.exception, [e.value for e in at.exception]
    after = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::")).value
    assert odd in after
    if touch == "another field":
        assert "lt: 15" in after
    else:
        assert after == text


@pytest.mark.parametrize("alike", ["T1", "ｔ1", "Ｔ１"])
def test_p27_pages_3_a_review_task_named_like_another_but_for_case_or_width_is_refused(tmp_path, alike):
    """Was: beside a task "t1", the Review page (and `review sample`) created "T1" and a full-width "ｔ1": a shared
    link could send reviewers to a look-alike task."""
    from alict_core.review.store import ReviewError, ReviewStore

    store = ReviewStore(f"sqlite:///{tmp_path / 'rv.sqlite'}")
    store.create_task("t1", "sentiment", {}, [])
    with pytest.raises(ReviewError, match="only in case, character width"):
        store.create_task(alike, "sentiment", {}, [])
    assert [task.name for task in store.tasks()] == ["t1"]
    store.create_task("t2", "sentiment", {}, [])  # another name is fine


@pytest.mark.parametrize("url", ["sqlite:///~/rv.sqlite", "sqlite:///~me/rv.sqlite", "sqlite:///rv.sqlite?mode=ro",
                                 "sqlite:///rv.sqlite?journal=off", "sqlite:///rv.sqlite?timeout=abc",
                                 "sqlite:///rv.sqlite?timeout=nan", "sqlite:///rv.sqlite?timeout=1e308",
                                 "sqlite:///rv.sqlite?timeout=-1"])
def test_p27_cli_3_review_db_urls_with_a_tilde_or_an_unknown_option_are_refused(cli, tmp_path, own_cache,
                                                                               monkeypatch, url):
    """Was (row by the p27cli helper): `review sample --db sqlite:///~/rv.sqlite` created a folder literally named
    `~` in the working folder and the database in it, exit 0 (a URL is never expanded by the shell);
    `--db "sqlite:///q.db?mode=ro"` printed SQLAlchemy's warning with its source line and wrote the database."""
    from tests.robustness.support import small_cases

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({**case.to_dict(), "task": "sentiment"}) + "\n" for case in small_cases(3)))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    outcome = cli("review", "sample", "--db", url, "--name", "t", "--task", "sentiment",
                  "--cases", str(cases), "--size", "3", "--sets", "1", "--k", "1")
    assert_clean_error(outcome, 2)
    assert list(work.iterdir()) == [] and list((tmp_path / "home").iterdir()) == []
    assert "create_engine" not in outcome.err


@pytest.mark.parametrize("layout", ["released folder", "training checkpoint"])
def test_p27_cli_4_a_parser_file_is_never_unpickled(tmp_path, monkeypatch, layout):
    """Was (row by the p27cli helper): a benepar parser (`ALICT_DEFAULT_PARSER=<folder>`, and the store's own
    parser) was read by benepar's `torch.load(benepar_model.bin)` with no `weights_only`: with
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 in the environment, `parse --text …` ran a forged pickle's code without
    --trust-pickle; without it the refusal repeated torch's advice to load it with weights_only=False."""
    import os
    import pickle

    from alict_core.common.errors import ModelError
    from alict_core.parsing.benepar_backend import BeneparParser

    marker = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):
            return os.mkdir, (str(marker),)

    if layout == "released folder":
        model = tmp_path / "evil"
        model.mkdir()
        (model / "config.json").write_text(json.dumps({"model_type": "bert", "benepar": {"hparams": {}}}))
        (model / "benepar_model.bin").write_bytes(pickle.dumps(Payload()))
    else:
        model = tmp_path / "evil.pt"
        model.write_bytes(pickle.dumps({"config": Payload(), "state_dict": {}}))
    for forced in ("1", None):
        if forced:
            monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", forced)
        else:
            monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
        with pytest.raises(ModelError, match="never loaded") as refused:
            BeneparParser("evil", model, cache_root=tmp_path / "c")
        assert not marker.exists()
        assert "weights_only" not in str(refused.value)


def test_p27_cli_2_build_never_repairs_a_cut_short_build_over_a_users_file(cli, tmp_path, own_cache):
    """Was (row by the p27cli helper): `build parser --profile micro --out bo` with bo/micro/parser holding the
    user's mine.txt beside a manifest.json cut short (`{"format": 1, "target": "pa`) built over it, exit 0, mine.txt
    gone: a cut manifest skipped every check of the folder's other names."""
    target = tmp_path / "bo" / "micro" / "parser"
    target.mkdir(parents=True)
    (target / "mine.txt").write_text("precious")
    (target / "manifest.json").write_text('{\n  "format": 1,\n  "target": "pa')
    outcome = cli("build", "parser", "--profile", "micro", "--out", str(tmp_path / "bo"), "--no-wait")
    assert_clean_error(outcome, 2)
    assert "mine.txt" in outcome.err and (target / "mine.txt").read_text() == "precious"


def test_p27_cli_2b_a_cut_short_build_of_the_targets_own_files_is_still_repaired(tmp_path):
    """The neighbour kept: only the target's own files beside a cut manifest: rebuilt (no refusal)."""
    from alict_core.models.artefacts import check_build_folder

    target = tmp_path / "micro" / "parser"
    target.mkdir(parents=True)
    for name in ("benepar_model.bin", "config.json", "tokenizer.json"):
        (target / name).write_text("x")
    (target / "manifest.json").write_text('{"format": 1, "target": "parser", "files": {"odd.txt": "ab')
    (target / "odd.txt").write_text("named by the cut manifest")
    check_build_folder(target, "parser")


def test_p27_cli_5_explain_samples_below_the_explainers_minimum_is_an_argument_error(cli, tmp_path, own_cache):
    """Was: `explain --samples 5` passed argparse's range (1–20000) and was refused later by the explainer ("must
    be at least 10"): the option's own range now says so."""
    outcome = cli("explain", "--text", "a good film", "--model", "vader", "--samples", "5")
    assert_clean_error(outcome, 2)
    assert "--samples" in outcome.err and "10" in outcome.err


@pytest.mark.parametrize("suite", ["missing.json", "a folder.json"])
def test_p27_cli_6_a_missing_suite_is_refused_before_the_seed_search(cli, tmp_path, own_cache, monkeypatch, suite):
    """Was: `run --suite missing.json` was refused only after every LC's seed search (10-30 s)."""
    import alict_core.seeds

    monkeypatch.chdir(tmp_path)
    if suite == "a folder.json":
        (tmp_path / suite).mkdir()
    monkeypatch.setattr(alict_core.seeds, "find_seeds", lambda *a, **k: pytest.fail("searched the seeds first"))
    outcome = cli("run", "--task", "sentiment", "--lc", "4", "--suite", suite, "--models", "vader", "--quiet")
    assert_clean_error(outcome, 2)
    assert repr(suite) in outcome.err


def test_p27_cli_7_a_model_named_like_another_registered_model_is_refused(cli, tmp_path, own_cache):
    """Was: `--models static:path=p.jsonl,name=vader` was accepted (the Run page refuses a registered model's name):
    the run's results named a static predictions file "vader"."""
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"text": "a good film", "label": "positive"}) + "\n")
    outcome = cli("run", "--task", "sentiment", "--lc", "4", "--max-seeds", "2", "--quiet", "--no-story",
                  "--models", f"static:path={predictions},name=vader", "--out", str(tmp_path / "r"))
    assert_clean_error(outcome, 2)
    assert "registered model" in outcome.err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("where", ["the data folder", "inside the data folder", "a saved run"])
def test_p27_left_4_a_cache_folder_in_the_data_or_a_saved_run_is_refused(cli, tmp_path, monkeypatch, where):
    """Was (documented since pass 26): ALICT_CACHE_DIR naming the data folder (or a folder in it) or a saved run was
    used as it was: every command wrote its caches, locks and runs among the corpora or into the run."""
    data = tmp_path / "data"
    (data / "sst").mkdir(parents=True)
    (data / "sst" / "train.txt").write_text("(3 (2 a) (3 good))\n")
    cache = {"the data folder": data, "inside the data folder": data / "cache", "a saved run": tmp_path / "run"}[where]
    if where == "a saved run":
        cache.mkdir()
        (cache / "meta.json").write_text("{}")
    monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    outcome = cli("seeds", "--task", "sentiment", "--lc", "4", "--max", "2")
    assert_clean_error(outcome, 2)
    assert "ALICT_CACHE_DIR" in outcome.err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


# ------------------------------------------------------------------ pass 28 (pages), on the pass-27 fixes' commit
def _run_page(extra_setup=None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240)
    at.run()
    return at.switch_page("pages/run.py").run()


@pytest.mark.parametrize("updated", ["soon", [1], {"a": 1}, int("1" + "0" * 400)])
def test_p28_pages_2_a_progress_note_with_an_odd_time_never_takes_the_run_page_away(tmp_runs, own_cache, updated):
    """Was: a progress.json whose `updated_at` is text, a list or a 400-digit number replaced the whole Run page
    with "Unexpected error … ValueError/TypeError/OverflowError", for every session (the pass-27 fix guarded the
    counts and the ETA, not the listing's own float())."""
    import time

    folder = tmp_runs / "aaaaodd"
    folder.mkdir()
    (folder / "progress.json").write_text(json.dumps({
        "status": "running", "pid": 999999, "n_shards": 4, "shards_done": 1, "n_cases": 100, "cases_done": 10,
        "models": ["vader"], "started_at": time.time() - 100, "updated_at": updated}))
    at = _run_page()
    assert not at.exception and not [e.value for e in at.error if "Unexpected" in e.value]
    assert at.button(key="run_go")


@pytest.mark.parametrize("name", ["abc (copy)", "run#2"])
def test_p28_pages_7_a_run_folder_named_like_no_run_is_never_listed_in_progress(tmp_runs, own_cache, name):
    """Was: a folder `abc (copy)` (a user's copy of an unfinished run) holding a running progress.json was listed
    under "Runs in progress"; attaching to it raised past the page's boundary (a fragment): Streamlit's error box
    and a traceback in the server log."""
    import time

    folder = tmp_runs / name
    folder.mkdir()
    (folder / "progress.json").write_text(json.dumps({
        "status": "running", "pid": 999999, "n_shards": 4, "shards_done": 1, "n_cases": 100, "cases_done": 10,
        "models": ["vader"], "started_at": time.time() - 100, "updated_at": time.time()}))
    at = _run_page()
    assert not at.exception
    assert not [s for s in at.selectbox if s.key == "attach_run" and name in s.options]


def test_p28_pages_7b_attaching_to_a_run_of_an_invalid_name_is_one_message():
    """The neighbour: `_attached` itself (a fragment, past the page's error boundary) says a bad run name."""
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from alict_app import run_monitor

        run_monitor._attached("abc (copy)")

    at = AppTest.from_function(page, default_timeout=60).run()
    assert not at.exception and at.warning


SHARED = '''name: shared
rules:
  - name: one
    concat:
      - &conn [", but", ", although"]
  - name: two
    concat:
      - *conn
'''


def test_p28_pages_1_a_list_shared_through_an_anchor_is_never_rewritten():
    """Was: "Apply to YAML" on a connectives list shared by `&conn` / `*conn` rewrote the line without its anchor
    (the editor's YAML then failed: "found undefined alias") or rewrote the other rule's list."""
    from alict_app.specs_io import KeptAsIs, replace_list, uses_anchors

    assert uses_anchors(SHARED)
    with pytest.raises(KeptAsIs, match="anchors"):
        replace_list(SHARED, ("rules", 1, "concat", 0), [", but", ", although", ", yet"])


@pytest.mark.parametrize("change", ["one item", "one more item"])
def test_p28_pages_6_apply_to_yaml_never_drops_the_comments_of_a_shipped_spec(change):
    """Was: changing `{clause: true}` to false in sentiment-lc06's predicates deleted the three comment lines after
    it (a block item's end mark lies past them); adding a predicate (a whole-list rewrite) dropped them too."""
    import yaml

    from alict_app.specs_io import KeptAsIs, replace_list
    from alict_core.common.config import SPECS_DIR

    text = (SPECS_DIR / "sentiment" / "sentiment-lc06.yaml").read_text()
    predicates = yaml.safe_load(text)["search"][0]["predicates"]
    if change == "one item":
        edited = replace_list(text, ("search", 0, "predicates"),
                              [dict(p, clause=False) if p.get("clause") is True else p for p in predicates])
        assert "one claim to deny" in edited
        changed = [line for line in edited.splitlines() if line not in text.splitlines()]
        assert len(changed) == 1 and "clause: false" in changed[0]
    else:
        with pytest.raises(KeptAsIs, match="comments"):
            replace_list(text, ("search", 0, "predicates"), [*predicates, {"length": {"gt": 3}}])


@pytest.mark.parametrize("field", ["status", "models", "message"])
def test_p28_pages_5_progress_note_values_are_shown_escaped(tmp_runs, own_cache, field):
    """Was: a progress.json status, model name or message holding U+202E or ESC was drawn raw in "Runs in
    progress" and the attached run's caption (pass 27 escaped only errors; a Compare link's unknown run or model
    in its warning too)."""
    import time

    from alict_app.formatting import literal

    assert "\u202e" not in literal("x\u202ey\x1b[2K") and "\x1b" not in literal("x\u202ey\x1b[2K")
    odd = {"status": "cancelled\u202eyppah", "models": ["vader\x1b[2K\u202e"], "message": "done\u202e\x07"}[field]
    note = {"status": "running", "pid": 999999, "n_shards": 4, "shards_done": 1, "n_cases": 100, "cases_done": 10,
            "models": ["vader"], "started_at": time.time() - 100, "updated_at": time.time(), "message": "",
            field: odd}
    (tmp_runs / "aaaabidi").mkdir()
    (tmp_runs / "aaaabidi" / "progress.json").write_text(json.dumps(note))
    at = _run_page()
    at.selectbox(key="attach_run").set_value("aaaabidi").run()
    shown = [element.value for kind in ("warning", "info", "caption", "markdown", "error", "success")
             for element in getattr(at, kind) if isinstance(element.value, str)]
    assert not at.exception and any("aaaabidi" in text for text in shown)
    assert not [text for text in shown if any(char in text for char in "\u202e\x1b\x07")]


@pytest.mark.parametrize("alike", ["task\u2010a", "t\u0430sk-a", "task-\u0430", "task\u2013a"])
def test_p28_pages_3_a_review_task_named_with_look_alike_letters_is_refused(tmp_path, alike):
    """Was: beside "task-a", `create_task` (the Review page's form, `review sample`) made "task‐a" (U+2010),
    "tаsk-a" (a Cyrillic а): identical-looking entries of the Review menu and its links."""
    from alict_core.review.store import ReviewError, ReviewStore

    store = ReviewStore(f"sqlite:///{tmp_path / 'rv.sqlite'}")
    store.create_task("task-a", "sentiment", {}, [])
    store.create_task("task a", "sentiment", {}, [])
    with pytest.raises(ReviewError, match="scripts|only in case"):
        store.create_task(alike, "sentiment", {}, [])
    assert sorted(task.name for task in store.tasks()) == ["task a", "task-a"]


def test_p28_pages_4_a_harden_page_view_creates_no_folder(tmp_path, monkeypatch):
    """Was: opening the Harden page with a fresh cache created <cache>/runs and <cache>/models/versions (page views
    never write)."""
    import os

    from streamlit.testing.v1 import AppTest

    cache = tmp_path / "cache"
    monkeypatch.setenv("ALICT_CACHE_DIR", str(cache))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=240)
    at.run()
    before = set(os.listdir(cache)) if cache.is_dir() else set()
    at.switch_page("pages/harden.py").run()
    assert not at.exception
    made = (set(os.listdir(cache)) if cache.is_dir() else set()) - before
    assert not made & {"runs"} and not (cache / "models" / "versions").exists(), made
