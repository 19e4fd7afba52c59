"""Packaging: pyproject declares requirements.txt's dependencies, the console command and the specs as data."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_TOOLS = ("pytest", "pytest-timeout", "hypothesis", "playwright", "jsonschema", "junitparser", "xmlschema", "ruff",
              "mypy", "psycopg")
APP_ONLY = ("streamlit", "plotly")  # the `app` extra: the library and the CLI run without them


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def requirement_name(line: str) -> str:
    return re.split(r"[<>=!~\[; ]", line.strip(), maxsplit=1)[0].lower()


def test_pyproject_declares_the_pinned_requirements():
    """requirements.txt installs everything: the library's dependencies, the `app` extra and the `test` extra."""
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    app = sorted(line for line in lines if requirement_name(line) in APP_ONLY)
    test = sorted(line for line in lines if requirement_name(line) in TEST_TOOLS)
    runtime = sorted(set(lines) - set(app) - set(test))
    declared = project()["project"]
    assert sorted(declared["dependencies"]) == runtime
    assert sorted(declared["optional-dependencies"]["app"]) == app and len(app) == len(APP_ONLY)
    assert sorted(declared["optional-dependencies"]["test"]) == test
    assert "torch==2.13.0" in declared["dependencies"]


def test_console_command_and_package_data():
    config = project()
    assert config["project"]["scripts"] == {"alict": "alict_core.cli:main"}
    assert config["tool"]["setuptools"]["package-dir"] == {"alict_core.builtin_specs": "specs"}
    globs = config["tool"]["setuptools"]["package-data"]["alict_core.builtin_specs"]
    shipped = {p for pattern in globs for p in (ROOT / "specs").glob(pattern)}
    specs = set((ROOT / "specs").glob("*/*.yaml"))
    assert len(specs) == 26 and specs <= shipped  # the 25 paper LCs and one extension


def test_every_package_is_listed_for_the_wheel():
    """The package list is written out (the specs are mapped in from the top-level specs/): a new package joins it."""
    from setuptools import find_packages

    found = set(find_packages(str(ROOT), include=["alict_core*", "alict_app*"]))
    assert set(project()["tool"]["setuptools"]["packages"]) == found | {"alict_core.builtin_specs"}


@pytest.mark.slow
@pytest.mark.no_models  # builds a wheel: runs beside the quick build
def test_the_wheel_holds_the_specs_and_the_command(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "tests"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(source),
                    "-w", str(tmp_path / "dist")], check=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("alict_studio-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    shipped_specs = [n for n in names if n.startswith("alict_core/builtin_specs/") and n.endswith(".yaml")]
    assert len(shipped_specs) == 26  # 25 + 1 extension
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "alict = alict_core.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
