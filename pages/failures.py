"""Failures page: the failure explorer of one run, capability-first.

Filters (capability, LC, model, test type, seed vs expansion, fails/passes, template, inserted word)
and the grouping live in the URL, so a link reopens the same view. Fail rates per group come with a
plain headline; each case shows its seed/expansion pair, expectation, every model's prediction and,
on demand, its explanation.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from alict_app import artefacts, backends, charts, explorer_data, paged_explorer, runs, state, view_state, widgets
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page
from alict_core.analysis.explore import (
    GROUP_BY,
    Filters,
    apply_filters,
    distinct_values,
    group_rates,
    headline,
    lc_model_rates,
    pass_to_fail_candidates,
)
from alict_core.lcspec.capabilities import group_order

MAX_ROWS = 1000  # cases listed (the filters narrow the rest)
CASE_COLUMNS = ["capability", "lc_title", "model", "kind", "text", "seed_text", "inserted_word", "expected",
                "predicted", "confidence", "passed", "pass_to_fail", "lc_id", "case_id"]
KIND_NAMES = {"seed": "seeds", "expansion": "expansions"}
OUTCOME_NAMES = {"fails": "failing cases", "passes": "passing cases", "all": "all cases"}


def filter_bar(data: pd.DataFrame) -> Filters:
    """Draw the filters (URL-backed) and return them."""
    titles = dict(zip(data["lc_id"], data["lc_label"], strict=True))
    c1, c2, c3 = st.columns([2, 3, 2])
    caps = view_state.multi(c1, "Capability", group_order(data["capability"].unique()), "cap")
    in_caps = data[data["capability"].isin(caps)] if caps else data
    lcs = view_state.multi(c2, "LC", sorted(in_caps["lc_id"].unique(), key=lambda lc: titles[lc]), "lcs",
                           format_func=lambda lc: titles.get(lc, lc), help="titles; the id is in the case table")
    models = view_state.multi(c3, "Model", sorted(data["model"].unique()), "models_f")
    c4, c5, c6 = st.columns([2, 3, 2])
    types = view_state.multi(c4, "Test type", sorted(data["test_type"].unique()), "ttype")
    kinds = view_state.multi(c5, "Seed vs expansion", ["seed", "expansion"], "kind",
                             format_func=lambda k: KIND_NAMES[k])
    outcome = view_state.single(c6, "Show", list(view_state.OUTCOMES), "outcome", default="fails", radio=True,
                                format_func=lambda o: {"fails": "fails", "passes": "passes", "all": "both"}[o],
                                help="see the passing cases next to the failing ones") or "fails"
    scope = apply_filters(data, Filters(capabilities=tuple(caps), lcs=tuple(lcs), models=tuple(models),
                                        test_types=tuple(types), kinds=tuple(kinds), outcome="all"))
    c7, c8, c9, c10 = st.columns([3, 2, 2, 1])
    template = view_state.single(c7, "Template (rule and its literals)", ["", *distinct_values(scope, "template")],
                                 "tpl", format_func=lambda t: t or "(any)")
    word = view_state.single(c8, "Inserted word (expansions)", ["", *distinct_values(scope, "inserted_word")], "word",
                             format_func=lambda w: w or "(any)")
    view_state.single(c9, "Group by", ["", *GROUP_BY], "group", format_func=lambda g: g or "(no grouping)")
    p2f = view_state.flag(c10, "pass-to-fail only", "p2f", help="expansions that fail while their seed passes")
    return Filters(tuple(caps), tuple(lcs), tuple(models), tuple(types), tuple(kinds), outcome,
                   template or "", word or "", p2f)


def overview(key: str, scope: pd.DataFrame, filtered: bool, candidates: pd.Series) -> None:
    """Heatmap of fail rates per LC × model (capability-first labels) of the cases in scope."""
    rates = lc_model_rates(scope) if filtered else explorer_data.heat_rates(key)
    if rates.empty:
        return
    st.plotly_chart(charts.lc_heatmap(rates), width="stretch", key="heatmap")
    st.caption(pass_to_fail_note(scope, candidates))
    if rates["validity"].notna().any():
        st.caption("Reviewed validity per LC (share of its cases judged valid):")
        st.dataframe(rates[["lc_title", "model", "fail_rate", "validity"]], hide_index=True, width="stretch")


def pass_to_fail_note(scope: pd.DataFrame, candidates: pd.Series) -> str:
    """How many pass-to-fail pairs the cases in scope hold, or why there are none (``candidates``: the run's
    expansions whose seed passes, ``pass_to_fail_candidates`` of the whole run)."""
    flips = int(scope["pass_to_fail"].sum())
    if flips:
        return f"{flips} pass-to-fail pairs (the seed passes, its expansion fails)"
    expansions = int((scope["kind"] == "expansion").sum())
    if not expansions:
        return ("no pass-to-fail pairs: no expansions here (tick \"Include expansions\" on the Run page to make "
                "them)")
    n_candidates = int(candidates.reindex(scope.index, fill_value=False).sum())
    return (f"no pass-to-fail pairs: none of the {n_candidates} expansions whose seed passes fails "
            f"({expansions - n_candidates} more expansions have a failing seed)")


def grouping(scope: pd.DataFrame, models: tuple[str, ...], candidates: pd.Series | None = None) -> None:
    """Fail rates per inserted word / template / ... of the cases in scope, with a headline.

    ``candidates`` (pass-to-fail only): just the expansions whose seed passes count (those that can be
    pass-to-fail), so the headline's failures are the listed pass-to-fail cases."""
    label = view_state.get("group")
    if label not in GROUP_BY:
        return
    column = GROUP_BY[label]
    if candidates is not None:
        scope = scope[candidates.reindex(scope.index, fill_value=False)]
    rates = group_rates(scope, column)
    st.markdown(f"**{headline(rates, column, models or tuple(scope['model'].unique()))}**")
    if candidates is not None and not rates.empty:
        st.caption("pass-to-fail only: of the expansions whose seed passes (their failures are the cases listed)")
    if rates.empty:
        return
    left, right = st.columns([3, 2])
    left.plotly_chart(charts.group_rate_bars(rates, column), width="stretch", key="group_bars")
    right.dataframe(rates, hide_index=True, width="stretch", height=min(420, 40 + 35 * len(rates)),
                    column_config={c: st.column_config.NumberColumn(format="percent")
                                   for c in ("fail_rate", "ci_low", "ci_high")})


