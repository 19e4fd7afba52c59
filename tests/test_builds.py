"""Model artefacts and builds: the runtime/training split, manifests, safe staged builds, determinism."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from alict_core.common.errors import ArtefactMissingError
from alict_core.models import artefacts
from alict_core.models.artefacts import ArtefactCorruptError
from alict_core.training.staging import BuildLockedError
from alict_core.training.targets import build

PACKAGE = Path(artefacts.__file__).resolve().parent
# The build command is the one runtime-side module allowed to reach the training code.
MAY_IMPORT_TRAINING = {"alict_core.commands.build"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _fake_trainer(files: dict[str, str], steps: int = 3, figures: dict | None = None, pause: float = 0.0):
    def train(out: Path, cfg: dict, progress=None, log=print) -> dict:
        for rel, text in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text)
        time.sleep(pause)
        return {"steps": steps, "seed": cfg["seed"], "figures": figures or {"top1": 0.5}}

    return train


def test_build_writes_manifest_and_locate_verifies_it(tmp_path):
    artefact = build("mlm", "quick", tmp_path, trainer=_fake_trainer({"mlm_delta.safetensors": "w", "meta.json": "{}"}),
                     log=lambda _: None)
    assert artefact.path == tmp_path / "quick" / "mlm" and artefact.steps == 3 and artefact.figures == {"top1": 0.5}
    manifest = json.loads((artefact.path / "manifest.json").read_text())
    assert manifest["profile"] == "quick" and manifest["seed"] == 13 and set(manifest["files"]) == {
        "mlm_delta.safetensors", "meta.json"}
    assert len(manifest["files"]["meta.json"]) == 64  # sha256
    found = artefacts.require("mlm", tmp_path)
    assert (found.profile, found.path) == ("quick", artefact.path)
    assert not list((tmp_path / "quick").glob(".mlm.staging-*")), "staging folder left behind"
    # a changed file is detected and named, with the command that fixes it
    (artefact.path / "meta.json").write_text('{"tampered": true}')
    with pytest.raises(ArtefactCorruptError, match=r"changed: meta.json.*alict build mlm --profile quick"):
        artefacts.locate("mlm", tmp_path)


def test_runtime_prefers_full_then_quick_then_legacy_and_can_be_pinned(tmp_path, monkeypatch):
    monkeypatch.delenv(artefacts.PROFILE_ENV, raising=False)
    assert artefacts.locate("parser", tmp_path) is None
    with pytest.raises(ArtefactMissingError, match="alict build parser --profile quick"):
        artefacts.require("parser", tmp_path)
    legacy = tmp_path / "parser"
    legacy.mkdir()
    for name in artefacts.LEGACY_MARKERS["parser"]:
        (legacy / name).write_text(json.dumps({"test": {"labelled_f1": 0.8}, "steps": 900}))
    found = artefacts.require("parser", tmp_path)
    assert found.profile == "legacy" and found.figures["test_f1"] == 0.8 and found.steps == 900
    files = {"benepar_model.bin": "x", "config.json": "{}", "metrics.json": "{}"}
    build("parser", "quick", tmp_path, trainer=_fake_trainer(files), log=lambda _: None)
    assert artefacts.require("parser", tmp_path).profile == "quick"
    build("parser", "full", tmp_path, trainer=_fake_trainer(files), log=lambda _: None)
    assert artefacts.require("parser", tmp_path).profile == "full"
    monkeypatch.setenv(artefacts.PROFILE_ENV, "quick")
    assert artefacts.require("parser", tmp_path).profile == "quick"
    rows = {(r["target"], r["profile"]) for r in artefacts.report(tmp_path)}
    assert rows == {("parser", "full"), ("parser", "quick"), ("parser", "legacy")}


def test_out_is_honoured_and_other_artefacts_survive(tmp_path):
    other = build("parser", "quick", tmp_path, trainer=_fake_trainer({"benepar_model.bin": "p"}), log=lambda _: None)
    first = build("mlm", "quick", tmp_path, trainer=_fake_trainer({"meta.json": "1"}), log=lambda _: None)
    second = build("mlm", "quick", tmp_path, trainer=_fake_trainer({"meta.json": "2"}, steps=9), log=lambda _: None)
    assert first.path == second.path and (second.path / "meta.json").read_text() == "2"
    assert artefacts.verify(other.path)["target"] == "parser"
    assert sorted(p.name for p in (tmp_path / "quick").iterdir() if not p.name.endswith(".lock")) == ["mlm", "parser"]


def test_a_second_concurrent_build_waits_or_refuses(tmp_path):
    started = threading.Event()
    slow = _fake_trainer({"meta.json": "slow"}, pause=1.5)

    def slow_train(out, cfg, progress=None, log=print):
        started.set()
        return slow(out, cfg)

    worker = threading.Thread(target=build, args=("mlm", "quick", tmp_path),
                              kwargs={"trainer": slow_train, "log": lambda _: None})
    worker.start()
    assert started.wait(10)
    with pytest.raises(BuildLockedError, match="is being built by pid"):
        build("mlm", "quick", tmp_path, wait=False, trainer=_fake_trainer({"meta.json": "x"}), log=lambda _: None)
    messages: list[str] = []
    # waiting without force: the finished artefact of the first build is kept, not rebuilt
    kept = build("mlm", "quick", tmp_path, force=False, trainer=_fake_trainer({"meta.json": "late"}),
                 log=messages.append)
    worker.join()
    assert any("waiting for pid" in m for m in messages)
    assert (kept.path / "meta.json").read_text() == "slow"


KILLED_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from alict_core.training.targets import build

    def train(out, cfg, progress=None, log=print):
        (out / "meta.json").write_text("new, half written")
        print("training", flush=True)
        time.sleep(60)
        return {"steps": 1, "seed": 1, "figures": {}}

    build("mlm", "quick", sys.argv[1], trainer=train)
""")


