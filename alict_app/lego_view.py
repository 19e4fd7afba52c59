"""Drawing helpers of the "Adjunct trees" page: the derivation tree (plotly) and the per-node verdict table."""

from __future__ import annotations

import html
from typing import Any, Mapping, Sequence

import pandas as pd

from alict_core.lego.assemble import DerivationTree, Node

VERDICT_COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "no test": "#9e9e9e", "root": "#1565c0"}


def highlighted(node: Node, bold: str = "<b>{}</b>") -> str:
    """The node's text with its inserted adjunct wrapped in ``bold`` (HTML-escaped otherwise)."""
    text, part = node.text, node.inserted_text
    start = text.find(part) if part else -1
    if start < 0:
        start = text.lower().find(part.lower()) if part else -1
    if start < 0:
        return html.escape(text)
    end = start + len(part)
    return html.escape(text[:start]) + bold.format(html.escape(text[start:end])) + html.escape(text[end:])


def layout(tree: DerivationTree) -> dict[str, tuple[float, float]]:
    """(x, y) per node id: leaves spread left to right in depth-first order, parents centred over children."""
    children: dict[str, list[str]] = {n.id: [] for n in tree.nodes}
    for node in tree.nodes[1:]:
        if node.parent is not None:
            children[node.parent].append(node.id)
    levels = {n.id: n.level for n in tree.nodes}
    position: dict[str, tuple[float, float]] = {}
    next_leaf = [0.0]

    def place(node_id: str) -> float:
        kids = children[node_id]
        if not kids:
            x = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            xs = [place(k) for k in kids]
            x = sum(xs) / len(xs)
        position[node_id] = (x, -float(levels[node_id]))
        return x

    place(tree.root.id)
    return position


def tree_figure(tree: DerivationTree, verdicts: Mapping[str, str] | None = None) -> Any:
    """Plotly figure: one marker per node coloured by its verdict, hover = text with the adjunct in bold."""
    import plotly.graph_objects as go

    verdicts = verdicts or {}
    pos = layout(tree)
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for parent, child in tree.edges():
        edge_x += [pos[parent.id][0], pos[child.id][0], None]
        edge_y += [pos[parent.id][1], pos[child.id][1], None]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=edge_x, y=edge_y, mode="lines", line={"color": "#bdbdbd", "width": 1}, hoverinfo="skip", showlegend=False
        )
    )
    for verdict, colour in VERDICT_COLOURS.items():
        nodes = [
            n for n in tree.nodes if (verdicts.get(n.id) or ("root" if n.parent is None else "no test")) == verdict
        ]
        if not nodes:
            continue
        fig.add_trace(
            go.Scatter(
                x=[pos[n.id][0] for n in nodes],
                y=[pos[n.id][1] for n in nodes],
                mode="markers+text",
                name=verdict,
                marker={
                    "size": 16,
                    "color": colour,
                    "symbol": ["diamond" if n.original else "circle" for n in nodes],
                    "line": {"width": 1, "color": "white"},
                },
                text=[_short(n) for n in nodes],
                textposition="bottom center",
                textfont={"size": 10},
                hovertext=[f"level {n.level} · {html.escape(str(n.mutation.kind))}<br>{highlighted(n)}" for n in nodes],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        height=180 + 110 * (max(n.level for n in tree.nodes) + 1),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False},
        legend={"orientation": "h"},
        plot_bgcolor="white",
    )
    return fig


def _short(node: Node) -> str:
    """The node's label in the tree: its inserted adjunct, escaped for plotly's pseudo-HTML."""
    if node.parent is None:
        return "template"
    part = node.inserted_text if len(node.inserted_text) <= 24 else node.inserted_text[:22] + "…"
    return f"+ {html.escape(part, quote=False)}"


def node_frame(tree: DerivationTree, cases: Sequence[Any], outcomes: Sequence[Any] = ()) -> pd.DataFrame:
    """One row per node: level, text with the adjunct in **bold**, mutation, the DIR test and each model's verdict."""
    case_of = {c.case_id: (i, c) for i, c in enumerate(cases)}
    rows = []
    for node in tree.nodes:
        found = case_of.get(node.id)
        row: dict[str, Any] = {
            "node": node.id.rsplit("-", 1)[-1],
            "level": node.level,
            "text": node.text,
            "inserted": node.inserted_text,
            "mutation": node.mutation.kind if node.parent else "template",
            "replaced": f"{node.mutation.source} → {node.mutation.word}" if node.mutation.kind != "original" else "",
            "test": "" if found is None else found[1].description,
        }
        for outcome in outcomes:
            row[outcome.name] = "—" if found is None else ("✔" if bool(outcome.passed[found[0]]) else "✘")
        rows.append(row)
    return pd.DataFrame(rows)


def verdicts_for(tree: DerivationTree, cases: Sequence[Any], outcome: Any | None) -> dict[str, str]:
    """Node id → pass / fail / no test for one model's outcome (no model: every tested node "no test")."""
    out: dict[str, str] = {}
    for i, case in enumerate(cases):
        if outcome is not None and case.meta.get("tree") == tree.seed_id:
            out[case.case_id] = "pass" if bool(outcome.passed[i]) else "fail"
    return out
