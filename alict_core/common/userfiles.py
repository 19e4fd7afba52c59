"""The strict-input path for files a user hands in (judgements, seed lists, suites, workspace files).

Every reader of a user file goes through here, so each gets the same checks and the same one-line messages:
the file exists and is a file; its size is within a limit (``ALICT_LIMIT_SUITE_BYTES`` unless told otherwise)
*before* it is read; it is UTF-8 (the message names line and byte); JSON is valid, not nested past the
interpreter's recursion limit and has no ``NaN``/``Infinity`` and no key twice in one object; CSV fields stay
within the csv module's field limit; row counts stay within a limit. Errors are raised as the caller's error class
(a subclass of ``AlictError``), so the CLI turns them into exit 2 and the pages into one message.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from alict_core.common.errors import AlictError
from alict_core.common.limits import limits, setting


class InputFileError(AlictError):
    """A user file is missing, too large, not UTF-8 or malformed (the message names file, line and field)."""


ErrorClass = Callable[[str], Exception]  # an AlictError subclass, or a function making one


def checked_file(path: str | Path, what: str, *, limit: str = "suite_bytes",
                 error: ErrorClass = InputFileError) -> Path:
    """``path`` when it is an existing file within the size limit ``limit``; else one clear error."""
    file = Path(path)
    try:
        if not file.exists():
            raise error(f"{what} {file.name!r} not found")
        if not file.is_file():
            raise error(f"{what} {file.name!r} is not a file")
        size = file.stat().st_size
    except OSError as exc:
        raise error(f"{what} {file.name!r} cannot be read ({exc.strerror or exc})") from None
    top = int(getattr(limits(), limit))
    if size > top:
        raise error(f"{what} {file.name!r}: {size:,} bytes, over the limit of {top:,} (setting {setting(limit)})")
    return file


def read_text(path: str | Path, what: str, *, limit: str = "suite_bytes", error: ErrorClass = InputFileError) -> str:
    """The file's text, decoded strictly as UTF-8 (a byte-order mark is dropped), after the size check."""
    file = checked_file(path, what, limit=limit, error=error)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise error(f"{what} {file.name!r} cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(f"{file.name}: not UTF-8 text (line {line}, byte {exc.start})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's dict, refusing a key given twice (``json.loads`` would silently keep the last value)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r} in one object")
        out[key] = value
    return out


JSON_MAX_DEPTH = 100  # deeper user JSON is refused: it parsed, then a later copy or dump hit the recursion limit
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}")


def strict_json_loads(text: str) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, duplicate keys and lone surrogate escapes such as ``"\\ud800"``
    (ValueError: they are not characters, and every later UTF-8 write failed), and nesting deeper than
    ``JSON_MAX_DEPTH`` (RecursionError, as Python's own limit)."""
    value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=unique_keys)
    if _SURROGATE_ESCAPE.search(text):  # a pair is one character; a lone half cannot be written as UTF-8
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a text holds a lone surrogate escape (\\ud800-\\udfff without its pair): not a "
                             "character") from None
    _check_depth(value)
    return value


def _check_depth(value: Any) -> None:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > JSON_MAX_DEPTH and isinstance(item, (dict, list)):  # levels of objects and lists, not values
            raise RecursionError(f"nested over {JSON_MAX_DEPTH} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def parse_json(text: str, where: str, *, error: ErrorClass = InputFileError) -> Any:
    """``json.loads`` with one clear error for bad JSON, ``NaN``/``Infinity``, a key given twice in one object and
    nesting too deep to read."""
    try:
        return strict_json_loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:
        raise error(f"{where}: not valid JSON ({exc})") from None


JSONL_LINE_END = re.compile(r"\r\n|\r|\n")  # never str.splitlines(): JSON strings hold U+2028, U+2029, U+0085 raw


def jsonl_rows(path: str | Path, what: str, *, limit: str = "suite_bytes", max_rows: str = "suite_cases",
               error: ErrorClass = InputFileError) -> list[tuple[str, dict[str, Any]]]:
    """(``name:line``, object) of every non-blank line of a JSON-lines file, checked as above."""
    file = Path(path)
    text = read_text(file, what, limit=limit, error=error)
    top = int(getattr(limits(), max_rows))
    rows: list[tuple[str, dict[str, Any]]] = []
    for n, line in enumerate(JSONL_LINE_END.split(text), start=1):
        if not line.strip():
            continue
        where = f"{file.name}:{n}"
        row = parse_json(line, where, error=error)
        if not isinstance(row, dict):
            raise error(f"{where}: expected a JSON object, got {type(row).__name__}")
        rows.append((where, row))
        if len(rows) > top:
            raise error(f"{file.name}: more than {top:,} rows, over the limit (setting {setting(max_rows)})")
    return rows


def csv_rows(path: str | Path, what: str, *, limit: str = "suite_bytes", max_rows: str = "suite_cases",
             error: ErrorClass = InputFileError) -> tuple[list[str], list[tuple[str, dict[str, str]]]]:
    """The header and (``name:row``, row) of every row of a CSV file (rows numbered as a spreadsheet shows them),
    with ragged rows and over-long fields refused by row."""
    file = Path(path)
    text = read_text(file, what, limit=limit, error=error)
    top = int(getattr(limits(), max_rows))
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[str, dict[str, str]]] = []
    header: list[str] = []
    record = 0  # row number as a spreadsheet shows it (the header is row 1; a quoted field may span lines)
    try:
        for values in reader:
            record += 1
            where = f"{file.name}:{record}"
            if not header:
                header = [h.strip() for h in values]
                twice = duplicate_columns(header)
                if twice:  # a row would keep only the last of the two values, silently
                    raise error(f"{where}: the header names the column {twice[0]!r} twice")
                continue
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                more = "more" if len(values) > len(header) else "fewer"
                raise error(f"{where}: {more} fields than the header has ({len(values)} for {len(header)})")
            rows.append((where, dict(zip(header, values, strict=True))))
            if len(rows) > top:
                raise error(f"{file.name}: more than {top:,} rows, over the limit (setting {setting(max_rows)})")
    except csv.Error as exc:
        where = f"{file.name}:{record + 1}"
        if "field larger than field limit" in str(exc):
            raise error(f"{where}: a field is longer than {csv.field_size_limit():,} characters "
                        "(the CSV field limit)") from None
        raise error(f"{where}: malformed CSV ({exc})") from None
    return header, rows


def duplicate_columns(header: list[str]) -> list[str]:
    """Column names (not blank) that a CSV header gives more than once, in order."""
    from collections import Counter

    counts = Counter(h for h in header if h)  # linear: a header of 100k columns was checked in minutes
    return [h for h in counts if counts[h] > 1]  # a Counter keeps the order names were first seen


def iter_lines(path: str | Path, what: str, *, error: ErrorClass = InputFileError) -> Iterator[tuple[int, str]]:
    """(line number, line) of a checked UTF-8 text file."""
    yield from enumerate(read_text(path, what, error=error).splitlines(), start=1)
