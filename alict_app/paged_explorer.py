"""The Failures page of a large run (sharded, or more rows than the app holds in memory): aggregates and pages.

Filters, the heatmap, the grouping and its headline read the run's aggregate table (LC × model × test type × kind
counts, ``RunReader.cube``); the case list is one page of rows read from the Parquet parts (``RunReader.page``).
Template and inserted-word filters need every case's metadata, so they are offered on small runs only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app import charts, runs, state, view_state
from alict_app.formatting import literal
from alict_core.analysis.explore import counted_group_rates, headline
from alict_core.lcspec.capabilities import group_order, lc_catalog
from alict_core.runner.reader import RowFilter

PAGE_SIZE = 100
BIG_GROUP_BY = {"LC": "lc_label", "capability": "capability", "model": "model", "test type": "test_type"}
PAGE_COLUMNS = ["capability", "lc_title", "model", "kind", "text", "seed_text", "expected", "predicted", "confidence",
                "passed", "pass_to_fail", "lc_id", "case_id"]


def labelled_cube(key: str) -> pd.DataFrame:
    """The run's aggregate counts with capability-first LC labels (``capability`` from the LC catalog)."""
    cube = runs.reader(key).cube()
    if cube.empty:
        return cube.assign(lc_title=pd.Series(dtype=str), lc_label=pd.Series(dtype=str))
    catalog = lc_catalog(cube["lc_id"], dict(zip(cube["lc_id"], cube["capability"], strict=False)))
    return cube.assign(capability=cube["lc_id"].map(lambda lc: catalog[lc].capability),
                       lc_title=cube["lc_id"].map(lambda lc: catalog[lc].title),
                       lc_label=cube["lc_id"].map(lambda lc: catalog[lc].label))


def filtered_group_rates(key: str, cube: pd.DataFrame, filters: RowFilter, by: str) -> pd.DataFrame:
    """Fail rate per value of ``by`` of the rows inside ``filters`` (the columns of ``explore.group_rates``).

    Counts come from ``RunReader.cluster_counts`` (per LC, or LC × model when grouping by model, summed part by
    part), so the interval is seed-clustered like ``explore.group_rates`` and the run summary; ``cube`` (labelled)
    gives each LC its capability and label.
    """
    counts = runs.reader(key).cluster_counts(filters, by_model=by == "model")
    if not counts.empty:
        labels = cube.drop_duplicates("lc_id").set_index("lc_id")
        counts = counts.assign(capability=counts["lc_id"].map(labels["capability"]),
                               lc_label=counts["lc_id"].map(labels["lc_label"]))
    return counted_group_rates(counts, by)


def heat_rates(cube: pd.DataFrame) -> pd.DataFrame:
    """Fail rate per LC × model (the columns of ``explore.lc_model_rates``) from aggregate counts."""
    keys = ["lc_id", "lc_title", "lc_label", "capability", "model"]
    grouped = cube.groupby(keys, sort=False)[["n", "n_fail"]].sum().reset_index()
    grouped = grouped.rename(columns={"n": "n_cases"}).assign(validity=float("nan"))
    grouped["fail_rate"] = grouped["n_fail"] / grouped["n_cases"]
    return grouped.sort_values(["capability", "lc_id", "model"], ignore_index=True)


