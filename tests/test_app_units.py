"""Unit tests of the app's plain helpers (no streamlit session needed)."""

from __future__ import annotations

import nltk
import pandas as pd
import pytest

from alict_app import charts, reporting, specs_io
from alict_app.runs import RunRequest
from alict_core.common.errors import SpecError


@pytest.mark.parametrize("name", ["sentiment-lc01", "my_spec", "A1", "x.yaml"])
def test_safe_spec_name_accepts_plain_names(name):
    assert specs_io.safe_spec_name(name) == name.removesuffix(".yaml")


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", "", " ", ".hidden", "a b", "x" * 81, "c:\\x", "-lead"])
def test_safe_spec_name_rejects_traversal_and_odd_names(name):
    with pytest.raises(SpecError, match="unsafe spec file name"):
        specs_io.safe_spec_name(name)


def test_save_spec_text_refuses_to_overwrite_without_confirmation(tmp_path):
    path = specs_io.save_spec_text(tmp_path, "lc-x", "id: lc-x\n")
    assert path == tmp_path.resolve() / "lc-x.yaml"
    with pytest.raises(SpecError, match="already exists"):
        specs_io.save_spec_text(tmp_path, "lc-x", "id: changed\n")
    assert path.read_text() == "id: lc-x\n"
    specs_io.save_spec_text(tmp_path, "lc-x", "id: changed", overwrite=True)
    assert path.read_text() == "id: changed\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lc-x.yaml"]  # no temp files left


def test_unified_diff_shows_changed_lines_only():
    diff = specs_io.unified_diff("a: 1\nb: 2\n", "a: 1\nb: 3\n", "x.yaml")
    assert "-b: 2" in diff and "+b: 3" in diff and "-a: 1" not in diff
    assert specs_io.unified_diff("same\n", "same\n") == ""


def test_error_line_reads_attribute_then_message():
    exc = SpecError("bad")
    exc.line = 7
    assert specs_io.error_line(exc) == 7
    assert specs_io.error_line(SpecError("spec.yaml, line 12, field 'x': bad")) == 12
    assert specs_io.error_line(SpecError("no location")) is None


def test_annotated_yaml_marks_the_error_line():
    text = "\n".join(f"line{i}: {i}" for i in range(1, 21))
    html = specs_io.annotated_yaml_html(text, 10, "oops <here>")
    assert "  10 ▶ line10: 10" in html and "oops &lt;here&gt;" in html
    assert "line3:" not in html and "line15:" not in html  # only the context window


def test_tree_layout_centres_parents_over_children():
    tree = nltk.Tree.fromstring("(S (NP (DT the) (NN film)) (VP (VBZ is) (JJ good)))")
    nodes, edges = charts.tree_layout(tree)
    leaves = [n for n in nodes if n["leaf"]]
    assert [n["label"] for n in leaves] == ["the", "film", "is", "good"]
    assert [n["x"] for n in leaves] == [0, 1, 2, 3]
    assert nodes[0]["label"] == "S" and nodes[0]["x"] == pytest.approx(1.5)
    assert len(edges) == len(nodes) - 1
    fig = charts.parse_tree_figure(tree)
    assert list(fig.data[1].text) == [n["label"] for n in nodes]


def test_fail_rate_bars_have_intervals_per_kind():
    frame = pd.DataFrame({"lc_id": ["a"] * 4 + ["b"] * 2, "model": "m",
                          "kind": ["seed", "seed", "expansion", "expansion", "seed", "seed"],
                          "failed": [True, False, True, True, False, False]})
    fig = charts.fail_rate_bars(frame)
    by_kind = {trace.name: list(trace.y) for trace in fig.data}
    assert by_kind["seed"] == [0.5, 0.0] and by_kind["expansion"] == [1.0]
    assert all(trace.error_y.array is not None for trace in fig.data)
    # twelve expansions of two seeds, each seed's expansions all alike: clustered, wider than Wilson on 12 cases
    grown = pd.DataFrame({"lc_id": "a", "model": "m", "kind": "expansion", "seed_id": ["s1"] * 6 + ["s2"] * 6,
                          "failed": [True] * 6 + [False] * 6})
    bar = charts.fail_rate_bars(grown).data[0]
    wilson_half = 0.5 - charts.wilson_interval(6, 12)[0]
    assert bar.y[0] == 0.5 and bar.error_y.arrayminus[0] > 1.5 * wilson_half


def test_contributions_html_escapes_and_colours():
    html = charts.contributions_html(["<b>", "good"], [-1.0, 0.5], kept=[False, True])
    assert "&lt;b&gt;" in html and "rgba(31,119,180,1.00)" in html and "rgba(214,39,40,0.50)" in html
    assert html.count("border-bottom") == 1


