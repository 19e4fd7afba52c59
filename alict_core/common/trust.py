"""The trust model, enforced in one place: what a browser user, the command line and the library may load.

The browser is untrusted. From it the app may use only

- registered models (``MODELS``; Hugging Face hub ids only when registered),
- Hugging Face model folders under a configured model root (``ALICT_MODEL_ROOTS``),
- HTTP / OpenAI-compatible endpoints whose host is on the allow-list (``ALICT_ALLOWED_HOSTS``; default:
  none; a loopback endpoint, a service of the server itself, only when the operator lists it there),
- static-prediction files and suites under a data/workspace root (``ALICT_WORKSPACE_ROOTS``) or uploaded,
- pickle/joblib files only under a directory the operator names in ``ALICT_PICKLE_DIRS``.

The command line loads a pickle only with ``--trust-pickle``; it may reach loopback endpoints by default.
Endpoint hosts are checked for every caller
(CLI and library too) before any request: every address the host resolves to must be allowed, and cloud
metadata addresses (169.254.169.254 ...) are always refused. Each connection resolves the host once, checks
those addresses and connects to one of them (``alict_core.models.pinned_http``), so a DNS answer that changes
after the check (rebinding) never reaches an address that was not checked. Every refusal is one ``TrustError``
naming the setting that would allow it. Settings are read from the environment of the server process at each check.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import stat
import time
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping
from urllib.parse import urlsplit

from alict_core.common.errors import AlictError

HOSTS_ENV = "ALICT_ALLOWED_HOSTS"
MODEL_ROOTS_ENV = "ALICT_MODEL_ROOTS"
PICKLE_DIRS_ENV = "ALICT_PICKLE_DIRS"
WORKSPACE_ENV = "ALICT_WORKSPACE_ROOTS"
UPLOADS = "uploads"
# Arguments every model a browser user adds may carry beside its kind's own parameters (its registry entry's).
BROWSER_COMMON_ARGS = frozenset({"task", "name"})

# Cloud instance-metadata services: never reachable, whatever the allow-list says.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TrustError(AlictError):
    """A request crossed a trust boundary; the message names the setting that would allow it."""


# ---------------------------------------------------------------- settings
def _list_env(name: str, sep: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, "").split(sep) if part.strip()]


def allowed_hosts() -> list[str]:
    """Entries of ``ALICT_ALLOWED_HOSTS`` (host names, ``*.domain`` patterns, IP addresses or CIDR networks)."""
    return [h.lower() for h in _list_env(HOSTS_ENV, ",")]


def _dirs(name: str) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in _list_env(name, os.pathsep)]


def model_roots() -> list[Path]:
    """Folders the browser may load model directories from: ``ALICT_MODEL_ROOTS``, plus the built-models folder."""
    from alict_core.common.config import models_dir

    return [*_dirs(MODEL_ROOTS_ENV), models_dir().resolve()]


def pickle_dirs() -> list[Path]:
    """Folders whose pickle/joblib files the browser may load (``ALICT_PICKLE_DIRS``; none by default)."""
    return _dirs(PICKLE_DIRS_ENV)


def operator_folders() -> dict[str, list[Path]]:
    """The folders the operator named in ``ALICT_WORKSPACE_ROOTS``, ``ALICT_MODEL_ROOTS`` and ``ALICT_PICKLE_DIRS``
    (resolved; nothing created): the browser's messages name them by role, never by path."""
    return {"<allowed folder>": _dirs(WORKSPACE_ENV), "<model folder>": _dirs(MODEL_ROOTS_ENV),
            "<pickle folder>": _dirs(PICKLE_DIRS_ENV)}


def uploads_dir() -> Path:
    """Where files uploaded through the browser are stored (inside the cache folder)."""
    from alict_core.common.config import artefact_dir

    return artefact_dir(UPLOADS).resolve()


def workspace_roots() -> list[Path]:
    """Folders static predictions and suites may be read from: ``ALICT_WORKSPACE_ROOTS``, the data folder, uploads."""
    from alict_core.common.config import data_dir
    from alict_core.common.errors import DataNotFoundError

    roots = _dirs(WORKSPACE_ENV)
    try:
        roots.append(data_dir().resolve())
    except DataNotFoundError:
        pass  # no data folder configured: it simply is not a root
    return [*roots, uploads_dir()]


# ---------------------------------------------------------------- paths
def inside(path: str | Path, roots: Iterable[Path]) -> Path | None:
    """``path`` resolved (symlinks followed) when it lies inside one of ``roots``, else None."""
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return resolved if any(resolved.is_relative_to(root) for root in roots) else None


