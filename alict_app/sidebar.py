"""The sidebar: task, corpus, models under test, the default models (About models) and backend status."""

from __future__ import annotations

import logging
import math
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from alict_app import backends, demo, state
from alict_app.formatting import TASK_TITLES, TASKS, code, literal, without_server_paths
from alict_core.tasks import TASKS as TASK_REGISTRY

log = logging.getLogger(__name__)
CORPUS_NAMES = {name: task.corpus_title for name, task in TASK_REGISTRY.items()}
STATE_ICONS = {
    "loaded": "🟢", "built": "🔵", "registered": "🔵", "missing": "🟠", "not available": "⚪", "checking": "⏳",
}


def build_controls(row: dict[str, str]) -> None:
    """A 'Build' button for a missing offline model, and the build's log while it runs."""
    from alict_app import builds

    target = row["what"]
    elsewhere = [r for r in models_overview()["building"]
                 if r.get("target") == ("classifiers" if target == "models" else target)]
    if elsewhere and not builds.is_running(target):
        st.caption(f"being built by another process ({elsewhere[0].get('profile')} profile; progress under "
                   "About models)")
    elif builds.is_running(target):
        st.caption(f"building {target} … (reload the page to refresh)")
        # the build's own log names the server's folders (and pids, locks): shown by role, like every message
        st.code(without_server_paths(builds.log_tail(target) or "starting …"), language="text")
    elif builds.exit_code(target) not in (None, 0):
        st.error(f"building {target} failed:\n\n{literal(without_server_paths(builds.log_tail(target)))}")
    elif row["state"] == "missing":
        if st.button(f"Build {target} now", key=f"build::{target}", help=f"runs python -m alict_core build {target}"):
            builds.start_build(target)
            backends.refresh_status()
            st.rerun()


def model_labels(names: list[str], ready: set[str]) -> dict[str, str]:
    """Menu labels of the models ``names`` (``ready``: those whose offline build exists): the paper's model from
    the local cache, an online model, one not built yet."""
    local = backends.default_classifier_folders()
    labels = {}
    for name in names:
        if name in local:
            labels[name] = f"{name} (paper's model, local cache)"
        elif not backends.backend_tags("model", name).get("offline", True):
            labels[name] = f"{name} (online)"
        else:
            labels[name] = name if name in ready else f"{name} (not built)"
    return labels


ROLE_TITLES = {"parser": "Parser", "mlm": "Masked LM", "classifier:sentiment": "Sentiment classifier",
               "classifier:hate_speech": "Hate-speech classifier"}
TARGET_TITLES = {"classifiers": "classifiers", "parser": "parser", "mlm": "masked LM"}
OVERVIEW_TTL_S = 3  # the overview reads a few small JSON files: cheap, but not on every widget event


def models_overview() -> dict[str, Any]:
    """Resolved defaults, artefacts in use and running builds (``model_defaults.overview``), briefly cached."""
    from alict_core.common.config import models_dir

    return _overview(str(models_dir()))


@st.cache_data(ttl=OVERVIEW_TTL_S, show_spinner=False)
def _overview(models_root: str) -> dict[str, Any]:  # keyed on the models folder it describes
    from alict_core.models.defaults import overview

    return overview()


def role_line(role: str, entry: dict[str, Any]) -> str:
    """One markdown line: the role's model, where it comes from, paper's model or substitute."""
    origin = "the paper's model" if entry.get("paper_model") else "offline substitute"
    parts = [str(entry.get("source", ""))]
    if entry.get("kind") == "offline":
        if entry.get("built"):
            parts += [f"{entry.get('profile')} profile", f"{entry['steps']} steps" if entry.get("steps") else ""]
        elif entry.get("damaged"):
            parts.append("its built artefact is damaged: rebuild it with `alict build`")
        else:
            parts.append("not built yet")
    where = ", ".join(p for p in parts if p and p != origin)
    return f"**{literal(ROLE_TITLES.get(role, role))}**: {code(entry.get('name'))} — {origin} ({literal(where)})"


