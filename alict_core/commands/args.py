"""Range-checked argparse types: every numeric option says its range when a value is out of it."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Callable, Hashable

from alict_core.common.repeats import distinct


def plain_digits(raw: str) -> str:
    """``raw`` stripped, or ValueError when it holds what ``int()``/``float()`` read but nobody types as a number:
    ``_`` digit separators (``0_1`` is 1.0) and non-ASCII digits (full-width, Arabic-Indic)."""
    text = raw.strip()
    if "_" in text or not text.isascii():
        raise ValueError(raw)
    return text


def int_range(low: int, high: int | str) -> Callable[[str], int]:
    """A whole number in [low, high]; ``high`` may name a limit in ``alict_core.common.limits`` (read at parse time)."""

    def parse(raw: str) -> int:
        top = _top(high)
        try:
            value = int(plain_digits(raw))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw[:30]!r} is not a whole number") from None
        if not low <= value <= top:
            raise argparse.ArgumentTypeError(f"{value} is out of range [{low}, {top}]")
        return value

    parse.__name__ = "integer"
    return parse


def float_range(low: float, high: float, open_interval: bool = False) -> Callable[[str], float]:
    """A finite number in [low, high] (strictly between them when ``open_interval``)."""

    def parse(raw: str) -> float:
        try:
            value = float(plain_digits(raw))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw[:30]!r} is not a number") from None
        inside = low < value < high if open_interval else low <= value <= high
        if not math.isfinite(value) or not inside:
            bounds = f": it must lie strictly between {low} and {high}" if open_interval else f" [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"{raw[:30]} is out of range{bounds}")
        return value

    parse.__name__ = "number"
    return parse


def _top(high: int | str) -> int:
    if isinstance(high, int):
        return high
    from alict_core.common.limits import limits

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
    from alict_core.common.errors import AlictError

    if args.ray_address and args.executor != "ray":
        raise AlictError(f"--ray-address needs --executor ray (got --executor {args.executor})")
    if getattr(args, "workers", 1) > 1 and args.executor == "local":  # was ignored without a word (pass 37)
        raise AlictError(f"--workers {args.workers} needs --executor processes or ray (the local executor runs one "
                         "shard after the other in this process)")
    return {"address": args.ray_address} if args.ray_address else {}


def comma_list(text: str | None, option: str, key: Callable[[str], Hashable] | None = None) -> list[str]:
    """The entries of a comma-separated option (stripped): [] when it names nothing (missing, empty, ``,,``); an
    empty entry among names (``a,,b``, ``a,``) or an entry given twice is one error naming the option."""
    from alict_core.common.errors import AlictError

    items = [item.strip() for item in (text or "").split(",")]
    if not any(items):  # nothing named: the caller says what is missing
        return []
    if not all(items):
        raise AlictError(f"{option} {text!r} has an empty entry; separate names by single commas")
    return distinct(items, option, key)


REPEATED_FILES = ("seeds", "suite", "expansions", "spec")  # repeatable options naming input files


def check_repeats(args: argparse.Namespace) -> None:
    """Refuse, right after parsing and before any work, a repeatable option naming one file or LC twice
    (``--seeds f --seeds f``, ``--lc 4 --lc lc04``): its cases would run twice or be merged without a word."""
    for dest in REPEATED_FILES:
        values = getattr(args, dest, None)
        if isinstance(values, list) and len(values) > 1:
            distinct(values, f"--{dest}", key=lambda value: str(Path(value).expanduser().resolve()))
    lcs = getattr(args, "lc", None)
    if isinstance(lcs, list) and len(lcs) > 1:
        distinct(lcs, "--lc", key=lambda lc: _lc_key(getattr(args, "task", None), lc))


def check_empty(args: argparse.Namespace) -> None:
    """Refuse an empty (or blank) value of any option or argument: it read as "not given", so an unset shell
    variable picked the default without a word (`report ''` reported the newest run, `compare r0 ''` compared the run
    with itself and passed a CI gate, `--db ''` used the default database, `lego --seeds ''` failed inside). The
    options that say an empty value in their own words are left to them."""
    from alict_core.common.errors import AlictError

    for dest, value in sorted(vars(args).items()):
        if dest in SAID_BY_THEIR_COMMAND:
            continue
        values = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and not item.strip() for item in values):
            shown = dest.replace("_", "-")
            raise AlictError(f"{shown if dest in POSITIONALS else '--' + shown} is empty: give a value (or leave it "
                             "out where it has a default)")


POSITIONALS = frozenset({"action", "file", "run_a", "run_b", "run_dir", "target"})
SAID_BY_THEIR_COMMAND = frozenset({"by", "text", "name", "title", "reviewers", "models", "lcs", "formats", "split"})


def _lc_key(task: str | None, lc: str) -> str:
    """An LC's full id (``4``, ``lc04`` and ``LC4`` are one LC); the name as given when it names none."""
    from alict_core.common.errors import AlictError

    if not task:
        return lc
    from alict_core.lcspec import get_spec

    try:
        return get_spec(task, lc).id
    except AlictError:  # an unknown name: the command says so, listing the task's LCs
        return lc


