"""Specs page: list the task's LC specs, edit one (YAML + form), live counts, save, diff."""

from __future__ import annotations

import streamlit as st

from alict_app import sidebar, spec_editor, spec_form, spec_store, specs_io, state, widgets
from alict_app.guard import run_page


def main() -> None:
    widgets.header("LC specs", "Linguistic-capability specifications: search rules, predicates, expected behaviour.",
                   shows_cases=False)
    sidebar.models_pending_notice()  # a fresh machine: what works while the offline models build
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    saved = st.session_state.pop(spec_editor.SAVED, None)
    if saved and saved["lc"] in {s.id for s in specs}:
        state.put("lc", saved["lc"])  # the saved spec, now in the list, is the one being edited
    st.dataframe(widgets.spec_table(specs), hide_index=True, width="stretch", height=min(400, 38 + 35 * len(specs)))
    spec = widgets.lc_picker(specs, "Edit LC spec")
    original = spec_store.spec_text(spec)
    shipped = spec_store.builtin_text(spec)
    editor_key = f"spec_yaml::{task}::{spec.id}"
    drafts = st.session_state.setdefault("spec_drafts", {})
    if editor_key not in st.session_state:
        st.session_state[editor_key] = drafts.get(editor_key, original)
    spec_editor.opened_from(editor_key, original)  # the file as this session saw it: a save checks it is unchanged

    left, right = st.columns([3, 2])
    with left:
        st.text_area("Spec YAML (Ctrl+Enter to apply)", key=editor_key, height=460)
        text = st.session_state[editor_key]
        drafts[editor_key] = text
        parsed = spec_editor.checked_spec(spec, text)
        st.button("Revert to the file on disk", on_click=spec_editor.revert_editor, args=(editor_key, spec))
    with right:
        spec_form.common_fields_form(editor_key, text)
        spec_editor.live_counts(parsed)

    with st.expander("Diff against the built-in spec", expanded=text != original):
        diff = specs_io.unified_diff(shipped if shipped is not None else "", text, f"{spec.id}.yaml")
        st.code(diff or "(no changes)", language="diff")
    spec_editor.save_section(task, spec, shipped, editor_key, text, parsed, saved)


def page() -> None:
    main()
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if specs:
        spec_editor.fidelity_section(task, specs)


run_page(page, "showing the specs")
