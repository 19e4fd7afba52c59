"""Output paths are checked before any work, and a refusal names the path the user gave (never a hidden
temporary file); folders that are swapped in whole refuse a folder of other files up front."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.robustness.conftest import assert_clean_error

POSITIVE = {"kind": "label", "labels": ["positive"]}


@pytest.fixture
def paths(tmp_path) -> dict[str, Path]:
    (tmp_path / "a-file").write_text("keep")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("keep me")
    (tmp_path / "foreign" / ".git").mkdir()
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"id": f"s{i}", "lc_id": "sentiment-lc04", "task": "sentiment",
                                         "text": f"the staff was {w}", "test_type": "MFT", "expected": POSITIVE})
                             + "\n" for i, w in enumerate(["good", "bad", "fine"])))
    return {"file": tmp_path / "a-file", "dir": tmp_path / "a-dir", "foreign": tmp_path / "foreign",
            "seeds": seeds, "tmp": tmp_path}


RUN = ["run", "--task", "sentiment", "--models", "vader", "--lc", "4", "--seeds", "{seeds}", "--quiet",
       "--keep-flagged", "--out", "{tmp}/run"]
OUTPUTS = [  # (argv, needle, the path the message must name)
    ([*RUN, "--junit", "{dir}"], "is a folder", "{dir}"),
    ([*RUN, "--summary-json", "{dir}"], "is a folder", "{dir}"),
    ([*RUN, "--junit", "{file}/x.xml"], "is a file", "{file}/x.xml"),
    ([*RUN, "--summary-json", "{file}/deeper/s.json"], "is a file", "{file}/deeper/s.json"),
    ([*RUN, "--report", "{file}/r.html"], "is a file", "{file}/r.html"),
    ([*RUN, "--fail-threshold", "LC9=0.5"], "which was not run", "sentiment-lc09"),
    ([*RUN, "--fail-threshold", "nope=0.5"], "which was not run", "nope"),
    ([*RUN, "--fail-threshold", "sentiment-lc01=0.5"], "which was not run", "sentiment-lc01"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--junit", "{dir}"], "is a folder", "{dir}"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--summary-json", "{dir}"], "is a folder", "{dir}"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--junit", "{file}/j.xml"], "is a file", "{file}/j.xml"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--fail-threshold", "x"], "--fail-threshold", "x"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--export", "{foreign}"], "already holds other files",
     "{foreign}"),
    # attack pass: two outputs on one file, outputs inside the run they are made from
    ([*RUN, "--junit", "{tmp}/j.xml", "--summary-json", "{tmp}/j.xml"], "name the same file", "{tmp}/j.xml"),
    ([*RUN, "--junit", "{tmp}/run/meta.json"], "lies inside the run folder", "{tmp}/run/meta.json"),
    (["report", "{run}", "--out", "{run}/meta.json"], "lies inside the saved artefact", "{run}/meta.json"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--summary-json", "{run}/cases/s.json"],
     "lies inside the saved artefact", "{run}/cases/s.json"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--export", "{run}"], "overlaps the run folder", "{run}"),
    (["report", "{run}", "--out", "{tmp}/r.html", "--junit", "{tmp}/r.html"], "name the same file", "{tmp}/r.html"),
    (["review", "export", "t", "--out", "{dir}", "--db", "sqlite:///{tmp}/review.sqlite"], "is a folder", "{dir}"),
    (["seeds", "--task", "sentiment", "--lc", "1", "--out", "{foreign}"], "already holds other files", "{foreign}"),
    (["expand", "--task", "sentiment", "--lc", "1", "--out", "{foreign}"], "already holds other files",
     "{foreign}"),
    (["lego", "--task", "sentiment", "--lc", "1", "--out", "{foreign}"], "already holds other files", "{foreign}"),
    (["lego", "--task", "sentiment", "--lc", "1", "--out", "{file}"], "is not a folder", "{file}"),
    # hostile pass 2: an output folder inside a saved run (a re-write of the run swapped it away, exit 0 both times)
    (["harden", "export", "--run", "{run}", "--lcs", "sentiment-lc01", "--out", "{run}/export"],
     "lies inside the saved artefact", "{run}/export"),
    ([*RUN[:-2], "--out", "{run}/inner"], "lies inside the saved artefact", "{run}/inner"),  # one --out (pass 15)
    (["seeds", "--task", "sentiment", "--lc", "1", "--out", "{run}/cases/seeds"], "lies inside the saved artefact",
     "{run}/cases/seeds"),
    (["lego", "--task", "sentiment", "--lc", "1", "--out", "{run}/lego"], "lies inside the saved artefact",
     "{run}/lego"),
]


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> Path:
    from alict_core.runner import run_suite
    from tests.robustness.support import KeywordModel, small_cases

    root = tmp_path_factory.mktemp("saved")
    return run_suite(small_cases(4), [KeywordModel()], cache_root=root / "p").save(root / "run")


@pytest.mark.parametrize("argv,needle,named", OUTPUTS, ids=[f"{a[0]}-{i}" for i, (a, _, _) in enumerate(OUTPUTS)])
def test_output_paths_are_checked_before_any_work(cli, paths, saved_run, argv, needle, named):
    fill = {**{k: str(v) for k, v in paths.items()}, "run": str(saved_run)}
    before = {p.relative_to(paths["tmp"]).as_posix() for p in paths["tmp"].rglob("*")}
    outcome = cli(*[a.format(**fill) for a in argv])
    assert_clean_error(outcome, 2, needle, named.format(**fill), limit_s=15)
    assert ".tmp" not in outcome.err  # the user's path, not a hidden temporary file
    after = {p.relative_to(paths["tmp"]).as_posix() for p in paths["tmp"].rglob("*")}
    assert after == before  # nothing written: no run folder, no report, no staging folder
    assert (paths["foreign"] / "notes.txt").read_text() == "keep me" and (paths["foreign"] / ".git").is_dir()


def test_read_only_output_folder(cli, paths):
    """A --junit path in a folder the user may not write is refused before the run; as root, the real user is
    ``nobody`` for the call (``os.access`` checks the real ids), so the check runs on every machine."""
    import shutil
    import tempfile

    from tests.robustness.support import as_unprivileged_real_user

    ro = Path(tempfile.mkdtemp(prefix="alict-read-only-"))  # outside tmp_path: reachable by an unprivileged user
    os.chmod(ro, 0o555)
    writable = Path(tempfile.mkdtemp(prefix="alict-writable-"))
    os.chmod(writable, 0o777)
    try:
        argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in RUN]
        argv[argv.index("--out") + 1] = str(writable / "run")  # only the --junit folder is not writable
        with as_unprivileged_real_user():
            assert not os.access(ro, os.W_OK)
            outcome = cli(*argv, "--junit", str(ro / "j.xml"))
        assert_clean_error(outcome, 2, "--junit", "not writable")
        assert not any(ro.iterdir()) and not any(writable.iterdir())
    finally:
        os.chmod(ro, 0o700)
        shutil.rmtree(ro)
        shutil.rmtree(writable)


@pytest.mark.parametrize("writer", ["junit", "summary", "jsonl", "json"])
def test_an_atomic_write_onto_a_folder_names_the_folder(tmp_path, saved_run, writer):
    """Library level: the one atomic file writer refuses a folder naming it, and leaves no temporary file."""
    from alict_core.common.jsonl import write_json, write_jsonl
    from alict_core.report.junit import write_junit
    from alict_core.report.summary import write_summary_json
    from alict_core.runner import RunResult

    target = tmp_path / "taken"
    target.mkdir()
    write = {"junit": lambda: write_junit(RunResult.load(saved_run), target),
             "summary": lambda: write_summary_json(RunResult.load(saved_run), target),
             "jsonl": lambda: write_jsonl(target, [{"a": 1}]), "json": lambda: write_json(target, {"a": 1})}[writer]
    with pytest.raises(IsADirectoryError) as caught:
        write()
    assert caught.value.filename == str(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


@pytest.mark.parametrize("content", [["notes.txt"], [".git/"], ["sub/"], ["a.jsonl", "README.md"]])
def test_merged_output_folders_refuse_other_content(tmp_path, content):
    """`seeds`/`expand --out` collect files over several commands: a folder holding anything else (a copy
    would drop hidden files and folders) is refused, and left as it was."""
    from alict_core.common.errors import AlictError
    from alict_core.common.manifest import atomic_dir

    out = tmp_path / "out"
    out.mkdir()
    for name in content:
        (out / name.rstrip("/")).mkdir() if name.endswith("/") else (out / name).write_text("x")
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(AlictError, match="already holds other files"):
        with atomic_dir(out, owned=("*.jsonl",), merge=True) as staging:
            (staging / "b.jsonl").write_text("y")
    assert sorted(p.name for p in out.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_merged_output_folder_keeps_earlier_files(tmp_path):
    from alict_core.common.manifest import atomic_dir

    out = tmp_path / "out"
    with atomic_dir(out, owned=("*.jsonl",), merge=True) as staging:
        (staging / "a.jsonl").write_text("1")
    with atomic_dir(out, owned=("*.jsonl",), merge=True) as staging:
        (staging / "b.jsonl").write_text("2")
    assert {p.name: p.read_text() for p in out.iterdir()} == {"a.jsonl": "1", "b.jsonl": "2"}
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # not private like a mkdtemp folder


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("out,needle", [(".", "already holds other files"), ("/", "is the root folder")],
                         ids=["dot-with-other-files", "root"])
def test_run_out_of_a_folder_without_a_name(cli, paths, monkeypatch, out, needle):
    """`run --out .` was an internal error (exit 3: "PosixPath('.') has an empty name")."""
    monkeypatch.chdir(paths["foreign"])
    before = {p.relative_to(paths["tmp"]).as_posix() for p in paths["tmp"].rglob("*")}
    outcome = cli(*[a.format(seeds=paths["seeds"], tmp=paths["tmp"]) for a in RUN[:-1]], out)
    assert_clean_error(outcome, 2, needle, limit_s=30)
    assert {p.relative_to(paths["tmp"]).as_posix() for p in paths["tmp"].rglob("*")} == before


def test_run_out_dot_in_an_empty_folder_runs_there(cli, paths, monkeypatch):
    monkeypatch.chdir(paths["dir"])
    outcome = cli(*[a.format(seeds=paths["seeds"], tmp=paths["tmp"]) for a in RUN[:-1]], ".")
    assert outcome.code == 0, outcome.err
    assert (paths["dir"] / "meta.json").is_file()
    assert not [p.name for p in paths["tmp"].iterdir() if p.name.startswith(".")]  # no staging sibling left


@pytest.mark.parametrize("command,row,needle", [
    (["expand", "--task", "sentiment", "--lc", "4", "--max-seeds", "1"],
     {"id": "s1", "lc_id": "sentiment-lc04", "text": "a film", "test_type": "MFT", "expected": POSITIVE},
     "holds seeds"),
    (["seeds", "--task", "sentiment", "--lc", "4", "--max", "1"],
     {"id": "s1-x1", "seed_id": "s1", "lc_id": "sentiment-lc04", "text": "a fine film"}, "holds expansions"),
], ids=["expand-onto-seeds", "seeds-onto-expansions"])
def test_seeds_and_expansions_never_replace_each_other(cli, tmp_path, command, row, needle):
    """`expand --out <a seeds --out folder>` silently replaced sentiment-lc04.jsonl (the seeds) by expansions."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "sentiment-lc04.jsonl").write_text(json.dumps(row) + "\n")
    before = (folder / "sentiment-lc04.jsonl").read_bytes()
    outcome = cli(*command, "--out", str(folder))
    assert_clean_error(outcome, 2, needle, str(folder), "sentiment-lc04.jsonl", limit_s=30)
    assert (folder / "sentiment-lc04.jsonl").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["sentiment-lc04.jsonl"]


