"""Adjunct trees page (NLPLego): a seed's template and adjuncts, its derivation tree, and each node's DIR verdict."""

from __future__ import annotations

import streamlit as st

from alict_app import backends, lego_loading, lego_panels, loading_box, state, widgets
from alict_app.guard import guarded, run_page


def main() -> None:
    widgets.header(
        "Adjunct trees",
        "NLPLego: remove a sentence's adjuncts, re-insert them one level at a time "
        "(mutated), and test that every insertion moves the prediction the way its component says.",
    )
    task = state.get("task")
    models = [m for m in (state.get("models") or [])]
    judge_names, _ = backends.loadable_names("model", task=task)
    judge = state.get("lego_judge") if state.get("lego_judge") in judge_names else next(iter(judge_names), None)
    needed = list(dict.fromkeys(name for name in (judge, *models) if name))
    loading = lego_loading.status_box(task, needed, st)  # a first open in this server: say what loads
    try:
        draw(task, models, judge_names, needed, loading)
    finally:
        loading_box.finish(loading, lego_loading.pending(task, []))  # a model's error shows below


def draw(task: str, models: list[str], judge_names: list[str], needed: list[str], loading: object) -> None:
    """The page below its title (``loading``: the first open's status box, or None; ``needed``: its models)."""
    from alict_core.lego.assemble import DerivationTree
    from alict_core.lego.settings import LegoSettings

    samples: list[str] = []
    with guarded("sampling sentences"):
        if loading is not None:  # the parser apart: on a busy machine each step takes seconds
            loading_box.step(loading, "Loading spaCy's dependency parser …")
            lego_loading.dependency_parser()
        loading_box.step(loading, "Picking full sentences from the corpus …")
        samples = lego_panels.sample_sentences(task)
        lego_loading.mark(f"samples:{task}")
    if loading is not None:  # the tagger, WordNet and the models in the background while the page draws its menus
        lego_loading.start_tools_warmup(needed)  # (not before: the title and the box reach the browser first)
    c1, c2 = st.columns([3, 2])
    with c1:
        if samples:
            state.ensure_choice("lego_sample", samples, task=task)
            st.selectbox("Seed sentence from the corpus", samples, key="lego_sample")
        state.keep("lego_text")  # kept across a visit to another page
        typed = st.text_input("… or type a sentence", key="lego_text", max_chars=400)
    with c2:
        parser_name = lego_panels.picker("parser", "lego_parser", "Constituency parser (subordinate clauses)")
        mlm_name = lego_panels.picker("mlm", "lego_mlm", "Masked LM (fills)")
    o1, o2, o3 = st.columns(3)
    for key, default in (("lego_breadth", 3), ("lego_max_nodes", 20), ("lego_threshold", 0.1)):
        state.keep(key, default)  # kept across a visit to another page
    breadth = o1.slider("Children per node", 1, 6, key="lego_breadth")
    max_nodes = o2.slider("Nodes per tree", 2, 60, key="lego_max_nodes")
    threshold = o3.slider("DIR threshold", 0.0, 0.5, step=0.05, key="lego_threshold")
    text = (typed or "").strip() or state.get("lego_sample")
    if not text:
        st.info("Pick or type a sentence.")
        return
    settings = LegoSettings(
        breadth=breadth,
        max_nodes=max_nodes,
        threshold=threshold,
        mlm_top_k=5 if mlm_name != lego_panels.NONE else 0,
        use_constituency=parser_name != lego_panels.NONE,
    )
    tree = None
    with guarded("building the derivation tree"):
        if typed and typed.strip():  # the browser's max_chars is no check: 56,000 typed characters were parsed
            from alict_core.common.limits import check_text

            check_text(typed.strip(), "the typed sentence", "analysis_chars")
        if loading is not None:
            loading_box.step(loading, "Loading spaCy's tagger and WordNet (synonym mutations) …")
            lego_loading.wait_for_tools()
            loading_box.step(loading, "Building the derivation tree …")
        tree = DerivationTree.from_dict(lego_panels.build_tree(text, settings.model_dump_json(), parser_name, mlm_name))
    if tree is None:
        return
    lego_panels.show_disassembly(tree)
    lego_panels.dir_tests(tree, task, judge_names, models, threshold, loading)


run_page(main, "showing the adjunct trees")
