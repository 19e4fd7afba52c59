"""Input limits with clear messages; defaults a normal user never hits, each configurable by environment.

Every limit ``name`` can be changed with ``ALICT_LIMIT_<NAME>`` (e.g. ``ALICT_LIMIT_ANALYSIS_CHARS=4000``).
Work is refused *before* it starts (texts and specs are measured, candidate counts are computed from the
matched group sizes without enumerating them), so a refused request returns at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

from alict_core.common.errors import AlictError


def whole_number(raw: str) -> int | None:
    """``raw`` as a whole number written in ASCII digits (an optional sign), else None: ``int()`` also reads
    ``1_0`` as 10 and full-width or Arabic-Indic digits, which nobody types as a setting."""
    text = raw.strip()
    digits = text[1:] if text[:1] in "+-" else text
    return int(text) if digits.isascii() and digits.isdigit() else None


def setting_number(variable: str, default: float, low: float, high: float, whole: bool = False) -> float:
    """A finite number in [low, high] (``whole``: a whole number) from ``$variable`` (``default`` when unset or
    blank), else one message."""
    import math

    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = float(raw) if raw.isascii() and "_" not in raw else math.nan
    except ValueError:
        value = math.nan
    if whole:
        number = whole_number(raw)
        value = math.nan if number is None else float(number)
    if not (math.isfinite(value) and low <= value <= high):
        what = "a whole number" if whole else "a number"
        raise AlictError(f"{variable}={raw[:20]!r} must be {what} from {low:g} to {high:g}")
    return value

LIMIT_MAX = 2**48  # any limit above it is no limit on this machine (256 TB), and still a valid size everywhere
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def setting_flag(variable: str, default: bool = False) -> bool:
    """An on/off setting from ``$variable`` (``default`` when unset or blank): one of the documented spellings
    (1/true/yes/on, 0/false/no/off, any case), else one message (``ALICT_DEMO_MODE=y`` was read as off: the
    server the operator meant read-only was fully writable)."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    if raw.lower() in TRUE_WORDS:
        return True
    if raw.lower() in FALSE_WORDS:
        return False
    raise AlictError(f"{variable}={raw[:20]!r}: use {'/'.join(TRUE_WORDS)} or {'/'.join(FALSE_WORDS)}")


ENV_PREFIX = "ALICT_LIMIT_"


