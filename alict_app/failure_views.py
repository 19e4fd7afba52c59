"""The failure explorer's views of one small run: the URL-backed filter bar, the LC × model heatmap, the
grouped fail rates with their headline, the case table and the case picker."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app import charts, explorer_data, state, view_state
from alict_app.formatting import literal
from alict_core.analysis.explore import (
    GROUP_BY,
    Filters,
    apply_filters,
    distinct_values,
    group_rates,
    headline,
    lc_model_rates,
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
    st.markdown(f"**{literal(headline(rates, column, models or tuple(scope['model'].unique())))}**")
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
