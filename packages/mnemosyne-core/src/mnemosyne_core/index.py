"""The resident index behind ``wiki serve``: every page's find and recall inputs in memory,
kept current by inotify, answering exactly as the scan does.

What it keeps per page is what the one matcher (``find.judge``) and recall's rule
(``recall.entry_if_match``) take as input: the folded title, the folded vault-relative
path, the folded text, the frontmatter fields find reports, and the frontmatter bytes
recall parses. It never decides a match itself.

How it stays exact (docs/server.md):

- The listing is the scan's own: a rebuild calls ``vault.scan``; afterwards, an event on a
  name in a scanned dir re-classifies that one entry with the scan's rules
  (``vault.is_page_name``, ``vault.followed_symlink``) and re-reads it.
- ``sync`` drains the inotify queue. The kernel queues an event before the system call that
  made the change returns, so a drain after a request arrived has seen every change
  completed before the request was sent.
- An overflow, a lost watch (dir deleted, moved, unmounted), a change of permissions on a
  watched dir, or any change at the vault root to a scanned dir's name or to
  ``.mnemosyne.toml`` throws everything away and rebuilds.
- What inotify on the scanned dirs cannot see is re-checked on every query: symlinked
  pages (their targets may change anywhere in the vault) and pages with more than one
  hard link are re-classified and re-read; a scanned dir that is a symlink is re-resolved.
"""

from __future__ import annotations

import errno
import os
import stat
from functools import partial

