"""Specs page: list the task's LC specs, edit one (YAML + form), live counts, save, diff."""

from __future__ import annotations

from typing import Any

import streamlit as st
import yaml

from alict_app import artefacts, presses, sidebar, spec_store, specs_io, state, widgets
from alict_app.guard import guarded, run_page
from alict_core.common.hashing import hash_text

SAVED = "_alict_spec_saved"  # {"lc", "path"} of the spec just saved (shown after the page is redrawn)


def common_fields(data: Any) -> list[dict[str, Any]]:
    """The spec's common editable fields: each search group's predicates (one YAML item per line)
    and each concat rule's fixed string lists (prefixes, connectives, postfixes; one string per line)."""
    fields: list[dict[str, Any]] = []
    if not isinstance(data, dict):
        return fields
    for i, group in enumerate(data.get("search") or []):
        if isinstance(group, dict) and isinstance(group.get("predicates"), list):
            lines = [yaml.safe_dump(p, default_flow_style=True, width=10_000).strip() for p in group["predicates"]]
            fields.append({"path": ("search", i, "predicates"), "kind": "yaml",
                           "label": f"predicates of search group '{group.get('name', i)}'", "text": "\n".join(lines)})
    for i, rule in enumerate(data.get("rules") or []):
        parts = rule.get("concat") if isinstance(rule, dict) else None
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if isinstance(part, list) and all(isinstance(v, str) for v in part):
                role = "prefixes" if j == 0 else ("postfixes" if j == len(parts) - 1 else f"part {j + 1} strings")
                fields.append({"path": ("rules", i, "concat", j), "kind": "strings",
                               "label": f"{role} of rule '{rule.get('name', i)}'", "text": "\n".join(part)})
    return fields


def set_path(data: Any, path: tuple, value: Any) -> None:
    for step in path[:-1]:
        data = data[step]
    data[path[-1]] = value


def field_key(editor_key: str, path: tuple, version: str) -> str:
    """Widget key of one form field; ``version`` (a hash of the YAML) resets the form when the YAML changes."""
    return f"form::{editor_key}::{version}::{'/'.join(map(str, path))}"


def yaml_data(text: str) -> Any:
    """The editor's YAML as data for the form, or None: checked for size, depth and aliases first (the spec
    loader's shape check), so deep or bomb-like YAML typed into the editor is never built."""
    from alict_core.common.errors import AlictError
    from alict_core.common.limits import check_yaml_shape

    try:
        check_yaml_shape(text, "spec")
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, AlictError, ValueError):  # ValueError: an int over 4,300 digits
        return None


def _line_data(line: str) -> Any:
    """One predicate line of the form as data (shape-checked like the whole spec)."""
    data = yaml_data(line)
    if data is None and line.strip() not in ("null", "~", ""):
        raise ValueError("too large, too deep or not YAML")
    return data


def apply_form(editor_key: str, fields: list[dict[str, Any]], version: str) -> None:
    """Callback: write the form's fields back into the YAML editor text as a minimal edit (only the changed
    list items are rewritten; comments, quoting and the rest of the file stay as they are)."""
    text = st.session_state[editor_key]
    for item in fields:
        entered = st.session_state.get(field_key(editor_key, item["path"], version), "")
        lines = [line.strip() for line in entered.splitlines()]
        lines = [line for line in lines if line]
        try:
            value = [_line_data(line) for line in lines] if item["kind"] == "yaml" else lines
        except (yaml.YAMLError, ValueError) as exc:
            st.session_state["form_error"] = f"{item['label']}: not valid YAML ({str(exc)[:200]})"
            return
        try:
            text = specs_io.replace_list(text, item["path"], value)
        except (KeyError, IndexError, ValueError, yaml.YAMLError):  # the YAML changed shape: rewrite it whole
            data = yaml_data(text)
            if not isinstance(data, dict):
                st.session_state["form_error"] = "the YAML changed and no longer parses; the form was not applied"
                return
            set_path(data, item["path"], value)
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    st.session_state[editor_key] = text


def reset_editor(editor_key: str, original: str) -> None:
    st.session_state[editor_key] = original


def discard_copy(spec: Any, editor_key: str) -> None:
    """Delete the user's workspace copy; the editor shows the built-in again."""
    spec_store.discard_user_copy(spec)
    st.session_state.pop(editor_key, None)
    st.session_state.get("spec_drafts", {}).pop(editor_key, None)


