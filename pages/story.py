"""Story page (the demo's opening): per model, its most telling failures of a run, explained in plain words.

Read-only: it shows a saved run (``?run=`` or the newest of the task). Cards come only from cases that pass the
validity checks and whose expected label no reviewer disputed (reviewed ones first, marked); each headline gives
its n and 95 % interval; a "becomes" card only where the seed passes and the expansion fails.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app import charts, run_picker, runs, state, story_data, widgets
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page
from alict_core.analysis.explore import plain_capability
from alict_core.metrics.intervals import wilson_interval

MIN_CASES_WORST = 5  # the "worst on" LC needs at least this many cases (no "100 % of 1")


def percent_with_interval(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{k / n:.0%} of {n:,} (95 % CI {low:.0%}–{high:.0%})" if n else "no cases"


def failure_card(row: pd.Series) -> None:
    """One failure: what the model should have said, what it said, and which words drove it."""
    with st.container(border=True):
        mark = " · ✔ reviewed" if row["reviewed"] else ""
        st.markdown(f"**{literal(plain_capability(row['capability']))} · {literal(row['lc_title'])}**{mark}")
        if row["show_seed"] and row["seed_text"]:
            st.markdown(f"> {literal(row['seed_text'])}\n\nbecomes\n\n> {literal(row['text'])}")
            st.caption("the model gets the original sentence right and this small change wrong")
        else:
            st.markdown(f"> {literal(row['text'])}")
        confidence = f" ({row['confidence']:.0%} sure)" if pd.notna(row["confidence"]) else ""
        st.markdown(f"Expected **{literal(row['expected'])}**, "
                    f"the model says **{literal(row['predicted'])}**{confidence}.")
        contributions = row["contributions"]
        if contributions is None:  # e.g. stored predictions: they answer the run's texts, not perturbed copies
            st.caption(f"No word colours: this model could not be explained here ({literal(row['unexplained'])})")
            return
        st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"]),
                    unsafe_allow_html=True)
        st.caption(f"red words push the model towards “{literal(row['predicted'])}”, blue words away¹")


def model_headline(rates: pd.DataFrame) -> str:
    """The model's overall fail rate and its worst LC (with at least MIN_CASES_WORST cases), each with n and CI."""
    n, k = int(rates["n_cases"].sum()), int(rates["n_fail"].sum())
    line = f"Fails {percent_with_interval(k, n)} test cases."
    sizable = rates[rates["n_cases"] >= MIN_CASES_WORST]
    if not sizable.empty and sizable["fail_rate"].max() > 0:
        worst = sizable.sort_values(["fail_rate", "n_cases"], ascending=False).iloc[0]
        line += (f" Worst on *{literal(worst['lc_title'])}* ({literal(plain_capability(worst['capability']))}): fails "
                 f"{percent_with_interval(int(worst['n_fail']), int(worst['n_cases']))}.")
    return line


def main() -> None:
    widgets.header("Story", "Where each model goes wrong: its most telling failures, explained.")
    task = state.get("task")
    key = run_picker.run_picker(task, none_hint="a run made on the Run page appears here")
    if key is None:
        return
    unparsed = widgets.unparsed_warning(key)  # those cases passed or failed as the fallback label, not by the model
    if runs.is_big(key):  # no story file for those, and computing one here would load the whole run (minutes, GBs)
        st.info(f"This run has {runs.reader(key).n_rows():,} case × model rows, over the Story's limit of "
                f"{runs.BIG_ROWS:,}: the Story tells runs up to that size. The **Failures** page pages through this "
                "one.")
        return
    story = story_data.load(key)  # precomputed when the run finished (alict_core.report.story)
    disputed: set[tuple[str, str]] = set()
    confirmed: set[tuple[str, str]] = set()
    with guarded("reading the reviews"):
        disputed, confirmed = story_data.review_keys(task)
    top, left_out = story_data.cards(key, story, disputed, confirmed)
    if top.empty:
        widgets.no_failures("No failure in this run that passes the validity checks and whose label no reviewer "
                            "disputed.", unparsed)
        return
    rates = pd.DataFrame(story["rates"])
    for model, group in top.groupby("model", sort=False):
        st.subheader(literal(model))
        st.markdown(model_headline(rates[rates["model"] == model]))
        for column, (_, row) in zip(st.columns(len(group)), group.iterrows(), strict=True):
            with column:
                failure_card(row)
    st.caption(f"¹ Word colours: {literal(str(story['method']).upper())} explanations ({int(story['samples'])} "
               f"perturbed copies of each "
               f"sentence). Cards show only failures that pass the validity checks and whose expected label no "
               f"reviewer disputed ({left_out} left out); reviewed cases come first, marked ✔. Intervals: 95 % Wilson.")


run_page(main, "telling the story")
