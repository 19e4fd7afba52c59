"""Story page (the demo's opening): per model, its most telling failures of a run, explained in plain words.

Read-only: it shows a saved run (``?run=`` or the newest of the task). Cards come only from cases that pass the
validity checks and whose expected label no reviewer disputed (reviewed ones first, marked); each headline gives
its n and 95 % interval; a "becomes" card only where the seed passes and the expansion fails.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from alict_app import artefacts, backends, charts, explorer_data, runs, state, widgets
from alict_app.guard import guarded, run_page
from alict_core.explore import plain_capability, trustworthy_failures
from alict_core.metrics.intervals import wilson_interval

EXPLAINER = "lemna"
SAMPLES = 200
MIN_CASES_WORST = 5  # the "worst on" LC needs at least this many cases (no "100 % of 1")


def percent_with_interval(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{k / n:.0%} of {n:,} (95 % CI {low:.0%}–{high:.0%})" if n else "no cases"


def review_verdicts(task: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
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


def untrusted_and_reviewed(key: str, data: pd.DataFrame, task: str) -> tuple[set[str], set[str]]:
    """Case ids to leave out (validity flags of the run, text defects an expansion added to its seed, labels a
    reviewer disputed) and case ids reviewers confirmed."""
    from alict_core.hashing import hash_text
    from alict_core.validity import text_defects

    validity = (runs.load_run(key).extra or {}).get("validity") or {}
    excluded = {str(flag.get("case_id")) for flag in validity.get("flags", [])}
    failed = data[data["failed"]].drop_duplicates("case_id")
    for case_id, kind, text, seed_text in zip(failed["case_id"], failed["kind"], failed["text"], failed["seed_text"],
                                              strict=True):
        if kind == "expansion" and text_defects(str(text), [str(seed_text)]):
            excluded.add(case_id)
    disputed, confirmed = set(), set()
    with guarded("reading the reviews"):
        disputed, confirmed = review_verdicts(task)
    keyed = {(c, hash_text(str(t))): c for c, t in zip(failed["case_id"], failed["text"], strict=True)}
    excluded |= {keyed[k] for k in disputed if k in keyed}
    return excluded, {keyed[k] for k in confirmed if k in keyed}


def failure_card(key: str, row: pd.Series, method: str) -> None:
    """One failure: what the model should have said, what it said, and which words drove it."""
    with st.container(border=True):
        mark = " · ✔ reviewed" if row["reviewed"] else ""
        st.markdown(f"**{plain_capability(row['capability'])} · {row['lc_title']}**{mark}")
        if row["show_seed"] and row["seed_text"]:
            st.markdown(f"> {row['seed_text']}\n\nbecomes\n\n> {row['text']}")
            st.caption("the model gets the original sentence right and this small change wrong")
        else:
            st.markdown(f"> {row['text']}")
        confidence = f" ({row['confidence']:.0%} sure)" if pd.notna(row["confidence"]) else ""
        st.markdown(f"Expected **{row['expected']}**, the model says **{row['predicted']}**{confidence}.")
        ref_json = json.dumps(explorer_data.model_ref(key, row["model"]), sort_keys=True)
        with guarded("explaining the failure"):
            contributions = artefacts.explain_case(ref_json, row["text"], method, 0, SAMPLES)
            st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"]),
                        unsafe_allow_html=True)
            st.caption(f"red words push the model towards “{row['predicted']}”, blue words away¹")


def model_headline(rates: pd.DataFrame) -> str:
    """The model's overall fail rate and its worst LC (with at least MIN_CASES_WORST cases), each with n and CI."""
    n, k = int(rates["n_cases"].sum()), int(rates["n_fail"].sum())
    line = f"Fails {percent_with_interval(k, n)} test cases."
    sizable = rates[rates["n_cases"] >= MIN_CASES_WORST]
    if not sizable.empty and sizable["fail_rate"].max() > 0:
        worst = sizable.sort_values(["fail_rate", "n_cases"], ascending=False).iloc[0]
        line += (f" Worst on *{worst['lc_title']}* ({plain_capability(worst['capability'])}): fails "
                 f"{percent_with_interval(int(worst['n_fail']), int(worst['n_cases']))}.")
    return line


def main() -> None:
    widgets.header("Story", "Where each model goes wrong: its most telling failures, explained.")
    task = state.get("task")
    key = widgets.run_picker(task, none_hint="a run made on the Run page appears here")
    if key is None:
        return
    data = explorer_data.frame(key)
    excluded, reviewed = untrusted_and_reviewed(key, data, task)
    top = trustworthy_failures(data, excluded=excluded, reviewed=reviewed, per_model=3)
    if top.empty:
        st.success("No failure in this run that passes the validity checks and whose label no reviewer disputed.")
        return
    names = backends.backend_names("explainer")
    method = EXPLAINER if EXPLAINER in names or not names else names[0]
    rates = explorer_data.heat_rates(key)
    for model, group in top.groupby("model", sort=False):
        st.subheader(model)
        st.markdown(model_headline(rates[rates["model"] == model]))
        for column, (_, row) in zip(st.columns(len(group)), group.iterrows(), strict=True):
            with column:
                failure_card(key, row, method)
    st.caption(f"¹ Word colours: {method.upper()} explanations ({SAMPLES} perturbed copies of each sentence). "
               f"Cards show only failures that pass the validity checks and whose expected label no reviewer "
               f"disputed ({len(excluded)} left out); reviewed cases come first, marked ✔. Intervals: 95 % Wilson.")


run_page(main, "telling the story")
