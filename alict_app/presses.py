"""Button presses that outlive their run: noted by the button's ``on_click``, taken by the code that acts on them.

Read from ``st.button``'s return value, a press could be lost on a loaded server. With Streamlit's fast reruns a
press's run starts while the previous run (a timed fragment's, e.g. the sidebar's Backends panel) is still ending,
and that run's end resets every button's trigger to False, so ``st.button`` returned False; and a run replaced by a
newer request never reaches the ``if st.button(...)`` that would have seen the press. Streamlit runs a callback while
it applies the browser's message, before the script body, so a press noted there is kept in the session until the
code that acts on it takes it (``take``). A press no completed run took is forgotten when the run ends
(``forget_untaken``): it never fires later, on a page where its button is not drawn.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

PRESSES = "_alict_presses"  # button name -> what its press said (True, or e.g. the tick beside it)


def note(name: str, value: Any = True) -> None:
    """A button's ``on_click``: keep its press (and ``value``) in the session until ``take``."""
    st.session_state.setdefault(PRESSES, {})[name] = value


def take(name: str) -> Any:
    """What the press of button ``name`` said (``note``), once; None when it was not pressed. Read and removed with no
    Streamlit call between (a run is interrupted only at such calls)."""
    return st.session_state.get(PRESSES, {}).pop(name, None)


def forget_untaken() -> None:
    """At the end of a completed full run: drop presses no code took (their button was not drawn this run). A run
    interrupted for a rerun does not get here, so its presses go on to the next run."""
    if st.session_state.get(PRESSES):
        st.session_state[PRESSES] = {}
