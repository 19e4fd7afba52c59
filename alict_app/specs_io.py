"""Saving, diffing and locating errors in spec YAML text (plain functions, no streamlit)."""

from __future__ import annotations

import difflib
import html
import re
from pathlib import Path

from alict_core.errors import SpecError

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,79}$")


def safe_spec_name(name: str) -> str:
    """Validate a spec file stem: letters, digits, '_' and '-' only (no path separators, no dots)."""
    stem = name.strip()
    if stem.endswith((".yaml", ".yml")):
        stem = stem.rsplit(".", 1)[0]
    if not SAFE_NAME.match(stem):
        raise SpecError(
            f"unsafe spec file name {name!r}: use 1-80 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return stem


def spec_target(directory: Path, name: str) -> Path:
    """The file a spec named ``name`` is saved to, guaranteed to lie inside ``directory``."""
    directory = Path(directory).resolve()
    target = (directory / f"{safe_spec_name(name)}.yaml").resolve()
    if target.parent != directory:
        raise SpecError(f"spec file name {name!r} leaves the spec folder {directory}")
    return target


def save_spec_text(directory: Path, name: str, text: str, overwrite: bool = False) -> Path:
    """Write spec YAML atomically; refuse to replace an existing file unless ``overwrite``."""
    from alict_core.jsonl import atomic_path

    target = spec_target(directory, name)
    if target.exists() and not overwrite:
        raise SpecError(f"{target.name} already exists in {target.parent}; confirm overwrite to replace it")
    with atomic_path(target) as tmp:
        tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return target


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


def annotated_yaml_html(text: str, line: int | None, message: str, context: int = 4) -> str:
    """HTML of the YAML around ``line`` with that line highlighted and the message under it."""
    lines = text.splitlines() or [""]
    if line is None:
        start, end = 0, min(len(lines), 2 * context + 1)
    else:
        start, end = max(0, line - 1 - context), min(len(lines), line + context)
    out = ['<pre class="alict-yaml" style="font-size:0.85rem;line-height:1.35;background:#f7f7fb;'
           'padding:0.5rem;border-radius:6px;overflow-x:auto">']
    for number in range(start + 1, end + 1):
        code = html.escape(lines[number - 1])
        if number == line:
            out.append(f'<span style="background:#ffe1e1;display:block"><b>{number:>4} ▶ {code}</b></span>')
            out.append(f'<span style="color:#b00020;display:block">       ^ {html.escape(message)}</span>')
        else:
            out.append(f"<span style=\"display:block\">{number:>4}   {code}</span>")
    out.append("</pre>")
    return "".join(out)
