"""``wiki serve``: one process per vault that watches it and answers one question, which
files changed since a token (``changes.VaultWatch``), as data.

It never reads a page and never judges a query: the caller lists, reads and matches with
its own rights, through its index (``mnemosyne_core.cache``), and only skips listing
the vault and stat-ing the pages the server says are unchanged; see docs/server.md.

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
import time

from mnemosyne_cli import protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from mnemosyne_cli.environment import Environment
    from mnemosyne_core.changes import VaultWatch

#: A connection gets this long to send its request and take the reply, then it is closed.
CONNECTION_DEADLINE = 5.0
#: Connections held at once; more wait in the listen backlog.
MAX_CONNECTIONS = 64
#: While the watch cannot be built, the loop wakes this often to try again
#: (``changes.RETRY_SECONDS`` bounds how often a build is tried, by the loop or a question).
RETRY_SECONDS = 2.0


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
    """Only our own user may ask: the answers name the vault's files."""
    return uid == os.geteuid()


def prepare_socket_dir(env: Environment) -> str:
    """The socket dir, created 0700 when missing; ServerError when it is not safe."""
    path = protocol.socket_dir(env)
    runtime = protocol.runtime_parent(env)
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

    # A FIFO or symlink planted at the lock's path is refused, never waited on or followed.
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o600)
    import stat

    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ServerError(f"{path} is not a regular file; remove it")
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

    __slots__ = ("deadline", "inbox", "outbox")

    def __init__(self, deadline: float):
        self.deadline = deadline
        self.inbox = b""
        self.outbox: bytes | None = None