def _number(value: Any) -> float | None:
    """``value`` when it is a finite number (a figure of a hand-edited manifest may be text or a list), else None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def figures_text(target: str, row: dict[str, Any]) -> str:
    """Held-out figures of one artefact in a line (parser F1, MLM top-k, classifiers' accuracy / macro-F1)."""
    recorded = row.get("figures")
    figures: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    shown = {key: _number(figures.get(key)) for key in ("test_f1", "dev_f1", "top1", "top10")}
    if target == "parser":
        parts = [f"test F1 {shown['test_f1']:.3f}" if shown["test_f1"] is not None else "",
                 f"dev F1 {shown['dev_f1']:.3f}" if shown["dev_f1"] is not None else ""]
    elif target == "mlm":
        parts = [f"held-out top-1 {shown['top1']:.1%}" if shown["top1"] is not None else "",
                 f"top-10 {shown['top10']:.1%}" if shown["top10"] is not None else ""]
    else:
        parts = []
        for name in ("minilm-sst", "minilm-hatexplain"):
            entry = figures.get(name)
            test = entry.get("test") if isinstance(entry, dict) else None
            test = test if isinstance(test, dict) else {}
            accuracy, macro_f1 = _number(test.get("accuracy")), _number(test.get("macro_f1"))
            if accuracy is not None:
                macro_f1 = macro_f1 if macro_f1 is not None else math.nan
                parts.append(f"{name} acc {accuracy:.3f} / macro-F1 {macro_f1:.3f}")
    steps = _number(row.get("steps"))
    shown_steps = f", {int(steps)} steps" if steps else ""
    return f"{literal(row.get('profile'))}{shown_steps}: " + ("; ".join(p for p in parts if p)
                                                               or "no held-out figures recorded")


def eta_text(seconds: Any) -> str:
    seconds = _number(seconds)
    if seconds is None or seconds < 0:
        return "ETA after the first steps"
    seconds = int(seconds)
    return f"ETA {seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"ETA {seconds} s"


def render_build_progress(building: list[dict[str, Any]]) -> None:
    """A progress bar per running build (step / total and ETA); "progress unreadable" for a hand-edited file."""
    for row in building:
        step, total = _number(row.get("step")) or 0.0, _number(row.get("total"))
        title = (f"building {literal(TARGET_TITLES.get(row.get('target', ''), row.get('target')))} "
                 f"({literal(row.get('profile'))})")
        if row.get("unreadable") or (total is not None and (total <= 0 or step < 0)):
            st.caption(f"{title}: progress unreadable")
        elif total:
            text = f"{title}: step {int(step)}/{int(total)}, {eta_text(row.get('eta_seconds'))}"
            st.progress(min(step / total, 1.0), text=text)
        else:
            st.caption(f"{title}: preparing data …")


def notice_finished_builds(building: list[dict[str, Any]]) -> bool:
    """Whether a build seen running has finished since the last run; then the backend status probe is
    forgotten so it is read again."""
    running = sorted(f"{r.get('profile')}/{r.get('target')}" for r in building)
    seen = st.session_state.get("_alict_builds_seen", [])
    st.session_state["_alict_builds_seen"] = running
    if set(seen) - set(running):
        backends.refresh_status()
        return True
    return False


def render_about_models(live: bool = False) -> None:
    """The "About models" expander: per role the default model, per target the artefact in use with its
    held-out figures, and the progress of running builds (refreshed every few seconds while they run)."""
    info = models_overview()
    building = info["building"]
    if notice_finished_builds(building) and live:
        st.rerun()  # a build landed: redraw the whole page, which then loads the new artefact
    with st.expander("About models", expanded=bool(building)):
        render_build_progress(building)
        for role, entry in info["roles"].items():
            st.markdown(role_line(role, entry))
        st.markdown("**Built artefacts in use** (full > quick > legacy; `alict build --report`)")
        for target, row in info["artefacts"].items():
            if row is None:
                hint = "being built now" if any(r.get("target") == target for r in building) else \
                    "not built: `alict build missing --profile quick` (`make run` builds it in the background)"
                st.caption(f"{TARGET_TITLES[target]}: {hint}")
            elif "error" in row:
                st.caption(f"{TARGET_TITLES[target]}: {literal(without_server_paths(row['error']))}")
            else:
                st.caption(f"{TARGET_TITLES[target]} — {figures_text(target, row)}")
        st.caption("Every saved run records these defaults in its meta.json (`model_defaults`).")


def models_pending_notice() -> None:
    """On the first page, while offline models are missing (a fresh machine, `make run` building them): what
    is being built and what the user can do meanwhile. Nothing once every model is built."""
    info = models_overview()
    building = {row.get("target") for row in info["building"]}
    missing = [f"{TARGET_TITLES[target]} ({'being built now' if target in building else 'not built yet'})"
               for target, row in info["artefacts"].items() if row is None]
    if not missing:
        return
    st.info(f"Offline models still to come: {', '.join(missing)}; `make run` builds them in the background, "
            "progress under **About models** in "
            "the sidebar. Meanwhile: read and edit the LC specs here, find seeds on **Seeds**, and **Run** the "
            "models that need no build (the lexicon ones, chosen under Models under test). **Expansions** and "
            "the MiniLM classifiers are ready when their builds finish; each page says what it is waiting for.",
            icon=":material/construction:")


def render_models_section() -> None:
    """About models; re-drawn every 5 s on its own (a fragment) while a build runs, so its bar moves."""
    if models_overview()["building"]:
        st.fragment(_live_about_models, run_every=5)()
    else:
        render_about_models()


def _live_about_models() -> None:
    render_about_models(live=True)


BACKENDS_POLL_S = 1.0  # while the status probe runs, the Backends panel re-reads it this often


def render_backends() -> None:
    """The Backends panel. While the background probe still checks what is built, its rows re-read the probe every
    ``BACKENDS_POLL_S`` on their own (a fragment inside the expander), so "checking" resolves without a click."""
    with st.expander("Backends", expanded=False):
        if any(row["state"] == "checking" for row in backends.backend_status()):
            st.fragment(_polled_backend_rows, run_every=BACKENDS_POLL_S)()
        else:
            backend_rows(backends.backend_status())


def _polled_backend_rows() -> None:
    """The rows, re-read on the fragment's timer. Once nothing is "checking" they are final: the timer is stopped
    and nothing else is redrawn. (A full ``st.rerun()`` here, to draw the rows without the timer, also redrew the
    page: a message drawn only in the run of a press vanished at a moment set by the probe.)"""
    rows = backends.backend_status()
    if not any(row["state"] == "checking" for row in rows):
        stop_own_timer()
    backend_rows(rows)


def stop_own_timer() -> None:
    """Tell the browser to stop the running fragment's ``run_every`` timer: Streamlit's own stop_auto_rerun message,
    the one it sends for a timed fragment that is drawn no more (``streamlit==1.67.0`` is pinned). Failing that,
    the timer keeps redrawing the fragment alone (harmless, cheap) until the next full run, which draws the rows
    without a timer."""
    try:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

        ctx, fragment_id = get_script_run_ctx(), ThreadState.get().fragment_id
        if ctx is None or not fragment_id:
            return
        msg = ForwardMsg()
        msg.stop_auto_rerun.fragment_ids.append(fragment_id)
        ctx.enqueue(msg)
    except Exception as exc:  # noqa: BLE001 - only the timer's end: the panel is right either way
        log.warning("could not stop the Backends panel's timer: %s", exc)


def backend_rows(rows: list[dict[str, str]]) -> None:
    for row in rows:
        st.markdown(f"{STATE_ICONS.get(row['state'], '⚪')} **{literal(row['what'])}** — "  # literal(): no Markdown
                    f"{literal(row['state'])}  \n"  # link or image, and no HTML tag
                    f"<small>{literal(row['note'])}</small>", unsafe_allow_html=True)
        if not demo.enabled():  # demo mode builds nothing
            build_controls(row)


def render_sidebar() -> None:
    """Draw the sidebar widgets (they write to session state) and the backend status."""
    with st.sidebar:
        st.markdown("### ALiCT Studio")
        state.ensure_choice("task", TASKS)
        st.selectbox("Task", list(TASKS), key="task", format_func=lambda task: TASK_TITLES[task])
        task = state.get("task")
        state.follow_task_keys(task)  # the LC, seed and filters each task was left with
        st.caption(f"Corpus: {CORPUS_NAMES[task]}")
        from alict_core.harden.versions import register_all

        register_all(task)  # retrained versions are models too
        names, left_out = backends.loadable_names("model", task=task)
        if names:
            built = backends.ready_models(names)
            labels = model_labels(names, built)
            ready = [n for n in names if backends.backend_tags("model", n).get("offline", True) and n in built]
            default = models_overview()["roles"][f"classifier:{task}"]  # the paper's model when available
            if default["name"] in names and (default.get("path") or default["name"] in ready):
                ready = [default["name"], *(n for n in ready if n != default["name"])]
            state.ensure_choices("models", names, default=ready[:2] or names[:1], task=task)  # each task its own
            st.multiselect("Models under test", names, key="models", format_func=lambda n: labels.get(n, n),
                           help=backends.left_out_help(left_out, "registered models for this task that can load "
                                                       "here; offline models not built yet are marked"))
        else:
            st.caption("Models under test: none registered yet")
        render_models_section()
        render_backends()
        st.session_state[LINK_SLOT] = st.empty()  # filled by render_view_link once the page has drawn


LINK_SLOT = "_alict_link_slot"
PERSONAL_KEYS = ("reviewer",)  # in this session's URL, never in the link it hands to others


def render_view_link() -> None:
    """The sidebar's "Link to this view", written after the page ran so it holds the page's latest state
    (drawn before the page, it showed the view before the last interaction)."""
    slot = st.session_state.pop(LINK_SLOT, None)
    if slot is None:
        return
    shared = {k: v for k, v in state.query_state().items() if k not in PERSONAL_KEYS}
    link = "?" + urlencode(shared)  # values come from the URL: encoded, never raw HTML
    slot.markdown(f"<small>:material/link: [Link to this view]({link})</small>", unsafe_allow_html=True,
                  help="the task, LC, seed, run, model, case and filters of this view (not your reviewer name: "
                       "whoever opens the link reviews as themselves)")
