"""URL-backed view state of the Failures and Compare pages (filters, grouping, the compared runs).

Each value lives in session state under its URL key (a plain string, lists comma-joined with commas inside
items escaped), which ``alict_app.state`` mirrors into ``st.query_params``; widgets use a separate ``w_<key>`` so
a link restores them and page switches keep them. Values from the URL are checked against the options
drawn, so a crafted link can only select what the page offers.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import streamlit as st

# URL keys (added to alict_app.state.QUERY_KEYS)
VIEW_KEYS = ("cap", "lcs", "models_f", "ttype", "kind", "outcome", "tpl", "word", "p2f", "group",
             "run_b", "model_a", "model_b")
OUTCOMES = ("fails", "passes", "all")


def _widget_key(key: str) -> str:
    return f"w_{key}"


def encode_list(values: Sequence[str]) -> str:
    """Items comma-joined, a comma or percent sign inside an item escaped (``%2C``, ``%25``): a model named
    "my,model" or a capability "Zork, Quux" came back from a shared link as two unknown items (the filter empty)."""
    return ",".join(str(v).replace("%", "%25").replace(",", "%2C") for v in values)


def decode_list(value: Any) -> list[str]:
    """The items of :func:`encode_list`'s text (or of a list), each once, in order (``?kind=seed,seed`` drew two
    equal chips)."""
    if isinstance(value, (list, tuple)):
        return list(dict.fromkeys(str(v) for v in value))
    unescape = lambda item: re.sub(r"%(25|2[Cc])", lambda m: "%" if m.group(1) == "25" else ",", item)  # noqa: E731
    return list(dict.fromkeys(unescape(v) for v in str(value or "").split(",") if v))


def multi(container: Any, label: str, options: Sequence[str], key: str,
          format_func: Callable[[Any], str] = str, **kwargs: Any) -> list[str]:
    """A multiselect whose value is stored (comma-joined) under URL key ``key``."""
    widget = _widget_key(key)
    options = list(options)
    if widget not in st.session_state:
        st.session_state[widget] = [v for v in decode_list(st.session_state.get(key)) if v in options]
    else:  # written only when it changes (the same value written again is sent to the browser again, where a
        kept = [v for v in st.session_state[widget] if v in options]  # chip removed meanwhile came back)
        if kept != st.session_state[widget]:
            st.session_state[widget] = kept
    chosen = container.multiselect(label, options, key=widget, format_func=format_func, **kwargs)
    st.session_state[key] = encode_list(chosen)
    return list(chosen)


def single(container: Any, label: str, options: Sequence[str], key: str, default: str | None = None,
           format_func: Callable[[Any], str] = str, radio: bool = False, **kwargs: Any) -> str | None:
    """A selectbox (or horizontal radio) whose value is stored under URL key ``key``."""
    widget = _widget_key(key)
    options = list(options)
    if not options:
        st.session_state[key] = ""
        return None
    stored = st.session_state.get(widget, st.session_state.get(key))
    if stored not in options:
        stored = default if default in options else options[0]
    if st.session_state.get(widget, object()) != stored:  # only a change is sent to the browser (see ``multi``)
        st.session_state[widget] = stored
    draw = container.radio if radio else container.selectbox
    extra = {"horizontal": True} if radio else {}
    chosen = draw(label, options, key=widget, format_func=format_func, **extra, **kwargs)
    st.session_state[key] = chosen if chosen is not None else ""
    return chosen


def flag(container: Any, label: str, key: str, **kwargs: Any) -> bool:
    """A checkbox whose value is stored under URL key ``key`` ("1" or absent)."""
    widget = _widget_key(key)
    if widget not in st.session_state:
        st.session_state[widget] = st.session_state.get(key) in ("1", "true", True)
    value = bool(container.checkbox(label, key=widget, **kwargs))
    st.session_state[key] = "1" if value else ""
    return value


def get(key: str, default: str = "") -> str:
    return str(st.session_state.get(key) or default)
