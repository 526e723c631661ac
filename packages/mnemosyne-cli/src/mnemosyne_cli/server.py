"""``wiki serve``: one process per vault that answers find's and recall's questions from
memory, as data.

It imports the core and the protocol, nothing of the command line: a request carries the
resolved vault and layout and the query (``protocol.Request``), the reply the result or why
there is none. The caller parses its own arguments, resolves its own vault, reads page
content with its own rights, renders and logs; see docs/server.md.

One thread answers every connection through a selector: a peer that is slow or silent holds
only its own connection, which its deadline ends, never another's. Nothing a request does
writes to the server's stdout or stderr.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import socket
import sys
import time

from mnemosyne_cli import protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

    from mnemosyne_core.index import VaultIndex

#: A connection gets this long to send its request and take the reply, then it is closed.
CONNECTION_DEADLINE = 5.0
#: Connections held at once; more wait in the listen backlog.
MAX_CONNECTIONS = 64
#: While the index cannot be built, a rebuild is retried this often (and on every query).
RETRY_SECONDS = 2.0
#: SO_PEERGROUPS (Linux 4.13), which the socket module does not name.
SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)


class ServerError(Exception):
    """The server cannot start (no safe socket dir, a file system without events)."""


class AlreadyRunning(Exception):
    """Another server holds the vault's lock."""

    def __init__(self, pid: str):
        super().__init__(pid)
        self.pid = pid


def peer_credentials(connection: socket.socket) -> tuple[int, int]:
    """(uid, gid) of the process at the other end of a Unix socket (SO_PEERCRED)."""
    import struct

    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, gid = struct.unpack("3i", credentials)
    return int(uid), int(gid)


def peer_uid(connection: socket.socket) -> int:
    return peer_credentials(connection)[0]


