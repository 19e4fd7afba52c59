"""Report page: compare with an imported baseline suite per capability, download the results
(JSONL / CSV / CheckList-style JSON / standalone HTML) and a demo view of the most striking failures."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from alict_app import reporting, runs, state, widgets
from alict_app.core import has_core
from alict_app.guard import guarded, run_page


def striking_failures(cases: pd.DataFrame, p2f: pd.DataFrame, per_model: int = 3) -> pd.DataFrame:
    """Per model, the failures the model is most confident about (pass-to-fail expansions first)."""
    failed = cases[cases["failed"]].copy()
    if not len(failed):
        return failed
    failed["confidence"] = [max(p.values()) if isinstance(p, dict) and p else float("nan")
                            for p in failed.get("probabilities", pd.Series([None] * len(failed), index=failed.index))]
    flips = set(p2f["case_id"]) if len(p2f) and "case_id" in p2f else set()
    failed["pass_to_fail"] = failed["case_id"].isin(flips)
    failed = failed.sort_values(["model", "pass_to_fail", "confidence"], ascending=[True, False, False])
    return failed.groupby("model", sort=False).head(per_model)


def demo_view(cases: pd.DataFrame, p2f: pd.DataFrame) -> None:
    st.subheader("Most striking failures")
    st.caption("For stakeholders: per model, the three failures it is most sure about (seed-passes/expansion-fails first).")
    top = striking_failures(cases, p2f)
    if not len(top):
        st.success("No failures in this run.")
        return
    for model, group in top.groupby("model", sort=False):
        st.markdown(f"#### {model}")
        for _, row in group.iterrows():
            flag = " · 🔁 pass-to-fail" if row.get("pass_to_fail") else ""
            confidence = f"{row['confidence']:.0%}" if pd.notna(row.get("confidence")) else "?"
            st.markdown(
                f"> {row['text']}\n\n**{row['lc_id']}** — expected *{row.get('expected', '?')}*, "
                f"predicted **{row.get('predicted', '?')}** ({confidence}){flag}"
            )


def baseline_section(summary: pd.DataFrame, task: str) -> None:
    st.subheader("Compare with a baseline suite")
    upload = st.file_uploader("CheckList-style JSON or HateCheck CSV", type=["json", "csv", "jsonl"], key="baseline_upload")
    path_text = st.text_input("… or a path on the server", key="baseline_path")
    source: Path | None = None
    if upload is not None:
        folder = Path(tempfile.mkdtemp(prefix="alict-baseline-"))
        source = folder / Path(upload.name).name
        source.write_bytes(upload.getvalue())
    elif path_text.strip():
        source = Path(path_text.strip()).expanduser()
    if source is None:
        st.caption("Import a suite to see its capabilities next to ALiCT's.")
        return
    with guarded(f"importing {source.name}"):
        baseline = reporting.import_baseline(source, task)
        st.caption(f"{len(baseline)} baseline tests in {baseline['capability'].nunique()} capabilities")
        st.dataframe(reporting.side_by_side(summary, baseline), hide_index=True, width="stretch")


def downloads(key: str, cases: pd.DataFrame, task: str) -> None:
    """Download buttons; the files are generated only when clicked (deferred data)."""
    st.subheader("Downloads")
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("⬇ results JSONL", lambda: cases.to_json(orient="records", lines=True, force_ascii=False),
                       f"alict-{key}.jsonl", "application/jsonl", on_click="ignore")
    c2.download_button("⬇ results CSV", lambda: cases.to_csv(index=False), f"alict-{key}.csv", "text/csv", on_click="ignore")
    if has_core("alict_core.suites", "to_checklist"):
        c3.download_button("⬇ CheckList JSON", lambda: reporting.checklist_json(runs.load_run(key), task),
                           f"alict-{key}-checklist.json", "application/json", on_click="ignore")
    else:
        c3.caption("CheckList export: not available yet")
    if reporting.html_available():
        c4.download_button("⬇ HTML report", lambda: reporting.html_report(key, runs.load_run(key)),
                           f"alict-{key}.html", "text/html", on_click="ignore")
    else:
        c4.caption("HTML report: not available yet (alict_core.report)")


def validity_note(key: str) -> None:
    """How many generated cases the validity checks flagged (excluded unless kept), per LC and reason."""
    validity = (runs.load_run(key).extra or {}).get("validity")
    if validity:
        st.caption(validity.get("note", ""))


def main() -> None:
    widgets.header("Report", "Share the results: baseline comparison, downloads, and a demo view.")
    task = state.get("task")
    available = runs.list_runs(task)
    keys = [r["key"] for r in available]
    if state.get("run") and state.get("run") not in keys and runs.is_done(state.get("run")):
        keys.insert(0, state.get("run"))
    if not keys:
        st.info("No finished run for this task yet: start one on the **Run** page.")
        return
    state.ensure_choice("run", keys)
    labels = {r["key"]: runs.describe_run(r) for r in available}
    st.selectbox("Run", keys, key="run", format_func=lambda k: labels.get(k, k))
    key = state.get("run")
    frames = runs.run_frames(key)
    cases, p2f, summary = frames["cases"], frames["pass_to_fail"], frames["summary"]
    demo, full = st.tabs(["Demo view", "Full report"])
    with demo:
        demo_view(cases, p2f)
    with full:
        st.dataframe(summary, hide_index=True, width="stretch")
        validity_note(key)
        downloads(key, cases, task)
        baseline_section(summary, task)


run_page(main, "building the report")