def case_table(shown: pd.DataFrame, outcome: str) -> None:
    more = f" (the first {MAX_ROWS} listed)" if len(shown) > MAX_ROWS else ""
    st.caption(f"{len(shown)} {OUTCOME_NAMES[outcome]}{more}")
    st.dataframe(shown.head(MAX_ROWS)[[c for c in CASE_COLUMNS if c in shown]], hide_index=True, width="stretch",
                 height=280, column_config={"confidence": st.column_config.NumberColumn(format="percent"),
                                            "lc_title": "LC", "seed_text": "seed of the expansion"})


def choose_case(shown: pd.DataFrame) -> pd.Series | None:
    """The selected case (URL key ``case`` = "case_id::model") among the listed ones."""
    listed = shown.head(MAX_ROWS)
    if listed.empty:
        state.put("case", "")  # no stale case in the link
        return None
    picks = (listed["case_id"].astype(str) + "::" + listed["model"].astype(str)).tolist()
    texts = dict(zip(picks, listed["text"], strict=True))
    pick = view_state.single(st, "Case", picks, "case", format_func=lambda p: f"{p.split('::')[1]} · {texts[p][:110]}")
    return listed.iloc[picks.index(pick)] if pick in picks else None


def case_detail(key: str, row: pd.Series, data: pd.DataFrame) -> None:
    """The case's LC, expectation, seed/expansion pair, every model's prediction; its explanation on demand."""
    st.markdown(f"**{literal(row['lc_title'])}** · {row['capability']} · `{row['lc_id']}` · {row['test_type']} · "
                f"expected **{row['expected']}**")
    if row["kind"] == "expansion":
        left, right = st.columns(2)
        left.markdown(f"*seed*\n\n> {literal(row['seed_text'])}")
        inserted = f" (inserted: **{literal(row['inserted_word'])}**)" if row["inserted_word"] else ""
        right.markdown(f"*expansion*{inserted}\n\n> {literal(row['text'])}")
    else:
        st.markdown(f"> {literal(row['text'])}")
    if row["template"]:
        st.caption(f"template: {row['template']}")
    same = data[data["case_id"] == row["case_id"]]
    predictions = pd.DataFrame({
        "model": same["model"], "predicted": same["predicted"], "confidence": same["confidence"],
        "outcome": same["passed"].map({True: "✅ passes", False: "❌ fails"}),
        "probabilities": same["probabilities"].map(lambda p: " · ".join(f"{k} {v:.2f}" for k, v in p.items())
                                                  if isinstance(p, dict) else ""),
    })
    st.dataframe(predictions, hide_index=True, width="stretch",
                 column_config={"confidence": st.column_config.NumberColumn(format="percent")})
    if st.toggle("Explain this case (token contributions and masking template)", key="explain_on"):
        explanation(key, row, data)


