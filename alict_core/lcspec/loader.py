"""Load and validate spec YAML; errors name the file, the line and the field."""

from __future__ import annotations

import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from alict_core.common import config
from alict_core.common.errors import SpecError
from alict_core.common.limits import check_count
from alict_core.lcspec.schema import LCSpec
from alict_core.tasks import task_list


class SpecValidationError(SpecError):
    """A spec failed to parse or validate; ``path``, ``line`` (1-based) and ``field`` locate it."""

    def __init__(self, source: str, message: str, line: int | None = None, field: str | None = None,
                 others: list[dict[str, Any]] | None = None) -> None:
        self.path = source
        self.line = line
        self.field = field
        self.others = others or []  # the further problems: {"message", "line", "field"} each
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


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed: ~10x faster, same results


class _UniqueKeyLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """SafeLoader that refuses duplicate keys instead of keeping the last one silently."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)  # resolve merge keys (<<) first, as the base class does
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                continue  # an unhashable key: the base class reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key]})", key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer; one over Python's digit limit of a decimal conversion (4,300) is a YAML error with its line
        (the bare ValueError escaped as an internal error: `run` exit 3)."""
        try:
            return int(super().construct_yaml_int(node))
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise yaml.constructor.ConstructorError(
                None, None, f"a whole number of {digits:,} digits (at most {sys.get_int_max_str_digits():,})",
                node.start_mark) from None


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)


