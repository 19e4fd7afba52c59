"""The Story's data of a run, computed once when the run finishes: ``story.json`` beside the run.

Per model: its fail rate per LC (for the headline) and its candidate failures — cases that pass the validity
checks (not flagged by the run's checks, no text defect an expansion added to its seed), ranked as the Story
ranks them (:func:`alict_core.analysis.explore.trustworthy_failures`), up to ``CANDIDATES_PER_LC`` per LC — with the
word contributions of the cards the Story would show. Reviews change after a run, so the Story page applies
them when it shows the story (disputed labels left out, confirmed ones first); a card chosen then that has no
contributions yet is explained at that moment and the story saved again.

A plain JSON file, written atomically, keyed by the run id (``meta.json``) and bound to the run's content: it
records the sha256 of the run's ``manifest.json`` and a sha256 of its own content. A story of another run id,
another ``STORY_VERSION``, another version of the run, or one edited or damaged since it was written (forged
fail rates, a wrong type anywhere) is not used: the page computes it again from the verified run. The sha256 holds
no secret (an editor computes it again), so every field is also checked (types, bounds) and the fail rates against
the run's verified ``summary.csv``. Runs over ``LARGE_ROWS`` case × model rows get no story file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from alict_core.common.errors import AlictError

STORY_FILE = "story.json"
STORY_VERSION = 1
CARDS = 3  # cards per model
CANDIDATES_PER_LC = 5  # failures kept per model and LC, so that reviews can reorder or drop some
EXPLAINER = "lemna"
SAMPLES = 200  # perturbed copies per explanation
CANDIDATE_COLUMNS = ("case_id", "lc_id", "lc_title", "capability", "kind", "model", "text", "seed_text", "expected",
                     "predicted", "confidence", "failed", "pass_to_fail")
RATE_COLUMNS = ("lc_id", "lc_title", "capability", "model", "n_cases", "n_fail", "fail_rate")
ModelLoader = Callable[[str], Any]  # a model's name in the run -> the model
log = logging.getLogger(__name__)


def story_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / STORY_FILE


def _run_id(run_dir: Path) -> str | None:
    from alict_core.common.jsonl import read_json

    try:
        return str(read_json(run_dir / "meta.json")["run_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def excluded_case_ids(result: Any, frame: pd.DataFrame) -> set[str]:
    """Failing cases the Story never shows: flagged by the run's validity checks, or an expansion with a text
    defect its seed does not have."""
    from alict_core.cases.validity import text_defects

    validity = (getattr(result, "extra", None) or {}).get("validity") or {}
    excluded = {str(flag.get("case_id")) for flag in validity.get("flags", [])}
    failed = frame[frame["failed"]].drop_duplicates("case_id")
    for case_id, kind, text, seed_text in zip(failed["case_id"], failed["kind"], failed["text"], failed["seed_text"],
                                              strict=True):
        if kind == "expansion" and text_defects(str(text), [str(seed_text)]):
            excluded.add(str(case_id))
    return excluded


def candidate_failures(frame: pd.DataFrame, excluded: set[str]) -> pd.DataFrame:
    """The failures the Story may show, in its order, up to ``CANDIDATES_PER_LC`` per model and LC."""
    failed = frame[frame["failed"] & ~frame["case_id"].isin(excluded)]
    ranked = failed.sort_values(["model", "pass_to_fail", "confidence"], ascending=[True, False, False])
    return ranked.groupby(["model", "lc_id"], sort=False).head(CANDIDATES_PER_LC)[list(CANDIDATE_COLUMNS)]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: numpy scalars as Python values, NaN as None."""
    out = []
    for row in frame.to_dict(orient="records"):
        out.append({k: (None if isinstance(v, float) and math.isnan(v) else v.item() if hasattr(v, "item") else v)
                    for k, v in row.items()})
    return out


def explain_text(model: Any, text: str, method: str = EXPLAINER, samples: int = SAMPLES) -> dict[str, Any]:
    """Tokens and contribution scores of ``text`` towards the model's predicted label (seed 0)."""
    from alict_core.explain import explain

    found = explain(model, text, method=method, seed=0, n_samples=samples)
    return {"tokens": list(found.tokens), "scores": [float(s) for s in found.scores]}


