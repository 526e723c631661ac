"""Making the index hold every page of a call as it is on disk now, the way git keeps its
index: by stat, or by a ``wiki serve``'s word of what changed.

A call that listed the vault stats each listed page: one whose size, mtime_ns, ctime_ns,
inode and device are those the index holds, and that is not racy (``page.RACY_NS``), is
taken from the index; any other is read again by this process, with its own rights
(``page.read_page``). What was read, what could not be read and what is no longer listed
are written in one transaction, so another call sees all of it or none of it. A served call
(``fresh_served``) neither lists the vault nor stats its pages: only the ones the server
names and the ones a watch cannot vouch for (racy, hard-linked, symlinked).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in index.py
import contextlib
import marshal
import os
import stat
import time

from mnemosyne_core.index import stored_path, written_by
from mnemosyne_core.page import read_page, stat_key
from mnemosyne_core.vault import join_rel

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
    most = read_limit(sum(len(names) for _dir_name, _dir_path, names in listing)) if limit else -1
    kept = index.kept_dirs() if len({dir_name for dir_name, _, _ in listing}) == len(listing) else {}
    links = pages.links
    lstat, is_regular, loads = os.lstat, stat.S_ISREG, marshal.loads
    to_read: list[tuple[str, str]] = []
    gone: list[bytes] = []
    keep: list[tuple[bytes, bytes, bytes, int]] = []
    #: (dir key, prefix, names, what compared equal by name) of each dir compared row by row.
    compared: list[Compared] = []
    #: How many of the index's rows the dirs compared account for.
    accounted = 0
    for dir_name, dir_path, names in listing:
        prefix = f"{dir_name}/" if dir_name else ""
        dir_key = stored_path(dir_name)
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
            row = held.pop(stored_path(rel_path), None)
            if row is not None:
                _path, page_id, size, mtime_ns, ctime_ns, inode, device, racy, not_text = row
                try:
                    info = None if racy else lstat(read_path)
                except OSError:
                    info = None
                key = (size, mtime_ns, ctime_ns, inode, device)
                if info is not None and is_regular(info.st_mode) and stat_key(info) == key:
                    found_of[name] = (page_id, key, not_text)
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
        listed = {stored_path(join_rel(dir_name, name)) for dir_name, _dir_path, names in listing for name in names}
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
    return fresh


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
    lstat, is_regular = os.lstat, stat.S_ISREG
    keys: list[StatKey] = []
    for name in names:
        try:
            # Not followed: a page swapped for a symlink is read, and refused, anew.
            info = lstat(links.get(prefix + name) or f"{dir_path}/{name}")
        except OSError:
            return None
        if not is_regular(info.st_mode):
            return None
        keys.append((info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev))
    return keys


def _dir_digest(names: list[str], keys: list[StatKey]) -> bytes:
    """What the ``dirs`` table keeps of a dir: its page names, in listing order, with their
    stat keys, digested. Of their ``repr``: marshal's bytes depend on which of the objects
    are shared (its references), so equal values may marshal apart."""
    from _blake2 import blake2b

    return blake2b(repr((names, keys)).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def fresh_served(index: NoteIndex, pages: Scan, changed: Iterable[str]) -> Fresh:
    """The pages of the listing a served call reuses (``scan_from_fields``), fresh in the
    index: only the ``changed`` ones and those a watch cannot vouch for are stat'ed and, when
    changed, read again. Raises ListingChanged when one is no longer the listed file (only a
    listing can say what it is now)."""
    fresh = Fresh()
    listed = {dir_rel: (dir_path, set(names)) for dir_rel, dir_path, names in pages.listing}
    count = sum(len(names) for _, names in listed.values())
    if index.page_count() != count:
        raise ListingChanged("pages the index does not hold")  # unreadable ones: the listing says
    check = dict(index.watched_by_stat())
    linked = [path for path in pages.links if path not in check]
    check.update(index.stat_keys_of([*changed, *linked]))
    to_read: list[tuple[str, str]] = []
    for rel_path in [*check, *(path for path in changed if path not in check)]:
        dir_rel, _, name = rel_path.rpartition("/")
        dir_path, names = listed.get(dir_rel, ("", set()))
        if name not in names:
            raise ListingChanged(rel_path)  # a new file, maybe a page: the listing decides
        read_path = pages.links.get(rel_path) or f"{dir_path}/{name}"
        try:
            info = os.lstat(read_path)
        except OSError:
            raise ListingChanged(rel_path) from None
        if not stat.S_ISREG(info.st_mode):
            raise ListingChanged(rel_path)
        held = check.get(rel_path)
        if held is None:
            to_read.append((read_path, rel_path))
            continue
        _page_id, key, racy = held
        if racy or stat_key(info) != key:
            to_read.append((read_path, rel_path))
    if len(to_read) > read_limit(count):
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


def listing_fields(pages: Scan) -> tuple[Any, ...] | None:
    """What of the vault's own listing a served call needs instead of listing it again: the
    searched dirs, each listed dir with its names and (device, inode), the symlinked pages'
    targets, the listing's warnings and what it could not list, the title rule its layout
    gives (``Scan.heading_titles``), and whether that layout is the zero-config one (which
    the scan refuses for the caller's home dir). None when a dir vanished."""
    from mnemosyne_core.config import LAYOUT_FROM_ZERO_CONFIG

    try:
        identities = [tuple(_dir_identity(dir_path)) for _dir_rel, dir_path, _names in pages.listing]
    except OSError:
        return None
    warnings = [warning.as_fields() for warning in pages.warnings]
    listing = (pages.dirs, pages.listing, identities, pages.links, warnings, pages.incomplete, pages.memory_dir)
    zero_config = pages.layout is not None and pages.layout.source == LAYOUT_FROM_ZERO_CONFIG
    return (*listing, pages.symlinks, pages.heading_titles, zero_config)


def _dir_identity(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def scan_from_fields(vault_real: str, fields: tuple[Any, ...], home: str) -> Scan | None:
    """The listing ``listing_fields`` kept, as a Scan; None when a listed dir is not the
    dir it was (gone, or another file system mounted over it: no event tells that), a
    page-named symlink no longer leads where it led (its target, or a link on its way, may
    lie in a dir no watch sees: each is resolved again, one ``realpath`` a symlink), or the
    scan would refuse the vault for this caller (``location.non_vault_reason``: the listing
    may have been kept by a caller with another ``home``)."""
    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.location import non_vault_reason
    from mnemosyne_core.page import followed_symlink
    from mnemosyne_core.vault import Scan

    dirs, listing, identities, links, warnings, incomplete, memory_dir, symlinks, heading_titles, zero_config = fields
    if zero_config and non_vault_reason(vault_real, home) is not None:
        return None
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
    pages.heading_titles = heading_titles
    return pages


__all__ = [
    "CatchUp",
    "Fresh",
    "ListingChanged",
    "fresh_listed",
    "fresh_served",
    "listing_fields",
    "scan_from_fields",
    "whole_dirs",
]
