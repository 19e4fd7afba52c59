"""The repository holds code, specs, docs and small fixtures only: built models and data stay out of git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_BYTES = 512 * 1024
FORBIDDEN_SUFFIXES = {
    ".pt", ".pth", ".bin", ".safetensors", ".onnx", ".npz", ".npy", ".pkl", ".pickle", ".joblib",
    ".parquet", ".sqlite", ".db", ".gz", ".zip", ".tar", ".arrow",
}


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_no_model_or_data_files_are_tracked():
    offenders = [str(p.relative_to(ROOT)) for p in tracked_files() if p.suffix.lower() in FORBIDDEN_SUFFIXES]
    assert offenders == [], f"built artefacts or data files must not be committed: {offenders}"


def test_no_tracked_file_is_large():
    large = [(str(p.relative_to(ROOT)), p.stat().st_size) for p in tracked_files()
             if p.exists() and p.stat().st_size > MAX_FILE_BYTES]
    assert large == [], f"files over {MAX_FILE_BYTES} bytes are tracked: {large}"
