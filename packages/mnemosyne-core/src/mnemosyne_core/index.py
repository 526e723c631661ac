"""The resident index behind ``wiki serve``: every page's find and recall inputs in memory,
kept current by inotify, answering exactly as the scan does.

What it keeps per page is what the one matcher (``find.judge``) and recall's rule
(``recall.entry_if_match``) take as input: the folded title, the folded vault-relative
path, the folded text, the frontmatter fields find reports, and the frontmatter bytes
recall parses. It never decides a match itself.

How it stays exact (docs/server.md):

- The listing is the scan's own: a rebuild calls ``vault.scan``, which calls back to watch
  each dir it lists just before listing it (``_watch_listed_dir``), so a page written into
  a dir after its listing is an event. Afterwards, an event on a file name in a listed dir
  re-classifies that one entry with the scan's rules (the walk's ``takes_name``,
  ``vault.followed_symlink``) and re-reads it.
- In a tree, any change to the set of dirs the walk enters (a dir made, deleted, moved in
  or out, chmodded) or to a ``.gitignore`` or ``.ignore`` throws everything away and
  rebuilds: the rebuild watches each new dir before it reads it (``_listed_dir_event``).
- In a tree, every dir the walk enters is watched, so the index also keeps the markdown
  files the layout leaves out there (a suffix it does not search: ``Note.MD``,
  ``x.markdown`` under ``[".md"]``) as the scan lists them, re-judging a name on its event
  with the walk's ``leaves_out``: a miss carries them, and its caller need not walk the
  tree for its note. A flat layout's sub-dirs are not watched: its caller walks.
- ``sync`` drains the inotify queue. The kernel queues an event before the system call that
  made the change returns, so a drain after a request arrived has seen every change
  completed before the request was sent.
- An overflow, a lost watch (dir deleted, moved, unmounted), a change of permissions on a
  watched dir, or any change at the vault root (or a dir on the way to a nested searched
  dir) to a searched dir's name or to ``.mnemosyne.toml`` throws everything away and
  rebuilds.
- A rebuild that fails (out of inotify watches, say) leaves nothing to answer from:
  ``failure`` says why and every query is declined until a rebuild succeeds. The index
  never answers from part of a tree.
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
from mnemosyne_core.cache import Page, read_page, record_contains, record_position, utf8
from mnemosyne_core.config import DEFAULT_SCANNED_DIRS, VAULT_CONFIG_FILE, VAULT_ROOT_DIR, vault_layout
from mnemosyne_core.errors import MnemosyneError, VaultError
from mnemosyne_core.vault import (
    IGNORE_FILES,
    LEFT_OUT_SUFFIX,
    PageRef,
    Scan,
    followed_symlink,
    join_rel,
    read_as_judged,
    resolve_vault,
    scan,
    unreadable_warning,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from mnemosyne_core.backend import Backend
    from mnemosyne_core.config import Layout
    from mnemosyne_core.diagnostics import Diagnostic
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.results import FindResult
    from mnemosyne_core.vault import Identity, TreeWalk

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
#: Why a dir could not be watched when the scan cannot list it either (it is gone, not a
#: dir, or not readable): then its parent's watch reports what changes that.
_NOT_A_DIR_NOW = (errno.ENOENT, errno.ENOTDIR, errno.EACCES)


def listing_key(layout: Layout) -> tuple[object, ...]:
    """What of a layout decides which files are listed (not where it came from)."""
    return (layout.dirs, layout.depth, layout.suffixes, layout.exclude)


def _dir_identity(path: str) -> tuple[int, int] | None:
    """The (device, inode) of the dir at ``path`` now, or None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


class NotServed(MnemosyneError):
    """The index cannot answer this call exactly (another vault or other dirs, a vault that
    keeps changing under the query, a lost state): the caller scans instead."""


class _Snapshot:
    """The listed pages as flat lists, made once per change: a find runs one comprehension
    per keyword, a recall one loop."""

    __slots__ = ("pages", "records", "unreadable")

    def __init__(self, pages: list[tuple[PageRef, Page]]):
        self.pages = pages
        #: Each page's record; an unreadable page's is empty, which holds no keyword.
        self.records = [page.record for _, page in pages]
        #: The unreadable pages' paths and errors.
        self.unreadable = [(ref.rel_path, page.error) for ref, page in pages if page.error is not None]


