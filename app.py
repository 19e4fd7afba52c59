"""ALiCT Studio — Streamlit entry point: ``streamlit run app.py``.

Navigation over ten pages (files in ``pages/``; in demo mode the Story and three read-only pages); the
sidebar holds the task, corpus, models and backend status. Models load lazily on the pages that need them, so
the first paint is fast.
"""

from __future__ import annotations

import os
import sys
import time

import streamlit as st

from alict_app import artefacts, backends, demo, presses, state
from alict_app.formatting import literal
from alict_app.guard import NAVIGATION_FLAG, guarded
from alict_app.server_log import configure_server_log
from alict_app.sidebar import render_sidebar, render_view_link
from alict_core.common.errors import AlictError
from alict_core.common.runtime import configure_torch

configure_server_log()  # the warnings pages point to ("in the server log") reach the server's stderr
try:
    configure_torch()  # process-wide torch settings once at start-up (idempotent across reruns)
    _setting_error = ""
except AlictError as exc:  # an operator's setting (ALICT_TORCH_THREADS): one message, not a traceback
    _setting_error = str(exc)

st.set_page_config(page_title="ALiCT Studio", page_icon="🧪", layout="wide")
if _setting_error:
    st.error(f"The server is misconfigured: {_setting_error}")
    st.stop()

PAGES = [
    st.Page("pages/specs.py", title="Specs", icon=":material/edit_note:", default=True),
    st.Page("pages/seeds.py", title="Seeds", icon=":material/grass:"),
    st.Page("pages/expansions.py", title="Expansions", icon=":material/account_tree:"),
    st.Page("pages/lego.py", title="Adjunct trees", icon=":material/park:"),
    st.Page("pages/run.py", title="Run", icon=":material/play_arrow:"),
    st.Page("pages/failures.py", title="Failures", icon=":material/bug_report:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/report.py", title="Report", icon=":material/summarize:"),
    st.Page("pages/review.py", title="Review", icon=":material/rate_review:"),
    st.Page("pages/harden.py", title="Harden", icon=":material/fitness_center:"),
]
if demo.enabled():  # read-only: open on the story, no page that edits, builds or runs
    PAGES = [st.Page("pages/story.py", title="Story", icon=":material/auto_stories:", default=True),
             *(p for p in PAGES if p.title in ("Failures", "Compare", "Report"))]

_started = time.perf_counter()
if demo.problem():
    st.error(literal(demo.problem()), icon=":material/warning:")
state.init_state()
navigation = st.navigation(PAGES)
with guarded("drawing the sidebar"):
    render_sidebar()
st.session_state[NAVIGATION_FLAG] = True
try:
    navigation.run()
finally:
    st.session_state[NAVIGATION_FLAG] = False
presses.forget_untaken()  # the run completed: a press its page did not take never fires later
state.sync_query_params()
render_view_link()
backends.start_status_probe()  # after the page is drawn: the probe imports heavy backend modules
artefacts.start_corpus_warmup()  # and every task's corpus, so the first task switch reads none
if os.environ.get("ALICT_APP_TIMING"):  # per-run script time, for benchmarks
    print(f"[alict-app] {navigation.title}: {time.perf_counter() - _started:.3f}s", file=sys.stderr, flush=True)
