"""Hostile pass 12 table, pages (notes: attack_pass12_pages.md): one row per finding, each failing on the code
before its fix."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]


# P12-D: a stop (the app's Cancel, a task or page switch: Streamlit ends the script at its next progress call) on a
# resuming run's first progress call left progress.json "running" with the server's live pid: a phantom run ------

class ScriptStopped(BaseException):
    """What Streamlit raises in a page's script when the user cancels, switches task or page (not an Exception)."""


def test_p12_d_a_stop_on_the_resume_call_leaves_no_running_run(tmp_path):
    from alict_core.runner import run_streaming
    from alict_core.runner.store import unfinished_runs
    from alict_core.runner.stream import group_by_seed
    from tests.robustness.support import small_cases

    cases = [dataclasses.replace(case, task="sentiment") for case in small_cases(8)]

    def stop_on(prefix: str):
        def progress(done: int, total: int, message: str = "") -> None:
            if message.startswith(prefix):
                raise ScriptStopped(message)
        return progress

    def run(progress) -> None:
        with pytest.raises(ScriptStopped):
            run_streaming(group_by_seed(cases), ["vader"], root=tmp_path / "runs", shard_size=4,
                          cache_root=tmp_path / "pred", progress=progress)

    run(stop_on("shard 1/2 done"))  # one shard finished: a run to resume
    run(stop_on("resuming after"))  # stopped at once when resumed
    found = unfinished_runs(tmp_path / "runs")
    assert [(p["status"], p["shards_done"]) for p in found] == [("cancelled", 1)], found
    assert "run again to resume" in found[0]["message"], found  # a stop, not a failure with the message "None"


# P12-A: a run holding a model that cannot be explained (stored predictions know only the run's texts, not LEMNA's
# perturbed copies; an endpoint or version gone) had no Story at all: one error instead of every model's cards ------

def test_p12_a_a_model_that_cannot_be_explained_leaves_the_other_cards(saved_run):
    from alict_core.common.errors import ModelError
    from alict_core.report import story as core_story
    from alict_core.runner import RunResult

    def load(name: str):
        raise ModelError(f"model {name!r}: no stored prediction for 118 texts")

    story = core_story.build_story(RunResult.load(saved_run), load)
    assert story["candidates"], "vader fails some of the cases"
    assert story["contributions"] == {}
    reasons = set(story[core_story.UNEXPLAINED].values())
    assert reasons == {"model 'vader': no stored prediction for 118 texts"}, reasons
    core_story.save_story(saved_run, story)  # the reason is this server's, never saved with the run
    saved = core_story.read_story(saved_run)
    assert saved is not None and core_story.UNEXPLAINED not in saved


# P12-E: story.json's checksum is a plain sha256 of its content: an editor computes it again. Edited values were
# served — `samples` "200 [more](https://evil…)" as a live link in the Story's footnote, forged fail rates as the
# run's — although docs/SECURITY.md says an edited story.json is never served ---------------------------------------

def _forge_rates(story: dict) -> None:
    for rate in story["rates"]:
        rate.update(n_fail=0, fail_rate=0.0)


RESEALED_TAMPERS = {
    "samples-a-markdown-link": lambda s: s.update(samples="200 [more](https://evil.example/n)"),
    "method-a-markdown-link": lambda s: s.update(method="lemna [Sign in](https://evil.example/s)"),
    "forged-rates": _forge_rates,
    "nan-rate": lambda s: [r.update(fail_rate=float("nan")) for r in s["rates"]],
    "n-cases-a-float": lambda s: [r.update(n_cases=8.0) for r in s["rates"]],
    "candidates-a-string": lambda s: s.update(candidates="x"),
    "rates-missing-columns": lambda s: s.update(rates=[{"model": "vader"}]),
    "n-excluded-a-word": lambda s: s.update(n_excluded="many"),
    "contributions-a-list": lambda s: s.update(contributions=[]),
    "samples-huge": lambda s: s.update(samples=10**12),
    "a-text-a-number": lambda s: [c.update(text=5) for c in s["candidates"]],
    "an-unknown-field": lambda s: s.update(note="<a href='https://evil.example'>x</a>"),
}


@pytest.mark.parametrize("tamper", list(RESEALED_TAMPERS))
def test_p12_e_an_edited_story_with_its_checksum_recomputed_is_not_used(saved_run, tamper):
    from alict_core.report import story as core_story

    core_story.write_story(saved_run, None)
    path = core_story.story_path(saved_run)
    assert core_story.read_story(saved_run) is not None  # the honest story is used
    story = json.loads(path.read_text())
    assert story["candidates"] and story["rates"]
    RESEALED_TAMPERS[tamper](story)
    content = {k: v for k, v in story.items() if k not in core_story.INTEGRITY_KEYS}
    story["sha256"] = core_story._content_sha256(content)  # what an editor does: the checksum holds no secret
    path.write_text(json.dumps(story))
    assert core_story.read_story(saved_run) is None


