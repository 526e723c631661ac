"""Asking a running ``wiki serve`` to answer a find or recall call, or hearing that it cannot.

This module is the start-up path of every ``wiki find``: it imports only C modules that
cost well under a millisecond (``_socket``, ``_blake2``, ``time``) and never ``re``,
``json``, ``socket`` or argparse, which cost 10-20 ms each. So the protocol is a small
binary one rather than JSON:

- a frame is a 4-byte big-endian length, then that many bytes, at most ``MAX_FRAME_BYTES``;
- a request is NUL-separated UTF-8 (surrogateescape) fields: the protocol version, the
  operation (``run`` or ``status``), the caller's working directory, whether its stdout
  and stderr are terminals, its environment, then the command line words;
- a reply is one ASCII line ``<version> <status> <exit code> <stdout length>``, then the
  stdout bytes, then the stderr text (UTF-8, surrogateescape). ``status`` is ``ok`` (print
  it and exit with the code) or ``fallback`` (run the scan yourself).

Anything else (no server, no answer within the timeout, a closed connection, another
version, a malformed reply) is a fallback too: the caller scans, as without a server.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time (issue 6)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from mnemosyne_cli.output import Console

PROTOCOL_VERSION = 1
#: A request carries a command line; a reply may carry a whole page (--cat) or recall's
#: three. Anything larger is refused, not read.
MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 1 << 30
#: The client's budget for connect, send and reply together, in seconds; past it the scan
#: answers. MNEMOSYNE_SERVER_TIMEOUT overrides it.
DEFAULT_TIMEOUT = 2.0
TIMEOUT_ENV_VAR = "MNEMOSYNE_SERVER_TIMEOUT"
#: The commands a server answers; everything else always runs here.
SERVED_COMMANDS = ("find", "recall")
STATUS_OK = "ok"
STATUS_FALLBACK = "fallback"
STATUS_ERROR = "error"

VAULT_ENV_VAR = "AION_VAULT"  # mnemosyne_core.config's, not imported: start-up time


class Answer:
    """What the server says the command prints and returns."""

    __slots__ = ("code", "stderr", "stdout")

    def __init__(self, code: int, stdout: bytes, stderr: str):
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


# --- where a vault's server lives ---


def socket_dir(environ: Mapping[str, str] = os.environ) -> str:
    """The per-user dir holding the sockets and locks: ``$XDG_RUNTIME_DIR/mnemosyne``,
    else ``<user cache dir>/mnemosyne/run``. Nothing lives in the vault."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "mnemosyne")
    cache = environ.get("XDG_CACHE_HOME")
    if not cache or not os.path.isabs(cache):
        cache = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mnemosyne", "run")


