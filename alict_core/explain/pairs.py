"""Pass-to-fail comparisons (TOSEM Fig. 7: seed vs expansion contributions and templates) and per-LC
aggregation of the templates of failures."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import pandas as pd

from alict_core.common.config import artefact_dir
from alict_core.common.hashing import hash_json
from alict_core.common.jsonl import read_json, write_json
from alict_core.common.manifest import load_checked, save_checked
from alict_core.explain.base import CachedModel, Contributions, ExplainError, ProgressFn, as_cached, tokenize
from alict_core.explain.explainers import explain
from alict_core.explain.template import MASK, MaskingTemplate, masking_template
from alict_core.explain.vocabulary import Vocabulary
from alict_core.models.protocol import Model, content_fingerprint


def run_lc(lc_id: str, known: Sequence[str]) -> str:
    """The run's full LC id named by ``lc_id`` (``4``, ``lc04``, ``LC4`` as every command reads them); an
    ExplainError listing the run's LCs when it names none of them."""
    from alict_core.common.errors import SpecError
    from alict_core.lcspec.lcids import run_lc_id

    if not known or lc_id in known:
        return lc_id
    try:
        return run_lc_id(lc_id, known)
    except SpecError:
        raise ExplainError(f"LC {lc_id!r} is not in this run; its LCs are: {', '.join(known)}") from None


def inserted_positions(seed_tokens: Sequence[str], expansion_tokens: Sequence[str]) -> list[int]:
    """Positions of the expansion's tokens that are not aligned to an identical seed token (difflib)."""
    matcher = difflib.SequenceMatcher(a=list(seed_tokens), b=list(expansion_tokens), autojunk=False)
    same = {j for block in matcher.get_matching_blocks() for j in range(block.b, block.b + block.size)}
    return [j for j in range(len(expansion_tokens)) if j not in same]


@dataclass
class PairExplanation:
    """Both sides of a pass-to-fail pair: contributions and masking templates, inserted tokens marked."""

    seed: Contributions
    expansion: Contributions
    seed_template: MaskingTemplate | None
    expansion_template: MaskingTemplate | None
    inserted: list[int]  # expansion positions not in the seed
    meta: dict[str, Any]

    def side_by_side(self) -> pd.DataFrame:
        """One row per token of each side: side, position, token, score, label explained, inserted, kept."""
        rows = []
        for side, contrib, template in (
            ("seed", self.seed, self.seed_template),
            ("expansion", self.expansion, self.expansion_template),
        ):
            kept = set(template.kept_positions) if template else set()
            for i, (token, score) in enumerate(zip(contrib.tokens, contrib.scores, strict=True)):
                rows.append({
                    "side": side, "position": i, "token": token, "score": score, "label": contrib.label,
                    "inserted": side == "expansion" and i in self.inserted, "kept_in_template": i in kept,
                })
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed.to_dict(),
            "expansion": self.expansion.to_dict(),
            "seed_template": self.seed_template.to_dict() if self.seed_template else None,
            "expansion_template": self.expansion_template.to_dict() if self.expansion_template else None,
            "inserted": self.inserted,
            "inserted_tokens": [self.expansion.tokens[i] for i in self.inserted],
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "PairExplanation":
        def template(value: dict | None) -> MaskingTemplate | None:
            return MaskingTemplate.from_dict(value) if value else None

        return cls(
            Contributions.from_dict(row["seed"]), Contributions.from_dict(row["expansion"]),
            template(row.get("seed_template")), template(row.get("expansion_template")),
            list(row["inserted"]), dict(row.get("meta") or {}),
        )


def compare_pair(
    model: Model | CachedModel,
    seed_text: str,
    expansion_text: str,
    method: str = "lemna",
    seed: int = 0,
    n_samples: int | None = None,
    label: str | int | None = None,
    templates: bool = True,
    p_thresh: float = 0.9,
    template_samples: int = 1000,
    vocabulary: Vocabulary | Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    meta: dict[str, Any] | None = None,
    cache: bool = False,
    **template_options: Any,
) -> PairExplanation:
    """Explain a seed and its expansion with the same method and seed (each towards its own predicted label
    unless ``label`` is given) and, with ``templates``, compute both masking templates.

    With ``cache`` the result is stored as JSON under ``artefact_dir('explain')/pairs``, keyed by a content
    hash of the model fingerprint, both texts and every setting, and read back on the next call.
    """
    seed_tokens, expansion_tokens = tokenize(seed_text), tokenize(expansion_text)
    cached = as_cached(model)
    path = None
    fingerprint = content_fingerprint(cached.model)
    if cache and fingerprint is not None:  # a model without a content fingerprint is never cached on disk
        key = hash_json({
            "model": fingerprint, "texts": [seed_text, expansion_text], "method": method,
            "seed": seed, "n_samples": n_samples, "label": label, "templates": templates, "p_thresh": p_thresh,
            "template_samples": template_samples, "vocabulary": _vocabulary_key(vocabulary),
            "options": template_options,
        })
        path = artefact_dir("explain") / "pairs" / f"{key}.json"
        # checked against its manifest: an edited, truncated or wrong-shaped entry is quarantined and computed again
        found = load_checked(path, "explained pair", key, lambda p: PairExplanation.from_dict(read_json(p)))
        if found is not None:
            found.meta = {**found.meta, **(meta or {})}
            return found
    sides = []
    for text in (seed_text, expansion_text):
        contrib = explain(cached, text, method=method, label=label, seed=seed, n_samples=n_samples, progress=progress)
        template = None
        if templates:
            template = masking_template(
                cached, text, contrib, p_thresh=p_thresh, n_samples=template_samples, seed=seed,
                vocabulary=vocabulary, progress=progress, **template_options,
            )
        sides.append((contrib, template))
    (seed_c, seed_t), (exp_c, exp_t) = sides
    inserted = inserted_positions(seed_tokens, expansion_tokens)
    pair = PairExplanation(seed_c, exp_c, seed_t, exp_t, inserted, dict(meta or {}))
    if path is not None:
        save_checked(path, "explained pair", path.stem, 1, lambda tmp: write_json(tmp, pair.to_dict()))
    return pair


