"""The run page's run options, the request they make, and its running: progress, cancel, the result."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from alict_app import backends, presses, run_picker, runs, spec_store, state, widgets
from alict_app.formatting import literal
from alict_app.guard import show_error
from alict_app.progress import duration_text, eta_text
from alict_core.common.limits import limits
from alict_core.models.run_scope import run_scope
from alict_core.runner.stream import WAITING_NOTE
from alict_core.runner.summary import for_display


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


def show_result(key: str, how: str = "new", own: bool = True) -> None:
    """The run's result: "new" or "cached" (this press's), or "earlier" (a page view: the last run of these settings;
    ``own``: this session's, else the newest of anyone's)."""
    summary = runs.run_frames(key)["summary"]
    info = runs.run_info(key)
    if how == "earlier":  # not pressed: the cases may differ now (a review write-back, a model changed)
        services = runs.asked_services(key)
        whose = "" if own or not services else (f" (the newest ask of {', '.join(services)}, perhaps another "
                                                "visitor's: the service may answer otherwise now)")
        st.info(f"Last run of these settings{literal(whose)}: {literal(runs.describe_run(info))}. Open **Failures** "
                "for the analysis; press **Run** to run them again as they are now (cases rejected in review since are "
                "left out, changed models re-run).",
                icon=":material/history:")
    else:
        st.success(f"Run finished{' (loaded from cache)' if how == 'cached' else ''}: "
                   f"{literal(runs.describe_run(info))}. Open **Failures** for the analysis.",
                   icon=":material/check_circle:")
    widgets.review_excluded_note(key)  # asked for N seeds per LC, got fewer: said, as the CLI's `run` says it
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
    offered = st.session_state.get(OFFERED_SUITES) or {}  # task -> the suites the menu offered at its last draw
    state.keep("run_lego")  # the suites chosen before a visit to another page
    state.follow_task("run_lego", task)  # ... and before a round trip through the other task
    gone = [path for path in state.get("run_lego") or [] if path in offered.get(task, ()) and path not in labels]
    st.session_state[OFFERED_SUITES] = {**offered, task: list(labels)}
    st.session_state[SUITES_GONE] = bool(gone)
    if gone:  # chosen, then removed before the press: said, never dropped from the run without a word
        st.warning(f"No longer saved: {len(gone)} NLPLego suite(s) chosen before (removed since the page was drawn); "
                   "taken off the suites to run.")
        state.put("run_lego", [path for path in state.get("run_lego") or [] if path in labels])
    if not labels:
        return []
    state.ensure_choices("run_lego", list(labels), default=[])
    st.multiselect("NLPLego suites", list(labels), key="run_lego", format_func=lambda path: labels[path],
                   help="derivation-tree DIR tests written by `python -m alict_core lego` (LC id nlplego)")
    return [p for p in (state.get("run_lego") or []) if p in labels]


SUITES_GONE = "_alict_run_suites_gone"
OFFERED_SUITES = "_alict_run_suites_offered"


def suites_gone() -> bool:
    """Whether an NLPLego suite chosen at the last draw was no longer saved at this one (see ``lego_suites``)."""
    return bool(st.session_state.get(SUITES_GONE))


RUN_ACTIVE = "_alict_run_active"  # set while this session's press runs (a Cancel with nothing running is said so)


def request_cancel(task: str) -> None:
    if st.session_state.get(RUN_ACTIVE) == task:
        st.session_state["cancel_run"] = True
    else:  # "Run cancelled" was said with nothing running
        st.session_state["cancel_idle"] = True


def expansion_backends(expand: bool) -> None:
    """The parser and masked-LM pickers, shown when expansions are asked for."""
    (parser_names, parsers_out), (mlm_names, mlms_out) = (backends.loadable_names("parser"),
                                                          backends.loadable_names("mlm", menu=True))
    if expand:
        e1, e2 = st.columns(2)
        state.ensure_choice("parser_name", parser_names)
        state.ensure_choice("mlm_name", mlm_names)
        e1.selectbox("Parser", parser_names, key="parser_name", help=backends.left_out_help(parsers_out) or None)
        e2.selectbox("Masked LM", mlm_names, key="mlm_name", help=backends.left_out_help(mlms_out) or None)


def request_form(task: str, specs: list[Any], refs: list[dict]) -> tuple[list[Any], runs.RunRequest]:
    """The run options (seeds, batch, expansions, NLPLego suites, flagged cases): the chosen LCs and the request."""
    c1, c2, c3, c4 = st.columns(4)
    st.session_state.setdefault("max_seeds", 50)
    c1.number_input("Max seeds per LC (0 = the spec's cap)", min_value=0, max_value=100_000, step=10, key="max_seeds")
    top = min(1024, limits().batch_size)  # ALICT_LIMIT_BATCH_SIZE below the default refused every Run press
    for key, default in (("run_batch", min(64, top)), ("run_expand", False), ("run_per_seed", 3)):
        state.keep(key, default)  # kept across a visit to another page
    if st.session_state["run_batch"] > top:  # a lower ALICT_LIMIT_BATCH_SIZE since it was chosen
        st.session_state["run_batch"] = top
    c2.number_input("Batch size", min_value=1, max_value=top, step=16, key="run_batch")
    expand = c3.checkbox("Include expansions", key="run_expand",
                         help="parse + masked LM; needs the parser and the MLM head to be built")
    c4.number_input("Expansions per seed", min_value=1, max_value=20, key="run_per_seed", disabled=not expand)
    expansion_backends(expand)
    suites = lego_suites(task)
    chosen = [s for s in specs if s.id in (state.get("run_lcs") or [])]
    state.keep("run_keep_flagged", False)
    request = runs.RunRequest(
        task=task, lc_ids=[s.id for s in chosen], models=refs, max_seeds=int(state.get("max_seeds")) or "spec",
        sample_seed=int(state.get("sample_seed", 0)), expand=bool(expand),
        parser=state.get("parser_name") if expand else None, mlm=state.get("mlm_name") if expand else None,
        max_per_seed=int(st.session_state.get("run_per_seed", 3)),
        batch_size=min(int(st.session_state.get("run_batch", 64)), limits().batch_size),
        spec_keys={s.id: spec_store.spec_key(s) for s in chosen}, suites=suites,
        keep_flagged=bool(st.checkbox("Keep cases the validity checks flag", key="run_keep_flagged",
                                      help="by default double negations, broken joins, duplicates and invalid "
                                      "expansions are excluded; the report says how many per LC and why")),
    )
    if chosen and refs:
        st.caption(size_line(request, {s.id: s for s in chosen}))
    return chosen, request


def endpoint_labels(request: runs.RunRequest) -> list[str]:
    """The request's models that ask a service (an HTTP or chat endpoint): their answers are never cached."""
    from alict_core.models.refs import ModelRef

    return [str(ref.get("label") or ref["name"]) for ref in request.models
            if runs.calls_a_host(ModelRef.from_dict(ref))]


