"""Test runs for the app: request → seeds (+ expansions) → cases → run_suite → saved RunResult.

The only module of the app that talks to ``alict_core.runner``; runs are saved under
``artefact_dir("app-runs")/<content hash of the request>`` so a link (``?run=<key>``) reopens one.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from alict_core.config import artefact_dir
from alict_core.hashing import hash_json
from alict_core.jsonl import read_json, write_json
from alict_app import services
from alict_app.core import core_attr

RUNNER = "alict_core.runner"
RUNNER_HINT = "the test runner (issue #4) has not landed"
Progress = Callable[[str, float], None]


@dataclass
class RunRequest:
    """Everything that determines a run's result (its hash is the run key)."""

    task: str
    lc_ids: list[str]
    models: list[dict[str, Any]]  # {"name": registry name, "kwargs": {...}, "label": shown name}
    max_seeds: int | str | None = 30
    sample_seed: int = 0
    expand: bool = False
    parser: str | None = None
    mlm: str | None = None
    max_per_seed: int = 3
    batch_size: int = 64
    spec_keys: dict[str, str] = field(default_factory=dict)
    keep_flagged: bool = False  # keep cases the validity checks flag (alict_core.validity)

    def key(self) -> str:
        return hash_json(asdict(self), length=16)


def runs_root() -> Path:
    return artefact_dir("app-runs")


def run_dir(key: str) -> Path:
    return runs_root() / key


def is_done(key: str) -> bool:
    meta = run_dir(key) / "request.json"
    return meta.exists() and read_json(meta).get("status") == "done"


def list_runs(task: str | None = None) -> list[dict[str, Any]]:
    """Finished runs (newest first) with their request and when they finished."""
    rows = []
    for meta in runs_root().glob("*/request.json"):
        try:
            info = read_json(meta)
        except ValueError:
            continue
        if info.get("status") == "done" and (task is None or info["request"]["task"] == task):
            rows.append(info)
    return sorted(rows, key=lambda r: r.get("finished", 0), reverse=True)


def describe_run(info: dict[str, Any]) -> str:
    """One line naming a finished run: when, how many LCs, which models, short key."""
    import datetime as dt

    request = info["request"]
    when = dt.datetime.fromtimestamp(info.get("finished", 0)).strftime("%Y-%m-%d %H:%M")
    models = ", ".join(m.get("label", m["name"]) for m in request["models"])
    return f"{when} · {len(request['lc_ids'])} LCs · {models} · {info['key'][:8]}"


@st.cache_resource(show_spinner="Loading the run …", max_entries=8)
def load_run(key: str) -> Any:
    run_result = core_attr(RUNNER, "RunResult", RUNNER_HINT)
    return run_result.load(run_dir(key))


def run_info(key: str) -> dict[str, Any]:
    return read_json(run_dir(key) / "request.json")


