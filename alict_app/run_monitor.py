"""The Run page's "runs in progress": every run of the store with a progress.json that is not done (started here
or with ``python -m alict_core run`` from a shell), its per-shard progress, and attaching to one.

Attached, a fragment re-reads the run's progress.json every few seconds while its writer is alive. A run whose
status says "running" but whose process is gone is shown as stopped: running the same inputs again resumes it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import streamlit as st

from alict_app import runs
from alict_app.formatting import code, literal
from alict_core.common.errors import AlictError
from alict_core.common.jsonl import read_json
from alict_core.runner.reader import MAX_ETA_S, progress_view
from alict_core.runner.store import writer_alive

REFRESH_S = 2.0


def _duration(seconds: float | None) -> str:
    if seconds is None or not 0 <= seconds <= MAX_ETA_S:  # never an OverflowError taking the page away
        return "?"
    return str(dt.timedelta(seconds=int(seconds)))


def describe(view: dict[str, Any]) -> str:
    """One line: status, shards, cases, rate, ETA and whether the writing process is alive."""
    writer = "process alive" if view["alive"] else "no process"
    return (f"**{literal(view['shown_status'])}** · shards {view['shards_done']}/{view['n_shards']} · cases "
            f"{view['cases_done']:,}/{view['n_cases']:,} · {view['rate']:.0f} cases/s · ETA {_duration(view['eta_s'])}"
            f" · {writer} · models: {literal(', '.join(view['models'])) or '?'}")


def _attached(run_id: str) -> None:
    """The attached run's progress bar and line (re-read on every fragment rerun)."""
    try:
        progress = read_json(runs.run_dir(run_id) / "progress.json")
        view = progress_view(progress, folder=runs.run_dir(run_id))
    except (ValueError, OSError, AlictError):  # inside a fragment: past the page's error boundary
        st.warning(f"Run {literal(run_id[:12])} has no readable progress any more (removed or rewritten).")
        return
    st.progress(view["fraction"], text=f"{literal(run_id[:12])}: {view['shards_done']} of {view['n_shards']} shards")
    st.markdown(describe(view))
    if view["message"]:
        st.caption(literal(view["message"]))
    if view["status"] == "done" and runs.is_done(run_id):
        st.success("Finished: open **Failures** or **Report**.")
    elif view["status"] == "done" and writer_alive(progress, runs.run_dir(run_id)):  # summary, meta, manifest
        st.info("Finishing: writing the summary and the manifest; it opens in Failures in a moment.")
    elif view["status"] == "done":  # its writer died between the status and the manifest
        st.warning("Stopped while finishing (process gone); re-run it to finish: its shards are kept.")
    elif view["status"] == "running" and not view["alive"]:
        st.warning("Stopped (process gone); re-run to resume: finished shards are kept.")
    elif view["status"] in ("cancelled", "failed"):
        st.warning(f"The run {literal(view['status'])}; running it again resumes after its finished shards.")


def attach(run_id: str, alive: bool) -> None:
    """Show the run's progress, refreshing every ``REFRESH_S`` seconds while it runs."""
    st.fragment(_attached, run_every=REFRESH_S if alive else None)(run_id)


def section() -> None:
    """List the runs in progress (nothing when there are none) and attach to the chosen one."""
    found = runs.running_runs()
    if not found:
        return
    with st.expander(f"Runs in progress ({len(found)})", expanded=True):
        for view in found:
            st.markdown(f"{code(view['run_id'][:12])} " + describe(view))
        ids = [view["run_id"] for view in found]
        chosen = st.selectbox("Attach to", ["", *ids], key="attach_run",
                              format_func=lambda r: r[:12] if r else "(none)")
        if chosen:
            attach(chosen, next(v["alive"] for v in found if v["run_id"] == chosen))
