"""Artefact browsing for the app: corpus, seeds, parses, masks, expansions and explanations, cached.

Process-wide results (``st.cache_resource``) are keyed by a content hash of their inputs; plain dict
results (``st.cache_data``) by all their arguments. Heavy core modules are imported inside functions.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import streamlit as st

from alict_app import backends
from alict_app.formatting import as_row, as_rows
from alict_app.spec_store import spec_key
from alict_core.common.hashing import hash_json


# ---------------------------------------------------------------- corpus and seeds
@st.cache_resource(show_spinner="Loading the labelled corpus (once per process) …", max_entries=4)
def corpus(task: str) -> Any:
    from alict_core.data.corpus import load_corpus

    started = time.perf_counter()
    value = load_corpus(task)
    backends.mark_loaded("corpus", task, started)
    return value


log = logging.getLogger(__name__)
_warmup_started = threading.Event()


def start_corpus_warmup() -> None:
    """Once per process, after the first page is drawn: load every task's annotated corpus in a background thread,
    so that a session's first switch of the sidebar task reads no corpus (every session shares the loaded ones).
    A corpus not annotated yet is left to the page that needs it. (Streamlit logs "missing ScriptRunContext" for
    this thread: the cache's spinner has no page to draw on, as intended.)"""
    if not _warmup_started.is_set():
        _warmup_started.set()
        threading.Thread(target=_warm_corpora, name="alict-corpus-warmup", daemon=True).start()


def _warm_corpora() -> None:
    from alict_core.data.corpus import CORPUS_OF_TASK, is_annotated

    for task in CORPUS_OF_TASK:
        try:
            if is_annotated(task):
                corpus(task)  # the app's own cache: a page asking meanwhile waits for this load, never loads twice
        except Exception as exc:  # noqa: BLE001 - a warm-up never breaks the app: the page reports it when needed
            log.warning("warming the %s corpus failed: %s", task, exc)


@st.cache_resource(show_spinner=False, max_entries=4)
def corpus_texts(task: str) -> dict[str, str]:
    """Corpus id → text (for provenance columns)."""
    return {item.id: item.text for item in corpus(task)}


@st.cache_resource(show_spinner=False, max_entries=256)
def _seed_set(task: str, key: str, _spec: Any, max_seeds: int | str | None, seed: int) -> Any:
    from alict_core.seeds import find_seeds

    return find_seeds(_spec, corpus(task), max_seeds=max_seeds, seed=seed)


def seed_set(spec: Any, max_seeds: int | str | None = "spec", seed: int = 0) -> Any:
    """SeedSet of one spec (cached by the spec's content hash, cap and sampling seed).

    ``max_seeds``: "spec" uses the spec's own cap, None every candidate."""
    return _seed_set(spec.task, spec_key(spec), spec, max_seeds, int(seed))


# ---------------------------------------------------------------- parses, masks, expansions
@st.cache_resource(show_spinner=False, max_entries=512)
def _parse(parser_name: str, artefact: str, text: str) -> Any:
    return backends.page_parser(parser_name).parse_batch([text.split()])[0]


def parse_seed(parser_name: str, seed: Any) -> Any:
    """The constituency tree (nltk.Tree) of a seed, cached per parser (and the artefact behind it) and text."""
    return _parse(parser_name, backends.artefact_key("parser", parser_name), seed.text)


def productions_of(tree: Any) -> list[Any]:
    """The productions of a parse tree, as the grammar sees them."""
    from alict_core.parsing.trees import productions

    return list(productions(tree))


@st.cache_resource(show_spinner=False, max_entries=512)
def _masked(parser_name: str, artefact: str, seed_id: str, text: str, top_k: int,
            max_masks: int) -> list[dict[str, Any]]:
    from alict_core.grammar import masked_sentences

    tree = _parse(parser_name, artefact, text)
    grammar = backends.reference_grammar()
    return as_rows(masked_sentences(seed_id, tree, grammar, top_k=top_k, max_masks=max_masks))


def masked_for_seed(parser_name: str, seed: Any, top_k: int = 5, max_masks: int = 10) -> list[dict[str, Any]]:
    """Masked sentences (with the reference superstructures they come from) of one seed."""
    return _masked(parser_name, backends.artefact_key("parser", parser_name), seed.id, seed.text, int(top_k),
                   int(max_masks))


@st.cache_resource(show_spinner=False, max_entries=256)
def _expand_one(parser_name: str, mlm_name: str, artefacts_key: str, spec_hash: str, seed_id: str, _spec: Any,
                _seed: Any, options_key: str, options: tuple) -> list[dict[str, Any]]:
    from alict_core.expansion import expand

    # a page view writes nothing: one seed is quick, and kept here (bounded); on disk every seed and slider setting a
    # browser picked was a new artefact, without bound
    result = expand([_seed], _spec, backends.page_parser(parser_name), backends.suggester(mlm_name),
                    **{**dict(options), "use_cache": False})
    return list(result.rows)


def expand_seed(parser_name: str, mlm_name: str, spec: Any, seed: Any, **options: Any) -> list[dict[str, Any]]:
    """Every candidate expansion of one seed with its verdicts (accepted and rejected)."""
    opts = tuple(sorted(options.items()))
    built = backends.artefact_key("parser", parser_name) + "|" + backends.artefact_key("mlm", mlm_name)
    return _expand_one(parser_name, mlm_name, built, spec_key(spec), seed.id, spec, seed, hash_json(opts), opts)


# ---------------------------------------------------------------- explanations
def _answers_change(ref_json: str) -> bool:
    from alict_core.models.protocol import answers_change

    return answers_change(backends.model_from_ref(json.loads(ref_json)))


def explain_case(ref_json: str, text: str, method: str, seed: int, n_samples: int) -> dict[str, Any]:
    """Token contributions of one text for one model (a plain dict; cached by all inputs). An endpoint's are never
    cached: the process cache served the old service's explanation to the next session after a redeploy (pass 38)."""
    if _answers_change(ref_json):
        return _explain(ref_json, text, method, seed, n_samples)
    return _explain_cached(ref_json, text, method, seed, n_samples)


@st.cache_data(show_spinner=False, max_entries=512)
def _explain_cached(ref_json: str, text: str, method: str, seed: int, n_samples: int) -> dict[str, Any]:
    return _explain(ref_json, text, method, seed, n_samples)


def _explain(ref_json: str, text: str, method: str, seed: int, n_samples: int) -> dict[str, Any]:
    from alict_core.explain import explain

    model = backends.model_from_ref(json.loads(ref_json))
    return as_row(explain(model, text, method=method, seed=seed, n_samples=n_samples))


def template_case(ref_json: str, text: str, method: str, seed: int, n_samples: int, p_thresh: float) -> dict[str, Any]:
    """The masking template of one text (kept tokens and fidelity curve) as a plain dict (an endpoint's: uncached)."""
    if _answers_change(ref_json):
        return _template(ref_json, text, method, seed, n_samples, p_thresh)
    return _template_cached(ref_json, text, method, seed, n_samples, p_thresh)


@st.cache_data(show_spinner=False, max_entries=512)
def _template_cached(ref_json: str, text: str, method: str, seed: int, n_samples: int,
                     p_thresh: float) -> dict[str, Any]:
    return _template(ref_json, text, method, seed, n_samples, p_thresh)


def _template(ref_json: str, text: str, method: str, seed: int, n_samples: int, p_thresh: float) -> dict[str, Any]:
    from alict_core.explain import Contributions, masking_template

    contributions = Contributions.from_dict(explain_case(ref_json, text, method, seed, n_samples))
    model = backends.model_from_ref(json.loads(ref_json))
    result = masking_template(model, text, contributions, p_thresh=p_thresh, n_samples=n_samples, seed=seed)
    return as_row(result)