def test_run_request_key_depends_on_content():
    base = RunRequest(task="sentiment", lc_ids=["a"], models=[{"name": "vader", "kwargs": {}, "label": "vader"}])
    same = RunRequest(task="sentiment", lc_ids=["a"], models=[{"name": "vader", "kwargs": {}, "label": "vader"}])
    assert base.key() == same.key()
    assert base.key() != RunRequest(task="sentiment", lc_ids=["a", "b"], models=base.models).key()
    assert base.key() != RunRequest(task="sentiment", lc_ids=["a"], models=base.models, max_seeds=31).key()


def test_side_by_side_joins_capabilities():
    summary = pd.DataFrame(
        {"capability": ["Negation", "Negation", "Temporal"], "n_cases": [10, 20, 5], "n_fail": [1, 9, 0]}
    )
    baseline = pd.DataFrame({"capability": ["Negation", "Vocabulary", "Vocabulary"]})
    table = reporting.side_by_side(summary, baseline).set_index("capability")
    assert table.loc["Negation", "alict_tests"] == 30 and table.loc["Negation", "baseline_tests"] == 1
    assert table.loc["Negation", "alict_fail_rate"] == pytest.approx(10 / 30)
    assert table.loc["Vocabulary", "baseline_tests"] == 2
    assert pd.isna(table.loc["Temporal", "baseline_tests"]) and pd.isna(table.loc["Vocabulary", "alict_tests"])


def test_cancelled_run_saves_nothing(tmp_path, monkeypatch):
    import fakes

    from alict_app import runs, spec_store

    uninstall = fakes.install()
    try:
        monkeypatch.setattr(runs, "runs_root", lambda: tmp_path)
        spec = next(s for s in spec_store.task_specs("sentiment") if s.id == "sentiment-lc04")
        request = RunRequest(task="sentiment", lc_ids=[spec.id],
                             models=[{"name": "fake-sentiment", "kwargs": {}, "label": "fake"}], max_seeds=5)
        messages = []
        with pytest.raises(runs.RunCancelled):
            runs.execute(request, {spec.id: spec}, lambda m, f: messages.append((m, f)), should_stop=lambda: True)
        assert not runs.is_done(request.key()) and not list(tmp_path.iterdir())
        key = runs.execute(request, {spec.id: spec}, lambda m, f: messages.append((m, f)))
        assert runs.is_done(key) and runs.is_done(request.key()) and runs.resolve(request.key()) == key
        assert (tmp_path / key / "meta.json").exists()  # the run store of the CLI: one folder per run id
        assert runs.list_runs("sentiment")[0]["key"] == key
        fractions = [f for _, f in messages]
        assert all(0 <= f <= 1 for f in fractions)
        assert any(m.startswith(f"LC 1 of 1 ({spec.title})") for m, _ in messages)
        assert any(m.startswith("running the models: ") for m, _ in messages)  # overall progress, then the models
    finally:
        uninstall()


def test_runs_saved_by_the_cli_are_listed_by_the_app(tmp_path, monkeypatch):
    import fakes

    from alict_app import runs
    from alict_core.runner import build_cases, run_suite
    from alict_core.seeds import Seed

    uninstall = fakes.install()
    try:
        monkeypatch.setattr(runs, "runs_root", lambda: tmp_path)
        seeds = [Seed.from_dict({"id": f"sentiment-lc04-{i}", "lc_id": "sentiment-lc04", "task": "sentiment",
                                 "text": text, "test_type": "MFT",
                                 "expected": {"kind": "label", "labels": ["negative"]}, "source_ids": [],
                                 "rule": "r", "rule_kind": "select", "slots": {}})
                 for i, text in enumerate(["a bad film", "a great film"])]
        result = run_suite(build_cases(seeds, []), ["fake-sentiment"])
        folder = result.save(tmp_path / result.run_id)  # what `alict run` writes (no request.json)
        assert runs.is_done(result.run_id) and runs.resolve(result.run_id) == result.run_id
        listed = runs.list_runs("sentiment")
        assert [r["key"] for r in listed] == [folder.name] and runs.list_runs("hate_speech") == []
        assert listed[0]["request"]["lc_ids"] == ["sentiment-lc04"]
        assert [m["name"] for m in listed[0]["request"]["models"]] == ["fake-sentiment"]
        assert runs.run_frames(result.run_id)["cases"]["failed"].tolist() == [False, True]
    finally:
        uninstall()


