"""Load and validate spec YAML; errors name the file, the line and the field."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from alict_core.config import SPECS_DIR
from alict_core.errors import SpecError
from alict_core.spec.schema import LCSpec


class SpecValidationError(SpecError):
    """A spec failed to parse or validate; ``path``, ``line`` (1-based) and ``field`` locate it."""

    def __init__(self, source: str, message: str, line: int | None = None, field: str | None = None) -> None:
        self.path = source
        self.line = line
        self.field = field
        where = source + (f", line {line}" if line else "") + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")
        self.detail = message


def _key_line(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Line of the deepest YAML key or item on ``loc`` (1-based)."""
    node = root
    line = root.start_mark.line + 1 if root is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(key, str):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == key), None)
            if pair is None:
                break
            line = pair[0].start_mark.line + 1
            node = pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
    return line


def parse_spec_text(text: str, source: str = "<spec>") -> LCSpec:
    """Parse YAML text into a validated LCSpec or raise SpecValidationError naming file, line and field."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise SpecValidationError(source, f"invalid YAML: {getattr(exc, 'problem', None) or exc}", line) from None
    if not isinstance(data, dict):
        raise SpecValidationError(source, "a spec must be a YAML mapping (key: value lines)", 1)
    try:
        return LCSpec.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        field = ".".join(str(p) for p in loc if not (isinstance(p, str) and (p[:1].isupper() or "[" in p))) or None
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown field {str(loc[-1])!r}"
        elif error["type"] == "missing":
            message = f"missing required field {str(loc[-1])!r}"
        more = len(exc.errors()) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise SpecValidationError(source, message, _key_line(root, loc), field) from None


def load_spec(path: str | Path) -> LCSpec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecValidationError(str(path), f"cannot read spec file ({exc.strerror})") from None
    return parse_spec_text(text, str(path))


def spec_dir(task: str) -> Path:
    return SPECS_DIR / task


def spec_path(task: str, lc_id: str) -> Path:
    return spec_dir(task) / f"{lc_id}.yaml"


@lru_cache(maxsize=8)
def _load_task_specs_cached(task: str, stamp: tuple) -> tuple[LCSpec, ...]:
    return tuple(load_spec(path) for path in sorted(spec_dir(task).glob("*.yaml")))


def load_task_specs(task: str) -> list[LCSpec]:
    """All shipped specs of a task, in file-name order (re-read when a file changes)."""
    directory = spec_dir(task)
    if not directory.is_dir():
        raise SpecError(f"no spec directory for task {task!r} at {directory}; valid tasks: sentiment, hate_speech")
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(directory.glob("*.yaml")))
    return list(_load_task_specs_cached(task, stamp))


def _lc_number(name: str) -> str | None:
    """``lc4``/``LC04``/``4`` -> "4"; extensions keep their prefix: ``x01``/``sentiment-x01`` -> "x1"."""
    match = re.search(r"(?:^|-)(lc|x)?0*(\d+)$", name)
    if match is None:
        return None
    return ("x" if match.group(1) == "x" else "") + match.group(2)


def get_spec(task: str, lc_id: str) -> LCSpec:
    """A shipped spec by id, or by short name: ``sentiment-lc04``, ``LC4``, ``lc04`` and ``4`` all work."""
    specs = load_task_specs(task)
    wanted = lc_id.strip().lower()
    for spec in specs:
        if spec.id == wanted:
            return spec
    number = _lc_number(wanted)
    for spec in specs:
        if number is not None and _lc_number(spec.id) == number:
            return spec
    raise SpecError(f"unknown LC {lc_id!r} for task {task}; valid names: {', '.join(s.id for s in specs)}")
