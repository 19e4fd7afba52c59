"""Hostile pass 11 (CLI) table (notes: attack_pass11_cli.md N1-N8, attack_pass11_pages.md P11-7/8/10): one row per
finding, each failing on the code before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fresh_engines")]

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "--task", "sentiment", "--models", "vader", "--lc", "lc4", "--max-seeds", "2", "--quiet"]


# N1: the "inside a saved artefact" guard knows only folders this program wrote ------------------------------------

@pytest.fixture(scope="module")
def seeds_file(tmp_path_factory) -> Path:
    from alict_core.cli import main

    root = tmp_path_factory.mktemp("p11seeds")
    assert main(["seeds", "--task", "sentiment", "--lc", "4", "--max", "3", "--out", str(root / "sd")]) == 0
    return root / "sd" / "sentiment-lc04.jsonl"


@pytest.mark.parametrize("marker", ["seeds", "export.json", "manifest.json"])
def test_n1_a_users_project_folder_does_not_block_outputs_beneath_it(cli, tmp_path, seeds_file, marker):
    """Was: a project folder holding one copied seeds file, another tool's export.json or any manifest.json made
    every output beneath it refused ("lies inside the saved artefact ... (seeds, written by `seeds`)"). Now only
    folders the program wrote count, and a seeds folder guards only what lies right in it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    if marker == "seeds":
        shutil.copy(seeds_file, proj / seeds_file.name)
    else:
        (proj / marker).write_text(json.dumps({"mine": 1}))
    out = proj / "runs" / "r1"
    outcome = cli(*RUN, "--out", str(out))
    assert outcome.code == 0, outcome.err
    assert (out / "meta.json").is_file()


def test_n1_a_seeds_folder_still_guards_what_lies_right_in_it(cli, seeds_file):
    """Pass 10's guard holds for a folder `seeds` wrote: an output folder right in it is refused."""
    outcome = cli("lego", "--task", "sentiment", "--lc", "4", "--out", str(seeds_file.parent / "inner"))
    assert_clean_error(outcome, 2, "lies inside the saved artefact", str(seeds_file.parent))
