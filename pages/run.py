"""Run page: choose models (registered and user-added) and LCs; run with progress; cancel; summary."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from alict_app import backends, run_monitor, run_view, state, widgets
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page
from alict_app.reporting import as_uploaded
from alict_app.user_models import FIELD_CHARS, LABEL_CHARS, default_label, look_alike_label, user_model_problem
from alict_core.common import trust
from alict_core.common.errors import AlictError
from alict_core.models.refs import user_kinds


def chosen_models(task: str) -> list[dict]:
    """Registered models chosen in the sidebar plus the user-added models ticked here."""
    refs = [{"name": name, "kwargs": {}, "label": name} for name in state.get("models", []) or []]
    for ref in st.session_state.get("user_models", []):
        if ref["task"] == task:
            state.keep(f"use::{task}::{ref['label']}", True)  # unticked stays unticked across a visit elsewhere
            if st.session_state.get(f"use::{task}::{ref['label']}", True):
                refs.append(ref)
    return refs


def add_user_model(task: str) -> None:
    kind = user_kinds()[st.session_state["um_kind"]]  # the kinds and their fields: the model registry's entries
    kwargs = {p.name: st.session_state.get(f"um_{p.name}", "").strip() for p in kind.params}
    problem = user_model_problem(kwargs, st.session_state.get("um_label", "").strip())
    if problem:  # before an upload is saved
        st.session_state["um_problem"] = problem
        return
    upload = st.session_state.get("um_upload") if kind.name == "static" else None
    if upload is not None and kwargs.get("path"):  # the upload won silently over the path typed beside it
        st.session_state["um_problem"] = ("give either a path or an uploaded file, not both: clear the path field, "
                                          "or remove the upload (×)")
        return
    shown = dict(kwargs)  # what a default display name may say: the user's own values, never a server path
    if upload is not None:
        try:  # a callback: an error raised here would escape the page's error boundary
            kwargs["path"] = str(trust.save_upload(upload.name, upload.getvalue()))
        except AlictError as exc:  # over the size limit: nothing stored
            st.session_state["um_problem"] = str(exc)
            return
        stored = Path(kwargs["path"]).name  # the stored copy's content-hash name
        own = Path(str(upload.name)).name
        shown["path"] = own if user_model_problem({}, f"{kind.name}:{own}") is None else stored
    empty = [field for field, value in kwargs.items() if not value]
    if empty:
        st.session_state["um_problem"] = f"fill in {', '.join(empty)} to add a {kind.tags['user_kind']}"
        return
    given = st.session_state.get("um_label", "").strip()
    label = given or default_label(kind.name, next(iter(shown.values())))
    mine = [m for m in st.session_state.get("user_models", []) if m["task"] == task]
    same = next((m for m in mine if m["label"] == label), None)
    other = same is not None and (same["name"], {k: same["kwargs"].get(k) for k in kwargs}) != (kind.name, kwargs)
    if other and not given:  # two endpoints told apart by their query (or chat model) only: the second replaced the
        why = "it is the file's name only" if upload is not None else "it leaves out the URL's query and the chat model"
        st.session_state["um_problem"] = (f"your model {label[:60]!r} already has this default name ({why}); give "
                                          "this one a display name")
        return  # first without a word
    twin = look_alike_label(label, [m["label"] for m in mine])
    if twin is not None:  # 'mine', 'MINE' and 'ｍine' ran as three models of one run
        st.session_state["um_problem"] = (f"the display name {label[:40]!r} reads like your model {twin!r}; give "
                                          "another display name (or the same one to replace that model)")
        return
    kwargs["task"] = task  # the trust model checks these arguments when the model is loaded (backends.model_from_ref)
    st.session_state["um_pending"] = {"name": kind.name, "kwargs": {**kwargs, "name": label}, "label": label,
                                      "task": task, **({"upload": str(upload.name)} if upload is not None else {})}


def user_model_form(task: str) -> None:
    with st.expander("Add your own model (Hugging Face path/id, endpoint, stored predictions)"):
        entries = user_kinds()
        kind = st.selectbox("Kind", list(entries), key="um_kind", format_func=lambda k: entries[k].tags["user_kind"])
        for param in entries[kind].params:
            st.text_input(param.name, key=f"um_{param.name}", placeholder=param.hint, max_chars=FIELD_CHARS)
        if kind == "static":
            st.file_uploader("… or upload the predictions file", type=["csv", "jsonl", "json"], key="um_upload")
        st.text_input("Display name", key="um_label", placeholder="my-model", max_chars=LABEL_CHARS)
        st.button("Add model", on_click=add_user_model, args=(task,))
        if st.session_state.get("um_problem"):
            st.error(literal(st.session_state.pop("um_problem")))
        pending = st.session_state.pop("um_pending", None)
        if pending:
            with guarded(f"loading model {pending['label']}"):
                upload_name = pending.pop("upload", None)
                try:
                    backends.model_from_ref(pending)  # fails here, with a clear message, if unusable
                except AlictError as exc:
                    if upload_name is None:
                        raise
                    # the stored copy's content-hash name is no name the user knows: the file they chose is named
                    raise AlictError(as_uploaded(str(exc), Path(pending["kwargs"]["path"]), upload_name)) from None
                models = [m for m in st.session_state.get("user_models", [])  # the other task's model of that
                          if (m["label"], m["task"]) != (pending["label"], pending["task"])]  # name stays
                st.session_state["user_models"] = [*models, pending]
                st.success(f"Added {literal(pending['label'])}")
        for ref in st.session_state.get("user_models", []):
            if ref["task"] == task:
                state.keep(f"use::{task}::{ref['label']}", True)  # ticked when added; kept across pages
                st.checkbox(f"use {literal(ref['label'])} ({literal(ref['name'])})",  # labels: Markdown
                            key=f"use::{task}::{ref['label']}")


OFFERED_LCS = "_alict_run_lcs_offered"  # an LC chosen from the menu whose spec is gone at the press is said


def main() -> None:
    widgets.header("Run", "Run the models under test on seeds (and accepted expansions) of the chosen LCs.",
                   shows_cases=False)
    run_monitor.section()  # runs in progress (app or CLI): per-shard progress, attach
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    ids = [s.id for s in specs]
    state.keep("run_lcs")
    state.follow_task("run_lcs", task)  # a task switch and back: this task's choice, as it was left (before `gone`:
    offered = st.session_state.get(OFFERED_LCS) or {}  # an LC removed meanwhile is said) task -> the LC ids offered
    gone = [lc for lc in st.session_state.get("run_lcs") or [] if lc in offered.get(task, ()) and lc not in ids]
    st.session_state[OFFERED_LCS] = {**offered, task: ids}
    if gone:  # chosen, then its spec removed (another session's "Discard my copy"): said, never dropped silently
        st.warning(f"No longer there: {literal(', '.join(map(str, gone)))} (the spec was removed since the page was "
                   "drawn); taken off the LCs to run.")
    state.ensure_choices("run_lcs", ids, default=ids)
    by_id = {s.id: s for s in specs}
    st.multiselect("LCs to run", ids, key="run_lcs", format_func=lambda lc_id: widgets.lc_label(by_id[lc_id]))
    user_model_form(task)
    refs = chosen_models(task)
    st.caption("Models: " + (literal(", ".join(r["label"] for r in refs)) or "none — pick models in the sidebar"))
    chosen, request = run_view.request_form(task, specs, refs)
    run_view.run_section(task, request, chosen, lcs_gone=bool(gone) or run_view.suites_gone())


run_page(main, "running the tests")
