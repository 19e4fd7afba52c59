"""Failures page: the failure explorer of one run, capability-first.

Filters (capability, LC, model, test type, seed vs expansion, fails/passes, template, inserted word)
and the grouping live in the URL, so a link reopens the same view. Fail rates per group come with a
plain headline; each case shows its seed/expansion pair, expectation, every model's prediction and,
on demand, its explanation.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from alict_app import case_explainer, explorer_data, paged_explorer, run_picker, runs, state, widgets
from alict_app.failure_views import case_table, choose_case, filter_bar, grouping, overview
from alict_app.guard import run_page
from alict_core.analysis.explore import apply_filters, pass_to_fail_candidates


def main() -> None:
    widgets.header("Failures", "Where the models fail, on which words and templates, and why.")
    key = run_picker.run_picker(state.get("task"))
    if key is None:
        return
    widgets.unparsed_warning(key)  # those cases passed or failed as the fallback label, not by the model
    if runs.is_big(key):  # aggregates and one page of rows (alict_app.paged_explorer)
        paged_explorer.show(key)
        return
    data = explorer_data.frame(key)
    if data.empty:
        st.info("This run has no cases.")
        return
    filters = filter_bar(data)
    scope = apply_filters(data, replace(filters, outcome="all", pass_to_fail=False))
    narrowed = bool(filters.capabilities or filters.lcs or filters.models or filters.test_types or filters.kinds)
    candidates = pass_to_fail_candidates(data)
    overview(key, apply_filters(data, replace(filters, outcome="all", template="", word="", pass_to_fail=False)),
             filtered=narrowed, candidates=candidates)
    grouping(scope, filters.models, candidates if filters.pass_to_fail else None)
    st.subheader("Cases")
    shown = apply_filters(data, filters)
    case_table(shown, filters.outcome)
    row = choose_case(shown)
    if row is not None:
        state.put("model", row["model"])
        case_explainer.case_detail(key, row, data)
    with st.expander("Recurring template tokens per LC"):
        case_explainer.recurring(key, data)


run_page(main, "analysing the failures")