class Server:
    """The socket, the lock and the watch of one vault."""

    def __init__(self, watch: VaultWatch, env: Environment):
        self.watch = watch
        self.env = env
        self.started = time.time()
        self.requests = 0
        #: Questions answered with a list of changed paths (the rest were told to rescan).
        self.answered = 0
        self.listener: socket.socket | None = None
        self.socket_path = ""
        self._lock_fd = -1
        self._stopping = False
        self._wake_reader = -1
        self._wake_writer = -1
        self._logged_doubt: str | None = None
        #: The watch's inotify fd the selector has, and the build it is of (-1, -1: none).
        self._watched: tuple[int, int] = (-1, -1)
        self._mount_namespace = protocol.mount_namespace()
        #: Where the server's own log goes (None: the call's stderr); a server in a test's thread
        #: keeps it apart from the calls the test captures.
        self.log_stream: TextIO | None = None
        #: ``serve_forever`` returns once no call asked what changed for this long (None:
        #: never). A status request is no call: ``wiki info`` must not keep a server alive.
        self.idle_seconds: float | None = None
        #: When a call last asked what changed (``time.monotonic``; until one does, when
        #: ``start`` was done).
        self.last_call = time.monotonic()
        #: Why ``serve_forever`` returned by itself (None: it was stopped).
        self.exited: str | None = None

    @classmethod
    def for_vault(cls, vault_real: str, env: Environment) -> Server:
        """A server for the vault at ``vault_real``, its cookies in the private socket dir."""
        from mnemosyne_core.changes import VaultWatch

        return cls(VaultWatch(vault_real, protocol.socket_dir(env), env.home), env)

    def stop(self) -> None:
        """Make ``serve_forever`` return (from another thread, or a signal handler)."""
        self._stopping = True
        if self._wake_writer >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_writer, b"x")

    def start(self) -> float:
        """Check the vault's file system, take the lock, watch, then listen; returns the
        time the watch took in seconds. Raises ServerError or AlreadyRunning."""
        from mnemosyne_core.inotify import no_event_reason

        vault = self.watch.vault
        reason = no_event_reason(vault)
        if reason:
            raise ServerError(f"cannot serve {vault}: {reason}; find and recall list it instead")
        prepare_socket_dir(self.env)
        self._lock_fd = take_lock(protocol.lock_path(vault, self.env))
        began = time.monotonic()
        self.watch.rebuild()
        took = time.monotonic() - began
        self.socket_path = protocol.socket_path(vault, self.env)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # we hold the lock: any socket there is a dead server's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old_mask = os.umask(0o177)
            try:
                listener.bind(self.socket_path)
            finally:
                os.umask(old_mask)
            listener.listen(128)
            listener.setblocking(False)
        except BaseException:
            # Not yet self.listener, which close() would close: a failed bind (a socket path
            # too long for sun_path, say) must not leave the socket to the garbage collector.
            listener.close()
            raise
        self.listener = listener
        self._wake_reader, self._wake_writer = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.last_call = time.monotonic()  # the idle time runs from here, not from the watch's build
        return took

    def serve_forever(self) -> None:
        """Answer connections until ``stop``; each peer has CONNECTION_DEADLINE to send its
        request and take its reply, and none waits on another. While MAX_CONNECTIONS are
        open the listener is not watched: more peers wait in the backlog, and nothing spins."""
        assert self.listener is not None
        selector = selectors.DefaultSelector()
        connections: dict[socket.socket, _Connection] = {}
        selector.register(self._wake_reader, selectors.EVENT_READ)
        self._watched = (-1, -1)  # this selector has no watch fd yet
        listening = False
        try:
            while not self._stopping:
                if not connections and self._idle_for() <= 0:
                    assert self.idle_seconds is not None
                    idle = self.idle_seconds / 60
                    self.exited = f"no call for {idle:g} minute{'' if idle == 1 else 's'}"
                    self.log(f"{self.exited}: exiting")
                    return
                watched_fd = self._watch_fd(selector)
                if listening != (len(connections) < MAX_CONNECTIONS):
                    if listening:
                        selector.unregister(self.listener)
                    else:
                        selector.register(self.listener, selectors.EVENT_READ)
                    listening = not listening
                failed = watched_fd < 0 or self.watch.failed
                timeout = RETRY_SECONDS if failed else 60.0
                if connections:
                    timeout = max(0.0, min(timeout, *(c.deadline - time.monotonic() for c in connections.values())))
                else:
                    timeout = max(0.0, min(timeout, self._idle_for()))
                for key, events in selector.select(timeout):
                    target = key.fileobj
                    if target is self.listener:
                        self._accept(selector, connections)
                        watched_fd = self._watched[0]
                    elif target == self._wake_reader:
                        with contextlib.suppress(OSError):
                            os.read(self._wake_reader, 64)
                    elif target == watched_fd:
                        # Keep the kernel queue short so it does not overflow between questions.
                        self.watch.take_events()
                    elif isinstance(target, socket.socket) and target in connections:
                        self._serve(selector, connections, target, events)
                now = time.monotonic()
                for connection in [c for c, state in connections.items() if state.deadline <= now]:
                    self._drop(selector, connections, connection)
                if failed and not connections:
                    self.watch.sync()  # retry the watch: status and callers learn it recovered
                self._log_doubt()
        finally:
            for connection in list(connections):
                self._drop(selector, connections, connection)
            selector.close()

    def _idle_for(self) -> float:
        """Seconds left before the server exits for want of a call (inf: never)."""
        if self.idle_seconds is None:
            return float("inf")
        return self.last_call + self.idle_seconds - time.monotonic()

    def _watch_fd(self, selector: selectors.BaseSelector) -> int:
        """Keep the watch's inotify fd registered, and return it. A rebuild (answering a
        question, say) closes the old fd: its number is free for the next connection the
        same batch accepts, or for the new fd itself, so the old registration goes first,
        and the build tells a new fd from an old one of the same number."""
        current = (self.watch.fd, self.watch.rebuilds)
        if current != self._watched:
            old_fd = self._watched[0]
            if old_fd >= 0:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    selector.unregister(old_fd)
            if current[0] >= 0:
                selector.register(current[0], selectors.EVENT_READ)
            self._watched = current
        return current[0]

    def _accept(self, selector: selectors.BaseSelector, connections: dict[socket.socket, _Connection]) -> None:
        assert self.listener is not None
        # Before a connection can take the number of an fd a rebuild just closed.
        self._watch_fd(selector)
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
            except OSError:
                connection.close()
                continue
            connections[connection] = _Connection(time.monotonic() + CONNECTION_DEADLINE)
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
                chunk = connection.recv(protocol.MAX_REQUEST_BYTES + 8)
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
                    state.outbox = protocol.frame(self.reply(state.inbox[4:]))
                state.inbox = b""
                selector.modify(connection, selectors.EVENT_WRITE)
            sent = connection.send(state.outbox)
            state.outbox = state.outbox[sent:]
            if not state.outbox:
                self._drop(selector, connections, connection)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(selector, connections, connection)  # the peer went away: it lists the vault

    @staticmethod
    def _drop(
        selector: selectors.BaseSelector, connections: dict[socket.socket, _Connection], connection: socket.socket
    ) -> None:
        connections.pop(connection, None)
        with contextlib.suppress(KeyError, ValueError, OSError):
            selector.unregister(connection)
        connection.close()

    def reply(self, payload: bytes) -> bytes:
        """The reply to one request's payload; never raises for anything in it."""
        self.requests += 1
        try:
            request = protocol.decode_request(payload)
        except protocol.ProtocolError as error:
            return protocol.encode_reply(protocol.STATUS_ERROR, str(error))
        if request.op == protocol.OP_STATUS:
            return protocol.encode_reply(protocol.STATUS_OK, self.status_body())
        if request.vault != self.watch.vault:
            return protocol.encode_reply(protocol.STATUS_ERROR, "this server watches another vault")
        self.last_call = time.monotonic()
        try:
            token, paths = self.watch.changes_since(request.token or None)
        except Exception as error:
            # The watch failed mid-question: "rescan" now, and the next question rebuilds it.
            from mnemosyne_core.changes import CANNOT_WATCH

            self.watch.doubt = f"{CANNOT_WATCH}{type(error).__name__}: {error}"
            token, paths = self.watch.token(), None
        # Answered: the changes since the caller's token, or the token a caller about to
        # list the vault keeps; not a "rescan" told to a caller that had a token.
        self.answered += paths is not None or (not request.token and self.watch.doubt is None)
        # The root this build watches: a vault dir replaced at its path is watched anew by
        # the rebuild its old watch's loss caused, and callers believe the new one.
        body = protocol.changes_body(token, paths, self._mount_namespace, self.watch.root)
        return protocol.encode_reply(protocol.STATUS_OK, body)

    def status_body(self) -> Any:
        """The status reply's body (``protocol.status_body``)."""
        watch = self.watch
        return protocol.status_body(
            pid=os.getpid(),
            dirs=watch.watched_dirs,
            resident_bytes=resident_bytes(),
            builds=watch.rebuilds,
            requests=self.requests,
            started=int(self.started),
            failure=watch.doubt or self._root_replaced() or "",
        )

    def _root_replaced(self) -> str | None:
        """Why callers believe no answer while the dir at the vault's path is not the one
        watched (replaced, and its old watch's loss not read yet), else None."""
        try:
            info = os.stat(self.watch.vault)
        except OSError as error:
            return f"the vault dir cannot be reached: {error.strerror}"
        if (info.st_dev, info.st_ino) != self.watch.root:
            return "the vault dir at its path is not the one watched; the next question watches it anew"
        return None

    def _log_doubt(self) -> None:
        """Say once when the watch stops or starts answering with changes (never per request)."""
        doubt = self.watch.doubt
        if doubt != self._logged_doubt:
            self.log(f"every caller lists the vault: {doubt}" if doubt is not None else "watching; answering")
            self._logged_doubt = doubt

    def log(self, message: str) -> None:
        stream = self.log_stream or self.env.stderr
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
        self.watch.close()