def _compose_and_load(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    loader = _UniqueKeyLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return root, data


def parse_spec_text(text: str, source: str = "<spec>") -> LCSpec:
    """Parse YAML text into a validated LCSpec or raise SpecValidationError naming file, line and field."""
    from alict_core.common.limits import LimitError, check_yaml_shape

    try:
        check_yaml_shape(text, source)
    except LimitError as exc:
        raise SpecValidationError(source, exc.detail, exc.line) from None
    try:
        root, data = _compose_and_load(text, source)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (control characters ...)
        at_line = text[: max(0, exc.position)].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise SpecValidationError(source, f"invalid YAML: character U+{code:04X} is not allowed", at_line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecValidationError(source, f"invalid YAML: {problem}", line) from None
    except RecursionError:  # a last guard; check_yaml_shape bounds the depth first
        raise SpecValidationError(source, "nested too deeply") from None
    if not isinstance(data, dict):
        raise SpecValidationError(source, "a spec must be a YAML mapping (key: value lines)", 1)
    bad_key = next((k for k in data if not isinstance(k, str)), None)
    if bad_key is not None:
        raise SpecValidationError(source, f"top-level keys must be text, got {bad_key!r}", _key_line(root, ()))
    try:
        return LCSpec.model_validate(data)
    except ValidationError as exc:
        problems = [_problem(root, error) for error in exc.errors()]
        first, others = problems[0], problems[1:]
        message = first["message"]
        if others:
            message += f" (and {len(others)} more problem{'s' if len(others) > 1 else ''})"
        raise SpecValidationError(source, message, first["line"], first["field"], others) from None


def _problem(root: yaml.Node | None, error: Any) -> dict[str, Any]:
    """One pydantic error as {"message", "line", "field"} (the line of the YAML key it is about)."""
    loc = tuple(error["loc"])
    field = ".".join(str(p) for p in loc if not (isinstance(p, str) and (p[:1].isupper() or "[" in p))) or None
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = f"unknown field {str(loc[-1])!r}"
    elif error["type"] == "missing":
        message = f"missing required field {str(loc[-1])!r}"
    return {"message": message, "line": _key_line(root, loc), "field": field}


def load_spec(path: str | Path) -> LCSpec:
    path = Path(path)
    from alict_core.common.limits import limits

    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise SpecValidationError(str(path), "a folder, not a file; a spec is a YAML file")
        if not stat.S_ISREG(info.st_mode):  # a pipe would block the read for ever, /dev/zero fill the memory
            raise SpecValidationError(str(path), "not a regular file (a pipe, device or socket); a spec is a YAML file")
        size = info.st_size
        if size > limits().spec_bytes:
            raise SpecValidationError(str(path), f"{size:,} bytes, over the spec size limit of {limits().spec_bytes:,} "
                                      "(setting ALICT_LIMIT_SPEC_BYTES)")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SpecValidationError(str(path), f"cannot read spec file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise SpecValidationError(str(path), f"not UTF-8 text (byte {exc.start}); save the spec as UTF-8") from None
    return parse_spec_text(text.removeprefix("\ufeff"), str(path))


def spec_dir(task: str) -> Path:
    """The folder of a task's built-in specs (package data; read-only defaults)."""
    return config.SPECS_DIR / task


def workspace_spec_dir(task: str) -> Path:
    """Where the user's specs of a task are saved: ``<workspace_dir>/specs/<task>`` (never the built-ins)."""
    return config.workspace_dir() / "specs" / task


def spec_dirs(task: str) -> list[Path]:
    """Spec folders of a task, built-ins first; a workspace file overrides the built-in of the same name."""
    return [spec_dir(task), workspace_spec_dir(task)]


SPEC_SUFFIXES = (".yaml", ".yml")  # YAML's two extensions, in any case: a spec saved as x.yml is a spec


def is_spec_file_name(name: str) -> bool:
    """A spec file's name: not hidden (temporary files of a write), ending in .yaml or .yml (any case)."""
    return not name.startswith(".") and name.lower().endswith(SPEC_SUFFIXES) and len(Path(name).stem) > 0


def specs_in(directory: Path) -> dict[str, Path]:
    """Spec id (file stem) → file of the spec files in ``directory``; two files of one stem (``x.yaml`` and
    ``x.yml``) are one error naming both, since either one would silently shadow the other."""
    found: dict[str, Path] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.iterdir()):
        if not is_spec_file_name(path.name):
            continue
        stem = Path(path.name).stem
        if stem in found:
            raise SpecValidationError(str(path), f"{found[stem].name} and {path.name} both hold spec {stem!r} in "
                                      f"{directory}; keep one of them", field="id")
        found[stem] = path
    return found


def spec_files(task: str) -> list[Path]:
    """The spec files of a task in spec-id order, workspace files (``.yaml`` or ``.yml``) replacing built-ins of
    the same id."""
    user = workspace_spec_dir(task)
    if user.exists() and not user.is_dir():  # else the user's specs would be left out without a word
        raise SpecError(f"the workspace's spec folder {user} is a file, not a folder; move it away")
    by_id: dict[str, Path] = {}
    for directory in spec_dirs(task):
        found = specs_in(directory)
        if directory == user:  # read and checked on every page view and command: bounded
            check_count("workspace_specs", len(found), f"spec files in {user}", "move the specs you do not use "
                        "out of the workspace")
        by_id.update(found)
    return [by_id[stem] for stem in sorted(by_id)]


def workspace_spec_file(task: str, lc_id: str) -> Path | None:
    """The user's workspace file of a spec (``<id>.yaml`` or ``<id>.yml``), None when there is none."""
    return specs_in(workspace_spec_dir(task)).get(lc_id)


def spec_path(task: str, lc_id: str) -> Path:
    """The file a spec is read from: the user's workspace copy if there is one, else the built-in."""
    return workspace_spec_file(task, lc_id) or spec_dir(task) / f"{lc_id}.yaml"


@lru_cache(maxsize=8)
def _load_specs_cached(paths: tuple[str, ...], stamp: tuple, task: str) -> tuple[LCSpec, ...]:
    specs = tuple(load_spec(path) for path in paths)
    for path, spec in zip(paths, specs, strict=True):
        name = Path(path).name
        if spec.id != Path(path).stem:  # else one LC would appear twice and the one the file names vanish
            raise SpecValidationError(path, f"the file holds spec id {spec.id!r} but is named {name!r}; a spec "
                                      f"file must be named after its id ({spec.id}.yaml)", field="id")
        if spec.task != task:
            raise SpecValidationError(path, f"the file holds a {spec.task} spec but lies in the {task} specs",
                                      field="task")
    return specs


def load_task_specs(task: str) -> list[LCSpec]:
    """All specs of a task (built-in, overridden or extended by the workspace), in file-name order.

    Re-read when a file changes."""
    directory = spec_dir(task)
    if not directory.is_dir():
        raise SpecError(f"no spec directory for task {task!r} at {directory}; valid tasks: {task_list()}")
    files = spec_files(task)
    stamp = tuple((p.name, _mtime(p)) for p in files)
    return list(_load_specs_cached(tuple(str(p) for p in files), stamp, task))


def _mtime(path: Path) -> int:
    """A spec file's change stamp; a dangling or looping link is one message naming the file."""
    try:
        return path.stat().st_mtime_ns
    except OSError as exc:
        raise SpecValidationError(str(path), f"cannot read spec file ({exc.strerror})") from None


def get_spec(task: str, lc_id: str) -> LCSpec:
    """A shipped spec by id, or by short name: ``sentiment-lc04``, ``LC4``, ``lc04`` and ``4`` all work."""
    from alict_core.lcspec.lcids import parse_lc_id

    specs = load_task_specs(task)
    wanted = parse_lc_id(task, lc_id, [s.id for s in specs])
    return next(spec for spec in specs if spec.id == wanted)
