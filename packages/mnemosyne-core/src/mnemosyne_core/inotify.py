"""Linux inotify through ctypes (no third-party dependency), and the file systems that
send no events.

inotify queues an event inside the system call that makes the change, before that call
returns (fsnotify runs in the VFS path of write, rename, unlink, chmod, ...). So once a
process has seen its change complete, the event is already in the queue: a reader that
drains the queue after that moment has seen it. ``wiki serve`` relies on exactly this.
"""

from __future__ import annotations

import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ctypes

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000

IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)

#: Everything that can change which pages a dir holds or what a page says.
DIR_EVENTS = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
#: Events after which a watch no longer says anything about its dir.
WATCH_LOST = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED

_HEADER_BYTES = 16  # struct inotify_event: int wd; uint32 mask, cookie, len

#: statfs f_type of the file systems whose changes need not raise an inotify event here:
#: network file systems (a change made on another machine reaches no local queue) and FUSE
#: (events only for changes made through this mount, and many daemons cache).
NO_EVENT_FILE_SYSTEMS = {
    0x6969: "NFS",
    0x517B: "SMB",
    0xFF534D42: "CIFS",
    0xFE534D42: "SMB2",
    0x65735546: "FUSE",
    0x01021997: "9P",
    0x00C36400: "Ceph",
    0x5346414F: "AFS",
    0x73757245: "Coda",
    0x01161970: "GFS2",
    0x0BD00BD0: "Lustre",
    0x564C: "NCP",
    0x6A656A63: "virtiofs",
}


#: The per-user limit on inotify watches, shared by every process of the user; a server
#: watching a tree takes one per listed dir (docs/server.md, "The watch limit").
MAX_USER_WATCHES_FILE = "/proc/sys/fs/inotify/max_user_watches"


def out_of_watches_reason(limit_file: str = MAX_USER_WATCHES_FILE) -> str:
    """What running out of watches (ENOSPC from inotify_add_watch) means: the limit now and
    how to raise it."""
    try:
        with open(limit_file, encoding="ascii") as file:
            limit = file.read().strip()
    except (OSError, ValueError):
        limit = ""
    now = f"={limit}" if limit.isdigit() else ""
    return (
        f"out of inotify watches: the user's limit fs.inotify.max_user_watches{now} is reached; "
        "raise it, e.g. sudo sysctl fs.inotify.max_user_watches=524288"
    )


class InotifyError(OSError):
    """inotify is unavailable or a watch could not be added."""


class Event:
    """One inotify event: the watch, what happened, and the name in the watched dir."""

    __slots__ = ("cookie", "mask", "name", "wd")

    def __init__(self, wd: int, mask: int, name: str, cookie: int = 0):
        self.wd = wd
        self.mask = mask
        self.name = name
        #: Ties an IN_MOVED_FROM to its IN_MOVED_TO (0 for other events).
        self.cookie = cookie

    def __repr__(self) -> str:
        return f"Event(wd={self.wd}, mask={self.mask:#x}, name={self.name!r})"


_libc: ctypes.CDLL | None = None


def _load_libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        import ctypes
        import ctypes.util

        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def _raise_errno(what: str) -> None:
    import ctypes

    code = ctypes.get_errno()
    raise InotifyError(code, f"{what}: {os.strerror(code)}")


class Inotify:
    """A non-blocking inotify instance."""

    def __init__(self) -> None:
        libc = _load_libc()
        if not hasattr(libc, "inotify_init1"):
            raise InotifyError(errno.ENOSYS, "inotify is not available on this system")
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            _raise_errno("inotify_init1")
        self.fd: int = fd
        #: Events met by ``read`` but not yet taken (see ``inject``).
        self._pending: list[Event] = []

    def add_watch(self, path: str, mask: int) -> int:
        """Watch ``path`` for ``mask``; returns the watch descriptor."""
        wd = int(_load_libc().inotify_add_watch(self.fd, os.fsencode(path), mask))
        if wd < 0:
            _raise_errno(f"inotify_add_watch {path}")
        return wd

    def inject(self, event: Event) -> None:
        """Queue an event as if the kernel had sent it (tests force an overflow so)."""
        self._pending.append(event)

    def read(self) -> list[Event]:
        """Every event queued now, without blocking."""
        events, self._pending = self._pending, []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return events
            except InterruptedError:
                continue
            if not data:
                return events
            offset = 0
            while offset + _HEADER_BYTES <= len(data):
                wd = int.from_bytes(data[offset : offset + 4], sys.byteorder, signed=True)
                mask = int.from_bytes(data[offset + 4 : offset + 8], sys.byteorder)
                cookie = int.from_bytes(data[offset + 8 : offset + 12], sys.byteorder)
                length = int.from_bytes(data[offset + 12 : offset + 16], sys.byteorder)
                raw = data[offset + _HEADER_BYTES : offset + _HEADER_BYTES + length]
                offset += _HEADER_BYTES + length
                events.append(Event(wd, mask, os.fsdecode(raw.rstrip(b"\0")), cookie))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def file_system_type(path: str) -> int:
    """statfs(2)'s f_type of the file system holding ``path``."""
    import ctypes

    # struct statfs is 120 bytes on 64-bit Linux; f_type (a long) comes first.
    buffer = ctypes.create_string_buffer(256)
    if _load_libc().statfs(os.fsencode(path), buffer) != 0:
        _raise_errno(f"statfs {path}")
    size = ctypes.sizeof(ctypes.c_long)
    return int.from_bytes(buffer.raw[:size], sys.byteorder, signed=True) & 0xFFFFFFFF


def no_event_reason(path: str) -> str | None:
    """Why changes under ``path`` may raise no local inotify event, or None when they do."""
    name = NO_EVENT_FILE_SYSTEMS.get(file_system_type(path))
    if name is None:
        return None
    return f"it is on {name}, a file system that does not report every change to inotify"
