"""A ``wiki serve`` that starts itself, where it pays: on a vault whose listing holds at
least AUTO_START_PAGES pages, or at any size with ``[serve] auto = true`` in
``.mnemosyne.toml``; never with ``auto = false``, ``--no-server`` or NO_SERVER_ENV_VAR.

When a find or recall finds no server to ask, ``start_if_wanted`` starts ``mnemosyne wiki
serve --vault VAULT`` fully detached (a new session, cwd ``/``, stdin ``/dev/null``, stdout
and stderr the log, every other fd closed) and returns at once: the call answers by its
scan, later calls are the server's. The server exits by itself once no call came for
``[serve] idle_minutes``, as Gradle's daemon and Bazel's server do.

Files, next to the vault's socket in the runtime dir (``protocol.socket_dir``):

- ``<key>.autostart``: the spawn lock. The caller takes an exclusive ``flock`` on it
  without waiting, and the server inherits that lock (fd 3) and keeps it for its whole
  life. So at most one auto-started server per vault is starting or running, however many
  calls arrive at once; a call that finds it locked spawns nothing. The server writes
  ``<pid> <start time>`` in it before it runs.
- ``<key>.log``: the auto-started server's stdout and stderr, truncated at each start.

Nothing here may change a call's output or exit code: every failure is silent, and the
server's own failure to start shows only in its log (``wiki info`` names it).

Start-up: this module imports only ``os``, ``sys`` and ``time``; ``fcntl`` is loaded only
by a call that starts a server, never by a plain find on a small vault.
"""

from __future__ import annotations

import os
import sys
import time

from mnemosyne_cli import protocol

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping

    from mnemosyne_cli.environment import Environment

#: A server this module started that is gone within this many seconds did not start (its
#: log says why): no new one is started for the vault until they have passed, so a setup
#: where the server cannot run costs each call one lock check, not a failed process.
RETRY_AFTER_SECONDS = 60
#: The spawn lock is dup'ed to this fd in the server, which never closes it.
INHERITED_LOCK_FD = 3
#: A vault whose listing holds this many pages gets a server without asking: below it, a
#: call's listing and stat pass cost less than the server's start-up would ever save on
#: the calls a user makes (docs/performance.md, "When a server pays").
AUTO_START_PAGES = 5000
#: Set to anything but the empty string, no find or recall asks or starts a server, as
#: with ``--no-server`` (a CI job, a benchmark of the scan).
NO_SERVER_ENV_VAR = "MNEMOSYNE_NO_SERVER"


def wanted(serve_auto: bool | None, pages: int) -> bool:
    """Whether a call that found no server starts one, by ``[serve] auto`` (None: absent)
    and the number of pages its listing holds."""
    return serve_auto if serve_auto is not None else pages >= AUTO_START_PAGES


