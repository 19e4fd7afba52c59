"""Harden page: pick the LCs a model fails in a run, retrain it on their generated cases, see the fix proven."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from alict_app import harden_view, presses, run_picker, state
from alict_app.formatting import literal
from alict_app.guard import run_page
from alict_core.common.errors import AlictError
from alict_core.harden import guards
from alict_core.harden.export import list_runs
from alict_core.harden.guards import preselected
from alict_core.harden.versions import list_versions

SPLIT_FIELD = "Train:validation:test split of seed groups"


def split_problem(split: str) -> str | None:
    """Why the split typed into the settings cannot be used (named by its field, not the CLI's --split), or None."""
    from alict_core.harden.split import SplitRatios

    try:
        SplitRatios.parse(split)
    except AlictError as exc:  # the core's reason when a share is missing ("0:0:1"), never the CLI's flag
        reason = str(exc) if str(exc).startswith("split ratios") else "expected three finite non-negative numbers " \
            "such as 8:1:1"
        return f"{SPLIT_FIELD} {split[:40]!r}: {reason}"
    return None


HARDEN_DEFAULTS: dict[str, object] = {"harden_seed": 13, "harden_split": "8:1:1", "harden_share": 0.0, "harden_cap": 0}


def settings() -> tuple[int, str, float, int]:
    """The retraining settings: seed, split, share of LC cases, cap on original texts."""
    for key, default in HARDEN_DEFAULTS.items():
        state.keep(key, default)  # kept across a visit to another page
    with st.expander("Settings"):
        seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, key="harden_seed"))
        split = st.text_input(SPLIT_FIELD, key="harden_split")
        share = st.slider("Share of LC cases in the training mix (0 = all original + all LC cases)", 0.0, 0.9,
                          key="harden_share")
        cap = int(st.number_input("Cap on original training texts (0 = all)", min_value=0, key="harden_cap"))
    return seed, split, share, cap


def choose_lcs(run: dict[str, Any], model: str, split: str, seed: int) -> list[str]:
    """The LCs' readiness table and the LCs to train on (preselected for a new run or model)."""
    folder = run["folder"]
    readiness = harden_view.readiness_table(str(folder), harden_view.readiness_stamp(folder), model, split, seed,
                                            guards.MIN_TEST_CASES)
    st.dataframe(readiness, hide_index=True, width="stretch",
                 column_config={"fail_rate": st.column_config.NumberColumn("fail rate", format="percent"),
                                "test_cases": st.column_config.NumberColumn("test split"),
                                "trainable": st.column_config.NumberColumn("trainable (training split)"),
                                "reason": st.column_config.TextColumn("why not preselected")})
    state.ensure_choices("harden_lcs", list(readiness.lc_id), default=[])  # kept across a visit to another page
    if st.session_state.get("harden_lcs_for") != [run["id"], model, split, seed]:  # a new run or model: preselect
        st.session_state["harden_lcs_for"] = [run["id"], model, split, seed]
        st.session_state["harden_lcs"] = preselected([guards.LcReadiness(**r) for r in readiness.to_dict("records")])
    lcs = st.multiselect(f"LCs to train on (preselected: up to three it fails most — at least "
                         f"{guards.MIN_FAIL_RATE:.0%} — that can be trained on and have a test split of at least "
                         f"{guards.MIN_TEST_CASES} cases)", list(readiness.lc_id), key="harden_lcs")
    short = readiness[readiness.lc_id.isin(lcs) & (readiness.test_cases < guards.MIN_TEST_CASES)]
    if len(short):
        st.warning(literal(guards.split_size_message(list(zip(short.lc_id, short.test_cases.astype(int), strict=True)),
                                                     guards.MIN_TEST_CASES) + ". Retraining refuses it."))
    return lcs


def main() -> None:
    st.title("Harden")
    st.caption("Retrain a model on the generated cases of LCs it fails (split so that no seed, source sentence or "
               "text is both trained on and tested, and seeds built from corpus test sentences are only tested; a "
               "leak check runs before training), then compare parent and retrained version on the untouched test "
               "split, the other LCs and the corpus test split.")
    task = state.get("task")  # the sidebar task's runs, and runs whose task cannot be told (custom LCs)
    _keys, labels = run_picker.task_runs(task, include_unknown=True)
    runs = [r for r in list_runs() if r["id"] in labels and any(harden_view.retrainable(m) for m in r["models"])]
    if not runs:
        st.info("No saved run of this task with a retrainable model (minilm-sst, minilm-hatexplain or a retrained "
                "version) yet: run one on the **Run** page first.")
        return
    # keyed by run id, never by position: a run another session finishes moves the positions, and a press then
    # retrained a run (and LCs) this user never saw (pass 17, pages F3)
    by_id = {r["id"]: r for r in runs}
    gone = state.vanished("harden_run", list(by_id))  # the run shown at the draw, removed before the press
    state.ensure_choice("harden_run", list(by_id), task=state.get("task"))
    run = by_id[st.selectbox("Run", list(by_id), key="harden_run", format_func=lambda rid: labels[rid])]
    state.remember_shown("harden_run", run["id"])
    if gone is not None and presses.take("harden_go"):  # it retrained another run, with that run's preselected LCs
        st.error(f"The run you chose ({literal(str(gone)[:16])}) is no longer there (removed or re-written "
                 "meanwhile): nothing was started; choose a run again.")
    retrainable = [m for m in run["models"] if harden_view.retrainable(m)]
    state.ensure_choice("harden_model", retrainable)  # kept across a visit to another page
    model = st.selectbox("Model to retrain", retrainable, key="harden_model")
    seed, split, share, cap = settings()
    problem = split_problem(split)
    if problem is not None:
        st.error(literal(problem))  # the settings stay open to correct it; nothing below needs the split
    else:
        retrain_section(run, model, seed, split, share, cap)
    versions = list_versions()
    if versions:
        with st.expander(f"Retrained versions ({len(versions)})"):
            st.dataframe(pd.DataFrame([{k: v.get(k) for k in ("name", "parent", "task", "lcs", "created")}
                                       for v in versions]), hide_index=True)


def retrain_section(run: dict[str, Any], model: str, seed: int, split: str, share: float, cap: int) -> None:
    """The LCs to train on, the "Retrain and compare" button and its result (or why it was refused)."""
    lcs = choose_lcs(run, model, split, seed)
    inputs = [run["id"], model, list(lcs), seed, split, share, cap]
    st.button("Retrain and compare", type="primary", disabled=not lcs, key="harden_go", on_click=presses.note,
              args=("harden_go",))
    pressed = bool(presses.take("harden_go"))  # noted by the callback: a return value can lose the press under load
    if pressed:
        st.session_state.pop(harden_view.RETRAIN_FAILED, None)
        try:
            harden_view.retrain(run["folder"], model, lcs, seed, split, share or None, cap or None)
        except Exception as exc:  # noqa: BLE001 - shown below, and kept: see show_refusal
            st.session_state[harden_view.RETRAIN_FAILED] = {"inputs": inputs, "error": exc}
    harden_view.show_refusal(inputs)
    result = st.session_state.get("harden_result")
    if result:
        if not pressed and result.get("progress"):  # the finished status box, as the press's run left it
            with st.status(result["status"], state="complete", expanded=False):
                st.progress(1.0, text=result["progress"])
        harden_view.show_result(result)


run_page(main, "showing the Harden page")
