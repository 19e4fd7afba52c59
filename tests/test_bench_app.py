"""``benchmarks/bench_app.py`` in a real browser: one trial on one page prints every figure beside the empty page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_browser import CHROMIUM

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow_full  # a benchmark (its own server and browser, ~35 s): make test-full; pages are tested elsewhere
def test_browser_benchmark_prints_figures_beside_the_empty_page():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: apt-get install -y chromium chromium-driver")
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    done = subprocess.run([sys.executable, "benchmarks/bench_app.py", "--repeats", "1", "--pages", "failures"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    figure = r"\s+(\d+\.\d\d) s\s+empty page\s+(\d+\.\d\d) s\s+ratio\s+(\d+\.\d)"
    for label in ("/", "/failures", "Failures"):
        match = re.search(rf"^\s+{re.escape(label)}{figure}", out, re.M)
        assert match, f"no line for {label!r} in:\n{out}"
        app, empty, ratio = map(float, match.groups())
        assert app > 0 and empty > 0 and abs(ratio - app / empty) <= 0.051 + 0.01 * app / empty
    assert "medians of 1" in out
    assert re.search(r"^/proc/loadavg at the start: \d", out, re.M) and re.search(r"^/proc/loadavg at the end", out,
                                                                                    re.M)
    assert re.search(r"^\s+Failures\s+\d+\.\d\d s$", out, re.M), "the page's first open in the server"
    assert re.search(r"^\s+Failures, first \(cold\)\s+\d+\.\d\d s$", out, re.M), "the first task switch"
    assert not re.search(r"^\s+(Specs|Run|Report)\s", out, re.M), "only the page asked for is timed"
    rss = re.search(r"app server RSS after Specs, failures on both tasks: (\d+) MB", out)
    assert rss and int(rss.group(1)) > 100, out  # a Streamlit server with pandas loaded is well above 100 MB


def test_benchmark_refuses_an_unknown_page():
    done = subprocess.run([sys.executable, "benchmarks/bench_app.py", "--pages", "nowhere"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--pages takes names of specs" in done.stderr
