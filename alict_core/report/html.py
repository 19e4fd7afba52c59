"""Standalone HTML report of a run: per-LC table, inline-SVG fail-rate chart, example failures."""

from __future__ import annotations

import html
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Collection

import pandas as pd

from alict_core.common.jsonl import atomic_path
from alict_core.lcspec.capabilities import group_order, lc_catalog
from alict_core.runner.summary import unparsed_answers

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em;color:#222;max-width:1200px}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.88em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bad{background:#fde2e1}.meta{color:#666;font-size:.9em}.ex{font-family:ui-monospace,monospace;font-size:.85em}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _pct(value: Any) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return "–" if math.isnan(v) else f"{100 * v:.1f}%"


def fail_rate_svg(summary: pd.DataFrame, column: str = "fail_rate", width: int = 900,
                  labels: dict[str, str] | None = None) -> str:
    """Horizontal grouped bars: one group per LC, one bar per model (fail rate in %).

    ``labels``: LC id -> the text shown beside its bars (capability and title); the id shows on hover.
    """
    if summary.empty:
        return "<p>No results.</p>"
    lcs = list(dict.fromkeys(summary.lc_id))
    labels = labels or {}
    models = list(dict.fromkeys(summary.model))
    bar, gap, left, right = 14, 10, (380 if labels else 260), 70
    height = len(lcs) * (len(models) * bar + gap) + 40
    plot_w = width - left - right
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="fail rate per LC and model" font-family="sans-serif" font-size="11">']
    for tick in range(0, 101, 25):
        x = left + plot_w * tick / 100
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 15}" stroke="#eee"/>'
                     f'<text x="{x:.1f}" y="14" text-anchor="middle" fill="#666">{tick}%</text>')
    index = summary.set_index(["lc_id", "model"])
    y = 24
    for lc in lcs:
        shown = labels.get(lc, lc)
        shown = shown if len(shown) <= 62 else shown[:61] + "…"
        parts.append(f'<text x="{left - 6}" y="{y + len(models) * bar / 2 + 4:.1f}" text-anchor="end">'
                     f'<title>{_e(lc)}</title>{_e(shown)}</text>')
        for m, model in enumerate(models):
            if (lc, model) in index.index:
                rate = float(index.loc[(lc, model), column])
                if not math.isnan(rate):
                    w = plot_w * rate
                    colour = PALETTE[m % len(PALETTE)]
                    parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{colour}">'
                                 f'<title>{_e(labels.get(lc, lc))} ({_e(lc)}) · {_e(model)}: {_pct(rate)}'
                                 '</title></rect>'
                                 f'<text x="{left + w + 4:.1f}" y="{y + bar - 4}" fill="#333">{_pct(rate)}</text>')
            y += bar
        y += gap
    legend_x = left
    for m, model in enumerate(models):
        colour = PALETTE[m % len(PALETTE)]
        parts.append(f'<rect x="{legend_x}" y="{height - 12}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{legend_x + 14}" y="{height - 3}">{_e(model)}</text>')
        legend_x += 20 + 7 * len(model)
    parts.append("</svg>")
    return "".join(parts)


