"""Failures page: fail-rate heatmap and bars, pass-to-fail counts, a failure browser and, for one
case, token contributions, the masking template with its fidelity curve and the seed/expansion pair."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from alict_app import charts, runs, services, state, widgets
from alict_app.guard import guarded, run_page


def choose_run(task: str) -> str | None:
    """The run to analyse: ``run`` from the URL/state if it exists, else the newest run of the task."""
    available = runs.list_runs(task)
    keys = [r["key"] for r in available]
    current = state.get("run")
    if current and current not in keys and runs.is_done(current):
        keys.insert(0, current)
    if not keys:
        st.info("No finished run for this task yet: start one on the **Run** page.")
        return None
    state.ensure_choice("run", keys)
    labels = {r["key"]: runs.describe_run(r) for r in available}
    st.selectbox("Run", keys, key="run", format_func=lambda k: labels.get(k, k))
    return state.get("run")


def model_ref(run_key: str, model_name: str) -> dict[str, Any]:
    for ref in runs.run_info(run_key)["request"]["models"]:
        if model_name in (ref.get("label"), ref["name"], (ref.get("kwargs") or {}).get("name")):
            return ref
    return {"name": model_name, "kwargs": {}}


def overview(key: str, p2f: pd.DataFrame) -> None:
    figures = runs.overview_figures(key)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(figures["heatmap"], width="stretch", key="heatmap")
    with right:
        st.markdown("**Pass-to-fail pairs** (seed passes, its expansion fails)")
        if len(p2f):
            counts = p2f.groupby([c for c in ("lc_id", "model") if c in p2f.columns]).size().reset_index(name="pass_to_fail")
            st.dataframe(counts, hide_index=True, width="stretch")
        else:
            st.caption("none in this run (run with expansions to find them)")
    st.plotly_chart(figures["bars"], width="stretch", key="bars")


def browser(cases: pd.DataFrame, p2f: pd.DataFrame) -> pd.DataFrame:
    f1, f2, f3, f4 = st.columns([2, 2, 2, 1])
    lcs = f1.multiselect("LC", sorted(cases["lc_id"].unique()), key="fb_lc")
    models = f2.multiselect("Model", sorted(cases["model"].unique()), key="fb_model")
    expected = cases["expected"].map(expected_text) if "expected" in cases else pd.Series([""] * len(cases))
    labels = f3.multiselect("Expected", sorted(expected.unique()), key="fb_label")
    only_p2f = f4.checkbox("pass-to-fail only", key="fb_p2f")
    shown = cases.assign(expected_label=expected)[cases["failed"]]  # (assigning to an empty frame adopts the index)
    if lcs:
        shown = shown[shown["lc_id"].isin(lcs)]
    if models:
        shown = shown[shown["model"].isin(models)]
    if labels:
        shown = shown[shown["expected_label"].isin(labels)]
    if only_p2f and len(p2f) and "case_id" in shown:
        ids = set(p2f.get("expansion_id", p2f.get("case_id", pd.Series(dtype=str))))
        shown = shown[shown["case_id"].isin(ids)]
    return shown


def expected_text(expected: Any) -> str:
    if isinstance(expected, dict):
        return f"{expected.get('kind')}: {'/'.join(expected.get('labels') or [])}"
    return str(expected)


def case_detail(run_key: str, row: pd.Series, cases: pd.DataFrame) -> None:
    ref_json = json.dumps(model_ref(run_key, row["model"]), sort_keys=True)
    names = services.backend_names("explainer") or ["lemna", "shap", "lime"]
    c1, c2, c3, c4 = st.columns(4)
    state.ensure_choice("explainer", names)
    method = c1.selectbox("Explainer", names, key="explainer")
    n_samples = c2.select_slider("Samples", [50, 100, 200, 500, 1000], value=200, key="exp_samples")
    p_thresh = c3.slider("Template threshold", 0.5, 1.0, 0.9, 0.05, key="exp_pthresh")
    seed = c4.number_input("Seed", 0, 9999, 0, key="exp_seed")
    st.markdown(f"**Case** `{row.get('case_id', '')}` · model **{row['model']}** · expected {expected_text(row.get('expected'))}"
                f" · predicted **{row.get('predicted', '?')}**")
    with guarded("explaining the case"), st.spinner(f"Explaining with {method} …"):
        contributions = services.explain_case(ref_json, row["text"], method, int(seed), int(n_samples))
        st.markdown("**Token contributions** (towards the predicted label: red for, blue against)")
        st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"]), unsafe_allow_html=True)
        if st.toggle("show as bars", key="contrib_as_bars"):
            st.plotly_chart(charts.contributions_bar(contributions["tokens"], contributions["scores"]),
                            width="stretch", key="contrib_bars")
    with guarded("building the masking template"), st.spinner("Building the masking template …"):
        template = services.template_case(ref_json, row["text"], method, int(seed), int(n_samples), float(p_thresh))
        show_template(template, contributions)
    if row.get("kind") == "expansion":
        pair = cases[(cases["seed_id"] == row["seed_id"]) & (cases["kind"] == "seed") & (cases["model"] == row["model"])]
        if len(pair):
            seed_row = pair.iloc[0]
            st.markdown("**Seed vs expansion**")
            left, right = st.columns(2)
            for column, item, title in ((left, seed_row, "seed"), (right, row, "expansion")):
                with column, guarded(f"explaining the {title}"):
                    verdict = "❌ fails" if item["failed"] else "✅ passes"
                    st.markdown(f"*{title}* — predicted **{item.get('predicted', '?')}** {verdict}")
                    contrib = services.explain_case(ref_json, item["text"], method, int(seed), int(n_samples))
                    st.markdown(charts.contributions_html(contrib["tokens"], contrib["scores"]), unsafe_allow_html=True)


def show_template(template: dict[str, Any], contributions: dict[str, Any] | None = None) -> None:
    st.markdown("**Masking template**")
    st.code(str(template.get("template", "")), language="text")
    kept = set(template.get("kept_positions") or [])
    if contributions and kept:
        flags = [i in kept for i in range(len(contributions["tokens"]))]
        st.markdown(charts.contributions_html(contributions["tokens"], contributions["scores"], flags), unsafe_allow_html=True)
        st.caption("underlined: the tokens the template keeps")
    reached = "reached" if template.get("reached") else "not reached"
    st.caption(f"label kept: {template.get('label', '?')} · fidelity threshold {template.get('p_thresh', '?')} {reached} · "
               f"{template.get('samples_used', '?')} samples, {template.get('model_calls', '?')} model calls")
    curve = template.get("fidelity_curve") or []
    if curve:
        st.plotly_chart(charts.fidelity_figure(curve, template.get("p_thresh")), width="stretch", key="fidelity")


def recurring(run_key: str, cases: pd.DataFrame, method: str, n_samples: int, p_thresh: float, seed: int) -> None:
    """Per LC (and model): the tokens the masking templates of its failures keep most often."""
    st.subheader("Recurring template tokens per LC")
    failed = cases[cases["failed"]]
    lcs = sorted(failed["lc_id"].unique())
    if not lcs:
        st.caption("no failures")
        return
    c1, c2, c3 = st.columns([2, 2, 1])
    state.ensure_choice("rt_lc", lcs)
    lc = c1.selectbox("LC", lcs, key="rt_lc")
    models = sorted(failed[failed["lc_id"] == lc]["model"].unique())
    state.ensure_choice("rt_model", models)
    model_name = c2.selectbox("Model", models, key="rt_model")
    limit = c3.number_input("Failures", 1, 100, 10, key="rt_limit")
    if not st.button("Collect templates", key="rt_go"):
        st.caption("Builds the masking template of up to N failures of the LC (cached) and ranks the kept tokens.")
        return
    with guarded("collecting recurring template tokens"):
        from alict_app.core import core_attr

        recurring_tokens = core_attr(services.EXPLAIN, "recurring_template_tokens", services.EXPLAIN_HINT)
        ref_json = json.dumps(model_ref(run_key, model_name), sort_keys=True)
        rows = failed[(failed["lc_id"] == lc) & (failed["model"] == model_name)].head(int(limit))
        bar = st.progress(0.0, text="templates …")
        templates = []
        for i, text in enumerate(rows["text"], 1):
            templates.append(services.template_case(ref_json, text, method, seed, n_samples, p_thresh))
            bar.progress(i / len(rows), text=f"template {i}/{len(rows)}")
        st.dataframe(recurring_tokens(templates), hide_index=True, width="stretch")


def main() -> None:
    widgets.header("Failures", "Where the models fail, which expansions flip a pass into a fail, and why.")
    task = state.get("task")
    key = choose_run(task)
    if key is None:
        return
    frames = runs.run_frames(key)
    cases, p2f = frames["cases"], frames["pass_to_fail"]
    if not len(cases):
        st.info("This run has no cases.")
        return
    overview(key, p2f)
    st.subheader("Failure browser")
    shown = browser(cases, p2f)
    st.caption(f"{len(shown)} failing cases")
    st.dataframe(shown[[c for c in ("lc_id", "model", "kind", "text", "expected_label", "predicted", "case_id") if c in shown]],
                 hide_index=True, width="stretch", height=260)
    if not len(shown):
        return
    shown = shown.assign(_pick=shown["case_id"].astype(str) + "::" + shown["model"].astype(str))
    picks = list(shown["_pick"])
    state.ensure_choice("case", picks)
    texts = dict(zip(shown["_pick"], shown["text"]))
    st.selectbox("Explain case", picks, key="case", format_func=lambda p: f"{p.split('::')[1]} · {texts[p][:110]}")
    row = shown.set_index("_pick").loc[state.get("case")]
    state.put("model", row["model"])
    case_detail(key, row, cases)
    recurring(key, cases, state.get("explainer"), int(st.session_state.get("exp_samples", 200)),
              float(st.session_state.get("exp_pthresh", 0.9)), int(st.session_state.get("exp_seed", 0)))


run_page(main, "analysing the failures")
