"""The sidebar: task, corpus, models under test, and the status of every backend."""

from __future__ import annotations

import html
from urllib.parse import urlencode

import streamlit as st

from alict_app import backends, demo, state
from alict_app.formatting import TASK_TITLES, TASKS

CORPUS_NAMES = {"sentiment": "Stanford Sentiment Treebank (SST)", "hate_speech": "HateXplain"}
STATE_ICONS = {
    "loaded": "🟢", "built": "🔵", "registered": "🔵", "missing": "🟠", "not available": "⚪", "checking": "⏳",
}


def build_controls(row: dict[str, str]) -> None:
    """A 'Build' button for a missing offline model, and the build's log while it runs."""
    from alict_app import builds

    target = row["what"]
    if builds.is_running(target):
        st.caption(f"building {target} … (reload the page to refresh)")
        st.code(builds.log_tail(target) or "starting …", language="text")
    elif builds.exit_code(target) not in (None, 0):
        st.error(f"building {target} failed:\n\n{builds.log_tail(target)}")
    elif row["state"] == "missing":
        if st.button(f"Build {target} now", key=f"build::{target}", help=f"runs python -m alict_core build {target}"):
            builds.start_build(target)
            backends.refresh_status()
            st.rerun()


def model_label(name: str) -> str:
    tags = backends.backend_tags("model", name)
    if not tags.get("offline", True):
        return f"{name} (online)"
    return name if backends.model_ready(name) else f"{name} (not built)"


def render_sidebar() -> None:
    """Draw the sidebar widgets (they write to session state) and the backend status."""
    with st.sidebar:
        st.markdown("### ALiCT Studio")
        state.ensure_choice("task", TASKS)
        st.selectbox("Task", list(TASKS), key="task", format_func=lambda task: TASK_TITLES[task])
        task = state.get("task")
        st.caption(f"Corpus: {CORPUS_NAMES[task]}")
        from alict_core.harden.versions import register_all

        register_all(task)  # retrained versions are models too
        names = backends.backend_names("model", task=task)
        if names:
            ready = [n for n in names
                     if backends.backend_tags("model", n).get("offline", True) and backends.model_ready(n)]
            state.ensure_choices("models", names, default=ready[:2] or names[:1])
            st.multiselect("Models under test", names, key="models", format_func=lambda n: model_label(n),
                           help="registered models for this task; offline models that are not built yet are marked")
        else:
            st.caption("Models under test: none registered yet")
        with st.expander("Backends", expanded=False):
            for row in backends.backend_status():
                st.markdown(f"{STATE_ICONS.get(row['state'], '⚪')} **{row['what']}** — {row['state']}  \n"
                            f"<small>{html.escape(row['note'])}</small>", unsafe_allow_html=True)
                if not demo.enabled():  # demo mode builds nothing
                    build_controls(row)
        link = "?" + urlencode(state.query_state())  # values come from the URL: encoded, never raw HTML
        st.markdown(f"<small>:material/link: [Link to this view]({link})</small>", unsafe_allow_html=True,
                    help="the task, LC, seed, run, model and case of this view")
