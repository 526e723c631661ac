"""Making the index hold every page of a call as it is on disk now, the way git keeps its
index: by stat, or by a ``wiki serve``'s word of what changed.

A call that listed the vault stats each listed page: one whose size, mtime_ns, ctime_ns,
inode and device are those the index holds, and that is not racy (``page.RACY_NS``), is
taken from the index; any other is read again by this process, with its own rights
(``page.read_page``). What was read, what could not be read and what is no longer listed
are written in one transaction, so another call sees all of it or none of it. A served call
(``fresh_served``) neither lists the vault nor stats its pages: only the ones the server
names and the ones a watch cannot vouch for (racy, hard-linked, symlinked), with what it
reuses of the last listing kept in the index (``keep_listing``, ``served_listing``).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in index.py
import contextlib
import marshal
import os
import stat
import time

from mnemosyne_core.index import stored_text, written_by
from mnemosyne_core.page import join_rel, read_page, stat_key

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from mnemosyne_core.index import NoteIndex
    from mnemosyne_core.page import Page, StatKey

    #: (id, stat key, not text) of a page the index holds fresh.
    Held = tuple[int, StatKey, int]
    #: (dir key, its "dir/" prefix, its page names, the Held of those found unchanged, by name).
    Compared = tuple[bytes, str, list[str], dict[str, Held]]
    from mnemosyne_core.vault import Scan


#: A call reads at most this share of its listed pages itself (and always up to
#: ``CATCH_UP_FLOOR``): more, and it answers by the scan and leaves them to a builder. Measured
#: on 1,594 pages of 0.5-3 KB, all touched: reading a page again (``read_page``: read, fold,
#: parse, digest) and writing its stat cost 235 us, 1.8 times the scan's 132 us a page, and
#: an index call's own work (stat pass, query) 14 % of the scan; so a call that reads more
#: than (1.2 - 0.14) / 1.8 = 59 % of the pages takes longer than 1.2 times the scan. Half
#: leaves room for bigger pages and a busy machine.
CATCH_UP_SHARE = 0.5
#: So few pages (about 30 ms of reading, at 235 us each) cost a call less than its own
#: Python start-up, whatever the share: read by the call itself. A small vault's pages just
#: copied or checked out are all racy, and a served call reads them rather than listing.
CATCH_UP_FLOOR = 128


class CatchUp(Exception):
    """More pages changed than a call can read again within the scan's time (``CATCH_UP_SHARE``):
    the scan answers, and a builder catches the index up (``build.build``)."""


def read_limit(listed: int) -> int:
    """How many changed pages a call of ``listed`` pages reads itself."""
    return max(CATCH_UP_FLOOR, int(listed * CATCH_UP_SHARE))


class ListingChanged(Exception):
    """A page ``wiki serve`` said changed is not the listed file it was (gone, not a regular
    file, or not listed at all): only listing the vault again can say what it is now."""


class Fresh:
    """The pages of one call, every one of them fresh in the index now."""

    __slots__ = ("ids", "not_text", "searched", "unreadable")

    def __init__(self) -> None:
        #: The index ids of the call's readable pages; None: every page the index holds.
        self.ids: set[int] | None = set()
        #: (vault-relative path, error) of each listed page that could not be read.
        self.unreadable: list[tuple[str, OSError]] = []
        #: How many of the pages do not read as text (``fold.is_text``).
        self.not_text = 0
        #: How many pages were searched: the readable listed ones.
        self.searched = 0

    def holds(self, page_id: int) -> bool:
        return self.ids is None or page_id in self.ids


def fresh_listed(index: NoteIndex, pages: Scan, *, part: bool, limit: bool = True) -> Fresh:
    """Every page of the listing ``pages``, fresh in the index: each stat'ed, the changed and
    new ones read and written, with the rows of pages no longer listed dropped (unless the
    listing is ``part`` of the vault's: a --dir call). Raises CatchUp, reading nothing, when
    more changed than ``read_limit`` (unless not ``limit``: a builder).

    A dir is compared whole first: the digest of its page names (in listing order) and their
    stat keys, when it equals the one the ``dirs`` table keeps, vouches for every page of it
    without one of its rows read. That is exact because a kept digest was made only from
    rows that were then unchanged and none racy, for those very names, and any change to a
    row since empties the table (index.py's triggers): equal digests mean each page's stat
    key equals its row's, the test the row comparison makes. A page that is racy keeps its
    dir from being kept, so it is read again every call, as git's racy rule asks. Any other
    dir has its own rows read (one range of the path index) and compared page by page; a
    dir whose pages all compare equal is kept for the next call.
    """
    fresh = Fresh()
    ids = fresh.ids
    assert ids is not None
    listing = pages.listing
    # Known before the stat pass, so that it stops at the first page past the limit: after
    # a touch of every page, the rest of the pass would only add to the scan's time.
    most = read_limit(len(pages)) if limit else -1
    kept = index.kept_dirs() if len({dir_name for dir_name, _, _ in listing}) == len(listing) else {}
    links = pages.links
    loads = marshal.loads
    to_read: list[tuple[str, str]] = []
    gone: list[bytes] = []
    keep: list[tuple[bytes, bytes, bytes, int]] = []
    #: (dir key, prefix, names, what compared equal by name) of each dir compared row by row.
    compared: list[Compared] = []
    #: How many of the index's rows the dirs compared account for.
    accounted = 0
    for dir_name, dir_path, names in listing:
        prefix = f"{dir_name}/" if dir_name else ""
        dir_key = stored_text(dir_name)
        held_dir = kept.get(dir_key)
        if held_dir is not None:
            keys = _stat_keys(dir_path, prefix, names, links)
            if keys is not None and _dir_digest(names, keys) == held_dir[0]:
                dir_ids = loads(held_dir[1])  # written by ``keep_dirs`` into our own 0600 file
                ids.update(dir_ids)
                fresh.not_text += held_dir[2]
                accounted += len(dir_ids)
                keep.append((dir_key, *held_dir))
                continue
        held = index.dir_stat_rows(dir_name)
        accounted += len(held)
        found_of: dict[str, Held] = {}
        for name in names:
            rel_path = prefix + name
            read_path = links.get(rel_path) or f"{dir_path}/{name}"
            row = held.pop(stored_text(rel_path), None)
            if row is not None and unchanged(row, read_path):
                found_of[name] = (row[1], row[2:7], row[8])  # its id, stat key and not-text flag
                continue
            to_read.append((read_path, rel_path))
            if len(to_read) == most + 1:
                raise CatchUp(f"more than {most} pages changed")
        ids.update(found[0] for found in found_of.values())
        fresh.not_text += sum(found[2] for found in found_of.values())
        gone.extend(held)
        compared.append((dir_key, prefix, names, found_of))
    if not part and index.page_count() != accounted:
        # Rows in no listed dir (a dir gone, or left by a --dir call): only all paths tell.
        listed = {stored_text(rel_path) for _dir, _name, rel_path, _read_path in pages.page_paths()}
        gone = [path for path in index.stored_paths() if path not in listed]
    removed = [] if part else [path.decode("utf-8", "surrogatepass") for path in gone]
    read = _read(to_read, fresh, pages.heading_titles)
    if read or removed or fresh.unreadable:
        # An unreadable page's old row must not answer for it: the scan would warn instead.
        unreadable = [rel_path for rel_path, _ in fresh.unreadable]
        written: dict[str, int] = {}

        def write(index: NoteIndex) -> None:
            index.remove([*removed, *unreadable])
            written.update(index.write(read))
            # After the pages: writing one empties the kept dirs, which still hold here.
            held = {page.path: (written[page.path], page.key, page.not_text) for page in read if not page.racy}
            index.keep_dirs([*keep, *whole_dirs(compared, held)])
            if part:
                # Pages from outside the layout may be in the index now: the next call lists
                # the vault (dropping them) before a server's word is taken again.
                index.set_meta("token", None)

        written_by(write, index)
        ids.update(written.values())
    else:
        # No page written: the kept dirs stay, and only those now whole are added.
        newly = whole_dirs(compared, {})
        if newly:
            # Only a help to the next call: a lock held by another writer or a full disk
            # costs it nothing but the row comparison again.
            with contextlib.suppress(sqlite3.Error):
                written_by(lambda index: index.keep_dirs(newly), index)
    fresh.searched = len(ids)
    if not part:
        # The whole listing: every row it did not hold was dropped above, and every page it
        # holds has its row, so "every page the index holds" says the same without a list
        # of ids for the query to check each row against.
        fresh.ids = None
    return fresh


def unchanged(row: tuple[bytes, int, int, int, int, int, int, int, int], read_path: str) -> bool:
    """Whether the page at ``read_path`` is as its ``stat_rows`` row holds it, and not racy."""
    _path, _page_id, size, mtime_ns, ctime_ns, inode, device, racy, _not_text = row
    try:
        info = None if racy else os.lstat(read_path)
    except OSError:
        return False
    return (
        info is not None and stat.S_ISREG(info.st_mode) and stat_key(info) == (size, mtime_ns, ctime_ns, inode, device)
    )


def whole_dirs(compared: list[Compared], read: Mapping[str, Held]) -> list[tuple[bytes, bytes, bytes, int]]:
    """The ``dirs`` rows of the ``compared`` dirs whose every page is now held, as it was
    found unchanged or as it was ``read`` just now and found not racy ((id, stat key, not
    text) by vault-relative path): what ``fresh_listed`` and a builder keep."""
    rows = []
    for dir_key, prefix, names, found_of in compared:
        held = []
        for name in names:
            found = found_of.get(name) or read.get(prefix + name)
            if found is None:
                break
            held.append(found)
        else:
            digest = _dir_digest(names, [key for _id, key, _not_text in held])
            page_ids = [page_id for page_id, _key, _not_text in held]
            rows.append((dir_key, digest, marshal.dumps(page_ids), sum(not_text for _, _, not_text in held)))
    return rows


def _stat_keys(dir_path: str, prefix: str, names: list[str], links: dict[str, str]) -> list[StatKey] | None:
    """The stat key of each page of a listed dir, in order; None when one is gone or no
    regular file (its dir is compared row by row, which reads it anew)."""
    is_regular = stat.S_ISREG
    keys: list[StatKey] = []
    try:
        # Each name stat'ed in the open dir: the kernel resolves one name, not the whole path.
        dir_fd = os.open(dir_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        for name in names:
            # A page that is a symlink is read at its target (``Scan.links``): stat'ed there.
            target = links.get(prefix + name) if links else None
            try:
                # Not followed: a page swapped for a symlink is read, and refused, anew.
                info = os.lstat(target) if target else os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                return None
            if not is_regular(info.st_mode):
                return None
            keys.append(stat_key(info))
    finally:
        os.close(dir_fd)
    return keys


def _dir_digest(names: list[str], keys: list[StatKey]) -> bytes:
    """What the ``dirs`` table keeps of a dir: its page names, in listing order, with their
    stat keys, digested. Marshalled in its version 0, which writes a value alone: later
    versions mark shared objects and interned strings, so equal values could marshal
    apart. (Five times faster than their ``repr``, which cost a call 0.17 s at 100k pages.)"""
    from _blake2 import blake2b

    return blake2b(marshal.dumps((names, keys), 0), digest_size=16).digest()


def fresh_served(index: NoteIndex, listing: ServedListing, changed: Iterable[str]) -> Fresh:
    """The pages of the listing a served call reuses (``served_listing``), fresh in the
    index: only the ``changed`` ones and those a watch cannot vouch for are stat'ed and, when
    changed, read again. Raises ListingChanged when one is no longer the listed file, or
    is no page the index holds (only a listing can say what it is now).

    Which pages the kept listing holds is the ``pages`` table itself: the listing that
    kept the token wrote every page it listed in the same transaction, and the count it
    listed is kept (``ServedListing.listed``). A later call's listing may have written the
    table since; every page it added or dropped was made, moved or removed after the
    token, so the server names it (or answers "rescan"), and a named path the table does
    not hold is asked of a listing. So while the table holds as many pages as were listed
    (none dropped as unreadable), a path it holds is a listed page, and nothing here runs
    once per page: the watched pages come from their partial index, the counts from
    ``meta``."""
    fresh = Fresh()
    if index.page_count() != listing.listed:
        raise ListingChanged("pages the index does not hold")  # unreadable ones: the listing says
    pages = listing.pages
    check = index.watched_by_stat()
    linked = [path for path in pages.links if path not in check]
    check.update(index.stat_keys_of([*changed, *linked]))
    to_read: list[tuple[str, str]] = []
    for rel_path in [*check, *(path for path in changed if path not in check)]:
        held = check.get(rel_path)
        dir_rel, _, name = rel_path.rpartition("/")
        dir_path = listing.dir_paths.get(dir_rel)
        if held is None or dir_path is None:
            raise ListingChanged(rel_path)  # a new file, maybe a page: the listing decides
        read_path = pages.links.get(rel_path) or f"{dir_path}/{name}"
        try:
            info = os.lstat(read_path)
        except OSError:
            raise ListingChanged(rel_path) from None
        if not stat.S_ISREG(info.st_mode):
            raise ListingChanged(rel_path)
        _page_id, key, racy = held
        if racy or stat_key(info) != key:
            to_read.append((read_path, rel_path))
    if len(to_read) > read_limit(listing.listed):
        raise CatchUp(f"{len(to_read)} pages changed")
    read = _read(to_read, fresh, pages.heading_titles)
    if any(isinstance(error, FileNotFoundError) for _, error in fresh.unreadable):
        raise ListingChanged("a page is gone since the listing")
    if read or fresh.unreadable:
        unreadable = [rel_path for rel_path, _ in fresh.unreadable]

        def write(index: NoteIndex) -> None:
            index.remove(unreadable)
            index.write(read)

        written_by(write, index)
    fresh.ids = None
    fresh.searched = index.page_count()
    fresh.not_text = index.not_text_count()
    return fresh


def _read(to_read: list[tuple[str, str]], fresh: Fresh, heading_titles: bool) -> list[Page]:
    """``read_page`` of each (read path, vault-relative path); the failures go to ``fresh``."""
    now_ns = time.time_ns()
    read = []
    for read_path, rel_path in to_read:
        page = read_page(read_path, rel_path, now_ns, heading_titles)
        if page.error is not None:
            fresh.unreadable.append((rel_path, page.error))
        else:
            read.append(page)
            fresh.not_text += page.not_text
    return read


# --- the listing a served call reuses ------------------------------------------------------


def keep_listing(index: NoteIndex, token: str, pages: Scan) -> None:
    """Keep the server's ``token`` with what a served call needs of the vault's own listing
    ``pages`` instead of listing it again (``served_listing``), unless the index holds
    them already: each listed dir with its identity in ``served_dirs``; in ``meta``
    (``served``) the searched dirs, the symlinked pages' targets, the listing's warnings
    and what it could not list, the title rule its layout gives, whether that layout is
    the zero-config one (which the scan refuses for the caller's home dir), how many pages
    it listed, and a miss's note on the files the layout leaves out (``_kept_left_out``).
    The pages themselves are the ``pages`` table's (``fresh_served``)."""
    from mnemosyne_core.config import LAYOUT_FROM_ZERO_CONFIG

    now_ns = time.time_ns()
    try:
        infos = [os.stat(dir_path) for _dir_rel, dir_path, _names in pages.listing]
    except OSError:
        infos = None  # a dir vanished: no served call until a listing keeps one again
    fields: tuple[Any, ...] | None = None
    dirs: list[tuple[str, str, int, int, int, int]] = []
    if infos is not None:
        for (dir_rel, dir_path, _names), info in zip(pages.listing, infos, strict=True):
            dirs.append((dir_rel, dir_path, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns))
        zero_config = pages.layout is not None and pages.layout.source == LAYOUT_FROM_ZERO_CONFIG
        warnings = [warning.as_fields() for warning in pages.warnings]
        left_out = _kept_left_out(pages, infos, now_ns)
        listed = (pages.dirs, pages.links, pages.symlinks, warnings, pages.incomplete, pages.memory_dir)
        fields = (*listed, pages.heading_titles, zero_config, len(pages), left_out)
    blob = marshal.dumps(fields) if fields is not None else None
    if index.meta("token") == token and index.meta("served") == blob and sorted(index.served_dirs()) == sorted(dirs):
        return

    def keep(index: NoteIndex) -> None:
        index.set_meta("token", token)
        index.set_meta("served", blob)
        index.set_served_dirs(dirs)

    written_by(keep, index)


def _kept_left_out(
    pages: Scan, infos: list[os.stat_result], now_ns: int
) -> tuple[list[tuple[str, str]], list[tuple[str, tuple[int, ...] | None]]] | None:
    """A miss's note on the files the layout leaves out, as the listing ``pages`` finds
    them (``vault.left_out_files``), with what a served miss checks to take it as it is:
    the stat of the vault root, of each dir that walk listed and of each ignore file it
    read. The listed dirs' own mtime_ns and ctime_ns are in ``served_dirs``. A dir's
    entries change only with its mtime, a file's bytes only with its, so a note whose
    every such stat is as it was is the note a listing would make now; the config and the
    listed dirs' ignore files are the server's to watch (a change to one answers
    "rescan"). None when a stat could not be trusted: one changed within ``page.RACY_NS``
    of now (git's racy rule: a change in the same tick leaves the stat as it is), or the
    listing is incomplete (the note then needs the vault listed again, as the scan does)."""
    from mnemosyne_core import page
    from mnemosyne_core.vault import left_out_files

    racy_from = now_ns - page.RACY_NS
    if pages.incomplete or any(info.st_mtime_ns >= racy_from for info in infos):
        return None
    entered: list[str] = []
    # The walk warns of an ignore file it cannot read; the miss it is made for does not.
    warnings = len(pages.warnings)
    try:
        left_out = left_out_files(pages, entered)
    finally:
        del pages.warnings[warnings:]
    if left_out is None:
        return None
    try:
        keys = [(path, _lstat_key(path)) for path in [pages.vault, *entered]]
    except OSError:
        return None
    if any(key is not None and key[2] >= racy_from for _path, key in keys):
        return None
    return left_out, keys


def _lstat_key(path: str) -> tuple[int, ...] | None:
    """(mode, *``stat_key``) of the file at ``path``, unfollowed; None when it is not there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return (info.st_mode, *stat_key(info))


class ServedListing:
    """What a served call reuses of the last listing (``keep_listing``)."""

    __slots__ = ("_left_out", "dir_paths", "entries_kept", "listed", "pages")

    def __init__(self, pages: Scan, dir_paths: dict[str, str], listed: int, entries_kept: bool, left_out: Any) -> None:
        #: The listing as a Scan, without its names (``listing`` is empty: the pages are
        #: the index's own).
        self.pages = pages
        #: Each listed dir's path as read, by its vault-relative path.
        self.dir_paths = dir_paths
        #: How many pages the listing listed.
        self.listed = listed
        #: Whether each listed dir's mtime_ns and ctime_ns are as they were.
        self.entries_kept = entries_kept
        self._left_out = left_out

    def left_out(self) -> list[tuple[str, str]] | None:
        """A miss's note on the files the layout leaves out, as a listing would find them
        now (``_kept_left_out``); None when that cannot be vouched for (a listing can)."""
        if self._left_out is None or not self.entries_kept:
            return None
        left_out, keys = self._left_out
        try:
            if any(_lstat_key(path) != (None if key is None else tuple(key)) for path, key in keys):
                return None
        except OSError:
            return None
        return [(kind, rel_path) for kind, rel_path in left_out]


def served_listing(vault_real: str, index: NoteIndex, home: str) -> ServedListing | None:
    """The listing ``keep_listing`` kept; None when there is none, a listed dir is not the
    dir it was (gone, or another file system mounted over it: no event tells that; one
    ``stat`` a listed dir), a page-named symlink no longer leads where it led (its target,
    or a link on its way, may lie in a dir no watch sees: each is resolved again, one
    ``realpath`` a symlink), or the scan would refuse the vault for this caller
    (``location.non_vault_reason``: the listing may have been kept by a caller with another
    ``home``)."""
    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.location import non_vault_reason
    from mnemosyne_core.page import followed_symlink
    from mnemosyne_core.vault import Scan

    blob = index.meta("served")
    if not isinstance(blob, bytes):
        return None
    # Written by ``keep_listing`` into our own 0600 file.
    fields = marshal.loads(blob)  # noqa: S302
    if fields is None:
        return None
    dirs, links, symlinks, warnings, incomplete, memory_dir, heading_titles, zero_config, listed, left_out = fields
    if zero_config and non_vault_reason(vault_real, home) is not None:
        return None
    dir_paths: dict[str, str] = {}
    entries_kept = True
    for dir_rel, dir_path, device, inode, mtime_ns, ctime_ns in index.served_dirs():
        try:
            info = os.stat(dir_path)
        except OSError:
            return None
        if (info.st_dev, info.st_ino) != (device, inode):
            return None
        entries_kept = entries_kept and (info.st_mtime_ns, info.st_ctime_ns) == (mtime_ns, ctime_ns)
        dir_paths[dir_rel] = dir_path
    for dir_rel, name in symlinks:
        rel_path = join_rel(dir_rel, name)
        link_path = f"{dir_paths[dir_rel]}/{name}" if dir_rel in dir_paths else os.path.join(vault_real, rel_path)
        if not os.path.islink(link_path) or followed_symlink(vault_real, rel_path, link_path)[0] != links.get(rel_path):
            return None
    pages = Scan(vault_real, tuple(dirs))
    pages.symlinks = [(dir_rel, name) for dir_rel, name in symlinks]
    pages.links = dict(links)
    pages.warnings = [Diagnostic.from_fields(tuple(warning)) for warning in warnings]
    pages.incomplete = incomplete
    pages.memory_dir = memory_dir
    pages.heading_titles = heading_titles
    return ServedListing(pages, dir_paths, listed, entries_kept, left_out)


__all__ = [
    "CatchUp",
    "Fresh",
    "ListingChanged",
    "ServedListing",
    "fresh_listed",
    "fresh_served",
    "keep_listing",
    "served_listing",
    "whole_dirs",
]
