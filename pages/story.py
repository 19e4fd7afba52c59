"""Story page (the demo's opening): per model, the three most striking failures of a run, explained.

Read-only: it shows a saved run (``?run=`` or the newest of the task) and explains each failure with
the default explainer; nothing here writes.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from alict_app import artefacts, backends, charts, explorer_data, state, widgets
from alict_app.guard import guarded, run_page
from alict_core.explore import striking_failures

EXPLAINER = "lemna"
SAMPLES = 200


def failure_card(key: str, row: pd.Series) -> None:
    """One failure: what the model should have said, what it said, and which words drove it."""
    with st.container(border=True):
        st.markdown(f"**{row['capability']} · {row['lc_title']}**")
        if row["kind"] == "expansion" and row["seed_text"]:
            st.markdown(f"> {row['seed_text']}\n\nbecomes\n\n> {row['text']}")
            if row.get("pass_to_fail"):
                st.caption("the model gets the original sentence right and this small variation wrong")
        else:
            st.markdown(f"> {row['text']}")
        confidence = f" ({row['confidence']:.0%} sure)" if pd.notna(row["confidence"]) else ""
        st.markdown(f"Expected **{row['expected']}**, the model says **{row['predicted']}**{confidence}.")
        names = backends.backend_names("explainer")
        method = EXPLAINER if EXPLAINER in names or not names else names[0]
        ref_json = json.dumps(explorer_data.model_ref(key, row["model"]), sort_keys=True)
        with guarded("explaining the failure"):
            contributions = artefacts.explain_case(ref_json, row["text"], method, 0, SAMPLES)
            st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"]),
                        unsafe_allow_html=True)
            st.caption(f"red words push the model towards “{row['predicted']}”, blue words away ({method})")


def main() -> None:
    widgets.header("Story", "Where each model goes wrong: its three most striking failures, explained.")
    key = widgets.run_picker(state.get("task"), none_hint="a run made on the Run page appears here")
    if key is None:
        return
    data = explorer_data.frame(key)
    top = striking_failures(data, per_model=3)
    if top.empty:
        st.success("No failures in this run.")
        return
    rates = explorer_data.heat_rates(key)
    for model, group in top.groupby("model", sort=False):
        overall = rates[rates["model"] == model]
        share = overall["n_fail"].sum() / max(1, overall["n_cases"].sum())
        worst = overall.sort_values("fail_rate", ascending=False).iloc[0]
        st.subheader(model)
        st.markdown(f"Fails {share:.0%} of all test cases; worst on *{worst['lc_title']}* "
                    f"({worst['capability']}, {worst['fail_rate']:.0%}).")
        for column, (_, row) in zip(st.columns(len(group)), group.iterrows(), strict=True):
            with column:
                failure_card(key, row)


run_page(main, "telling the story")