def explanation(key: str, row: pd.Series, data: pd.DataFrame) -> None:
    ref_json = json.dumps(explorer_data.model_ref(key, row["model"]), sort_keys=True)
    names = backends.backend_names("explainer") or ["lemna", "shap", "lime"]
    c1, c2, c3, c4 = st.columns(4)
    state.ensure_choice("explainer", names)
    method = c1.selectbox("Explainer", names, key="explainer")
    n_samples = c2.select_slider("Samples", [50, 100, 200, 500, 1000], value=200, key="exp_samples")
    p_thresh = c3.slider("Template threshold", 0.5, 1.0, 0.9, 0.05, key="exp_pthresh")
    seed = c4.number_input("Seed", 0, 9999, 0, key="exp_seed")
    with guarded("explaining the case"), st.spinner(f"Explaining with {method} …"):
        contributions = artefacts.explain_case(ref_json, row["text"], method, int(seed), int(n_samples))
        st.markdown(f"**Token contributions** for {row['model']} (towards its label: red for, blue against)")
        st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"]), unsafe_allow_html=True)
        if st.toggle("show as bars", key="contrib_as_bars"):
            st.plotly_chart(charts.contributions_bar(contributions["tokens"], contributions["scores"]),
                            width="stretch", key="contrib_bars")
    with guarded("building the masking template"), st.spinner("Building the masking template …"):
        template = artefacts.template_case(ref_json, row["text"], method, int(seed), int(n_samples), float(p_thresh))
        show_template(template, contributions)
    if row["kind"] == "expansion" and row["seed_text"]:
        with guarded("explaining the seed"):
            seed_contrib = artefacts.explain_case(ref_json, row["seed_text"], method, int(seed), int(n_samples))
            st.markdown("**The seed, explained the same way**")
            st.markdown(charts.contributions_html(seed_contrib["tokens"], seed_contrib["scores"]),
                        unsafe_allow_html=True)


def show_template(template: dict[str, Any], contributions: dict[str, Any] | None = None) -> None:
    st.markdown("**Masking template**")
    st.code(str(template.get("template", "")), language="text")
    kept = set(template.get("kept_positions") or [])
    if contributions and kept:
        flags = [i in kept for i in range(len(contributions["tokens"]))]
        st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"], flags),
                    unsafe_allow_html=True)
        st.caption("underlined: the tokens the template keeps")
    reached = "reached" if template.get("reached") else "not reached"
    st.caption(f"label kept: {template.get('label', '?')} · fidelity threshold {template.get('p_thresh', '?')} "
               f"{reached} · {template.get('samples_used', '?')} samples, "
               f"{template.get('model_calls', '?')} model calls")
    curve = template.get("fidelity_curve") or []
    if curve:
        st.plotly_chart(charts.fidelity_figure(curve, template.get("p_thresh")), width="stretch", key="fidelity")


def recurring(key: str, data: pd.DataFrame) -> None:
    """Per LC and model: the tokens the masking templates of its failures keep most often."""
    failed = data[data["failed"]]
    lcs = sorted(failed["lc_id"].unique())
    if not lcs:
        st.caption("no failures")
        return
    titles = dict(zip(failed["lc_id"], failed["lc_label"], strict=True))
    c1, c2, c3 = st.columns([3, 2, 1])
    state.ensure_choice("rt_lc", lcs)
    lc = c1.selectbox("LC", lcs, key="rt_lc", format_func=lambda x: titles.get(x, x))
    models = sorted(failed[failed["lc_id"] == lc]["model"].unique())
    state.ensure_choice("rt_model", models)
    model_name = c2.selectbox("Model", models, key="rt_model")
    limit = c3.number_input("Failures", 1, 100, 10, key="rt_limit")
    if not st.button("Collect templates", key="rt_go"):
        st.caption("Builds the masking template of up to N failures of the LC (cached) and ranks the kept tokens.")
        return
    with guarded("collecting recurring template tokens"):
        from alict_core.explain import recurring_template_tokens

        method = str(st.session_state.get("explainer") or "lemna")
        n_samples = int(st.session_state.get("exp_samples", 200))
        p_thresh, seed = float(st.session_state.get("exp_pthresh", 0.9)), int(st.session_state.get("exp_seed", 0))
        ref_json = json.dumps(explorer_data.model_ref(key, model_name), sort_keys=True)
        rows = failed[(failed["lc_id"] == lc) & (failed["model"] == model_name)].head(int(limit))
        bar = st.progress(0.0, text="templates …")
        templates = []
        for i, text in enumerate(rows["text"], 1):
            templates.append(artefacts.template_case(ref_json, text, method, seed, n_samples, p_thresh))
            bar.progress(i / len(rows), text=f"template {i}/{len(rows)}")
        st.dataframe(recurring_template_tokens(templates), hide_index=True, width="stretch")


def main() -> None:
    widgets.header("Failures", "Where the models fail, on which words and templates, and why.")
    key = widgets.run_picker(state.get("task"))
    if key is None:
        return
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
        case_detail(key, row, data)
    with st.expander("Recurring template tokens per LC"):
        recurring(key, data)


run_page(main, "analysing the failures")
