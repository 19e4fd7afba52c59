"""Standalone HTML reports for stakeholders (no JavaScript, inline SVG charts)."""

from alict_core.report.html import fail_rate_svg, render_reader_report, render_report, write_report

__all__ = ["fail_rate_svg", "render_reader_report", "render_report", "write_report"]
