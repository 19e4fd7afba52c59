"""Adjunct trees page (NLPLego): a seed's template and adjuncts, its derivation tree, and each node's DIR verdict."""

from __future__ import annotations

import json

import streamlit as st

from alict_app import artefacts, backends, lego_loading, lego_view, loading_box, state, widgets
from alict_app.formatting import literal
from alict_app.guard import guarded, run_page

NONE = "(none)"


@st.cache_data(show_spinner="Sampling full sentences from the corpus …", max_entries=4)
def sample_sentences(task: str, n: int = 25) -> list[str]:
    from alict_core.data.corpus import is_annotated
    from alict_core.lego.pipeline import seeds_from_corpus

    records = None
    if is_annotated(task):  # the app's loaded corpus (warmed at start-up): the raw split's texts, in its order
        records = [item for item in artefacts.corpus(task).items if item.split == "test"]
    return [s.text for s in seeds_from_corpus(task, n, seed=0, records=records)]


@st.cache_data(show_spinner="Disassembling and reassembling …", max_entries=32)
def build_tree(text: str, settings_json: str, parser_name: str, mlm_name: str) -> dict:
    """The derivation tree of ``text`` as a plain dict (cached per sentence, settings and backends)."""
    from alict_core.lego.pipeline import LegoSeed, generate_trees
    from alict_core.lego.settings import LegoSettings

    settings = LegoSettings(**json.loads(settings_json))
    parser = backends.parser(parser_name) if parser_name != NONE else None
    suggester = backends.suggester(mlm_name) if mlm_name != NONE else None
    return generate_trees([LegoSeed("seed", text)], settings, parser=parser, suggester=suggester)[0].to_dict()


def picker(kind: str, key: str, label: str) -> str:
    loadable, left_out = backends.loadable_names(kind)
    names = [NONE, *loadable]
    state.ensure_choice(key, names)
    st.selectbox(label, names, key=key, help=backends.left_out_help(left_out) or None)
    return str(state.get(key))


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
    from alict_core.lego.oracles import tree_cases
    from alict_core.lego.settings import LegoSettings

    samples: list[str] = []
    with guarded("sampling sentences"):
        if loading is not None:  # the parser apart: on a busy machine each step takes seconds
            loading_box.step(loading, "Loading spaCy's dependency parser …")
            lego_loading.dependency_parser()
        loading_box.step(loading, "Picking full sentences from the corpus …")
        samples = sample_sentences(task)
        lego_loading.mark(f"samples:{task}")
    if loading is not None:  # the tagger, WordNet and the models in the background while the page draws its menus
        lego_loading.start_tools_warmup(needed)  # (not before: the title and the box reach the browser first)
    c1, c2 = st.columns([3, 2])
    with c1:
        if samples:
            state.ensure_choice("lego_sample", samples)
            st.selectbox("Seed sentence from the corpus", samples, key="lego_sample")
        typed = st.text_input("… or type a sentence", key="lego_text", max_chars=400)
    with c2:
        parser_name = picker("parser", "lego_parser", "Constituency parser (subordinate clauses)")
        mlm_name = picker("mlm", "lego_mlm", "Masked LM (fills)")
    o1, o2, o3 = st.columns(3)
    breadth = o1.slider("Children per node", 1, 6, 3, key="lego_breadth")
    max_nodes = o2.slider("Nodes per tree", 2, 60, 20, key="lego_max_nodes")
    threshold = o3.slider("DIR threshold", 0.0, 0.5, 0.1, 0.05, key="lego_threshold")
    text = (typed or "").strip() or state.get("lego_sample")
    if not text:
        st.info("Pick or type a sentence.")
        return
    settings = LegoSettings(
        breadth=breadth,
        max_nodes=max_nodes,
        threshold=threshold,
        mlm_top_k=5 if mlm_name != NONE else 0,
        use_constituency=parser_name != NONE,
    )
    tree = None
    with guarded("building the derivation tree"):
        if loading is not None:
            loading_box.step(loading, "Loading spaCy's tagger and WordNet (synonym mutations) …")
            lego_loading.wait_for_tools()
            loading_box.step(loading, "Building the derivation tree …")
        tree = DerivationTree.from_dict(build_tree(text, settings.model_dump_json(), parser_name, mlm_name))
    if tree is None:
        return
    dis = tree.disassembly
    st.subheader("Template and adjuncts")
    st.markdown(f"**p0:** {literal(dis['template_slots'])}")  # a corpus text's URL was a live link here
    if dis["adjuncts"]:
        st.dataframe(
            [{k: a[k] for k in ("index", "text", "kind", "relation")} for a in dis["adjuncts"]],
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("No removable adjunct: the tree is the sentence alone.")

    state.ensure_choice("lego_judge", judge_names or [NONE])
    judge_name = st.selectbox(
        "Judge of the inserted components",
        judge_names or [NONE],
        key="lego_judge",
        help="labels each inserted adjunct on its own; the paper uses the model under test",
    )
    cases, outcomes = [], []
    with guarded("making and running the DIR tests"):
        loading_box.step(loading, "Loading the judge and the models under test, making and running the DIR tests …")
        if judge_name and judge_name != NONE:
            cases = tree_cases([tree], task, lego_loading.model(judge_name), threshold=threshold)
        if cases and models:
            from alict_core.review.writeback import RejectionFilter
            from alict_core.runner import run_suite

            loaded = [lego_loading.model(m) for m in models]
            outcomes = list(run_suite(cases, loaded, exclude=RejectionFilter()).outcomes)
    shown = None
    if cases and not models:
        st.info("No model under test for this task: pick one under **Models under test** in the sidebar to colour "
                "the tree by its verdicts (grey nodes are \"no test\" until then).")
    elif not cases and judge_name == NONE:
        st.info("No model registered for this task can judge the inserted components, so the tree has no DIR tests.")
    if outcomes:
        names = [o.name for o in outcomes]
        state.ensure_choice("lego_model", names)
        shown_name = st.radio("Colour the tree by the verdicts of", names, key="lego_model", horizontal=True)
        shown = next(o for o in outcomes if o.name == shown_name)
    st.subheader(f"Derivation tree ({len(tree.nodes)} nodes, {len(cases)} DIR tests)")
    st.plotly_chart(
        lego_view.tree_figure(tree, lego_view.verdicts_for(tree, cases, shown)), width="stretch", key="lego_tree"
    )
    st.caption(
        "Diamonds: the unmutated chain from the template to the seed. Hover a node for its text, "
        "the inserted adjunct in bold."
    )
    frame = lego_view.node_frame(tree, cases, outcomes)
    st.dataframe(frame, hide_index=True, width="stretch")


run_page(main, "showing the adjunct trees")
