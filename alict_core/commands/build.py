"""``build``: train the offline default models (parser, masked-LM head, classifiers)."""

from __future__ import annotations

import argparse
import inspect

from alict_core.build_targets import BUILD_TARGETS, builder, is_built
from alict_core.cliargs import float_range, int_range


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="train the offline default models (parser, mlm, models, or all) into the cache directory",
        description="Build the embedded offline models with the project's own reproducible scripts. "
        "Artefacts go to $ALICT_CACHE_DIR/models (default ~/.cache/alict-studio/models).",
    )
    parser.add_argument("target", choices=[*BUILD_TARGETS, "all", "missing"], help="what to build")
    parser.add_argument("--quick", action="store_true", help="tiny slice, for tests (minutes, not the real model)")
    parser.add_argument("--max-minutes", type=float_range(0.01, 10_000), default=None,
                        help="training time cap per target")
    parser.add_argument("--threads", type=int_range(1, 256), default=None,
                        help="CPU threads for training (parser and mlm; default 2)")
    parser.add_argument("--out", default=None, help="output directory (default: the cache directory)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.target == "all":
        targets = list(BUILD_TARGETS)
    elif args.target == "missing":
        targets = [name for name in BUILD_TARGETS if not is_built(name)]
    else:
        targets = [args.target]
    for name in targets:
        print(f"== building {name}")
        build = builder(name)
        extra = {}
        if args.threads is not None and "threads" in inspect.signature(build).parameters:
            extra["threads"] = args.threads
        path = build(out_dir=args.out, quick=args.quick, max_minutes=args.max_minutes, **extra)
        print(f"== {name} built at {path}")
    if not targets:
        print("every offline model is already built")
    return 0
