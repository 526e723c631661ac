"""The page cache on disk: what find and recall need of each page, kept between calls and
validated on every call the way git validates its index.

Every call still lists the vault itself (``vault.scan``: the one listing), then stats each
listed page. A page whose size, mtime_ns, ctime_ns, inode and device are those the cache
holds is taken from the cache; any other is read again by this process, with its own
rights, exactly as the scan reads it (``read_page``). The one matcher (``find.judge``)
and recall's one rule decide, as in the scan.

Racily clean pages (git's rule): a page whose mtime or ctime is within ``RACY_NS`` of the
moment it was read may be written again within the same timestamp tick without its stat
changing. Such an entry is marked racy and read again on every call until it is older.

Each cache file is per user (below ``$XDG_CACHE_HOME/mnemosyne``, mode 0700, files 0600),
per vault, and per set of rights: uid, gids, capabilities and mount namespace are part of
its name, so a process with other rights never takes another's reads as its own. A dir
that is a symlink, not ours, or open to others' writes is never used. The file is written
whole to a temporary name and renamed over the old one, so a reader sees the old file or
the new one, never part of one; concurrent writers each rename a whole file, and the last
one wins. Its header holds the payload's length and CRC-32: a truncated or corrupt file,
one from another version of this code or another Python, is ignored and rebuilt.

The format is made for a query that few pages answer: every page's record (its folded
title, path and aliases, then its folded text, as ``read_page`` builds it) is one buffer,
so finding the pages that hold a keyword is a loop of ``bytes.find`` over that buffer,
one step per page that holds it, not per page.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
import time
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Sequence  # already imported by the interpreter's start-up
from functools import partial

from mnemosyne_core.config import home_dir, stem_of
from mnemosyne_core.errors import MnemosyneError
from mnemosyne_core.fold import as_utf8, decode, fold, is_text
from mnemosyne_core.frontmatter import locate, string_field, title_of
from mnemosyne_core.split import can_fork, in_two
from mnemosyne_core.vault import (
    join_rel,
    left_out_files,
    open_page,
    read_as_judged,
    read_to_end,
    resolve_vault,
    scan,
    unreadable_warning,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from mnemosyne_core.backend import FindRequest, RecallRequest
    from mnemosyne_core.recall import RecallFields, RecallResult
    from mnemosyne_core.results import FindResult
    from mnemosyne_core.vault import Identity, Scan

    #: What the cache holds of a page's file: (size, mtime_ns, ctime_ns, inode, device).
    StatKey = tuple[int, int, int, int, int]
    from typing import Protocol

    class ChangeSource(Protocol):
        """Asks the vault's ``wiki serve`` what changed since a token; the CLI's client
        implements it (``mnemosyne_cli.client.ServerChanges``)."""

        def __call__(self, vault_real: str, token: str | None) -> tuple[str, tuple[str, ...] | None] | None:
            """(the token now, the changed vault-relative paths or None for "rescan"), for
            ``token`` None the token now; None when no server of ours answers."""
            ...

        def available(self, vault_real: str) -> bool:
            """Whether a server of ours may be asked at all (its socket is there, in a dir
            we trust): a cheap look, made before the cache file is read."""
            ...

        def unanswered(self, vault_real: str, serve_auto: bool) -> None:
            """No server answered a call that listed the vault, whose config says
            ``[serve] auto`` = ``serve_auto``: one may start now."""
            ...


#: The first bytes of every cache file; a file that starts otherwise is not ours.
MAGIC = b"MNEMPC\x00\x01"
#: Bumped whenever what a record holds changes, so older files are ignored.
FORMAT = 2
#: A page changed this recently may change again without its stat showing it: the
#: coarsest timestamps of the file systems vaults live on (FAT's 2 s) and then some.
RACY_NS = 3_000_000_000
#: Where the cache dir lives below ``$XDG_CACHE_HOME`` (default ``~/.cache``).
CACHE_DIR_NAME = "mnemosyne"
CACHE_SUFFIX = ".pages"
_HEADER_BYTES = len(MAGIC) + 12
#: A page's flags in the file: read again on every call; watched only by stat; not text.
RACY, VOLATILE, NOT_TEXT = 1, 2, 4


class CacheUnusable(MnemosyneError):
    """The cache cannot be used for this call: the caller searches without it."""


# --- one page's inputs -----------------------------------------------------------------


class Page:
    """One listed page as find and recall need it, or why it could not be read."""

    __slots__ = (
        "constellation",
        "error",
        "folded_aliases",
        "folded_path",
        "folded_title",
        "head",
        "key",
        "not_text",
        "racy",
        "recall",
        "record",
        "text_start",
        "title",
        "type",
        "volatile",
    )

    def __init__(self) -> None:
        #: UTF-8 of folded title, NUL, folded vault-relative path, NUL, each folded alias
        #: and a NUL, then the folded text: ``keyword in record`` is judge's ``holds`` for
        #: every keyword (no keyword holds a NUL).
        self.record = b""
        #: Where the text starts in ``record``.
        self.text_start = 0
        #: judge's inputs besides the text, kept as they are given to it (a title may hold
        #: a NUL, so they are not split out of the record).
        self.folded_title = ""
        self.folded_path = ""
        self.folded_aliases: tuple[str, ...] = ()
        self.title = ""
        self.constellation: str | None = None
        self.type: str | None = None
        #: The page's bytes up to the end of its frontmatter (recall parses them), or None.
        self.head: bytes | None = None
        #: Recall's fields, made on the first recall (False: not made yet; None: none); as
        #: the cache file keeps them (a tuple) until a recall asks (``recall_of``): a find
        #: never imports what makes them (datetime, and recall's typing).
        self.recall: RecallFields | tuple[Any, ...] | bool | None = False
        #: The file as it was read (``stat_key``).
        self.key: StatKey = (0, 0, 0, 0, 0)
        #: Changed too recently to trust its stat next time (see the module's docstring).
        self.racy = False
        #: Whether the page does not read as text (``fold.is_text``): a miss counts these.
        self.not_text = False
        #: It has other hard links: ``wiki serve``'s watches cannot see every change to it.
        self.volatile = False
        #: Why the page could not be read; then nothing else is set.
        self.error: OSError | None = None

    def reads_as(self, other: Page) -> bool:
        """Whether ``other`` (the same page read again) gives every query the same inputs.
        A page that could not be read is never taken as unchanged: errors do not compare."""
        return (
            self.error is None
            and other.error is None
            and all(getattr(self, slot) == getattr(other, slot) for slot in _READ_SLOTS)
        )

    def recall_of(self) -> RecallFields | None:
        """Recall's fields of the page (None: it has none), made from the stored tuple on
        first use; the page must have been through ``_fill_recall``."""
        if isinstance(self.recall, tuple):
            self.recall = _recall_from(self.recall)
        assert not isinstance(self.recall, (bool, tuple))
        return self.recall

    @property
    def identity(self) -> Identity:
        """The page as ``vault.identity_of`` tells versions apart."""
        size, mtime_ns, _ctime_ns, inode, device = self.key
        return device, inode, size, mtime_ns


#: What ``read_page`` reads from the file: all of a Page but what is made later or decided
#: by when it was read.
_READ_SLOTS = tuple(slot for slot in Page.__slots__ if slot not in ("recall", "racy"))


def stat_key(info: os.stat_result) -> StatKey:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def read_page(read_path: str, rel_path: str, now_ns: int | None = None) -> Page:
    """Read one page whole, as the scan reads it, and keep its inputs; a failure is kept
    as the page's error. The stat is taken before the read and checked after it: a page
    written while it was read is kept racy, so it is read again next time."""
    from mnemosyne_core.find import aliases_of, fallback_title, page_fields

    page = Page()
    try:
        fd = open_page(read_path)
        try:
            before = os.fstat(fd)
            data = read_to_end(fd)
            after = os.fstat(fd)
        finally:
            os.close(fd)
    except OSError as error:
        page.error = error
        return page
    page.key = stat_key(before)
    page.volatile = before.st_nlink > 1
    now_ns = time.time_ns() if now_ns is None else now_ns
    page.racy = (
        stat_key(after) != page.key
        or max(before.st_mtime_ns, before.st_ctime_ns) >= now_ns - RACY_NS
        or not stat.S_ISREG(before.st_mode)
    )
    data = as_utf8(data)
    page.not_text = not is_text(data)
    name = rel_path.rpartition("/")[2]
    fields = page_fields(data)
    page.title = title_of(fields, fallback_title(stem_of(name)))
    page.constellation = string_field(fields, "constellation")
    page.type = string_field(fields, "type")
    span = locate(data)
    page.head = data[: span[2]] if span is not None else None
    folded_text = data.lower() if data.isascii() else fold(decode(data)).encode("utf-8")
    page.folded_title = fold(page.title)
    page.folded_path = fold(rel_path)
    page.folded_aliases = tuple(fold(alias) for alias in aliases_of(fields))
    names = (page.folded_title, page.folded_path, *page.folded_aliases)
    prefix = b"".join(utf8(name) + b"\0" for name in names)
    page.text_start = len(prefix)
    page.record = prefix + folded_text
    return page


def utf8(text: str) -> bytes:
    # File names may hold lone surrogates (undecodable bytes); keywords too. surrogatepass
    # keeps UTF-8's property that a byte match is a character match.
    return text.encode("utf-8", "surrogatepass")


def record_contains(record: bytes, text_start: int, folded_keyword: str) -> bool:
    """``text_contains`` for judge: whether the keyword is in the page's folded text."""
    return record.find(utf8(folded_keyword), text_start) >= 0


