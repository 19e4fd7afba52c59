"""Review page: people judge generated test cases one at a time (keys 1–5, ← back, → skip), resumably.

No model prediction is shown (no anchoring). Each judgement is committed to the review database as
soon as its last score is given; the page reopens at the reviewer's first unjudged case.
"""

from __future__ import annotations

import unicodedata

import streamlit as st

from alict_app import state, widgets
from alict_app.formatting import TASK_TITLES, literal
from alict_app.guard import guarded, run_page
from alict_app.review_judge import judge_view, reset_position, save_pending
from alict_app.review_tasks import create_task_form, show_notice, store
from alict_app.review_writeback import metrics_view
from alict_core.tasks import SENTIMENT, TASKS

SHOWN_REVIEW = "review_shown"  # the review task this session was last shown (a task switch keeps it; a link does not)


def link_note(review_store, suite_task: str, asked: str, shown: bool) -> None:
    """Say that the review task ``asked`` (a link's, or one a task switch left) is not a review task of ``suite_task``:
    whose it is (choose that task in the sidebar), or that it is none here. ``shown``: another task is shown instead
    (else the page has none of its own)."""
    owner = next((other for other in TASKS if other != suite_task
                  and asked in {t.name for t in review_store.tasks(other)}), None)
    instead = ("Another one is shown: do not take a set of it unless it is the one you meant." if shown
               else f"{TASK_TITLES[suite_task]} has no review task yet.")
    if owner is None:
        tail = (", so another one is shown: check the task below before you take a set (ask whoever sent a link which "
                "one they meant)." if shown else ".")
        st.warning(f"Review task {literal(asked[:60])} is not a review task of {TASK_TITLES[suite_task]}"
                   f"{literal(tail)}")
    elif asked != st.session_state.get(SHOWN_REVIEW):  # the other task's, from a link (not kept across a task
        # switch): a reviewer claimed a set of the task shown instead without a word (pass 37)
        title = literal(TASK_TITLES[owner])
        st.warning(f"Review task {literal(asked[:60])} is a review task of {title}: choose {title} in the "
                   f"sidebar to open it. {literal(instead)}")


def main() -> None:
    widgets.header("Review", "Judge generated test cases: LC relevance, label and (for expansions) whether the seed's "
                   "label still holds. Model predictions are not shown.")
    suite_task = state.get("task") or SENTIMENT.name
    review_store = store()
    tasks = review_store.tasks(suite_task)
    with st.expander("New review task", expanded=not tasks):
        with guarded("creating the review task"):
            create_task_form(suite_task)
    show_notice("create", suite_task)  # outside the expander: it folds once a task exists
    tasks = review_store.tasks(suite_task)
    names = [t.name for t in tasks]
    asked = unicodedata.normalize("NFC", str(state.get("review") or ""))  # names are stored composed (NFC): a link
    if asked and asked != state.get("review"):  # typed with 'e' + a combining accent names the same task
        state.put("review", asked)
    if asked and asked not in names:  # said also when this task has none: the link's task was never named
        link_note(review_store, suite_task, asked, bool(tasks))
    if not tasks:
        st.info(f"No review tasks for {TASK_TITLES[suite_task]} yet.")
        return
    state.ensure_choice("review", names)
    c1, c2 = st.columns(2)
    name = c1.selectbox("Review task", names, key="review")
    st.session_state[SHOWN_REVIEW] = name
    if len(str(state.get("reviewer") or "")) > 100:  # a link's name the field would cut without a word
        state.put("reviewer", "")
        st.warning("The link's reviewer name is longer than 100 characters, so it was not used: enter your name.")
    reviewer = c2.text_input("Your name", key="reviewer", max_chars=100).strip()
    task = next(t for t in tasks if t.name == name)
    save_pending()  # a judgement whose last score was just pressed, before anything reads the judgements
    with st.expander("Validity of this task so far", key="review_validity"):  # keyed: opened, it stays open
        with guarded("computing the validity metrics"):
            metrics_view(task)
    if not reviewer:
        st.info("Enter your name to start (or resume) reviewing.")
        return
    from alict_core.review.store import ReviewError, check_name

    try:  # said now, not when a click would create the reviewer
        check_name(reviewer, "your name", 100)
    except ReviewError as exc:
        st.error(f"{literal(exc)}; use letters, digits and spaces.")
        return
    reset_position((task.name, reviewer))
    judge_view(task, reviewer)


run_page(main, "showing the review")
