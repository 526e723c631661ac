"""Reading one page for the index: what find, recall and info need of it, read by the
calling process with its own rights, exactly as the scan reads it.

The stat is taken before the read and checked after it (git's racy rule): a page written
while it was read, or changed within ``RACY_NS`` of the read, may change again without its
stat showing it, so the index marks it racy and every call reads it again until it is older.
"""

from __future__ import annotations

import os
import stat
import time

from mnemosyne_core.config import stem_of
from mnemosyne_core.fold import as_utf8, fold, folded_text, is_text
from mnemosyne_core.frontmatter import locate, string_field
from mnemosyne_core.vault import open_page, read_to_end

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_core.recall import RecallFields
    from mnemosyne_core.vault import Identity

    #: A page file's stat as the index keeps it: (size, mtime_ns, ctime_ns, inode, device).
    StatKey = tuple[int, int, int, int, int]

#: A page changed this recently may change again without its stat showing it: the
#: coarsest timestamps of the file systems vaults live on (FAT's 2 s) and then some.
RACY_NS = 3_000_000_000


class Page:
    """One listed page as find and recall need it, or why it could not be read."""

    __slots__ = (
        "aliases",
        "constellation",
        "error",
        "folded_aliases",
        "folded_path",
        "folded_text",
        "folded_title",
        "head",
        "key",
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
        #: The page's bytes up to the end of its frontmatter (recall parses them), or None.
        self.head: bytes | None = None
        #: Recall's fields (None: the page has none), made only when a recall asks
        #: (``recall_fields``): a find never imports what makes them (datetime).
        self.recall: RecallFields | None = None
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

    @property
    def identity(self) -> Identity:
        """The page as ``vault.identity_of`` tells versions apart."""
        size, mtime_ns, _ctime_ns, inode, device = self.key
        return device, inode, size, mtime_ns


def stat_key(info: os.stat_result) -> StatKey:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def is_racy(before: os.stat_result, after: os.stat_result, now_ns: int) -> bool:
    """git's rule: a page that changed while it was read, or so recently that a write in
    the same timestamp tick would leave its stat as it is, or that is no regular file."""
    return (
        stat_key(after) != stat_key(before)
        or max(before.st_mtime_ns, before.st_ctime_ns) >= now_ns - RACY_NS
        or not stat.S_ISREG(before.st_mode)
    )


def read_page(read_path: str, rel_path: str, now_ns: int | None = None, heading_titles: bool = False) -> Page:
    """Read one page whole, as the scan reads it, and keep its inputs; a failure is kept
    as the page's error. ``heading_titles``: the listing's ``Scan.heading_titles``, the
    title rule of its layout (``find.page_title``)."""
    from mnemosyne_core.find import aliases_of, page_fields, page_title

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
    page.key = stat_key(before)
    page.volatile = before.st_nlink > 1
    page.racy = is_racy(before, after, time.time_ns() if now_ns is None else now_ns)
    data = as_utf8(data)
    page.not_text = not is_text(data)
    fields = page_fields(data)
    page.title = page_title(data, fields, stem_of(rel_path.rpartition("/")[2]), heading_titles)
    page.aliases = aliases_of(fields)
    page.constellation = string_field(fields, "constellation")
    page.type = string_field(fields, "type")
    span = locate(data)
    page.head = data[: span[2]] if span is not None else None
    page.folded_text = folded_text(data)
    page.folded_title = fold(page.title)
    page.folded_path = fold(rel_path)
    page.folded_aliases = tuple(fold(alias) for alias in page.aliases)
    return page


__all__ = ["RACY_NS", "Page", "read_page", "stat_key"]
