"""The server's log: warnings of ``alict_core`` and ``alict_app`` as lines on the server's stderr.

Messages on pages point operators to it ("the answer is in the server log"); without a handler those records went
nowhere (pass 39). Values from data are escaped (``printable``): a service's answer never writes terminal codes.
"""

from __future__ import annotations

import logging
import sys
import time

from alict_core.common.textsafe import printable

LOGGERS = ("alict_core", "alict_app")


class ServerLogHandler(logging.Handler):
    """One escaped line per record on the current ``sys.stderr``."""

    def emit(self, record: logging.LogRecord) -> None:
        if any(type(handler).__name__ == "_StderrHandler" for handler in logging.getLogger("alict_core").handlers):
            return  # the command line (in this process) prints warnings itself: never twice
        try:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
            print(f"{stamp} alict {record.levelname.lower()} [{record.name}]: {printable(record.getMessage())}",
                  file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging must never break a page
            self.handleError(record)


def configure_server_log() -> None:
    """Add the handler once per process (the app script runs again on every interaction)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(handler, ServerLogHandler) for handler in logger.handlers):
            logger.addHandler(ServerLogHandler())
            if logger.level == logging.NOTSET or logger.level > logging.WARNING:
                logger.setLevel(logging.WARNING)