from mnemosyne_core import inotify
from mnemosyne_core.config import DEFAULT_SCANNED_DIRS, VAULT_CONFIG_FILE, scanned_dirs, vault_layout
from mnemosyne_core.errors import MnemosyneError, VaultError
from mnemosyne_core.fold import decode, fold
from mnemosyne_core.frontmatter import locate, string_field, title_of
from mnemosyne_core.vault import (
    PAGE_SUFFIX,
    PageRef,
    Scan,
    followed_symlink,
    identity_of,
    is_page_name,
    open_page,
    read_as_judged,
    read_to_end,
    resolve_vault,
    scan,
    unreadable_warning,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from mnemosyne_core.backend import Backend
    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.find import FindResult
    from mnemosyne_core.recall import RecallFields, RecallResult
    from mnemosyne_core.vault import Identity

#: Events on the vault root that can change which dirs are scanned or how.
ROOT_EVENTS = (
    inotify.IN_ATTRIB
    | inotify.IN_CLOSE_WRITE
    | inotify.IN_MODIFY
    | inotify.IN_MOVED_FROM
    | inotify.IN_MOVED_TO
    | inotify.IN_CREATE
    | inotify.IN_DELETE
    | inotify.IN_DELETE_SELF
    | inotify.IN_MOVE_SELF
)
#: How often a query is retried when the vault changes while it is answered.
MAX_ATTEMPTS = 3


class NotServed(MnemosyneError):
    """The index cannot answer this call exactly (another vault or other dirs, a vault that
    keeps changing under the query, a lost state): the caller scans instead."""


class Page:
    """One listed page: what find and recall need of it, or why it could not be read."""

    __slots__ = (
        "constellation",
        "error",
        "folded_aliases",
        "folded_path",
        "folded_title",
        "head",
        "identity",
        "recall",
        "record",
        "text_start",
        "title",
        "type",
        "volatile",
    )

    def __init__(self) -> None:
        #: UTF-8 of folded title, NUL, folded vault-relative path, NUL, each folded alias
        #: and a NUL, then the folded text. One buffer: ``keyword in record`` finds the pages
        #: worth judging in one C call.
        self.record: bytes | None = None
        #: Where the text starts in ``record``.
        self.text_start = 0
        #: judge's inputs, kept as they are given to it.
        self.folded_title = ""
        self.folded_path = ""
        self.folded_aliases: tuple[str, ...] = ()
        self.title = ""
        self.constellation: str | None = None
        self.type: str | None = None
        #: The page's bytes up to the end of its frontmatter (recall parses them), or None.
        self.head: bytes | None = None
        #: Recall's parsed fields, made on the first recall and kept until the page changes.
        self.recall: RecallFields | bool | None = False
        #: The file as it was read (``identity_of``); None when it could not be.
        self.identity: Identity | None = None
        #: Why the page could not be read (then ``record`` is None).
        self.error: OSError | None = None
        #: Re-read on every query: a symlink's target or a file with other hard links can
        #: change without an event on the watched dirs.
        self.volatile = False

    def reads_as(self, other: Page) -> bool:
        """Whether ``other`` (the same page read again) gives every query the same inputs.
        A page that could not be read is never taken as unchanged: errors do not compare."""
        return (
            self.error is None
            and other.error is None
            and all(getattr(self, slot) == getattr(other, slot) for slot in _READ_SLOTS)
        )


#: What ``read_page`` sets: all of a Page but the recall fields made from ``head`` later.
_READ_SLOTS = tuple(slot for slot in Page.__slots__ if slot != "recall")


def _record_contains(record: bytes, text_start: int, folded_keyword: str) -> bool:
    """``text_contains`` for judge: whether the keyword is in the page's folded text."""
    return record.find(_utf8(folded_keyword), text_start) >= 0


def _record_position(record: bytes, text_start: int, folded_keyword: str) -> tuple[int, int] | None:
    """``text_position`` for judge: where the keyword first occurs in the page's folded
    text, (line, column in characters), as the scan's ``TextMatcher.position`` counts it."""
    found = record.find(_utf8(folded_keyword), text_start)
    if found < 0:
        return None
    line_start = max(record.rfind(b"\n", text_start, found) + 1, text_start)
    # A match of whole UTF-8 characters starts on a character boundary: the bytes of its
    # line before it decode whole.
    column = len(record[line_start:found].decode("utf-8", "surrogatepass"))
    return record.count(b"\n", text_start, found), column


def _utf8(text: str) -> bytes:
    # File names may hold lone surrogates (undecodable bytes); keywords too. surrogatepass
    # keeps UTF-8's property that a byte match is a character match.
    return text.encode("utf-8", "surrogatepass")


def read_page(read_path: str, rel_path: str) -> Page:
    """Read one page whole and keep its inputs; a failure is kept as its warning."""
    from mnemosyne_core.find import aliases_of, page_fields

    page = Page()
    try:
        fd = open_page(read_path)
        try:
            data = read_to_end(fd)
            info = os.fstat(fd)
            page.volatile = info.st_nlink > 1
            page.identity = identity_of(info)
        finally:
            os.close(fd)
    except OSError as error:
        page.error = error
        return page
    name = rel_path.rpartition("/")[2]
    fields = page_fields(data)
    page.title = title_of(fields, name[: -len(PAGE_SUFFIX)])
    page.constellation = string_field(fields, "constellation")
    page.type = string_field(fields, "type")
    span = locate(data)
    page.head = data[: span[2]] if span is not None else None
    folded_text = data.lower() if data.isascii() else fold(decode(data)).encode("utf-8")
    page.folded_title = fold(page.title)
    page.folded_path = fold(rel_path)
    page.folded_aliases = tuple(fold(alias) for alias in aliases_of(fields))
    prefix = b"".join(_utf8(name) + b"\0" for name in (page.folded_title, page.folded_path, *page.folded_aliases))
    page.text_start = len(prefix)
    page.record = prefix + folded_text
    return page


class _Snapshot:
    """The listed pages as flat lists, made once per change: a find runs one comprehension
    per keyword, a recall one loop."""

    __slots__ = ("pages", "records", "unreadable")

    def __init__(self, pages: list[tuple[PageRef, Page]]):
        self.pages = pages
        #: Each page's record; an unreadable page's is empty, which holds no keyword.
        self.records = [page.record or b"" for _, page in pages]
        #: The unreadable pages' paths and errors.
        self.unreadable = [(ref.rel_path, page.error or OSError()) for ref, page in pages if page.record is None]


class _Dir:
    """A scanned dir as the index holds it."""

    __slots__ = ("pages", "path", "symlinks", "volatile", "warnings")

    def __init__(self, path: str):
        #: Where it is read (the resolved target when the dir is a symlink).
        self.path = path
        self.pages: dict[str, Page] = {}
        #: Every page-named symlink in it (followed or not), re-checked on every query.
        self.symlinks: set[str] = set()
        #: The pages with other hard links, re-read on every query.
        self.volatile: set[str] = set()
        #: The warnings of its symlinks that are not followed, by file name.
        self.warnings: dict[str, Diagnostic] = {}


class VaultIndex:
    """The pages of one vault, for the scanned dirs of ``dirs`` (None: the config's)."""

    def __init__(self, vault_real: str, dirs: Sequence[str] | None = None):
        self.vault = vault_real
        self.dirs_override = tuple(dirs) if dirs else None
        self.dirs: tuple[str, ...] = ()
        self.watcher: inotify.Inotify | None = None
        self._root_wd = -1
        self._dir_wds: dict[int, str] = {}
        self._root_id: tuple[int, int] = (0, 0)
        self._dirs: dict[str, _Dir] = {}
        #: Dir-level warnings of the last rebuild (a dir skipped or not listable).
        self._listing_warnings: list[Diagnostic] = []
        self._incomplete = 0
        #: The scanned dirs that are symlinks (followed or not), and what they led to at the
        #: last rebuild: the resolved path and the target's (device, inode), or None.
        self._dir_links: dict[str, tuple[str, tuple[int, int] | None]] = {}
        #: Why the index cannot answer (a rebuild failed: a permission, out of watches), or
        #: None. While set, every query is refused, so every caller scans; each sync retries.
        self.failure: str | None = None
        #: The VaultError the scan raised at the last rebuild, raised again to every query.
        self._error: VaultError | None = None
        self._dirty: set[tuple[str, str]] = set()
        self._stale = True
        #: Whether a warning of the last rebuild lists the vault's top-level dirs.
        self._names_root_dirs = False
        #: The pages in scan order as flat lists, made on the first query after a change.
        self._snapshot: _Snapshot | None = None
        #: How many full rebuilds happened (tests and --status read it).
        self.rebuilds = 0

    # --- keeping it current ---

    def rebuild(self) -> None:
        """Forget everything and index the vault anew, watches first so that no change
        made while listing is missed. When that fails (a dir it cannot read, no inotify
        watch left), nothing of the half-built state is ever answered from: ``failure``
        says why, every query is refused until a later rebuild succeeds."""
        self.rebuilds += 1
        try:
            self._build()
        except OSError as error:
            self._fail(error)
            return
        self.failure = None

    def _fail(self, error: OSError) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._dirs, self._dir_wds, self._dirty, self._snapshot = {}, {}, set(), None
        self._stale = True
        if error.errno == errno.ENOSPC:
            reason = "out of inotify watches (raise fs.inotify.max_user_watches)"
        elif error.errno == errno.EMFILE:
            reason = "out of inotify instances (raise fs.inotify.max_user_instances)"
        else:
            reason = f"{error.strerror or error}" + (f": {error.filename}" if error.filename else "")
        self.failure = f"the index could not be built ({reason}); find and recall scan until a rebuild succeeds"

    def _build(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self.watcher = watcher = inotify.Inotify()
        self._dirs, self._dir_wds, self._dirty, self._snapshot = {}, {}, set(), None
        self._listing_warnings, self._incomplete, self._dir_links, self._error = [], 0, {}, None
        self._stale = self._names_root_dirs = False
        info = os.stat(self.vault)
        self._root_id = (info.st_dev, info.st_ino)
        self._root_wd = watcher.add_watch(self.vault, ROOT_EVENTS | inotify.IN_ONLYDIR)
        try:
            layout = vault_layout(self.vault, self.dirs_override)
        except VaultError as error:
            self.dirs = ()
            self._error = error
            return
        self.dirs = layout.dirs
        if not layout.servable:
            # Only flat top-level dirs of .md pages are watched exactly; any other layout is
            # left to the scan. A default dir appearing at the root may make the vault an
            # Aion one again: a root event on any of their names rebuilds.
            self.dirs = tuple(dict.fromkeys((*DEFAULT_SCANNED_DIRS, *layout.dirs)))
            self._error = VaultError("the vault's layout is not a flat one of top-level dirs of .md pages")
            return
        watched: dict[str, tuple[int, int]] = {}
        for dir_name in self.dirs:
            path = os.path.join(self.vault, dir_name)
            try:
                wd = watcher.add_watch(path, inotify.DIR_EVENTS | inotify.IN_ONLYDIR)
                info = os.stat(path)
            except OSError as error:
                if error.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue  # absent or not a dir: a root event says when that changes
                raise  # out of watches, say: an unwatched dir could not be served exactly
            self._dir_wds[wd] = dir_name
            watched[dir_name] = (info.st_dev, info.st_ino)
        try:
            listing = scan(self.vault, self.dirs_override)
        except VaultError as error:
            self._error = error
            return
        if listing.dirs != self.dirs:
            self._stale = True  # the config changed under us: its event rebuilds again
        skipped = {}
        for dir_name, name in listing.symlinks:
            _read_path, warning = followed_symlink(
                self.vault, f"{dir_name}/{name}", os.path.join(self.vault, dir_name, name)
            )
            if warning is not None:
                skipped[warning] = (dir_name, name)
        for dir_name in self.dirs:
            if os.path.islink(os.path.join(self.vault, dir_name)):
                self._dir_links[dir_name] = self._link_target(dir_name)
        for dir_name, dir_path, names in listing.listing:
            info = os.stat(dir_path)
            if watched.get(dir_name) != (info.st_dev, info.st_ino):
                self._stale = True  # swapped between watch and listing
            held = self._dirs[dir_name] = _Dir(dir_path)
            for name in names:
                rel_path = f"{dir_name}/{name}"
                page = held.pages[name] = read_page(listing.links.get(rel_path) or f"{dir_path}/{name}", rel_path)
                if page.volatile:
                    held.volatile.add(name)
        for dir_name, name in listing.symlinks:
            self._dirs[dir_name].symlinks.add(name)
        for warning in listing.warnings:
            if warning in skipped:
                dir_name, name = skipped[warning]
                self._dirs[dir_name].warnings[name] = warning
            else:
                self._listing_warnings.append(warning)
        self._incomplete = listing.incomplete
        self._names_root_dirs = bool(listing.dir_warnings)

    def sync(self) -> None:
        """Take in every change completed so far: drain the event queue, then re-read what
        it named (or rebuild when it says the state is lost)."""
        if self.watcher is None:
            self.rebuild()
            return
        self.take_events()
        if self._stale or not self._root_unchanged() or not self._take_changes():
            self.rebuild()

    def _take_changes(self) -> bool:
        """Re-read what the events named and what no event covers; False when that lost
        the state (an entry that could not be re-classified, a dir link retargeted): a
        query answered now could omit a page, so a rebuild is due."""
        dirty, self._dirty = self._dirty, set()
        for dir_name, name in dirty:
            self._refresh(dir_name, name)
        for dir_name, link_target in self._dir_links.items():
            # A target moved away and made anew at the same path is another dir: its
            # identity, not its path, says whether the watch and the pages still hold.
            if self._link_target(dir_name) != link_target:
                return False
        for dir_name, held in self._dirs.items():
            for name in list(held.symlinks | held.volatile):
                self._recheck(held, dir_name, name)
        return not self._stale

    def _link_target(self, dir_name: str) -> tuple[str, tuple[int, int] | None]:
        """Where a scanned dir that is a symlink leads now: the resolved path and that
        dir's (device, inode), None when there is no dir there."""
        real = os.path.realpath(os.path.join(self.vault, dir_name))
        try:
            info = os.stat(real)
        except OSError:
            return real, None
        return real, (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None

    def _recheck(self, held: _Dir, dir_name: str, name: str) -> None:
        """Re-read a page that no event covers (every query): when it reads as before, keep
        the old Page (and its recall fields) and the snapshot, which holds only pages."""
        before, snapshot = held.pages.get(name), self._snapshot
        self._refresh(dir_name, name)
        after = held.pages.get(name)
        if snapshot is None or self._stale:
            return
        if before is None and after is None:
            self._snapshot = snapshot
        elif before is not None and after is not None and before.reads_as(after):
            held.pages[name] = before
            self._snapshot = snapshot

    def take_events(self) -> bool:
        """Drain the event queue into the set of names to re-read; returns whether there
        was any event. Cheap: nothing is read here."""
        assert self.watcher is not None
        events = self.watcher.read()
        for event in events:
            mask = event.mask
            if mask & inotify.IN_Q_OVERFLOW:
                self._stale = True
            elif event.wd == self._root_wd:
                # The root itself, its config file, or a scanned dir's name (created,
                # deleted, renamed, retargeted, chmodded): which dirs are scanned may change.
                name = event.name
                if mask & inotify.WATCH_LOST or not name or name == VAULT_CONFIG_FILE or name in self.dirs:
                    self._stale = True
                elif self._names_root_dirs:
                    self._stale = True  # a warning lists the vault's dirs: any may change it
            elif event.wd in self._dir_wds:
                if mask & inotify.WATCH_LOST or not event.name:
                    self._stale = True  # the dir itself was deleted, moved or chmodded
                elif is_page_name(event.name):
                    self._dirty.add((self._dir_wds[event.wd], event.name))
            elif mask & inotify.IN_IGNORED == 0:
                self._stale = True  # an event from a watch we no longer know
        return bool(events)

    def _root_unchanged(self) -> bool:
        try:
            info = os.stat(self.vault)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._root_id

    def _refresh(self, dir_name: str, name: str) -> None:
        """Re-classify and re-read one entry of a scanned dir, by the scan's rules."""
        held = self._dirs.get(dir_name)
        if held is None:
            return
        rel_path = f"{dir_name}/{name}"
        path = f"{held.path}/{name}"
        self._snapshot = None
        held.pages.pop(name, None)
        held.symlinks.discard(name)
        held.volatile.discard(name)
        held.warnings.pop(name, None)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return
        except OSError:
            self._stale = True
            return
        if stat.S_ISLNK(mode):
            held.symlinks.add(name)
            read_path, warning = followed_symlink(self.vault, rel_path, path)
            if warning is not None:
                held.warnings[name] = warning
            if read_path is not None:
                page = held.pages[name] = read_page(read_path, rel_path)
                page.volatile = True
        elif stat.S_ISREG(mode):
            page = held.pages[name] = read_page(path, rel_path)
            if page.volatile:
                held.volatile.add(name)

    # --- answering ---

    @property
    def page_count(self) -> int:
        return sum(len(held.pages) for held in self._dirs.values())

    def _check_layout(self, vault_real: str, wanted: tuple[str, ...], dirs_given: bool) -> None:
        """NotServed unless a call about ``vault_real`` over the dirs ``wanted`` (named by
        --dir: ``dirs_given``) is one this index answers exactly as the scan."""
        if vault_real != self.vault:
            raise NotServed(f"the vault {vault_real} is not the served vault {self.vault}")
        if self.failure is not None:
            raise NotServed(self.failure)
        # a bad config or --dir: the scan's error
        if not vault_layout(vault_real, list(wanted) if dirs_given else None).servable:
            raise NotServed("the call's layout is one the server does not watch: the scan answers")
        if wanted != self.dirs:
            raise NotServed("the call scans other dirs than the server")
        if dirs_given != bool(self.dirs_override) and len(self._dirs) != len(self.dirs):
            # The scan warns about a --dir that is missing, and only when --dir was given.
            raise NotServed("the call names its dirs differently than the server")
        if self._error is not None:
            # A vault without a scanned dir is not worth serving; its message names the
            # vault's other dirs, which no watch follows.
            raise NotServed(str(self._error))

    def _current_snapshot(self) -> _Snapshot:
        """The listed pages in scan order, as of the last sync."""
        if self._snapshot is None:
            self._snapshot = _Snapshot(list(self._pages()))
        return self._snapshot

    def _pages(self) -> Iterator[tuple[PageRef, Page]]:
        for dir_name in self.dirs:
            held = self._dirs.get(dir_name)
            if held is not None:
                for name, page in held.pages.items():
                    yield PageRef(dir_name, name, f"{held.path}/{name}"), page

    def _warnings(self) -> list[Diagnostic]:
        warnings = list(self._listing_warnings)
        for held in self._dirs.values():
            warnings += held.warnings.values()
        return warnings

    def _identity(self, rel_path: str) -> Identity:
        dir_name, _, name = rel_path.partition("/")
        identity = self._dirs[dir_name].pages[name].identity
        assert identity is not None  # only pages read whole are matched
        return identity

    def find_in_memory(
        self,
        vault_real: str,
        wanted: tuple[str, ...],
        dirs_given: bool,
        keywords: Sequence[str],
        limit: int,
        *,
        wants_content: bool = False,
    ) -> tuple[FindResult, Identity | None]:
        """``find.search``'s answer for the resolved vault and dirs, as of now, without any
        page's content; with ``wants_content`` and one match, that page's identity as it
        was read, so that whoever reads it can tell it is the same version. ``find.judge``
        decides every page and a ``find.Tally`` collects, as in the scan. Raises
        InvalidQueryError as the scan does, or NotServed."""
        from mnemosyne_core.find import Tally, judge, prepare_query

        folded = prepare_query(keywords, limit)
        needles = [_utf8(keyword) for keyword in folded]
        self.sync()
        self._check_layout(vault_real, wanted, dirs_given)
        tally = Tally(len(folded), limit)
        snapshot = self._current_snapshot()
        for rel_path, error in snapshot.unreadable:
            tally.unreadable_page(rel_path, error)
        tally.searched = len(snapshot.pages) - tally.unreadable
        # ``judge`` finds a keyword in a page when it is in its title, path, an alias or text, all
        # in its record (NUL-separated, and no keyword holds a NUL). So the pages
        # holding a keyword are those whose record does, and judge's count of it is
        # their number; a page that lacks a keyword anywhere is one judge would not
        # match (as the scan's own shortcut, Task._title_cannot_hold, relies on). judge
        # decides every page that holds them all, and where it sorts.
        records = snapshot.records
        holding = [[index for index, record in enumerate(records) if needle in record] for needle in needles]
        tally.counts = [len(pages) for pages in holding]
        fewest = min(holding, key=len)
        candidates = set(fewest).intersection(*holding)
        for index in candidates:
            ref, page = snapshot.pages[index]
            record, text_start = records[index], page.text_start
            _holds, key = judge(
                folded,
                ref.rel_path,
                page.folded_path,
                page.folded_title,
                partial(_record_contains, record, text_start),
                partial(_record_position, record, text_start),
                page.folded_aliases,
            )
            if key is not None:
                fields = {"constellation": page.constellation, "type": page.type}
                tally.add_match(ref.rel_path, ref.dir, page.title, fields, key)
        listing = Scan(self.vault, self.dirs)
        listing.warnings = self._warnings()
        listing.incomplete = self._incomplete
        result = tally.result(listing, keywords)
        one = wants_content and result.total == 1
        return result, self._identity(result.matches[0].path) if one else None

    def recall_in_memory(
        self, vault_real: str, wanted: tuple[str, ...], dirs_given: bool, topic: str | Sequence[str]
    ) -> tuple[RecallResult, list[Identity]]:
        """``recall.recall``'s answer for the resolved vault and dirs, as of now, without the
        read entries' content: their identities as read instead (see ``find_in_memory``).
        Raises InvalidQueryError as the scan does, or NotServed."""
        from mnemosyne_core.recall import RecallResult, fold_terms, rank, recall_fields, split_topic, take_page

        terms = split_topic(topic)
        folded_terms = fold_terms(terms)
        self.sync()
        self._check_layout(vault_real, wanted, dirs_given)
        result = RecallResult(self.vault, topic if isinstance(topic, str) else " ".join(topic), terms)
        result.warnings = self._warnings()
        result.unreadable = self._incomplete
        for ref, page in self._current_snapshot().pages:
            if page.record is None:
                result.unreadable += 1
                result.warnings.append(unreadable_warning(ref.rel_path, page.error or OSError()))
                continue
            if page.recall is False:
                page.recall = recall_fields(page.head) if page.head is not None else None
            fields = page.recall if not isinstance(page.recall, bool) else None
            take_page(result, ref, fields, folded_terms, b"")
        rank(result)
        return result, [self._identity(entry.path) for entry in result.read]

    def search(
        self,
        vault: str | os.PathLike[str] | None,
        keywords: Sequence[str],
        *,
        limit: int = 20,
        dirs: Sequence[str] | None = None,
        keep_content: bool = False,
    ) -> FindResult:
        """The Backend interface: ``find_in_memory`` for the vault and dirs as the scan
        resolves them, the one match's content (``keep_content``) read by the caller's own
        rights as a client of a server reads it. Raises what the scan raises, or NotServed."""
        from mnemosyne_core.find import prepare_query

        prepare_query(keywords, limit)  # the scan's InvalidQueryError comes first
        vault_real = resolve_vault(vault)
        wanted = scanned_dirs(vault_real, dirs)
        for _attempt in range(MAX_ATTEMPTS):
            result, identity = self.find_in_memory(
                vault_real, wanted, bool(dirs), keywords, limit, wants_content=keep_content
            )
            if identity is None:
                return result
            content = read_as_judged(vault_real, result.matches[0].path, identity)
            if content is not None:
                result.matches[0].content = content
                return result
        raise NotServed("the vault kept changing while the query was answered")

    def recall(
        self, vault: str | os.PathLike[str] | None, topic: str | Sequence[str], *, dirs: Sequence[str] | None = None
    ) -> RecallResult:
        """The Backend interface: ``recall_in_memory``, the read entries' content read as
        ``search`` reads it. Raises what the scan raises, or NotServed."""
        from mnemosyne_core.recall import fill_read_entries, split_topic

        split_topic(topic)
        vault_real = resolve_vault(vault)
        wanted = scanned_dirs(vault_real, dirs)
        for _attempt in range(MAX_ATTEMPTS):
            result, identities = self.recall_in_memory(vault_real, wanted, bool(dirs), topic)
            if fill_read_entries(result, identities):
                return result
        raise NotServed("the vault kept changing while the query was answered")

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None


if TYPE_CHECKING:

    def _index_is_a_backend(index: VaultIndex) -> Backend:
        """mypy --strict holds the index to the interface every command asks."""
        return index
