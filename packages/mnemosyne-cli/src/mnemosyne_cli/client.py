"""Asking a running ``wiki serve`` instead of scanning: ``RemoteBackend``.

The command runs here, in the caller's process, whichever backend answers: its own argument
parsing, vault discovery, rendering and memory log. Only the question goes to the server
(``protocol.Request``: the resolved vault and layout and the query) and only data comes
back. What needs the caller's rights is done here with them: a page's content (--cat,
recall's read entries) is read by this process, by the scan's rules, and used only when it
is the very file version the server judged.

Before anything is sent, the socket dir must be ours (a real dir, owned by us, not open to
others) and the process behind the socket must run as our uid (SO_PEERCRED). Any doubt,
failure or refusal means a scan, silently: ``_scan`` is the one place that decides it.

This module is on the start-up path of every find: it imports ``_socket`` (C, well under a
millisecond) and the protocol, never ``socket``, ``json`` or argparse.
"""

from __future__ import annotations

import os
import sys

from mnemosyne_cli import protocol

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from mnemosyne_core.backend import Backend
    from mnemosyne_core.cache import CachedScan
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult

#: The client's budget for connect, send and reply together, in seconds; past it the scan
#: answers. MNEMOSYNE_SERVER_TIMEOUT overrides it.
DEFAULT_TIMEOUT = 2.0
TIMEOUT_ENV_VAR = "MNEMOSYNE_SERVER_TIMEOUT"
#: The commands a server answers; everything else always runs here.
SERVED_COMMANDS = ("find", "recall")


