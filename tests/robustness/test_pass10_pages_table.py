"""Hostile pass 10 table, pages (notes: attack_pass10_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import ast
import json
import re
import shutil
import threading
from pathlib import Path

import pytest

from tests.robustness.test_pass9_table import DRAWS, ESCAPES, NUMBERS, SAFE, _live_markdown

pytestmark = [pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
HOSTILE = "[Sign in again](https://evil.example/login) ![img](https://evil.example/pixel.png) :red[**ALERT**] `x"


def _drawn(at) -> list[str]:
    return [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success")
            for e in getattr(at, kind)]


def _page(page: str, **query: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    return at.switch_page(page).run()


def _assert_shown_as_text(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    texts = _drawn(at)
    assert any("evil\\.example" in t for t in texts), texts  # the hostile value is shown, escaped
    assert not [t for t in texts if _live_markdown(t) or "evil.example" in t], [t for t in texts if "evil" in t]


# P10-1 / P10-2, the class: a value reaching st.markdown & co. through a variable or a helper's return ----------
# The pass-9 scan checked the f-strings written inside a draw call; an f-string built in a helper (``describe``
# returning ``f"**{view['shown_status']}**"``) or in a variable drawn later (``shown = "; ".join(f"{folder} …")``)
# passed it: the helper's call and the variable's name were on its lists of safe values. This scan follows each
# drawn name to its assignments and each drawn helper (of the same module, or ``module.helper`` of alict_app) to
# its returns, and checks every f-string met on the way.

# Leaves met while following (besides pass 9's SAFE): numbers and fixed words of the program, or already escaped.
SAFE_TRACED = {
    "writer", "view['shards_done']", "view['n_shards']", "view['cases_done']", "view['rate']",
    "_duration(view['eta_s'])", "len(copies)", "len(copies) - 5", "MAX_ROWS", "expansions - n_candidates",
    "request.max_per_seed", "size['models']",
}


class Scan:
    """Follows drawn values through assignments and helpers in pages/ and alict_app/."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.trees = {name: ast.parse(text) for name, text in sources.items()}
        self.functions = {(name, node.name): node for name, tree in self.trees.items() for node in ast.walk(tree)
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.found: list[str] = []

    def run(self) -> list[str]:
        for name, tree in self.trees.items():
            for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
                for node in self._own_nodes(scope):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr in DRAWS and node.args
                            and not any(k.arg == "unsafe_allow_html" for k in node.keywords)):
                        self._check(node.args[0], name, scope, f"{name}:{node.lineno}", set())
        return sorted(set(self.found))

    @staticmethod
    def _own_nodes(scope: ast.AST):
        """The nodes of ``scope`` outside the functions defined in it (those are scopes of their own)."""
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.extend(ast.iter_child_nodes(node))

    def _check(self, expr: ast.AST, module: str, scope: ast.AST, where: str, seen: set) -> None:
        """Record every f-string value under ``expr`` (followed through names and helpers) that is not escaped."""
        key = (module, id(scope), ast.dump(expr))
        if key in seen:
            return
        seen.add(key)
        if self._escaped(expr) or isinstance(expr, ast.Compare):  # a comparison is a condition, not drawn
            return
        if isinstance(expr, ast.JoinedStr):
            for part in expr.values:
                if isinstance(part, ast.FormattedValue) and not (part.format_spec is not None and any(
                        c in ast.unparse(part.format_spec) for c in "dfge%,")):  # else: a number formatted as one
                    self._value(part.value, module, scope, where, seen)
            return
        if isinstance(expr, ast.Name):
            for value in self._assigned(expr.id, scope):
                self._check(value, module, scope, where, seen)
            return
        helper = self._helper(expr, module)
        if helper is not None:
            self._returns(helper, where, seen)
        children = [expr.body, expr.orelse] if isinstance(expr, ast.IfExp) else ast.iter_child_nodes(expr)
        for child in children:
            if isinstance(child, ast.comprehension):  # its target and iterable are data, its conditions not drawn
                continue
            self._check(child, module, scope, where, seen)

    def _value(self, value: ast.AST, module: str, scope: ast.AST, where: str, seen: set) -> None:
        """One value put into an f-string: escaped, a number, a fixed word, or followed to where it is made."""
        if self._escaped(value) or isinstance(value, ast.Constant):
            return
        if isinstance(value, ast.BoolOp):
            for operand in value.values:
                self._value(operand, module, scope, where, seen)
            return
        if isinstance(value, ast.IfExp):
            for operand in (value.body, value.orelse):
                self._value(operand, module, scope, where, seen)
            return
        if isinstance(value, ast.JoinedStr):
            self._check(value, module, scope, where, seen)
            return
        if isinstance(value, ast.Name) and self._assigned(value.id, scope):  # followed even when on SAFE
            for assigned in self._assigned(value.id, scope):
                self._check(assigned, module, scope, where, seen)
            if not self._bound_by_loop(value.id, scope):
                return
        shown = ast.unparse(value)
        if shown in SAFE_TRACED or (shown in SAFE and shown not in UNVETTED):
            return
        helper = self._helper(value, module)
        if helper is not None:
            self._returns(helper, where, seen)
            return
        self.found.append(f"{where}: {shown}")

    def _returns(self, helper: tuple[str, ast.AST], where: str, seen: set) -> None:
        for node in self._own_nodes(helper[1]):
            if isinstance(node, ast.Return) and node.value is not None:
                self._check(node.value, helper[0], helper[1], f"{where} → {helper[0]}:{node.lineno}", seen)

    @staticmethod
    def _escaped(expr: ast.AST) -> bool:
        return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ESCAPES | NUMBERS

    def _helper(self, expr: ast.AST, module: str) -> tuple[str, ast.AST] | None:
        """The definition of a called helper: ``name(...)`` of this module, ``module.name(...)`` of alict_app."""
        if not isinstance(expr, ast.Call):
            return None
        if isinstance(expr.func, ast.Name):
            found = self.functions.get((module, expr.func.id))
            return (module, found) if found is not None else None
        if isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name):
            for other in self.trees:
                if other.endswith(f"/{expr.func.value.id}.py"):
                    found = self.functions.get((other, expr.func.attr))
                    return (other, found) if found is not None else None
        return None

    def _assigned(self, name: str, scope: ast.AST) -> list[ast.AST]:
        values = []
        for node in self._own_nodes(scope):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                values.append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                values.append(node.value)
        return values

    def _bound_by_loop(self, name: str, scope: ast.AST) -> bool:
        """Whether ``name`` is (also) a loop or comprehension variable: a value of the data, checked as a leaf."""
        for node in ast.walk(scope):
            target = node.target if isinstance(node, (ast.For, ast.comprehension)) else None
            if target is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                return True
        return False


