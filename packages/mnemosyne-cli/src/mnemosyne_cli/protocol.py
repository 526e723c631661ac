"""What crosses the socket between ``wiki serve`` and a find or recall call: a token and
the paths of the files changed since it, never a page's text and never a query.

- A frame is a 4-byte big-endian length, then that many bytes; a request is at most
  ``MAX_REQUEST_BYTES`` (a peer cannot make the server read or work on more).
- A request is NUL-separated UTF-8 (surrogateescape) fields, fixed in number::

      version, "changes", vault, token        (token empty: "give me the token now")
      version, "status"

- A reply is ``marshal`` data ``(version, status, body)``. ``changes``' body is
  ``(token now, paths or None, mount namespace, (device, inode) of the vault)``: None
  paths mean "rescan" (list the vault). The caller uses the answer only when the server
  sees the vault it sees (same mount namespace, same root). ``status``' body is
  ``(pid, watched dirs, resident bytes, watch builds, requests, start time, failure)``.
  An error's body is its reason, in words.

Each body has its pair here, the server's encoder and the caller's decoder
(``changes_body`` and ``decode_changes``, ``status_body`` and ``decode_status``): the
fields' order is written down once, and the decoder checks the shape of what it takes.

This module is on the start-up path of every find: it imports nothing at module level
beyond ``os`` and ``marshal`` (built in).
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from typing import Any

    from mnemosyne_cli.environment import Environment

PROTOCOL_VERSION = 5
#: A request holds a vault path and a token: PATH_MAX and some.
MAX_REQUEST_BYTES = 8192
#: A reply holds at most ``changes.MAX_PATHS`` paths.
MAX_REPLY_BYTES = 1 << 26
OP_CHANGES = "changes"
OP_STATUS = "status"
STATUS_OK = "ok"
STATUS_ERROR = "error"
#: A token is a generation and a count (``changes.VaultWatch.token``): short.
MAX_TOKEN_CHARS = 64


class ProtocolError(ValueError):
    """Bytes that are not a request or reply this version understands."""


# --- where a vault's server lives ---


def socket_dir(env: Environment) -> str:
    """The per-user dir holding the sockets and locks: ``$XDG_RUNTIME_DIR/mnemosyne``,
    else ``<user cache dir>/mnemosyne/run``. Nothing lives in the vault."""
    runtime = env.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "mnemosyne")
    cache = env.environ.get("XDG_CACHE_HOME")
    if not cache or not os.path.isabs(cache):
        cache = os.path.join(env.home, ".cache")
    return os.path.join(cache, "mnemosyne", "run")


def unsafe_dir_reason(path: str, *, private: bool = True) -> str | None:
    """Why ``path`` cannot hold our sockets, or None when it can: it must be a real dir
    (not a symlink) owned by us, and not writable by others (``private``: not even
    readable by them). The server checks it before listening, the client before asking."""
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


def runtime_parent(env: Environment) -> str | None:
    """XDG_RUNTIME_DIR when the socket dir lies in it (it must then not be open to others
    for writing), else None."""
    path = socket_dir(env)
    runtime = env.environ.get("XDG_RUNTIME_DIR")
    # normpath: "/run/user/0/" is the same dir as "/run/user/0", and gets the same check.
    return runtime if runtime and os.path.dirname(path) == os.path.normpath(runtime) else None


def vault_key(vault_real: str) -> str:
    """A short name for a vault, from its real path: a server's socket and lock file."""
    from _blake2 import blake2b

    return blake2b(os.fsencode(vault_real), digest_size=12).hexdigest()


def socket_path(vault_real: str, env: Environment) -> str:
    return os.path.join(socket_dir(env), vault_key(vault_real) + ".sock")


def lock_path(vault_real: str, env: Environment) -> str:
    return os.path.join(socket_dir(env), vault_key(vault_real) + ".lock")


# --- frames ---


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def frame_length(head: bytes) -> int:
    return int.from_bytes(head[:4], "big")


# --- requests ---


class Request:
    """A decoded request: ``changes`` (the vault and the caller's token, "" for none) or
    ``status``."""

    __slots__ = ("op", "token", "vault")

    def __init__(self, op: str, vault: str = "", token: str = ""):
        self.op = op
        self.vault = vault
        self.token = token

    def encode(self) -> bytes:
        fields = [str(PROTOCOL_VERSION), self.op]
        if self.op != OP_STATUS:
            fields += [self.vault, self.token]
        return "\0".join(fields).encode("utf-8", "surrogateescape")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return (self.op, self.vault, self.token) == (other.op, other.vault, other.token)

    def __repr__(self) -> str:
        return f"Request({self.op!r}, {self.vault!r}, {self.token!r})"