def record_position(record: bytes, text_start: int, folded_keyword: str) -> tuple[int, int] | None:
    """``text_position`` for judge: where the keyword first occurs in the page's folded
    text, (line, column in characters), as the scan's ``TextMatcher.position`` counts it."""
    found = record.find(utf8(folded_keyword), text_start)
    if found < 0:
        return None
    line_start = max(record.rfind(b"\n", text_start, found) + 1, text_start)
    # A match of whole UTF-8 characters starts on a character boundary: the bytes of its
    # line before it decode whole.
    column = len(record[line_start:found].decode("utf-8", "surrogatepass"))
    return record.count(b"\n", text_start, found), column


# --- where the cache lives ---------------------------------------------------------------


def cache_dir_path(environ: Mapping[str, str]) -> str | None:
    """``$XDG_CACHE_HOME/mnemosyne`` (a relative XDG_CACHE_HOME is ignored, as the XDG spec
    says), else ``~/.cache/mnemosyne``; None when there is no home to put it in."""
    base = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(os.path.normpath(base), CACHE_DIR_NAME)


def unsafe_dir_reason(path: str) -> str | None:
    """Why the cache dir at ``path`` must not be used (a symlink, not a dir, owned by
    another user, writable by others), or None."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if info.st_uid != os.geteuid():
        return "is owned by another user"
    if info.st_mode & 0o022:
        return "is writable by other users"
    return None


def usable_cache_dir(environ: Mapping[str, str], *, create: bool) -> tuple[str | None, str | None]:
    """(the cache dir, None) when it may be used, made 0700 if ``create``; (None, why not)
    otherwise. A dir that cannot be made (no home, a read-only one) is no cache, quietly:
    the reason is for ``wiki info``."""
    path = cache_dir_path(environ)
    if path is None:
        return None, "no cache dir: neither XDG_CACHE_HOME nor HOME is an absolute path"
    try:
        reason = unsafe_dir_reason(path)
    except FileNotFoundError:
        if not create:
            return None, f"{path} does not exist yet"
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
            reason = unsafe_dir_reason(path)
        except FileExistsError:
            reason = unsafe_dir_reason(path)
        except OSError as error:
            return None, f"cannot make {path}: {error.strerror}"
    except OSError as error:
        return None, f"cannot use {path}: {error.strerror}"
    if reason is not None:
        return None, f"{path} {reason}: it is never used"
    return path, None


def rights_key() -> bytes:
    """What decides which files this process can read: effective uid and gids, the
    capabilities in force, and the mount namespace (which mounts it sees)."""
    parts = [f"{os.geteuid()}:{os.getegid()}:{sorted(os.getgroups())}".encode()]
    try:
        with open("/proc/self/status", "rb") as status:
            parts += [line.strip() for line in status if line.startswith(b"CapEff:")]
        parts.append(str(os.stat("/proc/self/ns/mnt").st_ino).encode())
    except OSError:
        pass
    return repr(parts).encode()


def code_key() -> bytes:
    """What decides what a record holds besides the page: this format, the Python (its
    Unicode tables fold), and the modules that read pages, by their files' stat."""
    parts: list[object] = [FORMAT, sys.version]
    package = os.path.dirname(__file__)
    for module in READING_MODULES:
        try:
            info = os.stat(os.path.join(package, module))
            parts.append((info.st_size, info.st_mtime_ns))
        except OSError:
            parts.append(None)
    return repr(parts).encode()


