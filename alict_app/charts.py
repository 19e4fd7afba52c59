"""Figures and HTML snippets: parse trees, fail-rate heatmaps and bars, token contributions."""

from __future__ import annotations

import html
from typing import Any, Sequence

from alict_app.formatting import plot_text
from alict_core.metrics.intervals import cluster_stats, clustered_interval, wilson_interval


def tree_layout(tree: Any) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Node positions of an nltk.Tree: leaves evenly spaced, parents centred over children."""
    nodes: list[dict[str, Any]] = []
    edges: list[tuple[int, int]] = []
    next_leaf = [0]

    def visit(node: Any, depth: int) -> int:
        index = len(nodes)
        if isinstance(node, str):
            nodes.append({"label": node, "x": float(next_leaf[0]), "y": -depth, "leaf": True})
            next_leaf[0] += 1
            return index
        nodes.append({"label": node.label(), "x": 0.0, "y": -depth, "leaf": False})
        children = [visit(child, depth + 1) for child in node]
        for child in children:
            edges.append((index, child))
        if children:
            nodes[index]["x"] = sum(nodes[c]["x"] for c in children) / len(children)
        return index

    visit(tree, 0)
    max_depth = max(-n["y"] for n in nodes)
    for n in nodes:  # put all words on the bottom row
        if n["leaf"]:
            n["y"] = -max_depth
    return nodes, edges


def parse_tree_figure(tree: Any, highlight: Sequence[str] = ()):
    """A plotly figure of a constituency tree (labels in boxes, words at the bottom)."""
    import plotly.graph_objects as go

    nodes, edges = tree_layout(tree)
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for parent, child in edges:
        edge_x += [nodes[parent]["x"], nodes[child]["x"], None]
        edge_y += [nodes[parent]["y"], nodes[child]["y"], None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line={"color": "#9aa4b8", "width": 1}, hoverinfo="skip"))
    colours = ["#2f7d32" if n["leaf"] else ("#d35400" if n["label"] in highlight else "#3558d4") for n in nodes]
    fig.add_trace(go.Scatter(
        x=[n["x"] for n in nodes], y=[n["y"] for n in nodes], mode="markers+text",
        text=[plot_text(n["label"]) for n in nodes], textposition="middle center",
        marker={"size": 30, "color": "white", "line": {"color": colours, "width": 1.5}},
        textfont={"color": colours, "size": 12}, hovertext=[plot_text(n["label"]) for n in nodes], hoverinfo="text",
    ))
    width = max(n["x"] for n in nodes) + 1
    fig.update_layout(
        showlegend=False, height=120 + 55 * (1 - min(n["y"] for n in nodes)),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"visible": False, "range": [-0.7, width - 0.3]}, yaxis={"visible": False},
        plot_bgcolor="white", meta={"kind": "parse-tree"},
    )
    return fig


def heatmap_figure(frame, row: str, col: str, value: str, title: str = ""):
    """A fail-rate heatmap (rows × columns) with the values printed in the cells."""
    import plotly.express as px

    pivot = frame.pivot_table(index=row, columns=col, values=value, aggfunc="mean")
    fig = px.imshow(
        pivot.values, x=[plot_text(c) for c in pivot.columns], y=[plot_text(r) for r in pivot.index],
        color_continuous_scale="Reds", zmin=0, zmax=1, text_auto=".0%", aspect="auto",
        labels={"color": value.replace("_", " ")},
    )
    fig.update_layout(title=plot_text(title), height=140 + 36 * len(pivot.index),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, meta={"kind": "heatmap"})
    return fig


def fail_rate_bars(frame, lc: str = "lc_id", model: str = "model", kind: str = "kind"):
    """Grouped bars of fail rate (seeds vs expansions) per LC and model, with 95% intervals.

    ``frame`` has one row per case with columns lc, model, kind and a boolean ``failed`` (and ``seed_id``).
    Seeds: Wilson intervals; expansions, when ``seed_id`` is given: the seed-clustered interval of the run
    summary (expansions repeat their seed's outcome, so each seed's expansions count as one cluster).
    """
    import plotly.express as px

    frame = frame.assign(**{c: frame[c].map(plot_text) for c in (lc, model, kind)})  # plotly draws its HTML
    grouped = frame.groupby([lc, model, kind])["failed"].agg(["sum", "count"]).reset_index()
    bounds = [wilson_interval(int(s), int(c)) for s, c in zip(grouped["sum"], grouped["count"], strict=True)]
    if "seed_id" in frame.columns:
        per_seed = frame.groupby([lc, model, kind, "seed_id"])["failed"].agg(["sum", "count"])
        for i, key in enumerate(zip(grouped[lc], grouped[model], grouped[kind], strict=True)):
            if key[2] != "seed":
                seeds = per_seed.loc[key]
                bounds[i] = clustered_interval(int(seeds["sum"].sum()), int(seeds["count"].sum()),
                                               **cluster_stats(seeds["sum"], seeds["count"]))
    grouped["fail_rate"] = grouped["sum"] / grouped["count"].clip(lower=1)
    grouped["err_plus"] = [hi - r for (_lo, hi), r in zip(bounds, grouped["fail_rate"], strict=True)]
    grouped["err_minus"] = [r - lo for (lo, _hi), r in zip(bounds, grouped["fail_rate"], strict=True)]
    fig = px.bar(
        grouped, x=lc, y="fail_rate", color=kind, barmode="group",
        facet_row=model if grouped[model].nunique() > 1 else None,
        error_y="err_plus", error_y_minus="err_minus", hover_data={"sum": True, "count": True},
        labels={"fail_rate": "fail rate", lc: "LC"}, range_y=[0, 1],
    )
    fig.update_layout(height=260 * max(1, grouped[model].nunique()), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      meta={"kind": "fail-bars"})
    return fig


def contributions_html(tokens: Sequence[str], scores: Sequence[float], kept: Sequence[bool] | None = None) -> str:
    """Tokens coloured by contribution (red pushes towards the predicted label, blue away)."""
    peak = max((abs(float(s)) for s in scores), default=0.0) or 1.0
    spans = []
    for i, (token, score) in enumerate(zip(tokens, scores, strict=True)):
        alpha = min(1.0, abs(float(score)) / peak)
        rgb = "214,39,40" if score >= 0 else "31,119,180"
        border = "border-bottom:2px solid #222;" if kept is not None and kept[i] else ""
        spans.append(
            f'<span title="{float(score):+.3f}" style="background:rgba({rgb},{alpha:.2f});padding:2px 3px;'
            f'margin:1px;border-radius:3px;{border}">{html.escape(str(token))}</span>'
        )
    return '<div class="alict-contrib" style="line-height:2.1">' + " ".join(spans) + "</div>"


def contributions_bar(tokens: Sequence[str], scores: Sequence[float]):
    import plotly.graph_objects as go

    labels = [f"{i}:{plot_text(t)}" for i, t in enumerate(tokens)]
    fig = go.Figure(go.Bar(x=list(scores), y=labels, orientation="h",
                           marker_color=["#d62728" if s >= 0 else "#1f77b4" for s in scores]))
    fig.update_layout(height=80 + 22 * len(tokens), margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      yaxis={"autorange": "reversed"}, meta={"kind": "contributions"})
    return fig


def fidelity_figure(curve: Sequence[float], p_thresh: float | None = None):
    """The masking template's fidelity curve: fidelity after unmasking 0, 1, 2, ... tokens."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=list(range(len(curve))), y=list(curve), mode="lines+markers", name="fidelity"))
    if p_thresh is not None:
        fig.add_hline(y=p_thresh, line_dash="dash", line_color="#d35400", annotation_text=f"p_thresh {p_thresh:g}")
    fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 10, "b": 10}, yaxis={"range": [0, 1.02]},
                      xaxis_title="tokens unmasked (most important first)", yaxis_title="fidelity",
                      meta={"kind": "fidelity"})
    return fig