# Pass 9's SAFE held these data values (a run's status from its progress.json; a build's error message, HTML-escaped
# but drawn as Markdown): no longer accepted as safe.
UNVETTED = {"progress['shown_status']", "view['status']", "html.escape(row['error'])"}


def _app_sources() -> dict[str, str]:
    return {path.relative_to(ROOT).as_posix(): path.read_text()
            for path in sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("alict_app/*.py")])}


def test_p10_1_2_no_value_reaches_markdown_unescaped_through_a_variable_or_a_helper():
    """Was: the Run page's "Runs in progress" drew a progress.json's ``status`` as Markdown through ``describe``
    (P10-1), and the run picker's note drew a copied run-store folder's name and the run id its meta.json names
    through the variable ``shown`` (P10-2): a live link on the Run, Failures, Report, Compare and Harden pages."""
    found = Scan(_app_sources()).run()
    assert not found, "\n".join(found)


PLANTED = '''
import streamlit as st
from alict_app.formatting import literal


def describe(view):
    return f"**{view['shown_status']}** · {literal(view['message'])}"


def note(copies):
    shown = "; ".join(f"{folder} holds run {held}" for folder, held in copies.items())
    st.caption(f"Not listed ({shown})")


def section(view):
    st.markdown(f"{literal(view['run_id'])} " + describe(view))
    text = describe(view)
    st.markdown(text)
'''