INPUTS_AND_ARTEFACTS = [  # (argv, the path the message must name): an output onto an input or an artefact's file
    ([*RUN, "--junit", "{seeds}"], "{seeds}"),
    ([*RUN, "--summary-json", "{seeds}"], "{seeds}"),
    ([*RUN, "--report", "{seeds}"], "{seeds}"),
    ([*RUN, "--summary-json", "{run}/meta.json"], "{run}/meta.json"),
    ([*RUN, "--junit", "{run}/manifest.json"], "{run}/manifest.json"),
    (["report", "{copy}", "--out", "{tmp}/r.html", "--junit", "{run}/summary.csv"], "{run}/summary.csv"),
    (["compare", "{copy}", "{copy}", "--json", "{run}/meta.json"], "{run}/meta.json"),
    ([*RUN, "--junit", "{run}/junit.xml"], "{run}/junit.xml"),  # a new file: a re-write of the run dropped it
    (["compare", "{copy}", "{copy}", "--json", "{run}/results/c.json"], "{run}/results/c.json"),
    (["review", "export", "t", "--out", "{run}/meta.json", "--db", "sqlite:///{tmp}/review.sqlite"],
     "{run}/meta.json"),
]


@pytest.mark.parametrize("argv,named", INPUTS_AND_ARTEFACTS, ids=[f"{a[0]}-{i}" for i, (a, _) in
                                                                  enumerate(INPUTS_AND_ARTEFACTS)])