#: The modules whose code decides what a record holds: a change to any (a new install, an
#: edit) makes every cache file written before it one that is ignored.
READING_MODULES = (
    "cache.py",
    "config.py",
    "diagnostics.py",
    "find.py",
    "fold.py",
    "fold_sources.py",
    "frontmatter.py",
    "recall.py",
    "vault.py",
)


def cache_file_path(cache_dir: str, vault_real: str) -> str:
    # blake2b from the C module: hashlib's import (OpenSSL) costs milliseconds of start-up.
    from _blake2 import blake2b

    digest = blake2b(utf8(vault_real) + b"\0" + rights_key(), digest_size=16).hexdigest()
    return os.path.join(cache_dir, digest + CACHE_SUFFIX)


# --- the file ----------------------------------------------------------------------------


class Stored:
    """A cache file as read: each page's fields made only when used. The stat keys and
    offsets are flat arrays of int64 and each page's display fields its own marshal bytes,
    so reading a file of 100,000 pages makes a handful of objects, not a million."""

    __slots__ = ("_index", "keys", "listing", "meta_offsets", "metas", "offsets", "paths", "racy", "records", "token")

    def __init__(self, payload: tuple[Any, ...]):
        paths_text, keys, self.racy, offsets, self.metas, meta_offsets, self.records, self.token, self.listing = (
            payload[2:]
        )
        #: The pages' vault-relative paths, in the order of the records.
        self.paths: list[str] = paths_text.split("\0") if paths_text else []
        count = len(self.paths)
        #: (size, mtime_ns, ctime_ns, inode, device) of each page, five int64 a page.
        self.keys = array("q", keys)
        #: Where each page's record starts in ``records``, and where the last one ends.
        self.offsets = array("q", offsets)
        self.meta_offsets = array("q", meta_offsets)
        if not (len(self.offsets) == len(self.meta_offsets) == count + 1 and len(self.keys) == 5 * count):
            raise CacheUnusable("inconsistent")
        if len(self.racy) != count or self.offsets[-1] != len(self.records) or self.meta_offsets[-1] != len(self.metas):
            raise CacheUnusable("inconsistent")
        self._index: dict[str, int] | None = None

    @property
    def index(self) -> dict[str, int]:
        """Each page's position, by vault-relative path (made on first use: a served call
        that is told nothing changed never needs it)."""
        if self._index is None:
            self._index = dict(zip(self.paths, range(len(self.paths)), strict=True))
        return self._index

    def key(self, position: int) -> StatKey:
        at = 5 * position
        size, mtime_ns, ctime_ns, inode, device = self.keys[at : at + 5]
        return size, mtime_ns, ctime_ns, inode, device

    def page(self, position: int) -> Page:
        # A NUL follows each record in the buffer (``save``).
        record = self.records[self.offsets[position] : self.offsets[position + 1] - 1]
        # Written by ``save`` into a file checksummed whole.
        meta = marshal.loads(self.metas[self.meta_offsets[position] : self.meta_offsets[position + 1]])  # noqa: S302
        return _page_from((self.key(position), self.racy[position], meta, record))