def test_the_scan_finds_values_drawn_through_a_helper_or_a_variable():
    """The scan above, on a planted module holding both shapes of P10-1/P10-2 (and an escaped value, not found)."""
    found = Scan({"alict_app/planted.py": PLANTED}).run()
    assert any(f.endswith("view['shown_status']") and "→" in f for f in found), found
    assert any(f.endswith(": folder") for f in found) and any(f.endswith(": held") for f in found), found
    assert not any("message" in f or "run_id" in f for f in found), found


@pytest.fixture
def hostile_progress(tmp_runs):
    """An unfinished run in the store whose progress.json says a Markdown ``status``, model and message."""
    folder = tmp_runs / "zzprog"
    folder.mkdir()
    (folder / "progress.json").write_text(json.dumps({
        "status": HOSTILE, "n_shards": 4, "shards_done": 1, "n_cases": 40, "cases_done": 10,
        "models": [HOSTILE], "message": HOSTILE}))
    return "zzprog"


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
def test_p10_1_the_run_page_draws_a_progress_status_as_text(hostile_progress):
    at = _page("pages/run.py", task="sentiment")
    _assert_shown_as_text(at)
    at.selectbox(key="attach_run").set_value(hostile_progress).run()  # attached: the progress line again
    _assert_shown_as_text(at)


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("page", ["pages/failures.py", "pages/harden.py"])
def test_p10_2_a_copied_run_folder_note_draws_names_as_text(tmp_runs, saved_run, page):
    copy = tmp_runs / "zz`copy"
    shutil.copytree(saved_run, copy)
    meta = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").write_text(json.dumps({**meta, "run_id": HOSTILE}))
    at = _page(page, task="sentiment")
    _assert_shown_as_text(at)
    assert any("zz\\`copy" in t for t in _drawn(at)), _drawn(at)


# P10-3: from the browser, a host off the allow-list was told "(default: loopback only)", but loopback is refused
# there by default too ---------------------------------------------------------------------------------------

def test_p10_3_the_allow_list_message_says_the_browsers_default(monkeypatch):
    from alict_core.common.errors import AlictError
    from alict_core.common.trust import check_endpoint

    monkeypatch.delenv("ALICT_ALLOWED_HOSTS", raising=False)
    with pytest.raises(AlictError) as browser:
        check_endpoint("http://0.0.0.0:18777/x", loopback=False)
    assert "loopback only" not in str(browser.value), browser.value
    assert "not even loopback" in str(browser.value) and "nothing was sent" in str(browser.value)
    with pytest.raises(AlictError, match=r"\(default: loopback only\)"):  # the command line's default is loopback
        check_endpoint("http://0.0.0.0:18777/x", loopback=True)


# P10-4: a Run started in the app's first seconds failed "a package it needs is missing: cannot import name
# 'AutoModel' from 'transformers' (/root/.pyenv/…/__init__.py)": the app's warm-up thread and the run imported
# transformers (a lazy module) at once; and the message named the server's install path ------------------------

def test_p10_4_a_model_build_waits_for_a_first_import_in_progress(monkeypatch):
    """A thread is inside the first import of the model code; a model built meanwhile (another thread) reaches its
    factory only after that import has finished, never beside it."""
    from alict_core.common import imports
    from alict_core.models.registry import MODELS, clear_model_cache, get_model

    order: list[str] = []
    importing, waiting = threading.Event(), threading.Event()

    class SpyLock:  # the import lock, telling when the model build's thread asks for it
        def __init__(self) -> None:
            self.lock = threading.RLock()

        def acquire(self, timeout: float = -1) -> bool:
            if threading.current_thread().name == "build":
                waiting.set()
            return self.lock.acquire(timeout=timeout)

        def release(self) -> None:
            self.lock.release()

    def first_import() -> None:
        importing.set()
        assert waiting.wait(timeout=60), "the model build never asked for the import lock"
        order.append("imported")

    monkeypatch.setattr(imports, "LOCK", SpyLock())
    monkeypatch.setattr(imports, "_DONE", set())
    monkeypatch.setattr(imports, "_model_code", first_import)
    MODELS.add("p10-embedded", lambda: order.append("factory") or object(), kind="embedded")
    clear_model_cache()
    try:
        warmup = threading.Thread(target=imports.model_code, name="warmup")
        warmup.start()
        assert importing.wait(timeout=60)
        build = threading.Thread(target=get_model, args=("p10-embedded",), name="build")
        build.start()
        warmup.join()
        build.join()
    finally:
        MODELS.remove("p10-embedded")
        clear_model_cache()
    assert order == ["imported", "factory"], order