def resume_note(services: list[str], resumes: str) -> str:
    """What a stopped run keeps (``services``: its endpoint models; ``resumes``: "running again resumes"); plain
    text (draw it through ``literal``)."""
    if not services:
        return f"Finished batches are cached: {resumes}."
    return (f"Finished shards are kept and {resumes} after them; the answers of "
            f"{', '.join(services)} in an unfinished shard are not kept (an endpoint's answers are never "
            "cached): the service is asked again for those texts (paid requests, if it charges; a small run is one "
            "shard, so all of them).")


def run_section(task: str, request: runs.RunRequest, chosen: list[Any], lcs_gone: bool = False) -> None:
    """Run and Cancel; a run pressed (or one already done) shows its result, else how many earlier runs exist.
    ``lcs_gone``: an LC chosen at the last draw has lost its spec since: a press now runs nothing."""
    key = request.key()
    b1, b2 = st.columns([1, 5])
    b1.button("▶ Run", type="primary", disabled=not ((chosen or request.suites) and request.models), key="run_go",
              on_click=presses.note, args=("run_go",))
    go = bool(presses.take("run_go"))  # noted by the callback: a return value can lose the press under load
    services = endpoint_labels(request)
    b2.button("■ Cancel", on_click=request_cancel, args=(task,), key="run_cancel",
              help="stops between batches; " + ("finished shards are kept, an endpoint's answers of an unfinished "
                                                "shard are not" if services else "finished batches stay cached"))
    if st.session_state.pop("cancel_run", False) and not go:
        st.session_state.pop(RUN_ACTIVE, None)
        st.warning(f"Run cancelled. {literal(resume_note(services, 'running again resumes'))}")
    elif st.session_state.pop("cancel_idle", False) and not go:
        st.info("Nothing of yours is running here: there is nothing to cancel.")
    elif st.session_state.get(RUN_ACTIVE) == task and not go:  # its script was stopped by a page visit or a change:
        st.session_state.pop(RUN_ACTIVE, None)  # (said on its own task's Run page: "▶ Run" elsewhere runs other LCs)
        st.info("Your last run stopped before it finished (the page was left or a setting changed while it ran). "
                f"{literal(resume_note(services, '▶ Run resumes it'))}")  # said once; a Cancel now says nothing runs
    if go and lcs_gone:
        st.error("Nothing run: an LC chosen when you pressed is no longer there (see above). Check the LCs to run "
                 "and press again.")
    elif go:  # always through the core: what it runs depends on more than these settings (cases a review rejected
        before = runs.finished_runs()  # since, a model's content): it finds a finished run of the same content
        run_id = execute(request, chosen)
        if run_id is not None:
            shown(task, run_id, "cached" if run_id in before else "new")
    elif runs.is_done(key):
        show_earlier(task, key)
    else:
        previous = runs.list_runs(task)
        if previous:
            st.caption(f"{len(previous)} earlier run(s) of this task; the latest opens on the Failures page.")


