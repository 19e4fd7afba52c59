"""Read-only demo mode (``ALICT_DEMO_MODE=1``): only the pages that show results, no control that writes.

In demo mode the app opens on the Story page; Specs, Seeds, Expansions and Run (which save specs,
build models or start runs) are not in the navigation, the sidebar offers no builds and the Report
page no baseline upload.
"""

from __future__ import annotations

import os

ENV = "ALICT_DEMO_MODE"


def enabled() -> bool:
    """True when the ``ALICT_DEMO_MODE`` setting is on (1/true/yes/on)."""
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes", "on")