@pytest.mark.parametrize("error,needles", [
    (ImportError("cannot import name 'AutoModel' from 'transformers' (/root/.pyenv/versions/3.11.7/lib/python3.11/"
                 "site-packages/transformers/__init__.py)", name="transformers",
                 path="/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/transformers/__init__.py"),
     ["could not be imported", "cannot import name 'AutoModel' from 'transformers'", "try again"]),
    (ModuleNotFoundError("No module named 'sentencepiece.x'", name="sentencepiece.x"),
     ["a package it needs is missing", "'sentencepiece' is not installed"]),
], ids=["import-name", "module-missing"])
def test_p10_4_an_import_failure_names_no_server_path(error, needles):
    from alict_core.common.errors import ModelError
    from alict_core.models.registry import MODELS, clear_model_cache, get_model

    def factory():
        raise error

    MODELS.add("p10-broken", factory, kind="static")
    clear_model_cache()
    try:
        with pytest.raises(ModelError) as caught:
            get_model("p10-broken")
    finally:
        MODELS.remove("p10-broken")
        clear_model_cache()
    message = str(caught.value)
    assert "/root" not in message and "site-packages" not in message, message
    for needle in needles:
        assert needle in message, message
    if not isinstance(error, ModuleNotFoundError):
        assert "missing" not in message, message  # nothing is missing: the import failed


# P10-5: `search: 5` (or `rules: 5`) in the Specs editor: "Unexpected error … TypeError: 'int' object is not
# iterable" with a traceback, besides the spec error -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("field,value", [("search", "5"), ("rules", "5"), ("search", "true"), ("rules", "1.5")])
def test_p10_5_a_number_where_the_spec_wants_a_list_is_a_spec_error_only(tmp_path, monkeypatch, field, value):

    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    at = _page("pages/specs.py", task="sentiment")
    assert not at.exception, [e.value for e in at.exception]
    editor = next(area for area in at.text_area if (area.key or "").startswith("spec_yaml::"))
    assert re.search(rf"^{field}:", editor.value, re.M), editor.value[:300]
    text = re.sub(rf"^{field}:", f"{field}: {value}\n{field}_old:", editor.value, count=1, flags=re.M)
    editor.set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors
    assert any(field in e for e in errors), errors  # the spec check names the field
    assert not (tmp_path / "ws").exists() or not any((tmp_path / "ws").rglob("*.y*ml"))  # nothing written


# P10-6: a refused baseline upload was named by its content hash ("a424233baadccd66.json: JSON nested too deeply
# to read"), not by the file the user chose -------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("name,data,needle", [
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested"),
    ("latin.json", "{\"caf\u00e9\": 1}".encode("latin-1"), "UTF-8"),
], ids=["deep", "not-utf8"])
def test_p10_6_a_refused_upload_is_named_by_the_users_file(run_store, monkeypatch, name, data, needle):

    from alict_app import runs

    monkeypatch.setattr(runs, "runs_root", lambda: run_store)
    run_id = next(p.name for p in run_store.iterdir())
    at = _page("pages/report.py", task="sentiment", run=run_id)
    assert not at.exception, [e.value for e in at.exception]
    at.file_uploader(key="baseline_upload").upload(name, data, "application/octet-stream").run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # the text shown (values drawn escaped)
    assert any(f"upload '{name}'" in e and needle in e for e in errors), errors
    assert not any(re.search(r"\b[0-9a-f]{16}\.json", e) for e in errors), errors


