"""Range-checked argparse types: every numeric option says its range when a value is out of it."""

from __future__ import annotations

import argparse
import math
from typing import Callable


def int_range(low: int, high: int | str) -> Callable[[str], int]:
    """A whole number in [low, high]; ``high`` may name a limit in ``alict_core.limits`` (read at parse time)."""

    def parse(raw: str) -> int:
        top = _top(high)
        try:
            value = int(raw.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw[:30]!r} is not a whole number") from None
        if not low <= value <= top:
            raise argparse.ArgumentTypeError(f"{value} is out of range [{low}, {top}]")
        return value

    parse.__name__ = "integer"
    return parse


def float_range(low: float, high: float) -> Callable[[str], float]:
    """A finite number in [low, high]."""

    def parse(raw: str) -> float:
        try:
            value = float(raw.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw[:30]!r} is not a number") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{raw[:30]} is out of range [{low}, {high}]")
        return value

    parse.__name__ = "number"
    return parse


def _top(high: int | str) -> int:
    if isinstance(high, int):
        return high
    from alict_core.limits import limits

    return int(getattr(limits(), high))
