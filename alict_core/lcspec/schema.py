"""The LC spec language: pydantic models (``extra="forbid"``) for ``specs/<task>/*.yaml``.

A spec has search groups (each an AND of predicates; several groups are OR'ed into one pool unless a
rule names a group), generative rules (``select``, ``concat``, ``replace``) each with its expected
outcome, sampling caps and an expansion policy. Specs are pure data: no code, no eval.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic import Strict as StrictValue

from alict_core.common.textsafe import control_char
from alict_core.data.annotate import LEXICON_CLASSES
from alict_core.data.records import TASK_LABELS
from alict_core.tasks import HATE_SPEECH

# Numbers in specs are numbers: YAML booleans (and quoted digits) are refused, not read as 1/0; whole numbers
# fit a machine integer (a 10**30 bound or seed never reaches numpy or the standard library as an overflow)
# and floats are finite. Every model below is strict as well (``Strict``), so no field coerces.
INT_BOUND = 2**31 - 1
Int = Annotated[int, StrictValue(), Field(ge=-INT_BOUND, le=INT_BOUND)]
Float = Annotated[float, StrictValue(), Field(allow_inf_nan=False)]

SCHEMA_VERSION: Literal[1] = 1


def _whole_number(value: object) -> object:
    """A Literal of numbers compares by ``==`` (``True == 1``, ``1.0 == 1``): refuse anything but an int first."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"must be a whole number, got {type(value).__name__}")
    return value
ALL_LABELS = tuple(sorted({label for labels in TASK_LABELS.values() for label in labels}))


