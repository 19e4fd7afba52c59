"""HTTP sessions whose every connection goes to an address the trust model checked in the same step.

``requests`` resolves a URL's host itself when it connects. Checking the host's addresses first and letting the
connection resolve it again leaves a window: a DNS server with a zero TTL answers an allowed address to the check
and 127.0.0.1 (or an internal service) to the connection — DNS rebinding. Here each new connection resolves the
host once (``alict_core.common.trust.checked_addresses``: every address allowed, or a TrustError and nothing sent) and
connects to one of those addresses; the request keeps the host name (Host header, TLS SNI and certificate check).
"""

from __future__ import annotations

import functools
import socket
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util.connection import create_connection

from alict_core.common.trust import checked_addresses


class _Pinned:
    """Mixed into urllib3's connections: ``_new_conn`` connects to a checked address of the host."""

    loopback: bool = True
    _dns_host: str
    port: int
    timeout: Any
    source_address: Any
    socket_options: Any

    def _new_conn(self) -> socket.socket:
        error: OSError | None = None
        for address in checked_addresses(self._dns_host, self.port, loopback=self.loopback):
            try:
                return create_connection((str(address), self.port), self.timeout,
                                         source_address=self.source_address, socket_options=self.socket_options)
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, f"Connection to {self._dns_host} ({address}) timed out. "
                                                f"(connect timeout={self.timeout})") from exc
            except OSError as exc:  # this address refused: try the host's next checked one
                error = exc
        raise NewConnectionError(self, f"Failed to establish a new connection: {error}")  # type: ignore[arg-type]


@functools.cache
def _pool_classes(loopback: bool) -> dict[str, type]:
    """The urllib3 pool classes (per scheme) whose connections are pinned, for one ``loopback`` setting."""
    http = type("PinnedHTTPConnection", (_Pinned, HTTPConnection), {"loopback": loopback})
    https = type("PinnedHTTPSConnection", (_Pinned, HTTPSConnection), {"loopback": loopback})
    return {"http": type("PinnedHTTPConnectionPool", (HTTPConnectionPool,), {"ConnectionCls": http}),
            "https": type("PinnedHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": https})}


class _PinnedAdapter(HTTPAdapter):
    def __init__(self, loopback: bool) -> None:
        self.loopback = loopback
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self.loopback)


class _DirectSession(requests.Session):
    """No proxy from the environment (a proxy would resolve the host itself, after the check); the rest of the
    environment (a CA bundle in ``REQUESTS_CA_BUNDLE``) still applies."""

    def merge_environment_settings(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        settings: dict[str, Any] = super().merge_environment_settings(*args, **kwargs)
        settings["proxies"] = {}
        return settings


def pinned_session(loopback: bool) -> requests.Session:
    """A session for model endpoints: connections only to checked addresses, never through a proxy."""
    session = _DirectSession()
    for scheme in ("http://", "https://"):
        session.mount(scheme, _PinnedAdapter(loopback))
    return session
