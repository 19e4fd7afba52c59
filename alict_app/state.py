"""Page state (task, LC, model, case, run) kept in session state and mirrored in the URL query.

A link carrying ``?task=hate_speech&lc=...&model=...&case=...&run=...`` reopens the same view.
"""

from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from alict_app.view_state import VIEW_KEYS
from alict_core.tasks import SENTIMENT

QUERY_KEYS = ("task", "lc", "seed", "model", "case", "run", "review", "reviewer", *VIEW_KEYS)
# widget-backed keys that must survive page switches (streamlit drops keys of widgets not drawn)
PERSISTENT_KEYS = (*QUERY_KEYS, "models", "max_seeds", "sample_seed", "parser_name", "mlm_name")
DEFAULTS: dict[str, Any] = {"task": SENTIMENT.name}
_INIT_FLAG = "_alict_state_ready"


def init_state() -> None:
    """On a session's first run read the query; on every run keep persistent keys alive."""
    if not st.session_state.get(_INIT_FLAG):
        for key, value in DEFAULTS.items():
            st.session_state.setdefault(key, value)
        for key in QUERY_KEYS:
            if key in st.query_params and st.query_params[key]:
                st.session_state[key] = st.query_params[key]
        st.session_state[_INIT_FLAG] = True
    for key in PERSISTENT_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def initialised() -> bool:
    """Whether this session's state was set up (by an earlier run, or earlier in this one)."""
    return bool(st.session_state.get(_INIT_FLAG))


def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    """Set a state value (call before the widget with this key is drawn in the run)."""
    st.session_state[key] = value


def forget(key: str) -> None:
    """Drop the value of ``key`` and the copy :func:`keep` holds of it (the next draw starts from its default)."""
    st.session_state.pop(key, None)
    st.session_state.pop(KEPT + key, None)


TASK_OWNERS = "_alict_task_owners"  # key -> the task whose choice the key holds now
TASK_CHOICES = "_alict_task_choices"  # key -> {task: the choice left on that task}


def follow_task(key: str, task: str) -> bool:
    """On a task switch, keep ``key``'s choice aside for the old task and bring back this task's (or :func:`forget`
    it, so the menu starts from the task's default): each task keeps its own "Models under test", "LCs to run",
    LC, seed and filters. The first call adopts the value there (a shared link's). Whether the task switched."""
    owners = st.session_state.setdefault(TASK_OWNERS, {})
    owner = owners.get(key)
    if owner == task:
        return False
    owners[key] = task
    if owner is None:
        return False
    choices = st.session_state.setdefault(TASK_CHOICES, {}).setdefault(key, {})
    if key in st.session_state:
        value = st.session_state[key]
        choices[owner] = list(value) if isinstance(value, (list, tuple)) else value
    if task in choices:
        st.session_state[key] = choices[task]
    else:
        forget(key)
    return True


# choices that only mean something on one task, kept per task by the sidebar (pages draw them from the URL key)
TASK_SCOPED_KEYS = ("lc", "seed", "review", "case", "cap", "lcs", "models_f", "ttype", "tpl", "word", "run_b",
                    "model_a", "model_b")


def follow_task_keys(task: str, widget_prefix: str = "w_") -> None:
    """:func:`follow_task` for every key of :data:`TASK_SCOPED_KEYS`; a switched key's widget copy is dropped so the
    page draws it again from the value brought back."""
    for key in TASK_SCOPED_KEYS:
        if follow_task(key, task):
            st.session_state.pop(widget_prefix + key, None)


def ensure_choice(key: str, options: Sequence[Any], task: str | None = None) -> Any:
    """Make the stored value one of ``options`` (falling back to the first) and return it; a choice made before a
    visit to another page is kept (:func:`keep`), and with ``task`` each task keeps its own (:func:`follow_task`)."""
    keep(key)
    if task is not None:
        follow_task(key, task)
    options = list(options)
    if not options:
        st.session_state.pop(key, None)
        return None
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    return st.session_state[key]


def vanished(key: str, options: Sequence[Any]) -> Any:
    """The value menu ``key`` showed at its last draw (:func:`remember_shown`) when it is no longer among ``options``
    (a run removed or re-written between the draw and a press), else None: a press taken now must not fall back to
    another option the user never saw (a review task sampled, a model retrained from another run)."""
    shown = st.session_state.get(f"_shown::{key}")
    return shown if shown is not None and shown not in list(options) else None


def remember_shown(key: str, value: Any) -> None:
    """Note the value menu ``key`` shows now (see :func:`vanished`)."""
    st.session_state[f"_shown::{key}"] = value


KEPT = "_alict_kept:"  # the last value of a widget that a visit to another page would reset


def keep(key: str, default: Any = None) -> None:
    """Call before drawing widget ``key`` (drawn without its own default value): Streamlit forgets the value of a
    widget not drawn in a run, so a visit to another page reset it without a word ("LCs to run" back to every LC). A
    plain copy is kept; the widget's state is written only when it is missing (each write sends it to the browser)."""
    shadow = KEPT + key
    if key in st.session_state:
        st.session_state[shadow] = st.session_state[key]
    elif shadow in st.session_state:
        st.session_state[key] = st.session_state[shadow]
    elif default is not None:
        st.session_state[key] = default


def ensure_choices(key: str, options: Sequence[Any], default: Sequence[Any], task: str | None = None) -> list[Any]:
    """Multiselect flavour of :func:`ensure_choice`: drop stale values, fall back to ``default``."""
    keep(key)
    if task is not None:
        follow_task(key, task)
    current = [v for v in st.session_state.get(key, []) or [] if v in options]
    if not current and key not in st.session_state:
        current = [v for v in default if v in options]
    if key not in st.session_state or st.session_state[key] != current:  # a write of the same value sends it to
        st.session_state[key] = current  # the browser again: a chip removed meanwhile there came back
    return current


def query_state() -> dict[str, str]:
    """The query parameters that describe the current view."""
    return {k: str(st.session_state[k]) for k in QUERY_KEYS if st.session_state.get(k) not in (None, "")}


def sync_query_params() -> None:
    """Write the current view into the URL (only when it changed, to avoid extra reruns)."""
    desired = query_state()
    if {k: st.query_params.get(k) for k in st.query_params} != desired:
        st.query_params.from_dict(desired)


def clear(*keys: str) -> None:
    for key in keys:
        st.session_state.pop(key, None)
