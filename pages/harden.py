"""Harden page: pick the LCs a model fails in a run, retrain it on their generated cases, see the fix proven."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app import presses, state, widgets
from alict_app import runs as app_runs
from alict_app.guard import run_page, show_error
from alict_app.progress import StagedProgress
from alict_core.common.errors import AlictError
from alict_core.common.hashing import hash_json
from alict_core.harden import guards
from alict_core.harden.evaluate import paired_tests, regression_note, regression_text, regressions
from alict_core.harden.export import export_hardening_data, list_runs, run_readiness
from alict_core.harden.guards import preselected
from alict_core.harden.split import SplitRatios
from alict_core.harden.versions import list_versions, register_all

RETRAINABLE_KINDS = ("embedded", "version")
STAGES = {"exporting": 0.05, "retraining": 0.45, "testing": 0.5}  # shares of the time, for one overall ETA


def _retrainable(name: str) -> bool:
    from alict_core.models.registry import model_entry

    try:
        return model_entry(name).tags.get("kind") in RETRAINABLE_KINDS
    except AlictError:
        return False


@st.cache_data(show_spinner="Checking which LCs can be trained on and tested …", max_entries=16)
def _readiness(folder: str, stamp: float, model: str, split: str, seed: int, minimum: int) -> pd.DataFrame:
    """Per LC of the run: cases, the model's fail rate, trainable cases, test split size, ready or why not
    (``alict_core.harden.guards``; ``stamp`` renews it when the run changes)."""
    rows = [r.to_dict() for r in run_readiness(folder, model, ratios=SplitRatios.parse(split), seed=seed,
                                               min_test_cases=minimum)]
    return pd.DataFrame(rows, columns=["lc_id", "n_cases", "fail_rate", "trainable", "test_cases", "ready", "reason"])


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
    from alict_core.common.config import artefact_dir
    from alict_core.harden.evaluate import evaluate_versions
    from alict_core.training.retrain import RetrainSettings, retrain_embedded

    settings = RetrainSettings(seed=seed, lc_share=lc_share, max_original=max_original)
    ratios = SplitRatios.parse(split)
    export_dir = artefact_dir("harden") / hash_json({"run": str(folder), "lcs": lcs, "split": split, "seed": seed})
    with st.status("Retraining …", expanded=True) as status:
        overall = StagedProgress(st.progress(0.0, text="starting …"), STAGES)
        status.write(f"Exporting the cases of {', '.join(lcs)}, split by seed and source sentence ({split}) …")
        overall.update("exporting", 0, 1)
        export_hardening_data(folder, export_dir, lcs=lcs, ratios=ratios, seed=seed, formats=("jsonl", "csv"),
                              overwrite=True, min_test_cases=guards.MIN_TEST_CASES)  # a short test split: refused
        overall.update("exporting", 1, 1, "done")
        name = retrain_embedded(model, export_dir, settings=settings, min_test_cases=guards.MIN_TEST_CASES,
                                progress=lambda done, total, msg: overall.update("retraining", done, total, msg))
        status.write(f"New version **{name}**; testing parent and version on held-out cases …")
        comparison = evaluate_versions(model, name, export_dir,
                                       progress=lambda done, total, msg: overall.update("testing", done, total, msg))
        overall.update("testing", 1, 1, "done")
        status.update(label=f"Retrained {name}", state="complete")
    register_all()
    st.session_state["harden_result"] = comparison.to_dict() | {
        "headline": comparison.headline(), "status": f"Retrained {name}", "progress": overall.shown}


def show_regressions(result: dict) -> None:
    """What got worse after hardening, in red: each LC and corpus measure with its delta and interval."""
    items = result.get("regressions")
    if items is None:
        items = regressions(result)
    if not items:
        st.success("Nothing got worse: no LC's fail rate rose and the corpus test scores did not fall.")
        return
    lines = [f"- :red[{regression_text(item)}]" + (f" — {note}" if (note := regression_note(item)) else "")
             for item in items]
    st.markdown(f":red[**Worse after hardening ({len(items)}):**]\n" + "\n".join(lines))


def show_result(result: dict) -> None:
    st.subheader(f"{result['parent']} → {result['child']}")
    st.markdown(result["headline"])
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
    st.info(f"The version **{result['child']}** is now selectable under *Models under test* in the sidebar.")


RETRAIN_FAILED = "harden_failed"  # the last press's error and the inputs it was refused for


def show_refusal(inputs: list) -> None:
    """The last press's error, kept while the inputs stay as they were: drawn only in the press's run, a rerun
    from elsewhere (the sidebar's status probe resolving, a build landing) wiped it before it was read."""
    failed = st.session_state.get(RETRAIN_FAILED)
    if failed and failed["inputs"] == inputs:
        show_error(failed["error"], "retraining")
    elif failed:
        st.session_state.pop(RETRAIN_FAILED)


def main() -> None:
    st.title("Harden")
    st.caption("Retrain a model on the generated cases of LCs it fails (split so that no seed, source sentence or "
               "text is both trained on and tested, and seeds built from corpus test sentences are only tested; a "
               "leak check runs before training), then compare parent and retrained version on the untouched test "
               "split, the other LCs and the corpus test split.")
    task = state.get("task")  # the sidebar task's runs, and runs whose task cannot be told (custom LCs)
    infos = {info["key"]: info for info in app_runs.list_runs() if info["request"].get("task") in (task, None)}
    runs = [r for r in list_runs() if r["id"] in infos and any(_retrainable(m) for m in r["models"])]
    widgets.copied_runs_note()
    if not runs:
        st.info("No saved run of this task with a retrainable model (minilm-sst, minilm-hatexplain or a retrained "
                "version) yet: run one on the **Run** page first.")
        return
    choice = st.selectbox("Run", range(len(runs)), key="harden_run",
                          format_func=lambda i: app_runs.describe_run(infos[runs[i]["id"]]))
    run = runs[choice]
    model = st.selectbox("Model to retrain", [m for m in run["models"] if _retrainable(m)], key="harden_model")
    with st.expander("Settings"):
        seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, value=13, key="harden_seed"))
        split = st.text_input("Train:validation:test split of seed groups", value="8:1:1", key="harden_split")
        share = st.slider("Share of LC cases in the training mix (0 = all original + all LC cases)", 0.0, 0.9, 0.0,
                          key="harden_share")
        cap = int(st.number_input("Cap on original training texts (0 = all)", min_value=0, value=0, key="harden_cap"))
    folder = run["folder"]
    readiness = _readiness(str(folder), (folder / "meta.json").stat().st_mtime, model, split, seed,
                           guards.MIN_TEST_CASES)
    st.dataframe(readiness, hide_index=True, width="stretch",
                 column_config={"fail_rate": st.column_config.NumberColumn("fail rate", format="percent"),
                                "test_cases": st.column_config.NumberColumn("test split"),
                                "trainable": st.column_config.NumberColumn("trainable (training split)"),
                                "reason": st.column_config.TextColumn("why not preselected")})
    if st.session_state.get("harden_lcs_for") != [run["id"], model, split, seed]:  # a new run or model: preselect
        st.session_state["harden_lcs_for"] = [run["id"], model, split, seed]
        st.session_state["harden_lcs"] = preselected([guards.LcReadiness(**r) for r in readiness.to_dict("records")])
    lcs = st.multiselect(f"LCs to train on (preselected: up to three it fails most — at least "
                         f"{guards.MIN_FAIL_RATE:.0%} — that can be trained on and have a test split of at least "
                         f"{guards.MIN_TEST_CASES} cases)", list(readiness.lc_id), key="harden_lcs")
    short = readiness[readiness.lc_id.isin(lcs) & (readiness.test_cases < guards.MIN_TEST_CASES)]
    if len(short):
        st.warning(guards.split_size_message(list(zip(short.lc_id, short.test_cases.astype(int), strict=True)),
                                             guards.MIN_TEST_CASES) + ". Retraining refuses it.")
    inputs = [run["id"], model, list(lcs), seed, split, share, cap]
    st.button("Retrain and compare", type="primary", disabled=not lcs, key="harden_go", on_click=presses.note,
              args=("harden_go",))
    pressed = bool(presses.take("harden_go"))  # noted by the callback: a return value can lose the press under load
    if pressed:
        st.session_state.pop(RETRAIN_FAILED, None)
        try:
            _retrain(run["folder"], model, lcs, seed, split, share or None, cap or None)
        except Exception as exc:  # noqa: BLE001 - shown below, and kept: see show_refusal
            st.session_state[RETRAIN_FAILED] = {"inputs": inputs, "error": exc}
    show_refusal(inputs)
    result = st.session_state.get("harden_result")
    if result:
        if not pressed and result.get("progress"):  # the finished status box, as the press's run left it
            with st.status(result["status"], state="complete", expanded=False):
                st.progress(1.0, text=result["progress"])
        show_result(result)
    versions = list_versions()
    if versions:
        with st.expander(f"Retrained versions ({len(versions)})"):
            st.dataframe(pd.DataFrame([{k: v.get(k) for k in ("name", "parent", "task", "lcs", "created")}
                                       for v in versions]), hide_index=True)


run_page(main, "showing the Harden page")