def test_a_killed_build_leaves_the_previous_artefact_intact(tmp_path):
    previous = build("mlm", "quick", tmp_path, trainer=_fake_trainer({"meta.json": "old"}), log=lambda _: None)
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        assert any(proc.stdout.readline().strip() == "training" for _ in range(5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert artefacts.verify(previous.path)["files"].keys() == {"meta.json"}
    assert (previous.path / "meta.json").read_text() == "old"
    # the killed build's lock is released and its staging folder is cleaned by the next build
    assert list((tmp_path / "quick").glob(".mlm.staging-*"))
    rebuilt = build("mlm", "quick", tmp_path, wait=False, trainer=_fake_trainer({"meta.json": "new"}),
                    log=lambda _: None)
    assert (rebuilt.path / "meta.json").read_text() == "new"
    assert not list((tmp_path / "quick").glob(".mlm.staging-*"))


def test_a_swap_killed_half_way_is_recovered(tmp_path):
    previous = build("mlm", "quick", tmp_path, trainer=_fake_trainer({"meta.json": "old"}), log=lambda _: None)
    from alict_core.common.manifest import own_name

    previous.path.rename(tmp_path / "quick" / own_name(".mlm.old-"))  # killed between the two renames
    assert artefacts.locate("mlm", tmp_path) is None
    kept = build("mlm", "quick", tmp_path, force=False, trainer=_fake_trainer({"meta.json": "x"}), log=lambda _: None)
    assert (kept.path / "meta.json").read_text() == "old"


def test_build_cli_report_lists_profiles_steps_and_figures(tmp_path, capsys):
    from alict_core.cli import main

    build("mlm", "quick", tmp_path, trainer=_fake_trainer({"meta.json": "{}"}, steps=150,
                                                          figures={"top1": 0.21, "top10": 0.4}), log=lambda _: None)
    assert main(["build", "--report", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "*mlm" in out and "quick" in out and "steps 150" in out and "top-1 0.21, top-10 0.4" in out
    assert main(["build", "--report", "--json", "--out", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["profile"] == "quick" and row["steps"] == 150 and row["verified"]


# -- determinism: the same profile gives the same artefact --------------------------------------------
def _weights(artefact) -> dict[str, str]:
    """Digests of an artefact's weight files (the JSON metadata also records the encoder's fingerprint)."""
    return {name: digest for name, digest in artefact.manifest["files"].items() if not name.endswith(".json")}


# make test builds the classifiers twice; the parser and the MLM are each built twice (stopped and resumed vs
# uninterrupted, byte-identical) by tests/test_build_resume.py, so their own pair runs only under make test-full
@pytest.mark.parametrize("target", ["classifiers", pytest.param("mlm", marks=pytest.mark.slow_full),
                                    pytest.param("parser", marks=pytest.mark.slow_full)])
def test_two_micro_builds_give_identical_figures_and_weights(tmp_path, target):
    """The same command gives the same figures and byte-identical weights (the real trainers, on the micro
    profile: seconds each; test_two_quick_builds_give_identical_figures repeats it on quick under slow_full)."""
    first = build(target, "micro", tmp_path / "a", log=lambda _: None)
    second = build(target, "micro", tmp_path / "b", log=lambda _: None)
    assert first.figures == second.figures and first.steps == second.steps
    assert _weights(first) and _weights(first) == _weights(second)
    if target == "parser":
        assert first.steps == 6


@pytest.mark.slow
@pytest.mark.slow_full  # a quick build of each target (minutes each): make test-full
@pytest.mark.parametrize("target", ["classifiers", "mlm", "parser"])
def test_two_quick_builds_give_identical_figures(tmp_path, target):
    """A fresh quick build matches the quick artefact `make models` built before the tests (same code, same
    profile), else a second fresh build: the same command gives the same figures and files."""
    import json

    fresh = build(target, "quick", tmp_path / "a", log=lambda _: None)
    installed = artefacts.profile_dir(target, "quick") / "manifest.json"
    if installed.is_file():
        other = json.loads(installed.read_text(encoding="utf-8"))
        assert (fresh.figures, fresh.steps) == (other["figures"], other["steps"])
        # byte-identical weights (the JSON metadata also records the encoder's fingerprint, which may change)
        assert _weights(fresh) == {name: digest for name, digest in other["files"].items()
                                   if not name.endswith(".json")}
        return
    second = build(target, "quick", tmp_path / "b", log=lambda _: None)
    assert fresh.figures == second.figures and fresh.steps == second.steps


def test_a_running_build_reports_its_progress(tmp_path):
    seen: list[list[dict]] = []

    def train(out, cfg, progress=None, log=print):
        for step in (1, 2):
            progress(step, 2)
            seen.append(artefacts.build_progress(tmp_path))
        (out / "meta.json").write_text("{}")
        return {"steps": 2, "seed": cfg["seed"], "figures": {}}

    build("mlm", "quick", tmp_path, trainer=train, log=lambda _: None)
    assert seen[0][0]["target"] == "mlm" and seen[0][0]["profile"] == "quick" and seen[0][0]["total"] == 2
    assert seen[-1][0]["step"] == 2 and seen[-1][0]["eta_seconds"] == 0
    assert artefacts.build_progress(tmp_path) == []  # finished: nothing in progress


def test_built_heads_names_the_embedded_classifiers_whose_head_exists(tmp_path, monkeypatch):
    monkeypatch.delenv(artefacts.PROFILE_ENV, raising=False)
    assert artefacts.built_heads(["minilm-sst"], tmp_path) == set()  # nothing built
    folder = tmp_path / "quick" / "classifiers"
    (folder / "minilm-sst").mkdir(parents=True)
    (folder / "minilm-sst" / "head.npz").write_bytes(b"")
    (folder / "minilm-hatexplain").mkdir()
    (folder / artefacts.MANIFEST).write_text("{}", encoding="utf-8")
    assert artefacts.built_heads(["minilm-sst", "minilm-hatexplain", "vader"], tmp_path) == {"minilm-sst"}
