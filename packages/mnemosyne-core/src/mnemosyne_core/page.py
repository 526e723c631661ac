"""Reading a page: safely (an fd that follows no symlink and never hangs on a FIFO, a
symlinked page only when its target lies inside the vault), and, for the index, what find,
recall and info need of it, read by the calling process with its own rights, exactly as
the scan reads it.

The stat is taken before the read and checked after it (git's racy rule): a page written
while it was read, or changed within ``RACY_NS`` of the read, may change again without its
stat showing it, so the index marks it racy and every call reads it again until it is older.
"""

from __future__ import annotations

import os
import stat
import time

from mnemosyne_core.config import stem_of
from mnemosyne_core.diagnostics import BROKEN_SYMLINK, CANNOT_READ, SYMLINK_ESCAPES, VANISHED, Diagnostic
from mnemosyne_core.fold import as_utf8, fold, folded_text, is_text
from mnemosyne_core.frontmatter import string_field
from mnemosyne_core.location import is_inside
from mnemosyne_core.record import Record

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_core.page_recall import RecallFields

    #: A page as it was read: (device, inode, size, mtime in ns); see ``read_as_judged``.
    Identity = tuple[int, int, int, int]

    #: A page file's stat as the index keeps it: (size, mtime_ns, ctime_ns, inode, device).
    StatKey = tuple[int, int, int, int, int]

#: A page changed this recently may change again without its stat showing it: the
#: coarsest timestamps of the file systems vaults live on (FAT's 2 s) and then some.
RACY_NS = 3_000_000_000


def join_rel(rel_dir: str, name: str) -> str:
    """The vault-relative path of ``name`` in the dir ``rel_dir`` ("" for the vault root)."""
    return f"{rel_dir}/{name}" if rel_dir else name


class PageRef(Record):
    """A page found by the scan: where it is shown (``rel_path``) and where it is read.
    ``dir``: the vault-relative dir it is directly in ("" for the vault root)."""

    __slots__ = ("dir", "name", "read_path", "rel_path")

    def __init__(self, dir: str, name: str, read_path: str):  # noqa: A002 - a vault dir
        self.dir = dir
        self.name = name
        self.rel_path = join_rel(dir, name)
        self.read_path = read_path

    @property
    def stem(self) -> str:
        return stem_of(self.name)


class Page:
    """One listed page as find and recall need it, or why it could not be read."""

    __slots__ = (
        "aliases",
        "constellation",
        "digest",
        "digests",
        "error",
        "folded_aliases",
        "folded_path",
        "folded_text",
        "folded_title",
        "key",
        "lint",
        "lint_title",
        "not_text",
        "path",
        "racy",
        "recall",
        "title",
        "type",
        "volatile",
    )

    def __init__(self, path: str) -> None:
        #: Vault-relative path, as the listing names the page.
        self.path = path
        #: judge's inputs: the folded title, path, aliases and whole text.
        self.folded_title = ""
        self.folded_path = ""
        self.folded_aliases: tuple[str, ...] = ()
        self.folded_text = ""
        self.title = ""
        self.aliases: tuple[str, ...] = ()
        self.constellation: str | None = None
        self.type: str | None = None
        #: recall's fields of the page (``page_recall.recall_fields``), or None.
        self.recall: RecallFields | None = None
        #: lint's word on the page alone (``page_lint.check_page``): its findings as (code,
        #: message), and the title it gives itself (None: none).
        self.lint: list[tuple[str, str]] = []
        self.lint_title: str | None = None
        #: What copies are told by (``pagefields.content_digests``).
        self.digests: tuple[bytes | None, bytes | None] = (None, None)
        #: A digest of the bytes read: a page read again with the same bytes (only its stat
        #: changed: touch, chown, a checkout) holds the same row (``NoteIndex.write``).
        self.digest = b""
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


def stat_key(info: os.stat_result) -> StatKey:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def read_page(read_path: str, rel_path: str, now_ns: int | None = None, heading_titles: bool = False) -> Page:
    """Read one page whole, as the scan reads it, and keep its inputs; a failure is kept
    as the page's error. ``heading_titles``: the listing's ``Scan.heading_titles``, the
    title rule of its layout (``pagefields.page_title``)."""
    # Here, not at the top: a find that reads no page into the index never imports them.
    from mnemosyne_core.page_lint import check_page
    from mnemosyne_core.page_recall import recall_fields
    from mnemosyne_core.pagefields import aliases_of, content_digests, page_fields, page_title

    page = Page(rel_path)
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
    # From the C module, here: a --no-cache find never reads a page through read_page.
    from _blake2 import blake2b

    page.digest = blake2b(data, digest_size=16).digest()
    page.key = stat_key(before)
    page.volatile = before.st_nlink > 1
    # git's rule: changed while read, or too recently for a write in the same tick to show, or no regular file.
    page.racy = (
        stat_key(after) != page.key
        or max(before.st_mtime_ns, before.st_ctime_ns) >= (time.time_ns() if now_ns is None else now_ns) - RACY_NS
        or not stat.S_ISREG(before.st_mode)
    )
    # What lint and recall make of the page, made here so that neither reads it again.
    page.lint_title, findings = check_page(rel_path, data, heading_titles)
    page.lint = [(finding.code, finding.message) for finding in findings]
    page.digests = content_digests(data)
    page.recall = recall_fields(data)
    data = as_utf8(data)
    page.not_text = not is_text(data)
    fields = page_fields(data)
    page.title = page_title(data, fields, stem_of(rel_path.rpartition("/")[2]), heading_titles)
    page.aliases = aliases_of(fields)
    page.constellation = string_field(fields, "constellation")
    page.type = string_field(fields, "type")
    page.folded_text = folded_text(data)
    page.folded_title = fold(page.title)
    page.folded_path = fold(rel_path)
    page.folded_aliases = tuple(fold(alias) for alias in page.aliases)
    return page


