"""Typed expectations: what a test case expects of a model, one frozen class per kind.

Modelled on CheckList's ``Expect``: MFT / INV / DIR tests differ only in their expectation and in how
it is aggregated. Every kind is parsed once (from a spec's ``expected`` block, or from the plain dict
stored in seed and case artefacts) and then asked:

- ``describe()``: a short human-readable form ("positive or neutral", "same prediction on variants");
- ``to_dict()``: the stored form ``{"kind", "labels", "tolerance"[, "direction"]}`` (artefacts stay JSON);
- ``passes(label)`` (label kinds) or ``evaluate(labels, proba, variant_proba)`` (every kind);
- ``test_type``: the test type the kind makes (MFT for label kinds, INV, DIR).

The stored dict is the artefact format and is unchanged, so seeds and runs written before stay readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence, Union

import numpy as np

from alict_core.common.errors import AlictError

DEFAULT_TOLERANCE = 0.1  # INV: share of changed predictions allowed (the paper's value)
KINDS = ("label", "one_of", "not_label", "invariance", "direction")
_COMMON = frozenset({"kind", "labels", "tolerance"})
FIELDS = {"label": _COMMON, "one_of": _COMMON, "not_label": _COMMON, "invariance": _COMMON | {"threshold"},
          "direction": _COMMON | {"direction"}}  # what ``to_dict`` writes of each kind; any other field is refused


class ExpectationError(AlictError):
    """An expected outcome that is malformed (the message names where)."""


@dataclass(frozen=True)
class Outcome:
    """The verdict on one case: passed, how many variants failed and the index of the first one."""

    passed: bool
    n_failing: int = 0
    first_failing: int | None = None


@dataclass(frozen=True)
class LabelIs:
    """MFT: the predicted label is one of ``labels`` (one label: ``label``; several: ``one_of``)."""

    labels: tuple[str, ...]
    test_type: ClassVar[str] = "MFT"

    @property
    def kind(self) -> str:
        return "label" if len(self.labels) == 1 else "one_of"

    def passes(self, predicted: str) -> bool:
        return predicted in self.labels

    def allowed(self, model_labels: Sequence[str]) -> np.ndarray:
        """Boolean mask over the model's labels of predictions that pass (vectorised runs)."""
        return np.array([label in self.labels for label in model_labels], dtype=bool)

    def evaluate(self, labels: Sequence[str], proba: np.ndarray, variant_proba: np.ndarray | None = None) -> Outcome:
        return Outcome(self.passes(labels[int(np.argmax(proba))]))

    def describe(self) -> str:
        return " or ".join(self.labels)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "labels": list(self.labels), "tolerance": None}


@dataclass(frozen=True)
class NotLabel:
    """MFT: the predicted label is none of ``labels``."""

    labels: tuple[str, ...]
    kind = "not_label"
    test_type: ClassVar[str] = "MFT"

    def passes(self, predicted: str) -> bool:
        return predicted not in self.labels

    def allowed(self, model_labels: Sequence[str]) -> np.ndarray:
        return np.array([label not in self.labels for label in model_labels], dtype=bool)

    def evaluate(self, labels: Sequence[str], proba: np.ndarray, variant_proba: np.ndarray | None = None) -> Outcome:
        return Outcome(self.passes(labels[int(np.argmax(proba))]))

    def describe(self) -> str:
        return "not " + " / ".join(self.labels)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "labels": list(self.labels), "tolerance": None}


@dataclass(frozen=True)
class Invariance:
    """INV: at most ``tolerance`` of the variants change the original text's predicted label.

    ``threshold`` (CheckList's ``INV(threshold=...)``, None: off): a variant whose label changed still passes when
    its probability of the original text's predicted label is within ``threshold`` of the original's.
    """

    tolerance: float = DEFAULT_TOLERANCE
    threshold: float | None = None
    kind = "invariance"
    test_type: ClassVar[str] = "INV"

    def evaluate(self, labels: Sequence[str], proba: np.ndarray, variant_proba: np.ndarray | None = None) -> Outcome:
        if variant_proba is None or not len(variant_proba):
            return Outcome(True)
        original = int(np.argmax(proba))
        changed = variant_proba.argmax(axis=1) != original
        if self.threshold is not None:
            changed &= np.abs(variant_proba[:, original] - proba[original]) > self.threshold
        first = int(np.argmax(changed)) if changed.any() else None
        return Outcome(bool(changed.mean() <= self.tolerance), int(changed.sum()), first)

    def describe(self) -> str:
        within = "" if self.threshold is None else f", a change within {self.threshold} confidence passes"
        return f"same prediction on variants (tolerance {self.tolerance}{within})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "labels": [], "tolerance": self.tolerance}
        if self.threshold is not None:
            out["threshold"] = self.threshold
        return out