class Strict(BaseModel):
    """Every spec model: unknown keys refused and strict types (no bool, quoted digit or float read as an int)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LengthPredicate(Strict):
    """Number of tokens compared with bounds, e.g. ``length: {lt: 20}``."""

    lt: Int | None = None
    le: Int | None = None
    gt: Int | None = None
    ge: Int | None = None
    eq: Int | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> "LengthPredicate":
        if all(v is None for v in (self.lt, self.le, self.gt, self.ge, self.eq)):
            raise ValueError("length needs at least one of lt, le, gt, ge, eq")
        return self


class ClassSet(Strict):
    """Token classes to include or exclude, with explicit any/all semantics.

    include+any: some token has one of the classes; include+all: every class occurs;
    exclude+any: no token has any of the classes; exclude+all: not every class occurs.
    """

    include: list[str] | None = None
    exclude: list[str] | None = None
    mode: Literal["any", "all"] = "any"
    _lookup: Any = PrivateAttr(default=None)  # a matcher's index of the values (``predicates.phrases_hold``)

    @model_validator(mode="after")
    def _one_side(self) -> "ClassSet":
        if (self.include is None) == (self.exclude is None):
            raise ValueError("give exactly one of include or exclude")
        if not (self.include or self.exclude):
            raise ValueError("the include/exclude list is empty")
        return self

    @property
    def values(self) -> list[str]:
        return list(self.include or self.exclude or [])


class LexiconPredicate(ClassSet):
    @field_validator("include", "exclude")
    @classmethod
    def _known_classes(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if name not in LEXICON_CLASSES:
                raise ValueError(f"unknown lexicon class {name!r}; valid names: {', '.join(LEXICON_CLASSES)}")
        return value


# Penn Treebank tags (as spaCy's English tagger gives them) that a ``tags`` predicate may name.
PTB_TAGS = (
    "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP", "NNPS", "PDT",
    "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ",
    "WDT", "WP", "WP$", "WRB", ",", ".", ":", "``", "''", "-LRB-", "-RRB-", "HYPH", "NFP", "ADD", "AFX", "XX",
    "$", "#", "_SP",
)


def known_tags(value: list[str] | None) -> list[str] | None:
    """The list itself when every entry is a PTB tag; else one error listing the valid tags."""
    for name in value or []:
        if name not in PTB_TAGS:
            raise ValueError(f"unknown PTB tag {name!r}; valid names: {', '.join(PTB_TAGS)}")
    return value


class TagSet(ClassSet):
    """PTB tags of the tokens, same include/exclude × any/all semantics as ``words``."""

    @field_validator("include", "exclude")
    @classmethod
    def _known_tags(cls, value: list[str] | None) -> list[str] | None:
        return known_tags(value)


class TagCount(LengthPredicate):
    """How many tokens carry one of ``tags`` (PTB), compared with bounds, e.g. finite verbs: one clause.

    ``{tags: [VBZ, VBD, VBP, MD], le: 1}``: at most one finite verb, so a wrapping template ("i do not
    think that ...") covers the whole post, not one clause of several.
    """

    tags: list[str] = Field(min_length=1)

    @field_validator("tags")
    @classmethod
    def _known_tags(cls, value: list[str]) -> list[str]:
        return known_tags(value) or []


class SubjectPredicate(Strict):
    """The text opens with a plain noun-phrase subject of its first finite verb; ``words``: one is in it.

    ``{}``: "most criminals in france are ..." holds, "well cuz da jews suck", "no problem naming the kike
    is ...", "meanwhile the rat ... is" do not. ``{words: [women, muslims]}``: the subject names the group
    ("muslim immigrants are ..." holds, "the media blamed women" does not), so a later "them" refers to it.
    """

    words: list[str] | None = Field(default=None, min_length=1)


class Predicate(Strict):
    """Exactly one of the fields is set; each is one structural test on a corpus sentence.

    ``clause: true`` — the text reads as a declarative clause that can follow "I think that": it does
    not open with a conjunction, verb, wh-word or interjection, an opening subordinator or preposition is
    followed by a main clause ("if only it had the story" is a fragment), an opening adjective is not
    followed by a new noun phrase ("so sad the film"), and its first finite verb (VBZ/VBD/VBP/MD) has a noun
    or pronoun before it and no relative/wh-word or inner "that" ("the film is a delight" holds; "a film
    that is a delight", "what a mess this is", "but it is", "offers a lot" and "a witty , gorgeous
    movie" do not). ``clause: false`` is the opposite. ``tag_count``: how many tokens carry one of
    some PTB tags (``TagCount``). ``subject``: the text opens with a plain noun-phrase subject
    (``SubjectPredicate``). ``word_prefixes``: some token starts with a value (lower-cased; "nigg" finds
    "niggerette", "fagg" finds "faggotry"), same any/all semantics as ``words``. ``slur_names_person:
    true``: some slur (in any spelling) names or describes a person, not a thing: not a verb with an
    object ("retarded the industry"), not the predicate noun of "it"/"this"/"that" or a bare common noun
    ("life is a bitch", "karma 's a bitch"), not "<slur> for <something>" ("a slut for chocolate");
    ``false`` is the opposite.
    """

    length: LengthPredicate | None = None
    label: list[str] | None = None
    lexicon: LexiconPredicate | None = None
    words: ClassSet | None = None
    phrases: ClassSet | None = None
    starts_with: list[str] | None = None
    ends_with: list[str] | None = None
    tags: TagSet | None = None
    clause: Annotated[bool, StrictValue()] | None = None
    tag_count: TagCount | None = None
    subject: SubjectPredicate | None = None
    word_prefixes: ClassSet | None = None
    slur_names_person: Annotated[bool, StrictValue()] | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _label_list(cls, value):
        return [value] if isinstance(value, str) else value

    @field_validator("label")
    @classmethod
    def _known_labels(cls, value: list[str] | None) -> list[str] | None:
        for label in value or []:
            if label not in ALL_LABELS:
                raise ValueError(f"unknown label {label!r}; valid names: {', '.join(ALL_LABELS)}")
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> "Predicate":
        set_fields = [name for name in type(self).model_fields if getattr(self, name) is not None]
        if len(set_fields) != 1:
            raise ValueError(
                f"a predicate has exactly one of {', '.join(type(self).model_fields)}; got {set_fields or 'none'}"
            )
        return self

    @property
    def kind(self) -> str:
        return next(name for name in type(self).model_fields if getattr(self, name) is not None)


class SearchGroup(Strict):
    """A named corpus search: every predicate holds; ``split`` and ``category`` filter the corpus first.

    ``category`` (hate_speech only): HateXplain's annotator-majority category of the post ("normal",
    "offensive", "hate"). The task's "non-hateful" label joins normal and offensive posts; a group that
    needs posts a reader judges non-hateful asks for ``category: [normal]``.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    predicates: list[Predicate] = Field(min_length=1)
    split: list[Literal["train", "dev", "test"]] | None = None
    category: list[Literal["normal", "offensive", "hate"]] | None = Field(default=None, min_length=1)


class GroupPart(Strict):
    """A concat part filled by a sentence matched by a search group."""

    group: str


class Replacement(Strict):
    src: str = Field(min_length=1)
    tgt: str


class NextWord(Strict):
    """What may follow a replace target: no token with one of ``exclude_tags`` unless it is in ``allow``."""

    exclude_tags: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)

    @field_validator("exclude_tags")
    @classmethod
    def _known_tags(cls, value: list[str]) -> list[str]:
        return known_tags(value) or []


