"""Hostile pass 8 table (notes: attack_pass8.md): pass 7's leftovers and the findings of pass 8."""

from __future__ import annotations

import os
import threading

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("fresh_engines")]

PG_URL = os.environ.get("ALICT_TEST_REVIEW_PG_URL")  # scripts/with_postgres.sh starts a throw-away server


def _fresh_postgres(url: str) -> str:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA public CASCADE"))
        conn.execute(sa.text("CREATE SCHEMA public"))
    engine.dispose()
    return url


# Leftover 1: 'ann' and 'ANN' used for the first time at the same moment were created as two reviewers ---------

@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not PG_URL, reason="set ALICT_TEST_REVIEW_PG_URL (scripts/with_postgres.sh)"))])
def test_two_first_uses_of_one_name_in_two_cases_at_once_make_one_reviewer(tmp_path, monkeypatch, backend):
    """Was: both sessions looked for a reviewer named 'ann' in any case, both found none, both inserted theirs (the
    unique constraint is on the exact name): two reviewers for one person. The two lookups are made to meet here
    (each waits at a barrier for the other, up to 3 s); now the creation is serialised by the database (an
    advisory lock on PostgreSQL, SQLite's write lock), so the second looks again after the first committed."""
    from sqlalchemy import select

    from alict_core.review import store

    url = f"sqlite:///{tmp_path / 'review.sqlite'}" if backend == "sqlite" else _fresh_postgres(str(PG_URL))
    store.ReviewStore(url)  # the schema, before the race
    barrier = threading.Barrier(2)
    looked_up = store.ReviewStore._named

    def meeting(s, name):
        found = looked_up(s, name)
        try:
            barrier.wait(timeout=3)
        except threading.BrokenBarrierError:  # the other session waits for the lock meanwhile (the fixed code)
            pass
        return found

    monkeypatch.setattr(store.ReviewStore, "_named", staticmethod(meeting))
    ids: dict[str, int] = {}

    def first_use(name: str) -> None:
        ids[name] = store.ReviewStore(url).reviewer(name).id

    threads = [threading.Thread(target=first_use, args=(name,)) for name in ("ann", "ANN")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    monkeypatch.undo()
    with store.ReviewStore(url).session() as s:
        names = [reviewer.name for reviewer in s.scalars(select(store.Reviewer))]
    assert len(names) == 1 and names[0] in ("ann", "ANN"), names
    assert ids["ann"] == ids["ANN"]


# Leftover 2: the Adjunct trees page drew the sentence's template as Markdown (a corpus text's URL a live link) -

@pytest.mark.slow
def test_the_adjunct_tree_template_is_shown_as_text_not_markdown(monkeypatch):
    """Was: "**p0:** …" drew the template of the sentence (typed, or a corpus text: a tweet's URL) as Markdown: a
    URL was a live link, `[Sign in](https://…)` a link, `:red[…]` a colour. Now it is shown as the characters it
    holds (``formatting.literal``). No judge model here (none loads; the page says so), the real parser."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from alict_app import backends

    real_names = backends.loadable_names
    monkeypatch.setattr(backends, "loadable_names",
                        lambda kind, **tags: real_names(kind, **tags) if kind in ("parser", "mlm") else ([], {}))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=240)
    at.query_params["task"] = "sentiment"
    at.run()
    at = at.switch_page("pages/lego.py")
    at.session_state["lego_text"] = ("The film, which was shown at https://evil.example/login yesterday, was "
                                     "[Sign in](https://evil.example) :red[good].")
    at.run()
    assert not at.exception and not at.error
    template = next(m.value for m in at.markdown if m.value.startswith("**p0:**"))
    assert "https://" not in template and "](" not in template and ":red[" not in template, template
    assert "evil\\.example" in template  # shown, escaped


# Finding 1: `lego --seeds` dropped a seed whose id an earlier row had, with another text, without a word -------

def test_a_lego_seed_id_given_twice_with_two_texts_is_refused_not_dropped(tmp_path):
    """Was: rows {"id": "a", "text": "a good film"} and {"id": "a", "text": "a bad film"}: exit 0, one tree (the
    second seed lost: ``dedupe`` keeps one seed per id). Now one message naming both rows; the same row twice is
    still one seed."""
    import json

    from alict_core.common.errors import AlictError
    from alict_core.lego.pipeline import seeds_from_file

    seeds = tmp_path / "seeds.jsonl"
    rows = [{"id": "a", "text": "a good film"}, {"id": "a", "text": "a bad film"}]
    seeds.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(AlictError, match=r"seeds.jsonl:2: seed id 'a' again, with another text \(first at "
                                         r"seeds.jsonl:1\)"):
        seeds_from_file(seeds, "sentiment")
    same = tmp_path / "same.jsonl"
    same.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert [seed.text for seed in seeds_from_file(same, "sentiment")] == ["a good film"]


# Finding 2: a spec of 63 YAML aliases (under spec_aliases) expanded to 117 million strings ------------------

def _spec_with_checks(extra: str) -> str:
    from alict_core.lcspec.loader import spec_dir

    return (spec_dir("sentiment") / "sentiment-lc04.yaml").read_text(encoding="utf-8") + \
        "expansion:\n  checks:\n    open_class_slot:\n" + extra


def test_a_spec_whose_aliases_expand_it_beyond_bound_is_refused_before_it_is_built():
    """Was: 63 aliases nested 8 to a level in `expansion.checks` (a free-form mapping), a 2 KB spec, parsed and
    validated; its first dump (the seed-cache key, `spec_store.spec_key`) built 117 million strings: a
    MemoryError under a 3 GB cap after 23 s, an abort of the process in pydantic's JSON dump — from a spec a
    browser can save on the Specs page. A node that holds itself (`&r [NN, *r]`) parsed too, and its key failed
    with "Circular reference detected". Now both are refused by the shape check, with their line."""
    from alict_core.lcspec.loader import SpecValidationError, parse_spec_text

    levels = ['      x0: &a0 ["' + "a" * 200 + '", "b", "c", "d", "e", "f", "g", "h"]\n']
    levels += [f"      x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]\n" for i in range(1, 8)]
    levels.append(f"      x8: [{', '.join(['*a7'] * 7)}]\n")
    bomb = _spec_with_checks("".join(levels))
    assert bomb.count("*a") == 63 and len(bomb) < 3_000
    with pytest.raises(SpecValidationError, match=r"aliases \(\*name\) expand it to more than 1,048,576 nodes"):
        parse_spec_text(bomb, "bomb.yaml")
    with pytest.raises(SpecValidationError, match=r"alias \*r is inside its own anchor"):
        parse_spec_text(_spec_with_checks("      tags: &r [NN, *r]\n"), "loop.yaml")
    shared = _spec_with_checks("      tags: &t [NN, NNS]\n    weak_fill: {tags: *t}\n")  # an ordinary alias
    assert parse_spec_text(shared, "shared.yaml").id == "sentiment-lc04"


# Finding 3: a whole number of more than 4,300 digits in a spec was an internal error ---------------------------

def test_a_spec_number_over_the_digit_limit_is_one_message_with_its_line(cli, tmp_path, monkeypatch):
    """Was: a workspace spec with `min_word_score: 1000…0` (5,001 digits) made `run` exit 3, "internal error
    (ValueError: Exceeds the limit (4300 digits) for integer string conversion …)" (YAML's int constructor and
    Python's limit); the Specs page's check got the same bare ValueError. Now a YAML error naming file and line."""
    from alict_core.lcspec.loader import SpecValidationError, parse_spec_text

    spec = _spec_with_checks("").replace("    open_class_slot:\n", "") \
        .replace("id: sentiment-lc04", "id: sentiment-x77") + f"    weak_fill: {{min_word_score: 1{'0' * 5000}}}\n"
    line = spec.count("\n")  # the number sits on the last line (sentiment-lc04's length changes with its conditions)
    with pytest.raises(SpecValidationError, match=rf"line {line}: invalid YAML: a whole number of 5,001 digits"):
        parse_spec_text(spec, "x.yaml")
    workspace = tmp_path / "ws"
    monkeypatch.setenv("ALICT_WORKSPACE_DIR", str(workspace))
    from alict_core.lcspec.loader import workspace_spec_dir

    folder = workspace_spec_dir("sentiment")
    folder.mkdir(parents=True)
    (folder / "sentiment-x77.yaml").write_text(spec, encoding="utf-8")
    outcome = cli("run", "--task", "sentiment", "--lc", "sentiment-x77", "--models", "vader", "--max-seeds", "3",
                  "--out", str(tmp_path / "run"))
    assert_clean_error(outcome, 2, f"sentiment-x77.yaml, line {line}", "a whole number of 5,001 digits")
