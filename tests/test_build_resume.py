"""Resumable builds: a build stopped after a checkpoint resumes and ends with the uninterrupted artefact."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from alict_core.models import artefacts
from alict_core.training.checkpoint import (
    Checkpoints,
    checkpoint_dir,
    optimiser_state,
    restore_optimiser,
    restore_rng,
    rng_state,
)
from alict_core.training.targets import build

PACKAGE_ROOT = Path(artefacts.__file__).resolve().parent.parent


class Stop(Exception):
    """Raised by the progress hook: the build dies after a step, as if killed."""


def _stop_at(step: int):
    def progress(done: int, total: int) -> None:
        if done == step:
            raise Stop(f"stopped at step {done}")

    return progress


def _weights(artefact: artefacts.Artefact) -> dict[str, str]:
    return {name: digest for name, digest in artefact.manifest["files"].items() if name != "manifest.json"}


class Uninterrupted(dict):
    """target → its uninterrupted micro build, built on first use (make test needs only some of them)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, target: str) -> artefacts.Artefact:
        self[target] = build(target, "micro", self.root, log=lambda _: None)
        return self[target]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Uninterrupted:
    return Uninterrupted(tmp_path_factory.mktemp("uninterrupted"))


# make test: the MLM here; the parser's stop-and-resume is proved by the best-dev test below (stopped at step 5,
# resumed, byte-identical to its uninterrupted build), so this parser variant runs under make test-full
@pytest.mark.parametrize(("target", "stop"), [pytest.param("parser", 5, marks=pytest.mark.slow_full), ("mlm", 3)])
def test_a_stopped_build_resumes_and_ends_with_the_same_artefact(tmp_path, uninterrupted, target, stop):
    folder = artefacts.profile_dir(target, "micro", tmp_path)
    with pytest.raises(Stop):
        build(target, "micro", tmp_path, progress=_stop_at(stop), log=lambda _: None)
    assert not folder.exists()
    saved = sorted(p.name for p in checkpoint_dir(folder).iterdir())
    assert saved == ["step-00000004" if target == "parser" else "step-00000002"]  # every 2 steps, newest only
    messages: list[str] = []
    seen: list[int] = []
    resumed = build(target, "micro", tmp_path, progress=lambda done, total: seen.append(done), log=messages.append)
    resumed_at = 4 if target == "parser" else 2
    assert any(f"resuming at step {resumed_at}" in m for m in messages)
    assert seen[0] == resumed_at and seen[-1] == resumed.steps  # progress starts at the resumed step
    assert _weights(resumed) == _weights(uninterrupted[target])  # byte-identical files (metrics/meta included)
    assert resumed.figures == uninterrupted[target].figures and resumed.steps == uninterrupted[target].steps
    assert not checkpoint_dir(folder).exists(), "checkpoint left after the artefact was swapped in"


def test_a_checkpoint_of_other_settings_is_not_resumed(tmp_path, uninterrupted, monkeypatch):
    folder = artefacts.profile_dir("mlm", "micro", tmp_path)
    with pytest.raises(Stop):
        build("mlm", "micro", tmp_path, progress=_stop_at(3), log=lambda _: None)
    state = checkpoint_dir(folder) / "step-00000002" / "state.json"
    state.write_text(state.read_text().replace('"key": "', '"key": "other-'))
    messages: list[str] = []
    rebuilt = build("mlm", "micro", tmp_path, log=messages.append)
    assert not any("resuming" in m for m in messages)
    assert any("removing checkpoint step-00000002" in m for m in messages)
    assert _weights(rebuilt) == _weights(uninterrupted["mlm"])


def test_the_checkpoint_interval_can_be_set_or_turned_off(tmp_path, uninterrupted, monkeypatch):
    monkeypatch.setenv("ALICT_CHECKPOINT_EVERY", "0")
    with pytest.raises(Stop):
        build("mlm", "micro", tmp_path, progress=_stop_at(3), log=lambda _: None)
    assert not checkpoint_dir(artefacts.profile_dir("mlm", "micro", tmp_path)).exists()
    monkeypatch.setenv("ALICT_CHECKPOINT_EVERY", "3")
    with pytest.raises(Stop):
        build("mlm", "micro", tmp_path, progress=_stop_at(3), log=lambda _: None)
    assert [p.name for p in checkpoint_dir(artefacts.profile_dir("mlm", "micro", tmp_path)).iterdir()] == [
        "step-00000003"]
    monkeypatch.setenv("ALICT_CHECKPOINT_EVERY", "often")
    with pytest.raises(Exception, match="ALICT_CHECKPOINT_EVERY='often' is not a whole number"):
        build("mlm", "micro", tmp_path, log=lambda _: None)


KILLED_BUILD = textwrap.dedent("""
    import sys, time
    from alict_core.training.targets import build

    def progress(done, total):
        if done == 3:
            print("checkpointed", flush=True)
            time.sleep(120)

    build("mlm", "micro", sys.argv[1], progress=progress, log=lambda _: None)
""")


FRESH_BUILD = textwrap.dedent("""
    import sys
    from alict_core.training.targets import build

    build("mlm", "micro", sys.argv[1], log=print)
""")


def _fresh_process_build(out: Path) -> tuple[dict[str, str], str]:
    """Build the micro MLM into ``out`` in a new interpreter, as the CLI does; (file digests, its log)."""
    import json

    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    done = subprocess.run([sys.executable, "-c", FRESH_BUILD, str(out)], capture_output=True, text=True, env=env,
                          timeout=600, check=True)
    manifest = json.loads((out / "micro" / "mlm" / "manifest.json").read_text(encoding="utf-8"))
    return {name: digest for name, digest in manifest["files"].items() if name != "manifest.json"}, done.stdout


