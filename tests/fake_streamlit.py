"""Start ``streamlit run app.py`` with the instant fake backends and a private run store (browser tests).

    ALICT_TEST_RUNS_DIR=/tmp/runs python tests/fake_streamlit.py --server.port 8600 --server.headless true

The fakes (``tests.fakes``) are registered in the server process before Streamlit starts, so every
session sees them; the run store is ``$ALICT_TEST_RUNS_DIR`` instead of the shared cache's runs folder.
``$ALICT_TEST_PLUGIN`` (optional): a module whose ``install()`` runs then too (e.g. ``tests.harden_toy``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    sys.path.insert(0, str(REPO))
    import fakes

    from alict_app import runs

    fakes.install()
    if os.environ.get("ALICT_TEST_PLUGIN"):
        import importlib

        importlib.import_module(os.environ["ALICT_TEST_PLUGIN"]).install()
    root = Path(os.environ["ALICT_TEST_RUNS_DIR"])
    runs.runs_root = lambda: root  # the pages look the store up through this function
    from streamlit.web import cli

    os.chdir(REPO)
    sys.argv = ["streamlit", "run", str(REPO / "app.py"), *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