# P10-7: a bad split on the Harden page said "--split 'abc': …" (the CLI's flag) and replaced the page below the
# settings ----------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("split", ["abc", "nan:1:1", "8:1"])
def test_p10_7_a_bad_split_on_the_harden_page_names_its_field(run_store, monkeypatch, split):

    from alict_app import harden_view, runs

    monkeypatch.setattr(runs, "runs_root", lambda: run_store)
    monkeypatch.setattr(harden_view, "retrainable", lambda name: True)  # the saved run's model (vader), here
    at = _page("pages/harden.py", task="sentiment")
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="harden_split").set_value(split).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any(e.startswith("Train:validation:test split of seed groups") and "8:1:1" in e for e in errors), errors
    assert not any("--split" in e or "Problem while showing" in e for e in errors), errors


# P10-8: `literal` did not stop GitHub-flavoured Markdown's autolinks: in the browser a bare `https://…`, `www.…`
# or `a@b.c` of a case text, capability or template became a live link, escaped or not ---------------------------

# remark-gfm's autolink transform (Streamlit's StreamlitMarkdown bundle), run on the text after the escapes are read
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
GFM_EMAIL = re.compile(r"(?:^|(?<=[\s!-/:-@\[-`{-~]))([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _autolinked(markdown: str) -> list[str]:
    """The bare URLs and e-mail addresses the browser would make links of in ``markdown`` (outside code spans)."""
    text = ESCAPE.sub(r"\1", re.sub(r"`[^`]*`", " ", markdown))
    return [m.group(0) for m in GFM_URL.finditer(text)] + [m.group(0) for m in GFM_EMAIL.finditer(text)]


BARE = ["see https://evil.example/login now", "HTTP://EVIL.EXAMPLE", "visit www.evil.example/x",
        "mail admin@evil.example", "[Sign in](https://www.evil.example/x)", "a:https://evil.example",
        "(admin@evil.example)", "wwww.evil.example"]


@pytest.mark.parametrize("text", BARE)
def test_p10_8_literal_leaves_no_bare_url_or_address_to_autolink(text):
    from alict_app.formatting import literal

    assert _autolinked(text), text  # the check sees the link in the raw text
    shown = literal(text)
    assert not _autolinked(shown), shown
    assert ESCAPE.sub(r"\1", shown).replace("\u2060", "") == text  # the reader sees the text as it was (U+2060:
    # a word joiner, invisible)


@pytest.fixture
def url_run(tmp_path, tmp_runs):
    """A finished run (vader) whose failing cases hold bare URLs and addresses in text, capability and rule."""
    import dataclasses

    from alict_core.runner import build_cases, run_streaming
    from alict_core.runner.stream import group_by_seed

    seeds = [{"id": f"ev-{i}", "lc_id": "sentiment-lc01", "text": f"{BARE[i]} a bad film", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}, "capability": f"Cap www.evil.example/{i}",
              "meta": {"rule": "mail admin@evil.example", "slots": {"a": "https://evil.example/s"}}}
             for i in range(4)]
    cases = [dataclasses.replace(case, task="sentiment") for case in build_cases(seeds)]
    folder = run_streaming(group_by_seed(cases), ["vader"], run_dir=tmp_path / "run", shard_size=4,
                           cache_root=tmp_path / "pred")
    run_id = json.loads((folder / "meta.json").read_text())["run_id"]
    shutil.copytree(folder, tmp_runs / run_id)
    return run_id


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("page,query", [
    ("pages/failures.py", {"outcome": "all", "case": "ev-0"}),  # the case detail: capability, template
    ("pages/report.py", {}),  # the demo view's most striking failures
])
def test_p10_8_pages_draw_no_bare_url_of_a_run_as_a_link(url_run, page, query):
    at = _page(page, task="sentiment", run=url_run, **query)
    assert not at.exception, [e.value for e in at.exception]
    texts = _drawn(at)
    assert any("evil\\.example" in t for t in texts), texts  # the values are shown
    linked = [t for t in texts if _autolinked(t)]
    assert not linked, linked
