"""Test cases as data: one ``TestCase`` per seed or accepted expansion (MFT / INV / DIR)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from alict_core.cases.rowschema import ExpansionRow, SeedRow, row_problem
from alict_core.common.errors import AlictError
from alict_core.lcspec.expectations import KINDS, Expectation, ExpectationError, Invariance, from_dict
from alict_core.seeds.types import expansion_case_id

TEST_TYPES = ("MFT", "INV", "DIR")
EXPECTED_KINDS = KINDS


class CaseError(AlictError):
    """A seed, expansion or imported test is malformed (the message names which)."""


@dataclass(frozen=True)
class TestCase:
    """One test input with its expected outcome.

    ``variants``: for INV the perturbed texts (identity / pronoun swaps) whose predictions must match
    ``text``'s; for DIR the texts whose ``expected["labels"][0]`` probability must move in
    ``expected["direction"]`` ("up"/"down") relative to ``text``.
    """

    __test__ = False  # not a pytest class

    case_id: str
    lc_id: str
    kind: str  # "seed" | "expansion"
    seed_id: str
    text: str
    expected: dict
    test_type: str
    capability: str = ""
    task: str | None = None
    variants: tuple[str, ...] = ()
    description: str = ""
    meta: dict = field(default_factory=dict)

    @cached_property
    def expectation(self) -> Expectation:
        """The typed expectation, parsed from ``expected`` once per case; its ``test_type`` is the one the
        expectation makes (an INV case stored with a label expectation, from older artefacts, is judged as
        invariance: see ``judged_expectation``)."""
        return from_dict(self.expected, f"case {self.case_id}")

    def judged_expectation(self) -> Expectation:
        """What the case is judged by: its expectation, or invariance for an INV case stored with a label one."""
        expectation = self.expectation
        if self.test_type == "INV" and expectation.test_type == "MFT":
            return Invariance()
        return expectation

    def texts(self) -> list[str]:
        return [self.text, *self.variants]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["variants"] = list(self.variants)
        return out

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> "TestCase":
        data = dict(row)
        data["variants"] = tuple(data.get("variants") or ())
        data.setdefault("meta", {})
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def check_expected(expected: Mapping[str, Any], where: str) -> dict:
    """Validate an ``expected`` dict (parsed as a typed expectation); return its normalised stored form."""
    try:
        return from_dict(expected, where).to_dict()
    except ExpectationError as exc:
        raise CaseError(str(exc)) from None


def default_variants_fn() -> Callable[[str], list[str]]:
    """INV variants: identity-group and pronoun swaps (an import failure is an error, never a silent fallback)."""
    from alict_core.seeds.fairness import identity_swaps

    return identity_swaps


def _as_dict(seed: Any) -> dict[str, Any]:
    if isinstance(seed, Mapping):
        return dict(seed)
    if hasattr(seed, "to_dict"):
        return dict(seed.to_dict())
    raise CaseError(f"a seed must be a dict or have to_dict(), got {type(seed).__name__}")


def _expansion_rows(expansions: Iterable[Mapping[str, Any]] | str | Path | None) -> list[dict[str, Any]]:
    if expansions is None:
        return []
    if isinstance(expansions, (str, Path)):
        from alict_core.common.jsonl import iter_jsonl

        path = Path(expansions)
        if not path.is_file():
            raise CaseError(f"expansions file {path} not found")
        return list(iter_jsonl(path))
    return [dict(row) for row in expansions]


def _variants(test_type: str, text: str, row: Mapping[str, Any],
              variants_fn: Callable[[str], list[str]]) -> tuple[str, ...]:
    if row.get("variants"):
        return tuple(row["variants"])
    if test_type == "INV":
        return tuple(v for v in variants_fn(text) if v != text)
    return ()


def check_seed_row(seed: Mapping[str, Any], where: str) -> None:
    """Refuse a seed row without its fields or with values of the wrong type (``where`` names it: ``seed #3 (id)``,
    or a user file's ``name:line``)."""
    for key in ("id", "lc_id", "text", "test_type", "expected"):
        if key not in seed:
            raise CaseError(f"{where}: missing field {key!r}")
    if seed["test_type"] not in TEST_TYPES:
        raise CaseError(f"{where}: test_type must be one of {TEST_TYPES}, got {seed['test_type']!r}")
    for key in ("id", "lc_id"):  # true or 7 would be stored as "True" / "7", a list as its repr
        if not isinstance(seed[key], str) or not seed[key].strip():
            raise CaseError(f"{where}: {key} must be a non-empty text, got {seed[key]!r:.80}")
    if not isinstance(seed["text"], str) or not seed["text"].strip():  # 12345 is not a sentence, "" tests nothing
        raise CaseError(f"{where}: text must be a non-empty text, got {seed['text']!r:.80}")
    if not isinstance(seed["expected"], Mapping):  # "neutral" failed `validate` with an internal ValueError
        raise CaseError(f"{where}: expected must be an object such as {{\"kind\": \"label\", \"labels\": [...]}}, "
                        f"got {seed['expected']!r:.80}")
    check_expected(seed["expected"], f"{where}: expected")
    check_type_matches(seed["test_type"], seed["expected"], where)
    _check_spans(seed, where)
    _check_provenance(seed, where)
    problem = row_problem(SeedRow, dict(seed))  # every other field (variants, meta, description, ...) by its type
    if problem is not None:
        raise CaseError(f"{where}: {problem}")


def check_type_matches(test_type: str, expected: Mapping[str, Any], where: str) -> None:
    """A test's type is the one its expectation makes (an INV test with a label expectation, from older artefacts,
    is judged as invariance): an MFT row with an invariance expectation was listed as MFT and judged as INV."""
    made = from_dict(expected, where).test_type
    if made != test_type and not (test_type == "INV" and made == "MFT"):
        raise CaseError(f"{where}: test_type {test_type} does not match its expected kind {expected.get('kind')!r} "
                        f"(a {made} expectation); give test_type {made}")


def check_testable(case: TestCase, where: str) -> None:
    """An INV or DIR case compares its text with its variants: without any it passed without testing anything; an
    MFT case has none (they were predicted, never judged)."""
    kind = case.judged_expectation().test_type
    if kind == "MFT" and case.variants:  # sent to the model, never judged: "1 variant, 0 failing" read as checked
        raise CaseError(f"{where}: an MFT test is judged on its text alone, and it has {len(case.variants)} "
                        "variant(s), which would be predicted and never judged: drop the variants, or make it an "
                        "INV or DIR test")
    if kind in ("INV", "DIR") and not case.variants:
        how = "none given, and its text has no identity term or pronoun to swap" if kind == "INV" else "none given"
        raise CaseError(f"{where}: {'an' if kind == 'INV' else 'a'} {kind} test compares its text with its variants, "
                        f"and it has none ({how}); it would pass without testing anything: give variants, or leave "
                        "the case out")


def check_expansion_row(row: Mapping[str, Any], where: str) -> None:
    """Refuse an expansion row with a field of another type (``variants`` as a text, ``id`` as a number, ...)."""
    problem = row_problem(ExpansionRow, dict(row))
    if problem is not None:
        raise CaseError(f"{where}: {problem}")


def _check_provenance(seed: Mapping[str, Any], where: str) -> None:
    """``source_ids`` / ``source_labels`` (lists of texts) and ``slots`` (texts by name) of a seed row, when given:
    of another shape they failed `validate` and `run` with an internal TypeError."""
    for key in ("source_ids", "source_labels"):
        value = seed.get(key, [])
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise CaseError(f"{where}: {key} must be a list of texts, got {value!r:.60}")
    slots = seed.get("slots", {})
    if not isinstance(slots, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in slots.items()):
        raise CaseError(f"{where}: slots must be an object of texts by name, got {slots!r:.60}")
    for key in ("rule", "rule_kind"):
        if key in seed and not isinstance(seed[key], str):
            raise CaseError(f"{where}: {key} must be a text, got {seed[key]!r:.60}")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_spans(seed: Mapping[str, Any], where: str) -> None:
    """``segments`` and ``protected_spans`` of a seed row: character spans inside its text, whole numbers (1e20 or
    true there failed `validate` and `run` with an internal TypeError)."""
    size = len(seed["text"])

    def span(start: Any, end: Any, what: str) -> None:
        if not (_whole(start) and _whole(end) and 0 <= start <= end <= size):
            raise CaseError(f"{where}: {what} must be whole numbers 0 <= start <= end <= {size} (the text's length), "
                            f"got {start!r:.20} and {end!r:.20}")

    segments = seed.get("segments", [])
    if not isinstance(segments, list):
        raise CaseError(f"{where}: segments must be a list, got {segments!r:.60}")
    for n, segment in enumerate(segments):
        if not isinstance(segment, Mapping) or set(segment) != {"group", "source_id", "start", "end"} or not all(
                isinstance(segment[k], str) for k in ("group", "source_id")):
            raise CaseError(f"{where}: segments[{n}] must be an object of group, source_id (texts), start and end, "
                            f"got {segment!r:.80}")
        span(segment["start"], segment["end"], f"segments[{n}] start and end")
    spans = seed.get("protected_spans", [])
    if not isinstance(spans, list):
        raise CaseError(f"{where}: protected_spans must be a list, got {spans!r:.60}")
    for n, pair in enumerate(spans):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise CaseError(f"{where}: protected_spans[{n}] must be a [start, end] pair, got {pair!r:.60}")
        span(pair[0], pair[1], f"protected_spans[{n}]")


def build_cases(
    seeds: Iterable[Any],
    expansions: Iterable[Mapping[str, Any]] | str | Path | None = None,
    *,
    variants_fn: Callable[[str], list[str]] | None = None,
    max_seeds: int | None = None,
) -> list[TestCase]:
    """Seeds (``Seed`` objects or their dicts) and accepted expansions → test cases.

    An expansion inherits its seed's test type and expected outcome; rejected expansions
    (``accepted`` false) and expansions of seeds not given are skipped. ``max_seeds`` caps seeds per LC.
    INV cases get ``variants_fn(text)`` (default ``alict_core.seeds.identity_swaps``).
    """
    variants_fn = variants_fn or default_variants_fn()
    cases: list[TestCase] = []
    by_seed: dict[str, TestCase] = {}
    per_lc: dict[str, int] = {}
    for n, raw in enumerate(seeds):
        seed = _as_dict(raw)
        where = f"seed #{n} ({seed.get('id', '?')})"
        check_seed_row(seed, where)
        if max_seeds is not None and per_lc.get(seed["lc_id"], 0) >= max_seeds:
            continue
        per_lc[seed["lc_id"]] = per_lc.get(seed["lc_id"], 0) + 1
        case = TestCase(
            case_id=str(seed["id"]), lc_id=str(seed["lc_id"]), kind="seed", seed_id=str(seed["id"]),
            text=str(seed["text"]),
            expected=check_expected(seed["expected"], where), test_type=seed["test_type"],
            capability=str(seed.get("capability") or seed["lc_id"]), task=seed.get("task"),
            variants=_variants(seed["test_type"], str(seed["text"]), seed, variants_fn),
            description=str(seed.get("description", "")), meta=_seed_meta(seed),
        )
        check_testable(case, where)
        cases.append(case)
        by_seed[case.seed_id] = case
    untestable = 0
    for n, row in enumerate(_expansion_rows(expansions)):
        accepted = row.get("accepted", True)
        if not isinstance(accepted, bool):  # "no" is a truthy string: it was read as accepted
            raise CaseError(f"expansion #{n} ({row.get('id', '?')}): accepted must be true or false, got {accepted!r}")
        check_expansion_row(row, f"expansion #{n} ({str(row.get('id', '?'))[:60]})")
        if not accepted:
            continue
        parent = by_seed.get(str(row.get("seed_id")))
        if parent is None or "text" not in row:
            continue
        own_lc = row.get("lc_id")
        if own_lc is not None and str(own_lc) != parent.lc_id and not parent.lc_id.endswith(f"-{own_lc}"):
            # run under its seed's LC without a word, even under another LC's --lc
            raise CaseError(f"expansion #{n} ({row.get('id', '?')}): its lc_id {str(own_lc)[:60]!r} is not its seed's "
                            f"LC {parent.lc_id!r}; an expansion belongs to its seed's LC")
        text = str(row["text"])
        expansion = TestCase(
            case_id=expansion_case_id(row, parent.seed_id), lc_id=parent.lc_id,
            kind="expansion",
            seed_id=parent.seed_id, text=text, expected=parent.expected, test_type=parent.test_type,
            capability=parent.capability, task=parent.task,
            variants=_variants(parent.test_type, text, row, variants_fn),
            description=parent.description, meta=_expansion_meta(row, parent),
        )
        if expansion.variants or expansion.judged_expectation().test_type == "MFT":
            check_testable(expansion, f"expansion #{n} ({str(row.get('id', '?'))[:60]})")  # an MFT one with variants
        else:  # its insertion left no term to swap ("the women"): this expansion tests nothing, its seed and the
            untestable += 1  # other expansions still do
            continue
        cases.append(expansion)
    if untestable:
        import logging

        logging.getLogger(__name__).warning("%d expansion(s) of INV/DIR seeds left out: they have no variants to "
                                            "compare with (no identity term left to swap)", untestable)
    ids = [c.case_id for c in cases]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})[:3] if len(ids) < 5000 else []
        raise CaseError(f"duplicate case ids {dupes or ''}: every seed and expansion needs a unique id")
    return cases


