"""Seeds page: per-LC counts, a sample with provenance, filters, resampling, download."""

from __future__ import annotations

import random

import streamlit as st

from alict_app import artefacts, state, widgets
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page


def provenance_frame(seedset, task: str):
    """Seeds with their provenance: source sentence(s), rule, slots, expected label."""
    import pandas as pd

    texts: dict[str, str] = {}
    with guarded("looking up source sentences"):
        texts = artefacts.corpus_texts(task)
    rows = []
    for seed in seedset.seeds:
        rows.append({
            "id": seed.id, "text": seed.text, "expected": expected_label(seed.expected), "rule": seed.rule,
            "slots": "; ".join(f"{k}={v}" for k, v in (seed.slots or {}).items()),
            "source": " ‖ ".join(texts.get(i, "?") for i in seed.source_ids),
            "source_labels": ", ".join(getattr(seed, "source_labels", []) or []),
            "source_ids": ", ".join(seed.source_ids),
        })
    return pd.DataFrame(rows)


def expected_label(expected) -> str:
    from alict_core.seeds import expected_text

    return expected_text(expected)


def new_sample_seed() -> None:
    st.session_state["sample_seed"] = random.randint(0, 99_999)


def main() -> None:
    widgets.header("Seeds", "Test sentences found in the labelled corpus by each LC's search rules.")
    task = state.get("task")
    specs = widgets.task_specs_or_stop(task)
    if not specs:
        return
    spec = widgets.lc_picker(specs)
    st.session_state.setdefault("max_seeds", 50)
    st.session_state.setdefault("sample_seed", 0)
    c1, c2, c3 = st.columns([1, 1, 1])
    c1.number_input("Max seeds (0 = the spec's cap)", min_value=0, max_value=100_000, step=10, key="max_seeds")
    c2.number_input("Sampling seed", min_value=0, max_value=99_999, step=1, key="sample_seed")
    c3.button("🎲 Resample", on_click=new_sample_seed, help="draw another sample with a new random seed")
    cap = int(state.get("max_seeds")) or "spec"
    with st.spinner("Searching the corpus …"):
        seedset = artefacts.seed_set(spec, max_seeds=cap, seed=int(state.get("sample_seed")))
    m1, m2, m3 = st.columns(3)
    m1.metric("corpus matches", getattr(seedset, "n_matches", len(seedset.seeds)))
    m2.metric("seeds", len(seedset.seeds))
    m3.metric("test type", getattr(spec, "test_type", "") or "—")
    if not seedset.seeds:
        st.info("This LC found no seeds in the corpus; loosen its predicates on the Specs page.")
        return
    frame = provenance_frame(seedset, task)
    f1, f2, f3 = st.columns([2, 1, 1])
    state.keep("seed_search")  # the filters are kept across a visit to another page
    query = f1.text_input("Search text", key="seed_search", placeholder="word or phrase")
    labels = sorted(frame["expected"].unique())
    state.ensure_choices("seed_labels", labels, default=[])
    chosen_labels = f2.multiselect("Expected", labels, key="seed_labels")
    rules = sorted(frame["rule"].unique())
    state.ensure_choices("seed_rules", rules, default=[])
    chosen_rules = f3.multiselect("Rule", rules, key="seed_rules")
    shown = frame
    if query:
        shown = shown[shown["text"].str.contains(query, case=False, regex=False)]
    if chosen_labels:
        shown = shown[shown["expected"].isin(chosen_labels)]
    if chosen_rules:
        shown = shown[shown["rule"].isin(chosen_rules)]
    st.caption(f"{len(shown)} of {len(frame)} seeds shown")
    st.dataframe(shown, hide_index=True, width="stretch")
    widgets.download_frame(shown, f"seeds-{spec.id}", key="seeds-dl")

    with st.expander("Counts for every LC of this task"):
        if st.button("Count all LCs", key="count_all"):
            rows = []
            bar = st.progress(0.0, text="counting …")
            for i, other in enumerate(specs, 1):
                with guarded(f"counting seeds of {other.id}"):
                    found = artefacts.seed_set(other)
                    matches = getattr(found, "n_matches", None)
                    rows.append({"lc": other.id, "matches": matches, "seeds": len(found.seeds)})
                bar.progress(i / len(specs), text=f"{literal(other.id)} ({i}/{len(specs)})")
            st.dataframe(rows, hide_index=True)


run_page(main, "showing the seeds")
