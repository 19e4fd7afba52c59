"""Compare page: two runs (two models, or one model before and after a change) per LC and capability.

Both sides, the paired difference with its 95 % interval and a corrected significance mark, a plot a stakeholder reads
at a glance, and the cases that newly fail or newly pass. The chosen runs and models live in the URL.
"""

from __future__ import annotations

import streamlit as st

from alict_app import charts, explorer_data, run_picker, runs, state, view_state, widgets
from alict_app.formatting import literal
from alict_app.guard import run_page

PERCENT = ("rate_a", "rate_b", "difference", "diff_low", "diff_high", "ci_low_a", "ci_high_a", "ci_low_b", "ci_high_b")


def side(column, title: str, run_key: str, keys: list[str], labels: dict[str, str], model_key: str,
         default_run: str | None = None, model_note: bool = True) -> tuple[str, str]:
    """Draw one side's run and model pickers; return (run key, model). ``model_note``: say a model the link asked
    for that is not in the run shown (not when the run shown replaced the one asked for: that model is no news)."""
    with column:
        st.markdown(f"**{literal(title)}**")
        asked_run = _asked(run_key)
        chosen = view_state.single(st, "Run", keys, run_key, default=default_run,
                                   format_func=lambda k: labels.get(k, k))
        models = sorted(explorer_data.frame(chosen)["model"].unique()) if chosen else []
        asked_model = _asked(model_key)
        model = view_state.single(st, "Model", models, model_key)
        _link_notes(run_key, asked_run, chosen or "", labels.get(chosen or "", chosen or ""),
                    asked_model if model_note else "", model)
    return chosen or "", model or ""


def _link_notes(run_key: str, asked_run: str, chosen: str, shown: str, asked_model: str, model: str | None) -> None:
    """Say what a link asked for on a side that is not shown: its run (gone, or a run of the other task) or its
    model (`?run=` is said in main())."""
    if asked_run and asked_run != chosen and run_key != "run":
        if not runs.is_done(asked_run):  # unknown or gone
            st.warning(f"The link's run {literal(asked_run[:40])} is not a finished run of this task: showing "
                       f"{literal(shown)} instead.")
            return
        if run_picker.other_task_note(asked_run, str(state.get("task")), shown):  # run_b follows the task (a task
            return  # switch brings back this task's): one of the other task is a link's; its model is then no news
    if asked_model and asked_model != model:  # a link comparing run A with itself without a word
        st.warning(f"The link's model {literal(asked_model[:60])} is not in this run: showing "
                   f"{literal(model or '')} instead.")


def _asked(key: str) -> str:
    """The value the URL (a shared link) or the session asked for ``key`` before the picker checks it."""
    return view_state.get(key) if f"w_{key}" not in st.session_state else ""


def main() -> None:
    widgets.header("Compare", "Two runs side by side: which capabilities got better or worse, and which cases changed.")
    keys, labels = run_picker.task_runs(state.get("task"))
    if not keys:
        st.info("No finished run for this task yet: start one on the **Run** page.")
        return
    task = str(state.get("task"))
    fell_back = state.get("run") not in keys  # side A shows another run than the one asked for (a task switch, a link
    if fell_back:  # to a run gone or of the other task): a model asked for with that run is no news on this one
        asked, instead = str(state.get("run") or ""), run_picker.fallback_run(task, keys)
        if asked and not runs.is_done(asked):  # a link's run A that is gone (or mistyped): it compared another run's
            # numbers without a word
            st.warning(f"The link's run {literal(asked[:40])} is not a finished run of this task: showing "
                       f"{literal(labels.get(instead, instead))} instead.")
        elif asked != st.session_state.get(run_picker.SHOWN_RUN):  # a run of the other task a task switch left is no
            run_picker.other_task_note(asked, task, labels.get(instead, instead))  # link's
        state.put("run", instead)
        st.session_state.pop("w_run", None)  # the side's widget held the other task's run: it drew the newest
    left, right = st.columns(2)
    key_a, model_a = side(left, "A (before / baseline)", "run", keys, labels, "model_a", model_note=not fell_back)
    run_picker.note_shown(task, key_a)
    if not view_state.get("model_b") and not view_state.get("run_b"):  # default: A's run, its next model
        models = sorted(explorer_data.frame(key_a)["model"].unique())
        state.put("model_b", next((m for m in models if m != model_a), model_a))
    key_b, model_b = side(right, "B (after / challenger)", "run_b", keys, labels, "model_b", default_run=key_a)
    if not (key_a and key_b and model_a and model_b):
        return
    if (key_a, model_a) == (key_b, model_b):
        st.info("Choose two different runs or models to compare.")
        return
    comparison = explorer_data.comparison(key_a, model_a, key_b, model_b)
    label_a, label_b = comparison.label_a, comparison.label_b
    st.markdown(f"**{literal(comparison.headline())}**")
    st.plotly_chart(charts.comparison_figure(comparison.lcs, label_a, label_b), width="stretch", key="comparison")
    percent = {c: st.column_config.NumberColumn(format="percent") for c in PERCENT}
    by_cap, by_lc = st.tabs(["Per capability", "Per LC"])
    columns = ["n_a", "rate_a", "n_b", "rate_b", "n_paired", "difference", "diff_low", "diff_high", "p_value",
               "p_bh", "p_holm", "significance", "regression"]
    by_cap.dataframe(comparison.capabilities[["capability", "n_lcs", *columns]], hide_index=True, width="stretch",
                     column_config=percent)
    by_lc.dataframe(comparison.lcs[["capability", "lc_title", "lc_id", *columns]], hide_index=True, width="stretch",
                    column_config={**percent, "lc_title": "LC"})
    st.caption(f"Cases are matched by LC and text and compared in pairs, a seed and its expansions as one group. "
               f"Rates: 95 % seed-clustered intervals; difference: B − A on the paired cases with its seed-clustered "
               f"95 % interval. Test: {comparison.test}. Marks use {comparison.correction} (* q < 0.05, "
               f"** q < 0.01, *** q < 0.001); 'regression' uses {comparison.gate_correction} (p < 0.05), the "
               f"`compare --fail-on-regression` gate.")
    failing, passing = st.tabs([f"Newly failing ({len(comparison.newly_failing)})",
                                f"Newly passing ({len(comparison.newly_passing)})"])
    failing.dataframe(comparison.newly_failing, hide_index=True, width="stretch", key="newly_failing")
    passing.dataframe(comparison.newly_passing, hide_index=True, width="stretch", key="newly_passing")


run_page(main, "comparing the runs")
