"""Read-only demo mode (``ALICT_DEMO_MODE=1``): only the pages that show results, no control that writes.

In demo mode the app opens on the Story page; Specs, Seeds, Expansions and Run (which save specs,
build models or start runs) are not in the navigation, the sidebar offers no builds and the Report
page no baseline upload.
"""

from __future__ import annotations

from alict_core.common.errors import AlictError
from alict_core.common.limits import setting_flag

ENV = "ALICT_DEMO_MODE"


def problem() -> str | None:
    """The message for an ``ALICT_DEMO_MODE`` value that is none of the documented spellings, else None."""
    try:
        setting_flag(ENV)
    except AlictError as exc:
        return f"{exc}; demo mode is on until it is fixed"
    return None


def enabled() -> bool:
    """True when the ``ALICT_DEMO_MODE`` setting is on (1/true/yes/on), and when it holds another spelling: the
    read-only switch fails closed (the app says why, ``problem``)."""
    try:
        return setting_flag(ENV)
    except AlictError:
        return True
