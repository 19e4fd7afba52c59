"""The specs page's panels around the YAML editor: the validity check, live counts, saving, the fidelity table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from alict_app import artefacts, presses, spec_store, specs_io
from alict_app.formatting import literal
from alict_app.guard import guarded
from alict_core.common.hashing import hash_text

SAVED = "_alict_spec_saved"  # {"lc", "path"} of the spec just saved (shown after the page is redrawn)


BASES = "spec_bases"  # editor key -> the spec file's text when this session opened (or last saved, reverted) it


def opened_from(editor_key: str, original: str) -> None:
    """Remember the text of the file the editor ``editor_key`` was opened from (the first time only)."""
    st.session_state.setdefault(BASES, {}).setdefault(editor_key, original)


def reset_editor(editor_key: str, original: str) -> None:
    st.session_state[editor_key] = original
    st.session_state.setdefault(BASES, {})[editor_key] = original


def revert_editor(editor_key: str, spec: Any) -> None:
    """Callback of "Revert to the file on disk": the file as it is at the press (the text of the last draw was
    stale when another session had saved since)."""
    try:
        text = spec_store.spec_text(spec)
    except (OSError, UnicodeDecodeError):  # gone or unreadable since: the page's redraw says what is there now
        return
    reset_editor(editor_key, text)


DISCARD_REFUSED = "_alict_spec_discard_refused"  # editor key -> why "Discard my copy" deleted nothing


def discard_copy(spec: Any, editor_key: str) -> None:
    """Delete the user's workspace copy; the editor shows the built-in again. A copy changed since this session
    opened it (another session saved it) is kept, and the page says so: the discard deleted that save unseen."""
    source = spec_store.spec_source(spec)
    if source is not None and changed_since_opened(source, editor_key):
        st.session_state.setdefault(DISCARD_REFUSED, {})[editor_key] = (
            f"{source.name} changed on disk since you opened it (saved from another session or by hand), so it was "
            "not discarded. Press “Revert to the file on disk” to see it as it is now, then discard it if you still "
            "want to.")
        return
    spec_store.discard_user_copy(spec)
    st.session_state.pop(editor_key, None)
    st.session_state.get("spec_drafts", {}).pop(editor_key, None)
    st.session_state.get(BASES, {}).pop(editor_key, None)


def changed_since_opened(target: Any, editor_key: str) -> bool:
    """Whether the spec's own workspace file ``target`` now differs from the text this session opened (another
    session, or a hand edit, saved it since): an overwrite would replace that change unseen."""
    base = st.session_state.get(BASES, {}).get(editor_key)
    try:
        current = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False  # no file (nothing to lose), or one the save names itself
    return base is not None and current.rstrip("\n") != base.rstrip("\n")


def checked_spec(spec: Any, text: str) -> Any:
    """The editor's text parsed as a spec (shown valid), or None (the problem shown at its line)."""
    source = spec_store.spec_source(spec)
    try:
        parsed = spec_store.parse_spec_text(text, source.name if source else f"{spec.id}.yaml")
    except Exception as exc:  # noqa: BLE001 - shown inline below
        show_problem(text, exc)
        return None
    st.success("Spec is valid.", icon=":material/check_circle:")
    return parsed


def show_problem(text: str, problem: Exception) -> None:
    """The spec error at its line and field, the YAML around it, and any further errors."""
    line = specs_io.error_line(problem)
    where = f"line {line}" if line else "spec"
    field = getattr(problem, "field", None)
    at_field = f", field {literal(field)}" if field else ""
    st.error(f"Spec error at {where}{at_field}: {literal(problem)}", icon=":material/warning:")
    st.markdown(specs_io.annotated_yaml_html(text, line, str(problem)), unsafe_allow_html=True)
    others = getattr(problem, "others", None) or []
    if others:
        st.markdown("**Also:**\n" + "\n".join(
            f"- {literal('line ' + str(o['line']) if o.get('line') else 'spec')}"
            f"{literal(', field ' + o['field']) if o.get('field') else ''}: {literal(o['message'])}" for o in others))


def live_counts(parsed: Any) -> None:
    """How many corpus sentences the (valid) spec matches, and its seeds."""
    st.markdown("**Live counts**")
    if parsed is None:
        st.caption("Fix the spec to see counts.")
        return
    with guarded("counting matches and seeds"), st.spinner("Searching the corpus …"):
        seedset = artefacts.seed_set(parsed)
        c1, c2 = st.columns(2)
        c1.metric("matches", getattr(seedset, "n_matches", len(seedset.seeds)))
        c2.metric("seeds", len(seedset.seeds))


