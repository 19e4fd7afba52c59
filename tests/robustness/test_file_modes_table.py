"""File modes table: every file and folder the project writes gets the mode any new file gets (0666 / 0777 less
the umask), not the private 0600 of a temporary file, so a reviewer on another account can read an export.

Each row writes one kind of output (single-file writers, run folder, run export, report, JUnit, JSON summary,
review export, harden export) under a umask of 027; every file must be 0640 and every folder 0750. A file that
is replaced keeps the permissions its owner gave it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

import pytest

from alict_core.runner import run_suite
from tests.robustness.support import KeywordModel, small_cases

UMASK = 0o027


def _result(tmp_path: Path):
    return run_suite(small_cases(6), [KeywordModel()], cache_root=tmp_path / "pred")


def _write_jsonl(tmp_path: Path, out: Path) -> None:
    from alict_core.common.jsonl import write_jsonl

    write_jsonl(out / "rows.jsonl", [{"a": 1}])


def _write_json(tmp_path: Path, out: Path) -> None:
    from alict_core.common.jsonl import write_json

    write_json(out / "doc.json", {"a": 1})


def _write_csv(tmp_path: Path, out: Path) -> None:
    from alict_core.common.csvsafe import write_csv

    write_csv(out / "table.csv", [{"a": "=1"}])


def _run_folder(tmp_path: Path, out: Path) -> None:
    _result(tmp_path).save(out / "run")


def _run_export(tmp_path: Path, out: Path) -> None:
    from alict_core.suites import export_bundle

    export_bundle(_result(tmp_path), out / "export", "sentiment")


def _report_files(tmp_path: Path, out: Path) -> None:
    from alict_core.report.html import write_report
    from alict_core.report.junit import write_junit
    from alict_core.report.summary import write_summary_json

    result = _result(tmp_path)
    write_report(result, out / "report.html")
    write_junit(result, out / "junit.xml")
    write_summary_json(result, out / "summary.json")


def _review_export(tmp_path: Path, out: Path) -> None:
    from alict_core.review import ReviewStore, SamplingPlan, create_review_task
    from alict_core.review.interchange import export_task
    from alict_core.review.store import dispose_engines

    store = ReviewStore(f"sqlite:///{tmp_path / 'review.sqlite'}")
    try:
        create_review_task(store, "t", "sentiment", small_cases(4), SamplingPlan(size=4, n_sets=1, k=1), [])
        export_task(store, "t", out / "forms.csv")
        export_task(store, "t", out / "forms.jsonl")
    finally:
        dispose_engines()


def _harden_export(tmp_path: Path, out: Path) -> None:
    from alict_core.harden.export import export_hardening_data

    run_dir = _result(tmp_path).save(tmp_path / "run")
    export_hardening_data(run_dir, out / "hx", lcs=["sentiment-lc01"], formats=("jsonl", "csv"))


WRITERS: dict[str, Callable[[Path, Path], None]] = {
    "write_jsonl": _write_jsonl,
    "write_json": _write_json,
    "write_csv": _write_csv,
    "run-folder": _run_folder,
    "run-export": _run_export,
    "report-junit-summary": _report_files,
    "review-export": _review_export,
    "harden-export": _harden_export,
}


@pytest.fixture
def umask():
    old = os.umask(UMASK)
    yield UMASK
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix() + ("/" if p.is_dir() else ""): stat.S_IMODE(p.stat().st_mode)
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_written_files_get_the_umask_mode(tmp_path, umask, writer):
    out = tmp_path / "out"
    out.mkdir()
    WRITERS[writer](tmp_path, out)
    modes = _modes(out)
    assert any(not name.endswith("/") for name in modes), modes
    wrong = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o777 if name.endswith("/") else 0o666) & ~umask}
    assert wrong == {}


@pytest.mark.parametrize("mode,after", [(0o600, 0o600), (0o640, 0o640), (0o644, 0o644), (0o444, 0o644),
                                        (0o000, 0o600)], ids=["0600", "0640", "0644", "read-only", "none"])
def test_a_replaced_file_keeps_its_permissions(tmp_path, umask, mode, after):
    """The owner's choice stays; the owner keeps reading and writing the file it re-wrote."""
    from alict_core.common.jsonl import write_json

    target = tmp_path / "doc.json"
    write_json(target, {"v": 1})
    target.chmod(mode)
    write_json(target, {"v": 2})
    assert stat.S_IMODE(target.stat().st_mode) == after and '"v": 2' in target.read_text()


