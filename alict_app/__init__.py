"""Streamlit app layer of ALiCT Studio: caching wrappers, sidebar, shared widgets, query-param state.

Pages in ``pages/`` are thin views over ``alict_core`` calls (via backends, artefacts, spec_store, runs).
"""
