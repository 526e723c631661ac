"""``wiki serve``: one process per vault that answers find and recall from memory.

It runs the CLI itself for each request (``app.main`` with the caller's words, working
directory and environment, and a Console that captures), with the index standing in for
the scan. So parsing, messages, formatting and exit codes are the CLI's own code, and
only where pages come from differs. See docs/server.md.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import socket
import sys
import threading
import time

from mnemosyne_cli import client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from mnemosyne_core.index import VaultIndex

#: A peer gets this long to send its request before the server moves on.
REQUEST_TIMEOUT = 5.0


class ServerError(Exception):
    """The server cannot start (no safe socket dir, a file system without events)."""


class AlreadyRunning(Exception):
    """Another server holds the vault's lock."""

    def __init__(self, pid: str):
        super().__init__(pid)
        self.pid = pid


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    import struct

    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return int(uid)


def peer_allowed(uid: int) -> bool:
    """Only our own user may ask: the answers carry the vault's text."""
    return uid == os.geteuid()


def prepare_socket_dir(environ: Mapping[str, str] = os.environ) -> str:
    """The socket dir, created 0700 when missing; ServerError when it is not safe."""
    path = client.socket_dir(environ)
    parent = os.path.dirname(path)
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and parent == runtime:
        reason = client.unsafe_dir_reason(runtime, private=False)
        if reason:
            raise ServerError(f"unsafe XDG_RUNTIME_DIR: {reason}")
    else:
        os.makedirs(parent, mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    reason = client.unsafe_dir_reason(path)
    if reason:
        raise ServerError(f"unsafe socket dir: {reason}; remove it or fix its owner and mode (0700)")
    return path


def take_lock(path: str) -> int:
    """Hold the vault's lock (flock on ``path``, our pid written in it) for as long as the
    returned fd stays open; AlreadyRunning with the holder's pid when another has it."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            os.close(fd)
            raise
        pid = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise AlreadyRunning(pid) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    return fd


def exit_on_sigterm() -> None:
    """Make SIGTERM (systemctl stop) end the server as SystemExit(0), so it cleans up."""
    import signal

    def stop(_signal: int, _frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)


def resident_bytes() -> int:
    """This process's resident memory (RSS), from /proc."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class caller_context:
    """Run as the caller would: in its working directory, with its environment. The server
    answers one request at a time, so swapping them process-wide is safe."""

    def __init__(self, cwd: str, environ: dict[str, str]):
        self.cwd = cwd
        self.environ = environ
        self.own_cwd = ""
        self.own_environ: dict[str, str] = {}

    def __enter__(self) -> None:
        self.own_cwd = os.getcwd()
        self.own_environ = dict(os.environ)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.environ)

    def __exit__(self, *exc: object) -> None:
        os.chdir(self.own_cwd)
        os.environ.clear()
        os.environ.update(self.own_environ)


class _CapturedText(io.StringIO):
    """stderr as the caller's: a terminal or not, which decides colour."""

    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class _CapturedBytes(io.TextIOWrapper):
    """stdout as the caller's, with the bytes --cat writes kept as they are."""

    def __init__(self, tty: bool):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def value(self) -> bytes:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue()