def test_background_build_reports_its_log_and_exit_code(tmp_path, monkeypatch):
    import time

    from alict_app import builds

    monkeypatch.setattr(builds, "log_path", lambda target: tmp_path / f"{target}.log")
    assert builds.start_build("no-such-target")
    deadline = time.time() + 60
    while builds.is_running("no-such-target") and time.time() < deadline:
        time.sleep(0.2)
    assert builds.exit_code("no-such-target") == 2  # argparse rejects the target
    assert "invalid choice" in builds.log_tail("no-such-target")


def test_menus_offer_only_backends_that_can_load_offline(tmp_path, monkeypatch):
    """Offline, a hub masked LM is offered only when its snapshot is in the local HF cache; the others are named
    with the reason (the help text of the menu)."""
    from alict_app import backends

    snapshot = tmp_path / "models--roberta-base" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (snapshot / "model.safetensors").write_bytes(b"0")
    (tmp_path / "models--roberta-base" / "refs").mkdir()
    (tmp_path / "models--roberta-base" / "refs" / "main").write_text("abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("ALICT_OFFLINE", "1")
    names, left_out = backends.loadable_names("mlm", menu=True)
    assert "minilm-offline" in names and "roberta-base" in names and "bert-base-uncased" not in names
    assert "not in the server's Hugging Face cache" in left_out["bert-base-uncased"]
    assert "offline mode is on" in left_out["bert-base-uncased"] and "/" not in left_out["bert-base-uncased"]
    assert "bert-base-uncased" in backends.left_out_help(left_out, "a masked LM")
    models, hub_models = backends.loadable_names("model", task="sentiment")
    assert "vader" in models and hub_models and all(backends.backend_tags("model", n)["kind"] == "hf"
                                                    for n in hub_models)


def test_apply_to_yaml_is_a_minimal_edit():
    """A one-character change in a form field changes one line of the spec YAML; quoting and comments stay."""
    from pathlib import Path

    import yaml

    text = (Path(__file__).resolve().parent.parent / "specs/sentiment/sentiment-lc09.yaml").read_text()
    edited = specs_io.replace_list(text, ("rules", 0, "concat", 0), ["Do I think that", "Do I agree that!"])
    diff = [line for line in specs_io.unified_diff(text, edited).splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert diff == ['-      - ["Do I think that", "Do I agree that"]',
                    '+      - ["Do I think that", "Do I agree that!"]']
    longer = specs_io.replace_list(text, ("search", 0, "predicates"), [{"label": ["positive"]}, {"pos": "JJ"}])
    assert yaml.safe_load(longer)["search"][0]["predicates"] == [{"label": ["positive"]}, {"pos": "JJ"}]
    assert yaml.safe_load(longer)["description"] == yaml.safe_load(text)["description"]
    changed = [line for line in specs_io.unified_diff(text, longer).splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    before = len(yaml.safe_load(text)["search"][0]["predicates"])
    assert len(changed) == before + 2  # the old predicate lines out, two in; nothing else of the file


def test_every_spec_problem_is_listed_and_the_excerpt_keeps_indentation():
    from alict_core.lcspec.loader import SpecValidationError, parse_spec_text

    text = "schema_version: 1\nid: sentiment-lcx\ntask: sentiment\nbogus: 1\nother: 2\n"
    with pytest.raises(SpecValidationError) as caught:
        parse_spec_text(text, "x.yaml")
    problems = [caught.value.detail.split(" (and")[0]] + [o["message"] for o in caught.value.others]
    assert len(problems) >= 3 and any("'other'" in p for p in problems) and any("'bogus'" in p for p in problems)
    assert f"(and {len(caught.value.others)} more problem" in str(caught.value)
    html = specs_io.annotated_yaml_html("a:\n    b: 1\n", 2, "bad")
    assert "&nbsp;" * 4 + "b: 1" in html


def test_no_page_relies_on_streamlit_magic():
    """.streamlit/config.toml turns magic off (Streamlit redoes its AST rewrite for every new session): no page may
    hold a bare expression that magic would have written to the page."""
    import ast
    import tomllib
    from pathlib import Path

    from streamlit.runtime.scriptrunner import magic

    root = Path(__file__).resolve().parent.parent
    assert tomllib.loads((root / ".streamlit" / "config.toml").read_text())["runner"]["magicEnabled"] is False
    scripts = [root / "app.py", *sorted((root / "pages").glob("*.py"))]
    assert len(scripts) > 5
    written = [f"{path.name}:{node.lineno}" for path in scripts
               for node in ast.walk(magic.add_magic(path.read_text(), str(path)))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "transparent_write"]
    assert written == []
    assert any(isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "transparent_write"
               for node in ast.walk(magic.add_magic("x = 1\nx\n", "probe.py")))  # the check can see magic
