"""Command-line interface: ``alict COMMAND ...`` (the console command), same as ``python -m alict_core COMMAND ...``.

Each command lives in its own module under ``alict_core/commands/`` and exposes
``register(subparsers)``; this file only discovers and dispatches them, and is the one place that
turns failures into exit codes (documented in docs/ROBUSTNESS.md):

====  =======================================================================================
0     success
1     the run finished but an LC's fail rate exceeded its ``--fail-threshold``
2     bad input or a failed check: usage errors, AlictError (one line naming what and how to fix)
3     internal error (a bug): one line; the traceback only with ``--debug``
130   interrupted (Ctrl-C); finished batches are kept and a re-run resumes
====  =======================================================================================
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
import traceback
from pathlib import Path
from typing import NoReturn

from alict_core.commands.args import check_empty, check_repeats
from alict_core.common.errors import AlictError
from alict_core.common.faults import describe_os_error, environment_fault, note_outputs
from alict_core.common.runtime import configure_torch
from alict_core.common.textsafe import printable

EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (and exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"error: {self.prog}: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="alict" if Path(sys.argv[0]).name == "alict" else "python -m alict_core",
        description="ALiCT Studio: linguistic-capability testing of sentiment and hate-speech classifiers.",
        epilog="exit codes: 0 ok, 1 fail threshold exceeded, 2 bad input, 3 internal error (--debug shows the "
        "traceback), 130 interrupted",
    )
    parser.add_argument("--debug", action="store_true", help="print the full traceback of internal errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    import alict_core.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"alict_core.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    _options_given_once(parser)
    return parser


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value, refused when given twice (argparse kept the last one without a word:
    ``harden export --lcs lc02 --lcs lc04`` exported lc04 only)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        seen = self.__dict__.setdefault("_namespaces", set())
        if id(namespace) in seen:
            raise argparse.ArgumentError(self, "given twice; give it once (a list option takes comma-separated "
                                               "values or is repeated only where its help says so)")
        seen.add(id(namespace))
        super().__call__(parser, namespace, values, option_string)


def _options_given_once(parser: argparse.ArgumentParser) -> None:
    """Every single-value option of ``parser`` and its sub-commands refuses a second occurrence."""
    for action in parser._actions:
        if type(action) is argparse._StoreAction and action.option_strings:
            action.__class__ = _StoreOnce
        elif isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _options_given_once(sub)


def one_line(message: object) -> str:
    """A message folded into one line, control characters (terminal escapes from a file's names) escaped."""
    return printable(" ".join(str(message).split())) or "(no message)"


class _StderrHandler(logging.Handler):
    """Warnings as ``warning: ...`` lines on the current ``sys.stderr`` (looked up at each record)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"warning: {printable(record.getMessage())}", file=sys.stderr)  # names from files, escaped
        except Exception:  # noqa: BLE001 - logging must never break the command
            self.handleError(record)


def _configure_logging() -> None:
    logger = logging.getLogger("alict_core")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
        logger.setLevel(logging.WARNING)
    # the PostgreSQL driver logs its own clean-up after a refused statement ("error ignored terminating
    # <psycopg.Pipeline [INERROR] ...>: pipeline aborted"); Python printed that raw on stderr beside the command's
    # one message (no handler anywhere: logging's last resort). A handler of the application's, if any, still
    # gets it (the record propagates); the terminal does not.
    driver = logging.getLogger("psycopg")
    if not any(isinstance(h, logging.NullHandler) for h in driver.handlers):
        driver.addHandler(logging.NullHandler())


def check_utf8_inputs(argv: list[str], environ: dict[str, str]) -> None:
    """Every argument and ``ALICT_*`` setting is UTF-8 text: raw bytes that are not (decoded by Python as lone
    surrogates) would pass the parser and fail deep inside, when the text is stored or printed."""
    def raw(text: str) -> str:
        return repr(text.encode("utf-8", "surrogateescape"))[1:]

    for position, text in enumerate(argv, 1):
        if any("\udc80" <= ch <= "\udcff" for ch in text):
            raise AlictError(f"argument #{position} {raw(text)} is not valid UTF-8; give arguments, names and "
                             "paths in UTF-8")
    for name, text in sorted(environ.items()):
        if name.startswith("ALICT_") and any("\udc80" <= ch <= "\udcff" for ch in text):
            raise AlictError(f"${name} {raw(text)} is not valid UTF-8; set it in UTF-8")


def check_settings() -> None:
    """Read every numeric or switch ``ALICT_*`` setting once, before any work: a bad value is one message now,
    never a failure after outputs were written."""
    from alict_core.common.limits import limits, setting_number
    from alict_core.models.artefacts import candidates
    from alict_core.models.defaults import TIMEOUT_ENV, check_pins, offline_forced
    from alict_core.models.registry import MODEL_CACHE_ENV

    limits()
    offline_forced()
    check_pins()
    candidates("parser")  # ALICT_MODEL_PROFILE: a profile's name
    setting_number(TIMEOUT_ENV, 1.5, 0.1, 60)
    setting_number(MODEL_CACHE_ENV, 8, 1, 1024, whole=True)


OUTPUT_OPTIONS = ("out", "export", "junit", "summary_json", "json_out", "json")  # options naming what is written


def command_outputs(args: argparse.Namespace) -> list[str]:
    """The outputs a command names (a full disk is said with them when its error names no file)."""
    options = [name for name in OUTPUT_OPTIONS if not (name == "export" and getattr(args, "command", None) == "harden")]
    return [str(value) for value in (getattr(args, name, None) for name in options) if isinstance(value, (str, Path))]


INTERRUPTED_NOTE = "its outputs are written whole or not at all; run it again to write them"
# the commands whose finished work is kept for a re-run (`report` has no batches: it said it had)
INTERRUPTED_NOTES = {**dict.fromkeys(("expand", "explain", "build"), "finished batches are cached and a re-run "
                                     "resumes"),
                     "run": "finished shards are kept and a re-run resumes after them (a model endpoint's answers "
                            "are kept only for a run's finished shards)"}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"] + (["--debug"] if debug and not argv[:1] == ["--debug"] else [])
    if debug:
        argv = ["--debug"] + [a for a in argv if a != "--debug"]
    for stream in (sys.stdout, sys.stderr):  # a console that cannot show a case text's character: an escape, not
        reconfigure = getattr(stream, "reconfigure", None)  # an internal error after the output was half printed
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    command: str | None = None
    note_outputs([])
    try:
        _configure_logging()
        check_utf8_inputs(argv, dict(os.environ))
        check_settings()  # a bad setting read at the end of a run left a half-written run behind
        parser = build_parser()
        args = parser.parse_args(argv)
        command = getattr(args, "command", None)
        note_outputs(command_outputs(args))
        check_repeats(args)  # an option naming one file or LC twice, before any work
        check_empty(args)  # an empty value read as "not given" (an unset shell variable)
        configure_torch()  # process-wide settings once, before any model loads
        if not getattr(args, "handler", None):
            parser.print_help()
            return EXIT_OK
        import alict_core.harden.versions  # noqa: F401 - installs the resolver of retrained versions (name@hash)

        return int(args.handler(args) or 0)
    except AlictError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print(f"interrupted; {INTERRUPTED_NOTES.get(command or '', INTERRUPTED_NOTE)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (PermissionError, FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError) as exc:
        print(f"error: {describe_os_error(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into a clean line + exit 3
        fault = environment_fault(exc)  # a full disk, a read-only mount, a loop of links: the user's to change
        if fault:
            print(f"error: {one_line(fault)}", file=sys.stderr)
            return EXIT_INPUT
        if debug:
            traceback.print_exc()
        print(f"error: internal error ({type(exc).__name__}: {one_line(exc)[:300]}); "
              "rerun with --debug for the traceback and please report it", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        note_outputs([])  # a library caller after main() (tests call it in-process) is no command of these outputs


if __name__ == "__main__":
    raise SystemExit(main())