def test_a_replaced_link_gets_a_new_file_of_the_umask_mode(tmp_path, umask):
    from alict_core.common.jsonl import write_json

    private = tmp_path / "private.json"
    private.write_text("{}")
    private.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(private)
    write_json(link, {"v": 2})
    assert not link.is_symlink() and stat.S_IMODE(link.stat().st_mode) == 0o666 & ~umask
    assert private.read_text() == "{}" and stat.S_IMODE(private.stat().st_mode) == 0o600


def test_no_writer_makes_private_temporary_files():
    """Every atomic write goes through ``jsonl.new_temp_file``: no ``mkstemp`` in the library or the app."""
    root = Path(__file__).resolve().parents[2]
    offenders = [path.relative_to(root).as_posix()
                 for path in [*root.glob("alict_core/**/*.py"), *root.glob("alict_app/*.py"), *root.glob("pages/*.py")]
                 if "mkstemp(" in path.read_text(encoding="utf-8")]
    assert offenders == []


@pytest.mark.parametrize("via_link", [False, True], ids=["fifo", "link-to-fifo"])
def test_a_device_or_pipe_is_never_replaced_by_an_output(cli, tmp_path, via_link):
    """``--out /dev/null`` (or ``/dev/stdout``, a link to one) as root replaced the device node (or the link)
    with a regular file by the atomic rename; a pipe plays the device here."""
    from alict_core.common.errors import AlictError
    from alict_core.common.jsonl import write_json

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = fifo
    if via_link:
        target = tmp_path / "stdout"
        target.symlink_to(fifo)
    with pytest.raises(AlictError, match="is a device, pipe or socket, not a file"):
        write_json(target, {"a": 1})
    outcome = cli("review", "export", "t", "--out", str(target), "--db", f"sqlite:///{tmp_path / 'r.sqlite'}")
    assert outcome.code == 2 and "is a device, pipe or socket, not a file" in outcome.err, outcome.err
    assert stat.S_ISFIFO(os.stat(target).st_mode) and target.is_symlink() == via_link
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"pipe", target.name})


def test_a_long_file_name_that_fits_is_written(tmp_path):
    """A 254-byte name fits the file system, but not with the temporary file's prefix and suffix: the run was
    done, then the final write failed with exit 3."""
    from alict_core.common.jsonl import write_json

    target = tmp_path / ("é" * 125 + ".json")  # 255 bytes
    write_json(target, {"a": 1})
    assert target.is_file() and sorted(p.name for p in tmp_path.iterdir()) == [target.name]


LONG = [  # (argv, needles): refused before any work, nothing written
    (["review", "export", "t", "--out", "{tmp}/" + "a" * 256 + ".csv"], ["--out", "260 bytes long; at most 255"]),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--summary-json", "{tmp}/" + "s" * 300,
      "--out", "{tmp}/run"], ["--summary-json", "300 bytes long; at most 255"]),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--out", "{tmp}/" + "r" * 240],
     ["--out", "240 bytes long; at most 223", "staging copy"]),
    (["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--out", "{tmp}/" + "d" * 300 + "/run"],
     ["--out", "the folder name", "300 bytes long; at most 255"]),
    (["harden", "export", "--run", "{tmp}/run", "--lcs", "lc01", "--out", "{tmp}/" + "h" * 240],
     ["--out", "240 bytes long; at most 223"]),
    (["seeds", "--task", "sentiment", "--lc", "4", "--out", "{tmp}/" + "s" * 240], ["--out", "at most 223"]),
]


@pytest.mark.parametrize("argv,needles", LONG, ids=["review-export", "summary-json", "run-out", "run-out-parent",
                                                    "harden-export-out", "seeds-out"])
def test_a_name_too_long_is_refused_before_any_work(cli, tmp_path, monkeypatch, argv, needles):
    from tests.robustness.conftest import assert_clean_error

    monkeypatch.setenv("ALICT_REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.sqlite'}")
    outcome = cli(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert_clean_error(outcome, 2, *needles)
    assert list(tmp_path.iterdir()) == []
