"""Turn every error into a friendly message on the page (never a raw traceback)."""

from __future__ import annotations

import traceback
from contextlib import contextmanager
from typing import Callable, Iterator

import streamlit as st

from alict_app.formatting import literal, without_server_paths
from alict_core.common.errors import AlictError, ArtefactMissingError
from alict_core.common.faults import environment_fault


def show_error(exc: BaseException, what: str) -> None:
    """Render one error: missing artefact → warning, AlictError → error, anything else → summary + details."""
    fault = environment_fault(exc)  # a full disk, a read-only cache, a loop of links: said as on the CLI
    shown = literal(without_server_paths(fault or str(exc)))  # no server paths, no control characters
    if isinstance(exc, ArtefactMissingError):
        st.warning(f"Waiting for a model while {literal(what)}: {shown}", icon=":material/hourglass_top:")
    elif isinstance(exc, AlictError) or fault:
        st.error(f"Problem while {literal(what)}: {shown}", icon=":material/warning:")
    else:
        st.error(f"Unexpected error while {literal(what)}: {type(exc).__name__}: "
                 f"{literal(without_server_paths(str(exc))[:300])}",
                 icon=":material/error:")
        with st.expander("Technical details"):
            st.code(without_server_paths("".join(traceback.format_exception(exc))), language="text")


@contextmanager
def guarded(what: str) -> Iterator[None]:
    """Run a block; show any error on the page and carry on with the rest of the page.

    Streamlit's own control-flow exceptions (rerun, stop) derive from BaseException and pass through.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - this is the app's error boundary
        show_error(exc, what)


NAVIGATION_FLAG = "_alict_inside_navigation"


def run_page(main: Callable[[], None], what: str) -> None:
    """Run a page's main function inside the error boundary.

    Pages normally run under ``app.py``'s ``st.navigation`` (which draws the sidebar and keeps the URL
    state). Until ``app.py`` first calls ``st.navigation`` in a process, Streamlit runs a page's URL (a deep
    link such as ``/failures?task=…&run=…`` as a fresh server's first request) in its legacy multipage mode:
    the file in ``pages/`` alone, with a navigation of every file there. On a session's first run the page
    leaves that mode and asks for a rerun, in which ``app.py`` runs and its navigation opens this page with
    the link's query. Later runs in that mode (``AppTest.switch_page``, which re-enters it on every run) and a
    page file run as the main script set up the sidebar and URL state themselves.
    """
    import streamlit as st

    from alict_app import state

    standalone = not st.session_state.get(NAVIGATION_FLAG)
    if standalone and not state.initialised() and leave_legacy_pages_mode():
        st.rerun()  # a session's first run: no widget value to lose (AppTest runs every page in that mode)
    if standalone:
        from alict_app.sidebar import render_sidebar

        state.init_state()
        with guarded("drawing the sidebar"):
            render_sidebar()
    with guarded(what):
        main()
    if standalone:
        from alict_app import presses
        from alict_app.sidebar import render_view_link

        presses.forget_untaken()
        state.sync_query_params()
        render_view_link()


def leave_legacy_pages_mode() -> bool:
    """Whether Streamlit was still in its legacy ``pages/`` folder mode (``app.py`` has not called
    ``st.navigation`` in this process yet); it is switched off here, as ``st.navigation`` itself does."""
    from streamlit.runtime.pages_manager import PagesManager

    if not PagesManager.uses_pages_directory:
        return False
    PagesManager.uses_pages_directory = False
    return True

