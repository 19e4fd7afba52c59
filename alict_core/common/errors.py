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
