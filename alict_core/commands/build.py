"""``build``: train the offline default models (parser, mlm, classifiers) or report what is built."""

from __future__ import annotations

import argparse
import json

from alict_core.common.errors import AlictError
from alict_core.common.textsafe import printable

TARGET_CHOICES = ("parser", "mlm", "models", "classifiers", "all", "missing")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="train the offline models (parser, mlm, models, all or missing) or --report what is built",
        description="Build the offline models with the project's own deterministic, step-capped scripts. "
        "Artefacts go to <out>/<profile>/<target> (default out: $ALICT_CACHE_DIR/models, "
        "~/.cache/alict-studio/models). Profiles: quick (what the tests need, ~10 min on 2 cores) and "
        "full (the quality the docs report: parser test F1 >= 0.85, MLM top-1 >= 33 %; hours on 2 cores).",
    )
    parser.add_argument("target", nargs="?", choices=TARGET_CHOICES,
                        help="what to build ('models' = the embedded classifiers; 'missing' = targets without a "
                        "usable artefact, for the full profile: without a full one)")
    parser.add_argument("--profile", choices=("quick", "full", "micro"), default=None,
                        help="build profile (default quick; micro is for unit tests only); with --report: only the "
                        "artefacts of that profile (default: all)")
    parser.add_argument("--quick", action="store_const", dest="profile", const="quick",
                        help=argparse.SUPPRESS)  # older spelling of --profile quick (the app's Build now)
    parser.add_argument("--out", default=None, help="models folder (default: the cache's models folder)")
    parser.add_argument("--no-wait", action="store_true",
                        help="exit with a message instead of waiting when another build holds the target's lock")
    parser.add_argument("--report", action="store_true",
                        help="print each built artefact's profile, steps and held-out figures")
    parser.add_argument("--json", action="store_true", help="with --report: print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.report:
        print_report(args.out, as_json=args.json, profile=args.profile)
        return 0
    args.profile = args.profile or "quick"
    if args.target is None:
        raise AlictError("name a target (parser, mlm, models, all, missing) or pass --report")
    from alict_core.common.manifest import check_models_folder

    check_models_folder(args.out, "--out")
    from alict_core.training.targets import ORDER, build, missing

    if args.target == "all":
        targets = list(ORDER)
    elif args.target == "missing":
        targets = missing(args.profile, args.out)
    else:
        targets = [args.target]
    from alict_core.models.artefacts import check_build_folder, profile_dir

    for name in targets:  # every folder checked before the first build starts
        check_build_folder(profile_dir(name, args.profile, args.out), name)
    for name in targets:
        build(name, args.profile, args.out, wait=not args.no_wait, force=args.target != "missing")
    if not targets:
        print(f"nothing to build: every target has a usable artefact ({args.profile} profile)")
    return 0


def _figure(value: object) -> str:
    """A held-out figure as printed: 4 decimals (legacy manifests stored full floats); anything but a number (a
    hand-edited manifest: true, a text, a list) is "?"."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "?" if value is not None else "None"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _figures_text(target: str, figures: dict) -> str:
    if not isinstance(figures, dict):
        return "figures unreadable (the manifest was edited)"
    if target == "parser":
        return f"test F1 {_figure(figures.get('test_f1'))}, dev F1 {_figure(figures.get('dev_f1'))}"
    if target == "mlm":
        return f"held-out top-1 {_figure(figures.get('top1'))}, top-10 {_figure(figures.get('top10'))}"
    parts = []
    for name, row in figures.items():  # a figure of another shape (edited by hand) is said, never an AttributeError
        row = row if isinstance(row, dict) else {}
        test = row.get("test") if isinstance(row.get("test"), dict) else {}
        error = row.get("error", "no figures")
        parts.append(f"{name}: acc {_figure(test.get('accuracy'))}, macro-F1 {_figure(test.get('macro_f1'))}"
                     if test else f"{name}: {printable(str(error))[:120]}")
    return "; ".join(parts)


def print_report(out: str | None, as_json: bool = False, profile: str | None = None) -> None:
    """Each built artefact (of ``profile``, default all): target, profile, steps, held-out figures (which one the
    runtime uses first)."""
    from alict_core.models import artefacts

    rows = [row for row in artefacts.report(out) if profile is None or row.get("profile") == profile]
    versions = _versions(out)
    if as_json:
        print(json.dumps(rows + [{"target": "version", **v} for v in versions], indent=1, default=str))
        return
    if not rows:
        print(f"no model artefact{f' of the {profile} profile' if profile else ''} is built; run "
              f"`alict build missing --profile {profile or 'quick'}`")
        _print_versions(versions)
        print_pending(out)
        print_defaults()
        return
    in_use = {t: _in_use(t, out) for t in artefacts.TARGETS}
    for row in rows:
        if "error" in row:
            print(f"{row['target']:<12} {row['profile']:<7} BROKEN: {row['error']}")
            continue
        mark = "*" if in_use.get(row["target"]) == row["profile"] else " "
        steps = row["steps"] if row["steps"] is not None else "-"
        print(f"{mark}{row['target']:<11} {row['profile']:<7} steps {steps!s:<6} "
              f"{_figures_text(row['target'], row['figures'])}")
    print("(* = used at run time; legacy = built by the earlier time-capped scripts, no manifest)")
    _print_versions(versions)
    print_pending(out)
    print_defaults()


def _in_use(target: str, out: str | None) -> str | None:
    """The profile the runtime would load for ``target`` (None: none, or a damaged one, listed as BROKEN)."""
    from alict_core.models import artefacts

    try:
        found = artefacts.locate(target, out, check=False)
    except AlictError:
        return None
    return found.profile if found else None


def _versions(out: str | None) -> list[dict]:
    """The hardened model versions the runtime would use (those of the default models folder), each checked."""
    from pathlib import Path

    from alict_core.common.config import models_dir

    models = models_dir()  # a report never writes (models_dir() creates nothing)
    if out is not None and Path(out).resolve() != models.resolve():
        return []
    if not (models / "versions").is_dir():  # a report never writes (versions_root() makes the folder)
        return []
    from alict_core.harden.versions import versions_report

    return versions_report()


def _print_versions(versions: list[dict]) -> None:
    if not versions:
        return
    print("hardened model versions (`harden train`):")
    for v in versions:
        if "error" in v:
            print(f"  {v['name']}  BROKEN: {v['error']}")
        else:
            print(f"  {v['name']}  {v['task']}, {v['kind']}, parent {v['parent']}: OK")


def print_pending(out: str | None) -> None:
    """Builds that stopped after a checkpoint: the same build command resumes them."""
    from alict_core.training.checkpoint import pending

    for row in pending(out):
        print(f"resumable: {row['target']} ({row['profile']} profile) stopped after step {row['step']}; "
              f"`alict build {row['target']} --profile {row['profile']}` continues it")


def print_defaults() -> None:
    """Which model each role resolves to (the paper's when available, else the offline substitute)."""
    from alict_core.models.defaults import resolved_defaults

    print("default models:")
    for role, entry in resolved_defaults().items():
        where = entry.get("profile") or entry.get("path") or entry.get("why") or ""
        print(f"  {role:<23} {entry['name']}  [{entry['source']}{'; ' + str(where) if where else ''}]")