def why(serve_auto: bool | None, pages: int, environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether a find or recall that finds no server starts one, and why: what ``wiki
    info`` says (the vault's owner is checked by ``describe``)."""
    if environ.get(NO_SERVER_ENV_VAR):
        return False, f"{NO_SERVER_ENV_VAR} is set"
    if serve_auto is not None:
        return serve_auto, f"[serve] auto = {str(serve_auto).lower()}"
    listed = f"the vault lists {pages:,} page{'' if pages == 1 else 's'}"
    if pages >= AUTO_START_PAGES:
        return True, f"{listed}, at least {AUTO_START_PAGES:,}"
    return False, f"{listed}, fewer than {AUTO_START_PAGES:,}"


def record_path(vault_real: str, env: Environment) -> str:
    """The spawn lock and record of the vault's auto-started server."""
    return os.path.join(protocol.socket_dir(env), protocol.vault_key(vault_real) + ".autostart")


def log_path(vault_real: str, env: Environment) -> str:
    """Where the vault's auto-started server writes its stdout and stderr."""
    return os.path.join(protocol.socket_dir(env), protocol.vault_key(vault_real) + ".log")


def server_command(vault_real: str) -> list[str]:
    """The command an auto-start runs: this interpreter and this package, so the server is
    the very version the call runs (``-P``: nothing from ``/``, its cwd, on sys.path)."""
    return [sys.executable, "-P", "-m", "mnemosyne_cli", "wiki", "serve", "--vault", vault_real]


def start_if_wanted(vault_real: str, env: Environment) -> None:
    """Start the vault's server, detached, if none is running or starting and the vault is
    ours (the caller checked that one is ``wanted``); return at once either
    way. Never raises (but for Ctrl-C) and never prints: the call goes on to answer by its
    listing. A server we started for another user's vault would watch it with our inotify
    watches, and tell us what changed in a vault we do not keep."""
    try:
        if sys.platform.startswith("linux") and sys.executable and os.stat(vault_real).st_uid == os.geteuid():
            _start(vault_real, env)
    except Exception:
        return  # a server that cannot start must not change the call's answer


def _open_private(path: str, flags: int, mode: int = 0o600) -> int:
    """An fd of our own regular file in the runtime dir. A symlink is not followed, a FIFO
    neither waited on nor used (O_NONBLOCK, then refused): no file planted there can hang
    a call. OSError otherwise."""
    import stat

    fd = os.open(path, flags | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, mode)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd


def _start(vault_real: str, env: Environment) -> None:
    import fcntl

    if not _runtime_dir_ready(env):
        return
    record = _open_private(record_path(vault_real, env), os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(record, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # our server is starting or running
        if _started_lately(record) or _server_lock_held(vault_real, env):
            return
        log = _open_private(log_path(vault_real, env), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        try:
            started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
            os.write(log, f"mnemosyne: auto-started for {vault_real} at {started} by pid {os.getpid()}\n".encode())
            _spawn_detached(server_command(vault_real), dict(env.environ), record, log, int(time.time()))
        finally:
            os.close(log)
    finally:
        os.close(record)  # the server holds the lock through its own copy


def _runtime_dir_ready(env: Environment) -> bool:
    """Whether the socket dir exists and is safe, creating it as the server would."""
    if protocol.unsafe_dir_reason(protocol.socket_dir(env)) is None:
        return True
    from mnemosyne_cli.server import ServerError, prepare_socket_dir

    try:
        prepare_socket_dir(env)
    except (ServerError, OSError):
        return False
    return True


def _started_lately(record: int) -> bool:
    """Whether the record names a server started less than RETRY_AFTER_SECONDS ago (it is
    gone: we hold the lock it would hold)."""
    fields = os.pread(record, 64, 0).split()
    try:
        started = int(fields[1])
    except (IndexError, ValueError):
        return False
    return 0 <= time.time() - started < RETRY_AFTER_SECONDS


def _server_lock_held(vault_real: str, env: Environment) -> bool:
    """Whether a server (one started by hand, say) holds the vault's own lock. A shared
    lock taken and dropped at once: it never keeps a server from starting for longer."""
    import fcntl

    try:
        fd = _open_private(protocol.lock_path(vault_real, env), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _spawn_detached(argv: list[str], environ: dict[str, str], record: int, log: int, started: int) -> None:
    """Run ``argv`` as a grandchild in its own session (a double fork), so it is nobody's
    child here: this process reaps the short-lived middle one and never waits on, or
    leaves a zombie of, the server. Only ``os`` calls run between fork and exec."""
    import warnings

    devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns on fork() in a threaded process; a warning turned into an
            # error would lose the middle child's pid after the fork, and the children run
            # no Python that another thread could hold a lock of.
            warnings.simplefilter("ignore", DeprecationWarning)
            middle = os.fork()
        if middle == 0:
            _in_the_middle_child(argv, environ, (record, log, devnull), started)
        os.waitpid(middle, 0)
    finally:
        os.close(devnull)


def _in_the_middle_child(argv: list[str], environ: dict[str, str], fds: tuple[int, int, int], started: int) -> None:
    try:
        os.setsid()
        if os.fork() == 0:
            _become_the_server(argv, environ, fds, started)
    finally:
        os._exit(0)


def _become_the_server(argv: list[str], environ: dict[str, str], fds: tuple[int, int, int], started: int) -> None:
    """Between fork and exec: the record, log and /dev/null fds become fds 3, 1 and 2, and
    0, and nothing else stays open."""
    try:
        os.chdir("/")
        # Park the three fds above the ones they replace, whatever numbers they had.
        high = 200
        for offset, fd in enumerate(fds):
            os.dup2(fd, high + offset)
        os.dup2(high + 2, 0)
        os.dup2(high + 1, 1)
        os.dup2(high + 1, 2)
        os.dup2(high, INHERITED_LOCK_FD)
        # Nothing of the caller's stays open: a pipe it was given (find | head) must see EOF
        # when the call ends, not when the server does.
        os.closerange(INHERITED_LOCK_FD + 1, os.sysconf("SC_OPEN_MAX"))
        os.ftruncate(INHERITED_LOCK_FD, 0)
        os.pwrite(INHERITED_LOCK_FD, f"{os.getpid()} {started}\n".encode("ascii"), 0)
        try:
            os.execve(argv[0], argv, environ)  # noqa: S606 - our own interpreter, argv from server_command
        except OSError as error:
            os.write(2, f"mnemosyne: cannot run {argv[0]}: {error.strerror}\n".encode("utf-8", "surrogateescape"))
    finally:
        os._exit(127)


class AutoStarted:
    """What ``wiki info`` says about auto-start for a vault."""

    __slots__ = ("enabled", "idle_minutes", "log", "reason", "server_pid")

    def __init__(
        self, enabled: bool, server_pid: int | None, log: str | None, reason: str = "", idle_minutes: float = 30.0
    ):
        #: A find or recall that finds no server starts one for the vault.
        self.enabled = enabled
        #: Why it does or does not (``why``).
        self.reason = reason
        #: The pid of the running auto-started server, or None.
        self.server_pid = server_pid
        #: The auto-start log, when there is one (of the running server, or of the last
        #: try that did not start).
        self.log = log
        #: ``[serve] idle_minutes``: a server exits after so long without a call.
        self.idle_minutes = idle_minutes


def minutes(count: float) -> str:
    """``30 minutes``, ``1 minute``, ``0.05 minutes``."""
    return f"{count:g} minute{'' if count == 1 else 's'}"


def describe(
    vault_real: str, serve_auto: bool | None, pages: int, env: Environment, idle_minutes: float = 30.0
) -> AutoStarted:
    """Whether a call would start a server for the vault (``why``; never for a vault we do
    not own, nor where no server can run), whether an auto-started one runs (its record
    names a live server still holding the spawn lock), and its log."""
    import fcntl

    enabled, reason = why(serve_auto, pages, env.environ)
    if enabled and not sys.platform.startswith("linux"):
        enabled, reason = False, "'wiki serve' runs on Linux only"
    elif enabled:
        try:
            if os.stat(vault_real).st_uid != os.geteuid():
                enabled, reason = False, "the vault is another user's"
        except OSError as error:
            enabled, reason = False, f"the vault cannot be reached: {error.strerror}"
    log = log_path(vault_real, env)
    if not os.path.isfile(log):
        return AutoStarted(enabled, None, None, reason, idle_minutes)
    try:
        fd = _open_private(record_path(vault_real, env), os.O_RDONLY)
    except OSError:
        return AutoStarted(enabled, None, log, reason, idle_minutes)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            fields = os.pread(fd, 64, 0).split()
            pid = int(fields[0]) if fields and fields[0].isdigit() else None
            return AutoStarted(enabled, pid, log, reason, idle_minutes)
        return AutoStarted(enabled, None, log, reason, idle_minutes)
    finally:
        os.close(fd)