def load(path: str, code: bytes) -> Stored | None:
    """The cache file at ``path``, or None when there is none or it is not one this code
    wrote whole (truncated, corrupt, another version, not ours, not a regular file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return None
        # One read of the size it has (tens of MB at 100,000 pages): read_to_end's chunks
        # would be copied once more to be joined.
        data = os.read(fd, info.st_size + 1)
        if len(data) == info.st_size + 1 or len(data) < info.st_size:
            return None  # it grew or shrank while read: not the file that was written
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) < _HEADER_BYTES or not data.startswith(MAGIC):
        return None
    length = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    checksum = int.from_bytes(data[len(MAGIC) + 8 : _HEADER_BYTES], "little")
    payload = memoryview(data)[_HEADER_BYTES:]
    if len(payload) != length or zlib.crc32(payload) != checksum:
        return None
    try:
        fields = marshal.loads(payload)  # noqa: S302 - our own file, 0600, checksummed
        if not isinstance(fields, tuple) or len(fields) != 11 or fields[0] != FORMAT or fields[1] != code:
            return None
        return Stored(fields)
    except (ValueError, EOFError, TypeError, OverflowError, CacheUnusable):
        return None


def save(
    path: str, code: bytes, pages: Sequence[tuple[str, Page]], token: str | None = None, listing: object = None
) -> None:
    """Write the cache file at ``path`` whole, to a temporary name first, then renamed over
    the old one. Raises OSError (the caller goes on without it); leaves no temporary file.
    ``token``: what ``wiki serve`` said before ``listing`` (``listing_fields``) was made."""
    paths = []
    keys = array("q")
    racy = bytearray()
    metas = []
    meta_offsets = array("q", [0])
    offsets = array("q", [0])
    records = []
    for rel_path, page in pages:
        key, page_racy, meta, record = _page_fields(page)
        paths.append(rel_path)
        keys.extend(key)
        racy.append(page_racy)
        meta_bytes = marshal.dumps(meta)
        metas.append(meta_bytes)
        meta_offsets.append(meta_offsets[-1] + len(meta_bytes))
        records.append(record)
        offsets.append(offsets[-1] + len(record) + 1)
    # Each record ends in a NUL, so the buffer can be searched as it is (``Snapshot.holding``).
    buffer = b"\0".join(records) + b"\0" if records else b""
    fields: Any = (
        FORMAT,
        code,
        "\0".join(paths),
        keys.tobytes(),
        bytes(racy),
        offsets.tobytes(),
        b"".join(metas),
        meta_offsets.tobytes(),
        buffer,
        token,
        listing,
    )
    payload = marshal.dumps(fields)
    header = MAGIC + len(payload).to_bytes(8, "little") + zlib.crc32(payload).to_bytes(4, "little")
    temporary = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            with open(fd, "wb", closefd=False) as out:
                out.write(header)
                out.write(payload)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        _remove_stale_temporaries(path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


#: A temporary file older than this was left by a writer that was killed mid-write.
STALE_TEMPORARY_NS = 60_000_000_000


def _remove_stale_temporaries(path: str) -> None:
    """Remove what killed writers of the cache file at ``path`` left behind."""
    directory, name = os.path.split(path)
    now = time.time_ns()
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(name + ".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime_ns > STALE_TEMPORARY_NS:
                        os.unlink(entry.path)


def _recall_to(recall: RecallFields | tuple[Any, ...] | bool | None) -> object:
    """Recall's fields as marshal keeps them: False (not made yet), None, or a tuple with
    its date as an ordinal."""
    if recall is None or isinstance(recall, (bool, tuple)):
        return recall
    updated = recall.updated.toordinal() if recall.updated is not None else None
    return (recall.folded, recall.slug, recall.tags, recall.title, updated)


def _recall_from(stored: tuple[Any, ...]) -> RecallFields:
    import datetime

    from mnemosyne_core.recall import RecallFields

    fields = RecallFields.__new__(RecallFields)
    fields.folded, fields.slug, fields.tags, fields.title, updated = stored
    fields.updated = datetime.date.fromordinal(updated) if updated is not None else None
    return fields


# --- a call's view of the pages ----------------------------------------------------------


class Snapshot:
    """The listed pages of one call, each fresh, in scan order: their records in one
    buffer (``buffer``, a NUL after each) for the keyword loop, their other fields taken
    from the cache only for the pages a query looks at."""

    __slots__ = ("buffer", "changed", "refs", "sources", "starts", "stored", "unreadable")

    def __init__(self, stored: Stored | None) -> None:
        self.stored = stored
        #: (vault-relative path, dir) of each readable listed page, in scan order.
        self.refs: Sequence[tuple[str, str]] = []
        #: Each page read anew, or its position in ``stored``.
        self.sources: list[Page | int] = []
        #: Where each page's record starts in ``buffer``.
        self.starts: Sequence[int] = []
        self.buffer = b""
        #: (vault-relative path, error) of each listed page that could not be read.
        self.unreadable: list[tuple[str, OSError]] = []
        #: Whether any page was read anew, or the cache held pages no longer listed.
        self.changed = False

    def __len__(self) -> int:
        return len(self.refs)

    def page(self, index: int) -> Page:
        """The page at ``index`` (scan order), made from the cache on first use."""
        source = self.sources[index]
        if isinstance(source, Page):
            return source
        assert self.stored is not None
        page = self.sources[index] = self.stored.page(source)
        return page

    def pages(self) -> list[Page]:
        return [self.page(index) for index in range(len(self.refs))]

    def not_text(self) -> int:
        """How many of the pages are not text (``fold.is_text``), from the cache's flags
        without making a page of each."""
        flags = self.stored.racy if self.stored is not None else b""
        return sum(
            bool(flags[source] & NOT_TEXT) if isinstance(source, int) else source.not_text for source in self.sources
        )

    def holding(self, needle: bytes) -> list[int]:
        """The positions of the pages whose record holds ``needle``, in scan order: one
        ``find`` a page that holds it, none for the pages that do not."""
        found: list[int] = []
        buffer, starts = self.buffer, self.starts
        position = buffer.find(needle)
        while position >= 0:
            index = bisect_right(starts, position) - 1
            found.append(index)
            following = starts[index + 1] if index + 1 < len(starts) else len(buffer)
            position = buffer.find(needle, following)
        return found


#: A page's flags byte to 0 unless it is racy or has other hard links.
_WATCHED_ONLY_BY_STAT = bytes(flag & (RACY | VOLATILE) for flag in range(256))


def _served_unchanged(pages: Scan, stored: Stored) -> bool:
    """Whether the stored listing is the cache's pages in their order, none of them racy,
    with other hard links or a symlink (which a served call must stat)."""
    return (
        not pages.links
        and stored.racy.translate(_WATCHED_ONLY_BY_STAT).count(0) == len(stored.racy)
        and sum(len(names) for _, _, names in pages.listing) == len(stored.paths)
    )


class _StoredRefs(Sequence[tuple[str, str]]):
    """``Snapshot.refs`` of the cache's own pages, in its order, made per page on use."""

    __slots__ = ("_paths",)

    def __init__(self, paths: list[str]):
        self._paths = paths

    def __len__(self) -> int:
        return len(self._paths)

    def __getitem__(self, index: int) -> tuple[str, str]:  # type: ignore[override]
        rel_path = self._paths[index]
        return rel_path, rel_path.rpartition("/")[0]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((rel_path, rel_path.rpartition("/")[0]) for rel_path in self._paths)


#: From this many listed pages, a second process stats half of them: an lstat and its
#: compare cost 3-8 microseconds a page, a fork of a process holding the cache a few
#: milliseconds.
STAT_SPLIT_MIN_PAGES = 4000