Handler = Callable[..., int]


class DefaultValue(str):
    """An option's default value (argparse keeps it as given): messages name it as the default, never as the user's."""


class DefaultInt(int):
    """A whole-number option's default (argparse keeps it as given): warnings about the user's value skip it."""


def holds_outputs(*options: str) -> Callable[[Handler], Handler]:
    """A command handler that holds the paths of its output ``options`` (``"out"``, ``"export"``) from its first
    step to its last: a second command writing one of them at once stops before any work with one message
    (``common.outlock.exclusive_output``). Without it, `run --out D` finished while `report --export D` worked, and
    the export's swap threw the saved run away (both said they had written D)."""
    import functools
    from contextlib import ExitStack

    def wrap(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def held(args: argparse.Namespace, *more: Any, **named: Any) -> int:
            from alict_core.common.errors import AlictError
            from alict_core.common.outlock import exclusive_output

            held_paths: dict[Path, str] = {}
            with ExitStack() as stack:
                for option in options:
                    target = getattr(args, option, None)
                    flag = f"--{option.replace('_', '-')}"
                    flag = f"the default {flag} (none was given)" if isinstance(target, DefaultValue) else flag
                    if target:
                        same = held_paths.get(Path(target).resolve())
                        if same:  # its own lock, not another command: waiting would never help
                            raise AlictError(f"{same} and {flag} name the same path {target!r}; give each its own")
                        held_paths[Path(target).resolve()] = flag
                        stack.enter_context(exclusive_output(target, flag))
                return handler(args, *more, **named)

        return held

    return wrap


holds_out = holds_outputs("out")


def refuse_in_run_store(path: str | Path, flag: str) -> None:
    """Refuse an output folder in the run store (or one holding it): saved runs live there, the run pickers list
    its folders, and an export or version written there would sit among them (report --export, harden --out)."""
    import os

    from alict_core.common.errors import AlictError
    from alict_core.runner.store import runs_root

    target, store = Path(os.path.abspath(path)).resolve(), runs_root().resolve()
    if target == store or target.is_relative_to(store) or store.is_relative_to(target):
        where = "lies in" if target == store or target.is_relative_to(store) else "holds"
        raise AlictError(f"{flag} {str(path)!r} {where} the run store {str(store)!r} (where saved runs live); "
                         "choose a folder outside it")


def model_input_paths(models: object, option: str) -> list[tuple[str, str | None]]:
    """(option, path) of every ``path=`` a ``--models``-style value names, ``~`` expanded as the loaders expand it:
    files a command reads, which no output may replace and no output folder may hold."""
    import os

    from alict_core.common.errors import AlictError
    from alict_core.models.refs import parse_model_refs

    if not isinstance(models, str) or not models:
        return []
    try:
        refs = parse_model_refs(models)
    except AlictError:
        return []  # said by the model check
    return [(option, os.path.expanduser(str(ref.kwargs["path"]))) for ref in refs if ref.kwargs.get("path")]

