"""What ``wiki serve`` keeps: the dirs the vault's listing enters, watched with inotify, and
which files in them changed since a token. It never reads a page and never judges a query
(git's fsmonitor daemon and watchman work so): the caller asks "what changed since token
T", reads those pages itself with its own rights, and matches with the one matcher.

How the answer stays exact:

- The watched dirs are the listing's own: ``vault.scan`` calls back just before it lists a
  dir (``before_listing``), and the dir is watched there, so a change made after the watch
  is an event and one made before it is in the listing the caller makes.
- Before answering, the watch makes sure it has seen every change made before the question
  (``sync``): it writes a cookie file into a dir the same inotify instance watches and reads
  events until the cookie's own arrives. The kernel queues events in order, so every event
  of a change completed before the cookie was written has been read by then.
- Any doubt answers "rescan" (``None`` paths), never a partial list: a queue overflow, a
  watch lost (a dir deleted, moved, unmounted), a dir made, removed or renamed in a listed
  dir, a change to ``.mnemosyne.toml``, ``.obsidian/`` or an ignore file, a change on the
  way to a searched dir (the root's own mode or owner among them), a listed dir behind a
  symlink or on another file system than the vault, a symlinked or hard-linked config or
  ignore file, or one whose stat changed (each question compares them), a file made under
  a name no page has that may be another name of a page (``_may_be_a_pages_link``), a
  watch limit reached, a cookie not seen in time, a token from before the last rebuild.
  A rebuild makes a new generation: every older token is unknown.
- No event tells of a mount: the mount table is compared before each answer, and the
  caller compares the listed dirs' (device, inode) too. The caller also resolves every
  page-named symlink again and re-stats the pages a watch cannot follow (symlinked pages,
  pages with other hard links, pages changed too recently to trust their stat). What
  neither can see (a hard link made, in a dir no watch sees, after a page was read;
  writes through a memory map) is named in docs/server.md.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time

from mnemosyne_core import inotify
from mnemosyne_core.config import DEFAULT_SCANNED_DIRS, OBSIDIAN_DIR, VAULT_CONFIG_FILE, VAULT_ROOT_DIR, vault_layout
from mnemosyne_core.errors import VaultError
from mnemosyne_core.page import join_rel
from mnemosyne_core.vault import IGNORE_FILES, scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mnemosyne_core.config import Layout

#: Events on the vault root and the dirs on the way to a nested searched dir that can
#: change which dirs are listed or how.
PATH_EVENTS = inotify.DIR_EVENTS
#: A token names a generation (a random id, new at each rebuild) and a count of changes.
TOKEN_SEPARATOR = ":"  # noqa: S105 - a token of changes, not a secret
#: Past this many changed paths since a token, the caller rescans: listing the vault is
#: cheaper than stat-ing a long list, and the answer must stay small.
MAX_PATHS = 10_000
#: How long ``sync`` waits for its cookie before it answers "rescan".
COOKIE_SECONDS = 1.0
COOKIE_PREFIX = "cookie."
#: How a doubt that a rebuild may clear begins: each question tries the build again (out
#: of watches, at most every RETRY_SECONDS, or on an event of the part watched).
CANNOT_WATCH = "cannot watch the vault: "
#: Out of watches, how long a failed build is kept before a question or the server's
#: loop tries again: each try walks the vault's dirs up to the limit, which costs more
#: than the call that asks; a question meanwhile is answered "rescan" at once.
RETRY_SECONDS = 2.0


def mount_table(vault_real: str) -> bytes:
    """The lines of this process's mount namespace's table (``/proc/self/mountinfo``) whose
    mount point is the vault or below it (empty where there is none to read). A mount
    anywhere else (a USB stick, a container, another program's tmpfs) hides nothing a
    listing reads: a dir mounted over the vault's path or one above it changes the root's
    (device, inode), which every caller compares, and symlinked pages are stat'ed on each
    call. Comparing the whole table made every such mount answer "rescan"."""
    try:
        with open("/proc/self/mountinfo", "rb") as mounts:
            table = mounts.read()
    except OSError:
        return b""
    # The kernel escapes these four bytes of a mount point as octal (show_mountinfo).
    point = os.fsencode(vault_real)
    for byte, escaped in ((b"\\", b"\\134"), (b" ", b"\\040"), (b"\t", b"\\011"), (b"\n", b"\\012")):
        point = point.replace(byte, escaped)
    below = point.rstrip(b"/") + b"/"
    kept = []
    for line in table.splitlines(keepends=True):
        fields = line.split(b" ", 5)
        if len(fields) > 4 and (fields[4] == point or fields[4].startswith(below)):
            kept.append(line)
    return b"".join(kept)


def _rule_key(info: os.stat_result) -> tuple[int, ...]:
    """What tells a config or ignore file's change, a new hard link to it included."""
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev, info.st_nlink


class VaultWatch:
    """The watched dirs of one vault, and the files changed in them since each token."""

    def __init__(self, vault_real: str, cookie_dir: str | None = None, home: str | None = None):
        self.vault = vault_real
        #: The ``~`` of the server's caller, for the listing's home-dir refusal (``vault.scan``).
        self.home = home
        #: A private dir the same inotify instance watches, for the cookie files of ``sync``
        #: (None: no cookie, the queue is only drained: for tests of the watch alone).
        self.cookie_dir = cookie_dir
        self.watcher: inotify.Inotify | None = None
        #: Why every answer is "rescan" until the next rebuild (a doubt of this build), or
        #: why no watch could be built (then each sync retries).
        self.doubt: str | None = "not built yet"
        self.rebuilds = 0
        #: The vault's part of the mount table as this build saw it: a file system mounted
        #: over a listed dir or page (or taken away) raises no inotify event, so every
        #: question compares it.
        self._mounts = b""
        self._cookie_wd = -1
        self._cookies = 0
        #: The layout's page suffixes (a file not named so is never a page).
        self._suffixes: tuple[str, ...] = ()
        self._forget()

    def _forget(self) -> None:
        """A new generation, watching nothing yet."""
        self.generation = os.urandom(8).hex()
        #: How many files changed since the generation began: a token's count.
        self.count = 0
        #: (count, vault-relative path) of each change, oldest first.
        self.log: list[tuple[int, str]] = []
        #: The listed dirs (vault-relative) each watch descriptor reports on.
        self._dir_wds: dict[int, list[str]] = {}
        #: The watched dirs on the way to a searched dir (the root among them), and the names
        #: in each whose change may change the listing.
        self._path_wds: dict[int, frozenset[str]] = {}
        #: The path of each watched dir, by watch descriptor.
        self._wd_paths: dict[int, str] = {}
        #: The config and ignore files the listing read, by path, with their stat
        #: (``_rule_key``): a write through another name raises no event in a watched dir,
        #: so each question compares them.
        self._rule_files: dict[str, tuple[int, ...]] = {}
        #: The (device, inode) of the vault root this build watches ((0, 0): none); a
        #: caller believes an answer only about the dir it sees at the vault's path.
        self.root: tuple[int, int] = (0, 0)
        #: When the last build ran out of watches (``time.monotonic``), or None.
        self._out_of_watches_at: float | None = None
        self._stale = False

    @property
    def fd(self) -> int:
        return self.watcher.fd if self.watcher is not None else -1

    @property
    def watched_dirs(self) -> int:
        return len(self._dir_wds)

    @property
    def failed(self) -> bool:
        """Whether no watch could be built (``CANNOT_WATCH``): a later build may succeed."""
        return self.doubt is not None and self.doubt.startswith(CANNOT_WATCH)

    def token(self) -> str:
        return f"{self.generation}{TOKEN_SEPARATOR}{self.count}"

    # --- keeping it current ---

    def rebuild(self) -> None:
        """Forget everything and watch the vault's listed dirs anew, each before it is
        listed. A failure (out of watches, a dir that cannot be read) leaves ``doubt`` set:
        every answer is "rescan" until a rebuild succeeds."""
        self.close()
        self._forget()
        self._mounts = mount_table(self.vault)
        self.rebuilds += 1
        try:
            self.watcher = inotify.Inotify()
            self.doubt = self._build()
        except VaultError as error:
            # Not a vault the listing would search (the home dir, say): callers list it and
            # say so themselves, with their own HOME.
            self.doubt = str(error)
        except OSError as error:
            self.doubt = f"{CANNOT_WATCH}{error.strerror or error}"
            if error.errno == errno.ENOSPC:
                # Found only once the walk reached the dir past the limit: the next try is
                # as dear, so it waits (a root gone or unreadable fails at once, and is
                # tried again on every question).
                self.doubt = f"{CANNOT_WATCH}{inotify.out_of_watches_reason()}"
                self._out_of_watches_at = time.monotonic()

    def _build(self) -> str | None:
        assert self.watcher is not None
        if self.cookie_dir is not None:
            self._cookie_wd = self.watcher.add_watch(self.cookie_dir, inotify.IN_CREATE | inotify.IN_ONLYDIR)
        root_info = os.stat(self.vault)
        # Before the watch: a root this build cannot watch is answered "rescan", not
        # taken by callers for another dir.
        self.root = (root_info.st_dev, root_info.st_ino)
        root_wd = self.watcher.add_watch(self.vault, PATH_EVENTS | inotify.IN_ONLYDIR)
        self._wd_paths[root_wd] = self.vault
        # .obsidian/ too: made or removed, it changes how every page is titled.
        self._path_wds[root_wd] = frozenset((VAULT_CONFIG_FILE, OBSIDIAN_DIR, *DEFAULT_SCANNED_DIRS))
        if os.path.islink(os.path.join(self.vault, VAULT_CONFIG_FILE)):
            return "the vault's .mnemosyne.toml is a symlink, whose target no watch follows"
        linked = self._keep_rule_file(VAULT_CONFIG_FILE, os.path.join(self.vault, VAULT_CONFIG_FILE))
        if linked is not None:
            return linked
        try:
            layout = vault_layout(self.vault)
        except VaultError as error:
            return str(error)  # the caller lists the vault and says what is wrong itself
        self._suffixes = layout.suffixes
        way = self._watch_paths_to_dirs(layout)
        if isinstance(way, str):
            return way
        listing = scan(self.vault, require_dirs=False, before_listing=self._watch_listed_dir, home=self.home)
        for dir_rel, dir_path, _names in listing.listing:
            if os.path.realpath(os.path.join(self.vault, dir_rel)) != dir_path or os.path.islink(dir_path):
                return f"the listed dir {dir_rel or '.'}/ is behind a symlink, which no watch follows"
            if os.stat(dir_path).st_dev != root_info.st_dev:
                return f"the listed dir {dir_rel or '.'}/ is on another file system than the vault"
        if listing.skipped:
            return "a searched dir is a symlink, which no watch follows"
        # The ignore files of the listed dirs and, in a tree, whose walk reads the rules
        # above a searched dir (``TreeWalk.ancestor_rules``), of the dirs on the way to it.
        rule_dirs = [(dir_rel, dir_path) for dir_rel, dir_path, _names in listing.listing]
        if layout.tree:
            rule_dirs += way
        for dir_rel, dir_path in dict.fromkeys(rule_dirs):
            for name in IGNORE_FILES:
                unsure = self._keep_rule_file(join_rel(dir_rel, name), os.path.join(dir_path, name))
                if unsure is not None:
                    return unsure
        return None

    def _keep_rule_file(self, rel_path: str, path: str) -> str | None:
        """Keep the stat of a config or ignore file the listing read, for each question to
        compare (``_rule_files_changed``); the doubt when no watch can vouch for it: a
        symlink (its target lies anywhere) or a file with other hard links (a write through
        another name raises no event in the dir watched here)."""
        try:
            info = os.lstat(path)
        except OSError:
            return None  # not there (a new one is an event), or not readable by the listing either
        if stat.S_ISLNK(info.st_mode):
            return f"{rel_path} is a symlink, whose target no watch follows"
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_nlink > 1:
            return f"{rel_path} has other hard links, through which a write raises no event here"
        self._rule_files[path] = _rule_key(info)
        return None

    def _rule_files_changed(self) -> bool:
        """Whether a config or ignore file the listing read is not as it was: written
        through another name, or given one (a link raises no event in its dir)."""
        for path, key in self._rule_files.items():
            try:
                if _rule_key(os.lstat(path)) != key:
                    return True
            except OSError:
                return True
        return False

    def _watch_paths_to_dirs(self, layout: Layout) -> str | list[tuple[str, str]]:
        """Watch every dir on the way from the vault root to a nested searched dir, each for
        the names that lead on (and in a tree, its ignore files, which apply below it), and
        return them as (vault-relative dir, path). The doubt when that way, or a searched
        dir, is a symlink: even one whose target is gone now, since its target may be made
        again where no watch sees it (a searched dir would then be listed by every caller
        and watched by none)."""
        assert self.watcher is not None
        also = IGNORE_FILES if layout.tree else ()
        leads: dict[str, set[str]] = {}
        for dir_name in layout.dirs:
            if dir_name == VAULT_ROOT_DIR:
                continue
            parts = dir_name.split("/")
            for depth in range(len(parts)):
                leads.setdefault("/".join(parts[:depth]), set(also)).add(parts[depth])
        way = []
        for dir_rel in sorted(leads, key=lambda rel: rel.count("/")):
            path = os.path.join(self.vault, dir_rel) if dir_rel else self.vault
            try:
                wd = self.watcher.add_watch(path, PATH_EVENTS | inotify.IN_ONLYDIR)
            except OSError as error:
                if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                    continue  # its parent, watched, reports its arrival
                raise
            self._path_wds[wd] = self._path_wds.get(wd, frozenset()) | frozenset(leads[dir_rel])
            self._wd_paths[wd] = path
            way.append((dir_rel, path))
        # Checked once the watches are in place: the way's watches report the symlink's
        # removal, and the rebuild that follows can trust the dir again.
        for dir_name in layout.dirs:
            parts = [] if dir_name == VAULT_ROOT_DIR else dir_name.split("/")
            for depth in range(1, len(parts) + 1):
                if os.path.islink(os.path.join(self.vault, *parts[:depth])):
                    return f"the way to the searched dir {dir_name}/ goes through a symlink, which no watch follows"
        return way

    def _watch_listed_dir(self, dir_rel: str, dir_path: str) -> None:
        """The scan's call just before it lists a dir: watch it first. One that cannot be
        watched because it is gone or unreadable cannot be listed either; out of watches
        raises, so no answer is ever given for a vault watched in part."""
        assert self.watcher is not None
        try:
            wd = self.watcher.add_watch(dir_path, inotify.DIR_EVENTS | inotify.IN_ONLYDIR)
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return
            raise
        self._dir_wds.setdefault(wd, []).append(dir_rel)
        self._wd_paths[wd] = dir_path

    def take_events(self, awaited_cookie: str | None = None) -> bool:
        """Take every queued event; True when ``awaited_cookie`` was among them. A doubt
        rebuilds the watch (a new generation) once the batch is read."""
        if self.watcher is None:
            return False
        seen = False
        events = self.watcher.read()
        for at, event in enumerate(events):
            if event.wd == self._cookie_wd and self._cookie_wd >= 0:
                seen = seen or event.name == awaited_cookie
                continue
            if event.mask & inotify.IN_Q_OVERFLOW:
                self._stale = True
                continue
            leads = self._path_wds.get(event.wd)
            # No name: the dir's own mode or owner changed, which decides whether the
            # listing can read it (the vault root's above all).
            if leads is not None and (event.name in leads or not event.name or event.mask & inotify.WATCH_LOST):
                self._stale = True
            listed = self._dir_wds.get(event.wd)
            page_named = not event.name.startswith(".") and event.name.endswith(self._suffixes)
            if (
                event.mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO)
                and not event.mask & inotify.IN_ISDIR
                and event.name
                and event.wd in self._wd_paths
                and (listed is None or not page_named)
                and self._may_be_a_pages_link(events, at)
            ):
                # A name no page has, given to a page's file: writes through it raise
                # events of that name only, which say nothing of the page.
                self._stale = True
            if listed is None:
                continue
            if event.mask & (inotify.WATCH_LOST | inotify.IN_ISDIR) or not event.name:
                # A dir lost, made, removed or renamed, or the listed dir's own mode changed
                # (which decides what can be read in it): the listing may differ.
                self._stale = True
            elif event.name in IGNORE_FILES or event.name == VAULT_CONFIG_FILE:
                self._stale = True
            elif page_named:
                # Only such a name can be a page (the listing's own rule): a change to any
                # other file (an editor's swap file, an image) is no change to the pages.
                self.count += 1
                self.log += [(self.count, join_rel(dir_rel, event.name)) for dir_rel in listed]
        if self._stale or len(self.log) > 4 * MAX_PATHS:  # such old tokens would be told to rescan anyway
            self.rebuild()
        return seen

    def _may_be_a_pages_link(self, events: list[inotify.Event], at: int) -> bool:
        """Whether the file the create or move-in event ``events[at]`` names may be another
        name of a page: a regular file with other hard links, or one gone before it could
        be looked at (a link made, written through and removed leaves no other trace),
        unless it was only renamed into a dir watched here (that name's own event tells
        then). A file found gone was renamed or removed before this look, so the events of
        that are queued by now: they are read into ``events``, which the caller goes on
        through."""
        event = events[at]
        assert self.watcher is not None
        try:
            info = os.lstat(os.path.join(self._wd_paths[event.wd], event.name))
        except FileNotFoundError:
            events += self.watcher.read()
            later = events[at + 1 :]
            moved = next(
                (
                    e.cookie
                    for e in later
                    if e.wd == event.wd and e.name == event.name and e.mask & inotify.IN_MOVED_FROM
                ),
                None,
            )
            return not any(e.cookie == moved and e.mask & inotify.IN_MOVED_TO and e.wd in self._wd_paths for e in later)
        except OSError:
            return True
        return stat.S_ISREG(info.st_mode) and info.st_nlink > 1

    def sync(self) -> bool:
        """Read every event of a change completed before now (the cookie, see the module's
        docstring); False when that could not be made sure of. While no watch could be
        built, the build is tried again (out of watches, once RETRY_SECONDS have passed
        since the last try; before that, False at once)."""
        last = self._out_of_watches_at
        if self.failed and (last is None or time.monotonic() - last >= RETRY_SECONDS):
            self.rebuild()
        if self.watcher is None or self.failed:
            return False
        if self.cookie_dir is None:
            self.take_events()
            return True
        self._cookies += 1
        name = f"{COOKIE_PREFIX}{os.getpid()}.{self._cookies}"
        path = os.path.join(self.cookie_dir, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.close(fd)
        except OSError:
            return False
        try:
            generation = self.generation
            deadline = time.monotonic() + COOKIE_SECONDS
            while not self.take_events(name):
                if self.generation != generation:
                    return True  # rebuilt: every older token is unknown now, nothing is missed
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.watcher is None:
                    return False
                select.select([self.watcher.fd], [], [], remaining)
            return True
        finally:
            os.unlink(path)

    # --- the one question ---

    def changes_since(self, token: str | None) -> tuple[str, tuple[str, ...] | None]:
        """(the token now, the vault-relative paths of the files changed since ``token``),
        the paths None for "rescan": any doubt, or a token this generation did not give."""
        synced = self.sync()
        if synced and self.doubt is None and (mount_table(self.vault) != self._mounts or self._rule_files_changed()):
            # Something was mounted or unmounted (what it hides, no watch sees), or a config
            # or ignore file was written or linked under another name.
            self.rebuild()
            synced = False
        now = self.token()
        if not synced or self.doubt is not None or token is None:
            return now, None
        generation, _, count = token.partition(TOKEN_SEPARATOR)
        if generation != self.generation or not count.isdigit() or int(count) > self.count:
            return now, None
        since = int(count)
        paths = sorted({path for changed, path in self.log if changed > since})
        if len(paths) > MAX_PATHS:
            return now, None
        return now, tuple(paths)

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._cookie_wd = -1