def decode_request(payload: bytes) -> Request:
    """The request in ``payload``; ProtocolError for anything else, whatever the bytes."""
    if len(payload) > MAX_REQUEST_BYTES:
        raise ProtocolError("request too large")
    fields = payload.decode("utf-8", "surrogateescape").split("\0")
    if fields[0] != str(PROTOCOL_VERSION):
        raise ProtocolError(f"protocol version {fields[0][:20]!r}, not {PROTOCOL_VERSION}")
    if len(fields) < 2:
        raise ProtocolError("no operation")
    op = fields[1]
    if op == OP_STATUS:
        if len(fields) != 2:
            raise ProtocolError("status takes no field")
        return Request(op)
    if op != OP_CHANGES:
        raise ProtocolError(f"unknown operation {op[:20]!r}")
    if len(fields) != 4:
        raise ProtocolError("changes takes a vault and a token")
    vault, token = fields[2], fields[3]
    if not os.path.isabs(vault) or "\0" in vault:
        raise ProtocolError("the vault is not an absolute path")
    if token and (len(token) > MAX_TOKEN_CHARS or not token.isascii() or not token.replace(":", "").isalnum()):
        raise ProtocolError("not a token")
    return Request(op, vault, token)


# --- replies ---


def encode_reply(status: str, body: Any = None) -> bytes:
    return marshal.dumps((PROTOCOL_VERSION, status, body))


def decode_reply(payload: bytes) -> tuple[str, Any]:
    """(status, body) of a reply; ProtocolError when it is not one of this version. Only a
    server running as the caller's own user is ever asked (SO_PEERCRED), so marshal's
    input is as trusted as the caller's own files; the shape is still checked."""
    try:
        reply = marshal.loads(payload)  # noqa: S302 - from a server of our own uid (SO_PEERCRED)
    except (EOFError, ValueError, TypeError) as error:
        raise ProtocolError(f"not a reply: {error}") from None
    if not (isinstance(reply, tuple) and len(reply) == 3 and reply[0] == PROTOCOL_VERSION):
        raise ProtocolError("not a reply of this version")
    if reply[1] not in (STATUS_OK, STATUS_ERROR):
        raise ProtocolError("unknown reply status")
    return reply[1], reply[2]


def changes_body(token: str, paths: tuple[str, ...] | None, mount_namespace: int, root: tuple[int, int]) -> Any:
    return (token, paths, mount_namespace, root)


def decode_changes(body: Any) -> tuple[str, tuple[str, ...] | None, int, tuple[int, int]]:
    """``changes``' body, checked for shape; ProtocolError otherwise."""
    if not (isinstance(body, tuple) and len(body) == 4):
        raise ProtocolError("not a changes reply")
    token, paths, mount_namespace, root = body
    if not isinstance(token, str) or not isinstance(mount_namespace, int):
        raise ProtocolError("not a changes reply")
    if paths is not None and not (isinstance(paths, tuple) and all(isinstance(path, str) for path in paths)):
        raise ProtocolError("not a list of paths")
    if not (isinstance(root, tuple) and len(root) == 2 and all(isinstance(number, int) for number in root)):
        raise ProtocolError("not a vault identity")
    return token, paths, mount_namespace, (root[0], root[1])


def status_body(
    *, pid: int, dirs: int, resident_bytes: int, builds: int, requests: int, started: int, failure: str
) -> Any:
    """``status``' body: the server's pid, watched dirs, resident memory, watch builds and
    requests, its start (seconds since the epoch), and why every answer is "rescan" ("" when
    it is not)."""
    return (pid, dirs, resident_bytes, builds, requests, started, failure)


def decode_status(body: Any) -> tuple[int, int, int, int, int, int, str]:
    """``status``' body, checked for shape, in ``status_body``'s order; ProtocolError otherwise."""
    if not (isinstance(body, tuple) and len(body) == 7):
        raise ProtocolError("not a status reply")
    pid, dirs, resident_bytes, builds, requests, started, failure = body
    numbers = (pid, dirs, resident_bytes, builds, requests, started)
    if not all(isinstance(number, int) for number in numbers) or not isinstance(failure, str):
        raise ProtocolError("not a status reply")
    return pid, dirs, resident_bytes, builds, requests, started, failure


def mount_namespace() -> int:
    """The inode of this process's mount namespace (0 where there is none to read): a
    server that sees other mounts sees another vault."""
    try:
        return os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return 0
