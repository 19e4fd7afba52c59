"""The review page's store access, its kept notices (a press's outcome survives reruns from elsewhere) and the
form that samples a new review task from a finished run."""

from __future__ import annotations

from typing import Any

import streamlit as st

from alict_app import presses, run_picker, runs
from alict_app.formatting import literal
from alict_app.guard import show_error


def store(write: bool = False) -> Any:
    """The review store: read-only unless ``write`` (page views never write; clicks do)."""
    from alict_core.review import ReviewStore

    return ReviewStore(read_only=not write)


NOTICES = "_review_notices"  # where -> (task, kind, message or error): a press's outcome, kept (see keep_notice)


def keep_notice(where: str, suite_task: str, kind: str, message: str | BaseException) -> None:
    """Keep a press's outcome (``kind``: success, info or error) for ``show_notice``: drawn only in the press's
    run, a rerun from elsewhere (the sidebar's status probe resolving, a build landing) wiped it before it was read.
    It stays until the next press there (``drop_notice``) or a task switch."""
    st.session_state.setdefault(NOTICES, {})[where] = (suite_task, kind, message)


def drop_notice(where: str) -> None:
    st.session_state.get(NOTICES, {}).pop(where, None)


def show_notice(where: str, suite_task: str) -> None:
    kept = st.session_state.get(NOTICES, {}).get(where)
    if kept is None:
        return
    task, kind, message = kept
    if task != suite_task:
        drop_notice(where)
    elif isinstance(message, BaseException):
        show_error(message, "creating the review task" if where == "create" else "taking a set")
    else:
        getattr(st, kind)(message)


def create_task_form(suite_task: str) -> None:
    """Sample a new review task from one of the app's finished runs."""
    keys, labels = run_picker.task_runs(suite_task)
    if not keys:
        st.caption("Finish a run on the Run page (or use `python -m alict_core review sample`) to sample cases.")
        return
    menu = f"review_create_run_{suite_task}"
    # the runs the menu offered at its last draw stay offered: a run removed before the submit was reset to the first
    # option by Streamlit, and the task was sampled from a run the user never chose (pass 21, pages F4)
    offered = keys + [k for k in st.session_state.get(f"_offered::{menu}", []) if k not in keys]
    st.session_state[f"_offered::{menu}"] = keys
    with st.form("review_create"):
        # keyed: without a key the menu's identity held its options, so a run finished meanwhile by another session
        # reset the choice at the submit and the task was sampled from that newer run (pass 17, pages F4)
        key = st.selectbox("Run to sample from", offered, key=menu,
                           format_func=lambda k: labels.get(k, f"{k[:16]} (no longer there)"))
        name = st.text_input("Review task name", max_chars=100)
        c1, c2, c3, c4 = st.columns(4)
        size = c1.number_input("Seeds (0 = 95 % / 5 % size rule)", min_value=0, max_value=100_000, value=0)
        n_sets = c2.number_input("Sets", min_value=1, max_value=100, value=10)
        k = c3.number_input("Reviewers per case", min_value=1, max_value=10, value=2)
        seed = c4.number_input("Sampling seed", min_value=0, max_value=99_999, value=0)
        st.form_submit_button("Create review task", on_click=presses.note, args=("review_create",))
        if presses.take("review_create"):
            from alict_core.review import SamplingPlan, create_review_task, load_cases

            if key is None or key not in labels:
                keep_notice("create", suite_task, "error", f"The run you chose ({literal(str(key)[:16])}) is no "
                            "longer there (removed or re-written meanwhile): nothing was created; choose a run again.")
                return
            if not name.strip():
                keep_notice("create", suite_task, "error", "Give the review task a name.")
                return
            plan = SamplingPlan(size=int(size) or None, n_sets=int(n_sets), k=int(k), seed=int(seed))
            try:
                task, summary = create_review_task(lambda: store(write=True), name.strip(), suite_task,
                                                   load_cases(runs.run_dir(key)), plan)
            except Exception as exc:  # noqa: BLE001 - shown by show_notice, like guarded() would, but kept
                keep_notice("create", suite_task, "error", exc)
                return
            st.session_state["review"] = task.name
            keep_notice("create", suite_task, "success",
                        f"Review task {literal(repr(task.name))}: {summary['n_seeds']} seeds + "
                        f"{summary['n_expansions']} expansions in {summary['n_sets']} sets, sampled from run "
                        f"{literal(labels[key])}.")
            st.rerun()  # the page's task menus are drawn above this form: redraw them with the new task