class LimitError(AlictError):
    """An input is over a configured limit (the message names the input, the limit and its setting)."""

    def __init__(self, message: str, line: int | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.detail = detail or message


@dataclass(frozen=True)
class Limits:
    """The limits in force (see docs/ROBUSTNESS.md)."""

    text_chars: int = 10_000  # one test case or model input text (run, suites)
    analysis_chars: int = 1_000  # one text to parse or explain (cost grows fast with length)
    explain_samples: int = 20_000  # perturbation samples of an explainer / Algorithm 2
    predicate_items: int = 1_000  # entries of one predicate list (words, phrases, starts_with, ...)
    spec_candidates: int = 1_000_000  # candidate seeds of one LC enumerated or sampled from
    spec_bytes: int = 262_144  # size of one spec YAML file
    spec_depth: int = 32  # nesting depth of one spec YAML document
    spec_aliases: int = 64  # YAML aliases (*name) in one spec: each may repeat a large node ("billion laughs")
    spec_expanded: int = 1_048_576  # size of one spec with its aliases expanded (nodes + scalar characters)
    max_seeds: int = 100_000  # --max-seeds / --max per LC
    batch_size: int = 4_096  # texts per model call
    suite_bytes: int = 100_000_000  # size of one imported suite file
    suite_cases: int = 500_000  # cases of one imported suite
    review_bytes: int = 16_000_000  # size of one imported judgements file (review import)
    review_rows: int = 20_000  # rows of one imported judgements file
    uploads_bytes: int = 2_000_000_000  # all browser uploads kept in <cache>/uploads together
    workspace_specs: int = 1_000  # spec files of one task in the workspace (each is read on every page view)

    @classmethod
    def from_env(cls) -> "Limits":
        known = {ENV_PREFIX + f.name.upper() for f in fields(cls)}
        unknown = sorted(name for name in os.environ if name.startswith(ENV_PREFIX) and name not in known)
        if unknown:  # a misspelled limit was ignored without a word (the default stayed in force)
            raise LimitError(f"{unknown[0][:60]} is no setting of ALiCT (a misspelling?); the limits are "
                             + ", ".join(sorted(known)))
        values: dict[str, Any] = {}
        for f in fields(cls):
            variable = ENV_PREFIX + f.name.upper()
            raw = os.environ.get(variable)
            if raw is None or not raw.strip():
                continue
            value = whole_number(raw)
            if value is None or value < 1 or value > LIMIT_MAX:  # 2**63 failed in read(top + 1) with exit 3
                raise LimitError(f"{variable}={raw[:20]!r} must be a positive whole number (at most {LIMIT_MAX:,})")
            values[f.name] = value
        return cls(**values)


def limits() -> Limits:
    """The limits in force now (environment read on every call; cheap)."""
    return Limits.from_env()


def setting(name: str) -> str:
    return ENV_PREFIX + name.upper()


def check_count(name: str, count: int, what: str, hint: str = "") -> None:
    """Refuse ``count`` items of ``what`` when over limit ``name``."""
    limit = getattr(limits(), name)
    if count > limit:
        raise LimitError(f"{what}: {count:,} is over the limit of {limit:,}{'; ' + hint if hint else ''} "
                         f"(setting {setting(name)})")


def check_text(text: object, what: str, name: str = "text_chars", allow_empty: bool = False) -> str:
    """``text`` if it is a non-empty string (unless allowed) within limit ``name``; else one clear error."""
    if not isinstance(text, str):
        raise LimitError(f"{what} must be text, got {type(text).__name__}")
    if "\x00" in text:
        raise LimitError(f"{what} contains a NUL character")
    if not allow_empty and not text.strip():
        raise LimitError(f"{what} is empty")
    limit = getattr(limits(), name)
    if len(text) > limit:
        raise LimitError(f"{what} has {len(text):,} characters, over the limit of {limit:,} (setting {setting(name)})")
    return text


def check_yaml_shape(text: str, source: str) -> None:
    """Refuse a YAML document over the size or nesting-depth limit *before* building it (no RecursionError).

    Walks the parser's events (iterative), so a 10,000-deep ``[[[[...`` is refused at depth ``spec_depth``;
    also bounds list lengths (``predicate_items``) and aliases (``spec_aliases``). The one shape check of specs.
    """
    import yaml

    limit = limits()
    aliases = 0
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit.spec_bytes:
        detail = f"{size:,} bytes, over the spec size limit of {limit.spec_bytes:,} (setting {setting('spec_bytes')})"
        raise LimitError(f"{source}: {detail}", 1, detail)
    items = limit.predicate_items
    open_nodes: list[int | None] = []  # per open collection: items so far (sequences) or None (mappings)
    # The size of the document as loaded, aliases expanded (each node 1, a scalar also its characters): 63 aliases
    # nested 8 to a level (under spec_aliases) made a 2 KB spec of 117 million strings, and its first dump (a
    # seed-cache key) took the whole process down. An alias-free document within spec_bytes stays far below.
    expanded = 0
    anchored: dict[str, int] = {}  # anchor → its node's expanded size (closed nodes only)
    open_anchors: list[tuple[str | None, int]] = []  # per open collection: (its anchor, ``expanded`` at its start)

    def grow(by: int, event: Any) -> None:
        nonlocal expanded
        expanded += by
        if expanded > limit.spec_expanded:
            line = event.start_mark.line + 1 if event.start_mark else None
            detail = (f"its YAML aliases (*name) expand it to more than {limit.spec_expanded:,} nodes and characters "
                      f"(setting {setting('spec_expanded')})")
            raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail)

    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > limit.spec_aliases:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    detail = f"more than {limit.spec_aliases} YAML aliases (*name) (setting {setting('spec_aliases')})"
                    raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail)
                if event.anchor in anchored:
                    grow(anchored[event.anchor], event)
                elif any(anchor == event.anchor for anchor, _ in open_anchors):  # a node that holds itself
                    line = event.start_mark.line + 1 if event.start_mark else None
                    detail = f"the YAML alias *{event.anchor} is inside its own anchor (a structure that holds itself)"
                    raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail)
            elif isinstance(event, yaml.ScalarEvent):
                grow(1 + len(event.value), event)
                if event.anchor:
                    anchored[event.anchor] = 1 + len(event.value)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                open_anchors.append((event.anchor, expanded))
                grow(1, event)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)) and open_anchors:
                anchor, started = open_anchors.pop()
                if anchor:
                    anchored[anchor] = expanded - started
            if isinstance(event, yaml.NodeEvent) and open_nodes and open_nodes[-1] is not None:
                open_nodes[-1] += 1
                if open_nodes[-1] > items:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    detail = (f"a list with more than {items:,} entries, over the limit "
                              f"(setting {setting('predicate_items')})")
                    raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                open_nodes.append(0 if isinstance(event, yaml.SequenceStartEvent) else None)
                if len(open_nodes) > limit.spec_depth:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    detail = f"nested deeper than {limit.spec_depth} levels (setting {setting('spec_depth')})"
                    raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                open_nodes.pop()
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "") or ""):  # LibYAML >= 0.2.6 (PyYAML 6.0.4) scans
            mark = getattr(exc, "problem_mark", None)  # ahead and stops a deep document before our event check
            line = mark.line + 1 if mark is not None else None
            detail = f"nested deeper than {limit.spec_depth} levels (setting {setting('spec_depth')})"
            raise LimitError(f"{source}{f', line {line}' if line else ''}: {detail}", line, detail) from None
        return  # the loader reports syntax errors with their line

