"""Property test of the spec loader: generated spec documents (mutants of the shipped specs, broken YAML,
wrong types, unknown keys, huge lists, odd Unicode, deep nesting, non-UTF-8 bytes) never raise anything but
``SpecValidationError``, and every error names its source and the line or field path.

The default suite runs 1,500 documents; ``-m slow`` runs the full 5,000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alict_core.common.config import SPECS_DIR
from alict_core.lcspec.loader import SpecValidationError, _compose_and_load, load_spec, parse_spec_text
from alict_core.lcspec.schema import LCSpec

SHIPPED = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(SPECS_DIR.glob("*/*.yaml"))]
SOURCE = "fuzz.yaml"

odd_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " ", "\u202e", "e\u0301", "\ufeff", "🙂" * 3, "null", "~", "yes", "0x1F", "1e400", "-.inf", ".nan"]
)
scalars = st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=True) | odd_text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(odd_text, inner, max_size=4),
    max_leaves=12,
)
huge = st.builds(lambda n, v: [v] * n, st.integers(1_000, 5_000), scalars)


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside a nested dict/list document."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, (*prefix, i))
    return out


def set_at(doc: Any, path: tuple, value: Any, delete: bool = False) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@st.composite
def mutant_documents(draw) -> str:
    """A shipped spec with a few values replaced, deleted or added, dumped back to YAML."""
    doc = yaml.safe_load(yaml.safe_dump(draw(st.sampled_from(SHIPPED))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(doc)))
        action = draw(st.sampled_from(["replace", "delete", "add", "huge"]))
        if action == "delete" and path:
            doc = set_at(doc, path, None, delete=True)
        elif action == "add":
            target = doc
            for key in path:
                target = target[key]
            if isinstance(target, dict):
                target[draw(odd_text)] = draw(values)
            elif isinstance(target, list):
                target.append(draw(values))
        else:
            doc = set_at(doc, path, draw(huge if action == "huge" else values))
    return yaml.safe_dump(doc, allow_unicode=draw(st.booleans()), sort_keys=False)


@st.composite
def text_mutants(draw) -> str:
    """Raw text edits of a valid spec: cut, spliced, indented, duplicated keys, deep nesting, anchors."""
    text = yaml.safe_dump(draw(st.sampled_from(SHIPPED)), sort_keys=False)
    kind = draw(st.sampled_from(["cut", "splice", "dup", "deep", "alias", "tab", "noise"]))
    at = draw(st.integers(0, len(text)))
    if kind == "cut":
        return text[:at]
    if kind == "splice":
        junk = ["{", "[", ":", "- ", "\t", "&a ", "*a", "!!python/object:os.system ", "'", '"', "? "]
        return text[:at] + draw(st.sampled_from(junk)) + text[at:]
    if kind == "dup":
        line = draw(st.sampled_from([ln for ln in text.splitlines() if ln and not ln.startswith(" ")]))
        return text + line + "\n"
    if kind == "deep":
        depth = draw(st.integers(20, 400))
        return text + "extra: " + "[" * depth + "]" * depth + "\n"
    if kind == "alias":
        n = draw(st.integers(1, 12))
        lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, n)]
        return text + "\n".join(lines) + "\n"
    if kind == "tab":
        return text.replace("  ", "\t", draw(st.integers(1, 5)))
    return draw(odd_text) + "\n" + text


@st.composite
def type_swaps(draw) -> str:
    """A shipped spec (with its optional numeric sections filled in) with one scalar replaced by a scalar of
    another type: the probes of silent coercion (``true`` or ``"3"`` or ``1.0`` where a number, text or
    flag is meant)."""
    doc = yaml.safe_load(yaml.safe_dump(draw(st.sampled_from(SHIPPED))))
    doc.setdefault("schema_version", 1)
    doc.setdefault("sampling", {}).setdefault("seed", 0)
    doc["sampling"].setdefault("max_per_source", 3)
    doc.setdefault("expansion", {}).setdefault("max_per_seed", 5)
    if isinstance(doc.get("paper"), dict):
        doc["paper"].setdefault("expansions", 0)
    scalar_paths = [p for p in paths(doc) if p and not isinstance(_at(doc, p), (dict, list))]
    path = draw(st.sampled_from(scalar_paths))
    swap = draw(st.sampled_from([True, False, "1", "0", "3", "true", 1.0, 0.0, 2.5, 1, 0, 3, None, "x"]))
    return yaml.safe_dump(set_at(doc, path, swap), sort_keys=False)


def _at(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


documents = (mutant_documents() | text_mutants() | type_swaps() | values.map(lambda v: yaml.safe_dump(v))
             | odd_text)


def coercions(source: Any, parsed: Any, path: tuple = ()) -> list[tuple]:
    """Paths where the spec holds a scalar of another kind than the document gave (``true`` read as 1, ``"3"``
    as 3, ``1.0`` as 1 ...). Widening an int to a float is no coercion; shorthands (a text for a list) are
    structure, not scalars, and are not compared."""
    if isinstance(source, dict) and isinstance(parsed, dict):
        return [p for key in source if key in parsed for p in coercions(source[key], parsed[key], (*path, key))]
    if isinstance(source, list) and isinstance(parsed, list) and len(source) == len(parsed):
        return [p for i, (a, b) in enumerate(zip(source, parsed, strict=True)) for p in coercions(a, b, (*path, i))]
    if isinstance(parsed, (bool, int, float, str)) and not isinstance(source, (dict, list)):
        if type(source) is not type(parsed) and not (type(source) is int and type(parsed) is float):
            return [path]
    return []


def check_one(text: str) -> None:
    try:
        spec = parse_spec_text(text, SOURCE)
    except SpecValidationError as exc:
        message = str(exc)
        assert message.startswith(SOURCE) and exc.detail.strip(), message
        assert exc.line is not None or exc.field is not None, message  # located: a line or a field path
        assert "\n" not in message and "Traceback" not in message  # one line
    else:
        assert isinstance(spec, LCSpec)
        found = coercions(_compose_and_load(text, SOURCE)[1], spec.model_dump())  # the loader's own reading
        assert found == [], f"silent coercions at {found}"  # strict types: no bool or text read as a number


FUZZ = settings(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


@settings(FUZZ, max_examples=1_500)
@given(documents)
def test_generated_spec_documents_give_a_spec_or_one_located_error(text):
    check_one(text)


@pytest.mark.slow
@pytest.mark.slow_full  # make test runs the 1,500-document fuzz above; make test-full adds these 5,000
@settings(FUZZ, max_examples=5_000)
@given(documents)
def test_5000_generated_spec_documents(text):
    check_one(text)


@pytest.mark.parametrize("data", [b"\xff\xfe\x00i\x00d", "id: caf\u00e9\n".encode("latin-1"),
                                  "id: x\n".encode("utf-16")])
def test_non_utf8_spec_files_are_one_clear_error(tmp_path: Path, data: bytes):
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    with pytest.raises(SpecValidationError, match="not UTF-8"):
        load_spec(path)


@pytest.mark.parametrize("text,expected", [
    ("id: a\nid: b\n", "duplicate key 'id'"),
    ("x: " + "[" * 5000 + "]" * 5000, "nested deeper than"),
    ("a: &a [1]\n" + "\n".join(f"b{i}: *a" for i in range(100)), "aliases"),
    ("id: x\x1f\n", "U\\+001F is not allowed"),
], ids=["duplicate", "deep", "aliases", "control-character"])
def test_loader_limits(text, expected):
    with pytest.raises(SpecValidationError, match=expected):
        parse_spec_text(text, SOURCE)


@pytest.mark.parametrize("path,value", [
    (("schema_version",), True), (("schema_version",), 1.0), (("paper", "expansions"), False),
    (("paper", "seeds"), "12"), (("sampling", "seed"), True), (("sampling", "max_seeds"), 10**30),
    (("sampling", "max_per_source"), 2.0), (("expansion", "max_per_seed"), True), (("title",), 12),
    (("notes",), False), (("id",), 3),
], ids=lambda v: str(v))
def test_no_bool_text_or_float_is_read_as_a_number(path, value):
    doc = yaml.safe_load(yaml.safe_dump(SHIPPED[0]))
    doc = set_at(doc, path[:-1], {**(doc.get(path[0]) or {})}) if len(path) > 1 and not doc.get(path[0]) else doc
    doc = set_at(doc, path, value)
    with pytest.raises(SpecValidationError) as info:
        parse_spec_text(yaml.safe_dump(doc), SOURCE)
    assert info.value.field and path[-1] in info.value.field, str(info.value)


@settings(FUZZ, max_examples=300)
@given(type_swaps())
def test_type_swaps_are_refused_or_kept_as_given(text):
    check_one(text)


def test_coercion_check_finds_coercions():
    assert coercions({"a": True, "b": ["1"], "c": 2}, {"a": 1, "b": [1], "c": 2.0}) == [("a",), ("b", 0)]


def test_booleans_are_not_numbers():
    doc = yaml.safe_load(yaml.safe_dump(SHIPPED[0]))
    doc.setdefault("sampling", {})["max_per_source"] = True
    with pytest.raises(SpecValidationError, match="valid integer") as info:
        parse_spec_text(yaml.safe_dump(doc), SOURCE)
    assert info.value.field and "max_per_source" in info.value.field