def peer_groups(connection: socket.socket) -> frozenset[int] | None:
    """The peer's supplementary groups as the kernel holds them (SO_PEERGROUPS), or None
    when the kernel cannot say."""
    import struct

    size = 4 * 256
    for _attempt in range(2):
        try:
            data = connection.getsockopt(socket.SOL_SOCKET, SO_PEERGROUPS, size)
        except OSError as error:
            if error.errno == errno.ERANGE:
                size = 4 * 65536
                continue
            return None
        return frozenset(struct.unpack(f"{len(data) // 4}I", data[: len(data) // 4 * 4]))
    return None


def peer_allowed(uid: int) -> bool:
    """Only our own user may ask: the answers carry the vault's text."""
    return uid == os.geteuid()


def own_rights() -> frozenset[int]:
    """The groups this process reads pages with: its effective gid and its supplementary
    groups."""
    return frozenset([os.getegid(), *os.getgroups()])


def same_rights(connection: socket.socket) -> bool:
    """Whether the peer reads files with our rights: the same uid (checked first), group
    and supplementary groups. A caller that lacks one of our groups would be shown pages
    the scan cannot read for it, so it is told to scan."""
    uid, gid = peer_credentials(connection)
    groups = peer_groups(connection)
    return peer_allowed(uid) and groups is not None and frozenset([gid, *groups]) == own_rights()


def prepare_socket_dir(environ: Mapping[str, str] = os.environ) -> str:
    """The socket dir, created 0700 when missing; ServerError when it is not safe."""
    path = protocol.socket_dir(environ)
    runtime = protocol.runtime_parent(environ)
    if runtime:
        reason = protocol.unsafe_dir_reason(runtime, private=False)
        if reason:
            raise ServerError(f"unsafe XDG_RUNTIME_DIR: {reason}")
    else:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    reason = protocol.unsafe_dir_reason(path)
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


class _Connection:
    """One peer: what it sent so far, what is left to send it, and when it must be done."""

    __slots__ = ("deadline", "inbox", "outbox", "same_rights")

    def __init__(self, deadline: float, same_rights: bool):
        self.deadline = deadline
        self.same_rights = same_rights
        self.inbox = b""
        self.outbox: bytes | None = None


class Server:
    """The socket, the lock and the index of one vault."""

    def __init__(self, index: VaultIndex, environ: Mapping[str, str] = os.environ):
        self.index = index
        self.environ = environ
        self.started = time.time()
        self.requests = 0
        #: Queries answered with a result (the rest were told to scan): tests check this.
        self.answered = 0
        self.listener: socket.socket | None = None
        self.socket_path = ""
        self._lock_fd = -1
        self._stopping = False
        self._wake_reader = -1
        self._wake_writer = -1
        self._logged_failure: str | None = None
        #: Where the server's own log goes (None: stderr); a server in a test's thread
        #: keeps it apart from the calls the test captures.
        self.log_stream: TextIO | None = None

    @classmethod
    def for_vault(cls, vault_real: str, dirs: list[str] | None) -> Server:
        """A server for the vault at ``vault_real`` (over ``dirs``, None: its own)."""
        from mnemosyne_core.index import VaultIndex

        return cls(VaultIndex(vault_real, dirs))

    def stop(self) -> None:
        """Make ``serve_forever`` return (from another thread, or a signal handler)."""
        self._stopping = True
        if self._wake_writer >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_writer, b"x")

    def start(self) -> float:
        """Check the vault's file system, take the lock, index, then listen; returns the
        indexing time in seconds. Raises ServerError or AlreadyRunning."""
        from mnemosyne_core.inotify import no_event_reason

        reason = no_event_reason(self.index.vault)
        if reason:
            raise ServerError(f"cannot serve {self.index.vault}: {reason}; find and recall scan it instead")
        prepare_socket_dir(self.environ)
        self._lock_fd = take_lock(protocol.lock_path(self.index.vault, self.environ))
        began = time.monotonic()
        self.index.rebuild()
        took = time.monotonic() - began
        self.socket_path = protocol.socket_path(self.index.vault, self.environ)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # we hold the lock: any socket there is a dead server's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_mask = os.umask(0o177)
        try:
            listener.bind(self.socket_path)
        finally:
            os.umask(old_mask)
        listener.listen(128)
        listener.setblocking(False)
        self.listener = listener
        self._wake_reader, self._wake_writer = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        return took

    def serve_forever(self) -> None:
        """Answer connections until ``stop``; each peer has CONNECTION_DEADLINE to send its
        request and take its reply, and none waits on another."""
        assert self.listener is not None
        selector = selectors.DefaultSelector()
        connections: dict[socket.socket, _Connection] = {}
        selector.register(self._wake_reader, selectors.EVENT_READ)
        selector.register(self.listener, selectors.EVENT_READ)
        watched_fd = -1
        try:
            while not self._stopping:
                watched_fd = self._watch_index(selector, watched_fd)
                timeout = RETRY_SECONDS if self.index.failure is not None else 60.0
                if connections:
                    timeout = max(0.0, min(timeout, *(c.deadline - time.monotonic() for c in connections.values())))
                for key, events in selector.select(timeout):
                    target = key.fileobj
                    if target is self.listener:
                        self._accept(selector, connections)
                    elif target == self._wake_reader:
                        with contextlib.suppress(OSError):
                            os.read(self._wake_reader, 64)
                    elif target == watched_fd:
                        # Keep the kernel queue short so it does not overflow between queries.
                        self.index.take_events()
                    elif isinstance(target, socket.socket) and target in connections:
                        self._serve(selector, connections, target, events)
                now = time.monotonic()
                for connection in [c for c, state in connections.items() if state.deadline <= now]:
                    self._drop(selector, connections, connection)
                if self.index.failure is not None and not connections:
                    self.index.sync()  # retry the rebuild: status and clients learn it recovered
                self._log_failure()
        finally:
            for connection in list(connections):
                self._drop(selector, connections, connection)
            selector.close()

    def _watch_index(self, selector: selectors.BaseSelector, watched_fd: int) -> int:
        """Keep the index's inotify fd registered (a rebuild replaces it)."""
        watcher = self.index.watcher
        fd = watcher.fd if watcher is not None else -1
        if fd != watched_fd:
            if watched_fd >= 0:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    selector.unregister(watched_fd)
            if fd >= 0:
                selector.register(fd, selectors.EVENT_READ)
        return fd

    def _accept(self, selector: selectors.BaseSelector, connections: dict[socket.socket, _Connection]) -> None:
        assert self.listener is not None
        while len(connections) < MAX_CONNECTIONS:
            try:
                connection, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # out of fds, say: the peer is refused, the server goes on
            try:
                connection.setblocking(False)
                if not peer_allowed(peer_uid(connection)):
                    connection.close()
                    continue
                state = _Connection(time.monotonic() + CONNECTION_DEADLINE, same_rights(connection))
            except OSError:
                connection.close()
                continue
            connections[connection] = state
            selector.register(connection, selectors.EVENT_READ)

    def _serve(
        self,
        selector: selectors.BaseSelector,
        connections: dict[socket.socket, _Connection],
        connection: socket.socket,
        events: int,
    ) -> None:
        """Move one connection on: read what it sent, answer a whole request, send."""
        state = connections[connection]
        try:
            if state.outbox is None:
                chunk = connection.recv(1 << 16)
                if not chunk:
                    self._drop(selector, connections, connection)
                    return
                state.inbox += chunk
                if len(state.inbox) < 4:
                    return
                length = protocol.frame_length(state.inbox)
                if length > protocol.MAX_REQUEST_BYTES:
                    state.outbox = protocol.frame(protocol.encode_reply(protocol.STATUS_ERROR, "request too large"))
                elif len(state.inbox) < 4 + length:
                    return
                elif len(state.inbox) > 4 + length:
                    state.outbox = protocol.frame(protocol.encode_reply(protocol.STATUS_ERROR, "one request only"))
                else:
                    state.outbox = protocol.frame(self.reply(state.inbox[4:], same_rights=state.same_rights))
                state.inbox = b""
                selector.modify(connection, selectors.EVENT_WRITE)
            sent = connection.send(state.outbox)
            state.outbox = state.outbox[sent:]
            if not state.outbox:
                self._drop(selector, connections, connection)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(selector, connections, connection)  # the peer went away: it scans

    @staticmethod
    def _drop(
        selector: selectors.BaseSelector, connections: dict[socket.socket, _Connection], connection: socket.socket
    ) -> None:
        connections.pop(connection, None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            selector.unregister(connection)
        connection.close()

    def reply(self, payload: bytes, *, same_rights: bool = True) -> bytes:
        """The reply to one request's payload; never raises for anything in it."""
        from mnemosyne_core.errors import MnemosyneError

        self.requests += 1
        try:
            request = protocol.decode_request(payload)
        except protocol.ProtocolError as error:
            return protocol.encode_reply(protocol.STATUS_ERROR, str(error))
        if request.op == protocol.OP_STATUS:
            return protocol.encode_reply(protocol.STATUS_OK, self.status_fields())
        if not same_rights:
            return protocol.encode_reply(protocol.STATUS_UNSERVED, "the caller's groups differ from the server's")
        layout, dirs_given = protocol.decode_layout(request.layout)  # checked by decode_request
        try:
            if request.op == protocol.OP_FIND:
                result, identity = self.index.find_in_memory(
                    request.vault, layout, dirs_given, request.terms, request.limit, wants_content=request.wants_content
                )
                body = protocol.find_body(result, identity)
            else:
                recalled, identities = self.index.recall_in_memory(request.vault, layout, dirs_given, request.terms)
                body = protocol.recall_body(recalled, identities if request.wants_content else None)
        except (MnemosyneError, OSError) as error:
            # NotServed, a query the scan would refuse, a vault that moved: the caller
            # scans and says what the scan says.
            return protocol.encode_reply(protocol.STATUS_UNSERVED, str(error))
        except Exception as error:
            return protocol.encode_reply(protocol.STATUS_UNSERVED, f"{type(error).__name__}: {error}")
        self.answered += 1
        return protocol.encode_reply(protocol.STATUS_OK, body)

    def status_fields(self) -> tuple[int, int, int, int, int, int, str]:
        """The status reply: pid, pages, resident bytes, index builds, requests, start time
        (seconds since the epoch), and why it does not answer ("" when it does)."""
        index = self.index
        return (
            os.getpid(),
            index.page_count,
            resident_bytes(),
            index.rebuilds,
            self.requests,
            int(self.started),
            index.failure or "",
        )

    def _log_failure(self) -> None:
        """Say once when the index stops or starts answering (never per request)."""
        failure = self.index.failure
        if failure != self._logged_failure:
            self.log(failure if failure is not None else "the index is built again; answering")
            self._logged_failure = failure

    def log(self, message: str) -> None:
        stream = self.log_stream or sys.stderr
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.write(f"mnemosyne serve: {message}\n")
            stream.flush()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
            with contextlib.suppress(OSError):
                os.unlink(self.socket_path)
        for fd in (self._wake_reader, self._wake_writer):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_reader = self._wake_writer = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1
        self.index.close()
