"""The one run picker of the pages: the finished runs of the task (a note on the run-store folders left out),
chosen by name; the run shown last for a task is the one it returns to."""

from __future__ import annotations

from typing import Any

import streamlit as st

from alict_app import runs, state
from alict_app.formatting import TASK_TITLES, literal


def task_runs(task: str, include_unknown: bool = False) -> tuple[list[str], dict[str, str]]:
    """The finished runs of ``task`` (newest first; with ``include_unknown``, also runs whose task cannot be told)
    and the name each is shown by; says which run-store folders are left out (``copied_runs_note``)."""
    if include_unknown:
        available: list[dict[str, Any]] = [info for info in runs.list_runs()
                                           if info["request"].get("task") in (task, None)]
    else:
        available = runs.list_runs(task)
    copied_runs_note()
    labels = {r["key"]: runs.describe_run(r) for r in available}
    return list(labels), labels


RUNS_BY_TASK = "_alict_run_by_task"  # task -> the run last shown for it (the run picker returns to it)
SHOWN_RUN = "_alict_run_shown"  # the run the picker showed at its last draw
FELL_BACK = "_alict_run_fell_back"  # this rerun's picker replaced a run that is gone (see fell_back)


def _run_task(key: str) -> str | None:
    try:
        return runs.run_info(key)["request"].get("task")
    except (OSError, ValueError, KeyError):
        return None


def remember_run(task: str, run_id: str) -> None:
    """The run this session just finished (or loaded from the store) is the one the run picker shows next for
    ``task``, even when an older cached run is served and a newer one exists."""
    state.put("run", run_id)
    remembered = dict(st.session_state.get(RUNS_BY_TASK) or {})
    remembered[task] = run_id
    st.session_state[RUNS_BY_TASK] = remembered


def copied_runs_note() -> None:
    """Say which run-store folders are not listed because they hold another run (copied or renamed by hand: their
    meta.json names another id; `report <id>` refuses those ids the same way)."""
    copies = runs.copied_runs()
    if copies:
        shown = "; ".join(f"{literal(folder)} holds run {literal(held)}" for folder, held in list(copies.items())[:5])
        more = f" and {len(copies) - 5} more" if len(copies) > 5 else ""
        st.caption(f"Not listed: {len(copies)} run-store folder(s) copied or renamed by hand ({shown}{more}); "
                   "each holds another run than its name says. Open the run by the id it holds.")
    unreadable = runs.unreadable_runs()
    if unreadable:
        named = ", ".join(unreadable[:5]) + (f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
        note = (f"Not listed: {len(unreadable)} run-store folder(s) whose request.json / meta.json is not of the "
                f"expected shape (edited by hand?): {named}.")
        st.caption(literal(note))


def run_picker(task: str, none_hint: str = "start one on the **Run** page") -> str | None:
    """Select a finished run of ``task`` (state key ``run``, in the URL) by its name; None, with a hint, if none.

    A run of another task (left in state by a task switch) is never shown: the picker goes back to the run last
    shown for this task, else the newest. A run from a link whose task cannot be told (an old CLI run) is kept."""
    keys, labels = task_runs(task)
    current = state.get("run")
    if current and current not in keys and runs.is_done(current):
        resolved = runs.resolve(current)
        if resolved in labels:
            current = resolved
        elif resolved not in runs.unreadable_runs() and _run_task(resolved) is None:
            # a run whose task is unknown: keep it, named (one of the wrong shape is left out: the note names it)
            info = runs.run_info(resolved)
            labels[resolved] = runs.describe_run(info)
            keys.insert(0, resolved)
            current = resolved
    if not keys:
        st.session_state.pop("run", None)
        st.info(f"No finished run for the task {TASK_TITLES.get(task, task)} yet: {none_hint}.")
        return None
    unknown = linked_elsewhere = False
    if current not in keys:
        asked = str(current or "")
        unknown = bool(asked) and not runs.is_done(asked)  # a mistyped or deleted run in a link (not a task switch,
        # which leaves a finished run of the other task): said once, never a silent swap
        current = fallback_run(task, keys)
        shown = labels.get(current, current)
        linked_elsewhere = not unknown and asked != st.session_state.get(SHOWN_RUN) and other_task_note(asked, task,
                                                                                                       shown)
        if unknown:
            if asked == st.session_state.get(SHOWN_RUN):
                st.caption(f"The run {literal(repr(asked[:40]))} shown before is no longer here (removed or re-written "
                           f"since); showing {literal(shown)} instead.")
            else:
                st.caption(f"The run {literal(repr(asked[:40]))} named by the link is not a finished run here; showing "
                           f"{literal(shown)} instead.")
    st.session_state[FELL_BACK] = unknown or linked_elsewhere
    state.put("run", current)
    st.selectbox("Run", keys, key="run", format_func=lambda k: labels.get(k, k))
    note_shown(task, state.get("run"))
    return state.get("run")


def fallback_run(task: str, keys: list[str]) -> str:
    """The run a page shows when the one asked for is not among ``task``'s finished runs ``keys``: the run last shown
    for the task, else the newest."""
    remembered = (st.session_state.get(RUNS_BY_TASK) or {}).get(task)
    return remembered if remembered in keys else keys[0]


def note_shown(task: str, run_id: str) -> None:
    """Note that a page shows ``run_id`` for ``task`` now: the run the pages return to for the task, and the run a
    task switch leaves behind (not a link's: :func:`other_task_note` is not said for it)."""
    remembered = dict(st.session_state.get(RUNS_BY_TASK) or {})
    remembered[task] = run_id
    st.session_state[RUNS_BY_TASK] = remembered
    st.session_state[SHOWN_RUN] = run_id


def other_task_note(asked: str, task: str, shown: str) -> bool:
    """When ``asked`` (a run a link names) is a finished run of another task than ``task``, say so (choose that task
    in the sidebar to open it; ``shown`` is shown instead) and return True; else say nothing and return False."""
    if not asked or not runs.is_done(asked):
        return False
    owner = _run_task(runs.resolve(asked))
    if owner in (None, task):
        return False
    st.caption(f"The run {literal(repr(asked[:40]))} named by the link is a run of "
               f"{literal(TASK_TITLES.get(str(owner), str(owner)))}: choose that task in the sidebar to open it; "
               f"showing {literal(shown)} instead.")
    return True


def fell_back() -> bool:
    """Whether this rerun's picker replaced a run that is no longer there: a press taken on this rerun was made on
    the page of that run and must not act on the run shown instead."""
    return bool(st.session_state.get(FELL_BACK))
