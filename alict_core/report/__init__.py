"""Standalone HTML reports for stakeholders (no JavaScript, inline SVG charts)."""

from alict_core.report.html import fail_rate_svg, render_report, write_report

__all__ = ["fail_rate_svg", "render_report", "write_report"]