@dataclass(frozen=True)
class Directional:
    """DIR: p(``label``) of every variant moves ``direction`` ("up"/"down") by more than -``tolerance``."""

    label: str
    direction: str = "up"
    tolerance: float = 0.0
    kind = "direction"
    test_type: ClassVar[str] = "DIR"

    def evaluate(self, labels: Sequence[str], proba: np.ndarray, variant_proba: np.ndarray | None = None) -> Outcome:
        if self.label not in labels:
            raise ExpectationError(f"expected label {self.label!r} is not one of the model's labels {tuple(labels)}")
        k = list(labels).index(self.label)
        delta = variant_proba[:, k] - proba[k] if variant_proba is not None and len(variant_proba) else np.zeros(0)
        wrong = delta < -self.tolerance if self.direction == "up" else delta > self.tolerance
        first = int(np.argmax(wrong)) if wrong.any() else None
        return Outcome(bool(not wrong.any()), int(wrong.sum()), first)

    def describe(self) -> str:
        return f"p({self.label}) {self.direction}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "labels": [self.label], "tolerance": self.tolerance, "direction": self.direction}


Expectation = Union[LabelIs, NotLabel, Invariance, Directional]
LABEL_KINDS = (LabelIs, NotLabel)


def from_dict(row: Mapping[str, Any] | Expectation, where: str = "expected") -> Expectation:
    """Parse a stored expectation dict (or pass a parsed one through); errors name ``where``."""
    if isinstance(row, (LabelIs, NotLabel, Invariance, Directional)):
        return row
    if not isinstance(row, Mapping) or row.get("kind") not in KINDS:
        raise ExpectationError(f"{where}: expected.kind must be one of {KINDS}, got {row!r}")
    kind = row["kind"]
    unknown = sorted(map(str, set(row) - FIELDS[kind]))
    if unknown:  # 'directon': 'down' ran as 'up' without a word
        raise ExpectationError(f"{where}: expected of kind {kind!r} has no field {', '.join(map(repr, unknown))}; "
                               f"its fields: {', '.join(sorted(FIELDS[kind]))}")
    raw_labels = row.get("labels") or ()
    if not isinstance(raw_labels, (list, tuple)) or not all(isinstance(x, str) for x in raw_labels):
        raise ExpectationError(f"{where}: expected.labels must be a list of label names, got {raw_labels!r}")
    labels = tuple(raw_labels)
    tolerance = row.get("tolerance")
    if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))
                                  or not 0 <= tolerance <= 1):  # NaN fails the range too
        raise ExpectationError(f"{where}: expected.tolerance must be a number from 0 to 1, got {tolerance!r}")
    if kind in ("label", "one_of", "not_label", "direction") and not labels:
        raise ExpectationError(f"{where}: expected.kind {kind!r} needs at least one label")
    if (kind == "direction" and len(labels) > 1) or (kind == "invariance" and labels):
        takes = "one label (the one whose probability moves)" if kind == "direction" else "no labels"
        raise ExpectationError(f"{where}: expected.kind {kind!r} takes {takes}; got {list(labels)!r}")
    if kind in ("label", "one_of", "not_label") and tolerance is not None:
        raise ExpectationError(f"{where}: expected.tolerance applies to invariance and direction, not {kind!r}")
    if kind == "invariance":
        threshold = row.get("threshold")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                      or not 0 <= threshold <= 1):
            raise ExpectationError(f"{where}: expected.threshold must be a number from 0 to 1, got {threshold!r}")
        return Invariance(DEFAULT_TOLERANCE if tolerance is None else float(tolerance),
                          None if threshold is None else float(threshold))
    if kind == "direction":
        direction = row.get("direction", "up")
        if direction not in ("up", "down"):
            raise ExpectationError(f"{where}: expected.direction must be 'up' or 'down', got {direction!r}")
        return Directional(labels[0], direction, 0.0 if tolerance is None else float(tolerance))
    if kind == "not_label":
        return NotLabel(labels)
    return LabelIs(labels)


def from_spec(expected: Any, source_labels: Mapping[str, str] | None = None) -> Expectation:
    """The expectation of a spec rule's ``expected`` block for one generated case.

    ``source_labels`` maps search-group names to the label of the corpus sentence filling them: a
    ``same_as_source`` expectation takes that label, mapped through ``source_map`` when given.
    """
    if expected.label is not None:
        return LabelIs((expected.label,))
    if expected.one_of is not None:
        return LabelIs(tuple(expected.one_of))
    if expected.not_label is not None:
        return NotLabel((expected.not_label,))
    if expected.invariance is not None:
        return Invariance(float(expected.invariance))
    if expected.direction is not None:
        return Directional(expected.direction.label, expected.direction.towards, expected.direction.tolerance)
    label = (source_labels or {}).get(expected.same_as_source)
    if label is None:
        raise ExpectationError(f"expected same_as_source {expected.same_as_source!r}: no source sentence in that group")
    return LabelIs(tuple((expected.source_map or {}).get(label, [label])))


def describe(row: Mapping[str, Any] | Expectation) -> str:
    """``describe()`` of a stored or parsed expectation."""
    return from_dict(row).describe()


def passes(row: Mapping[str, Any] | Expectation, predicted: str) -> bool:
    """Whether a predicted label satisfies a label (MFT) expectation."""
    expectation = from_dict(row)
    if not isinstance(expectation, LABEL_KINDS):
        raise ExpectationError(
            f"expected kind {expectation.kind!r} is not an MFT expectation (it is checked over variants)"
        )
    return expectation.passes(predicted)
