"""The Failures, Compare and Story pages' data: the explorer table of a run, built once per run key.

``st.cache_resource`` (not ``cache_data``): the frame is shared read-only, so a warm page switch
does not copy (unpickle) thousands of rows. Bounded: a few runs at a time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from alict_app import runs
from alict_core.analysis.compare import Comparison, compare_frames, model_side, runs_note, side_unparsed
from alict_core.analysis.explore import explorer_frame, lc_model_rates


def frame(key: str) -> pd.DataFrame:
    """The explorer table (``alict_core.analysis.explore.explorer_frame``) of a saved run; treat it as read-only
    (cached while the run's files are unchanged: ``runs.folder_stamp``)."""
    return _frame(key, runs.run_stamp(key))


@st.cache_resource(show_spinner="Preparing the run's cases …", max_entries=6)
def _frame(key: str, stamp: tuple[int, ...]) -> pd.DataFrame:
    return explorer_frame(runs.load_run(key))


def heat_rates(key: str) -> pd.DataFrame:
    """Fail rate per LC × model of a run (all its cases), capability-first labels."""
    return _heat_rates(key, runs.run_stamp(key))


@st.cache_resource(show_spinner=False, max_entries=6)
def _heat_rates(key: str, stamp: tuple[int, ...]) -> pd.DataFrame:
    return lc_model_rates(frame(key))


def comparison(key_a: str, model_a: str, key_b: str, model_b: str) -> Comparison:
    """Model ``model_a`` of run ``key_a`` against ``model_b`` of run ``key_b`` (read-only, cached)."""
    return _comparison(key_a, model_a, key_b, model_b, runs.run_stamp(key_a), runs.run_stamp(key_b))


@st.cache_resource(show_spinner="Comparing …", max_entries=8)
def _comparison(key_a: str, model_a: str, key_b: str, model_b: str, stamp_a: tuple[int, ...],
                stamp_b: tuple[int, ...]) -> Comparison:
    frame_a, frame_b = frame(key_a), frame(key_b)
    side_a, side_b = model_side(frame_a, model_a), model_side(frame_b, model_b)
    same = model_a == model_b
    label_a, label_b = (f"{model_a} (A)", f"{model_b} (B)") if same else (model_a, model_b)
    run_a, run_b = runs.load_run(key_a), runs.load_run(key_b)
    unparsed = (side_unparsed(run_a, model_a), side_unparsed(run_b, model_b))
    try:  # the note the CLI says first: one service asked twice (its answers may have changed), one model, …
        note = runs_note(run_a, run_b, model_a, model_b, (set(side_a["lc_id"]), set(side_b["lc_id"])))
    except ValueError:  # a model the run's record does not name (a run of an older layout): nothing to say of it
        note = ""
    return compare_frames(side_a, side_b, label_a, label_b, note=note, unparsed=unparsed)


def model_ref(key: str, model_name: str) -> dict[str, Any]:
    """How to load a run's model again (registry name and arguments), for explanations."""
    return dict(runs.run_model_ref(key, model_name).to_dict())


def clear() -> None:
    _frame.clear()
    _heat_rates.clear()
    _comparison.clear()
