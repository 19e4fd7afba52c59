"""Run page: choose models (registered and user-added) and LCs; run with progress; cancel; summary."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from alict_app import backends, presses, run_monitor, runs, spec_store, state, widgets
from alict_app.guard import guarded, run_page, show_error
from alict_app.progress import duration_text, eta_text
from alict_core.common import trust
from alict_core.common.errors import AlictError
from alict_core.models.refs import user_kinds
from alict_core.models.run_scope import run_scope
from alict_core.runner.summary import for_display


def model_refs(task: str) -> list[dict]:
    """Registered models chosen in the sidebar plus the user-added models ticked here."""
    refs = [{"name": name, "kwargs": {}, "label": name} for name in state.get("models", []) or []]
    for ref in st.session_state.get("user_models", []):
        if ref["task"] == task and st.session_state.get(f"use::{ref['label']}", True):
            refs.append(ref)
    return refs


FIELD_CHARS = 2_000  # a path, model id or URL typed into the form (the browser's max_chars is not a check)
LABEL_CHARS = 100


def user_model_problem(kwargs: dict[str, str], label: str) -> str | None:
    """What is wrong with a user model's fields and display name (checked here: the browser is untrusted), or
    None. A display name is shown in every table, chart and export of a run: printable, short, and not the name
    of a registered model (two models of one name cannot be told apart in a run's results); adding a user model
    under the name of another user model replaces that one."""
    from alict_core.models.registry import MODELS

    long = [f"{field} has {len(value):,} characters" for field, value in kwargs.items() if len(value) > FIELD_CHARS]
    if long:
        return f"{'; '.join(long)}, over the limit of {FIELD_CHARS:,}"
    if len(label) > LABEL_CHARS:
        return f"the display name has {len(label):,} characters, over the limit of {LABEL_CHARS}"
    if not label.isprintable():
        return f"the display name {label[:40]!r} holds control characters"
    if label in MODELS:
        return f"{label!r} is the name of a registered model; give this one another display name"
    return None


def add_user_model(task: str) -> None:
    kind = user_kinds()[st.session_state["um_kind"]]  # the kinds and their fields: the model registry's entries
    kwargs = {p.name: st.session_state.get(f"um_{p.name}", "").strip() for p in kind.params}
    problem = user_model_problem(kwargs, st.session_state.get("um_label", "").strip())
    if problem:  # before an upload is saved
        st.session_state["um_problem"] = problem
        return
    upload = st.session_state.get("um_upload") if kind.name == "static" else None
    if upload is not None:
        try:  # a callback: an error raised here would escape the page's error boundary
            kwargs["path"] = str(trust.save_upload(upload.name, upload.getvalue()))
        except AlictError as exc:  # over the size limit: nothing stored
            st.session_state["um_problem"] = str(exc)
            return
    empty = [field for field, value in kwargs.items() if not value]
    if empty:
        st.session_state["um_problem"] = f"fill in {', '.join(empty)} to add a {kind.tags['user_kind']}"
        return
    label = st.session_state.get("um_label", "").strip() or f"{kind.name}:{next(iter(kwargs.values()))}"
    kwargs["task"] = task  # the trust model checks these arguments when the model is loaded (backends.model_from_ref)
    st.session_state["um_pending"] = {"name": kind.name, "kwargs": {**kwargs, "name": label}, "label": label,
                                      "task": task}


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
            st.error(st.session_state.pop("um_problem"))
        pending = st.session_state.pop("um_pending", None)
        if pending:
            with guarded(f"loading model {pending['label']}"):
                backends.model_from_ref(pending)  # fails here, with a clear message, if unusable
                models = [m for m in st.session_state.get("user_models", []) if m["label"] != pending["label"]]
                st.session_state["user_models"] = [*models, pending]
                st.success(f"Added {pending['label']}")
        for ref in st.session_state.get("user_models", []):
            if ref["task"] == task:
                st.checkbox(f"use {ref['label']} ({ref['name']})", value=True, key=f"use::{ref['label']}")


def named_summary(summary: Any) -> Any:
    """The summary with each LC's title beside its capability name (the LC id keeps its own column)."""
    from alict_core.lcspec.capabilities import lc_catalog

    if summary.empty or "lc_id" not in summary:
        return summary
    catalog = lc_catalog(summary["lc_id"], dict(zip(summary["lc_id"], summary["capability"], strict=True)))
    named = summary.copy()
    named.insert(0, "LC", named["lc_id"].map(lambda lc: catalog[lc].title))
    named["capability"] = named["lc_id"].map(lambda lc: catalog[lc].capability)
    return named[["capability", *(c for c in named.columns if c != "capability")]]


def show_result(key: str, cached: bool) -> None:
    summary = runs.run_frames(key)["summary"]
    info = runs.run_info(key)
    st.success(f"Run finished{' (loaded from cache)' if cached else ''}: {runs.describe_run(info)}. "
               "Open **Failures** for the analysis.", icon=":material/check_circle:")
    if len(summary):
        st.dataframe(for_display(named_summary(summary)), hide_index=True, width="stretch")


def size_line(request: runs.RunRequest, specs: dict[str, Any]) -> str:
    """The request's size before it starts: LCs, up to how many cases and predictions."""
    size = runs.size_estimate(request, specs)
    expansions = f", up to {request.max_per_seed} expansions each" if request.expand else ""
    return (f"Size: {len(request.lc_ids)} LCs × up to {size['seeds'] // max(1, len(request.lc_ids)):,} seeds"
            f"{expansions} = up to {size['cases']:,} cases × {size['models']} model(s) = up to "
            f"{size['predictions']:,} predictions (fewer when an LC has fewer seeds).")


def lego_suites(task: str) -> list[str]:
    """NLPLego suites (written by `python -m alict_core lego`) chosen to run beside the LCs."""
    from alict_core.lego.pipeline import saved_suites

    labels = {row["path"]: row["label"] for row in saved_suites(task)}
    if not labels:
        return []
    st.multiselect("NLPLego suites", list(labels), key="run_lego", format_func=labels.get,
                   help="derivation-tree DIR tests written by `python -m alict_core lego` (LC id nlplego)")
    return [p for p in (state.get("run_lego") or []) if p in labels]


def request_cancel() -> None:
    st.session_state["cancel_run"] = True


def main() -> None:
    widgets.header("Run", "Run the models under test on seeds (and accepted expansions) of the chosen LCs.",
                   shows_cases=False)
    run_monitor.section()  # runs in progress (app or CLI): per-shard progress, attach
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    ids = [s.id for s in specs]
    state.ensure_choices("run_lcs", ids, default=ids)
    by_id = {s.id: s for s in specs}
    st.multiselect("LCs to run", ids, key="run_lcs", format_func=lambda lc_id: widgets.lc_label(by_id[lc_id]))
    user_model_form(task)
    refs = model_refs(task)
    st.caption("Models: " + (", ".join(r["label"] for r in refs) or "none — pick models in the sidebar"))
    c1, c2, c3, c4 = st.columns(4)
    st.session_state.setdefault("max_seeds", 50)
    c1.number_input("Max seeds per LC (0 = the spec's cap)", min_value=0, max_value=100_000, step=10, key="max_seeds")
    c2.number_input("Batch size", min_value=1, max_value=1024, value=64, step=16, key="run_batch")
    expand = c3.checkbox("Include expansions", key="run_expand",
                         help="parse + masked LM; needs the parser and the MLM head to be built")
    c4.number_input("Expansions per seed", min_value=1, max_value=20, value=3, key="run_per_seed", disabled=not expand)
    (parser_names, parsers_out), (mlm_names, mlms_out) = (backends.loadable_names("parser"),
                                                          backends.loadable_names("mlm", menu=True))
    if expand:
        e1, e2 = st.columns(2)
        state.ensure_choice("parser_name", parser_names)
        state.ensure_choice("mlm_name", mlm_names)
        e1.selectbox("Parser", parser_names, key="parser_name", help=backends.left_out_help(parsers_out) or None)
        e2.selectbox("Masked LM", mlm_names, key="mlm_name", help=backends.left_out_help(mlms_out) or None)
    suites = lego_suites(task)
    chosen = [s for s in specs if s.id in (state.get("run_lcs") or [])]
    request = runs.RunRequest(
        task=task, lc_ids=[s.id for s in chosen], models=refs, max_seeds=int(state.get("max_seeds")) or "spec",
        sample_seed=int(state.get("sample_seed", 0)), expand=bool(expand),
        parser=state.get("parser_name") if expand else None, mlm=state.get("mlm_name") if expand else None,
        max_per_seed=int(st.session_state.get("run_per_seed", 3)),
        batch_size=int(st.session_state.get("run_batch", 64)),
        spec_keys={s.id: spec_store.spec_key(s) for s in chosen}, suites=suites,
        keep_flagged=bool(st.checkbox("Keep cases the validity checks flag", key="run_keep_flagged",
                                      help="by default double negations, broken joins, duplicates and invalid "
                                      "expansions are excluded; the report says how many per LC and why")),
    )
    key = request.key()
    if chosen and refs:
        st.caption(size_line(request, {s.id: s for s in chosen}))
    b1, b2 = st.columns([1, 5])
    b1.button("▶ Run", type="primary", disabled=not ((chosen or suites) and refs), key="run_go",
              on_click=presses.note, args=("run_go",))
    go = bool(presses.take("run_go"))  # noted by the callback: a return value can lose the press under load
    b2.button("■ Cancel", on_click=request_cancel, key="run_cancel",
              help="stops between batches; finished batches stay cached")
    if st.session_state.pop("cancel_run", False) and not go:
        st.warning("Run cancelled. Finished batches are cached: running again resumes.")
    if go:
        if runs.is_done(key):
            widgets.remember_run(task, runs.resolve(key))
            show_result(key, cached=True)
            return
        bar = st.progress(0.0, text="starting …")
        log = st.empty()
        started = time.monotonic()

        def progress(message: str, fraction: float) -> None:
            elapsed = time.monotonic() - started
            eta = eta_text(fraction, elapsed)
            bar.progress(min(max(fraction, 0.0), 1.0),
                         text=f"{message} · {fraction:.0%} · {duration_text(elapsed)} so far · {eta}")

        with st.status("Running …", expanded=True) as status, run_scope() as scope:
            try:  # Cancel works by Streamlit stopping this script at its next progress update (fastReruns)
                runs.execute(request, {s.id: s for s in chosen}, progress,
                             should_stop=lambda: bool(st.session_state.get("cancel_run")))
            except runs.RunCancelled as exc:
                status.update(label="Cancelled", state="error")
                log.warning(str(exc))
                return
            except Exception as exc:  # noqa: BLE001 - shown on the page, the status marked failed
                status.update(label="Failed", state="error", expanded=True)
                show_error(exc, "running the tests")
                return
            status.update(label="Done", state="complete", expanded=False)
        for name, count in scope.unparsed_counts().items():
            st.warning(f"Model {name} gave {count} answer(s) that could not be parsed: scored as its fallback label "
                       "in this run and not cached, so running again asks again.")
        if runs.is_done(key):
            widgets.remember_run(task, runs.resolve(key))
            show_result(key, cached=False)
    elif runs.is_done(key):
        widgets.remember_run(task, runs.resolve(key))
        show_result(key, cached=True)
    else:
        previous = runs.list_runs(task)
        if previous:
            st.caption(f"{len(previous)} earlier run(s) of this task; the latest opens on the Failures page.")


run_page(main, "running the tests")
