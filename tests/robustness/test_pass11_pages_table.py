"""Hostile pass 11 table, pages (notes: attack_pass11_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

pytestmark = [pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
MARKUP = '<a href="https://evil.example/plotly">Sign in again</a> <b>BOLD</b> <span style="font-size:80px">BIG</span>'
PLOTLY_TAG = re.compile(r"<(?!br>|/?extra>)/?[a-zA-Z]")  # <br> and <extra> are the program's own


# P11-1: plotly draws a pseudo-HTML subset (<a href>, <b>, <span style>) in tick labels, hover text and titles; a
# spec title (Specs page) or a model name (Run page) became a live link in the Failures / Compare charts -------------

def _strings(value) -> list[str]:
    """Every string of a plotly figure's JSON (traces and layout)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    if hasattr(value, "tolist"):
        return _strings(value.tolist())
    return []


def _figures():
    from nltk import Tree

    from alict_app import charts, harden_view, lego_view

    rates = pd.DataFrame({"lc_id": ["sentiment-lc01"], "lc_label": [MARKUP], "model": [MARKUP], "fail_rate": [0.5],
                          "n_fail": [1], "n_cases": [2]})
    compared = pd.DataFrame({"capability": [MARKUP], "lc_id": [MARKUP], "lc_title": [MARKUP], "significance": ["*"],
                             "difference": [0.1], "rate_a": [0.2], "rate_b": [0.3], "diff_low": [0.0],
                             "diff_high": [0.2], "p_value": [0.01], "p_bh": [0.02]})
    groups = pd.DataFrame({"word": [MARKUP], "fail_rate": [0.5], "ci_low": [0.1], "ci_high": [0.9], "n_fail": [1],
                           "n_cases": [2]})
    cases = pd.DataFrame({"lc_id": [MARKUP] * 2, "model": [MARKUP] * 2, "kind": ["seed", "expansion"],
                          "failed": [True, False]})
    node = SimpleNamespace(parent="root", inserted_text=MARKUP[:20])
    retrained = pd.DataFrame({"lc_id": [MARKUP], "trained": [True], "fail_before": [0.5], "fail_after": [0.2],
                              "ci_low_before": [0.1], "ci_high_before": [0.9], "ci_low_after": [0.0],
                              "ci_high_after": [0.5]})
    return {
        "lc_heatmap": lambda: charts.lc_heatmap(rates, title=MARKUP),
        "comparison_figure": lambda: charts.comparison_figure(compared, MARKUP, MARKUP),
        "group_rate_bars": lambda: charts.group_rate_bars(groups, "word"),
        "parse_tree_figure": lambda: charts.parse_tree_figure(Tree("S", [Tree("NP", [MARKUP])])),
        "contributions_bar": lambda: charts.contributions_bar([MARKUP], [0.5]),
        "heatmap_figure": lambda: charts.heatmap_figure(rates, "lc_label", "model", "fail_rate", MARKUP),
        "fail_rate_bars": lambda: charts.fail_rate_bars(cases.assign(model=["a", MARKUP])),
        "harden_chart": lambda: harden_view._comparison_chart(retrained),
        "lego_label": lambda: {"text": [lego_view._short(node)]},  # the tree's node label (the figure needs a tree)
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_p11_1_figures_draw_data_as_text_not_plotly_markup(name):
    built = _figures()[name]()
    strings = _strings(built if isinstance(built, dict) else built.to_plotly_json())
    tagged = [s for s in strings if PLOTLY_TAG.search(s)]
    assert not tagged, tagged[:3]
    assert any("&lt;" in s for s in strings), strings  # the value is there, shown as it is


# The class: an AST scan of every function of alict_app/ and pages/ that builds a plotly figure. A value put into
# an f-string there is escaped (``plot_text``, ``html.escape``, ``highlighted``), a number formatted as one, or a
# name of the program's own; a list of labels handed to ``text``/``hovertext``/``title``/``x``/``y`` is not raw data.
ESCAPERS = {"plot_text", "escape", "highlighted", "int", "len"}
OWN = {"i", "n.level", "shown_a", "shown_b", "p_thresh"}
TEXT_KEYWORDS = {"text", "hovertext", "title", "names", "annotation_text", "x", "y"}


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _inside_escape(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if _called(node) in ESCAPERS - {"int", "len"}:
            return True
    return False


def plotly_findings(source: str, where: str) -> list[str]:
    """Unescaped values put into plotly text by the functions of ``source`` that import plotly."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef) or not any(
                isinstance(n, (ast.Import, ast.ImportFrom)) and "plotly" in ast.unparse(n) for n in ast.walk(function)):
            continue
        parents = {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(function):
            if isinstance(node, ast.JoinedStr) and not _inside_escape(node, parents):
                for part in node.values:
                    if not isinstance(part, ast.FormattedValue):
                        continue
                    value = part.value
                    numeric = part.format_spec is not None and any(c in ast.unparse(part.format_spec) for c in "dfge%")
                    constant = isinstance(value, ast.IfExp) and all(
                        isinstance(v, ast.Constant) for v in (value.body, value.orelse))
                    if not (numeric or constant or _called(value) in ESCAPERS or ast.unparse(value) in OWN):
                        found.append(f"{where}:{node.lineno}: {ast.unparse(value)}")
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    value = keyword.value
                    if keyword.arg in TEXT_KEYWORDS and isinstance(value, ast.ListComp):
                        element = value.elt
                        raw = (_called(element) in {"str", "_short"} if keyword.arg in ("x", "y")
                               else not (isinstance(element, ast.JoinedStr) or _called(element) in ESCAPERS
                                         or _called(element) == "_short" and "lego" in where))
                        if raw:
                            found.append(f"{where}:{node.lineno}: {keyword.arg}={ast.unparse(value)[:60]}")
    return found


def test_p11_1_no_plotly_figure_is_built_from_an_unescaped_value():
    found = [f for path in sorted([*(ROOT / "alict_app").glob("*.py"), *(ROOT / "pages").glob("*.py")])
             for f in plotly_findings(path.read_text(encoding="utf-8"), path.name)]
    assert not found, found


def test_the_plotly_scan_finds_a_raw_label_hover_or_title():
    planted = '''
def chart(rows, name):
    import plotly.graph_objects as go
    fig = go.Figure(go.Bar(y=[str(v) for v in rows], hovertext=[v["label"] for v in rows]))
    fig.update_layout(title=f"Fail rate of {name}")
    return fig
'''
    found = plotly_findings(planted, "planted.py")
    assert len(found) == 3 and any("name" in f for f in found), found
    assert not plotly_findings(planted.replace("str(v)", "plot_text(v)").replace('v["label"]', 'plot_text(v)')
                               .replace("{name}", "{plot_text(name)}"), "planted.py")


# P11-4: a tampered request.json (or a CLI run's meta.json) of ONE run took every run-picker page down ------------

def _tamper(folder: Path, request: object = None, meta_models: object = None) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    meta["run_id"] = folder.name  # not a copy: the run's own id
    if meta_models is not None:
        meta["models"] = meta_models
    (folder / "meta.json").write_text(json.dumps(meta))
    if request is not None:
        (folder / "request.json").write_text(json.dumps(request))


GOOD_REQUEST = {"status": "done", "finished": 1.7e9,
                "request": {"task": "sentiment", "lc_ids": ["sentiment-lc01"], "models": [{"name": "vader"}]}}


@pytest.mark.parametrize("request_json,meta_models", [
    ([], None), ({**GOOD_REQUEST, "finished": "x"}, None), ({**GOOD_REQUEST, "finished": 1e30}, None),
    ({**GOOD_REQUEST, "request": {**GOOD_REQUEST["request"], "lc_ids": 5}}, None),
    ({**GOOD_REQUEST, "request": {**GOOD_REQUEST["request"], "models": [5]}}, None),
    (None, [5]), (None, 7),
])
def test_p11_4_a_tampered_run_is_left_out_of_the_pickers_and_named(tmp_runs, saved_run, request_json, meta_models):
    from alict_app import runs

    good_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, tmp_runs / good_id)
    shutil.copytree(saved_run, tmp_runs / "zzbad")
    _tamper(tmp_runs / "zzbad", request_json, meta_models)
    runs._run_info_at.clear()
    listed = runs.list_runs()
    assert [info["key"] for info in listed] == [good_id]
    assert [runs.describe_run(info) for info in listed]
    assert runs.unreadable_runs() == ["zzbad"]
    with pytest.raises(ValueError, match="zzbad"):
        runs.run_info("zzbad")


# P11-2 / P11-3: progress.json pid 2**63 (OverflowError) and updated_at of mixed types (TypeError) on the Run page --

def _unfinished(root: Path, name: str, progress: dict) -> None:
    (root / name).mkdir()
    (root / name / "progress.json").write_text(json.dumps(progress))


def test_p11_2_a_huge_pid_names_no_live_process(tmp_path):
    from alict_core.runner.store import unfinished_runs

    _unfinished(tmp_path, "zzpid", {"status": "running", "pid": 2**63, "host": os.uname().nodename})
    import socket

    _unfinished(tmp_path, "zzpid2", {"status": "running", "pid": 2**31, "host": socket.gethostname()})
    found = unfinished_runs(tmp_path)
    assert sorted(p["alive"] for p in found) == [False, False]


def test_p11_3_unfinished_runs_sort_with_text_or_list_times(tmp_path):
    from alict_core.runner.store import unfinished_runs

    for i, moment in enumerate(["yesterday", 7, [1], 9.5, None]):
        _unfinished(tmp_path, f"zz{i}", {"status": "stopped", "updated_at": moment})
    assert [Path(p["run_dir"]).name for p in unfinished_runs(tmp_path)][:2] == ["zz3", "zz1"]


# P11-5: a hand-edited build-progress file or manifest figures in the models cache took the sidebar down -----------

@pytest.mark.parametrize("row", [[], {"state": "running", "pid": "x"}, {"state": "running", "pid": 2**63},
                                 {"state": "running", "pid": "SELF", "step": "x", "total": 10},
                                 {"state": "running", "pid": "SELF", "step": 5, "total": -3}])
def test_p11_5_a_tampered_build_progress_is_said_unreadable(tmp_path, monkeypatch, row):
    from alict_app import sidebar
    from alict_core.models.artefacts import build_progress, progress_path

    if isinstance(row, dict) and row.get("pid") == "SELF":
        row = {**row, "pid": os.getpid()}
    path = progress_path("parser", "quick", tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row))
    building = build_progress(tmp_path)
    captions: list[str] = []
    monkeypatch.setattr(sidebar.st, "caption", lambda text, **_: captions.append(text))
    monkeypatch.setattr(sidebar.st, "progress", lambda value, **_: pytest.fail(f"progress bar of {value}"))
    sidebar.render_build_progress(building)
    assert [c.endswith(": progress unreadable") for c in captions] == ([True] if building else []), captions


@pytest.mark.parametrize("figures", [{"test_f1": "high"}, [1], {"test_f1": [0.9], "dev_f1": 0.8}, "x"])
def test_p11_5_hand_edited_manifest_figures_are_skipped(tmp_path, figures):
    from alict_app.sidebar import figures_text
    from alict_core.models.artefacts import Artefact

    artefact = Artefact("parser", "quick", tmp_path, {"figures": figures, "steps": 5})
    text = figures_text("parser", {"figures": artefact.figures, "profile": "quick", "steps": artefact.steps})
    assert text.startswith("quick, 5 steps: ") and "high" not in text


# P11-9: literal() put an invisible U+2060 after every '@': a version name copied from the page failed in the CLI --

@pytest.mark.parametrize("name", ["minilm-sst@868ff8ab", "minilm-hatexplain@0123abcd", "me@localhost"])
def test_p11_9_a_version_name_is_drawn_without_a_word_joiner(name):
    from alict_app.formatting import literal

    assert "\u2060" not in literal(name)


@pytest.mark.parametrize("text", ["mail admin@evil.example", "x@@evil.example", "a@b-c.example/x", "a@evil．example"])
def test_p11_9_an_e_mail_like_at_sign_is_still_joined(text):
    from alict_app.formatting import literal

    assert "@\u2060" in literal(text)


# P11-11: the help of the model menus named the server's Hugging Face cache path --------------------------------

def test_p11_11_the_unavailable_hub_model_help_names_no_server_path(tmp_path, monkeypatch):
    from alict_app import backends

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache-here"))
    monkeypatch.setenv("ALICT_OFFLINE", "1")
    _, left_out = backends.loadable_names("mlm", menu=True)
    assert left_out and not [why for why in left_out.values() if "hub-cache-here" in why or "/" in why], left_out


# P11-6: an upload removed to make room later read "predictions file '<hash>.csv' not found" ----------------------

def test_p11_6_a_removed_upload_says_why_and_what_to_do(tmp_path, monkeypatch):
    from alict_core.common.errors import ModelError
    from alict_core.common.trust import uploads_dir
    from alict_core.models.static import StaticPredictionsModel

    monkeypatch.setenv("ALICT_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelError) as raised:
        StaticPredictionsModel(uploads_dir() / "0c22ab6182167fdc.csv", "sentiment", name="mypreds")
    message = str(raised.value)
    assert "removed to make room" in message and "upload the file again" in message and "0c22ab" not in message


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("page", ["pages/failures.py", "pages/report.py"])
def test_p11_4_a_page_with_a_run_picker_stays_up_beside_a_tampered_run(tmp_runs, saved_run, page):
    from streamlit.testing.v1 import AppTest

    good_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, tmp_runs / good_id)
    shutil.copytree(saved_run, tmp_runs / "zzbad")
    _tamper(tmp_runs / "zzbad", {**GOOD_REQUEST, "finished": "x"})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.run()
    at = at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not errors, errors
    assert any("Not listed\\: 1 run\\-store folder" in c.value and "zzbad" in c.value for c in at.caption), [
        c.value for c in at.caption]