class ReplaceRule(Strict):
    """Replace the matched target (each pair's ``src`` phrase) by ``tgt``.

    ``first``: only the earliest match of any pair in the sentence is rewritten (the target the search
    matched), never a later word; ``all``: every match. ``skip_negated``: a sentence that already holds
    a negation ("is not", "is n't", "is never", or one elsewhere) is not negated again.

    Guards (each optional) that keep the rewrite where it changes what the sentence claims; a match that
    fails one is not a target, and with ``first`` the sentence gives no seed:
    ``after``: the target follows one of these tokens ("" = the sentence start), e.g. not "proof of
    this is"; ``target_tags``: the PTB tag the target's first word must have (``DT``: the demonstrative
    "that", not the relative pronoun "that" (WDT) of "a film that is"); ``next_word``: what may follow
    the target (e.g. no sentence adverb: "is not surely" is not English negation, no "," or "to": "that
    is , ..." / "that is to say"); ``not_later``: tokens that may not occur after the target, so the
    negated clause runs to the end of the sentence and no contrast or elaboration outside the negation
    keeps the original claim ("This is not a train wreck -- a stupefying attempt ...").
    """

    group: str
    pairs: list[Replacement] = Field(min_length=1)
    occurrence: Literal["first", "all"] = "first"
    skip_negated: Annotated[bool, StrictValue()] = True
    after: list[str] | None = None
    target_tags: list[str] | None = None
    next_word: NextWord | None = None
    not_later: list[str] | None = None

    @field_validator("target_tags")
    @classmethod
    def _known_target_tags(cls, value: list[str] | None) -> list[str] | None:
        return known_tags(value)


class Pairing(Strict):
    """How a concat rule combines its group parts: every combination, or one-to-one pairs.

    ``paired``: each group's sentences are shuffled with ``seed`` and the i-th of each group form one
    test (as many tests as the smallest group has sentences, times the fixed-text choices).
    """

    mode: Literal["cross", "paired"] = "cross"
    seed: Int = 0


class DirectionSpec(Strict):
    """DIR outcome: p(``label``) of every variant moves ``towards`` up or down (by more than -tolerance)."""

    label: str
    towards: Literal["up", "down"] = "up"
    tolerance: Float = Field(default=0.0, ge=0, le=1)


EXPECTED_KINDS = ("label", "one_of", "not_label", "invariance", "direction", "same_as_source")


class Expected(Strict):
    """Expected outcome: exactly one of label / one_of / not_label / invariance / direction / same_as_source.

    Parsed into a typed ``alict_core.lcspec.expectations`` object per generated case (``from_spec``).
    """

    label: str | None = None
    one_of: list[str] | None = None
    not_label: str | None = None
    invariance: Float | None = Field(default=None, ge=0, le=1,
                                     description="tolerance: max share of changed predictions")
    direction: DirectionSpec | None = None
    same_as_source: str | None = Field(default=None, description="group whose sentence's label the test keeps")
    source_map: dict[str, list[str]] | None = Field(
        default=None, description="with same_as_source: source label -> expected labels")

    @model_validator(mode="after")
    def _exactly_one(self) -> "Expected":
        kinds = [k for k in EXPECTED_KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"expected needs exactly one of {', '.join(EXPECTED_KINDS)}; got {kinds or 'none'}")
        if self.source_map is not None and self.same_as_source is None:
            raise ValueError("source_map is only allowed with same_as_source")
        labels = self.named_labels()
        labels += [x for values in (self.source_map or {}).values() for x in values] + list(self.source_map or {})
        for label in labels:
            if label is not None and label not in ALL_LABELS:
                raise ValueError(f"unknown label {label!r}; valid names: {', '.join(ALL_LABELS)}")
        return self

    def named_labels(self) -> list[str]:
        """Labels this outcome names directly (not those of its source map)."""
        direction = [self.direction.label] if self.direction is not None else []
        return [x for x in [self.label, self.not_label, *(self.one_of or []), *direction] if x is not None]


