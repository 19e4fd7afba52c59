"""Small shared widgets: LC picker, page header, download buttons (the run picker: ``alict_app.run_picker``)."""

from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from alict_app import runs, spec_store, state
from alict_app.formatting import literal
from alict_core.common.csvsafe import csv_text
from alict_core.runner.summary import unparsed_sentence
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


def unparsed_warning(key: str) -> bool:
    """A warning per model of run ``key`` whose answers could not be parsed (its passes there are the fallback
    label's: a run no answer of which was parsed said "No failures in this run."); True when there is one."""
    counts = runs.unparsed_answers(key)
    for model, count in counts.items():
        st.warning(f"{literal(unparsed_sentence(model, count))}.", icon=":material/warning:")
    return bool(counts)


def review_excluded_note(key: str) -> None:
    """How many cases rejected by human reviewers run ``key`` left out (fewer seeds per LC than asked for), as the
    CLI's `run` and the HTML report say it; nothing when none."""
    count = runs.review_excluded(key)
    if count:
        st.caption(f"{count} case(s) rejected by human reviewers were left out of this run (the Review page's "
                   "write-back; `run --include-rejected` shows them).")


def no_failures(message: str, unparsed: bool) -> None:
    """``message`` ("No failures in this run.") as a success, or, when answers of the run could not be parsed, as a
    note that those cases passed only as the model's fallback label."""
    if not unparsed:
        st.success(literal(message))
        return
    st.info(f"{literal(message[:-1])} — but answers that could not be parsed (above) were scored as the model's "
            "fallback label: those cases passed without an answer of the model.")


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
        st.warning(f"No LC specs found for task {literal(repr(task))} (looked in {literal(dirs)}).")
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
