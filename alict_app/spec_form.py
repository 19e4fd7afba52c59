"""The specs page's form of common fields: each search group's predicates and each concat rule's string lists,
edited one per line and written back into the YAML editor as a minimal edit."""

from __future__ import annotations

from typing import Any

import streamlit as st
import yaml

from alict_app import specs_io
from alict_app.formatting import literal
from alict_core.common.hashing import hash_text


def _items(value: Any) -> list[Any]:
    """A spec field meant to be a list, or no items when it is not one (``search: 5``: the spec check says why)."""
    return value if isinstance(value, list) else []


def _one_per_line(lines: list[str]) -> bool:
    """Whether each item is one line the form gives back as it is: not empty, no line break (``splitlines``'
    breaks: ``\\n``, ``\\x85``, ``\\u2028``, …) and no padding (the form strips lines and drops blank ones: an empty
    postfix, ``"  now I love it!  "`` or ``"now I hate\\nit."`` came back changed without a word)."""
    return all(line and line == line.strip() and len(line.splitlines()) == 1 for line in lines)


def common_fields(data: Any) -> list[dict[str, Any]]:
    """The spec's common editable fields: each search group's predicates (one YAML item per line)
    and each concat rule's fixed string lists (prefixes, connectives, postfixes; one string per line). A field
    whose items the one-per-line view cannot hold is listed with ``editable`` False (edited in the YAML only)."""
    fields: list[dict[str, Any]] = []
    if not isinstance(data, dict):
        return fields
    for i, group in enumerate(_items(data.get("search"))):
        if isinstance(group, dict) and isinstance(group.get("predicates"), list):
            lines = [yaml.safe_dump(p, default_flow_style=True, width=10_000).strip() for p in group["predicates"]]
            fields.append({"path": ("search", i, "predicates"), "kind": "yaml", "editable": _one_per_line(lines),
                           "label": f"predicates of search group '{group.get('name', i)}'", "text": "\n".join(lines)})
    for i, rule in enumerate(_items(data.get("rules"))):
        parts = rule.get("concat") if isinstance(rule, dict) else None
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if isinstance(part, list) and all(isinstance(v, str) for v in part):
                role = "prefixes" if j == 0 else ("postfixes" if j == len(parts) - 1 else f"part {j + 1} strings")
                fields.append({"path": ("rules", i, "concat", j), "kind": "strings", "editable": _one_per_line(part),
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


def _field_value(item: dict[str, Any], entered: str) -> list[Any]:
    """The list a field's lines stand for (YAML items or plain strings), blank lines dropped."""
    lines = [line.strip() for line in entered.splitlines()]
    lines = [line for line in lines if line]
    return [_line_data(line) for line in lines] if item["kind"] == "yaml" else lines


def apply_form(editor_key: str, fields: list[dict[str, Any]], version: str) -> None:
    """Callback: write the form's fields back into the YAML editor text as a minimal edit (only the changed
    list items are rewritten; comments, quoting and the rest of the file stay as they are). A callback runs outside
    the page's error boundary: whatever goes wrong is one message, the editor's text is kept as it is."""
    from alict_core.common.limits import check_yaml_shape

    if hash_text(str(st.session_state.get(editor_key, "")), 10) != version:
        # the editor changed after the form was drawn (an edit sent with the press): its stale values would
        # overwrite that edit without a word
        st.session_state["form_error"] = ("the editor's text changed after this form was drawn, so the form was not "
                                          "applied (your edit is kept); the form now shows the new text: apply again")
        return
    try:
        check_yaml_shape(st.session_state[editor_key], "the spec")  # size and depth before any parse
        _apply_form(editor_key, fields, version)
    except Exception as exc:  # noqa: BLE001 - the YAML typed meanwhile has another shape (a key gone, a scalar
        # where a list was, nesting too deep): the whole page was Streamlit's redacted error box
        from alict_core.common.errors import AlictError

        reason = str(exc) if isinstance(exc, AlictError) else (
            f"the YAML no longer has the shape the form was made from ({type(exc).__name__})")
        st.session_state["form_error"] = f"the form was not applied: {reason}; check the editor's text first"


def _apply_form(editor_key: str, fields: list[dict[str, Any]], version: str) -> None:
    text = st.session_state[editor_key]
    for item in fields:
        entered = st.session_state.get(field_key(editor_key, item["path"], version))
        if not item.get("editable", True) or entered is None or entered == item["text"]:
            continue  # a field left as drawn is never rewritten (nor re-quoted, nor its comments lost)
        try:
            value = _field_value(item, entered)
        except (yaml.YAMLError, ValueError) as exc:
            st.session_state["form_error"] = f"{item['label']}: not valid YAML ({str(exc)[:200]})"
            return
        try:
            text = specs_io.replace_list(text, item["path"], value)
        except specs_io.KeptAsIs as exc:  # never the whole-file rewrite below: it drops every comment and anchor
            st.session_state["form_error"] = (f"{item['label']}: not applied, {exc}; edit it in the YAML (nothing "
                                              "was changed)")
            return
        except (KeyError, IndexError, ValueError, yaml.YAMLError):  # the YAML changed shape: rewrite it whole
            data = yaml_data(text)
            if not isinstance(data, dict):
                st.session_state["form_error"] = "the YAML changed and no longer parses; the form was not applied"
                return
            set_path(data, item["path"], value)
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    st.session_state[editor_key] = text


def common_fields_form(editor_key: str, text: str) -> None:
    """The form of the spec's common fields, with its "Apply to YAML" button (or why there is none)."""
    st.markdown("**Common fields**")
    data = yaml_data(text)
    fields = common_fields(data) if isinstance(data, dict) else []
    if not fields:
        st.caption("No predicates or concat string lists here (or the YAML does not parse).")
        return
    version = hash_text(text, 10)
    if specs_io.uses_anchors(text):
        st.caption("This spec shares lists through YAML anchors and aliases (&name / *name): edit them in the YAML "
                   "(the form would rewrite one place and break the other).")
        return
    fixed = [item["label"] for item in fields if not item.get("editable", True)]
    if fixed:
        st.caption("Edit in the YAML only (an empty, padded or multi-line item the one-per-line form cannot show as "
                   f"it is): {literal('; '.join(fixed))}.")
    if len(fixed) == len(fields):
        return
    with st.form(f"form::{editor_key}"):
        for item in fields:
            if not item.get("editable", True):
                continue
            st.text_area(literal(item["label"]) + " (one per line)", item["text"],  # a label renders Markdown
                         key=field_key(editor_key, item["path"], version),
                         height=68 + 20 * min(5, item["text"].count("\n")))
        st.form_submit_button("Apply to YAML", on_click=apply_form, args=(editor_key, fields, version))
    if st.session_state.get("form_error"):
        st.error(literal(st.session_state.pop("form_error")))