def shown(task: str, key: str, how: str) -> None:
    """The run a press finished (``how``: "new", or "cached": found finished by the press) is the one the run picker
    shows next; its result here."""
    run_picker.remember_run(task, runs.resolve(key))
    show_result(key, how)


def show_earlier(task: str, key: str) -> None:
    """A page view (no press) of settings run before: this session's own run of them if it is the run its pages
    show, else the newest of anyone's. Never moves the run the other pages show for this session: another visitor's
    newer ask of an endpoint moved this session's Failures and Report to that visitor's answers (pass 39)."""
    own = str((st.session_state.get(run_picker.RUNS_BY_TASK) or {}).get(task) or "")
    mine = bool(own) and runs.is_done(own) and runs.request_key_of(own) == key
    show_result(own if mine else runs.resolve(key), "earlier", own=mine)


class WaitingNote:
    """A line under the progress bar while another writer (a command-line run, another visitor's press of the same
    settings) holds this run, kept afterwards as how long this one waited: in the bar the note was cut off (pass 38)."""

    def __init__(self, slot: Any) -> None:
        self.slot = slot
        self.since: float | None = None  # seconds into the run when the wait began; None: not waiting

    def update(self, message: str, elapsed: float) -> None:
        if message == WAITING_NOTE and self.since is None:
            self.since = elapsed
            self.slot.info("Another writer (a command-line run, or another visitor's press of the same settings) is "
                           "writing this run: this one waits for it, then uses or resumes its run.",
                           icon=":material/hourglass_top:")
        elif message != WAITING_NOTE and self.since is not None:
            self.slot.caption(f"Another writer was writing this run: this one waited "
                              f"{literal(duration_text(elapsed - self.since))} for it.")
            self.since = None


def execute(request: runs.RunRequest, chosen: list[Any]) -> str | None:
    """Run the request with a progress bar and a status box; its run id, or None when it was cancelled or failed
    (said here)."""
    bar = st.progress(0.0, text="starting …")
    log, waiting = st.empty(), WaitingNote(st.empty())
    started = time.monotonic()

    def progress(message: str, fraction: float) -> None:
        elapsed = time.monotonic() - started
        waiting.update(message, elapsed)
        eta = eta_text(fraction, elapsed)
        bar.progress(min(max(fraction, 0.0), 1.0),
                     # a progress text draws Markdown: an LC title of anyone's workspace spec drew an image and
                     # a link in every runner's bar (pass 37)
                     text=f"{literal(message)} · {fraction:.0%} · {duration_text(elapsed)} so far · {eta}")

    left_out: dict[str, str] = {}
    st.session_state[RUN_ACTIVE] = request.task  # left set when Streamlit stops this script (a Cancel press does that)
    with st.status("Running …", expanded=True) as status, run_scope() as scope:
        try:  # Cancel works by Streamlit stopping this script at its next progress update (fastReruns)
            run_id = runs.execute(request, {s.id: s for s in chosen}, progress,
                                  should_stop=lambda: bool(st.session_state.get("cancel_run")),
                                  on_left_out=left_out.update)
        except runs.RunCancelled as exc:
            st.session_state.pop(RUN_ACTIVE, None)
            status.update(label="Cancelled", state="error")
            log.warning(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - shown on the page, the status marked failed
            st.session_state.pop(RUN_ACTIVE, None)
            status.update(label="Failed", state="error", expanded=True)
            show_error(exc, "running the tests")
            return None
        finally:  # a wait that ended with the run (found finished by the other writer) is no longer "waits"
            waiting.update("", time.monotonic() - started)
        st.session_state.pop(RUN_ACTIVE, None)
        status.update(label="Done", state="complete", expanded=False)
    for lc_id, why in left_out.items():  # asked for, not in the run: never dropped without a word
        st.warning(f"{literal(lc_id)} is not in this run: {literal(why)}.")
    for name, count in scope.unparsed_counts().items():
        st.warning(f"Model {literal(name)} gave {count} answer(s) that could not be parsed: scored as its "
                   "fallback label in this run and not cached, so running again asks again.")
    return run_id