def build_story(result: Any, load_model: ModelLoader | None, *, method: str = EXPLAINER,
                samples: int = SAMPLES) -> dict[str, Any]:
    """The story of a loaded run (``RunResult``); explains the default cards when ``load_model`` is given."""
    from alict_core.analysis.explore import explorer_frame, lc_model_rates, trustworthy_failures

    frame = explorer_frame(result, validity=lambda _lcs: {})
    excluded = excluded_case_ids(result, frame) if not frame.empty else set()
    candidates = candidate_failures(frame, excluded) if not frame.empty else pd.DataFrame(columns=CANDIDATE_COLUMNS)
    rates = lc_model_rates(frame)[list(RATE_COLUMNS)] if not frame.empty else pd.DataFrame(columns=RATE_COLUMNS)
    story = {"version": STORY_VERSION, "run_id": str(result.run_id), "method": method, "samples": samples,
             "n_excluded": len(excluded), "rates": _records(rates), "candidates": _records(candidates),
             "contributions": {}}
    if load_model is not None and not candidates.empty:
        explain_cards(story, trustworthy_failures(candidates, per_model=CARDS), load_model)
    return story


def contribution_key(model: str, text: str) -> str:
    return f"{model}\n{text}"


UNEXPLAINED = "unexplained"  # card key -> why its words could not be explained (this server's copy only, never saved)


def explain_cards(story: dict[str, Any], cards: pd.DataFrame, load_model: ModelLoader) -> int:
    """Add the missing word contributions of ``cards`` to ``story``; return how many were added. A model that
    cannot be explained (stored predictions know only the run's texts, not the perturbed copies; an endpoint or a
    version gone) leaves its cards without word colours, with the reason under ``UNEXPLAINED``: one such model
    never takes the other models' cards (or the whole Story) down."""
    added = 0
    unexplained = story.setdefault(UNEXPLAINED, {})
    for model_name, text in zip(cards["model"], cards["text"], strict=True):
        key = contribution_key(str(model_name), str(text))
        if key in story["contributions"] or key in unexplained:
            continue
        try:
            story["contributions"][key] = explain_text(load_model(str(model_name)), str(text), story["method"],
                                                       int(story["samples"]))
        except AlictError as exc:
            unexplained[key] = str(exc)
            continue
        added += 1
    return added


INTEGRITY_KEYS = ("run_manifest_sha256", "sha256")  # written by save_story, checked by read_story


def _content_sha256(story: Mapping[str, Any]) -> str:
    """sha256 of the story's content (without its integrity fields), in a canonical JSON form."""
    content = {k: v for k, v in story.items() if k not in INTEGRITY_KEYS}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _manifest_sha256(run_dir: Path) -> str | None:
    try:
        return hashlib.sha256((run_dir / "manifest.json").read_bytes()).hexdigest()
    except OSError:
        return None


def read_story(run_dir: str | Path) -> dict[str, Any] | None:
    """The run's saved story, or None (none, damaged or edited since it was written, of another run id, of
    another version of the run, or of an older story version).

    The run itself is verified first, as every reader of a saved run does: a run whose files were edited or
    damaged after its story was written is refused (AlictError naming the file), never told from its old story."""
    from alict_core.common.jsonl import read_json
    from alict_core.runner.run import verify_saved_run

    folder = Path(run_dir)
    verify_saved_run(folder)
    try:
        story = read_json(story_path(folder))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(story, dict) or story.get("version") != STORY_VERSION:
        return None
    if story.get("run_id") != _run_id(folder):
        return None
    manifest = _manifest_sha256(folder)
    if manifest is None or story.get("run_manifest_sha256") != manifest or \
            story.get("sha256") != _content_sha256(story):
        log.warning("story of %s not used: it does not match its run or its checksum (edited or damaged); "
                    "computing it again", folder)
        return None
    # the checksum is no seal against an editor (anyone who can edit the file can compute it again): every value is
    # checked for its type, and the fail rates against the run's verified summary.csv
    problem = _story_problem(story, folder)
    if problem is not None:
        log.warning("story of %s not used: %s (edited); computing it again", folder, problem)
        return None
    return story


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _StoryRate(_Strict):
    lc_id: str
    lc_title: str
    capability: str
    model: str
    n_cases: int = Field(ge=0)
    n_fail: int = Field(ge=0)
    fail_rate: float = Field(ge=0, le=1, allow_inf_nan=False)


