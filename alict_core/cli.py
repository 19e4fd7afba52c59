"""Command-line interface: ``alict COMMAND ...`` (the console command), same as ``python -m alict_core COMMAND ...``.

Each command lives in its own module under ``alict_core/commands/`` and exposes
``register(subparsers)``; this file only discovers and dispatches them.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from alict_core.errors import AlictError
from alict_core.runtime import configure_torch


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="alict" if Path(sys.argv[0]).name == "alict" else "python -m alict_core",
        description="ALiCT Studio: linguistic-capability testing of sentiment and hate-speech classifiers.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    import alict_core.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"alict_core.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_torch()  # process-wide settings once, before any model loads
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args) or 0)
    except AlictError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished batches are cached and a re-run resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