def _table(frame: pd.DataFrame, pct_cols: Collection[str] = frozenset(), bad_col: str | None = None,
           threshold: float = 0.5) -> str:
    if frame.empty:
        return "<p>None.</p>"
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = []
    for _, row in frame.iterrows():
        cells = []
        for c in frame.columns:
            v = row[c]
            if c in pct_cols:
                cells.append(f'<td class="num">{_pct(v)}</td>')
            elif v is None or (isinstance(v, float) and v != v):  # missing value (None / NaN): empty cell
                cells.append("<td></td>")
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                cells.append(f'<td class="num">{_e(round(v, 4) if isinstance(v, float) else v)}</td>')
            else:
                monospace = c in ("text", "seed_text", "failing_variant")
                cells.append(f'<td class="ex">{_e(v)}</td>' if monospace else f"<td>{_e(v)}</td>")
        bad = bad_col is not None and isinstance(row.get(bad_col), float) and row[bad_col] > threshold
        rows.append(f'<tr{" class=bad" if bad else ""}>' + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


PCT = {"fail_rate_seeds", "ci_low", "ci_high", "fail_rate_expansions", "ci_low_expansions", "ci_high_expansions",
       "fail_rate", "ci_low_all", "ci_high_all"}
SUMMARY_SHOWN = ["capability", "title", "lc_id", "test_type", "model", "n_seeds", "n_fail_seeds", "fail_rate_seeds",
                 "ci_low", "ci_high", "n_expansions", "n_fail_expansions", "fail_rate_expansions", "ci_low_expansions",
                 "ci_high_expansions", "n_pass_to_fail", "fail_rate", "ci_low_all", "ci_high_all", "design_effect"]
INTRO = ("<p>A test case <b>fails</b> when the model's prediction violates the LC's expected outcome (MFT), changes "
         "under identity/pronoun swaps beyond the tolerance (INV), or moves the wrong way (DIR). Seeds come from the "
         "labelled corpus; expansions are syntax-based variants of the seeds. "
         "Intervals are 95 %: ci_low/ci_high are Wilson intervals of the seed fail rate; the expansion and "
         "all-case intervals count each seed with its expansions as one cluster (expansions share their seed's "
         "outcome): Wilson on the design-effect-adjusted sample size, design_effect being the adjustment.</p>")


def _capability_first(summary: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The summary ordered by capability group with each LC's title; LC id -> capability-first label."""
    if summary.empty:
        return summary, {}
    catalog = lc_catalog(summary["lc_id"], dict(zip(summary["lc_id"], summary["capability"], strict=True)))
    summary = summary.assign(capability=summary["lc_id"].map(lambda lc: catalog[lc].capability),
                             title=summary["lc_id"].map(lambda lc: catalog[lc].title))
    order = {g: i for i, g in enumerate(group_order(summary["capability"]))}
    summary = summary.sort_values("capability", key=lambda s: s.map(order), kind="stable")
    return summary, {lc: info.label for lc, info in catalog.items()}


def _summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[[c for c in SUMMARY_SHOWN if c in summary.columns]] if not summary.empty else summary


def render_reader_report(reader: Any, title: str = "ALiCT linguistic-capability test report",
                         examples_per_lc: int = 3) -> str:
    """The report of a large or sharded run (``alict_core.runner.reader.RunReader``), bounded in size.

    The summary comes from the run's aggregates; failures and pass-to-fail pairs are a sample of at most
    ``examples_per_lc`` per LC × model, read shard by shard (never the whole run).
    """
    from alict_core.runner.reader import RowFilter

    summary, labels = _capability_first(reader.summary())
    meta = reader.meta
    n_rows = int(summary["n_cases"].sum()) if "n_cases" in summary else 0
    state = "" if reader.done else " · <b>partial: the run is not finished</b>"
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
           f"<style>{CSS}</style></head><body>", f"<h1>{_e(title)}</h1>",
           f'<p class=meta>run {_e(meta.get("run_id", reader.folder.name))} · {n_rows} case × model rows · '
           f'models: {_e(", ".join(reader.models()))} · '
           f'generated {datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}{state}</p>', INTRO,
           "<h2>Fail rate per linguistic capability</h2>", fail_rate_svg(summary, labels=labels),
           "<h2>Per-LC results</h2>", _table(_summary_table(summary), PCT, bad_col="fail_rate")]
    out += validity_section((meta.get("extra") or {}).get("validity"))
    out += suite_section(meta.get("extra") or {})
    out += unparsed_section(meta.get("extra") or {})
    out.append(f"<h2>Example failures (up to {examples_per_lc} per LC × model)</h2>")
    fails = reader.sample_failures(per_group=examples_per_lc)
    if fails.empty:
        out.append("<p>No failures.</p>")
    else:
        fails = fails.assign(LC=fails.lc_id.map(lambda lc: labels.get(lc, lc)))
        out.append(_table(fails[["LC", "lc_id", "model", "kind", "text", "expected", "predicted", "confidence"]],
                          {"confidence"}))
    out.append("<h2>Pass-to-fail pairs (seed passes, its expansion fails), a sample</h2>")
    pairs = reader.page(RowFilter(pass_to_fail=True), 0, 50 * examples_per_lc)
    if not pairs.empty:
        pairs = pairs.groupby(["lc_id", "model"], sort=False).head(examples_per_lc)
        pairs = pairs.assign(LC=pairs.lc_id.map(lambda lc: labels.get(lc, lc)))[
            ["LC", "lc_id", "model", "seed_text", "text", "predicted", "expected"]]
    out.append(_table(pairs))
    out.append("</body></html>")
    return "\n".join(out)


def render_report(result, title: str = "ALiCT linguistic-capability test report", metrics: pd.DataFrame | None = None,
                  accuracies: dict | None = None, examples_per_lc: int = 3) -> str:
    """The whole report as one self-contained HTML string (no scripts, no external files)."""
    summary, labels = _capability_first(result.summary())
    cases = result.cases()
    table = _summary_table(summary)
    from alict_core.review.report import with_review  # human-reviewed validity beside each fail rate

    table, review_note = with_review(result, table)
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
           f"<style>{CSS}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           f'<p class=meta>run {_e(result.run_id)} · {len(result.case_list)} cases · '
           f'models: {_e(", ".join(result.models))} · '
           f'generated {datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}</p>',
           INTRO,
           "<h2>Fail rate per linguistic capability</h2>", fail_rate_svg(summary, labels=labels),
           "<h2>Per-LC results</h2>", _table(table, PCT, bad_col="fail_rate"), review_note]
    out += validity_section(result.extra.get("validity"))
    out += suite_section(result.extra)
    out += unparsed_section(result.extra)
    if accuracies:
        acc = pd.DataFrame([{"model": k, "task": v.get("task"), "test accuracy": (v.get("test") or {}).get("accuracy"),
                             "test macro-F1": (v.get("test") or {}).get("macro_f1")} for k, v in accuracies.items()])
        out += ["<h2>Model accuracy on the held-out test split</h2>", _table(acc, {"test accuracy", "test macro-F1"})]
    if metrics is not None and not metrics.empty:
        out += ["<h2>Diversity (Self-BLEU lower = more diverse; distinct phrasal productions)</h2>", _table(metrics)]
    out.append("<h2>Example failures</h2>")
    if cases.empty or cases.passed.all():
        out.append("<p>No failures.</p>")
    else:
        fails = cases[~cases.passed]
        picked = fails.groupby(["lc_id", "model"], sort=False).head(examples_per_lc)
        picked = picked.assign(LC=picked.lc_id.map(lambda lc: labels.get(lc, lc)),
                               probabilities=picked.probabilities.map(
                                   lambda d: ", ".join(f"{k}={v:.2f}" for k, v in d.items())))
        out.append(_table(picked[["LC", "lc_id", "model", "kind", "text", "expected", "predicted", "probabilities",
                                  "failing_variant"]]))
    p2f = result.pass_to_fail()
    out.append("<h2>Pass-to-fail pairs (seed passes, its expansion fails)</h2>")
    if not p2f.empty:
        p2f = p2f.assign(LC=p2f.lc_id.map(lambda lc: labels.get(lc, lc))).groupby(["lc_id", "model"], sort=False).head(
            examples_per_lc)[["LC", "lc_id", "model", "seed_text", "seed_predicted", "text", "predicted", "expected"]]
    out.append(_table(p2f))
    out.append("</body></html>")
    return "\n".join(out)