class _StoryCandidate(_Strict):
    case_id: str
    lc_id: str
    lc_title: str
    capability: str
    kind: str
    model: str
    text: str
    seed_text: str | None
    expected: str
    predicted: str
    confidence: float | None = Field(ge=0, le=1, allow_inf_nan=False)
    failed: bool
    pass_to_fail: bool | None


class _StoryContribution(_Strict):
    tokens: list[str]
    scores: list[Annotated[float, Field(allow_inf_nan=False)]]

    @model_validator(mode="after")
    def _one_score_per_token(self) -> _StoryContribution:  # a shorter list broke every card of the page
        if len(self.scores) != len(self.tokens):
            raise ValueError(f"{len(self.scores)} scores for {len(self.tokens)} tokens")
        return self


class _StoryFile(_Strict):
    version: int
    run_id: str
    method: Literal["lemna"]  # EXPLAINER: the only method a story is computed with
    samples: int = Field(ge=1, le=20_000)
    n_excluded: int = Field(ge=0)
    rates: list[_StoryRate]
    candidates: list[_StoryCandidate]
    contributions: dict[str, _StoryContribution]
    run_manifest_sha256: str
    sha256: str


def _story_problem(story: Mapping[str, Any], folder: Path) -> str | None:
    """Why a story file that passed its checksum is still not the run's (a wrong type or bound anywhere, fail rates
    other than the run's summary.csv says), else None."""
    from pydantic import ValidationError

    from alict_core.common.csvsafe import read_csv

    try:
        _StoryFile.model_validate(dict(story))
    except ValidationError as exc:
        return f"not a story ({exc.error_count()} wrong field(s))"
    try:
        summary = read_csv(folder / "summary.csv")
        counted = summary.groupby(["lc_id", "model"])[["n_cases", "n_fail"]].sum()
        truth = {(str(lc), str(model)): (int(row["n_cases"]), int(row["n_fail"]))
                 for (lc, model), row in counted.iterrows()}
    except (OSError, ValueError, KeyError):
        return "the run's summary.csv cannot be read"
    told = {(r["lc_id"], r["model"]): (r["n_cases"], r["n_fail"]) for r in story["rates"]}
    if len(told) != len(story["rates"]):  # a second row of one LC and model: the page added both (pass 14, B)
        return "it holds two fail-rate rows of one LC and model"
    if told != truth:
        return "its fail rates are not the run's (summary.csv)"
    if any(abs(r["fail_rate"] - (r["n_fail"] / r["n_cases"] if r["n_cases"] else 0.0)) > 1e-6 for r in story["rates"]):
        return "a fail rate is not its own fail count over its case count"  # the page ranks LCs by it (pass 14, A)
    return _failures_problem(story, folder)