def lc_heatmap(rates, title: str = "Fail rate per linguistic capability × model"):
    """Fail-rate heatmap with capability-first row labels (``lc_label``) and the LC id on hover.

    ``rates``: rows of ``alict_core.analysis.explore.lc_model_rates`` (lc_id, lc_label, model, fail_rate, n_cases, ...).
    """
    import plotly.graph_objects as go

    lcs = list(dict.fromkeys(rates["lc_id"]))
    models = list(dict.fromkeys(rates["model"]))
    labels = dict(zip(rates["lc_id"], rates["lc_label"], strict=True))
    cell = {(r.lc_id, r.model): r for r in rates.itertuples(index=False)}
    z = [[float(cell[(lc, m)].fail_rate) if (lc, m) in cell else None for m in models] for lc in lcs]
    hover = [[(f"{plot_text(labels[lc])}<br>id: {plot_text(lc)}<br>model: {plot_text(m)}<br>"
               f"fail rate {cell[(lc, m)].fail_rate:.0%} "
               f"({int(cell[(lc, m)].n_fail)} of {int(cell[(lc, m)].n_cases)})") if (lc, m) in cell else ""
              for m in models] for lc in lcs]
    text = [[f"{v:.0%}" if v is not None else "" for v in row] for row in z]
    short = [plot_text(_short(labels[lc], 90)) for lc in lcs]
    fig = go.Figure(go.Heatmap(z=z, x=[plot_text(m) for m in models], y=short, text=text, texttemplate="%{text}",
                               hovertext=hover, hoverinfo="text", colorscale="Reds", zmin=0, zmax=1,
                               colorbar={"title": {"text": "fail rate"}, "tickformat": ".0%"}))
    fig.update_layout(title=plot_text(title), height=140 + 30 * len(lcs), margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      yaxis={"autorange": "reversed", "automargin": True}, meta={"kind": "heatmap", "lc_ids": lcs})
    return fig


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def group_rate_bars(rates, by: str, limit: int = 25):
    """Horizontal bars of the fail rate per group (inserted word, template, ...) with 95 % intervals."""
    import plotly.graph_objects as go

    top = rates.head(limit)
    fig = go.Figure(go.Bar(
        x=top["fail_rate"], y=[plot_text(_short(str(v), 50)) for v in top[by]], orientation="h", marker_color="#d62728",
        error_x={"type": "data", "symmetric": False, "array": top["ci_high"] - top["fail_rate"],
                 "arrayminus": top["fail_rate"] - top["ci_low"]},
        customdata=top[["n_fail", "n_cases"]].to_numpy(),
        hovertemplate="%{y}: %{x:.0%} (%{customdata[0]} of %{customdata[1]})<extra></extra>",
    ))
    fig.update_layout(height=80 + 24 * len(top), margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"range": [0, 1], "tickformat": ".0%", "title": "fail rate"},
                      yaxis={"autorange": "reversed", "automargin": True}, meta={"kind": "group-rates", "by": by})
    return fig