def validity_section(validity: dict | None) -> list[str]:
    """How many cases the validity checks flagged, per LC and reason, and whether they were excluded."""
    if not validity:
        return []
    counts = validity.get("excluded") if isinstance(validity, dict) else None
    if not isinstance(counts, dict) or not all(
            isinstance(reasons, dict) and all(isinstance(n, int) for n in reasons.values()) for reasons in
            counts.values()):  # a hand-edited meta.json (re-hashed into its manifest): said, not an AttributeError
        return ["<h2>Validity checks</h2>", "<p>The run's validity record is unreadable (edited by hand?).</p>"]
    verb = "kept in the run (--keep-flagged)" if validity.get("kept_flagged") else "excluded from the run"
    rows = pd.DataFrame([{"lc_id": lc, "reason": reason, "cases": n} for lc, reasons in counts.items()
                         for reason, n in reasons.items()], columns=["lc_id", "reason", "cases"])
    text = (f"<p>{int(validity.get('n_flagged', 0))} generated cases were flagged by the validity checks and "
            f"{verb}.</p>")
    return ["<h2>Validity checks</h2>", text] + ([_table(rows)] if len(rows) else [])


def unparsed_section(extra: dict) -> list[str]:
    """Models whose answers could not be parsed: those cases were scored by the fallback label, not by the model (an
    LLM that refused every case passed a neutral LC without a word in the report, pass 37)."""
    unparsed = unparsed_answers(extra)
    if not unparsed:
        return []
    lines = "".join(f"<li>{_e(name)}: {_e(count)} answer(s)</li>" for name, count in unparsed.items())
    return ["<h2>Answers that could not be parsed</h2>",
            "<p><b>These cases were scored as the model's fallback label, not by an answer of the model: their "
            f"passes and failures say nothing about it.</b></p><ul>{lines}</ul>"]


def suite_section(extra: dict) -> list[str]:
    """Imported suites: how they were scored (INV threshold, subsampling) and every test that was skipped."""
    imported, skipped = extra.get("suite_import") or {}, extra.get("skipped_tests") or []
    if not imported and not skipped:
        return []
    out = ["<h2>Imported suites</h2>"]
    if imported:
        text = (f"<p>{_e(', '.join(imported.get('files') or []))}: INV tests scored as CheckList scores them — a "
                "variant whose predicted label changed still passes when its probability of the original label "
                f"stays within {_e(imported.get('inv_threshold'))} of the original's")
        if imported.get("max_items_per_test"):
            text += (f"; at most {_e(imported['max_items_per_test'])} items per test, {_e(imported.get('sampling'))} "
                     f"(seed {_e(imported.get('sample_seed'))})")
        out.append(text + ".</p>")
    if skipped:
        out.append(f"<p>{len(skipped)} test(s) could not be imported and were skipped (not run):</p>")
        out.append(_table(pd.DataFrame(skipped, columns=["suite", "test", "reason", "items"])))
    return out


def write_report(result, path: Path | str, **kwargs: Any) -> Path:
    """Render and write the report atomically; return the path."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(render_report(result, **kwargs), encoding="utf-8")
    return path
