"""``compare`` table: runs that cannot be paired, odd options and bad output paths end in one message (exit 2,
nothing written) or an honest note; never a silent "0 LCs differ" over tests that were never paired."""

from __future__ import annotations

from pathlib import Path

import pytest

from alict_core.runner import build_cases, run_suite
from tests.robustness.conftest import assert_clean_error
from tests.robustness.support import KeywordModel, small_cases


def _run(tmp_path: Path, name: str, lc: str = "sentiment-lc01", n: int = 4) -> Path:
    seeds = [{"id": f"{lc}-s{i}", "lc_id": lc, "text": f"a good film {i}", "test_type": "MFT",
              "expected": {"kind": "label", "labels": ["positive"]}, "capability": "Vocabulary"} for i in range(n)]
    return run_suite(build_cases(seeds), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / name)


@pytest.mark.parametrize("argv,needles", [
    (["{a}", "{other}"], ["share no LC", "sentiment-lc01", "sentiment-lc02"]),
    (["{a}", "--show", "-1"], ["--show", "out of range"]),
    (["{a}", "--show", "1e3"], ["--show"]),
    (["{a}", "--json", "{tmp}"], ["--json", "is a folder"]),
    (["{a}", "--json", "{a}/meta.json/x.json"], ["--json", "is a file (not a folder)"]),
    (["{tmp}/nope"], ["not found"]),
    (["{a}", "--json", "{a}/meta.json"], ["--json", "lies inside the"]),  # replaced the run's meta.json
    (["{a}", "{a}", "--json", "{a}/cases/c.json"], ["--json", "lies inside the"]),
], ids=["disjoint-lcs", "show-negative", "show-float", "json-folder", "json-under-a-file", "missing-run",
        "json-onto-the-run-meta", "json-into-the-run"])
def test_compare_refuses(cli, tmp_path, argv, needles):
    """``--show -1`` printed all cases but one (``head(-1)``); runs sharing no LC compared nothing, exit 0."""
    paths = {"a": _run(tmp_path, "a"), "other": _run(tmp_path, "other", "sentiment-lc02"), "tmp": tmp_path}
    meta = (paths["a"] / "meta.json").read_bytes()
    outcome = cli("compare", *[arg.format(**paths) for arg in argv])
    assert_clean_error(outcome, 2, *needles, limit_s=30)
    assert (paths["a"] / "meta.json").read_bytes() == meta


def test_compare_of_partly_different_lcs_says_so(cli, tmp_path):
    a = run_suite(small_cases(4), [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "a")
    b = run_suite(build_cases([*[{"id": f"s{i}", "lc_id": "sentiment-lc01", "text": c.text, "test_type": "MFT",
                                  "expected": {"kind": "label", "labels": ["positive"]}, "capability": "Vocabulary"}
                                 for i, c in enumerate(small_cases(4))],
                               {"id": "x", "lc_id": "sentiment-lc02", "text": "a film", "test_type": "MFT",
                                "expected": {"kind": "label", "labels": ["positive"]}, "capability": "Vocabulary"}]),
                  [KeywordModel()], cache_root=tmp_path / "p").save(tmp_path / "b")
    outcome = cli("compare", str(a), str(b))
    assert outcome.code == 0, outcome.err
    assert "different LCs (only in B: sentiment-lc02)" in outcome.out