def fresh_by_stat(pages: Scan, stored: Stored) -> bytes:
    """One byte per listed page, in listing order: 1 when the cache holds it, not racy, and
    its lstat is the one held (a regular file); 0 otherwise (the caller looks again). Empty
    for a small vault, where the caller's own loop is cheaper than a fork."""
    count = sum(len(names) for _, _, names in pages.listing)
    if count < STAT_SPLIT_MIN_PAGES or not can_fork():
        return b""
    index, links, flags = stored.index, pages.links, stored.racy
    targets: list[tuple[str, int]] = []
    for dir_name, dir_path, names in pages.listing:
        prefix = f"{dir_name}/" if dir_name else ""
        for name in names:
            rel_path = prefix + name
            position = index.get(rel_path, -1)
            if position >= 0 and flags[position] & RACY:
                position = -1
            targets.append((links.get(rel_path) or f"{dir_path}/{name}", position))
    keys = stored.keys
    lstat, is_regular = os.lstat, stat.S_ISREG

    def check(start: int, stop: int) -> bytes:
        out = bytearray(stop - start)
        for at, (read_path, position) in enumerate(targets[start:stop]):
            if position < 0:
                continue
            try:
                info = lstat(read_path)
            except OSError:
                continue
            key = 5 * position
            out[at] = (
                is_regular(info.st_mode)
                and info.st_size == keys[key]
                and info.st_mtime_ns == keys[key + 1]
                and info.st_ctime_ns == keys[key + 2]
                and info.st_ino == keys[key + 3]
                and info.st_dev == keys[key + 4]
            )
        return bytes(out)

    def whole_half(payload: bytes) -> bytes:
        if len(payload) != count - count // 2:
            raise ValueError("a part of the child's answer is missing")
        return payload

    first, second = in_two(count, check, bytes, whole_half)
    return first + second


class ListingChanged(Exception):
    """A page ``wiki serve`` said changed is not the listed file it was (gone, not a regular
    file, or not listed at all): only listing the vault again can say what it is now."""


def fresh_snapshot(
    pages: Scan,
    stored: Stored | None,
    *,
    part: bool = False,
    read: bool = True,
    changed: set[str] | None = None,
) -> Snapshot:
    """Every listed page, from ``stored`` where its stat is the one held and it is not racy,
    read anew otherwise (by two processes when there are many to read). ``part``: the
    listing is part of the vault's (--dir), so the cache's other pages are not gone.
    ``read=False``: only what the cache holds fresh, nothing read (``wiki info``).

    ``changed``: the pages ``wiki serve`` says changed since the listing was made (then
    ``pages`` is that listing): only those, and the pages a watch cannot follow (racy ones,
    those with other hard links, symlinked ones), are stat'ed; the rest are taken as they
    are. Raises ListingChanged when one of them is no longer the listed file."""
    snapshot = Snapshot(stored)
    links = pages.links
    if changed == set() and stored is not None and _served_unchanged(pages, stored):
        # The server names no change, and no page needs a stat: the cache's pages as they are,
        # without a step of Python per page.
        snapshot.refs = _StoredRefs(stored.paths)
        snapshot.sources = list(range(len(stored.paths)))
        snapshot.buffer = stored.records
        snapshot.starts = stored.offsets[:-1]
        return snapshot
    refs: list[tuple[str, str]] = []
    snapshot.refs = refs
    sources = snapshot.sources
    #: (where in ``sources``, read path, vault-relative path) of each page to read anew.
    to_read: list[tuple[int, str, str]] = []
    unreadable: list[tuple[str, OSError]] = []
    index = stored.index if stored is not None else {}
    keys = stored.keys if stored is not None else array("q")
    flags = stored.racy if stored is not None else b""
    served = changed is not None
    unseen = set(changed) if changed else set()
    lstat, is_regular = os.lstat, stat.S_ISREG
    # Without a server every cached page is stat'ed: on a large vault, half by a second
    # process (``fresh_by_stat``). A page it says is fresh is taken as it is below.
    fresh = fresh_by_stat(pages, stored) if not served and stored is not None else b""
    listed = -1
    for dir_name, dir_path, names in pages.listing:
        prefix = f"{dir_name}/" if dir_name else ""
        for name in names:
            listed += 1
            rel_path = prefix + name
            position = index.get(rel_path)
            if fresh and fresh[listed]:
                refs.append((rel_path, dir_name))
                sources.append(position)  # type: ignore[arg-type]
                continue
            if served:
                if (
                    position is not None
                    and not flags[position] & (RACY | VOLATILE)
                    and rel_path not in unseen
                    and rel_path not in links
                ):
                    refs.append((rel_path, dir_name))
                    sources.append(position)
                    continue
                unseen.discard(rel_path)
            if position is not None and (served or not flags[position] & RACY):
                read_path = links.get(rel_path) or f"{dir_path}/{name}"
                try:
                    # Not followed: a page swapped for a symlink is read, and refused, anew.
                    info = lstat(read_path)
                except OSError as error:
                    if served:
                        # Gone, or a dir on its way changed: the listing would not be this one.
                        raise ListingChanged(rel_path) from None
                    unreadable.append((rel_path, error))
                    continue
                if is_regular(info.st_mode):
                    at = 5 * position
                    same = (
                        info.st_size == keys[at]
                        and info.st_mtime_ns == keys[at + 1]
                        and info.st_ctime_ns == keys[at + 2]
                        and info.st_ino == keys[at + 3]
                        and info.st_dev == keys[at + 4]
                    )
                    if same and not flags[position] & RACY:
                        refs.append((rel_path, dir_name))
                        sources.append(position)
                        continue
                elif served:
                    raise ListingChanged(rel_path)
            if read:
                to_read.append((len(sources), links.get(rel_path) or f"{dir_path}/{name}", rel_path))
                refs.append((rel_path, dir_name))
                sources.append(-1)
    if unseen:
        raise ListingChanged(min(unseen))  # a new file, maybe a page: the listing decides
    if to_read:
        failed = False
        for (at, _read_path, rel_path), page in zip(
            to_read, read_pages([(read_path, rel_path) for _, read_path, rel_path in to_read]), strict=True
        ):
            sources[at] = page
            if page.error is not None:
                if served and isinstance(page.error, FileNotFoundError):
                    raise ListingChanged(rel_path)  # gone since the listing: only a new one says
                unreadable.append((rel_path, page.error))
                failed = True
        if failed:
            kept = [
                (ref, source)
                for ref, source in zip(refs, sources, strict=True)
                if not (isinstance(source, Page) and source.error is not None)
            ]
            snapshot.refs = [ref for ref, _ in kept]
            snapshot.sources = [source for _, source in kept]
    # The scan meets the unreadable pages in listing order; so do its warnings (sorted later).
    snapshot.unreadable = unreadable
    count = len(snapshot.sources)
    every_stored = stored is not None and not to_read and count == len(stored.index)
    if every_stored and stored is not None and snapshot.sources == list(range(count)):
        # Nothing changed and the listing's order is the cache's: its buffer as it is.
        snapshot.buffer = stored.records
        snapshot.starts = stored.offsets[:-1]
        return snapshot
    snapshot.changed = stored is None or bool(to_read) or (not part and count != len(stored.index))
    records = [snapshot.page(at).record for at in range(count)]
    starts = []
    offset = 0
    for record in records:
        starts.append(offset)
        offset += len(record) + 1
    snapshot.starts = starts
    snapshot.buffer = b"\0".join(records)
    return snapshot