def unsafe_dir_reason(path: str, *, private: bool = True) -> str | None:
    """Why ``path`` cannot hold our sockets, or None when it can: it must be a real dir
    (not a symlink) owned by us, and not writable by others (``private``: not even
    readable by them)."""
    import stat

    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{path}: {error.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.geteuid():
        return f"{path} is owned by uid {info.st_uid}, not by us (uid {os.geteuid()})"
    mask = 0o077 if private else 0o022
    if info.st_mode & mask:
        return f"{path} has mode {stat.S_IMODE(info.st_mode):o}; it must not be open to other users"
    return None


def vault_key(vault_real: str) -> str:
    """A short name for a vault, from its real path: a server's socket and lock file."""
    from _blake2 import blake2b

    return blake2b(os.fsencode(vault_real), digest_size=12).hexdigest()


def socket_path(vault_real: str, environ: Mapping[str, str] = os.environ) -> str:
    return os.path.join(socket_dir(environ), vault_key(vault_real) + ".sock")


def lock_path(vault_real: str, environ: Mapping[str, str] = os.environ) -> str:
    return os.path.join(socket_dir(environ), vault_key(vault_real) + ".lock")


def guess_vault(words: Sequence[str], cwd: Callable[[], str], environ: Mapping[str, str] = os.environ) -> str | None:
    """The real path of the vault a find or recall call most likely names, or None when the
    words are not a plain call a server may answer or no vault is in sight. The order is
    vault discovery's (``vault.locate_vault``): the last ``--vault``, a dir holding
    ``.mnemosyne.toml`` at or above the working dir (``cwd()``, asked only when needed),
    AION_VAULT (the user config is not read: it costs a TOML parser). A wrong guess costs
    nothing: the server resolves the vault exactly as the scan does and tells a call about
    another vault to scan."""
    from mnemosyne_cli.options import END_OF_OPTIONS, HELP_FLAGS, NO_SERVER, VAULT

    if len(words) < 3 or words[0] != "wiki" or words[1] not in SERVED_COMMANDS:
        return None
    vault = None
    index = 2
    while index < len(words):
        word = words[index]
        if word == END_OF_OPTIONS:
            break
        if word in NO_SERVER.names or word in HELP_FLAGS:
            return None
        name, equals, value = word.partition("=")
        if name in VAULT.names:
            if not equals:
                if index + 1 >= len(words):
                    return None
                value = words[index + 1]
                index += 1
            vault = value
        index += 1
    if vault is None:
        vault = _marked_vault(cwd()) or environ.get(VAULT_ENV_VAR) or None
    if not vault:
        return None
    path = os.path.expanduser(vault)
    if not os.path.isabs(path):
        path = os.path.join(cwd(), path)
    return os.path.realpath(path) if os.path.isdir(path) else None


def _marked_vault(cwd: str) -> str | None:
    """The nearest dir at or above ``cwd`` holding ``.mnemosyne.toml``."""
    current = cwd
    while True:
        if os.path.isfile(os.path.join(current, ".mnemosyne.toml")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# --- frames ---


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def encode_request(
    op: str, cwd: str, environ: Mapping[str, str], words: Sequence[str], ttys: tuple[bool, bool] = (False, False)
) -> bytes:
    """A request: the version, the operation, the working dir, whether stdout and stderr are
    terminals (colour depends on it), the whole environment (vault discovery, the memory
    dir, colour and config paths all read it), then the words."""
    environment = [f"{name}={value}" for name, value in environ.items() if "\0" not in name + value]
    tty_flags = "".join("1" if tty else "0" for tty in ttys)
    fields = [str(PROTOCOL_VERSION), op, cwd, tty_flags, str(len(environment)), *environment, *words]
    return "\0".join(fields).encode("utf-8", "surrogateescape")


class Request:
    """A decoded request."""

    __slots__ = ("cwd", "environ", "op", "ttys", "words")

    def __init__(self, op: str, cwd: str, ttys: tuple[bool, bool], environ: dict[str, str], words: list[str]):
        self.op = op
        self.cwd = cwd
        self.ttys = ttys
        self.environ = environ
        self.words = words


def decode_request(payload: bytes) -> Request | str:
    """The request in ``payload``, or why it is not one (``STATUS_FALLBACK`` for another
    version, ``STATUS_ERROR`` for anything malformed)."""
    fields = payload.decode("utf-8", "surrogateescape").split("\0")
    if fields[0] != str(PROTOCOL_VERSION):
        return STATUS_FALLBACK
    if len(fields) < 5 or len(fields[3]) != 2 or not fields[4].isdigit():
        return STATUS_ERROR
    count = int(fields[4])
    if len(fields) < 5 + count:
        return STATUS_ERROR
    environ = {}
    for entry in fields[5 : 5 + count]:
        name, equals, value = entry.partition("=")
        if not equals or not name:
            return STATUS_ERROR
        environ[name] = value
    ttys = (fields[3][0] == "1", fields[3][1] == "1")
    return Request(fields[1], fields[2], ttys, environ, fields[5 + count :])


def encode_reply(status: str, code: int = 0, stdout: bytes = b"", stderr: str = "") -> bytes:
    head = f"{PROTOCOL_VERSION} {status} {code} {len(stdout)}\n".encode("ascii")
    return head + stdout + stderr.encode("utf-8", "surrogateescape")


def decode_reply(payload: bytes) -> Answer | None:
    """The answer in a reply, or None when it says to fall back or is not understood."""
    end = payload.find(b"\n")
    if end < 0 or end > 64:
        return None
    parts = payload[:end].split(b" ")
    if len(parts) != 4 or parts[0] != str(PROTOCOL_VERSION).encode() or parts[1] != STATUS_OK.encode():
        return None
    try:
        code, length = int(parts[2]), int(parts[3])
    except ValueError:
        return None
    start = end + 1
    if not (0 <= code <= 255 and 0 <= length <= len(payload) - start):
        return None
    stdout = payload[start : start + length]
    return Answer(code, stdout, payload[start + length :].decode("utf-8", "surrogateescape"))


def recv_frame(sock: object, limit: int, deadline: float) -> bytes | None:
    """One frame from ``sock`` before ``deadline`` (time.monotonic), or None when the peer
    closes, the frame exceeds ``limit`` or time runs out."""
    head = recv_exactly(sock, 4, deadline)
    if head is None:
        return None
    length = int.from_bytes(head, "big")
    if length > limit:
        return None
    return recv_exactly(sock, length, deadline)


def recv_exactly(sock: object, count: int, deadline: float) -> bytes | None:
    import time

    chunks = []
    while count > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)  # type: ignore[attr-defined]
        try:
            chunk = sock.recv(min(count, 1 << 20))  # type: ignore[attr-defined]
        except OSError:  # TimeoutError included
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


# --- asking ---


def timeout_seconds(environ: Mapping[str, str] = os.environ) -> float:
    try:
        value = float(environ.get(TIMEOUT_ENV_VAR, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value < 3600 else DEFAULT_TIMEOUT


def exchange(path: str, request: bytes, timeout: float) -> bytes | None:
    """Send one request frame to the server at ``path`` and return its reply frame, or None
    on any failure; never blocks past ``timeout`` seconds."""
    import _socket
    import time

    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(frame(request))
        return recv_frame(sock, MAX_REPLY_BYTES, deadline)
    except OSError:
        return None
    finally:
        sock.close()


def ask(words: Sequence[str], environ: Mapping[str, str] = os.environ) -> Answer | None:
    """The server's answer to the command line ``words``, or None: scan instead."""
    try:
        vault = guess_vault(words, os.getcwd, environ)
        if vault is None:
            return None
        path = socket_path(vault, environ)
        if not os.path.exists(path):
            _no_server(vault, environ)
            return None
        cwd = os.getcwd()
        ttys = (_isatty(sys.stdout), _isatty(sys.stderr))
    except (OSError, ValueError):
        return None
    reply = exchange(path, encode_request("run", cwd, environ, words, ttys), timeout_seconds(environ))
    if reply is None:
        _no_server(vault, environ)
        return None
    return decode_reply(reply)


def _no_server(vault_real: str, environ: Mapping[str, str]) -> None:
    """No server answered for the vault: one starts now if its config says ``[serve] auto``
    (docs/server.md), and this call scans."""
    from mnemosyne_cli import autostart

    autostart.start_if_wanted(vault_real, environ)


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):
        return False


def print_answer(answer: Answer, console: Console | None = None) -> int:
    """Write a served answer as the command would have; returns its exit code."""
    if console is None and _print_plainly(answer):
        return answer.code
    from mnemosyne_cli.output import Console, OutputError

    console = console or Console()
    try:
        console.out_bytes(answer.stdout)
    except OutputError as error:
        console.error(str(error))
        return 74  # ExitCode.WRITE_FAILED, not imported: start-up time
    for line in answer.stderr.split("\n")[:-1]:
        console.err(line)
    return answer.code


def _print_plainly(answer: Answer) -> bool:
    """Print the answer to the real streams without importing anything; False (nothing
    printed) when anything is unusual, so the Console handles it."""
    stdout, stderr = sys.stdout, sys.stderr
    if stdout is None or stderr is None or getattr(stdout, "buffer", None) is None:
        return False
    try:
        stdout.flush()
        stdout.buffer.write(answer.stdout)
        stdout.flush()
    except (OSError, ValueError):
        return False  # the Console writes it again and says why that fails, or goes quiet
    try:
        stderr.write(answer.stderr)
        stderr.flush()
    except (OSError, ValueError):
        pass  # nowhere left to say it; the exit code still tells (as Console.err)
    return True