# --- reading a page safely ---------------------------------------------------------------


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def followed_symlink(vault: str, rel_path: str, link_path: str) -> tuple[str | None, Diagnostic | None]:
    """For a page-named symlink: (the path to read it from, or None when it is not a page;
    the warning it raises, or None). Only a link to a file inside the vault is a page."""
    real = os.path.realpath(link_path)
    if not os.path.exists(real):
        return None, Diagnostic(rel_path, BROKEN_SYMLINK)
    if not is_inside(real, vault):
        return None, Diagnostic(rel_path, SYMLINK_ESCAPES)
    return (real if os.path.isfile(real) else None), None


def unreadable_warning(rel_path: str, error: OSError) -> Diagnostic:
    """The warning for a listed page that could not be read; the search goes on."""
    reason = VANISHED if isinstance(error, FileNotFoundError) else error.strerror
    return Diagnostic(rel_path, CANNOT_READ, str(reason))


def open_page(read_path: str) -> int:
    """An fd for reading a listed page. O_NOFOLLOW: a page swapped for a symlink after the
    scan is refused, not followed out of the vault; O_NONBLOCK: one swapped for a FIFO
    fails instead of hanging."""
    return os.open(read_path, _READ_FLAGS | getattr(os, "O_NOFOLLOW", 0))


def read_to_end(fd: int) -> bytes:
    """Everything left to read from ``fd`` (a page's: a regular file)."""
    chunk = os.read(fd, _READ_CHUNK)
    if len(chunk) < _READ_CHUNK:
        # A regular file reads short only at its end (find's head read relies on it too):
        # most pages take one read, not a second one that returns nothing.
        return chunk
    chunks = [chunk]
    while chunk := os.read(fd, _READ_CHUNK):
        chunks.append(chunk)
    return b"".join(chunks)


_READ_CHUNK = 1 << 16


def read_page_bytes(page: PageRef) -> bytes:
    """The whole page, as bytes."""
    fd = open_page(page.read_path)
    try:
        return read_to_end(fd)
    finally:
        os.close(fd)


def read_listed_page(vault: str, rel_path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the page the scan lists at ``rel_path`` of the vault at ``vault`` (a real
    path), read by the scan's rules, and the fstat of what was read. For a caller that was
    told a page's path by someone else (a server): it reads with its own rights, follows a
    symlinked dir or page only to a target inside the vault, opens with O_NOFOLLOW and
    O_NONBLOCK. ``rel_path`` may lie at any depth (``a/b/c.md``) or at the root (``x.md``);
    no part of it may be empty, hidden, ``.`` or ``..``. OSError when the page is no longer
    there or cannot be read."""
    dir_rel, _, name = rel_path.rpartition("/")
    parts = [*dir_rel.split("/"), name] if dir_rel else [name]
    if any(not part or part.startswith(".") for part in parts):
        raise FileNotFoundError(f"{rel_path}: not a page of the vault")
    dir_path = vault
    if dir_rel:
        dir_path = os.path.join(vault, dir_rel)
        real = os.path.realpath(dir_path)
        if not is_inside(real, vault):
            raise FileNotFoundError(f"{rel_path}: its dir leaves the vault")
        dir_path = real
    path = f"{dir_path}/{name}"
    if os.path.islink(path):
        read_path, _warning = followed_symlink(vault, rel_path, path)
        if read_path is None:
            raise FileNotFoundError(f"{rel_path}: not a page of the vault")
        path = read_path
    fd = open_page(path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileNotFoundError(f"{rel_path}: not a regular file")
        return read_to_end(fd), info
    finally:
        os.close(fd)


def read_as_judged(vault_real: str, rel_path: str, identity: Identity) -> bytes | None:
    """The page at ``rel_path`` read now by the scan's rules (``read_listed_page``), or
    None when it cannot be read or is not the version someone else judged (``identity``)."""
    try:
        data, info = read_listed_page(vault_real, rel_path)
    except OSError:
        return None
    return data if (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == identity else None


__all__ = ["RACY_NS", "Page", "open_page", "read_as_judged", "read_page", "read_to_end", "stat_key"]