def main() -> None:
    widgets.header("LC specs", "Linguistic-capability specifications: search rules, predicates, expected behaviour.",
                   shows_cases=False)
    sidebar.models_pending_notice()  # a fresh machine: what works while the offline models build
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    saved = st.session_state.pop(SAVED, None)
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

    left, right = st.columns([3, 2])
    with left:
        st.text_area("Spec YAML (Ctrl+Enter to apply)", key=editor_key, height=460)
        text = st.session_state[editor_key]
        drafts[editor_key] = text
        source = spec_store.spec_source(spec)
        parsed, problem = None, None
        try:
            parsed = spec_store.parse_spec_text(text, source.name if source else f"{spec.id}.yaml")
        except Exception as exc:  # noqa: BLE001 - shown inline below
            problem = exc
        if problem is not None:
            line = specs_io.error_line(problem)
            where = f"line {line}" if line else "spec"
            field = getattr(problem, "field", None)
            st.error(f"Spec error at {where}{f', field {field}' if field else ''}: {problem}",
                     icon=":material/warning:")
            st.markdown(specs_io.annotated_yaml_html(text, line, str(problem)), unsafe_allow_html=True)
            others = getattr(problem, "others", None) or []
            if others:
                st.markdown("**Also:**\n" + "\n".join(
                    f"- {'line ' + str(o['line']) if o.get('line') else 'spec'}"
                    f"{', field ' + o['field'] if o.get('field') else ''}: {o['message']}" for o in others))
        else:
            st.success("Spec is valid.", icon=":material/check_circle:")
        st.button("Revert to the file on disk", on_click=reset_editor, args=(editor_key, original))
    with right:
        st.markdown("**Common fields**")
        data = yaml_data(text)
        fields = common_fields(data) if isinstance(data, dict) else []
        if fields:
            version = hash_text(text, 10)
            with st.form(f"form::{editor_key}"):
                for item in fields:
                    st.text_area(item["label"] + " (one per line)", item["text"],
                                 key=field_key(editor_key, item["path"], version),
                                 height=68 + 20 * min(5, item["text"].count("\n")))
                st.form_submit_button("Apply to YAML", on_click=apply_form, args=(editor_key, fields, version))
            if st.session_state.get("form_error"):
                st.error(st.session_state.pop("form_error"))
        else:
            st.caption("No predicates or concat string lists here (or the YAML does not parse).")
        st.markdown("**Live counts**")
        if parsed is not None:
            with guarded("counting matches and seeds"), st.spinner("Searching the corpus …"):
                seedset = artefacts.seed_set(parsed)
                c1, c2 = st.columns(2)
                c1.metric("matches", getattr(seedset, "n_matches", len(seedset.seeds)))
                c2.metric("seeds", len(seedset.seeds))
        else:
            st.caption("Fix the spec to see counts.")

    with st.expander("Diff against the built-in spec", expanded=text != original):
        diff = specs_io.unified_diff(shipped if shipped is not None else "", text, f"{spec.id}.yaml")
        st.code(diff or "(no changes)", language="diff")

    st.markdown("**Save**")
    where = "your workspace copy" if spec_store.is_user_spec(spec) else "the built-in spec (read-only)"
    st.caption(f"Showing {where}. Saving writes to your workspace `{spec_store.save_dir(task)}` "
               "(set ALICT_WORKSPACE_DIR to move it); a workspace spec replaces the built-in of the same id.")
    if spec_store.is_user_spec(spec):
        st.button("Discard my copy" + (" (back to the built-in)" if shipped is not None else ""),
                  on_click=discard_copy, args=(spec, editor_key), key=f"discard::{editor_key}")
    c1, c2, c3 = st.columns([2, 1, 1])
    name = c1.text_input("File name (letters, digits, _ and -)", value=spec.id, key=f"save_name::{editor_key}")
    directory = spec_store.save_dir(task)
    overwrite = c2.checkbox("Overwrite if it exists", key=f"save_overwrite::{editor_key}")
    c3.button("💾 Save spec", disabled=problem is not None, key=f"save::{editor_key}", on_click=presses.note,
              args=(f"spec_save::{editor_key}",))
    if presses.take(f"spec_save::{editor_key}"):  # noted by the callback: a return value can lose the press
        with guarded("saving the spec"):
            target = specs_io.spec_target(directory, name)
            if target.stem != parsed.id:
                st.error(f"The file name must equal the spec's id ({parsed.id!r}): change `id:` in the YAML "
                         f"to save it as a new LC, or save it as {parsed.id}.")
            elif target.exists() and not overwrite:
                st.warning(f"{target.name} exists — tick 'Overwrite if it exists' to replace it.")
            else:
                path = specs_io.save_spec_text(directory, name, text, overwrite=overwrite)
                st.session_state[SAVED] = {"lc": parsed.id, "path": str(path)}
                st.session_state.get("spec_drafts", {}).pop(f"spec_yaml::{task}::{parsed.id}", None)
                st.rerun()  # redraw from the top: the list and the picker include the saved spec
    if saved:
        st.success(f"Saved {saved['path']}")


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


def page() -> None:
    main()
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if specs:
        fidelity_section(task, specs)


run_page(page, "showing the specs")