def test_outputs_never_replace_an_input_or_a_saved_artefact(cli, paths, saved_run, argv, named):
    """Hostile pass 2: `run --junit <its own --seeds file>` and `run --summary-json <another run>/meta.json` (also
    `report --junit`, `compare --json`, `review export --out` onto another run's files) replaced the file, exit 0:
    the input lost, the other run no longer loading."""
    import shutil

    from tests.robustness.support import tree_snapshot

    copy = paths["tmp"] / "copy"
    shutil.copytree(saved_run, copy)
    fill = {**{k: str(v) for k, v in paths.items()}, "run": str(saved_run), "copy": str(copy)}
    before, seeds = tree_snapshot(saved_run), paths["seeds"].read_bytes()
    outcome = cli(*[a.format(**fill) for a in argv])
    assert_clean_error(outcome, 2, named.format(**fill), limit_s=15)
    assert tree_snapshot(saved_run) == before and paths["seeds"].read_bytes() == seeds
    assert not (paths["tmp"] / "run").exists() and not (paths["tmp"] / "r.html").exists()


LINKED_OUTPUTS = [  # an output file named by a symbolic link: the atomic rename replaced the link, not its target
    [*RUN, "--junit", "{link}"],
    [*RUN, "--summary-json", "{link}"],
    [*RUN, "--report", "{link}"],
    ["report", "{copy}", "--out", "{link}"],
    ["report", "{copy}", "--out", "{tmp}/r.html", "--summary-json", "{link}"],
    ["compare", "{copy}", "{copy}", "--json", "{link}"],
    ["review", "export", "t", "--out", "{link}", "--db", "sqlite:///{tmp}/review.sqlite"],
]


