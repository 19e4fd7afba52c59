"""The harden page's pieces: which models can be retrained, the LCs' readiness, the retraining with its progress,
and the comparison of parent and retrained version (chart, table, what got worse)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from alict_app.formatting import literal, plot_text
from alict_app.guard import show_error
from alict_app.progress import StagedProgress
from alict_app.runs import folder_stamp
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.harden import guards
from alict_core.harden.evaluate import paired_tests, regression_note, regression_text, regressions
from alict_core.harden.export import export_hardening_data, run_readiness
from alict_core.harden.split import SplitRatios
from alict_core.harden.versions import register_all

RETRAINABLE_KINDS = ("embedded", "version")
STAGES = {"exporting": 0.05, "retraining": 0.45, "testing": 0.5}  # shares of the time, for one overall ETA


def retrainable(name: str) -> bool:
    from alict_core.models.registry import model_entry

    try:
        return model_entry(name).tags.get("kind") in RETRAINABLE_KINDS
    except AlictError:
        return False


def readiness_stamp(folder: Path) -> tuple[Any, ...]:
    """What the readiness table of the run in ``folder`` depends on besides its settings: the run's files and the
    review write-back (the cases it leaves out of training); the table was kept from before a confirmed write-back,
    for every visitor, while the retraining left the rejected cases out (pass 38)."""
    from alict_core.review.writeback import rejection_state

    return folder_stamp(Path(folder)), rejection_state()


@st.cache_data(show_spinner="Checking which LCs can be trained on and tested …", max_entries=16)
def readiness_table(folder: str, stamp: tuple[Any, ...], model: str, split: str, seed: int,
                    minimum: int) -> pd.DataFrame:
    """Per LC of the run: cases, the model's fail rate, trainable cases, test split size, ready or why not
    (``alict_core.harden.guards``; ``stamp``, :func:`readiness_stamp`, renews it when what it depends on changes)."""
    rows = [r.to_dict() for r in run_readiness(folder, model, ratios=SplitRatios.parse(split), seed=seed,
                                               min_test_cases=minimum)]
    return pd.DataFrame(rows, columns=["lc_id", "n_cases", "fail_rate", "trainable", "test_cases", "ready", "reason"])


def _comparison_chart(table: pd.DataFrame):
    import plotly.graph_objects as go

    labels = [f"{plot_text(lc)}{' (trained)' if t else ''}" for lc, t in zip(table.lc_id, table.trained, strict=True)]
    fig = go.Figure()
    for column, name, lo, hi in (("fail_before", "parent", "ci_low_before", "ci_high_before"),
                                 ("fail_after", "retrained", "ci_low_after", "ci_high_after")):
        fig.add_bar(x=labels, y=table[column], name=name,
                    error_y={"type": "data", "symmetric": False, "array": table[hi] - table[column],
                             "arrayminus": table[column] - table[lo]})
    fig.update_layout(barmode="group", yaxis_title="fail rate", yaxis_tickformat=".0%", height=360,
                      margin={"t": 20, "b": 20})
    return fig


def retrain(folder, model: str, lcs: list[str], seed: int, split: str, lc_share: float | None,
             max_original: int | None) -> None:
    from alict_core.common.config import artefact_dir
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.training.retrain import RetrainSettings, retrain_embedded

    settings = RetrainSettings(seed=seed, lc_share=lc_share, max_original=max_original)
    ratios = SplitRatios.parse(split)
    export_dir = artefact_dir("harden") / hash_json({"run": str(folder), "lcs": lcs, "split": split, "seed": seed})
    with st.status("Retraining …", expanded=True) as status:
        overall = StagedProgress(st.progress(0.0, text="starting …"), STAGES)
        status.write(f"Exporting the cases of {literal(', '.join(lcs))}, split by seed and source sentence "
                     f"({literal(split)}) …")
        overall.update("exporting", 0, 1)
        export_hardening_data(folder, export_dir, lcs=lcs, ratios=ratios, seed=seed, formats=("jsonl", "csv"),
                              overwrite=True, min_test_cases=guards.MIN_TEST_CASES)  # a short test split: refused
        overall.update("exporting", 1, 1, "done")
        name = retrain_embedded(model, export_dir, settings=settings, min_test_cases=guards.MIN_TEST_CASES,
                                progress=lambda done, total, msg: overall.update("retraining", done, total, msg))
        status.write(f"New version **{literal(name)}**; testing parent and version on held-out cases …")
        comparison = evaluate_versions(model, name, export_dir,
                                       progress=lambda done, total, msg: overall.update("testing", done, total, msg))
        overall.update("testing", 1, 1, "done")
        status.update(label=f"Retrained {literal(name)}", state="complete")
    register_all()
    st.session_state["harden_result"] = comparison.to_dict() | {
        "headline": comparison.headline(), "status": f"Retrained {literal(name)}", "progress": overall.shown}


def show_regressions(result: dict) -> None:
    """What got worse after hardening, in red: each LC and corpus measure with its delta and interval."""
    items = result.get("regressions")
    if items is None:
        items = regressions(result)
    if not items:
        st.success("Nothing got worse: no LC's fail rate rose and the corpus test scores did not fall.")
        return
    lines = [f"- :red[{literal(regression_text(item))}]"
             + (f" — {literal(note)}" if (note := regression_note(item)) else "")
             for item in items]
    st.markdown(f":red[**Worse after hardening ({len(items)}):**]\n" + "\n".join(lines))


def show_result(result: dict) -> None:
    st.subheader(f"{literal(result['parent'])} → {literal(result['child'])}")
    st.markdown(literal(result["headline"]))
    show_regressions(result)
    table = pd.DataFrame(result["lcs"])
    st.plotly_chart(_comparison_chart(table), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="percent")
                                for c in table.columns if c.startswith(("fail", "ci_", "delta", "diff_"))})
    tests = result.get("tests") or paired_tests()
    st.caption(f"Before and after on exactly the same cases: {tests['lcs']} (p_value); {tests['correction']} "
               "(p_holm, regression). diff_low–diff_high: the seed-clustered 95 % interval of the paired change.")
    if result.get("heldout"):
        held = pd.DataFrame(result["heldout"]).T.reset_index(names="model")
        dropped = (result.get("checks") or {}).get("heldout_texts_excluded_as_training_texts", 0)
        paired = result.get("heldout_test") or {}
        st.caption("Corpus test split (never used in retraining"
                   + (f"; {dropped} texts equal to a training text left out)" if dropped else ")")
                   + (f". Accuracy change: {paired['newly_right']} texts newly right, {paired['newly_wrong']} newly "
                      f"wrong; {tests['heldout']}: p = {paired['p_value']:.3g}" if paired else ""))
        st.dataframe(held, hide_index=True)
    checks = result.get("checks") or {}
    if checks.get("leak_check"):
        leak = checks["leak_check"]
        st.caption(f"Leak check: {leak['leaking']} of {leak['n_training']} LC training texts equal or share a source "
                   "sentence with an evaluation text"
                   + (f"; {checks['other_lc_cases_excluded_for_overlap']} cases of the other LCs left out for "
                      "sharing one with the training split" if checks.get("other_lc_cases_excluded_for_overlap")
                      else ""))
    st.info(f"The version **{literal(result['child'])}** is now selectable under *Models under test* in the sidebar.")


RETRAIN_FAILED = "harden_failed"  # the last press's error and the inputs it was refused for


def show_refusal(inputs: list) -> None:
    """The last press's error, kept while the inputs stay as they were: drawn only in the press's run, a rerun
    from elsewhere (the sidebar's status probe resolving, a build landing) wiped it before it was read."""
    failed = st.session_state.get(RETRAIN_FAILED)
    if failed and failed["inputs"] == inputs:
        show_error(failed["error"], "retraining")
    elif failed:
        st.session_state.pop(RETRAIN_FAILED)
