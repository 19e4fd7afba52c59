"""Export review tasks and import judgements as CSV or JSONL (for Label Studio, Argilla, spreadsheets ...).

Exported rows carry the item (``task``, ``item_id``, ``set_no``, ``case_id``, ``text_hash``, ``lc_id``,
``lc_title``, ``lc_description``, ``kind``, ``seed_text``, ``text``) and empty judgement columns
(``reviewer``, ``relevance``, ``label_score``, ``validity``, ``note``) to fill in — or, with
``judgements=True``, one row per saved judgement. Import reads the same columns back: a row is matched
to its item by ``case_id`` + ``text_hash`` within the task (``item_id`` is not needed); rows without a
reviewer are skipped. Every row is validated before anything is written, so a bad file changes nothing.
CSV cells are written through the one CSV writer (``alict_core.common.csvsafe``: a text starting with a formula
prefix gets a leading ``'``) and that quote is removed again on import. Files are read through the strict
input path (``alict_core.common.userfiles``): size and row limits, UTF-8, the required columns, no bool or number
where text is meant (and no bool where a score is meant).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from alict_core.common.csvsafe import restore, write_csv_rows
from alict_core.common.jsonl import atomic_path
from alict_core.review.store import NOTE_CHARS, ReviewError, ReviewStore, check_note, check_score, reviewer_key  # noqa: F401 - NOTE_CHARS: the limit, for readers of this module

ITEM_COLUMNS = ("task", "item_id", "set_no", "case_id", "text_hash", "lc_id", "lc_title", "lc_description", "kind",
                "seed_text", "text")
JUDGEMENT_COLUMNS = ("reviewer", "relevance", "label_score", "validity", "note")


def _format(path: Path, fmt: str | None) -> str:
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in ("csv", "jsonl"):
        raise ReviewError(f"{path}: format must be csv or jsonl (from --format or the file suffix), got {fmt!r}")
    return fmt


def export_rows(store: ReviewStore, task_name: str, *, judgements: bool = False) -> list[dict[str, Any]]:
    task = store.task(task_name)
    if judgements:
        return [{**{c: r.get(c) for c in ITEM_COLUMNS if c in r}, **{c: r[c] for c in JUDGEMENT_COLUMNS}}
                for r in store.judgements(task.id)]
    rows = []
    for item in store.items(task.id):
        row = {c: getattr(item, c, None) for c in ITEM_COLUMNS if c not in ("task", "item_id")}
        rows.append({"task": task.name, "item_id": item.id, **row, **{c: None for c in JUDGEMENT_COLUMNS}})
    return rows


def export_task(store: ReviewStore, task_name: str, path: Path | str, fmt: str | None = None, *,
                judgements: bool = False) -> int:
    """Write a task's items (or its judgements) to CSV/JSONL atomically; return the row count."""
    path = Path(path)
    fmt = _format(path, fmt)
    rows = export_rows(store, task_name, judgements=judgements)
    columns = list(ITEM_COLUMNS) + list(JUDGEMENT_COLUMNS)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        return write_csv_rows(path, rows, columns)  # formula prefixes neutralised (docs/exports.md)
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


REQUIRED_COLUMNS = ("case_id", "text_hash", "reviewer", "relevance", "label_score")
TEXT_COLUMNS = ("task", "case_id", "text_hash", "reviewer", "note")


def _read_rows(path: Path, fmt: str) -> list[tuple[str, dict[str, Any]]]:
    """Rows of a judgements file through the strict-input path (size, UTF-8, fields, rows, columns, types)."""
    from alict_core.common.userfiles import csv_rows, jsonl_rows

    what = "judgements file"
    if fmt == "csv":
        header, rows = csv_rows(path, what, limit="review_bytes", max_rows="review_rows", error=ReviewError)
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise ReviewError(f"{path.name}: lacks columns {missing} (has {header[:12]}); "
                              "write the file with `review export`")
        return [(where, {k: restore(v) for k, v in row.items()}) for where, row in rows]
    out = jsonl_rows(path, what, limit="review_bytes", max_rows="review_rows", error=ReviewError)
    for where, row in out:
        missing = [c for c in REQUIRED_COLUMNS if c not in row]
        if missing:
            raise ReviewError(f"{where}: lacks fields {missing}; write the file with `review export`")
        for column in TEXT_COLUMNS:
            if row.get(column) is not None and not isinstance(row[column], str):
                raise ReviewError(f"{where}: {column} must be text, got {type(row[column]).__name__}")
    return out