def filter_bar(cube: pd.DataFrame) -> tuple[RowFilter, tuple[str, ...]]:
    """The filters the aggregates support (URL-backed like the small-run explorer); the row filter and the models."""
    titles = dict(zip(cube["lc_id"], cube["lc_label"], strict=False))
    c1, c2, c3 = st.columns([2, 3, 2])
    caps = view_state.multi(c1, "Capability", group_order(cube["capability"].unique()), "cap")
    in_caps = cube[cube["capability"].isin(caps)] if caps else cube
    lcs = view_state.multi(c2, "LC", sorted(in_caps["lc_id"].unique(), key=lambda lc: titles[lc]), "lcs",
                           format_func=lambda lc: titles.get(lc, lc))
    models = view_state.multi(c3, "Model", sorted(cube["model"].unique()), "models_f")
    c4, c5, c6, c7 = st.columns([2, 2, 2, 1])
    types = view_state.multi(c4, "Test type", sorted(cube["test_type"].unique()), "ttype")
    kinds = view_state.multi(c5, "Seed vs expansion", ["seed", "expansion"], "kind")
    outcome = view_state.single(c6, "Show", list(view_state.OUTCOMES), "outcome", default="fails", radio=True,
                                format_func=lambda o: {"fails": "fails", "passes": "passes", "all": "both"}[o]) \
        or "fails"
    p2f = view_state.flag(c7, "pass-to-fail only", "p2f", help="expansions that fail while their seed passes")
    view_state.single(st, "Group by", ["", *BIG_GROUP_BY], "group", format_func=lambda g: g or "(no grouping)")
    if not lcs and caps:
        lcs = sorted(in_caps["lc_id"].unique())
    return RowFilter(lcs=tuple(lcs), models=tuple(models), test_types=tuple(types), kinds=tuple(kinds),
                     outcome=outcome, pass_to_fail=p2f), tuple(models)


def scoped(cube: pd.DataFrame, filters: RowFilter) -> pd.DataFrame:
    """The aggregate rows inside the filters (every outcome counts)."""
    mask = pd.Series(True, index=cube.index)
    for column, values in (("lc_id", filters.lcs), ("model", filters.models), ("test_type", filters.test_types),
                           ("kind", filters.kinds)):
        if values:
            mask &= cube[column].isin(values)
    return cube[mask]


def case_page(key: str, filters: RowFilter) -> None:
    """One page of the filtered rows (next/previous by page number)."""
    reader = runs.reader(key)
    total = runs.row_count(key, filters)
    pages = max(1, -(-total // PAGE_SIZE))
    number = st.number_input(f"Page (of {pages}, {PAGE_SIZE} rows each)", 1, pages, 1, key="big_page")
    offset = (int(number) - 1) * PAGE_SIZE
    rows = reader.page(filters, offset=offset, limit=PAGE_SIZE)
    st.caption(f"{total:,} rows · showing {offset + 1:,}–{offset + len(rows):,}" if len(rows) else f"{total:,} rows")
    if rows.empty:
        return
    catalog = lc_catalog(rows["lc_id"], dict(zip(rows["lc_id"], rows["capability"], strict=False)))
    rows = rows.assign(capability=rows["lc_id"].map(lambda lc: catalog[lc].capability),
                       lc_title=rows["lc_id"].map(lambda lc: catalog[lc].title))
    st.dataframe(rows[[c for c in PAGE_COLUMNS if c in rows]], hide_index=True, width="stretch", height=320,
                 column_config={"confidence": st.column_config.NumberColumn(format="percent"), "lc_title": "LC",
                                "seed_text": "seed of the expansion"})


def show(key: str) -> None:
    """The explorer of a large run: aggregate filters, heatmap, grouping and one page of cases."""
    reader = runs.reader(key)
    progress = reader.progress()
    if progress is not None and not reader.done:
        st.info(f"Run {literal(progress['shown_status'])}: {progress['shards_done']} of {progress['n_shards']} shards "
                "finished; the figures below cover the finished shards.")
    cube = labelled_cube(key)
    if cube.empty:
        st.info("This run has no finished results yet.")
        return
    st.caption(f"{int(cube['n'].sum()):,} case × model rows in {len(reader.files)} result part(s): figures come "
               "from aggregates, cases are listed a page at a time.")
    filters, models = filter_bar(cube)
    scope = scoped(cube, filters)
    rates = heat_rates(scope)
    if not rates.empty:
        st.plotly_chart(charts.lc_heatmap(rates), width="stretch", key="heatmap")
    label = view_state.get("group")
    if label in BIG_GROUP_BY:
        column = BIG_GROUP_BY[label]
        grouped = filtered_group_rates(key, cube, filters, column)
        st.markdown(f"**{literal(headline(grouped, column, models or tuple(scope['model'].unique())))}**")
        st.dataframe(grouped, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="percent")
                                    for c in ("fail_rate", "ci_low", "ci_high")})
    st.subheader("Cases")
    case_page(key, filters)
    state.put("case", "")
