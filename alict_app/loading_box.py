"""The status box a page draws on its first open in a server while it loads models (Expansions, Adjunct trees): it
names what loads, gets one line per step, and closes as complete or as an error pointing at the page's message.
A warm open (everything loaded) draws no box: every helper here takes ``None`` and does nothing then.
"""

from __future__ import annotations

from typing import Any

COMPLETE = "Loaded: the page below is complete."


def open_box(st: Any, pending: list[str], duration: str, first_line: str | None = None) -> Any:
    """A status box naming ``pending`` (plain words), None when nothing is pending."""
    if not pending:
        return None
    box = st.status(f"Loading {'; '.join(pending)} — once per server, every session then shares "
                    f"{'them' if len(pending) > 1 else 'it'}; on a busy machine this takes {duration} …",
                    expanded=True)
    if first_line:
        box.write(first_line)
    return box


def step(box: Any, text: str) -> None:
    """One line in the box (nothing without one)."""
    if box is not None:
        box.write(text)


def finish(box: Any, missing: list[str]) -> None:
    """Close the box: complete, or an error naming what is still ``missing`` and pointing at the page's message."""
    if box is None:
        return
    if missing:
        box.update(label=f"Could not load {', '.join(missing)}: see the message below.", state="error",
                   expanded=False)
    else:
        box.update(label=COMPLETE, state="complete", expanded=False)
