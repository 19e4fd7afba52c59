"""One strict schema for every field of a seed row and of an expansion row (pydantic).

The readers of seeds and expansions (`build_cases`, `--seeds` / `--expansions` files, `validate`, `fidelity`)
check each row here before reading any field: a value of another type is one message naming the field, never an
internal error later, and never a silent coercion (``"variants": "abc"`` was three one-letter variants, a number
``description`` was stored as its text, ``"meta": []`` failed with a TypeError). Fields a row may carry beyond
these are kept as they are (extra="allow"): artefacts of later versions stay readable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from alict_core.common.schemaerrors import first_problem
from alict_core.common.textsafe import control_char


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is an empty text")
    if "\x00" in value:
        raise ValueError("contains a NUL character")
    return value


def _name(value: str) -> str:
    """A name printed by the CLI and pages (LC, capability): no control or bidi characters (as a suite's)."""
    bad = control_char(value)
    if bad is not None:
        raise ValueError(f"contains the control character {bad} (names may not hold control or bidi characters)")
    return value


Name = Annotated[StrictStr, AfterValidator(_name)]


def _id(value: str) -> str:
    """An id (a seed's, an expansion's): not empty, printable like a name (it becomes a case id, printed by the CLI
    and pages and written to CSV exports)."""
    if not value.strip():
        raise ValueError("is empty")
    return _name(value)


Id = Annotated[StrictStr, AfterValidator(_id)]


Texts = list[StrictStr] | tuple[StrictStr, ...]  # a JSON list; a tuple from an in-memory row
Variant = Annotated[StrictStr, AfterValidator(_not_blank)]  # an empty variant was a prediction counted
Variants = list[Variant] | tuple[Variant, ...]
Span = Annotated[list[StrictInt], Field(min_length=2, max_length=2)] | tuple[StrictInt, StrictInt]


class CaseMeta(BaseModel):
    """The ``meta`` fields the explorer, story and hardening read (other keys are kept as they are)."""

    model_config = ConfigDict(strict=True, extra="allow")
    words: Texts | StrictStr | None = None
    focus_words: Texts | StrictStr | None = None
    source_ids: Texts | None = None
    masked: StrictStr | None = None
    rule: StrictStr | None = None
    slots: dict[StrictStr, StrictStr] | None = None


class _Segment(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    group: StrictStr
    source_id: StrictStr
    start: StrictInt
    end: StrictInt


class _Masked(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")
    text: StrictStr | None = None
    mask_positions: list[Annotated[StrictInt, Field(ge=0)]] = Field(default_factory=list)


class SeedRow(BaseModel):
    """The fields of a seed row (``Seed.to_dict()``, a ``--seeds`` line, a corpus seed)."""

    model_config = ConfigDict(strict=True, extra="allow")
    id: Id
    lc_id: Name
    text: StrictStr
    test_type: Literal["MFT", "INV", "DIR"]
    expected: dict[StrictStr, Any]
    task: StrictStr | None = None
    capability: Name | None = None
    description: StrictStr | None = None
    variants: Variants | None = None
    meta: CaseMeta | None = None
    rule: StrictStr | None = None
    rule_kind: StrictStr | None = None
    slots: dict[StrictStr, StrictStr] | None = None
    source_ids: Texts | None = None
    source_labels: Texts | None = None
    segments: list[_Segment] | None = None
    protected_spans: list[Span] | None = None


class ExpansionRow(BaseModel):
    """The fields of an expansion row (an ``expand --out`` line); ``seed_id`` and ``text`` are required of an
    accepted row only (a rejected row is never a case)."""

    model_config = ConfigDict(strict=True, extra="allow")
    id: Id | None = None
    seed_id: Id | None = None
    lc_id: StrictStr | None = None
    task: StrictStr | None = None
    text: StrictStr | None = None
    seed_text: StrictStr | None = None
    accepted: StrictBool = True
    words: Texts | None = None
    masked: _Masked | None = None
    variants: Variants | None = None
    meta: CaseMeta | None = None


def row_problem(schema: type[BaseModel], row: Any) -> str | None:
    """What is wrong with ``row`` under ``schema`` (``field 'x': ...``), or None when every field has its type."""
    if not isinstance(row, dict):
        return f"a row must be a JSON object, got {type(row).__name__}"
    try:
        schema.model_validate(row)
    except ValidationError as exc:
        return first_problem(exc)
    return None
