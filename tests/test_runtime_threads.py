"""Process-wide torch settings (common.runtime): OpenMP waits passively unless the operator says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHOW = ("from alict_core.common.runtime import configure_torch; configure_torch(); "
        "import os; print(os.environ['OMP_WAIT_POLICY'])")


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_waits_passively_unless_set(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", SHOW], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected
