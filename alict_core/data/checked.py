"""Corrupt data files become one clear error naming the file (never a traceback deep inside a parser)."""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

from alict_core.common.errors import DataNotFoundError

F = TypeVar("F", bound=Callable)
CORRUPT = (UnicodeDecodeError, StopIteration, ValueError, IndexError, KeyError, EOFError, OSError, TypeError,
           AttributeError, RecursionError)  # RecursionError: a tree or JSON nested thousands deep


class CorruptDataError(DataNotFoundError):
    """A data file exists but cannot be read as its format (truncated, wrong encoding, not gzip ...)."""


def reads_data(what: str) -> Callable[[F], F]:
    """Decorate a loader of data file(s) ``what``: format errors become one CorruptDataError."""

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def checked(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except DataNotFoundError:
                raise
            except CORRUPT as exc:
                detail = f"byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else str(exc)[:120]
                raise CorruptDataError(f"data file {what} cannot be read ({type(exc).__name__}: {detail}); "
                                       "restore it from the data bundle (or check ALICT_DATA_DIR)") from None

        return checked  # type: ignore[return-value]

    return wrap