class Rule(Strict):
    """One generative rule: exactly one of select / concat / replace, with its expected outcome."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    select: str | None = Field(default=None, description="group whose sentences are the seeds as they are")
    concat: list[Union[list[str], GroupPart]] | None = None
    replace: ReplaceRule | None = None
    pairing: Pairing = Pairing()
    end: Literal[".", "!", "?", ""] = Field(
        default=".", description="concat: the one sentence-final mark put at the very end unless the last part has one"
    )
    expected: Expected

    @model_validator(mode="after")
    def _exactly_one(self) -> "Rule":
        kinds = [k for k in ("select", "concat", "replace") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a rule needs exactly one of select, concat, replace; got {kinds or 'none'}")
        if self.concat is not None and not any(isinstance(p, GroupPart) for p in self.concat):
            raise ValueError("a concat rule needs at least one {group: NAME} part")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("select", "concat", "replace") if getattr(self, k) is not None)

    def groups(self) -> list[str]:
        if self.select is not None:
            return [self.select]
        if self.replace is not None:
            return [self.replace.group]
        return [p.group for p in self.concat or [] if isinstance(p, GroupPart)]


class Sampling(Strict):
    max_seeds: Int | None = Field(default=1000, ge=1, description="cap on seeds per LC (null: all)")
    max_per_source: Int = Field(default=3, ge=1, description="cap on seeds sharing one source sentence")
    seed: Int = 0


class ExpansionPolicy(Strict):
    allowed_polarity: list[Literal["neutral", "positive", "negative"]] = ["neutral"]
    max_per_seed: Int = Field(default=5, ge=1)
    checks: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="overrides of the expansion's acceptance constraints, {check: {param: value, enabled: bool}} "
        "(names and defaults: docs/expansion.md; e.g. open_class_slot.tags opts in to closed-class slots)")


class PaperCounts(Strict):
    """The paper's seed and expansion counts for this LC (full corpora), the fidelity anchors."""

    seeds: Int | None = Field(default=None, ge=0)
    expansions: Int | None = Field(default=None, ge=0)
    table: str = ""


class LCSpec(Strict):
    schema_version: Annotated[Literal[1], BeforeValidator(_whole_number)] = SCHEMA_VERSION
    id: str = Field(pattern=r"^[a-z0-9_\-]+$")
    task: Literal["sentiment", "hate_speech"]
    capability: str
    title: str
    description: str
    test_type: Literal["MFT", "INV", "DIR"] = "MFT"
    search: list[SearchGroup] = Field(min_length=1)
    rules: list[Rule] = Field(min_length=1)
    sampling: Sampling = Sampling()
    expansion: ExpansionPolicy = ExpansionPolicy()
    paper: PaperCounts | None = Field(default=None, description="the paper's counts (None: an extension)")
    notes: str | None = None

    @field_validator("capability", "title")
    @classmethod
    def _one_printable_line(cls, value: str) -> str:
        """Printed in tables and terminals: no control or bidi character (an ESC erased the operator's line)."""
        found = control_char(value)
        if found:
            raise ValueError(f"holds the control character {found}; write it as one line of plain text")
        return value

    @field_validator("description", "notes")
    @classmethod
    def _plain_text(cls, value: str | None) -> str | None:
        """Text with line breaks and tabs, no other control or bidi character."""
        found = control_char((value or "").replace("\n", " ").replace("\t", " ").replace("\r", " "))
        if found:
            raise ValueError(f"holds the control character {found}; only line breaks and tabs are allowed")
        return value

    @model_validator(mode="after")
    def _references(self) -> "LCSpec":
        names = [g.name for g in self.search]
        if len(set(names)) != len(names):
            raise ValueError(f"search group names must be unique; got {names}")
        labels = TASK_LABELS[self.task]
        for rule in self.rules:
            for group in rule.groups() + ([rule.expected.same_as_source] if rule.expected.same_as_source else []):
                if group not in names:
                    raise ValueError(f"rule {rule.name!r} names unknown search group {group!r}; "
                                     f"valid names: {', '.join(names)}")
            exp = rule.expected
            for label in exp.named_labels():
                if label not in labels:
                    raise ValueError(f"label {label!r} is not a {self.task} label; valid names: {', '.join(labels)}")
            if exp.invariance is not None and self.test_type != "INV":
                raise ValueError("an invariance outcome needs test_type: INV")
            if exp.direction is not None and self.test_type != "DIR":
                raise ValueError("a direction outcome needs test_type: DIR")
        for search_group in self.search:
            if search_group.category is not None and self.task != HATE_SPEECH.name:
                raise ValueError(f"search group {search_group.name!r}: category filters HateXplain posts "
                                 f"(task {HATE_SPEECH.name}), not {self.task}")
            for predicate in search_group.predicates:
                for label in predicate.label or []:
                    if label not in labels:
                        raise ValueError(f"label {label!r} is not a {self.task} label; "
                                         f"valid names: {', '.join(labels)}")
        return self

    @property
    def is_extension(self) -> bool:
        """An LC the project adds beyond the paper's Tables 2/3 (ids ``<task>-xNN``)."""
        return "-x" in self.id

    def group(self, name: str) -> SearchGroup:
        return next(g for g in self.search if g.name == name)
