"""Pages robustness table (AppTest): hostile query parameters give a clean page, never a traceback or a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fake_backends", "tmp_runs")  # tests/app_fixtures.py
SLOW = [pytest.mark.slow, pytest.mark.no_models]  # slow pages, fake backends: make test runs them beside the build


APP = str(Path(__file__).resolve().parents[2] / "app.py")


HOSTILE = [  # (page, query)
    ("pages/failures.py", {"run": "../../../etc"}),
    ("pages/report.py", {"run": "/etc/passwd"}),
    ("pages/failures.py", {"run": ".hidden"}),
    ("pages/seeds.py", {"lc": "1.4"}),
    pytest.param("pages/report.py", {"run": "x" * 300}, marks=SLOW),
    pytest.param("pages/failures.py", {"run": "..", "model": "../x"}, marks=SLOW),
    pytest.param("pages/seeds.py", {"task": "bogus", "lc": "-4"}, marks=SLOW),
    pytest.param("pages/seeds.py", {"lc": "hate_speech-lc04"}, marks=SLOW),
    pytest.param("pages/run.py", {"run": "../app-runs", "lc": "4x"}, marks=SLOW),
    pytest.param("pages/expansions.py", {"lc": "lc99", "seed": "../../x"}, marks=SLOW),
    # attack pass: review links naming no task, a huge one, a reviewer with control characters
    ("pages/review.py", {"review": "x" * 5000, "reviewer": "a\x07b"}),
    pytest.param("pages/review.py", {"review": "=cmd|calc", "reviewer": " "}, marks=SLOW),
    pytest.param("pages/compare.py", {"run": "../../etc", "model": "=x"}, marks=SLOW),
    pytest.param("pages/harden.py", {"run": "/etc", "lc": "lc99"}, marks=SLOW),
    pytest.param("pages/lego.py", {"lc": "-1", "task": "hate_speech"}, marks=SLOW),
]


@pytest.mark.parametrize("page,query", HOSTILE)
def test_hostile_query_gives_a_clean_page(tmp_path, tmp_runs, page, query):
    # a generous limit: the NLPLego page reads its corpus sample (33 s of one core on a loaded machine; 180 s was
    # once exceeded with the test suite, a browser and three probing processes beside it)
    at = AppTest.from_file(APP, default_timeout=420)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors
    shown = " ".join(str(getattr(el, "value", "")) for el in [*at.error, *at.warning, *at.info, *at.markdown])
    assert str(tmp_path) not in shown, "no server path on the page"
    assert [p.name for p in tmp_runs.iterdir()] == [], "nothing written"


DEEP_YAML = "x: " + "[" * 5000 + "]" * 5000 + "\n"
ALIAS_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))


@pytest.mark.parametrize("typed", [DEEP_YAML, ALIAS_BOMB, "search:\n- predicates:\n  - " + "[" * 3000 + "]" * 3000],
                         ids=["deep", "aliases", "deep-predicate"])
def test_hostile_yaml_typed_into_the_specs_editor(typed):
    """The editor's text is shape-checked before it is built for the form: one spec error, no traceback."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["lc"] = "sentiment-lc03"
    at.run()
    at.text_area(key="spec_yaml::sentiment::sentiment-lc03").set_value(typed).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert any("Spec error" in e for e in errors), errors
    assert not any("Unexpected error" in e or "Traceback" in e for e in errors), errors


@pytest.mark.parametrize("split", ["8:nan:1", "inf:1:1", "8:1"])
def test_harden_split_typed_in_the_page_is_one_message(split):
    """The split the Harden page passes on is parsed by SplitRatios.parse: a NaN or infinite share is refused."""
    from alict_core.common.errors import AlictError
    from alict_core.harden.split import SplitRatios

    with pytest.raises(AlictError, match="finite non-negative numbers"):
        SplitRatios.parse(split)


def _forge_rates(story):
    for row in story["rates"]:
        row.update(n_fail=0, fail_rate=0.0)


STORY_TAMPERS = {  # name -> an edit of the run's story.json (hostile pass 2: all were served or a traceback)
    "forged-rates": _forge_rates,  # served as it was: "Fails 0% of …"
    "nan-rate": lambda s: [r.update(n_cases=float("nan")) for r in s["rates"]],  # "Fails no cases test cases."
    "candidates-a-string": lambda s: s.update(candidates="x"),  # ValueError on the page
    "rates-missing-columns": lambda s: s.update(rates=[{"model": "fake-sentiment"}]),  # KeyError
    "n-excluded-a-word": lambda s: s.update(n_excluded="many"),  # ValueError
    "contributions-a-list": lambda s: s.update(contributions=[]),  # TypeError
    "samples-huge": lambda s: s.update(samples=10**12, contributions={}),  # over the explain limit
    "method-a-path": lambda s: s.update(method="../../x", contributions={}),
}


@pytest.mark.parametrize("tamper", list(STORY_TAMPERS))
def test_an_edited_story_is_never_served(tmp_runs, monkeypatch, tamper):
    """The Story page reads the run's story.json (beside the run, outside its manifest): an edited or damaged one
    is recomputed from the verified run, never shown, never an error on the page."""
    import json

    from alict_app import runs
    from alict_core.report import story as core_story
    from tests.test_app_explorer import run_fake, start

    key = run_fake(start(), lcs=("sentiment-lc04",))
    path = core_story.story_path(runs.run_dir(key))
    story = json.loads(path.read_text())
    honest = [(r["model"], r["n_cases"], r["n_fail"]) for r in story["rates"]]
    assert any(n_fail for _, _, n_fail in honest), "the fake model fails some negations"
    STORY_TAMPERS[tamper](story)
    tampered = json.dumps(story)
    path.write_text(tampered)
    monkeypatch.setenv("ALICT_DEMO_MODE", "1")  # the app opens on the Story of ?run=
    at = start({"run": key})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert path.read_text() == tampered  # the edited file is not used, and a page view writes nothing
    headlines = [m.value for m in at.markdown if m.value.startswith("Fails ")]
    assert headlines and all("Fails 0%" not in h and "no cases" not in h for h in headlines), headlines
    from pages.story import percent_with_interval  # the honest rates, computed again from the verified run

    expected = sorted(f"Fails {percent_with_interval(k, n)} test cases." for _, n, k in honest)
    assert sorted(h.split(" test cases.")[0] + " test cases." for h in headlines) == expected, headlines