def require_inside(path: str | Path, roots: list[Path], what: str, setting: str, uploadable: bool = False) -> Path:
    """``path`` resolved inside ``roots``, or a TrustError naming ``setting`` (the path itself is not echoed)."""
    resolved = inside(path, roots)
    if resolved is None:
        raise TrustError(
            f"{what}: it is outside the folders the app may read; the server operator can allow its folder in "
            f"{setting} (now {len(roots)} folder(s) allowed)" + (", or upload the file instead" if uploadable else "")
        )
    try:  # a name too long (or a loop) is said here, never an OSError traceback in the reader after it
        os.stat(resolved)
    except FileNotFoundError:
        pass  # missing: the reader says so, naming what it is
    except OSError as exc:
        raise TrustError(f"{what}: the path cannot be read ({exc.strerror or type(exc).__name__})") from None
    return resolved


# ---------------------------------------------------------------- endpoints
def _host_entry_matches(host: str, entry: str) -> bool:
    if entry.startswith("*."):
        return host.endswith(entry[1:])
    return host == entry


def _networks(entries: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    nets = []
    for entry in entries:
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name entry
    return nets


def _plain(address: IPAddress) -> IPAddress:
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def _is_address(host: str) -> bool:
    """Whether ``host`` is an IP address written out (no DNS lookup needed to know it)."""
    address, _, zone = host.partition("%")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    # a zone ("%eth0") belongs to an IPv6 address only, and is a plain name: "10.0.0.1%x.evil.example" was taken for
    # an address written out and handed to the resolver
    return not _ or (parsed.version == 6 and zone.isalnum())


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (a TrustError when it resolves to none)."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise TrustError(f"endpoint host {host!r} cannot be resolved ({exc}); nothing was sent") from None
    return sorted({_plain(ipaddress.ip_address(str(info[4][0]).split("%")[0])) for info in infos}, key=str)


def endpoint_name(url: str) -> str:
    """An endpoint's name in a run, its reports and messages: its URL without what may be a secret (the user and
    password before the host, the query with its tokens, the fragment): ``https://host:8000/predict``."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # a port that is no number: said by check_endpoint
        return url.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


SECRETS_ADVICE = "give them as the model's api_key (openai-chat) or as a header (http: headers=X-Api-Key:…)"
# the browser's form takes no key or header (SECURITY.md: a browser model takes only its listed arguments)
BROWSER_SECRETS_ADVICE = ("the app's form takes no key, password or header: an endpoint that needs one is run from the "
                          "command line (`--models openai-chat:…,api_key=…` or `http:…,headers=X-Api-Key:…`)")


def check_endpoint(url: str, *, loopback: bool = True) -> str:
    """Refuse ``url`` unless it is http(s) and every address of its host is allowed; returns the URL.

    Allowed: loopback addresses (only with ``loopback``: the command line and the library; for the browser a
    loopback address must be opted in like a pickle folder: an IP/CIDR entry of ``ALICT_ALLOWED_HOSTS`` covering
    it, or the host named there exactly); addresses inside an IP/CIDR entry of ``ALICT_ALLOWED_HOSTS``; any
    non-loopback address of a host named there (``api.example.com`` or ``*.example.com``) except link-local
    ones. Metadata addresses never.
    """
    try:
        parts = urlsplit(str(url).strip())
        parts.hostname  # noqa: B018 - a bracketed host that is no IPv6 address raises only when read
    except ValueError as exc:  # 'http://[::1:9/p': "Invalid IPv6 URL" ended as an internal error (exit 3)
        raise TrustError(f"endpoint URL {endpoint_name(str(url))[:80]!r} cannot be read: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TrustError(f"endpoint URL must be http:// or https:// with a host name, got scheme {parts.scheme!r}")
    if parts.username or parts.password:
        # the way to pass them differs by kind: `api_key` is openai-chat's, `http` takes a header (pass 37); the
        # app's form has neither field (pass 38)
        raise TrustError("endpoint URL must not carry credentials (user:password@); "
                         + (SECRETS_ADVICE if loopback else BROWSER_SECRETS_ADVICE))
    host = parts.hostname.lower().rstrip(".")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise TrustError("endpoint URL has an invalid port") from None
    checked_addresses(host, port, loopback=loopback)
    return url


def checked_addresses(host: str, port: int, *, loopback: bool = True) -> list[IPAddress]:
    """The addresses of ``host`` (resolved once), each allowed by the rules of :func:`check_endpoint`; a TrustError
    when any is not. A connection goes to one of these: resolving the name again to connect would let a DNS
    server answer an allowed address to the check and another (127.0.0.1) to the connection (DNS rebinding)."""
    host = host.strip("[]").lower().rstrip(".")
    entries = allowed_hosts()
    named = any(_host_entry_matches(host, e) for e in entries)
    networks = _networks(entries)
    if not loopback and not named and not _is_address(host):
        # from the browser, a host name must be named by an entry (`host`, `*.domain`); IP/CIDR entries allow
        # addresses written out. A name no entry names is refused before any lookup: resolving it sent a DNS query
        # to whoever runs that domain, and the message told the browser the address of an internal name (or
        # whether the name exists), also when the list held an IP or network entry (pass 19)
        raise TrustError(f"endpoint host {host!r} is not on the allow-list; nothing was sent (the name was not "
                         f"looked up). The server operator can allow it with {HOSTS_ENV}=<host name>[,...] (IP and "
                         "CIDR entries allow addresses written out in the URL)")
    addresses = resolve_host(host, port)
    for address in addresses:
        if address in METADATA_ADDRESSES:
            raise TrustError(f"endpoint host {host!r} is a cloud metadata address ({address}); always refused")
        if (address.is_loopback and loopback) or any(address in net for net in networks):
            continue
        if address.is_loopback:  # from the browser: the exact host name must be on the list (no *.pattern)
            if host in entries:
                continue
            raise TrustError(
                f"endpoint host {host!r} is a loopback address ({address}): the app may not reach services of "
                f"the server itself unless the server operator allows it, like a pickle folder, with "
                f"{HOSTS_ENV}={host} (or its address); nothing was sent"
            )
        if named and not address.is_link_local and not address.is_unspecified:
            continue
        default = "loopback only" if loopback else "none from the browser, not even loopback"
        raise TrustError(
            f"endpoint host {host!r} ({address}) is not on the allow-list; nothing was sent. The server operator "
            f"can allow it with {HOSTS_ENV}=<host or CIDR>[,...] (default: {default})"
        )
    return addresses


# ---------------------------------------------------------------- model references
def check_pickle_allowed(trusted: bool, origin: str = "library") -> None:
    """A pickle/joblib load needs explicit trust: ``--trust-pickle`` (CLI) or ``trusted=True`` (library)."""
    if not trusted:
        how = {"cli": "pass --trust-pickle",
               "browser": f"the server operator must name its folder in {PICKLE_DIRS_ENV}"}
        raise TrustError(
            "refusing to load a pickle/joblib file: unpickling runs arbitrary code; "
            + how.get(origin, "pass trusted=True (CLI: --trust-pickle)") + " only for files you created or trust"
        )


def browser_model_kwargs(name: str, kwargs: Mapping[str, Any], *, registered: bool,
                         params: Collection[str] | None, hub_ids: Collection[str]) -> dict[str, Any]:
    """Check a model reference received from the browser; returns the arguments to build it with.

    The caller hands in what the model registry says of ``name``: whether it is ``registered``, the ``params``
    of a kind a user may add (None for every other model) and the registered hub ids. Registered models are
    taken as they are (no arguments but ``name``); the user-added kinds are checked against the settings.
    Anything else is refused.
    """
    out = dict(kwargs)
    if not registered:
        raise TrustError(f"model kind {name!r} is not registered; the app can use only registered models")
    if params is None:
        extra = sorted(set(out) - {"name"})
        if extra:
            raise TrustError(f"registered model {name!r} takes no arguments from the app, got {extra}")
        return out
    kind = name
    if "trusted" in out:
        raise TrustError("the app cannot mark a model as trusted; the server operator sets " + PICKLE_DIRS_ENV)
    if "loopback" in out:
        raise TrustError("the app cannot allow loopback endpoints; the server operator sets " + HOSTS_ENV)
    allowed = BROWSER_COMMON_ARGS | set(params)
    extra = sorted(set(out) - allowed)
    if extra:
        raise TrustError(f"a {kind!r} model added in the app takes only {sorted(allowed)}, got {extra}")
    if kind == "hf":
        model_id = str(out.get("model_id", ""))
        if model_id not in hub_ids:
            what = "Hugging Face model (not a registered hub id, so it must be a folder under a model root)"
            out["model_id"] = str(require_inside(model_id, model_roots(), what, MODEL_ROOTS_ENV))
            out["local_files_only"] = True
    elif kind == "sklearn":
        path = str(out.get("path", ""))
        out["path"] = str(require_inside(path, pickle_dirs(), "pickle/joblib model", PICKLE_DIRS_ENV))
        out["trusted"] = True
    elif kind == "static":
        path = str(out.get("path", ""))
        out["path"] = str(require_inside(path, workspace_roots(), "stored predictions", WORKSPACE_ENV, uploadable=True))
    elif kind == "http":
        check_endpoint(str(out.get("url", "")), loopback=False)
        out["loopback"] = False  # checked again before every request, with the same rule
    elif kind == "openai-chat":
        check_endpoint(str(out.get("base_url", "")), loopback=False)
        out["loopback"] = False
    else:
        raise TrustError(f"model kind {name!r} cannot be added from the app")
    return out


def browser_suite_path(path: str | Path) -> Path:
    """A suite file named in the browser, resolved inside the workspace roots."""
    return require_inside(path, workspace_roots(), "suite file", WORKSPACE_ENV, uploadable=True)


UPLOAD_IN_USE_S = 900.0  # an upload stored or uploaded again this recently may be in use: never evicted
STALE_TEMP_S = 3600.0  # a temporary file of an upload this old was left by a killed upload: removed
_UPLOAD_TEMP = re.compile(r"^\.[0-9a-f]{8,}(?:\.(?:csv|json|jsonl|gz)){0,2}\.[0-9a-f]{12}\.tmp$")


def _upload_entries(folder: Path, now: float) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of the files kept in the uploads folder, oldest first; temporary files of killed
    uploads (this program's own names, older than ``STALE_TEMP_S``) are removed on the way."""
    entries = []
    for entry in folder.iterdir() if folder.is_dir() else ():
        try:
            info = entry.lstat()
            if not stat.S_ISREG(info.st_mode) or entry.name.startswith(".") and not _UPLOAD_TEMP.match(entry.name):
                continue
            if _UPLOAD_TEMP.match(entry.name) and now - info.st_mtime > STALE_TEMP_S:
                entry.unlink(missing_ok=True)
                continue
        except OSError:
            continue
        entries.append((info.st_mtime, info.st_size, entry))
    return sorted(entries, key=lambda item: item[0])


def _make_room(folder: Path, needed: int, name: str) -> None:
    """Evict the least recently used uploads (by mtime: stored or uploaded again) that are not in use (older than
    ``UPLOAD_IN_USE_S``) until ``needed`` more bytes fit the uploads quota; else refuse, naming no server path."""
    from alict_core.common.limits import LimitError, limits, setting

    now = time.time()
    entries = _upload_entries(folder, now)
    kept = sum(size for _, size, _ in entries)
    quota = limits().uploads_bytes
    for mtime, size, path in entries:
        if kept + needed <= quota or now - mtime < UPLOAD_IN_USE_S:
            break
        if not _UPLOAD_TEMP.match(path.name):  # a temporary file being written now is never removed
            path.unlink(missing_ok=True)
            kept -= size
    if kept + needed > quota:
        raise LimitError(f"the uploads kept with upload {name[:100]!r} (bytes): {kept + needed:,} is over the limit "
                         f"of {quota:,}; nothing was stored; the server operator can remove old uploads or raise the "
                         f"limit (setting {setting('uploads_bytes')}); uploads unused for "
                         f"{int(UPLOAD_IN_USE_S // 60)} minutes make room by themselves, try again later")


def save_upload(name: str, data: bytes) -> Path:
    """Store a browser upload under the uploads folder, named by its content hash (never by the user's path).

    An upload over the suite size limit (the limit of every reader of uploads: suites, stored predictions) is
    refused before anything is stored. The uploads kept are bounded together (``uploads_bytes``): a new upload
    evicts the least recently used ones (by mtime; the same upload again refreshes it) not used for
    ``UPLOAD_IN_USE_S``, so one browser user cannot lock every later upload out; temporary files of killed
    uploads are removed. A refusal names no server path (it is shown in the browser)."""
    from alict_core.common.hashing import hash_bytes
    from alict_core.common.jsonl import atomic_path
    from alict_core.common.limits import check_count
    from alict_core.common.manifest import folder_lock

    check_count("suite_bytes", len(data), f"upload {name[:100]!r} (bytes)", "nothing was stored")
    suffixes = "".join(s for s in Path(name).suffixes[-2:] if s.lower() in (".csv", ".json", ".jsonl", ".gz"))
    folder = uploads_dir()
    target = folder / f"{hash_bytes(data)}{suffixes.lower()}"
    with folder_lock(folder):  # uploads of other sessions evict and count under the same lock
        if target.is_file():
            try:
                os.utime(target)  # used again: the last to be evicted
            except OSError:
                pass
            return target
        _make_room(folder, len(data), name)
        with atomic_path(target) as tmp:
            Path(tmp).write_bytes(data)
    return target
