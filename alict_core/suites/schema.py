"""Schemas of imported suites (pydantic), checked before anything runs.

Every problem becomes one :class:`SuiteFormatError` naming the file, the test (or line) and the field.
Nothing is reinterpreted: a string where a list is expected, a label list of the wrong length, numbers
or ``None`` as texts, unknown types or expectation kinds and duplicate case ids are all refused. Tests
that cannot be represented (CheckList DIR tests whose expectation was Python code, INV items without
variants) are skipped only with a :class:`Skipped` entry naming the test and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, field_validator, model_validator

from alict_core.cases.rowschema import CaseMeta, row_problem
from alict_core.common.errors import AlictError
from alict_core.common.textsafe import control_char


class SuiteFormatError(AlictError):
    """An imported suite file is malformed (the message names file, test and field)."""


@dataclass(frozen=True)
class Skipped:
    """A test (or item) left out of an import, with why."""

    test: str
    reason: str
    items: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "reason": self.reason, "items": self.items}

    def describe(self) -> str:
        return f"{self.test}: {self.reason} ({self.items} item{'s' if self.items != 1 else ''})"


@dataclass
class SuiteImport:
    """The cases of an imported suite and what was skipped."""

    source: str
    cases: list = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def check_text_value(value: str) -> str:
    """A test text: non-empty, no NUL, within the text length limit."""
    from alict_core.common.limits import limits

    if "\x00" in value:
        raise ValueError("contains a NUL character")
    if not value.strip():
        raise ValueError("is an empty text")
    if len(value) > limits().text_chars:
        raise ValueError(f"has {len(value):,} characters, over the limit of {limits().text_chars:,} "
                         "(setting ALICT_LIMIT_TEXT_CHARS)")
    return value


def check_name_value(value: str | None) -> str | None:
    """A name printed by the CLI and the pages (``lc_id``, ``capability``): no control or bidi characters, which
    could rewrite a terminal line or show the name in another order than it is stored."""
    bad = control_char(value) if value is not None else None
    if bad is not None:
        raise ValueError(f"contains the control character {bad} (names may not hold control or bidi characters)")
    return value


def check_id_value(value: str) -> str:
    """An id (``case_id``, ``seed_id``, ``lc_id``): not empty, and printable like a name."""
    if not value.strip():  # an empty LC was printed as NaN, compared as "run A ()"
        raise ValueError("is empty")
    return check_name_value(value) or value


Text = Annotated[StrictStr, "text"]
LabelValue = Union[StrictInt, StrictStr]


class CheckListTest(BaseModel):
    """One CheckList test: ``{type, capability, description, data, labels | expected, case_ids}``; any other field is
    refused (``"expcted"`` ran as the default INV without a word), and so are labels of an INV or DIR test."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["MFT", "INV", "DIR"] = "MFT"
    capability: StrictStr | None = None
    description: StrictStr | None = None
    data: list[Union[StrictStr, list[StrictStr]]]
    labels: Union[LabelValue, list[Union[LabelValue, list[LabelValue], None]], None] = None
    expected: list[dict[str, Any]] | None = None
    case_ids: list[StrictStr] | None = None

    @field_validator("capability")
    @classmethod
    def _capability(cls, value: str | None) -> str | None:
        return check_name_value(value)

    @field_validator("case_ids")
    @classmethod
    def _case_ids(cls, value: list[str] | None) -> list[str] | None:
        for index, case_id in enumerate(value or []):  # one id as a cases JSONL row's case_id is checked
            try:
                check_id_value(case_id)
            except ValueError as exc:
                raise ValueError(f"item {index} {exc}") from None
        return value

    @field_validator("type", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _labels_of_mft_only(self) -> CheckListTest:
        given = self.labels if isinstance(self.labels, list) else [self.labels]
        if self.type != "MFT" and any(label is not None for label in given):
            raise ValueError(f"{self.type} tests take no labels (their variants are compared with the original); "
                             "give their expectation in 'expected'")
        return self

    @field_validator("data")
    @classmethod
    def _texts(cls, value: list) -> list:
        if not value:
            raise ValueError("has no items")
        for item in value:
            for text in item if isinstance(item, list) else [item]:
                check_text_value(text)
        return value


class HateCheckRow(BaseModel):
    """One HateCheck CSV row (other columns are kept as metadata)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    functionality: StrictStr
    case_id: StrictStr
    test_case: StrictStr
    label_gold: StrictStr

    @field_validator("functionality")
    @classmethod
    def _named(cls, value: str) -> str:
        return check_id_value(value)

    @field_validator("case_id")
    @classmethod
    def _case_id(cls, value: str) -> str:  # empty: the line number is the id
        return check_name_value(value) or value

    @field_validator("test_case")
    @classmethod
    def _text(cls, value: str) -> str:
        return check_text_value(value)


class CaseRow(BaseModel):
    """One row of this project's cases JSONL (``export_cases_jsonl``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case_id: StrictStr
    lc_id: StrictStr
    kind: Literal["seed", "expansion"]
    seed_id: StrictStr
    text: StrictStr
    expected: dict[str, Any]
    test_type: Literal["MFT", "INV", "DIR"]
    capability: StrictStr = ""
    task: StrictStr | None = None
    variants: list[StrictStr] = []
    description: StrictStr = ""
    meta: dict[str, Any] = {}

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        return check_text_value(value)

    @field_validator("meta")
    @classmethod
    def _meta(cls, value: dict[str, Any]) -> dict[str, Any]:
        problem = row_problem(CaseMeta, value)  # meta.words as a number broke the story and the explorer
        if problem is not None:
            raise ValueError("its " + problem.removeprefix("field "))
        return value

    @field_validator("lc_id", "capability")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name_value(value) or value

    @field_validator("case_id", "lc_id", "seed_id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_id_value(value)

    @field_validator("variants")
    @classmethod
    def _variants(cls, value: list[str]) -> list[str]:
        for text in value:
            check_text_value(text)
        return value