def test_p12_e_the_story_footnote_is_drawn_as_text():
    source = (ROOT / "pages" / "story.py").read_text(encoding="utf-8")
    assert "{story['method']" not in source and "{story['samples']}" not in source


# P12-B: the run pickers' listing kept 1,024 runs in an LRU: a store of more runs missed every folder on every
# listing, so each click on a run-picker page read the whole store again (3,000 runs: 15–24 s per click) ------------

def test_p12_b_a_store_over_1024_runs_is_listed_again_without_reading_a_file(tmp_runs, monkeypatch):
    from alict_app import runs

    for i in range(1100):
        folder = tmp_runs / f"{i:016x}"
        folder.mkdir()
        (folder / "meta.json").write_text(json.dumps({"run_id": folder.name}))
        (folder / "request.json").write_text(json.dumps({
            "status": "done", "finished": 1.7e9 + i,
            "request": {"task": "sentiment", "lc_ids": ["sentiment-lc01"], "models": [{"name": "vader"}]}}))
    runs._run_info_at.clear()
    assert len(runs.list_runs("sentiment")) == 1100
    reads = []
    monkeypatch.setattr(runs, "read_json", lambda path: reads.append(path) or pytest.fail(f"read {path}"))
    monkeypatch.setattr(runs, "copied_from", lambda folder: pytest.fail(f"read {folder}/meta.json"))
    listed = runs.list_runs("sentiment")
    assert len(listed) == 1100 and listed[0]["key"] == f"{1099:016x}"
    assert runs.copied_runs() == {} and runs.unreadable_runs() == []
    shutil.rmtree(tmp_runs / f"{5:016x}")  # a run removed from the store leaves the listing
    assert len(runs.list_runs("sentiment")) == 1099


# P12-C: two sessions editing one workspace spec: the later "Overwrite" save replaced the earlier one unseen -------

def _specs_page(lc: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["task"] = "sentiment"
    at.query_params["lc"] = lc
    at.run()
    return at.switch_page("pages/specs.py").run()


def _save_title(at, title: str, revert: bool = False):
    import re

    editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    if revert:
        next(b for b in at.button if b.label == "Revert to the file on disk").click()
        at = at.run()
        editor = next(t for t in at.text_area if str(t.key).startswith("spec_yaml::"))
    editor.set_value(re.sub(r"(?m)^title: .*$", f"title: {title}", editor.value))
    at = at.run()
    at.checkbox(key=f"save_overwrite::{editor.key}").check()
    at = at.run()
    at.button(key=f"save::{editor.key}").click()
    return at.run()


@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
def test_p12_c_a_save_over_a_spec_changed_since_it_was_opened_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(tmp_path / "ws"))
    saved = tmp_path / "ws" / "specs" / "sentiment" / "sentiment-lc05.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text((ROOT / "specs" / "sentiment" / "sentiment-lc05.yaml").read_text())

    def title() -> str:
        return next(line for line in saved.read_text().splitlines() if line.startswith("title:"))

    first, second = _specs_page("sentiment-lc05"), _specs_page("sentiment-lc05")
    second = _save_title(second, "Saved by the second session")
    assert title() == "title: Saved by the second session"
    first = _save_title(first, "Saved by the first session")
    assert title() == "title: Saved by the second session"  # not replaced unseen
    assert any("changed on disk since you opened it" in e.value for e in first.error), [e.value for e in first.error]
    first = _save_title(first, "Saved by the first session, after a look", revert=True)  # the way out
    assert title() == "title: Saved by the first session, after a look"
    first = _save_title(first, "Saved again by the first session")  # its own save is no change by another
    assert title() == "title: Saved again by the first session"
    assert not first.exception


# P12-F: the Story page of a run over the big-run threshold (no story file for those) loaded the whole run to build
# one: 210,000 rows, 60 s and 860 MB for one view of the demo's opening page ----------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("fake_backends")
def test_p12_f_the_story_of_a_big_run_is_not_built_by_loading_it_whole(tmp_runs, saved_run, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from alict_app import runs

    run_id = json.loads((saved_run / "meta.json").read_text())["run_id"]
    shutil.copytree(saved_run, tmp_runs / run_id)
    monkeypatch.setattr(runs, "BIG_ROWS", 4)  # the run has 8 case × model rows: a big run here
    monkeypatch.setattr(runs, "load_run", lambda key: pytest.fail(f"loaded run {key} whole"))
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("over the Story's limit" in i.value for i in at.info), [i.value for i in at.info]
