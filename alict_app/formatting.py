"""Plain presentation helpers shared by pages: task titles and core records as table rows."""

from __future__ import annotations

import dataclasses
import html
import os
import re
from pathlib import Path
from typing import Any, Iterable

from alict_core.common.textsafe import printable
from alict_core.tasks import TASKS as TASK_REGISTRY

TASK_TITLES = {name: task.title for name, task in TASK_REGISTRY.items()}
TASKS = tuple(TASK_TITLES)
MARKDOWN_SIGNS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=^&])")


# GitHub-flavoured Markdown (the browser's remark-gfm) turns bare ``https://…``, ``www.…`` and ``a@b.c`` into links
# after the escapes are read; a word joiner (U+2060, invisible, no width) after the scheme, ``www`` or an ``@`` that
# a dot follows before the next space (an e-mail-like ``local@domain.tld``) keeps them text. An ``@`` without such a
# dot (a version name ``minilm-sst@868ff8ab``) is never a link and is left alone, so the name copies as it is.
AUTOLINK_STARTS = re.compile(r"(?i)https?(?=\\:)|www(?=\\\.)|@(?=\S*?(?:\\\.|[．。｡]))")
WORD_JOINER = "\u2060"


def literal(text: Any) -> str:
    """``text`` escaped for ``st.markdown`` / ``st.caption`` / progress text, which render Markdown: shown as it is,
    never as a link, image, heading, colour or formula (a case text or a ``?reviewer=`` from a shared link such as
    ``[Sign in again](https://evil.example)`` was drawn as a link in the app's own page), nor a bare URL or e-mail
    address made a link by the browser's autolinking; a control or bidi character (a terminal escape, U+202E from a
    link or a progress note) written as an escape."""
    escaped = MARKDOWN_SIGNS.sub(r"\\\1", printable(" ".join(str(text).split())))
    return AUTOLINK_STARTS.sub(lambda found: found.group(0) + WORD_JOINER, escaped)


def without_server_paths(text: str) -> str:
    """``text`` with the server's own folders named by role (``<workspace>/specs/sentiment/x.yaml``, ``<cache>/…``):
    an error message shown in the browser never tells where the server keeps its files."""
    from alict_core.common import config

    roots: dict[str, str] = {}
    for label, root in (("<workspace>", config.workspace_dir), ("<cache>", config.cache_dir),
                        ("<data>", config.data_dir), ("<app>", lambda: config.REPO_ROOT), ("~", Path.home)):
        try:
            folder = Path(root()).expanduser()
            for form in (str(folder.resolve()), os.path.abspath(folder)):
                if len(form) > 1:
                    roots.setdefault(form, label)
        except Exception:  # noqa: BLE001 - a setting that cannot be read names no root here (it is said elsewhere)
            continue
    try:  # the folders the operator lets the browser read (ALICT_WORKSPACE_ROOTS, ALICT_MODEL_ROOTS, pickle folders):
        # a link under one resolves into another, and a message named the resolved target the user never typed
        from alict_core.common.trust import operator_folders

        for label, folders in operator_folders().items():
            for folder in folders:
                if len(str(folder)) > 1:
                    roots.setdefault(str(folder), label)
    except Exception:  # noqa: BLE001 - a setting that cannot be read names nothing here (it is said elsewhere)
        pass
    try:  # the operator's review database: its URL (user, host, port) and file are the server's own
        from alict_core.review.store import default_url, safe_url, sqlite_path

        url = default_url()
        for form in (safe_url(url), safe_url(url).strip("'"), url, str(sqlite_path(url) or "")):
            if len(form) > 1:
                roots.setdefault(form, "<review database>")
        from sqlalchemy.engine import make_url

        host = make_url(url).host or ""
        if len(host) > 3:  # a driver's own message names the server ("connection to server at db.internal")
            roots.setdefault(host, "<review database host>")
    except Exception:  # noqa: BLE001 - a setting that cannot be read names nothing here (it is said elsewhere)
        pass
    for found in sorted(roots, key=len, reverse=True):
        text = text.replace(found, roots[found])
    return text


def plot_text(text: Any) -> str:
    """``text`` escaped for plotly, which draws a pseudo-HTML subset (``<a href>``, ``<b>``, ``<span style>``,
    ``<br>``) in tick labels, hover text, titles and annotations: a spec title or model name such as
    ``<a href="https://evil.example">Sign in</a>`` is shown as it is, never as a live link or styled text."""
    return html.escape(str(text), quote=False)


def code(text: Any) -> str:
    """``text`` as inline code in Markdown: shown verbatim (a code span renders no link, image, colour or
    formula); a back-tick, which would end the span, is shown as ``'``, and line breaks as spaces."""
    return "`" + " ".join(str(text).split()).replace("`", "'") + "`"


def as_row(obj: Any) -> dict[str, Any]:
    """A plain dict of a core record (``to_dict()``, pydantic model, dataclass or mapping)."""
    if isinstance(obj, dict):
        return obj
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return dict(vars(obj))


def as_rows(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Plain dicts of core records (e.g. an ExpansionSet's expansions)."""
    return [as_row(item) for item in items]


def failure_card(row: Any, title: str, capability: str) -> str:
    """One failing case as Markdown (text, LC, expected and predicted label, confidence; pass-to-fail marked),
    every value from the run drawn as text (``literal``)."""
    flag = " · 🔁 pass-to-fail" if row.get("pass_to_fail") else ""
    confidence = row.get("confidence")
    shown = f"{confidence:.0%}" if isinstance(confidence, (int, float)) and confidence == confidence else "?"
    expected, predicted = literal(row.get("expected", "?")), literal(row.get("predicted", "?"))
    return (f"> {literal(row['text'])}\n\n**{literal(title)}** ({literal(capability)}) — expected "
            f"*{expected}*, predicted **{predicted}** ({shown}){flag}")