def save_section(task: str, spec: Any, shipped: str | None, editor_key: str, text: str, parsed: Any,
                 saved: dict[str, str] | None) -> None:
    """Where a save goes, the discard button of a workspace copy, the file name and the save button."""
    st.markdown("**Save**")
    where = "your workspace copy" if spec_store.is_user_spec(spec) else "the built-in spec (read-only)"
    st.caption(f"Showing {where}. Saving writes to the specs/{literal(task)}/ folder of your workspace (the "
               "server's ALICT_WORKSPACE_DIR; no server path is shown); a workspace spec replaces the built-in of "
               "the same id.")
    if spec_store.is_user_spec(spec):
        d1, d2 = st.columns([2, 3])
        sure = d2.checkbox("Yes, delete my copy" + (" (the spec is gone: no built-in has this id)"
                                                     if shipped is None else ""), key=f"discard_ok::{editor_key}")
        d1.button("Discard my copy" + (" (back to the built-in)" if shipped is not None else ""), disabled=not sure,
                  on_click=discard_copy, args=(spec, editor_key), key=f"discard::{editor_key}",
                  help="tick “Yes, delete my copy” first: a discarded copy cannot be brought back")
        refused = st.session_state.get(DISCARD_REFUSED, {}).pop(editor_key, None)
        if refused:
            st.error(literal(refused))
    c1, c2, c3 = st.columns([2, 1, 1])
    name = c1.text_input("File name (letters, digits, _ and -)", value=spec.id, key=f"save_name::{editor_key}")
    overwrite = c2.checkbox("Overwrite if it exists", key=f"save_overwrite::{editor_key}")
    c3.button("💾 Save spec", disabled=parsed is None, key=f"save::{editor_key}", on_click=presses.note,
              args=(f"spec_save::{editor_key}",))
    if presses.take(f"spec_save::{editor_key}"):  # noted by the callback: a return value can lose the press
        with guarded("saving the spec"):
            save(task, name, text, parsed.id, overwrite, opened=(spec.id, editor_key), spec_task=parsed.task)
    if saved:
        st.success(f"Saved {literal(Path(saved['path']).name)} to your workspace (specs/{literal(task)}/)")


def save(task: str, name: str, text: str, spec_id: str, overwrite: bool,
         opened: tuple[str, str] | None = None, spec_task: str | None = None) -> None:
    """Save the editor's text into the workspace (the core checks name and overwrite), then redraw the page.
    ``opened``: (the edited spec's id, its editor key): an overwrite of that spec's own workspace file is refused
    when the file changed since this session opened it (two editors of one spec: the later save replaced the
    earlier one unseen)."""
    directory = spec_store.save_dir(task)
    target = specs_io.spec_target(directory, name)
    refusal = specs_io.save_refusal(target, spec_id, overwrite, spec_task, task)
    if refusal is None and opened is not None and target == specs_io.spec_target(directory, opened[0]) \
            and changed_since_opened(target, opened[1]):
        refusal = ("error", f"{literal(target.name)} changed on disk since you opened it (saved from another "
                            "session or by hand); saving now would replace that change unseen. Nothing was saved. "
                            "Your text stays in the editor: copy it, press “Revert to the file on disk” to see the "
                            "file as it is now, then apply your change again.")
    if refusal is not None:
        kind, message = refusal
        (st.error if kind == "error" else st.warning)(message)
        return
    path = specs_io.save_spec_text(directory, name, text, overwrite=overwrite)
    if opened is not None:
        st.session_state.setdefault(BASES, {})[opened[1]] = text  # this session's own save is what it has seen
    st.session_state[SAVED] = {"lc": spec_id, "path": str(path)}
    st.session_state.get("spec_drafts", {}).pop(f"spec_yaml::{task}::{spec_id}", None)
    st.rerun()  # redraw from the top: the list and the picker include the saved spec


@st.cache_data(show_spinner=False, max_entries=8)
def fidelity_records(task: str, key: str, _specs: tuple) -> list[dict[str, Any]]:
    """Fidelity rows of the task's specs (cached per task and spec contents)."""
    from alict_core.analysis.fidelity import as_records, fidelity_rows

    return as_records(fidelity_rows(list(_specs), artefacts.corpus(task)))


def fidelity_section(task: str, specs: list) -> None:
    """Per LC: our seed counts beside the paper's (TOSEM Tables 8/9) and the validity-check flags."""
    with st.expander("Fidelity to the paper (seed counts and validity checks)"):
        st.caption("ours: distinct seeds on the whole corpus (concat LCs: combinations); sampled: seeds under the "
                   "spec's cap; flagged: sampled seeds the validity checks flag (excluded from runs by default). "
                   "Extensions are LCs the project adds beyond the paper.")
        if not st.button("Count every LC", key=f"fidelity::{task}"):
            return
        with guarded("counting seeds for the fidelity table"), st.spinner("Counting every LC on the corpus …"):
            key = hash_text("".join(s.model_dump_json() for s in specs), 16)
            records = fidelity_records(task, key, tuple(specs))
            import pandas as pd

            frame = pd.DataFrame(records)[["lc_id", "title", "extension", "paper_seeds", "ours", "exact", "ratio",
                                           "sampled", "flagged", "flagged_reasons", "paper_expansions"]]
            st.dataframe(frame, hide_index=True, width="stretch")
