"""One case of the failure explorer: its LC, seed/expansion pair and every model's prediction; on demand its
explanation (token contributions, masking template) and the tokens its LC's failures' templates keep."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from alict_app import artefacts, backends, charts, explorer_data, run_picker, runs, state
from alict_app.formatting import literal
from alict_app.guard import guarded


def case_detail(key: str, row: pd.Series, data: pd.DataFrame) -> None:
    """The case's LC, expectation, seed/expansion pair, every model's prediction; its explanation on demand."""
    st.markdown(f"**{literal(row['lc_title'])}** · {literal(row['capability'])} · {literal(row['lc_id'])} · "
                f"{literal(row['test_type'])} · expected **{literal(row['expected'])}**")
    if row["kind"] == "expansion":
        left, right = st.columns(2)
        left.markdown(f"*seed*\n\n> {literal(row['seed_text'])}")
        inserted = f" (inserted: **{literal(row['inserted_word'])}**)" if row["inserted_word"] else ""
        right.markdown(f"*expansion*{inserted}\n\n> {literal(row['text'])}")
    else:
        st.markdown(f"> {literal(row['text'])}")
    if row["template"]:
        st.caption(f"template: {literal(row['template'])}")
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
    changed_since_run(key, row["model"], ref_json)
    names = backends.backend_names("explainer") or ["lemna", "shap", "lime"]
    c1, c2, c3, c4 = st.columns(4)
    state.ensure_choice("explainer", names)
    method = c1.selectbox("Explainer", names, key="explainer")
    for key, default in (("exp_samples", 200), ("exp_pthresh", 0.9), ("exp_seed", 0)):
        state.keep(key, default)  # kept across a visit to another page
    n_samples = c2.select_slider("Samples", [50, 100, 200, 500, 1000], key="exp_samples")
    p_thresh = c3.slider("Template threshold", 0.5, 1.0, step=0.05, key="exp_pthresh")
    seed = c4.number_input("Seed", 0, 9999, key="exp_seed")
    with guarded("explaining the case"), st.spinner(f"Explaining with {method} …"):
        contributions = artefacts.explain_case(ref_json, row["text"], method, int(seed), int(n_samples))
        st.markdown(f"**Token contributions** for {literal(row['model'])} (towards its label: red for, blue against)")
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


def changed_since_run(key: str, model_name: str, ref_json: str) -> None:
    """Say when the model as it loads now is not the one the run ran (rebuilt, retrained in place, a rewritten
    predictions file): its explanation is of today's model, which may predict otherwise than the run's table."""
    from alict_core.models.protocol import model_fingerprint

    recorded = runs.run_model_fingerprint(key, model_name)
    with guarded("loading the model"):
        now = model_fingerprint(backends.model_from_ref(json.loads(ref_json)))
        if recorded and now != recorded:
            st.warning(f"Model {literal(model_name)} has changed since this run (its files were rebuilt, retrained "
                       "or rewritten): the explanation below is of the model as it is now, which may predict "
                       "otherwise than the run's table. Run the LCs again to compare like with like.")
        else:
            service_note(key, model_name)


def service_note(key: str, model_name: str) -> None:
    """Say that an endpoint of the run (its answers change: `answers_change`) is asked again as it answers now: its
    fingerprint (URL, task, labels) stays the same across a redeploy, so the changed-model warning cannot tell."""
    if model_name in runs.asked_services(key):
        st.warning(f"Model {literal(model_name)} is a service (an endpoint): the explanation below asks it again, as "
                   "it answers now, which may differ from its answers in this run's table (it may have been "
                   "redeployed since). Compare the label it keeps with the run's prediction.")


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
    st.caption(f"label kept: {literal(template.get('label', '?'))} · "
               f"fidelity threshold {template.get('p_thresh', '?')} "
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
    state.ensure_choice("rt_lc", lcs, task=state.get("task"))
    lc = c1.selectbox("LC", lcs, key="rt_lc", format_func=lambda x: titles.get(x, x))
    models = sorted(failed[failed["lc_id"] == lc]["model"].unique())
    state.ensure_choice("rt_model", models, task=state.get("task"))
    model_name = c2.selectbox("Model", models, key="rt_model")
    state.keep("rt_limit", 10)  # kept across a visit to another page
    limit = c3.number_input("Failures", 1, 100, key="rt_limit")
    if not st.button("Collect templates", key="rt_go"):
        st.caption("Builds the masking template of up to N failures of the LC (cached) and ranks the kept tokens.")
        return
    if run_picker.fell_back():  # pressed on the page of a run removed since: never collected from another run
        st.error("The run this press was made for is no longer there (removed or re-written since the page was "
                 "drawn): nothing collected. Check the run shown now and press again.")
        return
    service_note(key, model_name)
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
