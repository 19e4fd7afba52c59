"""Diffing, locating errors in and editing spec YAML text (plain functions, no streamlit); saving is the core's
(``alict_core.lcspec.workspace``, re-exported here)."""

from __future__ import annotations

import difflib
import html
import json
import re
from typing import Any

import yaml

from alict_core.lcspec.workspace import safe_spec_name, save_refusal, save_spec_text, spec_target

__all__ = ["KeptAsIs", "annotated_yaml_html", "error_line", "replace_list", "uses_anchors", "safe_spec_name",
           "save_refusal", "save_spec_text",
           "spec_target", "unified_diff"]


def unified_diff(original: str, edited: str, name: str = "spec.yaml") -> str:
    """A unified diff of the shipped spec against the edited text ('' when identical)."""
    return "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True), edited.splitlines(keepends=True),
            fromfile=f"shipped/{name}", tofile=f"edited/{name}",
        )
    )


def error_line(exc: Exception) -> int | None:
    """The 1-based line an error points at (SpecError.line, or 'line N' in the message)."""
    line = getattr(exc, "line", None)
    if isinstance(line, int) and line > 0:
        return line
    found = re.search(r"line (\d+)", str(exc))
    return int(found.group(1)) if found else None


def _inline(value: Any, quote: str | None = None) -> str:
    """``value`` as one line of flow YAML (``[a, b]``, ``{pos: JJ}``, ``'text: quoted'``); strings in double
    quotes when ``quote`` is '"' (the style of the item it replaces)."""
    if quote == '"' and isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid double-quoted YAML scalar
    if quote == '"' and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return yaml.safe_dump([value], default_flow_style=True, width=1_000_000, allow_unicode=True).strip()[1:-1]


def _quote_of(node: yaml.Node) -> str | None:
    """The quoting style of a scalar item, or of a list's first scalar item."""
    if isinstance(node, yaml.ScalarNode):
        return node.style
    if isinstance(node, yaml.SequenceNode) and node.value:
        return _quote_of(node.value[0])
    return None


def _node_at(root: yaml.Node, path: tuple) -> yaml.Node:
    node = root
    for step in path:
        if isinstance(node, yaml.MappingNode):
            node = next(v for k, v in node.value if getattr(k, "value", None) == step)
        elif isinstance(node, yaml.SequenceNode):
            node = node.value[step]
        else:
            raise KeyError(step)
    return node


class KeptAsIs(ValueError):
    """A list the form cannot rewrite without losing what the user wrote (comments inside it, a shared anchor)."""


def uses_anchors(text: str) -> bool:
    """Whether the YAML shares nodes through anchors and aliases (``&conn`` / ``*conn``): a textual edit of one
    place would drop the anchor or rewrite the other place."""
    try:
        return any(isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None)
                   for event in yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return False


def _content_end(node: yaml.Node) -> int:
    """Where ``node``'s own text ends: a block mapping's or list's end mark lies past the comment lines after its
    last value (an edit up to there deleted them); its last value's end does not."""
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return _content_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _content_end(node.value[-1])
    return node.end_mark.index


def _span(text: str, node: yaml.Node) -> tuple[int, int]:
    """The text of ``node`` to replace; KeptAsIs when a comment lies inside it (it would be lost)."""
    start, end = node.start_mark.index, _content_end(node)
    lines = text[start:end].split("\n")
    if len(lines) > 1 and any(re.search(r"(^|[\s,\[{])#", line) for line in lines):  # `, "x",#note` too
        raise KeptAsIs("it holds comments the form would drop")
    return start, end


def replace_list(text: str, path: tuple, values: list[Any]) -> str:
    """``text`` with the YAML list at ``path`` (keys and indices) set to ``values``, as a minimal textual edit:
    changed items are rewritten in place (same count), else the list alone is rewritten in its own style. The
    rest of the file (comments, quoting, folded text, key order) stays byte for byte, so a one-character change
    in a field is a one-line diff. Raises KeyError / ValueError when ``path`` is not a list of ``text``."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    node = _node_at(root, path) if root is not None else None
    if not isinstance(node, yaml.SequenceNode):
        raise ValueError(f"no list at {path}")
    old = yaml.safe_load(text)
    for step in path:
        old = old[step]
    if old == values:
        return text
    if uses_anchors(text):
        raise KeptAsIs("the spec shares lists through YAML anchors (&name / *name)")
    if len(node.value) == len(values) and node.value:
        edits = [(*_span(text, item), _inline(new, _quote_of(item)))
                 for item, was, new in zip(node.value, old, values, strict=True) if was != new]
    else:
        start, end = _span(text, node)
        quote = _quote_of(node)
        if node.flow_style or not values:
            body = _inline(values, quote)
        else:  # a block list: one "- item" line each, at the column of its first dash
            body = ("\n" + " " * node.start_mark.column).join(f"- {_inline(v, quote)}" for v in values)
        edits = [(start, end, body)]
    for start, end, body in sorted(edits, reverse=True):
        text = text[:start] + body + text[start + len(text[start:end].rstrip()):]
    return text


def annotated_yaml_html(text: str, line: int | None, message: str, context: int = 4) -> str:
    """HTML of the YAML around ``line`` with that line highlighted and the message under it."""
    lines = text.splitlines() or [""]
    if line is None:
        start, end = 0, min(len(lines), 2 * context + 1)
    else:
        start, end = max(0, line - 1 - context), min(len(lines), line + context)
    out = ['<pre class="alict-yaml" style="white-space:pre;font-size:0.85rem;line-height:1.35;background:#f7f7fb;'
           'padding:0.5rem;border-radius:6px;overflow-x:auto">']
    for number in range(start + 1, end + 1):
        raw = lines[number - 1]
        indent = len(raw) - len(raw.lstrip(" "))  # kept visible: indentation errors are about it
        code = "&nbsp;" * indent + html.escape(raw[indent:])
        if number == line:
            out.append(f'<span style="background:#ffe1e1;display:block"><b>{number:>4} ▶ {code}</b></span>')
            out.append(f'<span style="color:#b00020;display:block">       ^ {html.escape(message)}</span>')
        else:
            out.append(f"<span style=\"display:block\">{number:>4}   {code}</span>")
    out.append("</pre>")
    return "".join(out)
