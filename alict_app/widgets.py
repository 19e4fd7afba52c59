"""Small shared widgets: LC picker, page header, download buttons."""

from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from alict_app import runs, spec_store, state
from alict_app.formatting import TASK_TITLES
from alict_core.common.csvsafe import csv_text
from alict_core.tasks import HATE_SPEECH

CONTENT_NOTE = ("Content note: the hate-speech task shows real posts from HateXplain and sentences built from them, "
                "including slurs, insults and threats against groups of people. They are test cases, quoted to show "
                "what the models get wrong.")


def header(title: str, caption: str, shows_cases: bool = True) -> None:
    """The page title and what the page is for; on the hate-speech task, a content note before any case text."""
    st.title(title)
    st.caption(caption)
    if shows_cases and state.get("task") == HATE_SPEECH.name:
        st.warning(CONTENT_NOTE, icon=":material/report:")


def lc_picker(specs: Sequence[Any], label: str = "Linguistic capability") -> Any:
    """Select one LC (state key ``lc``, shared by pages and the URL); return its spec."""
    ids = [s.id for s in specs]
    by_id = {s.id: s for s in specs}
    state.ensure_choice("lc", ids)
    st.selectbox(label, ids, key="lc", format_func=lambda lc_id: lc_label(by_id[lc_id]))
    return by_id[state.get("lc")]


def lc_label(spec: Any) -> str:
    """How a menu names an LC: its id and its title (the name a reader knows it by), cut at 90 characters."""
    text = getattr(spec, "title", "") or getattr(spec, "description", "") or getattr(spec, "capability", "")
    return f"{spec.id} — {text[:90]}" if text else spec.id


def task_specs_or_stop(task: str) -> list[Any]:
    """The task's specs, or a warning and an empty list."""
    specs = spec_store.task_specs(task)
    if not specs:
        dirs = ", ".join(str(d) for d in spec_store.spec_dirs(task))
        st.warning(f"No LC specs found for task {task!r} (looked in {dirs}).")
    return specs


def spec_table(specs: Sequence[Any]):
    import pandas as pd

    rows = []
    for spec in specs:
        rows.append({
            "id": spec.id,
            "capability": getattr(spec, "capability", ""),
            "test type": getattr(spec, "test_type", "") or getattr(getattr(spec, "expected", None), "kind", ""),
            "title": getattr(spec, "title", ""),
            "extension": bool(getattr(spec, "is_extension", False)),  # beyond the paper's LCs
            "description": " ".join(str(getattr(spec, "description", "")).split()),
        })
    return pd.DataFrame(rows)


def download_frame(frame, stem: str, key: str) -> None:
    """CSV and JSONL download buttons for a DataFrame (generated only when clicked)."""
    cols = st.columns(2)
    cols[0].download_button("⬇ CSV", lambda: csv_text(frame), f"{stem}.csv", "text/csv", key=f"{key}-csv",
                            on_click="ignore")
    cols[1].download_button("⬇ JSONL", lambda: frame.to_json(orient="records", lines=True, force_ascii=False),
                            f"{stem}.jsonl", "application/jsonl", key=f"{key}-jsonl", on_click="ignore")


RUNS_BY_TASK = "_alict_run_by_task"  # task -> the run last shown for it (the run picker returns to it)


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
        shown = "; ".join(f"{folder} holds run {held}" for folder, held in list(copies.items())[:5])
        more = f" and {len(copies) - 5} more" if len(copies) > 5 else ""
        st.caption(f"Not listed: {len(copies)} run-store folder(s) copied or renamed by hand ({shown}{more}); "
                   "each holds another run than its name says. Open the run by the id it holds.")


def run_picker(task: str, none_hint: str = "start one on the **Run** page") -> str | None:
    """Select a finished run of ``task`` (state key ``run``, in the URL) by its name; None, with a hint, if none.

    A run of another task (left in state by a task switch) is never shown: the picker goes back to the run last
    shown for this task, else the newest. A run from a link whose task cannot be told (an old CLI run) is kept."""
    available = runs.list_runs(task)
    labels = {r["key"]: runs.describe_run(r) for r in available}
    keys = list(labels)
    copied_runs_note()
    current = state.get("run")
    if current and current not in keys and runs.is_done(current):
        resolved = runs.resolve(current)
        if resolved in labels:
            current = resolved
        elif _run_task(resolved) is None:  # a run whose task is unknown: keep it, named
            info = runs.run_info(resolved)
            labels[resolved] = runs.describe_run(info)
            keys.insert(0, resolved)
            current = resolved
    if not keys:
        st.session_state.pop("run", None)
        st.info(f"No finished run for the task {TASK_TITLES.get(task, task)} yet: {none_hint}.")
        return None
    remembered = dict(st.session_state.get(RUNS_BY_TASK) or {})
    if current not in keys:
        current = remembered.get(task) if remembered.get(task) in keys else keys[0]
    state.put("run", current)
    st.selectbox("Run", keys, key="run", format_func=lambda k: labels.get(k, k))
    remembered[task] = state.get("run")
    st.session_state[RUNS_BY_TASK] = remembered
    return state.get("run")