class Server:
    """The socket, the lock and the index of one vault."""

    def __init__(self, index: VaultIndex, environ: Mapping[str, str] = os.environ):
        self.index = index
        self.environ = environ
        self.started = time.time()
        self.requests = 0
        #: Calls answered with output (the rest were told to scan): tests check this.
        self.answered = 0
        self.listener: socket.socket | None = None
        self.socket_path = ""
        self._lock_fd = -1
        self._stopping = threading.Event()

    @classmethod
    def for_vault(cls, vault_real: str, dirs: list[str] | None) -> Server:
        """A server for the vault at ``vault_real`` (over ``dirs``, None: its own)."""
        from mnemosyne_core.index import VaultIndex

        return cls(VaultIndex(vault_real, dirs))

    def stop(self) -> None:
        """Make ``serve_forever`` return (from another thread, or a signal handler)."""
        self._stopping.set()
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
            wake.settimeout(1.0)
            wake.connect(self.socket_path)

    def start(self) -> float:
        """Check the vault's file system, take the lock, index, then listen; returns the
        indexing time in seconds. Raises ServerError or AlreadyRunning."""
        from mnemosyne_core.inotify import no_event_reason

        reason = no_event_reason(self.index.vault)
        if reason:
            raise ServerError(f"cannot serve {self.index.vault}: {reason}; find and recall scan it instead")
        prepare_socket_dir(self.environ)
        self._lock_fd = take_lock(client.lock_path(self.index.vault, self.environ))
        began = time.monotonic()
        self.index.rebuild()
        took = time.monotonic() - began
        self.socket_path = client.socket_path(self.index.vault, self.environ)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # we hold the lock: any socket there is a dead server's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_mask = os.umask(0o177)
        try:
            listener.bind(self.socket_path)
        finally:
            os.umask(old_mask)
        listener.listen(64)
        self.listener = listener
        return took

    def serve_forever(self) -> None:
        """Answer connections one at a time until ``stop``."""
        import select

        assert self.listener is not None
        while not self._stopping.is_set():
            watcher = self.index.watcher
            readable = [self.listener] + ([watcher.fd] if watcher is not None and watcher.fd >= 0 else [])
            ready, _, _ = select.select(readable, [], [], 60.0)
            if self._stopping.is_set():
                break
            if self.listener in ready:
                connection, _ = self.listener.accept()
                with connection:
                    self.handle(connection)
            elif ready:
                # Keep the kernel queue short so it does not overflow between queries.
                self.index.take_events()

    def handle(self, connection: socket.socket) -> None:
        """Answer one connection; never raises for anything the peer sends or does."""
        try:
            if not peer_allowed(peer_uid(connection)):
                return
            deadline = time.monotonic() + REQUEST_TIMEOUT
            head = client.recv_exactly(connection, 4, deadline)
            if head is None:
                return
            length = int.from_bytes(head, "big")
            if length > client.MAX_REQUEST_BYTES:
                reply = client.encode_reply(client.STATUS_ERROR)  # refused unread
            else:
                payload = client.recv_exactly(connection, length, deadline)
                if payload is None:
                    return
                reply = self.reply(payload)
            connection.settimeout(REQUEST_TIMEOUT)
            connection.sendall(client.frame(reply))
        except OSError:
            pass  # the client went away: it scans instead

    def reply(self, payload: bytes) -> bytes:
        """The reply to one request's payload."""
        self.requests += 1
        request = client.decode_request(payload)
        if isinstance(request, str):
            return client.encode_reply(request)
        if request.op == "status":
            return client.encode_reply(client.STATUS_OK, 0, self.status_text().encode("utf-8"))
        words = request.words
        if request.op != "run" or not os.path.isabs(request.cwd):
            return client.encode_reply(client.STATUS_ERROR)
        if len(words) < 2 or words[0] != "wiki" or words[1] not in client.SERVED_COMMANDS:
            return client.encode_reply(client.STATUS_ERROR)
        try:
            return self.run_command(request)
        except Exception as error:
            self.log(f"request failed, the client scans instead: {type(error).__name__}: {error}")
            return client.encode_reply(client.STATUS_FALLBACK)

    def run_command(self, request: client.Request) -> bytes:
        """Run the CLI on the request's words as the caller, the index standing in for the
        scan; NotServed (or any OSError) makes the caller scan instead."""
        import importlib

        from mnemosyne_cli.output import Console

        # app imports this module's command; importing it back by name keeps mypy's
        # import graph acyclic (mypy 2.4 crashes on the cycle).
        app = importlib.import_module("mnemosyne_cli.app")
        from mnemosyne_core.index import NotServed

        stdout = _CapturedBytes(request.ttys[0])
        stderr = _CapturedText(request.ttys[1])
        try:
            with caller_context(request.cwd, request.environ):
                code = int(app.main(request.words, console=Console(stdout, stderr), backend=self.index))
        except (NotServed, OSError):
            return client.encode_reply(client.STATUS_FALLBACK)
        self.answered += 1
        return client.encode_reply(client.STATUS_OK, code, stdout.value(), stderr.getvalue())

    def status_text(self) -> str:
        """The status reply: pid, pages, resident bytes, index builds, requests, start time
        (seconds since the epoch), as numbers on one line."""
        index = self.index
        numbers = (os.getpid(), index.page_count, resident_bytes(), index.rebuilds, self.requests, int(self.started))
        return " ".join(map(str, numbers)) + "\n"

    def log(self, message: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"mnemosyne serve: {message}\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
            with contextlib.suppress(OSError):
                os.unlink(self.socket_path)
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1
        self.index.close()


class Status:
    """What a running server says about itself."""

    __slots__ = ("builds", "pages", "pid", "requests", "resident_bytes", "started")

    def __init__(self, line: str):
        pid, pages, resident, builds, requests, started = (int(number) for number in line.split())
        self.pid, self.pages, self.resident_bytes = pid, pages, resident
        self.builds, self.requests, self.started = builds, requests, started

    def summary(self) -> str:
        """``pid N, P pages, M MiB resident``: the line wiki info and serve --status print."""
        return f"pid {self.pid}, {self.pages} pages, {self.resident_bytes / (1 << 20):.1f} MiB resident"

    def to_dict(self) -> dict[str, int]:
        return {"pid": self.pid, "pages": self.pages, "resident_bytes": self.resident_bytes}


def status(vault_real: str, environ: Mapping[str, str] = os.environ) -> Status | None:
    """What the server running for a vault says, or None when none answers."""
    path = client.socket_path(vault_real, environ)
    if not os.path.exists(path):
        return None
    request = client.encode_request("status", "/", {}, [])
    reply = client.exchange(path, request, client.timeout_seconds(environ))
    answer = client.decode_reply(reply) if reply is not None else None
    if answer is None:
        return None
    try:
        return Status(answer.stdout.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