@pytest.mark.slow_full  # three fresh interpreters; make test proves the resume in-process (tests above)
def test_a_sigkilled_build_resumes_from_its_checkpoint(tmp_path):
    """Killed, resumed and uninterrupted builds each run in a fresh interpreter (as `alict build` does), so the
    comparison does not depend on what earlier tests left in the pytest process."""
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(killed)], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "checkpointed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    resumed, log = _fresh_process_build(killed)
    assert "resuming at step 2" in log
    reference, reference_log = _fresh_process_build(tmp_path / "uninterrupted")
    assert "resuming" not in reference_log
    assert resumed == reference


def test_optimiser_and_rng_state_round_trip_through_json_and_tensors(tmp_path):
    import torch

    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    optimiser = torch.optim.AdamW(layer.parameters(), lr=0.1, betas=(0.8, 0.9))
    for _ in range(2):
        optimiser.zero_grad()
        layer(torch.randn(4, 3)).sum().backward()
        optimiser.step()
    named = random.Random(7)
    checkpoints = Checkpoints(tmp_path / "ckpt", every=1, log=lambda _: None)
    assert checkpoints.resume("k") is None
    optimiser_json, optimiser_tensors = optimiser_state(optimiser)
    rng_json, rng_tensors = rng_state({"named": named})
    checkpoints.save(2, {"optimiser": optimiser_json, "rng": rng_json}, {**optimiser_tensors, **rng_tensors})
    expected = (torch.rand(3), random.random(), named.random())

    other = torch.optim.AdamW(layer.parameters(), lr=0.5)
    loaded = Checkpoints(tmp_path / "ckpt", every=1, log=lambda _: None).resume("k")
    assert loaded is not None and loaded.step == 2
    restore_optimiser(other, loaded.state["optimiser"], loaded.tensors)
    restore_rng(loaded.state["rng"], loaded.tensors, {"named": named})
    assert (torch.rand(3).tolist(), random.random(), named.random()) == (expected[0].tolist(), *expected[1:])
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["betas"] == (0.8, 0.9)
    for before, after in zip(optimiser.state.values(), other.state.values(), strict=True):
        assert all(torch.equal(before[k], after[k]) for k in before)


def test_kept_folders_are_copied_when_changed_and_linked_when_not(tmp_path):
    import torch

    best = tmp_path / "best"
    best.mkdir()
    (best / "model.bin").write_text("best of step 3")
    checkpoints = Checkpoints(tmp_path / "ckpt", every=2, log=lambda _: None)
    checkpoints.resume("k")
    rng = {"rng.torch": torch.get_rng_state()}
    first = checkpoints.save(2, {}, rng, extras={"best": (best, 3), "absent": (tmp_path / "none", 0)})
    (best / "model.bin").write_text("overwritten in place")  # the trainer rewrites its best model in place
    assert (first / "best" / "model.bin").read_text() == "best of step 3"  # a copy, not a link
    second = checkpoints.save(4, {}, rng, extras={"best": (best, 3)})  # unchanged version: linked from step 2
    assert not first.exists() and (second / "best" / "model.bin").read_text() == "best of step 3"
    third = checkpoints.save(6, {}, rng, extras={"best": (best, 5)})
    assert (third / "best" / "model.bin").read_text() == "overwritten in place"
    loaded = Checkpoints(tmp_path / "ckpt", every=2, log=lambda _: None).resume("k")
    assert loaded is not None and loaded.step == 6 and loaded.extra("best") == third / "best"
    assert loaded.extra("absent") is None and [p.name for p in (tmp_path / "ckpt").iterdir()] == ["step-00000006"]


def test_the_best_dev_model_saved_before_the_stop_is_the_one_published(tmp_path, monkeypatch, uninterrupted):
    """Dev F1 made to fall after step 3: the artefact is the step-3 model, kept across the stop in the checkpoint."""
    from alict_core.training import parser as parser_training

    plain = uninterrupted["parser"]  # built (on first use) before the dev F1 is made to fall
    real_evaluate = parser_training.evaluate
    seen: list[int] = []

    def falling_dev_f1(parser, trees):
        scores = real_evaluate(parser, trees)
        if "forward" in vars(parser.pretrained_model):  # a dev check during training (not the final test)
            scores["labelled_f1"] = 1.0 / (seen[-1] + 1)  # progress reports a step after its dev check
        return scores

    def record(stop: int | None):
        def progress(done: int, total: int) -> None:
            seen.append(done)
            if done == stop:
                raise Stop(f"stopped at step {done}")

        return progress

    monkeypatch.setattr(parser_training, "evaluate", falling_dev_f1)
    reference = build("parser", "micro", tmp_path / "a", progress=record(None), log=lambda _: None)
    seen.clear()
    with pytest.raises(Stop):
        build("parser", "micro", tmp_path / "b", progress=record(5), log=lambda _: None)
    seen.clear()
    resumed = build("parser", "micro", tmp_path / "b", progress=record(None), log=lambda _: None)
    assert reference.figures["best_step"] == resumed.figures["best_step"] == 3
    assert _weights(resumed) == _weights(reference)
    assert _weights(resumed)["benepar_model.bin"] != _weights(plain)["benepar_model.bin"]


def test_the_report_lists_a_resumable_build(tmp_path, capsys):
    from alict_core.cli import main

    with pytest.raises(Stop):
        build("mlm", "micro", tmp_path, progress=_stop_at(3), log=lambda _: None)
    assert main(["build", "--report", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "resumable: mlm (micro profile) stopped after step 2; `alict build mlm --profile micro` continues it" in out
