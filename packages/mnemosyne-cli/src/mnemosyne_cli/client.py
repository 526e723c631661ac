"""Asking a running ``wiki serve`` what changed: ``ServerChanges``, which the indexed scan
(``mnemosyne_core.cache.IndexedScan``) calls instead of listing the vault.

Everything runs here, in the caller's process, with its rights: argument parsing, vault
discovery, reading and matching pages, rendering, the memory log. Only a token goes to the
server and only a token and paths come back; the caller then reads those pages itself.

Before anything is sent, the socket dir must be ours (a real dir, owned by us, not open to
others) and the process behind the socket must run as our uid (SO_PEERCRED); its answer is
used only when it sees the vault this process sees (the same mount namespace, the same
dir at the vault's path). Any doubt, failure or refusal means the vault is listed,
silently.

This module is on the start-up path of every find: it imports ``_socket`` (C, well under a
millisecond) and the protocol, never ``socket``, ``json`` or argparse.
"""

from __future__ import annotations

import os
import sys
import time

from mnemosyne_cli import autostart, protocol  # both import nothing but os, sys, time and the protocol

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from typing import Any

    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.backend import Backend

#: The client's budget for connect, send and reply together, in seconds; past it the scan
#: answers. MNEMOSYNE_SERVER_TIMEOUT overrides it.
DEFAULT_TIMEOUT = 2.0
TIMEOUT_ENV_VAR = "MNEMOSYNE_SERVER_TIMEOUT"


def timeout_seconds(env: Environment) -> float:
    try:
        value = float(env.environ.get(TIMEOUT_ENV_VAR, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value < 3600 else DEFAULT_TIMEOUT


def trusted_socket(vault_real: str, env: Environment) -> str | None:
    """The path of the vault's server socket when a server may be asked: the socket dir
    passes the server's own checks (``protocol.unsafe_dir_reason``) and a socket is there.
    None otherwise; nothing is said, the caller scans."""
    runtime = protocol.runtime_parent(env)
    if runtime and protocol.unsafe_dir_reason(runtime, private=False):
        return None
    if protocol.unsafe_dir_reason(protocol.socket_dir(env)):
        return None
    path = protocol.socket_path(vault_real, env)
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


def backend_for(env: Environment, *, no_cache: bool, no_server: bool) -> Backend:
    """Where find's and recall's pages come from: with --no-cache, the plain scan; with
    --no-server or MNEMOSYNE_NO_SERVER, the vault's index, checked by stat; else the index told by the vault's
    server what changed when one of ours answers, checked by stat when none does."""
    from mnemosyne_core.cache import IndexedScan

    if no_cache:
        return IndexedScan(env.environ, use_index=False)
    if no_server or env.environ.get(autostart.NO_SERVER_ENV_VAR):
        return IndexedScan(env.environ)
    return IndexedScan(env.environ, ServerChanges(env))


class ServerChanges:
    """Asks the vault's ``wiki serve`` what changed since a token (``cache.ChangeSource``):
    (the token now, the changed paths or None for "rescan"), or None when no server of ours
    answers in time, or one that sees another vault (another mount namespace, another dir
    at the vault's path). When none answers a call that then lists the vault, one starts
    on a big vault, or as its config's ``[serve] auto`` says (``unanswered``;
    docs/server.md)."""

    def __init__(self, env: Environment):
        self.env = env
        #: Whether the last question got an answer (tests check it).
        self.answered = False

    def __call__(self, vault_real: str, token: str | None) -> tuple[str, tuple[str, ...] | None] | None:
        self.answered = False
        path = trusted_socket(vault_real, self.env)
        if path is None:
            return None
        request = protocol.Request(protocol.OP_CHANGES, vault_real, token or "")
        reply = exchange(path, request.encode(), timeout_seconds(self.env))
        if reply is None:
            return None
        try:
            status, body = protocol.decode_reply(reply)
            if status != protocol.STATUS_OK:
                return None
            now, paths, mount_namespace, root = protocol.decode_changes(body)
            info = os.stat(vault_real)
        except (protocol.ProtocolError, OSError):
            return None
        if mount_namespace != protocol.mount_namespace() or root != (info.st_dev, info.st_ino):
            return None  # it sees other mounts, or another dir at the vault's path
        self.answered = True
        return now, paths

    def available(self, vault_real: str) -> bool:
        return trusted_socket(vault_real, self.env) is not None

    def unanswered(self, vault_real: str, serve_auto: bool | None, pages: int) -> None:
        if autostart.wanted(serve_auto, pages):
            autostart.start_if_wanted(vault_real, self.env)


class Status:
    """What a running server says about itself."""

    __slots__ = ("builds", "dirs", "failure", "pid", "requests", "resident_bytes", "started")

    def __init__(self, body: Any):
        """From a status reply's body; ProtocolError when it is not one (``protocol.decode_status``)."""
        pid, dirs, resident, builds, requests, started, failure = protocol.decode_status(body)
        self.pid, self.dirs, self.resident_bytes = pid, dirs, resident
        self.builds, self.requests, self.started = builds, requests, started
        #: Why the server answers no query now ("" when it answers): every call scans.
        self.failure = failure

    def summary(self) -> str:
        """``pid N, D dirs watched, M MiB resident``: the line wiki info and serve --status print."""
        return f"pid {self.pid}, {self.dirs} dirs watched, {self.resident_bytes / (1 << 20):.1f} MiB resident"

    def not_answering(self) -> str:
        """``; every caller lists the vault: WHY`` after the summary while the server answers
        every question with "rescan", else empty."""
        return f"; every caller lists the vault: {self.failure}" if self.failure else ""

    def to_dict(self) -> dict[str, int | str | None]:
        return {
            "pid": self.pid,
            "watched_dirs": self.dirs,
            "resident_bytes": self.resident_bytes,
            "not_answering": self.failure or None,
        }


def status(vault_real: str, env: Environment) -> Status | None:
    """What the server running for a vault says, or None when none answers."""
    path = trusted_socket(vault_real, env)
    if path is None:
        return None
    reply = exchange(path, protocol.Request(protocol.OP_STATUS).encode(), timeout_seconds(env))
    if reply is None:
        return None
    try:
        state, body = protocol.decode_reply(reply)
        return Status(body) if state == protocol.STATUS_OK else None
    except (protocol.ProtocolError, TypeError, ValueError):
        return None
