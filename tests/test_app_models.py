"""The app side of models (#20): a usable first hour with an empty model cache, the "About models"
sidebar, missing-model messages naming the running build, and loaders that switch to a better artefact."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from alict_app import backends
from alict_core.common import config
from alict_core.common.errors import ArtefactMissingError
from alict_core.models import artefacts
from alict_core.models.defaults import resolved_defaults

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture
def models_dir(tmp_path, monkeypatch) -> Path:
    """An empty model cache (a fresh machine): nothing built yet; the rest of the cache stays (corpus annotations)."""
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setattr(config, "models_dir", lambda: folder)
    _forget_loaded()
    yield folder
    _forget_loaded()


def _forget_loaded() -> None:
    """Nothing loaded before the test is served from a cache: an earlier test of the process could load the
    parser under the key of "no artefact" while a build running beside the suite finished (a fresh clone's CI)."""
    from alict_core import mlm, parsing

    resolved_defaults(refresh=True)
    backends.refresh_status()
    backends._parser.clear()
    backends._suggester.clear()
    parsing.clear_loaded()
    mlm._LOADED.clear()


def fake_artefact(root: Path, target: str, profile: str, figures: dict, steps: int) -> Path:
    """A manifest-only artefact (no files besides the manifest, so it verifies)."""
    folder = root / profile / target
    folder.mkdir(parents=True)
    (folder / artefacts.MANIFEST).write_text(json.dumps({"target": target, "profile": profile, "files": {},
                                                         "steps": steps, "seed": 13, "figures": figures}))
    return folder


def running_build(root: Path, target: str, profile: str, step: int, total: int, eta: int) -> Path:
    """The progress file a running build keeps (this test process stands in for the builder)."""
    path = artefacts.progress_path(target, profile, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"target": target, "profile": profile, "pid": os.getpid(), "state": "running",
                                "step": step, "total": total, "eta_seconds": eta}))
    return path


def sidebar_text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption])


