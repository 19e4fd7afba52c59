"""The one CSV writer of every export, safe to open in a spreadsheet (OWASP "CSV injection").

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be run as a formula
by Excel, LibreOffice or Google Sheets (``=cmd|' /C calc'!A0``, ``=HYPERLINK(...)``). Following the OWASP
guidance, such a cell is written with a single quote ``'`` in front, which spreadsheets show as text. A text
that already starts with ``'`` gets one more, so the change is exactly undone by :func:`restore` (used by
:func:`read_csv` and by the review import): a file exported and imported again gives back the same texts.
Numbers are never changed (``-0.5`` stays a number). Every CSV the project writes or offers for download
goes through :func:`write_csv` or :func:`csv_text`.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from alict_core.common.jsonl import atomic_path

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
LINE_END = "\r\n"  # RFC 4180; also makes the csv module quote a field holding a bare carriage return


def neutralise(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text starting with a formula prefix (or with ``'``)."""
    if isinstance(value, str) and value.startswith((*FORMULA_PREFIXES, QUOTE)):
        return QUOTE + value
    return value


def restore(value: Any) -> Any:
    """The inverse of :func:`neutralise`: one leading ``'`` removed from text."""
    if isinstance(value, str) and value.startswith(QUOTE):
        return value[1:]
    return value


def _texty(series: Any) -> bool:
    """Whether a column may hold text (object or string dtype; numbers and bools are never changed)."""
    from pandas.api.types import is_string_dtype

    return series.dtype == object or is_string_dtype(series.dtype)


def _frame(rows: Any, columns: Sequence[str] | None):
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        frame = rows if columns is None else rows.reindex(columns=list(columns))
    else:
        frame = pd.DataFrame(list(rows), columns=list(columns) if columns is not None else None)
    safe = frame.copy()
    for column in safe.columns:
        if _texty(safe[column]):
            safe[column] = safe[column].astype(object).map(neutralise)
    safe.columns = [neutralise(str(c)) for c in safe.columns]
    return safe


def csv_text(rows: Any, columns: Sequence[str] | None = None) -> str:
    """A DataFrame (or rows of dicts) as CSV text with formula prefixes neutralised (for downloads)."""
    buffer = io.StringIO()
    _frame(rows, columns).to_csv(buffer, index=False, lineterminator=LINE_END)
    return buffer.getvalue()


def write_csv(path: Path | str, rows: Any, columns: Sequence[str] | None = None) -> Path:
    """Write a DataFrame (or rows of dicts) as UTF-8 CSV atomically, formula prefixes neutralised."""
    path = Path(path)
    text = csv_text(rows, columns)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8", newline="")
    return path


def write_csv_rows(path: Path | str, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> int:
    """Stream rows of dicts (keys outside ``columns`` ignored, None empty) to CSV atomically; the row count."""
    path = Path(path)
    count = 0
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator=LINE_END)
            writer.writerow([neutralise(c) for c in columns])
            for row in rows:
                writer.writerow([neutralise("" if row.get(c) is None else row.get(c)) for c in columns])
                count += 1
    return count


def read_csv(path: Path | str):
    """A CSV written by :func:`write_csv` read back as a DataFrame, the neutralising quotes removed."""
    import pandas as pd

    frame = pd.read_csv(path)
    frame.columns = [restore(c) for c in frame.columns]
    for column in frame.columns:
        if _texty(frame[column]):
            frame[column] = frame[column].map(restore)
    return frame