@pytest.mark.parametrize("argv", LINKED_OUTPUTS, ids=[f"{a[0]}-{i}" for i, a in enumerate(LINKED_OUTPUTS)])
def test_an_output_file_that_is_a_link_is_refused(cli, paths, saved_run, argv):
    """Hostile pass 3: `report RUN --out /dev/stdout` with stdout redirected to a file passed the device check (the
    link leads to a regular file), said "report written to /dev/stdout", exit 0, and replaced the system's
    /dev/stdout link with a regular file; nothing reached stdout. Any link: the link replaced, its target untouched."""
    import shutil

    copy = paths["tmp"] / "copy"
    shutil.copytree(saved_run, copy)
    target = paths["tmp"] / "target.html"
    target.write_text("keep me")
    link = paths["tmp"] / "link.html"
    link.symlink_to(target)
    fill = {**{k: str(v) for k, v in paths.items()}, "run": str(saved_run), "copy": str(copy), "link": str(link)}
    outcome = cli(*[a.format(**fill) for a in argv])
    assert_clean_error(outcome, 2, str(link), "is a symbolic link", limit_s=15)
    assert link.is_symlink() and target.read_text() == "keep me"
    assert not (paths["tmp"] / "run").exists() and not (paths["tmp"] / "r.html").exists()


LINKED_FOLDERS = [  # an output folder named by a symbolic link (to an empty folder, or leading nowhere)
    [*RUN[:-1], "{link}"],
    ["seeds", "--task", "sentiment", "--lc", "1", "--out", "{link}"],
    ["expand", "--task", "sentiment", "--lc", "1", "--out", "{link}"],
    ["lego", "--task", "sentiment", "--lc", "1", "--out", "{link}"],
    ["harden", "export", "--run", "{copy}", "--lcs", "sentiment-lc01", "--out", "{link}"],
    ["report", "{copy}", "--out", "{tmp}/r.html", "--export", "{link}"],
]


@pytest.mark.parametrize("dangling", [False, True], ids=["to-an-empty-folder", "dangling"])
@pytest.mark.parametrize("argv", LINKED_FOLDERS, ids=[f"{a[0]}-{i}" for i, a in enumerate(LINKED_FOLDERS)])
def test_an_output_folder_that_is_a_link_is_refused(cli, paths, saved_run, argv, dangling):
    """Hostile pass 3: `run --out L` (L a link to an empty folder) failed half-way with "cannot access
    '.stream.tmp-…': Is a directory" (a hidden temporary name), and left L replaced by a partial run (cases/ only, no
    manifest), a stray `.stream.tmp-*` link and a `.L.tmp-old-*` folder; `seeds --out <dangling link>` the same."""
    import shutil

    copy = paths["tmp"] / "copy"
    shutil.copytree(saved_run, copy)
    target = paths["tmp"] / "elsewhere"
    if not dangling:
        target.mkdir()
    link = paths["tmp"] / "link"
    link.symlink_to(target, target_is_directory=True)
    fill = {**{k: str(v) for k, v in paths.items()}, "run": str(saved_run), "copy": str(copy), "link": str(link)}
    before = sorted(p.name for p in paths["tmp"].iterdir())
    outcome = cli(*[a.format(**fill) for a in argv])
    assert_clean_error(outcome, 2, str(link), "is a symbolic link", limit_s=30)
    assert link.is_symlink() and (dangling or not any(target.iterdir()))
    assert sorted(p.name for p in paths["tmp"].iterdir()) == before, "no partial run, no stray temporary"