#: Reading a page whole costs 50-300 microseconds (a YAML parse is most of it), a fork and
#: its pipe about a millisecond: from this many pages to read, the second core reads half.
SPLIT_MIN_PAGES = 200


def read_pages(to_read: Sequence[tuple[str, str]]) -> list[Page]:
    """``read_page`` of each (read path, vault-relative path), in order; the second half in
    a forked child when there are many and the machine has a second core (``split``)."""
    now_ns = time.time_ns()

    def read(start: int, stop: int) -> list[Page]:
        return [read_page(read_path, rel_path, now_ns) for read_path, rel_path in to_read[start:stop]]

    if len(to_read) < SPLIT_MIN_PAGES or not can_fork():
        return read(0, len(to_read))
    first, second = in_two(len(to_read), read, _dump_pages, _load_pages)
    return first + second


def _dump_pages(pages: list[Page]) -> bytes:
    return marshal.dumps([_page_fields(page) for page in pages])


def _load_pages(payload: bytes) -> list[Page]:
    # From our own child, through a pipe only it and we hold.
    return [_page_from(fields) for fields in marshal.loads(payload)]  # noqa: S302


def _page_fields(page: Page) -> tuple[Any, ...]:
    """A page as marshal takes it (``_page_from`` makes it again)."""
    if page.error is not None:
        return (page.error.errno, page.error.strerror, page.error.filename)
    names = (page.folded_title, page.folded_path, page.folded_aliases)
    recall = _recall_to(page.recall)
    meta = (page.text_start, page.title, page.constellation, page.type, page.head, recall, names, page.not_text)
    return (page.key, page.racy | page.volatile << 1 | page.not_text << 2, meta, page.record)


def _page_from(fields: tuple[Any, ...]) -> Page:
    page = Page()
    if len(fields) == 3:
        page.error = OSError(*fields) if fields[0] is not None else OSError(fields[1])
        return page
    page.key, flags, meta, page.record = fields
    page.racy, page.volatile = bool(flags & RACY), bool(flags & VOLATILE)
    page.text_start, page.title, page.constellation, page.type, page.head, recall, names, page.not_text = meta
    page.folded_title, page.folded_path, page.folded_aliases = names
    page.recall = recall  # kept as stored: ``Page.recall_of`` makes the fields
    return page


def request_home(request: FindRequest | RecallRequest) -> str:
    """The ``~`` of the call that made ``request``: its own, else the one its variables name."""
    return home_dir(request.environ) if request.home is None else request.home