def _comparable(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A candidate failure or fail-rate row as the page draws it, numbers rounded (titles included: the page shows
    the story's own; a story written before a spec's title changed is computed again)."""
    return tuple(round(float(value), 6) if isinstance(value, float) else value for _, value in sorted(row.items()))


def _failures_problem(story: Mapping[str, Any], folder: Path) -> str | None:
    """Why the story's failures or explanations are not the run's, else None: its candidates are computed again from
    the verified run (cheap beside the explanations the file saves), and every explanation must be of one of their
    texts, word by word (a re-sealed story showed made-up sentences as the model's failures)."""
    from alict_core.analysis.explore import explorer_frame, lc_model_rates
    from alict_core.explain.base import tokenize
    from alict_core.runner.run import RunResult

    if story["method"] != EXPLAINER or story["samples"] != SAMPLES:  # drawn in the page's caption
        return "its explanation settings are not the ones stories are written with"
    result = RunResult.load(folder)
    frame = explorer_frame(result, validity=lambda _lcs: {})
    excluded = excluded_case_ids(result, frame) if not frame.empty else set()
    truth = _records(candidate_failures(frame, excluded)) if not frame.empty else []
    if [_comparable(c) for c in story["candidates"]] != [_comparable(c) for c in truth]:
        return "its failures are not the run's"
    if story["n_excluded"] != len(excluded):
        return "its count of cases left out is not the run's"
    rates = _records(lc_model_rates(frame)[list(RATE_COLUMNS)]) if not frame.empty else []
    if sorted(map(_comparable, story["rates"])) != sorted(map(_comparable, rates)):
        return "its fail-rate rows (titles, capabilities) are not the run's"
    texts = {contribution_key(c["model"], c["text"]): c["text"] for c in truth}
    for key, contribution in story["contributions"].items():
        if key not in texts:
            return "it explains a text that is not one of the run's failures"
        if contribution["tokens"] != tokenize(texts[key]):
            return "an explanation's words are not its text's"
    return None


def save_story(run_dir: str | Path, story: Mapping[str, Any]) -> bool:
    """Write the story atomically beside the run; False when the run folder is not writable (it is a cache)."""
    from alict_core.common.jsonl import write_json

    folder = Path(run_dir)
    from alict_core.common.jsonl import _default

    # as read back: numpy values and tuples in their JSON form, so the checksum is the one read_story computes
    content = json.loads(json.dumps({k: v for k, v in story.items() if k not in (*INTEGRITY_KEYS, UNEXPLAINED)},
                                    default=_default))
    sealed = {**content, "run_manifest_sha256": _manifest_sha256(folder), "sha256": _content_sha256(content)}
    try:
        write_json(story_path(folder), sealed)
    except OSError as exc:
        log.warning("story of %s not saved: %s", run_dir, exc)
        return False
    return True


def too_big_for_a_story(run_dir: str | Path) -> bool:
    """Runs over ``LARGE_ROWS`` case × model rows are never loaded whole: no story file for them."""
    from alict_core.common.jsonl import read_json
    from alict_core.runner.reader import LARGE_ROWS

    try:
        meta = read_json(Path(run_dir) / "meta.json")
        return int(meta.get("n_cases") or 0) * len(meta.get("models") or []) > LARGE_ROWS
    except (OSError, ValueError, TypeError):
        return False


def write_story(run_dir: str | Path, load_model: ModelLoader | None) -> dict[str, Any]:
    """Compute and save the story of a finished run folder; return it."""
    from alict_core.runner.run import RunResult

    folder = Path(run_dir)
    if too_big_for_a_story(folder):
        raise AlictError(f"run {folder.name!r} is too big for a precomputed story (over the in-memory limit)")
    story = build_story(RunResult.load(folder), load_model)
    save_story(folder, story)
    return story


def loader_for(refs: Sequence[Mapping[str, Any]], names: Sequence[str]) -> ModelLoader:
    """A model loader for a run: ``names[i]`` (the run's model names) is built from ``refs[i]``
    (``{"name", "kwargs"}``); each model is built once."""
    from alict_core.models.registry import get_model

    by_name = {str(name): ref for name, ref in zip(names, refs, strict=False)}
    built: dict[str, Any] = {}

    def load(name: str) -> Any:
        if name not in built:
            ref = by_name.get(name, {"name": name, "kwargs": {}})
            built[name] = get_model(ref["name"], **dict(ref.get("kwargs") or {}))
        return built[name]

    return load


def _endpoint_models(run_dir: Path) -> list[str]:
    """The run's models whose answers come from a service (meta.json ``answers_change``)."""
    from alict_core.common.jsonl import read_json

    try:
        models = read_json(run_dir / "meta.json").get("models") or []
    except (OSError, ValueError, AttributeError):
        return []
    return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("answers_change")]


def precompute_story(run_dir: str | Path, load_model: ModelLoader | None) -> bool:
    """Write the story of a run that just finished; never fails the run (the Story page computes it then).

    Not for a run of an endpoint: its explanations send dozens of requests per failure to a (paid) service, 177 for a
    4-case run, unannounced (pass 37); the Story page explains on demand."""
    if too_big_for_a_story(run_dir):
        return False
    calling = _endpoint_models(Path(run_dir))
    if calling:
        log.warning("story of %s not precomputed: model %s calls a service (its explanations would send many "
                    "requests); the Story page explains it when opened", Path(run_dir).name, calling[0])
        return False
    try:
        write_story(run_dir, load_model)
    except Exception as exc:  # noqa: BLE001 - a cache: the run is done whatever happens here
        from alict_core.common.faults import describe_os_error

        # a hidden temporary file is no name the user knows: its folder is said (pass 37)
        log.warning("story of %s not precomputed: %s", run_dir,
                    describe_os_error(exc) if isinstance(exc, OSError) else exc)
        return False
    return True
