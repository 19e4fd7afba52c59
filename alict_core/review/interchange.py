"""Export review tasks and import judgements as CSV or JSONL (for Label Studio, Argilla, spreadsheets ...).

Exported rows carry the item (``task``, ``item_id``, ``set_no``, ``case_id``, ``text_hash``, ``lc_id``,
``lc_title``, ``lc_description``, ``kind``, ``seed_text``, ``text``) and empty judgement columns
(``reviewer``, ``relevance``, ``label_score``, ``validity``, ``note``) to fill in — or, with
``judgements=True``, one row per saved judgement. Import reads the same columns back: a row is matched
to its item by ``case_id`` + ``text_hash`` within the task (``item_id`` is not needed); rows without a
reviewer are skipped. Every row is validated before anything is written, so a bad file changes nothing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from alict_core.jsonl import atomic_path
from alict_core.review.store import ReviewError, ReviewStore, check_score

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
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            if fmt == "csv":
                writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
                writer.writeheader()
                writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
            else:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


def _read_rows(path: Path, fmt: str) -> list[tuple[str, dict[str, Any]]]:
    if not path.is_file():
        raise ReviewError(f"judgements file {path} not found")
    rows = []
    with open(path, encoding="utf-8", newline="") as handle:
        if fmt == "csv":
            for n, row in enumerate(csv.DictReader(handle), start=2):
                rows.append((f"{path.name} line {n}", dict(row)))
        else:
            for n, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ReviewError(f"{path.name} line {n}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise ReviewError(f"{path.name} line {n}: expected a JSON object")
                rows.append((f"{path.name} line {n}", row))
    return rows


def import_judgements(store: ReviewStore, path: Path | str, fmt: str | None = None, *,
                      task_name: str | None = None) -> int:
    """Read judgements from CSV/JSONL into the store (upserts); return how many were saved."""
    path = Path(path)
    fmt = _format(path, fmt)
    items_by_task: dict[str, dict[tuple[str, str], Any]] = {}
    planned = []
    for where, row in _read_rows(path, fmt):
        reviewer = str(row.get("reviewer") or "").strip()
        if not reviewer:
            continue
        name = task_name or str(row.get("task") or "")
        if not name:
            raise ReviewError(f"{where}: no task column; pass --task")
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
        if len(reviewer) > 100:
            raise ReviewError(f"{where}: reviewer name longer than 100 characters")
        planned.append((item.id, reviewer, scores, str(row.get("note") or "")))
    for item_id, reviewer, scores, note in planned:
        store.judge(item_id, reviewer, note=note, **scores)
    return len(planned)