def test_fresh_machine_seeds_page_renders_and_the_sidebar_says_what_is_missing(models_dir):
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    text = sidebar_text(at)
    parser_line = next(line for line in text.splitlines() if line.startswith("**Parser**"))
    assert "`benepar-offline` — offline substitute (" in parser_line and parser_line.endswith("not built yet)")
    assert "parser: not built: `alict build missing --profile quick`" in text
    notice = [i.value for i in at.info if i.value.startswith("Offline models still to come")]  # the first page
    assert notice and "parser (not built yet), masked LM (not built yet), classifiers (not built yet)" in notice[0]
    assert "Meanwhile" in notice[0]
    at.switch_page("pages/seeds.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["seeds"]) > 0 and at.dataframe[0].value.shape[0] > 0  # seeds shown, no model built
    at.switch_page("pages/expansions.py").run()  # needs the parser: says what is missing and how to get it
    assert not at.exception, [e.value for e in at.exception]
    warnings = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # the text shown (messages drawn escaped)
    assert any("parser artefact is not built" in w and "no build is running: `make run` builds it" in w
               for w in warnings), warnings


def test_the_sidebar_shows_build_progress_and_the_figures_of_the_artefact_in_use(models_dir):
    fake_artefact(models_dir, "parser", "quick", {"test_f1": 0.7454, "dev_f1": 0.7532}, steps=120)
    running_build(models_dir, "mlm", "quick", step=30, total=150, eta=125)
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    text = sidebar_text(at)
    assert "parser — quick, 120 steps: test F1 0.745; dev F1 0.753" in text
    assert "masked LM: being built now" in text
    bars = at.sidebar.get("progress")
    assert len(bars) == 1 and bars[0].proto.value == 20  # 30 of 150 steps
    assert "step 30/150, ETA 2 min 05 s" in bars[0].proto.text
    assert "quick profile, 120 steps" in text  # the parser role's line names the artefact it loads
    notice = next(i.value for i in at.info if i.value.startswith("Offline models still to come"))
    assert notice.startswith("Offline models still to come: masked LM (being built now), classifiers (not built yet)")


def test_a_missing_model_says_how_it_is_being_built(models_dir):
    with pytest.raises(ArtefactMissingError, match="no build is running: `make run` builds it"):
        backends.parser("benepar-offline")
    running_build(models_dir, "parser", "quick", step=3, total=120, eta=300)
    with pytest.raises(ArtefactMissingError, match=r"being built now \(quick profile, step 3/120, about 5 min left\)"):
        backends.parser("benepar-offline")


@pytest.fixture
def stub_offline_loaders():
    """The offline parser and masked LM replaced by stubs that report which artefact folder they loaded."""
    from alict_core import mlm, parsing

    saved = [(registry, registry.entry(name)) for registry, name in
             ((parsing.PARSERS, parsing.DEFAULT_PARSER), (mlm.SUGGESTERS, mlm.DEFAULT_SUGGESTER))]
    parsing.PARSERS.add(parsing.DEFAULT_PARSER, lambda: SimpleNamespace(path=artefacts.require("parser").path))
    mlm.SUGGESTERS.add(mlm.DEFAULT_SUGGESTER, lambda: SimpleNamespace(path=artefacts.require("mlm").path))
    parsing.clear_loaded()
    yield
    for registry, entry in saved:
        registry.add(entry.name, entry.factory, entry.description, **entry.tags)
    parsing.clear_loaded()


def test_loaders_switch_to_the_better_artefact_when_it_lands(models_dir, stub_offline_loaders):
    from alict_core.mlm import get_suggester
    from alict_core.parsing import get_parser

    quick = fake_artefact(models_dir, "parser", "quick", {"test_f1": 0.74}, steps=120)
    first = backends.parser("benepar-offline")
    assert first.path == quick and backends.parser("benepar-offline") is first and get_parser() is first
    full = fake_artefact(models_dir, "parser", "full", {"test_f1": 0.86}, steps=1664)  # the full build lands
    better = backends.parser("benepar-offline")
    assert better.path == full and better is not first and get_parser().path == full
    assert backends.LOADED["parser:benepar-offline"]["profile"] == "full"

    legacy = models_dir / "mlm"
    legacy.mkdir()
    for marker in artefacts.LEGACY_MARKERS["mlm"]:
        (legacy / marker).write_text("{}")
    assert backends.suggester("minilm-offline").path == legacy
    quick_mlm = fake_artefact(models_dir, "mlm", "quick", {"top1": 0.19}, steps=150)
    assert backends.suggester("minilm-offline").path == quick_mlm == get_suggester().path


def test_the_papers_classifier_in_the_local_cache_is_the_default_model_under_test(models_dir, monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from tests.test_model_defaults import _snapshot, _tiny

    sst2 = "textattack/bert-base-uncased-SST-2"
    hub = tmp_path / "hub"
    folder = _snapshot(hub, sst2)
    _tiny("cls", folder, {0: "LABEL_0", 1: "LABEL_1"})
    for name in ("ALICT_DEFAULT_SENTIMENT_MODEL", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    resolved_defaults(refresh=True)
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.sidebar.multiselect(key="models")
    assert picker.value[0] == sst2
    assert f"**Sentiment classifier**: `{sst2}` — the paper's model (local Hugging Face cache)" in sidebar_text(at)
    model = backends.model(sst2)  # loaded from the cache folder, no hub round trip
    assert model.name == sst2 and model.predict_proba(["a good movie"]).shape == (1, 3)


def test_when_a_build_lands_the_sidebar_shows_the_new_artefact(models_dir):
    from alict_app import sidebar

    progress = running_build(models_dir, "parser", "quick", step=60, total=120, eta=30)
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert "parser: being built now" in sidebar_text(at) and len(at.sidebar.get("progress")) == 1
    fake_artefact(models_dir, "parser", "quick", {"test_f1": 0.7454, "dev_f1": 0.7532}, steps=120)
    progress.unlink()  # the build finished
    sidebar._overview.clear()  # (the overview is otherwise cached for OVERVIEW_TTL_S seconds)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "parser — quick, 120 steps: test F1 0.745; dev F1 0.753" in sidebar_text(at)
    assert not at.sidebar.get("progress") and at.session_state["_alict_builds_seen"] == []


def test_menus_offer_the_papers_parser_and_masked_lm_first_when_available(models_dir, monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from alict_core import parsing
    from tests.test_model_defaults import _snapshot, _tiny

    hub = tmp_path / "hub"
    _tiny("mlm", _snapshot(hub, "bert-base-uncased"))
    en3 = tmp_path / "nltk" / "models" / "benepar_en3"
    en3.mkdir(parents=True)
    (en3 / "benepar_model.bin").write_bytes(b"")  # found, never loaded here
    for name in ("ALICT_DEFAULT_PARSER", "ALICT_DEFAULT_MLM", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    resolved_defaults(refresh=True)
    registered = "benepar_en3" in parsing.PARSERS
    try:
        assert backends.backend_names("parser")[0] == "benepar_en3"
        assert backends.backend_names("mlm", menu=True)[0] == "bert-base-uncased"
        at = AppTest.from_file(APP, default_timeout=180).run()
        at.switch_page("pages/run.py").run()
        at.checkbox(key="run_expand").check().run()
        assert not at.exception, [e.value for e in at.exception]
        assert (at.selectbox(key="parser_name").value, at.selectbox(key="mlm_name").value) == \
            ("benepar_en3", "bert-base-uncased")
        suggester = backends.suggester("bert-base-uncased")  # from the cache folder it was resolved in
        (slots,) = suggester.suggest(["the movie was [MASK] ."], top_k=2)
        assert suggester.name == "bert-base-uncased" and len(slots[0]) == 2
    finally:
        if not registered:
            parsing.PARSERS.remove("benepar_en3")


def test_role_lines_name_the_model_its_origin_and_artefact():
    from alict_app.sidebar import role_line

    substitute = {"name": "benepar-offline", "kind": "offline", "paper_model": False, "source": "offline substitute",
                  "built": True, "profile": "quick", "steps": 120}
    assert role_line("parser", substitute) == \
        "**Parser**: `benepar-offline` — offline substitute (quick profile, 120 steps)"
    heads = {**substitute, "name": "minilm-sst", "steps": None, "source": "pinned by ALICT_DEFAULT_SENTIMENT_MODEL"}
    assert role_line("classifier:sentiment", heads) == (
        "**Sentiment classifier**: `minilm-sst` — offline substitute "
        "(pinned by ALICT\\_DEFAULT\\_SENTIMENT\\_MODEL, quick profile)")
    paper = {"name": "bert-base-uncased", "kind": "hf", "paper_model": True, "source": "local Hugging Face cache"}
    assert role_line("mlm", paper) == \
        "**Masked LM**: `bert-base-uncased` — the paper's model (local Hugging Face cache)"