def timeout_seconds(environ: Mapping[str, str] = os.environ) -> float:
    try:
        value = float(environ.get(TIMEOUT_ENV_VAR, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value < 3600 else DEFAULT_TIMEOUT


def trusted_socket(vault_real: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The path of the vault's server socket when a server may be asked: the socket dir
    passes the server's own checks (``protocol.unsafe_dir_reason``) and a socket is there.
    None otherwise; nothing is said, the caller scans."""
    runtime = protocol.runtime_parent(environ)
    if runtime and protocol.unsafe_dir_reason(runtime, private=False):
        return None
    if protocol.unsafe_dir_reason(protocol.socket_dir(environ)):
        return None
    path = protocol.socket_path(vault_real, environ)
    return path if os.path.exists(path) else None


def peer_is_us(sock: Any) -> bool:
    """Whether the process behind a connected Unix socket runs as our effective uid."""
    import _socket

    try:
        credentials = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        return False
    return int.from_bytes(credentials[4:8], sys.byteorder) == os.geteuid()


def exchange(path: str, request: bytes, timeout: float) -> bytes | None:
    """Send one request frame to the server at ``path`` and return its reply payload, or
    None on any failure, a server of another uid included; never blocks past ``timeout``
    seconds."""
    import _socket
    import time

    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        if not peer_is_us(sock):
            return None
        sock.sendall(protocol.frame(request))
        head = _recv_exactly(sock, 4, deadline)
        if head is None:
            return None
        length = protocol.frame_length(head)
        if length > protocol.MAX_REPLY_BYTES:
            return None
        return _recv_exactly(sock, length, deadline)
    except OSError:
        return None
    finally:
        sock.close()


def _recv_exactly(sock: Any, count: int, deadline: float) -> bytes | None:
    import time

    chunks = []
    while count > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)
        chunk = sock.recv(min(count, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def backend_for(*, no_cache: bool, no_server: bool) -> Backend:
    """Where find's and recall's pages come from: with --no-cache, the plain scan; with
    --no-server, the scan through the page cache; else the vault's server when one runs,
    which falls back to the cached scan."""
    if no_cache:
        from mnemosyne_core.backend import SCAN

        return SCAN
    if no_server:
        from mnemosyne_core.cache import CachedScan

        return CachedScan()
    return RemoteBackend()


class RemoteBackend:
    """The Backend that asks the vault's server, and scans whenever it cannot answer."""

    def __init__(self, environ: Mapping[str, str] = os.environ):
        self.environ = environ
        #: Whether the last call was answered by a server (tests check it).
        self.served = False

    def search(
        self,
        vault: str | os.PathLike[str] | None,
        keywords: Sequence[str],
        *,
        limit: int = 20,
        dirs: Sequence[str] | None = None,
        keep_content: bool = False,
    ) -> FindResult:
        from mnemosyne_core.results import check_query
        from mnemosyne_core.vault import read_as_judged, resolve_vault

        self.served = False
        # The scan's errors, in the scan's order, come from here; a server never words one.
        check_query(keywords, limit)
        vault_real = resolve_vault(vault, self.environ)
        body = self._ask(protocol.OP_FIND, vault_real, dirs, limit, keep_content, keywords)
        result = None
        if body is not None:
            try:
                result, identity = protocol.find_result(body)
            except protocol.ProtocolError:
                result = None
        if result is not None:
            if not (keep_content and result.total == 1):
                self.served = True
                return result
            # The one page --cat prints is read here, with the caller's rights.
            content = read_as_judged(vault_real, result.matches[0].path, identity) if identity is not None else None
            if content is not None:
                result.matches[0].content = content
                self.served = True
                return result
        return self._scan().search(vault, keywords, limit=limit, dirs=dirs, keep_content=keep_content)

    def recall(
        self,
        vault: str | os.PathLike[str] | None,
        topic: str | Sequence[str],
        *,
        dirs: Sequence[str] | None = None,
    ) -> RecallResult:
        from mnemosyne_core.recall import split_topic
        from mnemosyne_core.vault import resolve_vault

        self.served = False
        split_topic(topic)
        vault_real = resolve_vault(vault, self.environ)
        parts = [topic] if isinstance(topic, str) else list(topic)
        body = self._ask(protocol.OP_RECALL, vault_real, dirs, 0, True, parts)
        if body is not None:
            from mnemosyne_core.recall import fill_read_entries

            try:
                result, identities = protocol.recall_result(body)
            except protocol.ProtocolError:
                return self._scan().recall(vault, topic, dirs=dirs)
            if identities is not None and fill_read_entries(result, identities):
                self.served = True
                return result
        return self._scan().recall(vault, topic, dirs=dirs)

    def _ask(
        self,
        op: str,
        vault_real: str,
        dirs: Sequence[str] | None,
        limit: int,
        wants_content: bool,
        terms: Sequence[str],
    ) -> Any:
        """The body of the server's answer, or None: no server, not ours, no answer in
        time, or it declined. The layout is resolved here, so its errors are the scan's."""
        from mnemosyne_core.config import vault_layout

        path = trusted_socket(vault_real, self.environ)
        if path is None:
            self._no_server(vault_real)
            return None
        layout = vault_layout(vault_real, dirs)
        words = [vault_real, *layout.dirs, *layout.exclude, *terms]
        if any("\0" in word for word in words):
            return None  # no field of a request can hold one; the scan says what it means
        items = protocol.layout_items(layout, bool(dirs))
        request = protocol.Request(op, vault_real, items, limit, wants_content, terms)
        reply = exchange(path, request.encode(), timeout_seconds(self.environ))
        if reply is None:
            self._no_server(vault_real)
            return None
        try:
            status, body = protocol.decode_reply(reply)
        except protocol.ProtocolError:
            return None
        return body if status == protocol.STATUS_OK else None

    def _no_server(self, vault_real: str) -> None:
        """No server answered for the vault (none is there, or it did not answer in time):
        one starts now if the vault's config says ``[serve] auto`` (docs/server.md), and
        this call scans."""
        from mnemosyne_cli import autostart

        autostart.start_if_wanted(vault_real, self.environ)

    def _scan(self) -> CachedScan:
        """What answers when no server does: the scan, through the page cache."""
        from mnemosyne_core.cache import CachedScan

        return CachedScan(self.environ)


class Status:
    """What a running server says about itself."""

    __slots__ = ("builds", "failure", "pages", "pid", "requests", "resident_bytes", "started")

    def __init__(self, fields: Any):
        pid, pages, resident, builds, requests, started, failure = fields
        numbers = (pid, pages, resident, builds, requests, started)
        if not all(isinstance(number, int) for number in numbers) or not isinstance(failure, str):
            raise ValueError("not a status")
        self.pid, self.pages, self.resident_bytes = pid, pages, resident
        self.builds, self.requests, self.started = builds, requests, started
        #: Why the server answers no query now ("" when it answers): every call scans.
        self.failure = failure

    def summary(self) -> str:
        """``pid N, P pages, M MiB resident``: the line wiki info and serve --status print."""
        return f"pid {self.pid}, {self.pages} pages, {self.resident_bytes / (1 << 20):.1f} MiB resident"

    def not_answering(self) -> str:
        """``; not answering: WHY`` after the summary while the server answers nothing
        (every find and recall scans), else empty."""
        return f"; not answering: {self.failure}" if self.failure else ""

    def to_dict(self) -> dict[str, int | str | None]:
        return {
            "pid": self.pid,
            "pages": self.pages,
            "resident_bytes": self.resident_bytes,
            "not_answering": self.failure or None,
        }


def status(vault_real: str, environ: Mapping[str, str] = os.environ) -> Status | None:
    """What the server running for a vault says, or None when none answers."""
    path = trusted_socket(vault_real, environ)
    if path is None:
        return None
    reply = exchange(path, protocol.Request(protocol.OP_STATUS).encode(), timeout_seconds(environ))
    if reply is None:
        return None
    try:
        state, body = protocol.decode_reply(reply)
        return Status(body) if state == protocol.STATUS_OK else None
    except (protocol.ProtocolError, TypeError, ValueError):
        return None


if TYPE_CHECKING:

    def _remote_is_a_backend(remote: RemoteBackend) -> Backend:
        """mypy --strict holds the client to the interface every command asks."""
        return remote