class CachedScan:
    """The Backend that takes each unchanged page from the cache on disk; it answers exactly
    as the scan (``backend.SCAN``) does, and falls back to it whenever the cache cannot be
    used.

    Without ``changes`` every call lists the vault and stats each listed page. With it (a
    ``wiki serve`` to ask), a call whose cache holds the listing and a token asks the server
    what changed since, and when the answer is a list of pages it neither lists the vault
    nor stats the pages it was told are unchanged; any doubt (no answer, "rescan", a listed
    dir that is not the one it was, a changed file that is no longer the listed page, a
    miss, whose note needs the listing) takes the listing path."""

    def __init__(self, environ: Mapping[str, str], changes: ChangeSource | None = None):
        self.environ = environ
        self.changes = changes
        #: Whether the last call took the pages the server said were unchanged as they were.
        self.served = False

    def search(self, request: FindRequest) -> FindResult:
        """``find.search``'s answer for the request; raises only ``backend.BACKEND_ERRORS``."""
        from mnemosyne_core.backend import SCAN
        from mnemosyne_core.find import prepare_query

        folded = prepare_query(request.keywords, request.limit)
        vault_real = resolve_vault(request.vault, request.environ, request.cwd, request.home)
        keywords, limit, dirs, keep_content = request.keywords, request.limit, request.dirs, request.keep_content
        # A server is asked about the vault's own layout only, and only when its socket is there.
        ask = self.changes is not None and not dirs and self.changes.available(vault_real)
        served = self._served(vault_real) if ask else None
        if served is not None:
            result = self._search(served, folded, keywords, limit, keep_content, served=True)
            if result is not None:
                self.served = True
                return result
        self.served = False
        pages, snapshot = self._listed(vault_real, dirs, request_home(request), ask=ask)
        if snapshot is None:  # the plain scan over this listing (see ``_listed``)
            from mnemosyne_core.find import search

            return search(vault_real, keywords, limit=limit, dirs=dirs, keep_content=keep_content, listing=pages)
        result = self._search((pages, snapshot), folded, keywords, limit, keep_content)
        # The page --cat prints changed since it was judged: the plain path decides.
        return result if result is not None else SCAN.search(request)

    def _search(
        self,
        pages_and_snapshot: tuple[Scan, Snapshot],
        folded: tuple[str, ...],
        keywords: Sequence[str],
        limit: int,
        keep_content: bool,
        served: bool = False,
    ) -> FindResult | None:
        """find's answer over a fresh snapshot; None when the one page --cat prints changed
        since it was judged, or (``served``) when nothing matches."""
        from mnemosyne_core.find import Tally, judge
        from mnemosyne_core.vault import preferred_dirs

        pages, snapshot = pages_and_snapshot
        prefer = preferred_dirs(pages)
        tally = Tally(len(folded), limit)
        for rel_path, error in snapshot.unreadable:
            tally.unreadable_page(rel_path, error)
        tally.searched = len(snapshot)
        holding = [snapshot.holding(utf8(keyword)) for keyword in folded]
        tally.counts = [len(found) for found in holding]
        fewest: list[int] = min(holding, key=len)
        candidates = set(fewest).intersection(*holding)
        for index in sorted(candidates):
            rel_path, dir_name = snapshot.refs[index]
            page = snapshot.page(index)
            _holds, key = judge(
                folded,
                rel_path,
                page.folded_path,
                page.folded_title,
                partial(record_contains, page.record, page.text_start),
                partial(record_position, page.record, page.text_start),
                page.folded_aliases,
                prefer,
            )
            if key is not None:
                fields = {"constellation": page.constellation, "type": page.type}
                tally.add_match(rel_path, dir_name, page.title, fields, key)
        result = tally.result(pages, keywords)
        if result.total == 0 and served:
            return None  # a miss's note counts files no watch sees: the listing path answers
        if result.total == 0:
            result.not_text = snapshot.not_text()
        if result.total == 0 and not result.incomplete:
            result.left_out = left_out_files(pages)
        if keep_content and result.total == 1:
            match = result.matches[0]
            at = next(index for index, (rel_path, _) in enumerate(snapshot.refs) if rel_path == match.path)
            content = read_as_judged(pages.vault, match.path, snapshot.page(at).identity)
            if content is None:
                return None
            match.content = content
        return result

    def recall(self, request: RecallRequest) -> RecallResult:
        """``recall.recall``'s answer for the request; raises only ``backend.BACKEND_ERRORS``."""
        from mnemosyne_core.backend import SCAN
        from mnemosyne_core.recall import split_topic

        topic, dirs = request.topic, request.dirs
        terms = split_topic(topic)
        vault_real = resolve_vault(request.vault, request.environ, request.cwd, request.home)
        ask = self.changes is not None and not dirs and self.changes.available(vault_real)
        served = self._served(vault_real, fill_recall=True) if ask else None
        if served is not None:
            result = self._recall(served, topic, terms)
            if result is not None and result.matches:
                self.served = True
                return result
        self.served = False
        pages, snapshot = self._listed(vault_real, dirs, request_home(request), ask=ask, fill_recall=True)
        if snapshot is None:  # the plain scan over this listing (see ``_listed``)
            from mnemosyne_core.recall import recall

            return recall(vault_real, topic, dirs=dirs, listing=pages)
        result = self._recall((pages, snapshot), topic, terms)
        return result if result is not None else SCAN.recall(request)

    @staticmethod
    def _recall(
        pages_and_snapshot: tuple[Scan, Snapshot], topic: str | Sequence[str], terms: tuple[str, ...]
    ) -> RecallResult | None:
        """recall's answer over a fresh snapshot; None when a read entry changed since it
        was judged."""
        from mnemosyne_core.recall import RecallResult, fill_read_entries, fold_terms, rank, take_page
        from mnemosyne_core.vault import PageRef, preferred_dirs

        pages, snapshot = pages_and_snapshot
        result = RecallResult(pages.vault, topic if isinstance(topic, str) else " ".join(topic), terms)
        result.warnings.extend(pages.warnings)
        result.unreadable = pages.incomplete
        result.memory_dir = pages.memory_dir
        for rel_path, error in snapshot.unreadable:
            result.unreadable += 1
            result.warnings.append(unreadable_warning(rel_path, error))
        folded_terms = fold_terms(terms)
        identities = {}
        for (rel_path, dir_name), page in zip(snapshot.refs, snapshot.pages(), strict=True):
            fields = page.recall_of()
            identities[rel_path] = page.identity
            take_page(result, PageRef(dir_name, rel_path.rpartition("/")[2], ""), fields, folded_terms, b"")
        rank(result, preferred_dirs(pages))
        if not result.matches and not result.incomplete:
            result.left_out = left_out_files(pages)
        if not fill_read_entries(result, [identities[entry.path] for entry in result.read]):
            return None
        return result

    # --- where the pages come from ---

    def _cache_file(self, vault_real: str, *, create: bool) -> str | None:
        cache_dir, _why_not = usable_cache_dir(self.environ, create=create)
        return cache_file_path(cache_dir, vault_real) if cache_dir is not None else None

    def _listed(
        self, vault_real: str, dirs: Sequence[str] | None, home: str, *, ask: bool, fill_recall: bool = False
    ) -> tuple[Scan, Snapshot | None]:
        """The vault listed as the scan lists it, and its fresh pages through the cache,
        saved back when anything changed; None instead of the pages when the plain scan
        answers: the cache is off or cannot be used, or a server was to be asked and none
        answered (or the call is a --dir one, which no server is asked about). The cache's
        own check of every page costs about what the scan's reads do (docs/performance.md),
        so it is worth its file only when a server will tell the next calls what changed.
        With a server to ask, its token is taken before the listing, so every change the
        listing may have missed is one it reports later. ``ask``: a server's socket is
        there to ask."""
        asked = self.changes(vault_real, None) if ask and self.changes is not None else None
        pages = scan(vault_real, dirs, home=home)
        if self.changes is not None and asked is None:
            if not dirs:
                # No server answered: one may start, as the config the listing read says.
                self.changes.unanswered(vault_real, pages.config is not None and pages.config.serve_auto)
            return pages, None
        if not pages.cache_enabled:
            return pages, None
        path = self._cache_file(vault_real, create=True)
        if path is None:
            return pages, None
        code = code_key()
        stored = load(path, code)
        snapshot = fresh_snapshot(pages, stored, part=bool(dirs))
        if fill_recall:
            _fill_recall(snapshot)
        if dirs:
            # Part of the vault, and pages from outside the layout go into the file: the next
            # call lists the vault before a server's word is taken again.
            token, listing = None, None
        else:
            token, listing = (asked[0] if asked is not None else None), listing_fields(pages)
        if snapshot.changed or (stored is not None and (token, listing) != (stored.token, stored.listing)):
            kept = list(zip((rel for rel, _ in snapshot.refs), snapshot.pages(), strict=True))
            if dirs and stored is not None:
                # A --dir call lists part of the vault: the rest of the cache stays.
                listed = {rel for rel, _ in snapshot.refs} | {rel for rel, _ in snapshot.unreadable}
                kept += [(rel, stored.page(at)) for rel, at in stored.index.items() if rel not in listed]
            # A read-only or full disk: this call's answer does not depend on it.
            with contextlib.suppress(OSError):
                save(path, code, kept, token, listing)
        return pages, snapshot

    def _served(self, vault_real: str, *, fill_recall: bool = False) -> tuple[Scan, Snapshot] | None:
        """The pages as the cache's listing holds them and the server says they changed,
        without listing the vault; None at any doubt (see the class's docstring). Asked
        only when a server's socket is there: else the cache file is not even read."""
        if self.changes is None:
            return None
        path = self._cache_file(vault_real, create=False)
        stored = load(path, code_key()) if path is not None else None
        if path is None or stored is None or stored.token is None or stored.listing is None:
            return None
        answer = self.changes(vault_real, stored.token)
        if answer is None:
            return None
        token, changed = answer
        if changed is None:
            return None
        pages = scan_from_fields(vault_real, stored.listing)
        if pages is None:
            return None
        try:
            snapshot = fresh_snapshot(pages, stored, changed=set(changed))
        except ListingChanged:
            return None
        if fill_recall:
            _fill_recall(snapshot)
        if snapshot.changed or token != stored.token:
            kept = list(zip((rel for rel, _ in snapshot.refs), snapshot.pages(), strict=True))
            with contextlib.suppress(OSError):
                save(path, code_key(), kept, token, stored.listing)
        return pages, snapshot


