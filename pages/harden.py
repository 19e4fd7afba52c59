"""Harden page: pick the LCs a model fails in a run, retrain it on their generated cases, see the fix proven."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app.guard import guarded, run_page
from alict_core.csvsafe import read_csv
from alict_core.errors import AlictError
from alict_core.harden.export import export_hardening_data, list_runs
from alict_core.harden.split import SplitRatios
from alict_core.harden.versions import list_versions, register_all
from alict_core.hashing import hash_json

RETRAINABLE_KINDS = ("embedded", "version")


def _retrainable(name: str) -> bool:
    from alict_core.models.registry import model_entry

    try:
        return model_entry(name).tags.get("kind") in RETRAINABLE_KINDS
    except AlictError:
        return False


def _lc_fail_rates(folder, model: str) -> pd.DataFrame:
    summary = read_csv(folder / "summary.csv")
    rows = summary[summary.model == model][["lc_id", "n_cases", "fail_rate"]]
    return rows.sort_values("fail_rate", ascending=False).reset_index(drop=True)


def _comparison_chart(table: pd.DataFrame):
    import plotly.graph_objects as go

    labels = [f"{lc}{' (trained)' if t else ''}" for lc, t in zip(table.lc_id, table.trained, strict=True)]
    fig = go.Figure()
    for column, name, lo, hi in (("fail_before", "parent", "ci_low_before", "ci_high_before"),
                                 ("fail_after", "retrained", "ci_low_after", "ci_high_after")):
        fig.add_bar(x=labels, y=table[column], name=name,
                    error_y={"type": "data", "symmetric": False, "array": table[hi] - table[column],
                             "arrayminus": table[column] - table[lo]})
    fig.update_layout(barmode="group", yaxis_title="fail rate", yaxis_tickformat=".0%", height=360,
                      margin={"t": 20, "b": 20})
    return fig


def _retrain(folder, model: str, lcs: list[str], seed: int, split: str, lc_share: float | None,
             max_original: int | None) -> None:
    from alict_core.config import artefact_dir
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.training.harden import RetrainSettings, retrain_embedded

    settings = RetrainSettings(seed=seed, lc_share=lc_share, max_original=max_original)
    ratios = SplitRatios.parse(split)
    export_dir = artefact_dir("harden") / hash_json({"run": str(folder), "lcs": lcs, "split": split, "seed": seed})
    with st.status("Retraining …", expanded=True) as status:
        status.write(f"Exporting the cases of {', '.join(lcs)}, split by seed and source sentence ({split}) …")
        export_hardening_data(folder, export_dir, lcs=lcs, ratios=ratios, seed=seed, formats=("jsonl", "csv"),
                              overwrite=True)
        bar = st.progress(0.0, text="retraining")
        name = retrain_embedded(model, export_dir, settings=settings,
                                progress=lambda done, total, msg: bar.progress(done / max(total, 1), text=msg))
        status.write(f"New version **{name}**; testing parent and version on held-out cases …")
        comparison = evaluate_versions(model, name, export_dir,
                                       progress=lambda done, total, msg: bar.progress(done / max(total, 1),
                                                                                      text=msg[:60]))
        status.update(label=f"Retrained {name}", state="complete")
    register_all()
    st.session_state["harden_result"] = comparison.to_dict() | {"headline": comparison.headline()}


def show_result(result: dict) -> None:
    st.subheader(f"{result['parent']} → {result['child']}")
    st.markdown(result["headline"])
    table = pd.DataFrame(result["lcs"])
    st.plotly_chart(_comparison_chart(table), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="percent")
                                for c in table.columns if c.startswith(("fail", "ci_", "delta"))})
    if result.get("heldout"):
        held = pd.DataFrame(result["heldout"]).T.reset_index(names="model")
        dropped = (result.get("checks") or {}).get("heldout_texts_excluded_as_training_texts", 0)
        st.caption("Corpus test split (never used in retraining"
                   + (f"; {dropped} texts equal to a training text left out)" if dropped else ")"))
        st.dataframe(held, hide_index=True)
    checks = result.get("checks") or {}
    if checks.get("leak_check"):
        leak = checks["leak_check"]
        st.caption(f"Leak check: {leak['leaking']} of {leak['n_training']} LC training texts equal or share a source "
                   "sentence with an evaluation text"
                   + (f"; {checks['other_lc_cases_excluded_for_overlap']} cases of the other LCs left out for "
                      "sharing one with the training split" if checks.get("other_lc_cases_excluded_for_overlap")
                      else ""))
    st.info(f"The version **{result['child']}** is now selectable under *Models under test* in the sidebar.")


def main() -> None:
    st.title("Harden")
    st.caption("Retrain a model on the generated cases of LCs it fails (split so that no seed, source sentence or "
               "text is both trained on and tested, and seeds built from corpus test sentences are only tested; a "
               "leak check runs before training), then compare parent and retrained version on the untouched test "
               "split, the other LCs and the corpus test split.")
    runs = [r for r in list_runs() if any(_retrainable(m) for m in r["models"])]
    if not runs:
        st.info("No saved run with a retrainable model (minilm-sst, minilm-hatexplain or a retrained version) yet: "
                "run one on the **Run** page first.")
        return
    choice = st.selectbox("Run", range(len(runs)), key="harden_run",
                          format_func=lambda i: f"{runs[i]['id'][:12]} · {', '.join(runs[i]['models'])}")
    run = runs[choice]
    model = st.selectbox("Model to retrain", [m for m in run["models"] if _retrainable(m)], key="harden_model")
    rates = _lc_fail_rates(run["folder"], model)
    st.dataframe(rates, hide_index=True, column_config={"fail_rate": st.column_config.NumberColumn(format="percent")})
    default = list(rates.lc_id[:3])
    lcs = st.multiselect("LCs to train on (default: the three it fails most)", list(rates.lc_id), default=default,
                         key="harden_lcs")
    with st.expander("Settings"):
        seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, value=13, key="harden_seed"))
        split = st.text_input("Train:validation:test split of seed groups", value="8:1:1", key="harden_split")
        share = st.slider("Share of LC cases in the training mix (0 = all original + all LC cases)", 0.0, 0.9, 0.0,
                          key="harden_share")
        cap = int(st.number_input("Cap on original training texts (0 = all)", min_value=0, value=0, key="harden_cap"))
    if st.button("Retrain and compare", type="primary", disabled=not lcs, key="harden_go"):
        with guarded("retraining"):
            _retrain(run["folder"], model, lcs, seed, split, share or None, cap or None)
    if st.session_state.get("harden_result"):
        show_result(st.session_state["harden_result"])
    versions = list_versions()
    if versions:
        with st.expander(f"Retrained versions ({len(versions)})"):
            st.dataframe(pd.DataFrame([{k: v.get(k) for k in ("name", "parent", "task", "lcs", "created")}
                                       for v in versions]), hide_index=True)


run_page(main, "showing the Harden page")