def execute(request: RunRequest, specs: dict[str, Any], progress: Progress,
            should_stop: Callable[[], bool] = lambda: False) -> str:
    """Run the request, save the result; return its key. ``progress(message, fraction)`` is called often."""
    build_cases = core_attr(RUNNER, "build_cases", RUNNER_HINT)
    run_suite = core_attr(RUNNER, "run_suite", RUNNER_HINT)
    key = request.key()
    started = time.time()
    seeds: list[Any] = []
    expansions: list[Any] = []
    n = len(request.lc_ids)
    for i, lc_id in enumerate(request.lc_ids):
        spec = specs[lc_id]
        progress(f"seeds of {lc_id}", 0.3 * i / max(1, n))
        found = services.seed_set(spec, max_seeds=request.max_seeds, seed=request.sample_seed).seeds
        seeds.extend(found)
        if request.expand and found:
            expand = core_attr("alict_core.expansion", "expand", "the expansion step (issue #3) has not landed")

            def on_expand(done: int, total: int, stage: str, _lc=lc_id) -> None:
                progress(f"expanding {_lc}: {stage} {done}/{total}", 0.3 * i / max(1, n))

            result = expand(found, spec, services.parser(request.parser), services.suggester(request.mlm),
                            max_per_seed=request.max_per_seed, progress=on_expand)
            expansions.extend(services.expansion_rows(result))
        if should_stop():
            raise RunCancelled(f"cancelled while preparing {lc_id}")
    accepted = [r for r in expansions if r.get("accepted")]
    from alict_core.validity import apply_validity

    cases, validity = apply_validity(seeds, accepted, build_cases(seeds, accepted), task=request.task, specs=specs,
                                     keep_flagged=request.keep_flagged)
    models = [services.model_from_ref(ref) for ref in request.models]
    cancelled = core_attr(RUNNER, "RunCancelled", RUNNER_HINT)
    try:
        # one pass per LC, so progress names the LC and the model; predictions are cached on disk ...
        for i, lc_id in enumerate(request.lc_ids):
            lc_cases = [c for c in cases if c.lc_id == lc_id]

            def on_run(done: int, total: int, message: str = "", _lc=lc_id, _i=i) -> None:
                share = (float(done) / total) if total else 1.0
                progress(f"{_lc} · {message or f'{done}/{total}'}", 0.3 + 0.7 * (_i + share) / max(1, n))

            if lc_cases:
                run_suite(lc_cases, models, batch_size=request.batch_size, progress=on_run, should_stop=should_stop)
        # ... so the final pass over every case only reads the cache
        result = run_suite(cases, models, batch_size=request.batch_size, should_stop=should_stop)
    except cancelled as exc:
        raise RunCancelled(str(exc)) from exc
    result.extra["validity"] = validity
    folder = run_dir(key)
    result.save(folder)
    write_json(folder / "request.json", {"key": key, "request": asdict(request), "status": "done",
                                         "started": started, "finished": time.time()})
    load_run.clear()
    run_frames.clear()
    overview_figures.clear()
    return key


class RunCancelled(Exception):
    """The user stopped a run (between batches)."""


# ------------------------------------------------------------------ frames from a RunResult
def _frame(result: Any, attr: str):
    import pandas as pd

    value = getattr(result, attr, None)
    if value is None:
        return pd.DataFrame()
    value = value() if callable(value) else value
    return value if isinstance(value, pd.DataFrame) else pd.DataFrame(value)


def summary_frame(result: Any):
    return _frame(result, "summary")


def cases_frame(result: Any):
    """One row per (case, model) with normalised columns lc_id, model, kind, text, expected, predicted, failed."""
    frame = _frame(result, "cases").copy()
    aliases = {
        "lc": "lc_id", "model_name": "model", "case_kind": "kind", "source": "kind", "is_expansion": "kind",
        "prediction": "predicted", "pred": "predicted", "predicted_label": "predicted",
    }
    frame = frame.rename(columns={k: v for k, v in aliases.items() if k in frame.columns and v not in frame.columns})
    if "kind" in frame.columns and frame["kind"].dtype == bool:
        frame["kind"] = frame["kind"].map({True: "expansion", False: "seed"})
    if "failed" not in frame.columns:
        if "passed" in frame.columns:
            frame["failed"] = ~frame["passed"].astype(bool)
        elif "fail" in frame.columns:
            frame["failed"] = frame["fail"].astype(bool)
    if "kind" not in frame.columns:
        frame["kind"] = "seed"
    return frame


def pass_to_fail_frame(result: Any):
    return _frame(result, "pass_to_fail")


@st.cache_data(show_spinner=False, max_entries=8)
def run_frames(key: str) -> dict[str, Any]:
    """The run's tables (cases, pass_to_fail, summary), computed once per run key."""
    result = load_run(key)
    return {"cases": cases_frame(result), "pass_to_fail": pass_to_fail_frame(result), "summary": summary_frame(result)}


@st.cache_data(show_spinner=False, max_entries=8)
def overview_figures(key: str) -> dict[str, Any]:
    """Heatmap and bars of a run (plotly figures), built once per run key."""
    from alict_app import charts

    cases = run_frames(key)["cases"]
    rates = cases.groupby(["lc_id", "model"])["failed"].mean().reset_index(name="fail_rate")
    return {"heatmap": charts.heatmap_figure(rates, "lc_id", "model", "fail_rate", "Fail rate per LC × model"),
            "bars": charts.fail_rate_bars(cases)}