def read_judgements(path: Path | str, fmt: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a judgements file, checked as a file (before any database is opened)."""
    path = Path(path)
    return _read_rows(path, _format(path, fmt))


def import_judgements(store: ReviewStore, path: Path | str, fmt: str | None = None, *,
                      task_name: str | None = None,
                      rows: list[tuple[str, dict[str, Any]]] | None = None) -> int:
    """Read judgements from CSV/JSONL (or the ``rows`` read already) into the store (upserts); the count saved."""
    items_by_task: dict[str, dict[tuple[str, str], Any]] = {}
    seen: dict[tuple[int, str], str] = {}
    planned = []
    if task_name:  # named: it must exist even when the file holds no signed row (else "imported 0", exit 0)
        store.task(task_name)
    for where, row in rows if rows is not None else read_judgements(path, fmt):
        reviewer = str(row.get("reviewer") or "").strip()
        if not reviewer:
            filled = [c for c in JUDGEMENT_COLUMNS[1:] if row.get(c) not in (None, "")]
            if filled:  # scores nobody signed would be dropped without a word
                raise ReviewError(f"{where}: {', '.join(filled)} filled in but no reviewer; add the reviewer's name")
            continue
        name = task_name or str(row.get("task") or "")
        if not name:
            raise ReviewError(f"{where}: no task column; pass --task")
        if not name.isprintable() or len(name) > 200:  # a NUL reached PostgreSQL, whose message named no line
            raise ReviewError(f"{where}: task name {name[:40]!r} holds control characters or is over 200 characters")
        if name not in items_by_task:
            task = store.task(name)
            items_by_task[name] = {(i.case_id, i.text_hash): i for i in store.items(task.id)}
        key = (str(row.get("case_id") or ""), str(row.get("text_hash") or ""))
        item = items_by_task[name].get(key)
        if item is None:
            raise ReviewError(f"{where}: case {key[0]!r} with text hash {key[1]!r} is not in review task {name!r}")
        prefix = f"{where}: "
        scores = {"relevance": check_score("relevance", row.get("relevance"), where=prefix),
                  "label_score": check_score("label_score", row.get("label_score"), where=prefix),
                  "validity": check_score("validity", row.get("validity"), optional=True, where=prefix)}
        if item.kind == "expansion" and scores["validity"] is None:
            raise ReviewError(f"{where}: case {item.case_id!r} is an expansion and needs a validity score")
        if item.kind == "seed" and scores["validity"] is not None:  # it was dropped without a word
            raise ReviewError(f"{where}: case {item.case_id!r} is a seed, which has no validity score; leave "
                              "validity empty")
        if len(reviewer) > 100:
            raise ReviewError(f"{where}: reviewer name longer than 100 characters")
        if not reviewer.isprintable():
            raise ReviewError(f"{where}: reviewer name {reviewer[:40]!r} holds control characters")
        note = check_note(row.get("note") or "", prefix)
        first = seen.setdefault((item.id, reviewer_key(reviewer)), where)  # 'ann' and 'ANN' are one reviewer
        if first != where:  # the last would win silently, and the count would be off
            raise ReviewError(f"{where}: case {item.case_id!r} is judged by {reviewer!r} again (first at {first})")
        planned.append((item.id, reviewer, scores, note))
    return store.judge_many(planned)  # one transaction: a file is imported whole or not at all
