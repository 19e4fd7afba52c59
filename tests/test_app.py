"""AppTest tests of every page, with tiny fake backends injected through the core registries.

Real specs and the real (small) corpora from ../shared/data; the parser, masked LM and models
are the instant fakes of ``tests.fakes``. Run artefacts go to a temporary folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from alict_app import runs

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 180


@pytest.fixture
def tmp_workspace(tmp_path, monkeypatch):
    """A private user workspace (the editor saves its specs there)."""
    workspace = tmp_path / "workspace"
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    return workspace


def start(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    unexpected = [e.value for e in at.error if "Unexpected error" in e.value]
    assert not unexpected, unexpected


def sentiment_specs():
    from alict_core.lcspec import load_task_specs

    return load_task_specs("sentiment")


def find(spec, **kw):
    from alict_core.data.corpus import load_corpus
    from alict_core.seeds import find_seeds

    return find_seeds(spec, load_corpus(spec.task), **kw)


# ------------------------------------------------------------------ Specs
def test_specs_page_lists_every_spec_with_the_sidebar():
    at = start()
    assert_clean(at)
    assert at.title[0].value == "LC specs"
    specs = sentiment_specs()
    assert list(at.dataframe[0].value["id"]) == [s.id for s in specs]
    assert at.sidebar.selectbox(key="task").value == "sentiment"
    assert at.sidebar.multiselect(key="models").value  # a default model is chosen
    assert at.query_params["task"] == ["sentiment"] or at.query_params["task"] == "sentiment"
    # live counts of the first spec equal the core's
    seedset = find(specs[0])
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["matches"]) == seedset.n_matches and int(metrics["seeds"]) == len(seedset.seeds)


def test_specs_page_fidelity_table_marks_extensions():
    at = start()
    at.button(key="fidelity::sentiment").click().run()
    assert_clean(at)
    table = at.dataframe[-1].value
    rows = {row.lc_id: row for row in table.itertuples()}
    assert rows["sentiment-lc04"].paper_seeds == 67 and rows["sentiment-lc04"].exact
    import pandas as pd

    assert rows["sentiment-x01"].extension and pd.isna(rows["sentiment-x01"].paper_seeds)  # no paper count
    assert list(at.dataframe[0].value["extension"]) == [s.is_extension for s in sentiment_specs()]


def test_spec_error_is_shown_inline_at_its_line():
    at = start({"lc": "sentiment-lc03"})
    editor = at.text_area(key="spec_yaml::sentiment::sentiment-lc03")
    lines = editor.value.splitlines()
    bad = next(i for i, line in enumerate(lines) if line.strip() == "- label: positive")
    lines[bad] = lines[bad].replace("positive", "joyful")
    editor.set_value("\n".join(lines)).run()
    assert_clean(at)
    errors = [e.value for e in at.error if "Spec error" in e.value]
    assert errors and f"line {bad + 1}" in errors[0] and "joyful" in errors[0]
    marked = [m.value for m in at.markdown if "▶" in m.value]
    assert marked and f"{bad + 1:>4} ▶" in marked[0]
    assert not at.metric  # no counts for an invalid spec
    assert "+      - label: joyful" in at.code[0].value  # the diff against the shipped spec


def test_live_counts_follow_edits_and_the_form_writes_back():
    at = start({"lc": "sentiment-lc03"})
    key = "spec_yaml::sentiment::sentiment-lc03"
    before = int(next(m.value for m in at.metric if m.label == "matches"))
    at.text_area(key=key).set_value(at.text_area(key=key).value.replace("lt: 20", "lt: 8")).run()
    after = int(next(m.value for m in at.metric if m.label == "matches"))
    assert after < before
    # the form's prefix list of the first rule goes back into the YAML
    form_key = next(t.key for t in at.text_area
                    if t.key.startswith(f"form::{key}::") and t.key.endswith("::rules/0/concat/0"))
    at.text_area(key=form_key).set_value("Back then I said that\nOnce I wrote that")
    next(b for b in at.button if b.label == "Apply to YAML").click().run()
    assert_clean(at)
    text = at.text_area(key=key).value
    assert "Back then I said that" in text and "Once I wrote that" in text and "lt: 8" in text
    assert any("Spec is valid" in s.value for s in at.success)


def test_save_refuses_unsafe_names_and_asks_before_overwriting(tmp_workspace):
    from alict_core.common.config import SPECS_DIR

    builtin = (SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text()
    at = start({"lc": "sentiment-lc04"})
    key = "spec_yaml::sentiment::sentiment-lc04"
    edited = at.text_area(key=key).value.replace("description:", "notes: edited in the app\ndescription:", 1)
    at.text_area(key=key).set_value(edited).run()
    at.text_input(key=f"save_name::{key}").set_value("../../etc/evil").run()
    at.button(key=f"save::{key}").click().run()
    assert any("unsafe spec file name" in e.value for e in at.error)
    assert not (tmp_workspace / "etc").exists() and not (tmp_workspace.parent / "etc").exists()
    at.text_input(key=f"save_name::{key}").set_value("sentiment-lc04").run()
    at.button(key=f"save::{key}").click().run()
    assert_clean(at)
    assert any("Saved" in s.value for s in at.success)
    target = tmp_workspace / "specs" / "sentiment" / "sentiment-lc04.yaml"
    assert target.read_text().rstrip("\n") == edited.rstrip("\n")
    assert (SPECS_DIR / "sentiment" / "sentiment-lc04.yaml").read_text() == builtin  # built-in untouched
    # the workspace copy now replaces the built-in; saving again asks before overwriting it
    at = start({"lc": "sentiment-lc04"})
    assert "edited in the app" in at.text_area(key=key).value
    assert any("your workspace copy" in c.value for c in at.caption)
    at.button(key=f"save::{key}").click().run()
    assert any("Overwrite if it exists" in w.value for w in at.warning)
    # discarding the copy brings the built-in back
    at.checkbox(key=f"discard_ok::{key}").check().run()
    at.button(key=f"discard::{key}").click().run()
    assert_clean(at)
    assert not target.exists() and at.text_area(key=key).value.rstrip("\n") == builtin.rstrip("\n")


def test_saving_an_edited_spec_leaves_the_checkout_clean(tmp_workspace):
    import subprocess

    root = Path(APP).parent
    status = ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"]
    if subprocess.run(["git", "-C", str(root), "rev-parse"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    before = subprocess.run(status, capture_output=True, text=True, check=True).stdout
    at = start({"lc": "sentiment-lc02"})
    key = "spec_yaml::sentiment::sentiment-lc02"
    at.text_area(key=key).set_value(at.text_area(key=key).value + "\n# my note\n").run()
    at.button(key=f"save::{key}").click().run()
    assert_clean(at)
    assert any("Saved" in s.value for s in at.success)
    assert (tmp_workspace / "specs" / "sentiment" / "sentiment-lc02.yaml").exists()
    assert subprocess.run(status, capture_output=True, text=True, check=True).stdout == before


# ------------------------------------------------------------------ Seeds
def test_seeds_page_counts_filters_and_resamples():
    at = start({"lc": "sentiment-lc02"})
    at.switch_page("pages/seeds.py").run()
    at.number_input(key="max_seeds").set_value(20).run()
    assert_clean(at)
    spec = next(s for s in sentiment_specs() if s.id == "sentiment-lc02")
    expected = find(spec, max_seeds=20, seed=0)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["seeds"]) == len(expected.seeds) == 20
    table = at.dataframe[0].value
    assert list(table["text"]) == [s.text for s in expected.seeds]
    assert {"source", "rule", "slots", "expected"} <= set(table.columns)
    assert all(src and src != "?" for src in table["source"])
    word = expected.seeds[0].text.split()[0]
    at.text_input(key="seed_search").set_value(word).run()
    shown = at.dataframe[0].value
    assert 0 < len(shown) <= 20 and all(word.lower() in t.lower() for t in shown["text"])
    at.text_input(key="seed_search").set_value("").run()
    at.number_input(key="sample_seed").set_value(7).run()
    resampled = at.dataframe[0].value
    assert list(resampled["text"]) == [s.text for s in find(spec, max_seeds=20, seed=7).seeds]


# ------------------------------------------------------------------ Expansions
def test_expansions_page_draws_the_tree_and_verdicts_with_fake_backends():
    at = start({"lc": "sentiment-lc01"})
    at.switch_page("pages/expansions.py").run()
    at.selectbox(key="parser_name").set_value("fake-parser")
    at.selectbox(key="mlm_name").set_value("fake-mlm")
    at.run()
    assert_clean(at)
    if at.status:  # loaded by this run (a test before may have loaded them): the box said so in words, now done
        assert at.status[0].label == "Loaded: the page below is complete.", at.status[0].label
        assert at.status[0].state == "complete"
    at.run()
    assert not at.status  # loaded now: no box on later runs
    headers = [s.value for s in at.subheader]
    assert "Parse tree" in headers
    assert len(at.get("plotly_chart")) >= 1
    masked = next(h for h in headers if h.startswith("Masked sentences"))
    assert int(re.search(r"\((\d+)\)", masked).group(1)) > 0
    suggestions = next(h for h in headers if h.startswith("Suggestions"))
    accepted, total = map(int, re.findall(r"\d+", suggestions)[:2])
    table = next(d.value for d in reversed(at.dataframe) if "accepted" in d.value.columns)
    assert len(table) == total and int(table["accepted"].sum()) == accepted
    rejections = at.dataframe[-1].value  # rejections per check, unknown words apart
    assert set(rejections.columns) == {"check", "rejected"} and int(rejections["rejected"].sum()) >= total - accepted
    assert {"pos", "polarity", "predicates", "protected"} <= set(table.columns)
    assert set(table["pos"]) <= {"✔", "✘", "—"}
    assert any("[MASK]" in t for t in at.dataframe[0].value["masked sentence"])


# ------------------------------------------------------------------ Run → Failures → Report
def run_with_fake_model(at: AppTest, lcs=("sentiment-lc01", "sentiment-lc04")) -> AppTest:
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(list(lcs))
    at.number_input(key="max_seeds").set_value(15)
    at.run()
    at.button(key="run_go").click().run()
    return at


def test_run_failures_report_flow(tmp_runs, tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", str(tmp_path))  # the baseline suite below is read from here
    at = run_with_fake_model(start())
    assert_clean(at)
    assert any("Run finished" in s.value for s in at.success)
    key = at.session_state["run"]
    assert (tmp_runs / key / "request.json").exists() and (tmp_runs / key / "meta.json").exists()
    assert at.query_params["run"] in (key, [key])
    summary = at.dataframe[0].value
    assert set(summary["lc_id"]) == {"sentiment-lc01", "sentiment-lc04"} and set(summary["model"]) == {"fake-sentiment"}
    assert not set(summary["capability"]) & set(summary["lc_id"]) and summary["LC"].str.len().min() > 10  # names
    assert any(c.value.startswith("Size: 2 LCs × up to") and "predictions" in c.value for c in at.caption)
    # a second click is served from the saved run
    at.button(key="run_go").click().run()
    assert any("loaded from cache" in s.value for s in at.success)

    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    at.toggle(key="explain_on").set_value(True).run()  # explanations are on demand
    charts = len(at.get("plotly_chart"))
    assert charts == 2  # heatmap, fidelity curve of the chosen case
    contributions = [m.value for m in at.markdown if 'class="alict-contrib"' in m.value]
    assert contributions and "<span title=" in contributions[0]
    at.toggle(key="contrib_as_bars").set_value(True).run()
    assert len(at.get("plotly_chart")) == charts + 1
    assert "Masking template" in [m.value.strip("*") for m in at.markdown]
    template = at.code[0].value
    assert "[MASK]" in template or template.strip()
    assert at.query_params.get("case") and at.query_params.get("model") in ("fake-sentiment", ["fake-sentiment"])

    at.switch_page("pages/report.py").run()
    assert_clean(at)
    assert "Most striking failures" in [s.value for s in at.subheader]
    assert any(m.value == "#### fake\\-sentiment" for m in at.markdown)  # the model name drawn as text
    # the downloads the Report page offers are generated from the saved run
    import json

    from alict_app import reporting

    result = runs.load_run(key)
    html = reporting.html_report(key, result)
    assert html.lstrip().lower().startswith("<!doctype html") and "sentiment-lc04" in html
    suite = json.loads(reporting.checklist_json(result, "sentiment"))
    assert suite and len(json.dumps(suite)) > 100
    # a baseline suite (here: this run's cases exported as JSONL) is compared per capability
    from alict_core.suites import export_cases_jsonl

    baseline = export_cases_jsonl(result.case_list[:7], tmp_path / "baseline.jsonl")
    at.text_input(key="baseline_path").set_value(str(baseline)).run()
    assert_clean(at)
    table = at.dataframe[-1].value.set_index("capability")
    assert int(table["baseline_tests"].sum()) == 7
    assert set(table.index) == {"Negation", "Vocabulary"}  # capability names on both sides, never LC ids
    assert set(table.index) == set(result.summary()["capability"])


def test_failure_browser_filters_and_deep_link_to_a_case(tmp_runs):
    at = run_with_fake_model(start())
    key = at.session_state["run"]
    at.switch_page("pages/failures.py").run()
    at.multiselect(key="w_lcs").set_value(["sentiment-lc04"]).run()
    table = at.dataframe[0].value
    assert len(table) > 0 and set(table["lc_id"]) == {"sentiment-lc04"}
    case = at.session_state["case"]
    assert case.split("::")[0] in set(table["case_id"])
    # a fresh session opened from the link shows the same run and case
    again = start({"task": "sentiment", "run": key, "case": case})
    again.switch_page("pages/failures.py").run()
    assert_clean(again)
    assert again.selectbox(key="run").value == key
    assert again.selectbox(key="w_case").value == case


def test_deep_link_restores_task_and_lc():
    at = start({"task": "sentiment", "lc": "sentiment-lc05"})
    assert at.sidebar.selectbox(key="task").value == "sentiment"
    assert at.selectbox(key="lc").value == "sentiment-lc05"
    at.switch_page("pages/seeds.py").run()
    assert at.selectbox(key="lc").value == "sentiment-lc05"


def test_a_failing_model_is_a_friendly_message(tmp_runs):
    from alict_core.models import MODELS

    class Broken:
        name, labels = "broken", ("negative", "neutral", "positive")

        def predict_proba(self, texts):
            raise RuntimeError("GPU on fire")

    MODELS.add("broken", lambda **kw: Broken(), "always fails", task="sentiment", offline=True)
    try:
        at = start()
        at.sidebar.multiselect(key="models").set_value(["broken"]).run()
        at.switch_page("pages/run.py").run()
        at.multiselect(key="run_lcs").set_value(["sentiment-lc04"]).run()
        at.button(key="run_go").click().run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert any("broken" in e and "GPU on fire" in e for e in errors), errors
        assert not list(tmp_runs.iterdir())
    finally:
        MODELS.remove("broken")


def test_a_missing_parser_says_how_to_build_it(monkeypatch):
    from alict_core.common.errors import ArtefactMissingError
    from alict_core.parsing import PARSERS

    def missing(**kw):
        raise ArtefactMissingError("the offline parser is not built; build it with `python -m alict_core build parser`")

    PARSERS.add("not-built", missing, "a parser whose model is missing")
    try:
        at = start({"lc": "sentiment-lc01"})
        at.switch_page("pages/expansions.py").run()
        at.selectbox(key="parser_name").set_value("not-built").run()
        assert_clean(at)
        assert any("python -m alict_core build parser" in re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)
    finally:
        PARSERS.remove("not-built")


def test_empty_pages_explain_what_to_do():
    at = start()
    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    assert any("Run" in i.value for i in at.info)
    at.switch_page("pages/report.py").run()
    assert any("Run" in i.value for i in at.info)


def test_corpus_and_models_load_once_per_process(monkeypatch):
    import alict_core.data.corpus as corpus_module
    from alict_app import artefacts, backends

    calls = []
    real = corpus_module.load_corpus

    def counting(task, *args, **kwargs):
        calls.append(task)
        return real(task, *args, **kwargs)

    monkeypatch.setattr(corpus_module, "load_corpus", counting)
    artefacts.corpus.clear()
    artefacts.corpus_texts.clear()
    for _ in range(2):  # two sessions, each visiting two pages that need the corpus
        at = start({"lc": "sentiment-lc04"})
        at.switch_page("pages/seeds.py").run()
        assert_clean(at)
    assert calls.count("sentiment") == 1  # (the app may warm the hate-speech corpus in the background: once too)
    assert calls.count("hate_speech") <= 1
    first = backends.model("fake-sentiment")
    assert backends.model("fake-sentiment") is first


def test_run_with_expansions_finds_pass_to_fail_pairs(tmp_runs):
    at = start()
    at.sidebar.multiselect(key="models").set_value(["fake-sentiment"]).run()
    at.switch_page("pages/run.py").run()
    at.multiselect(key="run_lcs").set_value(["sentiment-lc01"])
    at.number_input(key="max_seeds").set_value(10)
    at.checkbox(key="run_expand").check().run()
    at.selectbox(key="parser_name").set_value("fake-parser")
    at.selectbox(key="mlm_name").set_value("fake-mlm")
    at.run()
    at.button(key="run_go").click().run()
    assert_clean(at)
    summary = at.dataframe[0].value.set_index("lc_id")
    # accepted attested modifiers ("Lohman 's [own] film", "is [indeed] Lohman 's film"); the keyword model reads
    # "indeed" as praise (tests/fakes.py), so the emphasis expansion of a neutral seed that passes fails
    assert summary.loc["sentiment-lc01", "n_expansions"] > 0
    pairs = int(summary.loc["sentiment-lc01", "n_pass_to_fail"])
    assert pairs > 0
    at.switch_page("pages/failures.py").run()
    assert_clean(at)
    assert any(c.value.startswith(f"{pairs} pass-to-fail pairs") for c in at.caption)
    at.checkbox(key="w_p2f").check().run()
    assert len(at.dataframe[0].value) == pairs and at.dataframe[0].value["pass_to_fail"].all()
    sides = [m.value for m in at.markdown if m.value.startswith(("*seed*", "*expansion*"))]
    assert len(sides) == 2  # the chosen case shows its seed and its expansion
    assert "indeed" in sides[1] and "indeed" not in sides[0]
    outcomes = at.dataframe[1].value.set_index("model")["outcome"]
    assert outcomes["fake-sentiment"] == "❌ fails"


def test_hate_speech_task_renders_every_page():
    at = start({"task": "hate_speech"})
    assert_clean(at)
    assert at.sidebar.selectbox(key="task").value == "hate_speech"
    for page in ("seeds", "expansions", "run", "failures", "report"):
        at.switch_page(f"pages/{page}.py").run()
        assert_clean(at)


def test_user_added_model_from_stored_predictions(tmp_runs, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("ALICT_WORKSPACE_ROOTS", str(tmp_path))  # the trust model reads files only under such roots
    spec = next(s for s in sentiment_specs() if s.id == "sentiment-lc05")
    texts = [s.text for s in find(spec, max_seeds=15, seed=0).seeds]
    stored = tmp_path / "stored.jsonl"
    stored.write_text("".join(json.dumps({"text": t, "label": "positive"}) + "\n" for t in texts))
    at = start()
    at.sidebar.multiselect(key="models").set_value([]).run()
    at.switch_page("pages/run.py").run()
    at.selectbox(key="um_kind").set_value("static").run()
    at.text_input(key="um_path").set_value(str(stored))
    at.text_input(key="um_label").set_value("stored")
    next(b for b in at.button if b.label == "Add model").click().run()
    assert_clean(at)
    assert any("Added stored" in s.value for s in at.success)
    at.multiselect(key="run_lcs").set_value(["sentiment-lc05"])
    at.number_input(key="max_seeds").set_value(15)
    at.run()
    at.button(key="run_go").click().run()
    assert_clean(at)
    summary = at.dataframe[0].value
    # expected neutral, all positive
    assert list(summary["model"]) == ["stored"] and summary["fail_rate"].iloc[0] == 1.0
    # an unusable model is refused with a clear message, not added
    at.text_input(key="um_path").set_value(str(tmp_path / "missing.jsonl"))
    at.text_input(key="um_label").set_value("ghost")
    next(b for b in at.button if b.label == "Add model").click().run()
    assert any("not found" in e.value for e in at.error)
    assert [m["label"] for m in at.session_state["user_models"]] == ["stored"]


def test_the_corpus_warm_up_loads_each_annotated_corpus_once_for_every_session(monkeypatch):
    """The background warm-up (started by app.py after the first page) fills the app's corpus cache for both tasks:
    a later first task switch reads no corpus."""
    import alict_core.data.corpus as corpus_module
    from alict_app import artefacts

    calls = []
    real = corpus_module.load_corpus
    monkeypatch.setattr(corpus_module, "load_corpus", lambda task, *a, **k: calls.append(task) or real(task, *a, **k))
    artefacts.corpus.clear()
    assert corpus_module.is_annotated("sentiment") and corpus_module.is_annotated("hate_speech")
    artefacts._warm_corpora()
    assert sorted(calls) == ["hate_speech", "sentiment"]
    assert len(artefacts.corpus("hate_speech")) > 0 and len(artefacts.corpus("sentiment")) > 0
    assert sorted(calls) == ["hate_speech", "sentiment"]  # served from the cache: no second load
    with pytest.raises(corpus_module.AlictError, match="unknown task"):
        corpus_module.is_annotated("weather")


def test_missing_data_directory_is_a_friendly_message(tmp_path, monkeypatch):
    import alict_core.common.config as config
    import alict_core.data.corpus as corpus_module
    from alict_app import artefacts
    from alict_core.data.files import data_file

    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setattr(config, "data_dir_candidates", lambda: [("$ALICT_DATA_DIR", empty)])
    # the corpus loader reads its files through data_file, which now finds no data directory
    monkeypatch.setattr(corpus_module, "load_corpus", lambda task: data_file("sst/train.txt"))
    artefacts.corpus.clear()
    artefacts.corpus_texts.clear()
    try:
        at = start({"lc": "sentiment-lc04"})
        at.switch_page("pages/seeds.py").run()
        assert not at.exception
        errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # the text shown (values drawn escaped)
        assert any("data directory not found" in e and str(empty) in e and "ALICT_DATA_DIR" in e
                   for e in errors), errors
        assert not any("Unexpected error" in e for e in errors)
    finally:
        artefacts.corpus.clear()
        artefacts.corpus_texts.clear()