def _fill_recall(snapshot: Snapshot) -> None:
    """Make recall's fields of every page that has none yet; the cache keeps them."""
    from mnemosyne_core.recall import recall_fields

    for page in snapshot.pages():
        if page.recall is False:
            page.recall = recall_fields(page.head) if page.head is not None else None
            snapshot.changed = True


def listing_fields(pages: Scan) -> tuple[Any, ...] | None:
    """What of the vault's own listing a served call needs instead of listing it again: the
    searched dirs, each listed dir with its names and (device, inode), the symlinked pages'
    targets, the listing's warnings and what it could not list. None when a dir vanished."""
    try:
        identities = [tuple(_dir_identity(dir_path)) for _dir_rel, dir_path, _names in pages.listing]
    except OSError:
        return None
    warnings = [warning.as_fields() for warning in pages.warnings]
    listing = (pages.dirs, pages.listing, identities, pages.links, warnings, pages.incomplete, pages.memory_dir)
    return (*listing, pages.symlinks)


def _dir_identity(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def scan_from_fields(vault_real: str, fields: tuple[Any, ...]) -> Scan | None:
    """The listing ``listing_fields`` kept, as a Scan; None when a listed dir is not the
    dir it was (gone, or another file system mounted over it: no event tells that), or a
    page-named symlink no longer leads where it led (its target, or a link on its way, may
    lie in a dir no watch sees: each is resolved again, one ``realpath`` a symlink)."""
    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.vault import Scan, followed_symlink

    dirs, listing, identities, links, warnings, incomplete, memory_dir, symlinks = fields
    for (_dir_rel, dir_path, _names), identity in zip(listing, identities, strict=True):
        try:
            if _dir_identity(dir_path) != tuple(identity):
                return None
        except OSError:
            return None
    dir_paths = {dir_rel: dir_path for dir_rel, dir_path, _names in listing}
    for dir_rel, name in symlinks:
        rel_path = join_rel(dir_rel, name)
        link_path = f"{dir_paths[dir_rel]}/{name}" if dir_rel in dir_paths else os.path.join(vault_real, rel_path)
        if not os.path.islink(link_path) or followed_symlink(vault_real, rel_path, link_path)[0] != links.get(rel_path):
            return None
    pages = Scan(vault_real, tuple(dirs))
    pages.symlinks = [(dir_rel, name) for dir_rel, name in symlinks]
    pages.listing = [(dir_rel, dir_path, list(names)) for dir_rel, dir_path, names in listing]
    pages.links = dict(links)
    pages.warnings = [Diagnostic.from_fields(tuple(warning)) for warning in warnings]
    pages.incomplete = incomplete
    pages.memory_dir = memory_dir
    return pages


class CacheInfo:
    """What ``wiki info`` says of a vault's page cache (``describe_cache``)."""

    __slots__ = ("bytes", "enabled", "fresh", "pages", "path", "unused")

    def __init__(self, enabled: bool, path: str | None, unused: str | None):
        self.enabled = enabled
        self.path = path
        #: Why find and recall do not use it, or None when they do.
        self.unused = unused
        self.bytes = 0
        #: The pages the file holds, and how many of the listed pages it holds unchanged.
        self.pages = 0
        self.fresh = 0

    def to_dict(self) -> dict[str, object]:
        return {slot: getattr(self, slot) for slot in ("enabled", "path", "bytes", "pages", "fresh", "unused")}


def describe_cache(pages: Scan, environ: Mapping[str, str]) -> CacheInfo:
    """The cache of the vault ``pages`` lists: where it is, its size, and how many of the
    listed pages a call would take from it unchanged. Makes and writes nothing."""
    cache_dir, why_not = usable_cache_dir(environ, create=False)
    unused = None if pages.cache_enabled else "[cache] enabled = false in the vault's .mnemosyne.toml"
    if cache_dir is None and (why_not or "").endswith("never used"):
        unused = unused or why_not
    # A dir not made yet is made by the first find or recall: name the file it will hold.
    would_be = cache_dir_path(environ) if cache_dir is None and unused is None else cache_dir
    path = cache_file_path(would_be, pages.vault) if would_be is not None else None
    info = CacheInfo(pages.cache_enabled, path, unused)
    stored = load(path, code_key()) if path is not None else None
    if path is None or stored is None:
        return info
    try:
        info.bytes = os.stat(path).st_size
    except OSError:
        return info  # removed or replaced since it was read: as if not written yet
    info.pages = len(stored.index)
    snapshot = fresh_snapshot(pages, stored, part=True, read=False)
    info.fresh = sum(isinstance(source, int) for source in snapshot.sources)
    return info


if TYPE_CHECKING:
    from mnemosyne_core.backend import Backend

    def _cached_scan_is_a_backend(backend: CachedScan) -> Backend:
        """mypy --strict holds the cached scan to the interface every command asks."""
        return backend


__all__ = ["CachedScan", "Page", "read_page"]
