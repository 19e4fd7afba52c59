"""Errors with one clear, user-facing message (what went wrong, where, how to fix it)."""


class AlictError(Exception):
    """Base class of every error the core reports to users."""


class DataNotFoundError(AlictError):
    """A data file or the data directory could not be found."""


class SpecError(AlictError):
    """An LC spec file is malformed (message names file, line and field)."""


class ModelError(AlictError):
    """A model failed to load or returned malformed output (message names the model)."""


class ArtefactMissingError(AlictError):
    """A built artefact (parser, MLM head, classifier) is missing; the message says how to build it."""


def load_failure(exc: BaseException, limit: int = 300) -> str:
    """What a library's loader said, for a message naming the model: a too-deep JSON file (Python's RecursionError
    text) is said in words; anything else as ``Type: text`` cut at ``limit`` characters."""
    if isinstance(exc, RecursionError):
        return "a JSON file in it (config.json, tokenizer files) is nested too deep to read"
    return f"{type(exc).__name__}: {str(exc)[:limit]}"


def link_loop(exc: BaseException) -> str | None:
    """The message of a path through a loop of symbolic links, or None: Python 3.11's ``Path.resolve`` says it as a
    RuntimeError ("Symlink loop from '…'"), which every front door reported as an internal error."""
    if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop from "):
        place = str(exc).removeprefix("Symlink loop from ")
        return f"the path {place} goes through a loop of symbolic links; fix the links or give another path"
    return None