def _vocabulary_key(vocabulary: Vocabulary | Sequence[str] | None) -> Any:
    if vocabulary is None:
        return None  # the task's corpus vocabulary, itself keyed by the corpus files
    if isinstance(vocabulary, Vocabulary):
        return hash_json([vocabulary.words, vocabulary.weights, vocabulary.pos])
    return hash_json(list(vocabulary))


def _kept_tokens(template: MaskingTemplate | dict | str) -> list[str]:
    if isinstance(template, MaskingTemplate):
        return template.kept_tokens
    if isinstance(template, dict):
        if "kept_tokens" in template:
            return list(template["kept_tokens"])
        template = template.get("template", "")
    if isinstance(template, str):
        return [t for t in template.split() if t != MASK]
    raise ExplainError(f"cannot read kept tokens from a {type(template).__name__}; give MaskingTemplate, dict or str")


def _template_str(template: MaskingTemplate | dict | str) -> str:
    if isinstance(template, MaskingTemplate):
        return template.template
    if isinstance(template, dict):
        return str(template.get("template", ""))
    return template


def recurring_template_tokens(
    templates: Iterable[MaskingTemplate | dict | str], lowercase: bool = True, examples: int = 3
) -> pd.DataFrame:
    """Rank the kept tokens of many templates (e.g. an LC's failures): in how many templates each recurs.

    Columns: token, templates (number of templates keeping it), share (of all templates), occurrences
    (total kept occurrences), examples (up to ``examples`` template strings).
    """
    items = list(templates)
    per_template: Counter[str] = Counter()
    occurrences: Counter[str] = Counter()
    shown: dict[str, list[str]] = {}
    for item in items:
        kept = [t.lower() if lowercase else t for t in _kept_tokens(item)]
        occurrences.update(kept)
        per_template.update(set(kept))
        for token in set(kept):
            if len(shown.setdefault(token, [])) < examples:
                shown[token].append(_template_str(item))
    columns = ["token", "templates", "share", "occurrences", "examples"]
    if not per_template:
        return pd.DataFrame(columns=columns)
    rows = [
        {"token": token, "templates": count, "share": count / len(items), "occurrences": occurrences[token],
         "examples": shown[token]}
        for token, count in per_template.items()
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.sort_values(["templates", "occurrences", "token"], ascending=[False, False, True])
    return frame.reset_index(drop=True)


def explain_lc_failures(
    run: Any,
    lc_id: str,
    model: Model | None = None,
    model_name: str | None = None,
    max_pairs: int | None = 10,
    progress: ProgressFn | None = None,
    cache: bool = True,
    **pair_options: Any,
) -> list[PairExplanation]:
    """Explain the pass-to-fail pairs of ``lc_id`` in a ``RunResult`` (or a run directory).

    ``model`` defaults to ``alict_core.models.get_model(<the run's model name>)``; with several models in the
    run, ``model_name`` picks one (default: the first that has pairs for this LC). Pair results are cached
    on disk (``cache``), so re-running an LC is instant.
    """
    if not hasattr(run, "pass_to_fail"):
        from alict_core.runner import RunResult

        run = RunResult.load(run)
    pairs = run.pass_to_fail()
    known = sorted(set(run.cases().lc_id)) if hasattr(run, "cases") else []
    lc_id = run_lc(lc_id, known)
    pairs = pairs[pairs.lc_id == lc_id]
    if model is not None:
        pairs = pairs[pairs.model == model.name] if (pairs.model == model.name).any() else pairs
    if model_name is not None:
        pairs = pairs[pairs.model == model_name]
    if pairs.empty:
        return []
    name = model_name or str(pairs.model.iloc[0])
    pairs = pairs[pairs.model == name]
    if model is None:
        from alict_core.models import get_model

        model = get_model(name)
    cached = as_cached(model)
    if max_pairs is not None:
        pairs = pairs.head(max_pairs)
    results = []
    for index, row in enumerate(pairs.itertuples(index=False)):
        meta = {"lc_id": lc_id, "model": name, "seed_id": row.seed_id, "case_id": row.case_id,
                "seed_predicted": row.seed_predicted, "predicted": row.predicted, "expected": row.expected}
        results.append(compare_pair(cached, row.seed_text, row.text, meta=meta, cache=cache, **pair_options))
        if progress is not None:
            progress(index + 1, len(pairs), f"pair {index + 1}/{len(pairs)}")
    return results
