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


def add_executor_args(parser: argparse.ArgumentParser, shard_help: str, shard_default: int) -> None:
    """``--executor``, ``--workers``, ``--ray-address`` and ``--shard-size`` (run, expand and explain)."""
    parser.add_argument("--executor", default="local", choices=["local", "processes", "ray"],
                        help="where shards run: in this process (default), a local pool of processes, "
                        "or a Ray cluster (`pip install .[ray]`)")
    parser.add_argument("--workers", type=int_range(1, 1024), default=1,
                        help="worker processes / Ray actors (each loads the models once)")
    parser.add_argument("--ray-address", default=None, metavar="ADDRESS",
                        help="with --executor ray: the cluster to join (e.g. ray://head:10001; default $RAY_ADDRESS, "
                        "else a local Ray started for the run)")
    parser.add_argument("--shard-size", type=int_range(1, 10_000_000), default=shard_default, help=shard_help)


def executor_options(args: argparse.Namespace) -> dict[str, str]:
    """Options for ``get_executor`` from the parsed flags; ``--ray-address`` without ``--executor ray`` is refused."""
    from alict_core.errors import AlictError

    if args.ray_address and args.executor != "ray":
        raise AlictError(f"--ray-address needs --executor ray (got --executor {args.executor})")
    return {"address": args.ray_address} if args.ray_address else {}
