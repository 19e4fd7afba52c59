"""The Story page's data: the run's precomputed ``story.json`` (``report.story``), applied to today's reviews.

A run finished by the app or the CLI carries its story; for an older run (or a story that does not verify) it is
computed here (explorer table, validity exclusions, explanations of the default cards) and kept in this server's
bounded cache — a page view never writes into the run.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from alict_app import backends, runs
from alict_core.report import story as core_story


def model_loader(key: str) -> core_story.ModelLoader:
    """Load a model of run ``key`` by its name in the run (as the run's request named it; cached models)."""
    return lambda name: backends.model_of(runs.run_model_ref(key, name))


@st.cache_resource(show_spinner=False, max_entries=8)
def _story(key: str, stamp: tuple[int, ...]) -> dict[str, Any]:
    """One shared story per run and stamp: cards explained later (reviews chose another case) are kept in it."""
    folder = runs.run_dir(key)
    return core_story.read_story(folder) or core_story.build_story(runs.load_run(key), model_loader(key))


def load(key: str) -> dict[str, Any]:
    """The story of run ``key``: read from the run, or computed now for a run without a (verified) one."""
    folder = runs.run_dir(key)
    if not (folder / core_story.STORY_FILE).exists():
        with st.spinner("Preparing this run's story (once per server; runs finished now come with theirs) …"):
            return _story(key, runs.folder_stamp(folder))
    return _story(key, runs.folder_stamp(folder))


def review_keys(task: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(disputed, confirmed) (case id, text hash) keys of the review store, if one exists: disputed when any
    reviewer's label disagrees with the expectation or the case was rejected; confirmed when judged and neither."""
    from alict_core.review.store import ReviewStore, default_url, sqlite_path
    from alict_core.review.writeback import case_verdicts

    url = default_url()
    path = sqlite_path(url)
    if path is not None and not path.exists():
        return set(), set()
    verdicts = case_verdicts(ReviewStore(url).judgements(suite_task=task), task)
    disputed = {key for key, v in verdicts.items() if v["disagree"] or v["rejected"]}
    return disputed, set(verdicts) - disputed


def cards(key: str, story: dict[str, Any], disputed: set[tuple[str, str]],
          confirmed: set[tuple[str, str]]) -> tuple[pd.DataFrame, int]:
    """(the cards to show, per model, each with its ``contributions``; how many failures were left out).

    Cards whose word contributions the story lacks (reviews chose another case) are explained now and kept in the
    server's copy of the story (never written into the run)."""
    from alict_core.analysis.explore import trustworthy_failures
    from alict_core.common.hashing import hash_text

    candidates = pd.DataFrame(story["candidates"], columns=list(core_story.CANDIDATE_COLUMNS))
    if candidates.empty:
        return candidates, int(story["n_excluded"])
    candidates["confidence"] = pd.to_numeric(candidates["confidence"], errors="coerce")
    keyed = {(c, hash_text(str(t))): c for c, t in zip(candidates["case_id"], candidates["text"], strict=True)}
    excluded = {keyed[k] for k in disputed if k in keyed}
    reviewed = {keyed[k] for k in confirmed if k in keyed}
    top = trustworthy_failures(candidates, excluded=excluded, reviewed=reviewed, per_model=core_story.CARDS)
    core_story.explain_cards(story, top, model_loader(key))
    keys = [core_story.contribution_key(str(m), str(t)) for m, t in zip(top["model"], top["text"], strict=True)]
    top["contributions"] = [story["contributions"].get(k) for k in keys]  # None: the model could not be explained
    top["unexplained"] = [story.get(core_story.UNEXPLAINED, {}).get(k, "") for k in keys]
    return top, int(story["n_excluded"]) + len(excluded)
