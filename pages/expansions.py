"""Expansions page: a seed's parse tree, productions, reference superstructures (Algorithm 1),
masked sentences and the masked-LM suggestions with their five validation verdicts."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from alict_app import artefacts, backends, charts, loading_box, state, widgets
from alict_app.expansion_tables import highlight, masked_frame, verdict_frame
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page


def backend_picker(kind: str, key: str, label: str) -> str | None:
    """A menu of the backends of ``kind`` that can load here (the help says which are left out and why)."""
    names, left_out = backends.loadable_names(kind, menu=True) if kind == "mlm" else backends.loadable_names(kind)
    if kind == "mlm" and not names and not left_out:
        names, left_out = backends.loadable_names(kind)
    if not names:
        reasons = f" {literal('; '.join(left_out.values()))}." if left_out else ""
        st.info(f"No {label.lower()} that can load here.{reasons}")
        return None
    state.ensure_choice(key, names)
    st.selectbox(label, names, key=key,
                 help=backends.left_out_help(left_out, backends.backend_description(kind, state.get(key))))
    return state.get(key)


def main() -> None:
    widgets.header("Expansions",
                   "Syntax-based expansion: parse → reference superstructures → masked-LM fills → validation.")
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    c1, c2, c3 = st.columns([2, 1, 1])
    with c1:
        spec = widgets.lc_picker(specs)
    with c2:
        parser_name = backend_picker("parser", "parser_name", "Parser")
    with c3:
        mlm_name = backend_picker("mlm", "mlm_name", "Masked LM")
    cap = int(state.get("max_seeds", 50) or 0) or "spec"
    seedset = artefacts.seed_set(spec, max_seeds=cap, seed=int(state.get("sample_seed", 0)))
    if not seedset.seeds:
        st.info("This LC has no seeds to expand.")
        return
    by_id = {s.id: s for s in seedset.seeds}
    state.ensure_choice("seed", list(by_id))
    st.selectbox("Seed", list(by_id), key="seed", format_func=lambda i: by_id[i].text[:140])
    seed = by_id[state.get("seed")]
    o1, o2, o3 = st.columns(3)
    for key, default in (("exp_top_prod", 5), ("exp_max_masks", 2), ("exp_top_k", 10)):
        state.keep(key, default)  # kept across a visit to another page
    top_k_productions = o1.slider("Reference superstructures per production", 1, 10, key="exp_top_prod")
    max_masks = o2.slider("Max masks per sentence", 1, 3, key="exp_max_masks")
    top_k = o3.slider("Suggestions per mask (top-k)", 1, 20, key="exp_top_k")
    if parser_name is None:
        return

    loading = loading_status(parser_name, mlm_name)
    tree = None
    with guarded("parsing the seed"), st.spinner("Parsing …"):
        tree = artefacts.parse_seed(parser_name, seed)
    if tree is not None:
        loading_box.step(loading, f"Parser {parser_name!r} ready.")
    if tree is not None:
        st.subheader("Parse tree")
        st.plotly_chart(charts.parse_tree_figure(tree), width="stretch", key="parse_tree")
        with st.expander("Productions"):
            st.code("\n".join(str(p) for p in artefacts.productions_of(tree)), language="text")

    if tree is None:
        loading_box.finish(loading, missing_models(parser_name, None))
        return
    masked = []
    with guarded("finding reference superstructures (Algorithm 1)"), st.spinner("Matching the reference grammar …"):
        masked = artefacts.masked_for_seed(parser_name, seed, top_k=top_k_productions, max_masks=max_masks)
        st.subheader(f"Masked sentences ({len(masked)})")
        if masked:
            st.dataframe(masked_frame(masked), hide_index=True, width="stretch")
        else:
            st.caption("No production of this seed has a larger reference superstructure.")

    if mlm_name is None:
        loading_box.finish(loading, missing_models(parser_name, mlm_name))
        return
    with guarded("expanding the seed"), st.spinner("Asking the masked LM and validating …"):
        rows = artefacts.expand_seed(parser_name, mlm_name, spec, seed, top_k_productions=top_k_productions,
                                    max_masks=max_masks, top_k_words=top_k, max_per_seed=top_k)
        frame = verdict_frame(rows)
        accepted = int(frame["accepted"].sum()) if len(frame) else 0
        st.subheader(f"Suggestions: {accepted} accepted of {len(frame)}")
        if len(frame):
            st.dataframe(frame.style.apply(highlight, axis=1), hide_index=True, width="stretch")
            st.caption("Green rows pass all five checks (POS in context, polarity, LC predicates, protected span, "
                       "fluency: reads as English where it stands).")
            rejection_table(rows)
    loading_box.finish(loading, missing_models(parser_name, mlm_name))


def loading_status(parser_name: str, mlm_name: str | None) -> Any:
    """A status box saying which models this page loads now (the first time in this server: they take a while,
    then every session shares them); None when they are loaded already."""
    return loading_box.open_box(st, missing_models(parser_name, mlm_name), "10–30 s",
                                "Then: parse the seed, find the reference superstructures, ask the masked LM, "
                                "validate.")


def missing_models(parser_name: str | None, mlm_name: str | None) -> list[str]:
    """The page's models this server has not loaded (yet), in words."""
    return [what for what, kind, name in (("the parser", "parser", parser_name),
                                          ("the masked language model", "mlm", mlm_name))
            if name is not None and not backends.is_loaded(kind, name)]


def rejection_table(rows) -> None:
    """How many suggestions each check rejected; LC predicates by kind (e.g. ``predicates:length``), unknown
    words (``polarity:unknown``) apart from polar ones. A suggestion may fail several checks."""
    from alict_core.expansion import rejection_counts

    counts = rejection_counts(rows)
    if counts:
        st.markdown("**Rejections per check**")
        st.dataframe(pd.DataFrame({"check": list(counts), "rejected": list(counts.values())}), hide_index=True)


run_page(main, "showing the expansions")