class _Dir:
    """A listed dir as the index holds it: the pages directly in it."""

    __slots__ = ("left_out", "pages", "path", "symlinks", "volatile", "warnings")

    def __init__(self, path: str):
        #: Where it is read (the resolved target when the dir is a symlink).
        self.path = path
        self.pages: dict[str, Page] = {}
        #: In a tree: the names of the markdown files in it the layout leaves out.
        self.left_out: set[str] = set()
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
        #: The layout of the last rebuild (None when the vault had none: ``_error``).
        self.layout: Layout | None = None
        self.watcher: inotify.Inotify | None = None
        self._root_wd = -1
        #: The listed dirs (vault-relative, "" for the root) each watch descriptor reports on
        #: (more than one when two listed paths are the same dir).
        self._dir_wds: dict[int, list[str]] = {}
        #: The watched dirs on the way from the vault root to a searched dir, and the names
        #: in each that lead there (or, at the root, decide the layout): an event on one of
        #: them may change which dirs are listed.
        self._path_wds: dict[int, frozenset[str]] = {}
        #: Each listed dir's (device, inode) when it was watched: one swapped for another
        #: between its watch and its listing is caught.
        self._watched: dict[str, tuple[int, int]] = {}
        self._root_id: tuple[int, int] = (0, 0)
        #: The listed dirs by vault-relative path ("" for the root), in scan order.
        self._dirs: dict[str, _Dir] = {}
        #: The walk of the last rebuild, when the layout has one: it judges names met later.
        self._walk: TreeWalk | None = None
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
        #: Entries whose event may change whether they are left out (``_Dir.left_out``).
        self._dirty_left_out: set[tuple[str, str]] = set()
        #: Whether ``_Dir.left_out`` is kept (a tree: every dir holding one is watched).
        self._keeps_left_out = False
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

    def _forget(self) -> None:
        """Drop every page, watch and rule of the last build."""
        self._dirs, self._dir_wds, self._path_wds, self._watched, self._dirty = {}, {}, {}, {}, set()
        self._dirty_left_out, self._keeps_left_out = set(), False
        self._snapshot, self.layout, self._walk = None, None, None

    def _fail(self, error: OSError) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._forget()
        self._stale = True
        if error.errno == errno.ENOSPC:
            reason = inotify.out_of_watches_reason()
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
        self._forget()
        self._listing_warnings, self._incomplete, self._dir_links, self._error = [], 0, {}, None
        self._stale = self._names_root_dirs = False
        info = os.stat(self.vault)
        self._root_id = (info.st_dev, info.st_ino)
        self._root_wd = watcher.add_watch(self.vault, ROOT_EVENTS | inotify.IN_ONLYDIR)
        self._path_wds[self._root_wd] = frozenset((VAULT_CONFIG_FILE,))
        try:
            layout = vault_layout(self.vault, self.dirs_override)
        except VaultError as error:
            self.dirs = ()
            self._error = error
            return
        self.dirs = layout.dirs
        self._watch_paths_to_dirs(layout)
        # No left-out files are kept: those an ignore file excludes lie in dirs no watch
        # sees, so a served miss lists the vault for its note, as on a flat layout.
        left_out: list[tuple[str, str]] | None = None
        try:
            listing = scan(self.vault, self.dirs_override, left_out=left_out, before_listing=self._watch_listed_dir)
        except VaultError as error:
            self._error = error
            return
        if listing.dirs != self.dirs:
            self._stale = True  # the config changed under us: its event rebuilds again
        self.layout = layout
        # A flat miss lists the vault in the caller (no left-out files kept here), so what
        # the listing passed over would only sit in memory for the server's whole life.
        listing.passed_over = []
        self._walk = listing.walk
        skipped = {}
        for dir_rel, name in listing.symlinks:
            rel_path = join_rel(dir_rel, name)
            _read_path, warning = followed_symlink(self.vault, rel_path, os.path.join(self.vault, rel_path))
            if warning is not None:
                skipped[warning] = (dir_rel, name)
        for dir_name in self.dirs:
            if dir_name != VAULT_ROOT_DIR and os.path.islink(os.path.join(self.vault, dir_name)):
                self._dir_links[dir_name] = self._link_target(dir_name)
        for dir_rel, dir_path, names in listing.listing:
            watched = self._watched.get(dir_rel)
            if watched is not None and _dir_identity(dir_path) != watched:
                self._stale = True  # swapped between watch and listing
            held = self._dirs[dir_rel] = _Dir(dir_path)
            for name in names:
                rel_path = join_rel(dir_rel, name)
                page = held.pages[name] = read_page(listing.links.get(rel_path) or f"{dir_path}/{name}", rel_path)
                if page.volatile:
                    held.volatile.add(name)
        for dir_rel, name in listing.symlinks:
            self._dirs[dir_rel].symlinks.add(name)
        if left_out is not None and listing.walk is not None and listing.walk.tree:
            # A tree lists every dir it leaves a file out of (none lies below a listed dir).
            for _kind, rel_path in left_out:
                dir_rel, _, name = rel_path.rpartition("/")
                self._dirs[dir_rel].left_out.add(name)
            self._keeps_left_out = True
        for warning in listing.warnings:
            if warning in skipped:
                dir_rel, name = skipped[warning]
                self._dirs[dir_rel].warnings[name] = warning
            else:
                self._listing_warnings.append(warning)
        self._incomplete = listing.incomplete
        self._names_root_dirs = bool(listing.dir_warnings)

    def _watch_paths_to_dirs(self, layout: Layout) -> None:
        """Watch every dir on the way from the vault root to a nested searched dir, each for
        the names that lead on (at the root also the config file and the default dirs,
        whose presence decides the layout): creating, removing or renaming one of them
        changes which dirs are listed. In a tree, the ignore files of those dirs apply to
        the searched dirs below them too. A dir on the way that is absent is not watched:
        its parent, watched already, reports its arrival."""
        assert self.watcher is not None
        also = IGNORE_FILES if layout.tree else ()
        leads: dict[str, set[str]] = {"": {VAULT_CONFIG_FILE, *DEFAULT_SCANNED_DIRS, *also}}
        for dir_name in layout.dirs:
            if dir_name == VAULT_ROOT_DIR:
                continue
            parts = dir_name.split("/")
            for depth in range(len(parts)):
                leads.setdefault("/".join(parts[:depth]), set(also)).add(parts[depth])
        self._path_wds[self._root_wd] = frozenset(leads.pop(""))
        for dir_rel in sorted(leads, key=lambda rel: rel.count("/")):
            try:
                wd = self.watcher.add_watch(os.path.join(self.vault, dir_rel), inotify.DIR_EVENTS | inotify.IN_ONLYDIR)
            except OSError as error:
                if error.errno in _NOT_A_DIR_NOW:
                    continue
                raise
            self._path_wds[wd] = self._path_wds.get(wd, frozenset()) | leads[dir_rel]

    def _watch_listed_dir(self, dir_rel: str, dir_path: str) -> None:
        """The scan's call just before it lists a dir: watch it first. A dir that cannot be
        watched because it is gone, not a dir, or not readable cannot be listed either, and
        whatever changes that is an event on its parent, which is watched: the scan's
        warning for it stands until then. Out of watches (ENOSPC) raises: the index is not
        built, rather than built without the pages of a dir it cannot follow."""
        assert self.watcher is not None
        try:
            wd = self.watcher.add_watch(dir_path, inotify.DIR_EVENTS | inotify.IN_ONLYDIR)
            info = os.stat(dir_path)
        except OSError as error:
            if error.errno in _NOT_A_DIR_NOW:
                return
            raise
        self._dir_wds.setdefault(wd, []).append(dir_rel)
        self._watched[dir_rel] = (info.st_dev, info.st_ino)

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
        for dir_rel, name in dirty:
            self._refresh(dir_rel, name)
        dirty, self._dirty_left_out = self._dirty_left_out, set()
        for dir_rel, name in dirty:
            self._refresh_left_out(dir_rel, name)
        for dir_name, link_target in self._dir_links.items():
            # A target moved away and made anew at the same path is another dir: its
            # identity, not its path, says whether the watch and the pages still hold.
            if self._link_target(dir_name) != link_target:
                return False
        for dir_rel, held in self._dirs.items():
            if held.symlinks or held.volatile:  # a tree has many dirs, few of them hold either
                for name in list(held.symlinks | held.volatile):
                    self._recheck(held, dir_rel, name)
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

    def _recheck(self, held: _Dir, dir_rel: str, name: str) -> None:
        """Re-read a page that no event covers (every query): when it reads as before, keep
        the old Page (and its recall fields) and the snapshot, which holds only pages."""
        before, snapshot = held.pages.get(name), self._snapshot
        self._refresh(dir_rel, name)
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
                continue
            known = False
            leads = self._path_wds.get(event.wd)
            if leads is not None:
                # The root itself, its config file, or a dir on the way to a searched dir
                # (created, deleted, renamed, retargeted, chmodded): which dirs are listed
                # may change. A warning that lists the vault's dirs changes with any of them.
                known = True
                name = event.name
                lists_root = event.wd == self._root_wd and self._names_root_dirs
                if mask & inotify.WATCH_LOST or not name or name in leads or lists_root:
                    self._stale = True
            listed = self._dir_wds.get(event.wd)
            if listed is not None:
                known = True
                if mask & inotify.WATCH_LOST or not event.name:
                    self._stale = True  # the dir itself was deleted, moved or chmodded
                else:
                    for dir_rel in listed:
                        self._listed_dir_event(dir_rel, event.name, mask)
            if not known and mask & inotify.IN_IGNORED == 0:
                self._stale = True  # an event from a watch we no longer know
        return bool(events)

    def _listed_dir_event(self, dir_rel: str, name: str, mask: int) -> None:
        """An event on the entry ``name`` of the listed dir ``dir_rel``: a page to re-read,
        or, in a tree, a change to the dirs the walk enters or to its ignore rules, after
        which only a rebuild knows what is listed."""
        walk = self._walk
        if walk is not None and walk.tree:
            if name in IGNORE_FILES:
                self._stale = True
                return
            if mask & inotify.IN_ISDIR:
                if walk.enters_dir(dir_rel, name):
                    self._stale = True
                return
        if walk.takes_name(dir_rel, name) if walk is not None else self._takes_name(name):
            self._dirty.add((dir_rel, name))
        elif self._keeps_left_out and walk is not None and walk.leaves_out(dir_rel, name):
            self._dirty_left_out.add((dir_rel, name))

    def _takes_name(self, name: str) -> bool:
        """Whether a flat listing (no walk) would list a file named ``name``."""
        suffixes = self.layout.suffixes if self.layout is not None else ()
        return not name.startswith(".") and name.endswith(suffixes)

    def _root_unchanged(self) -> bool:
        try:
            info = os.stat(self.vault)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._root_id

    def _refresh(self, dir_rel: str, name: str) -> None:
        """Re-classify and re-read one entry of a listed dir, by the scan's rules."""
        held = self._dirs.get(dir_rel)
        if held is None:
            return
        rel_path = join_rel(dir_rel, name)
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
        elif stat.S_ISDIR(mode) and self._walk is not None and self._walk.enters_dir(dir_rel, name):
            self._stale = True  # a dir the walk enters (its own event says so too)

    def _refresh_left_out(self, dir_rel: str, name: str) -> None:
        """Re-judge one markdown-like name the layout leaves out (by ``leaves_out``, which
        the event checked): left out while something other than a dir holds it."""
        held = self._dirs.get(dir_rel)
        if held is None:
            return
        held.left_out.discard(name)
        try:
            mode = os.lstat(f"{held.path}/{name}").st_mode
        except FileNotFoundError:
            return
        except OSError:
            self._stale = True
            return
        if not stat.S_ISDIR(mode):
            held.left_out.add(name)

    # --- answering ---

    def watched_dirs(self) -> list[str]:
        """The listed dirs that are watched now, vault-relative ("" for the root), sorted."""
        return sorted(dir_rel for listed in self._dir_wds.values() for dir_rel in listed)

    @property
    def page_count(self) -> int:
        return sum(len(held.pages) for held in self._dirs.values())

    def _check_layout(self, vault_real: str, layout: Layout, dirs_given: bool) -> None:
        """NotServed unless a call about ``vault_real`` with ``layout`` (its dirs named by
        --dir: ``dirs_given``) is one this index answers exactly as the scan."""
        if vault_real != self.vault:
            raise NotServed(f"the vault {vault_real} is not the served vault {self.vault}")
        if self.failure is not None:
            raise NotServed(self.failure)
        if layout.dirs != self.dirs:
            raise NotServed("the call scans other dirs than the server")
        if self.layout is not None and listing_key(layout) != listing_key(self.layout):
            raise NotServed("the call's layout is not the one the server listed")
        if dirs_given != bool(self.dirs_override) and not self._lists_every_dir():
            # The scan warns about a --dir that is missing, and only when --dir was given.
            raise NotServed("the call names its dirs differently than the server")
        if self._error is not None:
            # A vault without a scanned dir is not worth serving; its message names the
            # vault's other dirs, which no watch follows.
            raise NotServed(str(self._error))

    def _lists_every_dir(self) -> bool:
        """Whether every searched dir was listed at the last rebuild (none missing or skipped)."""
        return all(("" if dir_name == VAULT_ROOT_DIR else dir_name) in self._dirs for dir_name in self.dirs)

    def _current_snapshot(self) -> _Snapshot:
        """The listed pages in scan order, as of the last sync."""
        if self._snapshot is None:
            self._snapshot = _Snapshot(list(self._pages()))
        return self._snapshot

    def _pages(self) -> Iterator[tuple[PageRef, Page]]:
        for dir_rel, held in self._dirs.items():
            for name, page in held.pages.items():
                yield PageRef(dir_rel, name, f"{held.path}/{name}"), page

    def left_out(self) -> list[tuple[str, str]] | None:
        """The markdown files the layout leaves out, as ``scan(left_out=...)`` lists them
        (in another order), when the index keeps them (a tree); None when it does not."""
        if not self._keeps_left_out:
            return None
        return [
            (LEFT_OUT_SUFFIX, join_rel(dir_rel, name)) for dir_rel, held in self._dirs.items() for name in held.left_out
        ]

    def _warnings(self) -> list[Diagnostic]:
        warnings = list(self._listing_warnings)
        for held in self._dirs.values():
            warnings += held.warnings.values()
        return warnings

    def _identity(self, rel_path: str) -> Identity:
        dir_rel, _, name = rel_path.rpartition("/")
        identity = self._dirs[dir_rel].pages[name].identity
        assert identity is not None  # only pages read whole are matched
        return identity

    def find_in_memory(
        self,
        vault_real: str,
        layout: Layout,
        dirs_given: bool,
        keywords: Sequence[str],
        limit: int,
        *,
        wants_content: bool = False,
    ) -> tuple[FindResult, Identity | None]:
        """``find.search``'s answer for the resolved vault and layout, as of now, without any
        page's content; with ``wants_content`` and one match, that page's identity as it
        was read, so that whoever reads it can tell it is the same version. ``find.judge``
        decides every page and a ``find.Tally`` collects, as in the scan. Raises
        InvalidQueryError as the scan does, or NotServed."""
        from mnemosyne_core.find import Tally, judge, prepare_query

        folded = prepare_query(keywords, limit)
        needles = [utf8(keyword) for keyword in folded]
        self.sync()
        self._check_layout(vault_real, layout, dirs_given)
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
                partial(record_contains, record, text_start),
                partial(record_position, record, text_start),
                page.folded_aliases,
            )
            if key is not None:
                fields = {"constellation": page.constellation, "type": page.type}
                tally.add_match(ref.rel_path, ref.dir, page.title, fields, key)
        listing = Scan(self.vault, self.dirs)
        listing.warnings = self._warnings()
        listing.incomplete = self._incomplete
        result = tally.result(listing, keywords)
        if result.total == 0:
            result.left_out = self.left_out()
            result.not_text = sum(page.not_text for _, page in snapshot.pages)
        one = wants_content and result.total == 1
        return result, self._identity(result.matches[0].path) if one else None

    def recall_in_memory(
        self, vault_real: str, layout: Layout, dirs_given: bool, topic: str | Sequence[str]
    ) -> tuple[RecallResult, list[Identity]]:
        """``recall.recall``'s answer for the resolved vault and layout, as of now, without the
        read entries' content: their identities as read instead (see ``find_in_memory``).
        Raises InvalidQueryError as the scan does, or NotServed."""
        from mnemosyne_core.recall import RecallResult, fold_terms, rank, recall_fields, split_topic, take_page

        terms = split_topic(topic)
        folded_terms = fold_terms(terms)
        self.sync()
        self._check_layout(vault_real, layout, dirs_given)
        result = RecallResult(self.vault, topic if isinstance(topic, str) else " ".join(topic), terms)
        result.warnings = self._warnings()
        result.unreadable = self._incomplete
        for ref, page in self._current_snapshot().pages:
            if page.error is not None:
                result.unreadable += 1
                result.warnings.append(unreadable_warning(ref.rel_path, page.error))
                continue
            if page.recall is False:
                page.recall = recall_fields(page.head) if page.head is not None else None
            fields = page.recall if not isinstance(page.recall, bool) else None
            take_page(result, ref, fields, folded_terms, b"")
        rank(result)
        if not result.matches:
            result.left_out = self.left_out()
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
        layout = vault_layout(vault_real, dirs)  # a bad config or --dir: the scan's error
        for _attempt in range(MAX_ATTEMPTS):
            result, identity = self.find_in_memory(
                vault_real, layout, bool(dirs), keywords, limit, wants_content=keep_content
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
        layout = vault_layout(vault_real, dirs)  # a bad config or --dir: the scan's error
        for _attempt in range(MAX_ATTEMPTS):
            result, identities = self.recall_in_memory(vault_real, layout, bool(dirs), topic)
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
