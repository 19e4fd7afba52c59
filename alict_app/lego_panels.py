"""The adjunct-trees page's pieces (NLPLego): corpus samples, the cached derivation tree, the backend pickers,
the template and adjuncts, and the DIR tests that colour the tree."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from alict_app import artefacts, backends, lego_loading, lego_view, loading_box, state
from alict_app.formatting import literal
from alict_app.guard import guarded

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
    parser = backends.page_parser(parser_name) if parser_name != NONE else None
    suggester = backends.suggester(mlm_name) if mlm_name != NONE else None
    return generate_trees([LegoSeed("seed", text)], settings, parser=parser, suggester=suggester)[0].to_dict()


def picker(kind: str, key: str, label: str) -> str:
    loadable, left_out = backends.loadable_names(kind)
    names = [NONE, *loadable]
    state.ensure_choice(key, names)
    st.selectbox(label, names, key=key, help=backends.left_out_help(left_out) or None)
    return str(state.get(key))


def show_disassembly(tree: Any) -> None:
    """The template (p0) and the removable adjuncts of the seed."""
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


def dir_tests(tree: Any, task: str, judge_names: list[str], models: list[str], threshold: float,
              loading: object) -> None:
    """The judge of the inserted components, the DIR tests it makes, the models' verdicts and the coloured tree."""
    from alict_core.lego.oracles import tree_cases

    state.ensure_choice("lego_judge", judge_names or [NONE], task=state.get("task"))
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
            # in memory: each sentence typed (or slider moved) wrote a prediction shard to the disk cache
            outcomes = list(run_suite(cases, loaded, exclude=RejectionFilter(), memory_only=True).outcomes)
    shown = None
    if cases and not models:
        st.info("No model under test for this task: pick one under **Models under test** in the sidebar to colour "
                "the tree by its verdicts (grey nodes are \"no test\" until then).")
    elif not cases and judge_name == NONE:
        st.info("No model registered for this task can judge the inserted components, so the tree has no DIR tests.")
    if outcomes:
        names = [o.name for o in outcomes]
        state.ensure_choice("lego_model", names, task=state.get("task"))
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