def _seed_meta(seed: Mapping[str, Any]) -> dict[str, Any]:
    """What the failure explorer groups seeds by: the rule and the literals it filled in (``slots``); and the
    corpus sentences the seed was built from (``source_ids``), which hardening keeps on one side of its split."""
    meta = {k: seed[k] for k in ("rule", "slots") if seed.get(k)}
    if "source_ids" in seed:
        meta["source_ids"] = [str(s) for s in seed["source_ids"] or []]
    return {**dict(seed.get("meta") or {}), **meta}


def _expansion_meta(row: Mapping[str, Any], parent: TestCase) -> dict[str, Any]:
    """What the failure explorer groups expansions by: the inserted words and the masked text; and the
    seed's ``source_ids`` (an expansion is built from the same corpus sentences)."""
    masked = row.get("masked")
    meta: dict[str, Any] = {"words": [str(w) for w in row.get("words") or []]}
    if "source_ids" in parent.meta:
        meta["source_ids"] = list(parent.meta["source_ids"])
    if isinstance(masked, Mapping) and masked.get("text"):
        meta["masked"] = str(masked["text"])
    return meta


def expected_passes(expected: Mapping[str, Any], predicted: str) -> bool:
    """MFT outcome of one prediction (``alict_core.lcspec.expectations.passes``, with the runner's error type)."""
    from alict_core.lcspec.expectations import passes

    try:
        return passes(expected, predicted)
    except ExpectationError as exc:
        raise CaseError(str(exc)) from None
