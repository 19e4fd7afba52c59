"""Report page: compare with an imported baseline suite per capability, download the results
(JSONL / CSV / CheckList-style JSON / standalone HTML) and a demo view of the most striking failures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from alict_app import demo as demo_mode
from alict_app import explorer_data, reporting, run_picker, runs, state, widgets
from alict_app.formatting import failure_card, literal
from alict_app.guard import guarded, run_page
from alict_core.analysis.explore import striking_failures
from alict_core.common import trust
from alict_core.common.csvsafe import csv_text
from alict_core.lcspec.capabilities import lc_catalog
from alict_core.runner.summary import for_display


def demo_view(key: str, unparsed: bool) -> None:
    st.subheader("Most striking failures")
    st.caption("For stakeholders: per model, the three failures it is most sure about (seed-passes/expansion-fails "
               "first, one per LC).")
    top = striking_failures(explorer_data.frame(key))
    if not len(top):
        widgets.no_failures("No failures in this run.", unparsed)
        return
    for model, group in top.groupby("model", sort=False):
        st.markdown(f"#### {literal(model)}")
        for _, row in group.iterrows():
            st.markdown(failure_card(row, row["lc_title"], row["capability"]))


def capability_first(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with each LC's capability group and title in front (the id stays as a column)."""
    if summary.empty or "lc_id" not in summary:
        return summary
    catalog = lc_catalog(summary["lc_id"], dict(zip(summary["lc_id"], summary.get("capability", summary["lc_id"]),
                                                    strict=True)))
    named = for_display(summary).drop(columns=[c for c in ("capability",) if c in summary])
    named.insert(0, "title", named["lc_id"].map(lambda lc: catalog[lc].title))
    named.insert(0, "capability", named["lc_id"].map(lambda lc: catalog[lc].capability))
    return named


def baseline_section(summary: pd.DataFrame, task: str) -> None:
    st.subheader("Compare with a baseline suite")
    upload = st.file_uploader("CheckList-style JSON or HateCheck CSV", type=["json", "csv", "jsonl"],
                              key="baseline_upload")
    state.keep("baseline_path")  # kept across a visit to another page
    path_text = st.text_input("… or a path on the server", key="baseline_path")
    if upload is None and not path_text.strip():
        st.caption("Import a suite to see its capabilities next to ALiCT's.")
        return
    if upload is not None and path_text.strip():  # the upload was shown while the typed path was ignored
        st.warning("Give either an uploaded file or a server path, not both: remove the upload (×) or clear the path.")
        return
    with guarded("importing the baseline suite"):
        if upload is not None:  # stored by content hash in the uploads folder; the user's file name is not a path
            source = trust.save_upload(upload.name, upload.getvalue())
        else:  # a server path only inside the workspace roots (trust model)
            source = trust.browser_suite_path(path_text.strip())
        baseline = reporting.import_baseline(source, task, upload_name=None if upload is None else upload.name)
        st.caption(f"{len(baseline)} baseline tests in {baseline['capability'].nunique()} capabilities")
        for skipped in baseline.attrs.get("skipped", []):
            st.warning(f"Skipped {literal(skipped)}")
        st.dataframe(reporting.side_by_side(summary, baseline), hide_index=True, width="stretch")


def downloads(key: str, cases: pd.DataFrame, task: str) -> None:
    """Download buttons; the files are generated only when clicked (deferred data), from the run as drawn: a run
    removed or re-written after the page was drawn still downloads what the page shows."""
    st.subheader("Downloads")
    result = runs.load_run(key)  # the process cache's copy, already read for this view
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("⬇ results JSONL", lambda: cases.to_json(orient="records", lines=True, force_ascii=False),
                       f"alict-{key}.jsonl", "application/jsonl", on_click="ignore")
    c2.download_button("⬇ results CSV", lambda: csv_text(cases), f"alict-{key}.csv", "text/csv",
                       on_click="ignore")
    c3.download_button("⬇ CheckList JSON", lambda: reporting.checklist_json(result, task),
                       f"alict-{key}-checklist.json", "application/json", on_click="ignore")
    c4.download_button("⬇ HTML report", lambda: reporting.html_report(key, result),
                       f"alict-{key}.html", "text/html", on_click="ignore")


def validity_note(key: str) -> None:
    """How many generated cases the validity checks flagged (excluded unless kept), per LC and reason."""
    validity = (runs.load_run(key).extra or {}).get("validity")
    if validity:
        st.caption(literal(validity.get("note", "")))


def big_report(key: str, unparsed: bool) -> None:
    """A large or sharded run: the summary from aggregates, a bounded sample of failures, bounded downloads."""
    reader = runs.reader(key)
    summary = reader.summary()
    if not reader.done:
        st.info("This run is not finished: the figures cover its finished shards.")
    demo, full = st.tabs(["Demo view", "Full report"])
    with demo:
        st.subheader("Most striking failures")
        st.caption("Per model, its most confident failures among a sample of up to 3 per LC (one per LC).")
        sample = reader.sample_failures(per_group=3)
        if sample.empty:
            widgets.no_failures("No failures in this run.", unparsed)
        catalog = lc_catalog(sample["lc_id"], dict(zip(sample["lc_id"], sample["capability"], strict=True)))
        top = sample.sort_values(["model", "pass_to_fail", "confidence"], ascending=[True, False, False])
        for model, group in top.drop_duplicates(["model", "lc_id"]).groupby("model", sort=False):
            st.markdown(f"#### {literal(model)}")
            for _, row in group.head(3).iterrows():
                info = catalog[row["lc_id"]]
                st.markdown(failure_card(row, info.title, info.capability))
    with full:
        st.dataframe(capability_first(summary), hide_index=True, width="stretch")
        st.subheader("Downloads")
        c1, c2 = st.columns(2)
        c1.download_button("⬇ summary CSV", lambda: csv_text(summary), f"alict-{key}-summary.csv",
                           "text/csv", on_click="ignore")
        c2.download_button("⬇ HTML report", lambda: reporting.reader_report(reader, key),
                           f"alict-{key}.html", "text/html", on_click="ignore")
        st.caption(f"{reader.n_rows():,} case × model rows: per-case results stay in the run folder's Parquet "
                   "parts (results/part-*.parquet), too large to download from the browser.")


def main() -> None:
    widgets.header("Report", "Share the results: baseline comparison, downloads, and a demo view.")
    task = state.get("task")
    key = run_picker.run_picker(task)
    if key is None:
        return
    unparsed = widgets.unparsed_warning(key)  # scored as the fallback label: never "No failures" without a word
    widgets.review_excluded_note(key)  # fewer seeds per LC than asked for: said
    if runs.is_big(key):  # aggregates and a bounded sample (alict_core.runner.reader)
        big_report(key, unparsed)
        return
    frames = runs.run_frames(key)
    cases, summary = frames["cases"], frames["summary"]
    demo, full = st.tabs(["Demo view", "Full report"])
    with demo:
        demo_view(key, unparsed)
    with full:
        st.dataframe(capability_first(summary), hide_index=True, width="stretch")
        validity_note(key)
        downloads(key, cases, task)
        if not demo_mode.enabled():  # the baseline import writes an upload and reads server paths
            baseline_section(summary, task)


run_page(main, "building the report")