def comparison_figure(lcs, label_a: str, label_b: str):
    """Per LC, the change in fail rate from A to B with its 95 % interval: red = fails more in B, green = less.

    ``lcs``: ``alict_core.analysis.compare.Comparison.lcs``. Grey points are differences that are not significant
    (Benjamini–Hochberg q ≥ 0.05 of the paired, seed-clustered test).
    """
    import plotly.graph_objects as go

    ordered = lcs.sort_values(["capability", "lc_id"])
    colour = ["#d62728" if s and d > 0 else "#2ca02c" if s and d < 0 else "#7f7f7f"
              for s, d in zip(ordered["significance"], ordered["difference"], strict=True)]
    names = [plot_text(_short(f"{c} · {t}", 60) + (f" {s}" if s else ""))
             for c, t, s in zip(ordered["capability"], ordered["lc_title"], ordered["significance"], strict=True)]
    shown_a, shown_b = plot_text(label_a), plot_text(label_b)
    hover = [f"{plot_text(t)} ({plot_text(lc)})<br>{shown_a}: {a:.0%} · {shown_b}: {b:.0%}<br>"
             f"change {d:+.0%} (95% CI {lo:+.0%} to {hi:+.0%}), p = {p:.3g}, BH q = {q:.3g}"
             for t, lc, a, b, d, lo, hi, p, q in zip(
                 ordered["lc_title"], ordered["lc_id"], ordered["rate_a"], ordered["rate_b"], ordered["difference"],
                 ordered["diff_low"], ordered["diff_high"], ordered["p_value"], ordered["p_bh"], strict=True)]
    fig = go.Figure(go.Scatter(
        x=ordered["difference"], y=names, mode="markers", marker={"size": 11, "color": colour},
        error_x={"type": "data", "symmetric": False, "array": ordered["diff_high"] - ordered["difference"],
                 "arrayminus": ordered["difference"] - ordered["diff_low"], "color": "#999"},
        hovertext=hover, hoverinfo="text",
    ))
    fig.add_vline(x=0, line_color="#444", line_width=1)
    fig.update_layout(height=120 + 30 * len(ordered), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      xaxis={"tickformat": "+.0%", "title": f"change in fail rate, {shown_b} vs {shown_a}",
                             "range": [-1.05, 1.05]},
                      yaxis={"autorange": "reversed", "automargin": True}, meta={"kind": "comparison"},
                      title=f"Right of the line: {shown_b} fails more often than {shown_a}")
    return fig
