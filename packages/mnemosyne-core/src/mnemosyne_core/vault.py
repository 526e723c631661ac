"""Listing a vault: which of its files are pages (reading one is ``page``'s, finding the
vault ``location``'s).

Which files are pages is the vault's layout (``config.Layout``). By default (an Aion
vault) a page is a regular file directly inside a scanned dir whose name ends in ``.md``
(exact case) and does not start with ``.``. A tree layout takes every such file of the
dir's whole subtree instead, without hidden files and dirs and what ``.gitignore`` and
``.ignore`` files exclude. A symlink counts only when its target resolves inside the
vault; one that escapes, or is broken, is skipped with a warning and never read.
"""

from __future__ import annotations

import contextlib
import os
import time

from mnemosyne_core.config import (
    DIRS_FROM_DEFAULT,
    LAYOUT_FROM_DEFAULT,
    LAYOUT_FROM_ZERO_CONFIG,
    VAULT_CONFIG_FILE,
    VAULT_ROOT_DIR,
    home_dir,
    is_markdown_like,
    kept_vault_config,
    load_vault_config,
    markdown_like_endings,
    titles_from_headings,
    vault_layout,
)
from mnemosyne_core.diagnostics import (
    BROKEN_SYMLINK,
    CANNOT_LIST,
    IGNORE_FILE_UNUSED,
    SYMLINK_ESCAPES,
    UNKNOWN_DIR,
    Diagnostic,
)
from mnemosyne_core.errors import UnknownDirError, VaultError
from mnemosyne_core.location import is_inside, refuse_non_vault, resolve_vault
from mnemosyne_core.page import PageRef, followed_symlink, join_rel, open_page

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import difflib
    import re
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any, TypeAlias

    from pathspec import GitIgnoreSpec

    from mnemosyne_core.config import KeptConfig, Layout, VaultConfig

    #: An ignore file's stat as ``KeptRules.files`` keys it: mode (a symlink is refused,
    #: not read), size, mtime_ns, ctime_ns, inode, device; None when it cannot be stat'ed.
    FileKey = tuple[int, int, int, int, int, int] | None
    #: What ``TreeWalk._sort_entries`` sorts: a dir's entries as listed, or as kept.
    DirEntry: TypeAlias = "os.DirEntry[str] | _KeptEntry"

PAGE_SUFFIX = ".md"


def listed_vault(
    vault: str | os.PathLike[str] | None,
    dirs: Sequence[str] | None,
    environ: Mapping[str, str],
    cwd: str | None,
    home: str | None,
) -> Scan:
    """The vault found as ``resolve_vault`` finds it, listed as ``scan`` lists it, both
    with the caller's one ``~`` (``home``; None: the one ``environ`` names)."""
    home = home_dir(environ) if home is None else home
    return scan(resolve_vault(vault, environ, cwd, home), dirs, home=home)


#: Ingest writes a page to ``<prefix><16 random hex digits><suffix>`` in the target dir
#: first: hidden and not ending in .md, so find never lists it.
INGEST_TEMP_PREFIX = ".mnemosyne-ingest-"
INGEST_TEMP_SUFFIX = ".tmp"
_INGEST_TEMP_TOKEN_BYTES = 8
_HEX_DIGITS = frozenset("0123456789abcdef")
#: An ingest's temp file lives for milliseconds; untouched for this long, it can only be
#: left over from an ingest that was killed (SIGKILL, power loss) before it cleaned up.
STALE_TEMP_SECONDS = 3600


def new_ingest_temp_name() -> str:
    """A fresh name for an ingest's temp file; random, so racing ingests never share one."""
    import secrets  # lazy: only ingest writes

    return f"{INGEST_TEMP_PREFIX}{secrets.token_hex(_INGEST_TEMP_TOKEN_BYTES)}{INGEST_TEMP_SUFFIX}"


def is_stale_ingest_temp(entry: os.DirEntry[str], now: float) -> bool:
    """Whether ``entry`` is a temp file an interrupted ingest left behind: a regular file
    (not a symlink) with an ingest temp name, last modified more than STALE_TEMP_SECONDS
    before ``now`` (seconds since the epoch). A fresher one may belong to an ingest that is
    still running. False when the entry cannot be inspected (it vanished, say)."""
    # Exactly the shape ``new_ingest_temp_name`` makes, and nothing looser: a user's
    # ``.mnemosyne-ingest-notes.tmp`` is not ingest's to judge.
    name, token = entry.name, entry.name[len(INGEST_TEMP_PREFIX) : -len(INGEST_TEMP_SUFFIX)]
    if not (name.startswith(INGEST_TEMP_PREFIX) and name.endswith(INGEST_TEMP_SUFFIX)) or not (
        len(token) == 2 * _INGEST_TEMP_TOKEN_BYTES and _HEX_DIGITS.issuperset(token)
    ):
        return False
    try:
        return (
            entry.is_file(follow_symlinks=False)
            and now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
        )
    except OSError:
        return False


class KeptRules:
    """What a listing's config and ignore files decided, as the index keeps it (``meta``
    ``rules``) keyed by those files' stat, so that a call whose files are as they were
    parses neither (no tomllib, no pathspec, no regex compiled), and a dir whose stat is as
    it was is not listed again: git keeps its untracked files' verdicts and each dir's
    names so (its untracked cache), by the stat of each dir and ``.gitignore``.

    - ``config``: the parsed ``.mnemosyne.toml`` by its stat (``config.kept_vault_config``).
    - ``files``: each ignore file read, by vault-relative path: (its ``FileKey``, whether
      every rule of it names hidden paths only, which the walk never asks about).
    - ``walk``: each dir a listing sorted, by vault-relative path: (its key, ``_sort_key``:
      the dir's stat, the layout, the stat of every ignore file in force there; what the
      rules decided there: (name asked, a dir's ending in '/', the rule's file or
      ``EXCLUDED_BY_CONFIG``) for each name they leave out, none in a flat layout's dir;
      how the listing sorted its names (``SortedDir``), or None when that is not kept).

    The rules are a function of the files' bytes and the layout, and the names asked of
    them change only with the dir's stat; a file or dir whose stat could not vouch for its
    bytes or names (git's racy rule) is never kept. So what is kept under a key is what
    parsing anew would decide, and a file or dir whose key differs is parsed and decided
    as it always was. A listing that is handed this reads it; ``keep`` is what it would
    have kept."""

    __slots__ = ("config", "files", "walk")

    def __init__(self) -> None:
        self.config: KeptConfig | None = None
        self.files: dict[str, tuple[FileKey, bool]] = {}
        self.walk: dict[str, tuple[bytes, list[tuple[str, str]], SortedDir | None]] = {}

    @classmethod
    def loads(cls, blob: object) -> KeptRules:
        """The kept rules from the index's ``meta`` value (``dumps``); none when it holds
        none or is not of this shape."""
        import marshal

        kept = cls()
        if isinstance(blob, bytes):
            with contextlib.suppress(ValueError, EOFError, TypeError):
                # Written by ``dumps`` into our own 0600 file.
                fields = marshal.loads(blob)  # noqa: S302
                if isinstance(fields, tuple) and len(fields) == 3:
                    config, files, walk = fields
                    if isinstance(files, dict) and isinstance(walk, dict):
                        kept.config, kept.files, kept.walk = config, files, walk
        return kept

    def dumps(self) -> bytes:
        import marshal

        fields: tuple[Any, ...] = (self.config, self.files, self.walk)
        return marshal.dumps(fields)

    def same(self, other: KeptRules) -> bool:
        return (self.config, self.files, self.walk) == (other.config, other.files, other.walk)

    def with_others_of(self, kept: KeptRules) -> KeptRules:
        """These rules, with the files and dirs of ``kept`` that this listing did not meet
        (a --dir call's): still exact, as each stands by its own key."""
        merged = KeptRules()
        merged.config = self.config
        merged.files = {**kept.files, **self.files}
        merged.walk = {**kept.walk, **self.walk}
        return merged


class Scan:
    """The pages of a vault, in scan order, and the warnings met while listing them.

    ``incomplete`` counts what was in scope but could not be listed (a dir that vanished
    or could not be opened): a search over an incomplete scan cannot promise "no match".

    The listing is kept compact (``listing``: one file name list per dir) and ``pages``
    builds the PageRef objects on first use: at 100,000 pages they would cost ~30 MB that
    find, which streams over ``listing``, never needs.
    """

    __slots__ = (
        "_pages",
        "cache_enabled",
        "config",
        "dir_warnings",
        "dirs",
        "error",
        "failure",
        "heading_titles",
        "incomplete",
        "keep",
        "kept",
        "layout",
        "links",
        "listing",
        "memory_dir",
        "passed_over",
        "skipped",
        "symlinks",
        "vault",
        "walk",
        "warnings",
    )

    def __init__(self, vault: str, dirs: tuple[str, ...], layout: Layout | None = None):
        self.vault = vault
        self.dirs = dirs
        #: The layout the scan followed (None for a listing made another way, by the index).
        self.layout = layout
        #: (vault-relative dir, "" for the root; path of the dir as read; page file names in
        #: scan order), per dir listed: each searched dir, and in a tree every dir below it.
        self.listing: list[tuple[str, str, list[str]]] = []
        #: The read path of each page that is a symlink, by rel_path (its target, resolved).
        self.links: dict[str, str] = {}
        #: (dir name, file name) of every page-named symlink met, followed or not.
        self.symlinks: list[tuple[str, str]] = []
        self.warnings: list[Diagnostic] = []
        #: The warnings (also in ``warnings``) about the command line rather than a file:
        #: a --dir that names no dir of the vault.
        self.dir_warnings: list[Diagnostic] = []
        #: Why each scanned dir that is a symlink find does not follow was skipped, by name.
        self.skipped: dict[str, str] = {}
        #: Why no scanned dir could be listed (``scan(require_dirs=False)``), else None.
        self.error: str | None = None
        #: ``error`` as the error ``scan`` raises for it (an UnknownDirError when the --dir
        #: given named no dir of the vault), else None.
        self.failure: VaultError | None = None
        self.incomplete = 0
        #: The walk that listed a tree layout or one with an exclude (None for a flat
        #: listing): it decides what a name met later would be (the index asks it).
        self.walk: TreeWalk | None = None
        #: The config's memory dir (recall's logs), which no walk enters.
        self.memory_dir: str | None = None
        #: The config's ``[cache] enabled``: whether find and recall may use the index.
        self.cache_enabled = True
        #: The vault's config as the listing read it (None for a listing made another way):
        #: a call reads ``.mnemosyne.toml`` once.
        self.config: VaultConfig | None = None
        #: Whether a page without a frontmatter title takes its opening ``# `` heading as
        #: its title (``config.titles_from_headings``): the layout decides it, so every
        #: reader of the listing's pages titles them alike.
        self.heading_titles = False
        #: What the listing met and neither took as a page nor entered nor skipped as
        #: hidden, per listed dir: (vault-relative dir, the ignore rules in force there, the
        #: entries, and where they lie: None in a searched dir, LEFT_OUT_OUTSIDE for the
        #: vault root's entries outside the default (Aion) dirs, whose rules are read only
        #: when a miss asks; a dir sorted as the index kept it has its path and the names
        #: and kinds of those entries instead). A miss finds the markdown files the layout
        #: leaves out among them (``left_out_files``) instead of listing the searched dirs
        #: again. Kept only when ``scan`` was not given a ``left_out`` list.
        self.passed_over: list[PassedOver] = []
        #: What the index keeps of the config and the ignore files, as the call read it
        #: (``scan``'s ``kept``), and what this listing would have it keep now.
        self.kept = KeptRules()
        self.keep = KeptRules()
        self._pages: list[PageRef] | None = None

    def __len__(self) -> int:
        return sum(len(names) for _, _, names in self.listing)

    @property
    def pages(self) -> list[PageRef]:
        if self._pages is None:
            self._pages = [PageRef(dir_name, name, read_path) for dir_name, name, _, read_path in self.page_paths()]
        return self._pages

    def page_paths(self) -> Iterator[tuple[str, str, str, str]]:
        """Each listed page in scan order: (its dir, its file name, its vault-relative path,
        the path it is read at, which is its link's target for a page under a symlinked
        dir). The one place a listing becomes pages."""
        links = self.links
        for dir_name, dir_path, names in self.listing:
            prefix = f"{dir_name}/" if dir_name else ""
            for name in names:
                rel_path = prefix + name
                yield dir_name, name, rel_path, (links.get(rel_path) if links else None) or f"{dir_path}/{name}"


def scan(
    vault: str,
    dirs: Sequence[str] | None = None,
    *,
    require_dirs: bool = True,
    left_out: list[tuple[str, str]] | None = None,
    before_listing: Callable[[str, str], None] | None = None,
    home: str | None = None,
    kept: KeptRules | None = None,
) -> Scan:
    """List the pages of the vault at ``vault`` (a real path, see ``resolve_vault``), as its
    layout (``config.vault_layout``) says.

    ``dirs`` overrides the scanned dirs (--dir). Raises VaultError when none of the scanned
    dirs can be listed, naming any that was skipped as a symlink and why, or when a vault
    without config and without any default dir is one no one keeps notes in as a whole
    (``/``, the home dir); with ``require_dirs=False`` (wiki info) it returns the empty
    scan instead of the first, the reason in its ``error``.

    ``left_out``: a list to add the markdown files (``config.MARKDOWN_SUFFIXES``, any case)
    the layout leaves out to, as (kind, vault-relative path), the kind saying why
    (``left_out_kind``): in a sub-dir of a flat layout's dir, with a suffix it does not
    search, excluded by an ignore file (``ignored_kind``), or, under the default (Aion)
    layout, outside its dirs. What a miss tells about. Hidden files and what the config's
    ``exclude`` names are left out on purpose and not added. Without it, the scan keeps
    what its listing passed over (``Scan.passed_over``), and ``left_out_files`` finds the
    same files there later, listing only the dirs this scan did not enter.

    ``before_listing(dir_rel, dir_path)`` is called for every dir the layout lists, just
    before it is listed (``wiki serve`` watches it there: a change made after the call is
    an event, one made before it is in the listing). What it raises is not caught.

    ``home`` is the caller's ``~`` (``non_vault_reason``; default: this process's).

    ``kept``: what the index keeps of the config and the ignore files (``KeptRules``): what
    of it the files' stat still vouches for is taken instead of parsing them. What this
    listing would have kept is in the result's ``keep``, whatever ``kept`` was.
    """
    try:
        with os.scandir(vault) as entries:
            top = {entry.name: entry for entry in entries}
    except OSError as error:
        raise VaultError(f"cannot list vault {vault!r}: {error.strerror}; check its permissions") from None
    from mnemosyne_core import page

    kept = kept if kept is not None else KeptRules()
    racy_from = time.time_ns() - page.RACY_NS
    config, kept_config = kept_vault_config(vault, kept.config, racy_from)
    layout = vault_layout(vault, dirs, top, config)
    if layout.source == LAYOUT_FROM_ZERO_CONFIG and not dirs:
        refuse_non_vault(vault, home)
    result = Scan(vault, layout.dirs, layout)
    result.heading_titles = titles_from_headings(layout, top)
    result.memory_dir = config.memory_dir
    result.cache_enabled = config.cache_enabled
    result.config = config
    result.kept = kept
    result.keep.config = kept_config
    walk = None
    if layout.tree or layout.exclude or left_out is not None:
        walk = result.walk = TreeWalk(result, layout, config.memory_dir, left_out, before_listing, racy_from)
    not_dirs: list[str] = []
    for dir_name in result.dirs:
        if layout.tree and any(dir_covers(other, dir_name) for other in result.dirs):
            continue  # its pages are listed with the dir above it, once
        if dir_name == VAULT_ROOT_DIR:
            dir_rel, dir_path = "", vault
        elif "/" in dir_name:
            nested_path = _nested_dir_path(result, dir_name, not_dirs)
            if nested_path is None:
                continue
            dir_rel, dir_path = dir_name, nested_path
        else:
            dir_rel = dir_name
            entry = top.get(dir_name)
            if entry is None or not (entry.is_symlink() or entry.is_dir(follow_symlinks=False)):
                not_dirs.append(dir_name)
                continue
            followed = _followed_dir(result, dir_name, entry.path, not_dirs) if entry.is_symlink() else entry.path
            if followed is None:
                continue
            dir_path = followed
        if walk is None:
            if before_listing is not None:
                before_listing(dir_rel, dir_path)
            _scan_dir(result, dir_rel, dir_path, racy_from)
        else:
            walk.walk(dir_rel, dir_path)
    if layout.source == LAYOUT_FROM_DEFAULT and layout.dirs_source == DIRS_FROM_DEFAULT:
        # A dir merely named like a default dir makes the whole folder an Aion vault: what
        # lies beside the default dirs is never searched, and a miss must say so.
        outside = [
            entry
            for name, entry in top.items()
            if not name.startswith(".") and name not in layout.dirs and name != config.memory_dir
        ]
        if outside:
            passed_outside: PassedOver = ("", None, outside, LEFT_OUT_OUTSIDE)
            if left_out is not None and walk is not None:
                walk.add_left_out([passed_outside], left_out)
            else:
                result.passed_over.append(passed_outside)
    if not result.listing:
        if dirs and not_dirs and not result.skipped:
            # Every dir the command line named is missing: the call is mistyped, the vault
            # may be fine.
            failure: VaultError = UnknownDirError(_unknown_dirs_message(vault, not_dirs, top))
        else:
            failure = VaultError(_no_scanned_dir_message(result, _its_dirs(top), not_dirs))
        result.error = str(failure)
        result.failure = failure
        if require_dirs:
            raise failure
    elif dirs and not_dirs:
        # A default or configured dir may well be absent; a dir typed on the command line
        # that is not there is a typo the user should hear about.
        known = vault_dir_names(vault)
        for dir_name in not_dirs:
            warning = Diagnostic(dir_name, UNKNOWN_DIR, _dirs_hint(known, [dir_name], top))
            result.dir_warnings.append(warning)
            result.warnings.append(warning)
    return result


def dir_covers(outer: str, inner: str) -> bool:
    """Whether the searched dir ``outer`` (a layout's dir name, ``.`` for the root) holds
    the other searched dir ``inner`` below it."""
    return outer != inner and (outer == VAULT_ROOT_DIR or inner.startswith(outer + "/"))


def _nested_dir_path(result: Scan, dir_name: str, not_dirs: list[str]) -> str | None:
    """Where the nested searched dir ``dir_name`` (``docs/en``) is read, or None (then it is
    in ``not_dirs`` or ``result.skipped``): a dir reached through a symlink counts only
    when it stays inside the vault, as a top-level one does."""
    path = os.path.join(result.vault, dir_name)
    if not os.path.lexists(path):
        not_dirs.append(dir_name)
        return None
    return _followed_dir(result, dir_name, path, not_dirs)


def _followed_dir(result: Scan, dir_name: str, path: str, not_dirs: list[str]) -> str | None:
    """The real path of the searched dir ``dir_name`` at ``path`` (a symlink, or below one),
    or None: its link broken or leading out of the vault (warned, and kept in
    ``result.skipped``), or no dir (added to ``not_dirs``)."""
    real = os.path.realpath(path)
    if os.path.islink(path) and not os.path.exists(real):
        result.warnings.append(Diagnostic(dir_name, BROKEN_SYMLINK, is_dir=True))
        result.skipped[dir_name] = f"a broken symlink (to {os.readlink(path)!r})"
    elif not is_inside(real, result.vault):
        result.warnings.append(Diagnostic(dir_name, SYMLINK_ESCAPES, is_dir=True))
        result.skipped[dir_name] = f"a symlink to {real!r}, outside the vault, which find never reads"
    elif not os.path.isdir(real):
        not_dirs.append(dir_name)
    else:
        return real
    return None


def _no_scanned_dir_message(result: Scan, its_dirs: str, not_dirs: Sequence[str] = ()) -> str:
    """Why a scan found no dir to list, and the fix. A scanned dir skipped as a symlink is
    named with its reason, and one that is a file is named as a file: "has none of the
    scanned dirs" would send the user looking for a dir that is there."""
    if not result.skipped:
        return (
            f"vault {result.vault!r} has none of the scanned dirs ({', '.join(result.dirs)})"
            f"{_files_among(result.vault, not_dirs)}; {its_dirs}: "
            "pass the vault root with --vault, or name its dirs with --dir"
        )
    reasons = "; ".join(f"{name}/ is {reason}" for name, reason in result.skipped.items())
    return (
        f"vault {result.vault!r} has no scanned dir find can read ({', '.join(result.dirs)}): {reasons}; "
        "move the dir into the vault, or pass the dir that holds it as --vault"
    )


def _unknown_dirs_message(vault: str, names: Sequence[str], top: Mapping[str, os.DirEntry[str]]) -> str:
    """Why the dirs ``names``, all the --dir given, are no search, and the way out: the
    vault's dirs closest to them, then its dirs. The vault is named: a --dir meant for
    another vault (or relative to the current dir) reads plainly as such."""
    given = ", ".join(f"{name!r}" for name in names)
    return (
        f"--dir {given} {'names' if len(names) == 1 else 'name'} no dir of the vault {vault!r}"
        f"{_files_among(vault, names)}; "
        f"{_dirs_hint(vault_dir_names(vault), names, top)}"
    )


def _files_among(vault: str, names: Sequence[str]) -> str:
    """`` ('a' is a file, not a dir)`` for those of the dirs ``names`` that are there as files, else ""."""
    files = [name for name in names if os.path.lexists(os.path.join(vault, name))]
    if not files:
        return ""
    verb = "is a file" if len(files) == 1 else "are files"
    return f" ({', '.join(f'{name!r}' for name in files)} {verb}, not a dir)"


def _dirs_hint(known: Sequence[str], names: Sequence[str], top: Mapping[str, os.DirEntry[str]]) -> str:
    """What follows a --dir that names no dir: ``did you mean ...?`` when dirs of the
    vault (``known``) are close to ``names``, then its top-level dirs."""
    guesses = closest_dirs(names, known)
    return (f"did you mean {', '.join(guesses)}? " if guesses else "") + _its_dirs(top)


def _its_dirs(top: Mapping[str, os.DirEntry[str]]) -> str:
    """The vault's top-level dirs that could be scanned (not hidden), for a message, as
    many as ``capped_names`` shows."""
    names = []
    for name, entry in top.items():
        try:
            if not name.startswith(".") and entry.is_dir():
                names.append(name)
        except OSError:
            continue
    return f"its dirs are {capped_names(sorted(names))}" if names else "it has no dirs"


#: A message's list of names takes at most this many characters, then counts the rest: a
#: vault of 300 dirs must not turn a one-line error into a screenful.
NAMES_WIDTH = 80


def capped_names(names: Sequence[str]) -> str:
    """``names`` joined by ``, ``, as many as fit in NAMES_WIDTH characters (the first one
    always), then ``… and N more``."""
    shown: list[str] = []
    used = 0
    for name in names:
        used += len(name) + (2 if shown else 0)
        if shown and used > NAMES_WIDTH:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f", … and {rest} more" if rest else "")


#: The most dirs ``vault_dir_names`` lists: a mistyped --dir in a vault of a million dirs
#: must not cost a crawl of all of them.
MAX_LISTED_DIRS = 10_000
#: At most this many dirs are offered for a --dir that names none (``closest_dirs``).
MAX_GUESSES = 3


def vault_dir_names(vault: str) -> list[str]:
    """The vault's dirs a --dir could name, vault-relative with ``/``, shallowest first (a
    dir's own before those below it), at most MAX_LISTED_DIRS: hidden ones and what lies
    below a symlinked dir are left out, as a tree's walk leaves them."""
    found: list[str] = []
    queue = [("", vault)]
    for dir_rel, dir_path in queue:  # the queue grows as it is read: breadth first
        try:
            with os.scandir(dir_path) as entries:
                children = sorted(
                    (entry.name, entry.path, entry.is_symlink())
                    for entry in entries
                    if not entry.name.startswith(".") and _is_dir(entry)
                )
        except OSError:
            continue
        for name, path, is_link in children:
            rel = join_rel(dir_rel, name)
            found.append(rel)
            if len(found) >= MAX_LISTED_DIRS:
                return found
            if not is_link:
                queue.append((rel, path))
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def closest_dirs(names: Sequence[str], known: Sequence[str]) -> list[str]:
    """The dirs of ``known`` closest to the mistyped --dir ``names``, best first, at most
    MAX_GUESSES. For each name in turn: the dirs it is the tail of (``7.6`` for
    ``reference/7.6``), then those whose last part is its last part, then those whose last
    part ends in it after a letter or a separator (``30.4`` for Docusaurus'
    ``versioned_docs/version-30.4``, ``7.6`` for ``v7.6``), shallowest first;
    only when there are none, those difflib finds close (its default cutoff, 0.6) to the
    name, or whose last part is close to its last part, closest first. A dir that ends as
    the name does is the one meant, in the place the caller forgot; difflib's guesses
    beside it would be noise (``7.4`` for ``7.6``), so they only catch typos."""
    import difflib  # only a mistyped --dir pays for it

    guesses: list[str] = []
    for name in names:
        tail, last = "/" + name, name.rpartition("/")[2]
        ends = [dir_rel for dir_rel in known if dir_rel.endswith(tail)]
        same_last = [dir_rel for dir_rel in known if dir_rel.rpartition("/")[2] == last and dir_rel not in ends]
        named_last = [
            dir_rel for dir_rel in known if _names_as_its_end(dir_rel.rpartition("/")[2], last) and dir_rel not in ends
        ]
        found = sorted(ends, key=_depth_first) + sorted(same_last, key=_depth_first)
        found += sorted((dir_rel for dir_rel in named_last if dir_rel not in found), key=_depth_first)
        if not found:
            whole, part = difflib.SequenceMatcher[str](), difflib.SequenceMatcher[str]()
            whole.set_seq2(name)
            part.set_seq2(last)
            close = []
            for dir_rel in known:
                whole.set_seq1(dir_rel)
                part.set_seq1(dir_rel.rpartition("/")[2])
                ratio = max(_ratio(whole), _ratio(part))
                if ratio >= _CUTOFF:
                    close.append((-ratio, *_depth_first(dir_rel)))
            found = [dir_rel for _, _, dir_rel in sorted(close)]
        guesses += [guess for guess in found if guess not in guesses]
    return guesses[:MAX_GUESSES]


def _names_as_its_end(dir_name: str, name: str) -> bool:
    """Whether ``dir_name`` ends in ``name`` after something that is no part of a number
    (``version-30.4`` and ``v7.6`` do, ``17.6`` does not end in ``7.6``)."""
    return len(dir_name) > len(name) and dir_name.endswith(name) and dir_name[-len(name) - 1] not in "0123456789."


#: difflib's own default cutoff (``get_close_matches``), as the flags' guesses use.
_CUTOFF = 0.6


def _depth_first(dir_rel: str) -> tuple[int, str]:
    return (dir_rel.count("/"), dir_rel)


def _ratio(matcher: difflib.SequenceMatcher[str]) -> float:
    """The matcher's ratio, skipping its cost when the cheap upper bounds rule it out, as
    ``difflib.get_close_matches`` does."""
    if matcher.real_quick_ratio() < _CUTOFF or matcher.quick_ratio() < _CUTOFF:
        return 0.0
    return matcher.ratio()


def _scan_dir(result: Scan, dir_name: str, dir_path: str, racy_from: int) -> None:
    """List the pages directly in one searched dir (a flat layout without exclude). A dir
    whose stat is the one its sort was kept under is not listed again (``TreeWalk._walk``)."""
    names: list[str] = []
    suffixes = result.layout.suffixes if result.layout is not None else PAGE_SUFFIX
    # Listed first, so the pages met before a failure mid-listing are still searched.
    result.listing.append((dir_name, dir_path, names))
    listed_as: os.stat_result | None = None
    with contextlib.suppress(OSError):
        listed_as = os.stat(dir_path)  # before the listing, as the walk's
    if listed_as is not None:
        sort_key, keepable = _sort_key(repr(suffixes).encode("utf-8", "surrogatepass"), [], listed_as, racy_from)
        kept = result.kept.walk.get(dir_name)
        if kept is not None and kept[0] == sort_key and kept[2] is not None:
            result.keep.walk[dir_name] = kept
            names += kept[2][2]
            if kept[2][4]:
                result.passed_over.append((dir_name, (), (dir_path, kept[2][4]), None))
            return
    passed: list[os.DirEntry[str]] = []
    result.passed_over.append((dir_name, (), passed, None))
    # Not obeyed here, but kept: a tree walk that later takes this dir's kept sort reads
    # the ignore files it names (``SortedDir``).
    ignore_files: list[str] = []
    symlinks = len(result.symlinks)
    try:
        with os.scandir(dir_path) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    if name in IGNORE_FILES:
                        ignore_files.append(name)
                    continue
                if not name.endswith(suffixes):
                    passed.append(entry)
                elif entry.is_symlink():
                    _take_symlink(result, dir_name, name, entry.path, names)
                elif entry.is_file(follow_symlinks=False):
                    names.append(name)
                else:
                    passed.append(entry)  # a dir named like a page: a miss looks inside
    except OSError as error:
        result.incomplete += 1
        result.warnings.append(Diagnostic(dir_name or ".", CANNOT_LIST, str(error.strerror), is_dir=True))
        return
    if listed_as is not None and keepable and len(result.symlinks) == symlinks:
        result.keep.walk[dir_name] = (sort_key, [], (_dir_stat(listed_as), ignore_files, [*names], [], _kinds(passed)))


def _take_symlink(result: Scan, dir_rel: str, name: str, link_path: str, names: list[str]) -> None:
    """A page-named symlink met in a listing: a page when it leads to a file in the vault."""
    rel_path = join_rel(dir_rel, name)
    result.symlinks.append((dir_rel, name))
    read_path, warning = followed_symlink(result.vault, rel_path, link_path)
    if warning is not None:
        result.warnings.append(warning)
    if read_path is not None:
        result.links[rel_path] = read_path
        names.append(name)


#: The kinds of markdown file a layout leaves out (``scan(left_out=...)``): one in a
#: sub-dir of a flat layout's dir, one whose suffix the layout does not search, and, under
#: the default (Aion) layout, one outside its dirs (beside them, or at the vault root). A
#: file an ignore file excludes has the kind ``ignored_kind(<that file>)``.
LEFT_OUT_NESTED = "nested"
LEFT_OUT_SUFFIX = "suffix"
LEFT_OUT_OUTSIDE = "outside"
#: A markdown file the config's ``exclude`` leaves out: on purpose, but a miss still says
#: how many, as a versioned copy excluded may be the very page asked for.
LEFT_OUT_EXCLUDED = "excluded"
_IGNORED_BY = "ignored:"


def ignored_kind(rule_file: str) -> str:
    """The left-out kind of a markdown file that the ignore file ``rule_file`` (its
    vault-relative path, or two joined by " or " when a dir has both) excludes."""
    return _IGNORED_BY + rule_file


def rule_file_of(kind: str) -> str | None:
    """The ignore file a left-out ``kind`` names (``ignored_kind``), or None for another kind."""
    return kind[len(_IGNORED_BY) :] if kind.startswith(_IGNORED_BY) else None


#: Where ``TreeWalk.deciding_rule`` finds that the config's ``exclude`` leaves a path out.
EXCLUDED_BY_CONFIG = VAULT_CONFIG_FILE


def _left_out_by(rule: str) -> str:
    """The left-out kind of what the deciding ``rule`` leaves out."""
    return LEFT_OUT_EXCLUDED if rule == EXCLUDED_BY_CONFIG else ignored_kind(rule)


#: The ignore files a tree walk obeys in every dir, as rg and fd do. ``.ignore`` comes
#: second, so its rules win over ``.gitignore``'s in the same dir, as in rg.
IGNORE_FILES: tuple[str, ...] = (".gitignore", ".ignore")
#: An ignore file larger than this is not read: its rules are not applied, with a warning.
MAX_IGNORE_FILE_BYTES = 1 << 20

#: One dir's ignore rules: the vault-relative prefix of its dir ("" or "docs/"), their spec,
#: and the ignore file(s) they come from ("docs/.gitignore"; both, joined by " or ").
IgnoreRules = tuple[str, "_LazySpec", str]
#: See ``Scan.passed_over``: (dir, its ignore rules or None when not read yet, the entries,
#: where they lie: None in a searched dir, else a left-out kind).
#: A dir sorted as kept (``TreeWalk._replay``) has (its path, what it passed over as kept:
#: ``SortedDir``) instead of the entries: only a miss needs them (``_KeptEntry``).
PassedOver = tuple[
    str, "tuple[IgnoreRules, ...] | None", "Sequence[DirEntry] | tuple[str, list[tuple[str, int]]]", "str | None"
]
#: What a dir's names are kept by (``_dir_stat``): its mtime_ns, ctime_ns, inode and device.
DirStat = tuple[int, int, int, int]
#: How ``TreeWalk._sort_entries`` sorted a listed dir, kept to sort it again while the dir's
#: stat and the ignore files' are as they were (``TreeWalk._replay``): (its ``DirStat``, the
#: ignore files among its names, its pages' names and the dirs it entered, in listing
#: order, and the name and kind (``_kinds``) of each entry it passed over).
SortedDir = tuple[DirStat, list[str], list[str], list[str], list[tuple[str, int]]]


class TreeWalk:
    """Lists the pages of a layout with a tree depth or an exclude (``scan``).

    Hidden files and dirs are skipped; a symlinked dir is not followed (a page-named
    symlink to a file is, as in a flat dir); the config's memory dir is skipped, as it
    holds recall's logs. A path is ignored when the deepest ignore file with a rule
    matching it says so (a ``!`` rule re-includes), as git decides; a dir once ignored is
    not entered, so nothing below it comes back. ``exclude`` is checked first and always
    wins. pathspec is imported only when an ignore file or an exclude is met.
    """

    def __init__(
        self,
        result: Scan,
        layout: Layout,
        memory_dir: str | None,
        left_out: list[tuple[str, str]] | None = None,
        before_listing: Callable[[str, str], None] | None = None,
        racy_from: int | None = None,
    ):
        #: Where the walk lists pages and warnings.
        self.result = result
        self.suffixes = layout.suffixes
        self.tree = layout.tree
        exclude = list(layout.exclude)
        # Made on the first path asked of it: a dir whose decisions are kept asks none.
        self.exclude = _LazySpec(lambda: exclude, None) if not all(map(_names_only_hidden, exclude)) else None
        self.memory_rel = os.path.normpath(memory_dir) if memory_dir and not os.path.isabs(memory_dir) else None
        #: When a list: the markdown files the layout leaves out are added to it, as
        #: (LEFT_OUT_NESTED or LEFT_OUT_SUFFIX, vault-relative path); see ``scan``.
        self.left_out = left_out
        self.markdown_like = markdown_like_endings(self.suffixes)
        #: See ``scan``.
        self.before_listing = before_listing
        #: The searched dirs, vault-relative: in a flat layout one may lie inside another
        #: (``dirs = [".", "atlas"]``), and its pages are searched, not left out.
        self.searched_rels = frozenset("" if name == VAULT_ROOT_DIR else name for name in layout.dirs)
        #: When a list: the path of each dir the walk lists only to find what the layout
        #: leaves out, and of each ignore file it reads, is added to it (``left_out_files``).
        self.entered: list[str] | None = None
        #: A file or dir changed at or after this (ns since the epoch) is not kept: git's
        #: racy rule, as for pages (``page.RACY_NS``). None: nothing is kept.
        self.racy_from = racy_from
        #: What the walk takes of the index's ``KeptRules``, and what it would keep.
        self.kept_files = result.kept.files
        self.kept_walk = result.kept.walk
        self.keep_files = result.keep.files
        self.keep_walk = result.keep.walk
        #: The kept decisions the listing took, by dir: a miss asks them again (``add_left_out``).
        self.kept_decided: dict[str, dict[str, str]] = {}
        #: What decides, besides the ignore files and the dir's names, which names of a dir
        #: the walk asks the rules about and what they answer: part of each kept dir's key.
        self.layout_key = repr((self.suffixes, self.tree, exclude, sorted(self.searched_rels), self.memory_rel)).encode(
            "utf-8", "surrogatepass"
        )

    def walk(self, dir_rel: str, dir_path: str) -> None:
        """List the pages of the searched dir ``dir_rel`` (at ``dir_path``), and in a tree
        of every dir below it."""
        rules = self.ancestor_rules(dir_rel) if self.tree else ()
        self._walk([(dir_rel, dir_path, rules, None)], self.left_out)

    def add_left_out(self, passed_over: Sequence[PassedOver], left_out: list[tuple[str, str]]) -> None:
        """Add to ``left_out`` the markdown files the layout leaves out, judged among the
        entries a listing passed over (``Scan.passed_over``) as the walk judges the entries
        it lists with a ``left_out`` list; the dirs it did not enter (below a flat layout's
        dirs, ignored, outside the default dirs) are listed now."""
        stack: list[_Listed] = []
        for rel, rules, passed, where in passed_over:
            decided = self.kept_decided.get(rel) if where is None else None
            if isinstance(passed, tuple):  # a dir sorted as kept (``_replay``)
                path, kinds = passed
                entries: Sequence[DirEntry] = [_KeptEntry(path, name, kind) for name, kind in kinds]
            else:
                entries = passed
            if rules is None:  # the vault root's own ignore files, read only now
                rules = self.with_rules((), "", self.result.vault, ignore_names(entries))
            self._sort_entries(rel, rules, where, entries, [], stack, left_out, None, decided)
        self._walk(stack, left_out)

    def _walk(self, stack: list[_Listed], left_out: list[tuple[str, str]] | None) -> None:
        """List the dirs on ``stack`` (``_Listed``) and every dir the walk enters below them:
        one that lies outside the searched dirs only to find what the layout leaves out."""
        result = self.result
        # Only the listing's own dirs keep what the rules decided (a miss's walk does not).
        keeping = left_out is None and self.racy_from is not None
        while stack:
            rel, path, rules, where = stack.pop()
            names: list[str] = []
            if where is None:
                if self.before_listing is not None:
                    self.before_listing(rel, path)
                result.listing.append((rel, path, names))
            elif self.entered is not None:
                self.entered.append(path)
            listed_as: os.stat_result | None = None
            if keeping and where is None:
                # Before the listing: a name added after this stat gives the dir a later one.
                with contextlib.suppress(OSError):
                    listed_as = os.stat(path)
            kept = self.kept_walk.get(rel) if listed_as is not None else None
            # A dir's names, and the kind of each, are those kept while its own stat is: a
            # name cannot be added, removed or change kind without a new mtime and ctime
            # (git's untracked cache). The sort also needs what the rules decide, kept by
            # the ignore files' stat (``_dir_key``): both must hold to replay it.
            sorted_before = kept[2] if kept is not None else None
            if sorted_before is not None and (listed_as is None or sorted_before[0] != _dir_stat(listed_as)):
                sorted_before = None
            entries: list[os.DirEntry[str]] = []
            if sorted_before is None and not self._list(rel, path, where, entries):
                continue
            warned = len(result.warnings)
            if (self.tree and where is None) or where == LEFT_OUT_OUTSIDE:
                present = sorted_before[1] if sorted_before is not None else ignore_names(entries)
                rules = self.with_rules(rules, f"{rel}/" if rel else "", path, present)
            decided: dict[str, str] | None = None
            decisions: list[tuple[str, str]] | None = None  # what the rules decide, as asked
            keep_decided: list[tuple[str, str]] | None = None  # ... and what is kept of it
            dir_key = None
            if listed_as is not None:
                dir_key, keepable = self._dir_key(rules, listed_as)
                if dir_key is not None and kept is not None and kept[0] == dir_key:
                    decided = self.kept_decided[rel] = dict(kept[1])
                    if sorted_before is not None:
                        self.keep_walk[rel] = kept
                        self._replay(rel, path, rules, sorted_before, names, stack)
                        continue
                    keep_decided = kept[1]
                elif keepable:
                    decisions = keep_decided = []
            # The rules changed since the sort was kept: its names are sorted anew.
            if sorted_before is not None and not self._list(rel, path, where, entries):
                # Gone since its stat: warned as a listing warns, its ignore files unread.
                del result.warnings[warned:-1]
                continue
            passed: list[DirEntry] | None = None
            if where is None and left_out is None:
                passed = []
                result.passed_over.append((rel, rules, passed, None))
            entered, symlinks = len(stack), len(result.symlinks)
            self._sort_entries(rel, rules, where, entries, names, stack, left_out, passed, decided, decisions)
            if keep_decided is not None and dir_key is not None and listed_as is not None:
                # A page that is a symlink is followed anew every call (its target may
                # change with no change to the dir): such a dir's sort is not kept.
                sorted_now: SortedDir | None = None
                if passed is not None and len(result.symlinks) == symlinks:
                    prefix_length = len(rel) + 1 if rel else 0
                    entered_names = [child[prefix_length:] for child, _, _, _ in stack[entered:]]
                    sorted_now = (_dir_stat(listed_as), ignore_names(entries), [*names], entered_names, _kinds(passed))
                self.keep_walk[rel] = (dir_key, keep_decided, sorted_now)

    def _list(self, rel: str, path: str, where: str | None, entries: list[os.DirEntry[str]]) -> bool:
        """Add the entries of the dir at ``path`` to ``entries``; False when it cannot be
        listed (a listed dir's failure warned, as the scan does)."""
        try:
            with os.scandir(path) as iterator:
                entries += iterator
        except OSError as error:
            if where is None:
                self.result.incomplete += 1
                self.result.warnings.append(Diagnostic(rel or ".", CANNOT_LIST, str(error.strerror), is_dir=True))
            return False
        return True

    def _replay(
        self,
        rel: str,
        path: str,
        rules: tuple[IgnoreRules, ...],
        sorted_before: SortedDir,
        names: list[str],
        stack: list[_Listed],
    ) -> None:
        """Sort the dir ``rel`` as ``_sort_entries`` sorted it when it was kept, reading none
        of its entries: its pages to ``names``, the dirs it enters to ``stack`` in the same
        order, and, when it passed anything over, what it did to the listing's
        ``passed_over``, for a miss (``add_left_out``)."""
        _dir, _ignore_files, page_names, dir_names, passed = sorted_before
        names += page_names
        prefix = f"{rel}/" if rel else ""
        below = None if self.tree else LEFT_OUT_NESTED
        stack += [(prefix + name, os.path.join(path, name), rules, below) for name in dir_names]
        if passed:
            self.result.passed_over.append((rel, rules, (path, passed), None))

    def _dir_key(self, rules: tuple[IgnoreRules, ...], listed_as: os.stat_result) -> tuple[bytes | None, bool]:
        """(what the rules' decisions on the names of a dir are kept by, whether they may be
        kept now). Exact: the decisions are a function of the names asked and the rules;
        which names are asked and how, with the layout (``layout_key``); the rules, with the
        stat of each ignore file in force (``_LazySpec.key``); the names, with the dir's
        stat (``_sort_key``). None when an ignore file in force is not kept."""
        assert self.racy_from is not None
        keys = [spec.key for _base, spec, _source in rules]
        if any(key is None for key in keys):
            return None, False
        return _sort_key(self.layout_key, keys, listed_as, self.racy_from)

    def _sort_entries(
        self,
        rel: str,
        rules: tuple[IgnoreRules, ...],
        where: str | None,
        entries: Sequence[DirEntry],
        names: list[str],
        stack: list[_Listed],
        left_out: list[tuple[str, str]] | None,
        passed: list[DirEntry] | None,
        decided: dict[str, str] | None = None,
        decisions: list[tuple[str, str]] | None = None,
    ) -> None:
        """Sort the entries of the dir ``rel`` (``where`` it lies, as in ``_walk``): a
        page's name to ``names``, a dir the walk enters to ``stack``, a markdown file the
        layout leaves out to ``left_out`` (when a list), and, without one, what a miss
        would judge later to ``passed``. This is the one judge of what the layout leaves
        out, and why (``left_out_kind``).

        ``decided``: what the rules decide here, as kept (``_dir_key``), by the name asked
        (a dir's ending in '/'): asked of it instead of the rules, which are then neither
        read nor compiled, for each name the listing asks them about (``listed``: a tree's
        dirs, the pages' suffixes; a miss asks about more). ``decisions``: a list to add
        what the rules decide here to (the names they leave out, with the rule's file), to
        be kept."""
        prefix = f"{rel}/" if rel else ""

        def deciding_rule(asked: str, listed: bool = True) -> str | None:
            if decided is not None and listed:
                return decided.get(asked[len(prefix) :])
            rule = self.deciding_rule(asked, rules)
            if decisions is not None and rule is not None:
                decisions.append((asked[len(prefix) :], rule))
            return rule

        suffixes = self.suffixes
        # Inside an ignored dir nothing comes back (as in git), so no rule is asked there.
        filtering = rule_file_of(where or "") is None and (self.exclude is not None or bool(rules))
        descend = self.tree or left_out is not None
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            child = prefix + name
            if entry.is_dir(follow_symlinks=False):
                if child in self.searched_rels and (where is not None or not self.tree):
                    continue  # listed as a searched dir of its own
                if not descend:
                    if passed is not None:
                        passed.append(entry)
                    continue
                if child == self.memory_rel:
                    continue
                below = where
                if filtering:
                    rule = deciding_rule(child + "/", self.tree)
                    if rule is not None:
                        if left_out is not None:
                            stack.append((child, entry.path, (), _left_out_by(rule)))
                        elif passed is not None:
                            passed.append(entry)
                        continue
                if below is None and not self.tree:
                    below = LEFT_OUT_NESTED
                stack.append((child, entry.path, rules, below))
            elif where is None and name.endswith(suffixes):
                rule = deciding_rule(child) if filtering else None
                if rule is not None:
                    if left_out is not None:
                        left_out.append((_left_out_by(rule), child))
                    elif passed is not None:
                        passed.append(entry)
                    continue
                if entry.is_symlink():
                    _take_symlink(self.result, rel, name, entry.path, names)
                elif entry.is_file(follow_symlinks=False):
                    names.append(name)
            elif left_out is not None:
                if is_markdown_like(name, self.markdown_like):
                    rule = deciding_rule(child, listed=False) if filtering else None
                    left_out.append(((where or LEFT_OUT_SUFFIX) if rule is None else _left_out_by(rule), child))
            elif passed is not None:
                passed.append(entry)

    def deciding_rule(self, rel_path: str, rules: tuple[IgnoreRules, ...]) -> str | None:
        """What leaves ``rel_path`` (a dir's ends in '/') out: EXCLUDED_BY_CONFIG for the
        config's exclude, else the ignore file(s) whose rule decides; None when nothing does."""
        if self.exclude is not None and self.exclude.include_of(rel_path):
            return EXCLUDED_BY_CONFIG
        for base, spec, source in reversed(rules):  # the deepest ignore file decides first
            include = spec.include_of(rel_path[len(base) :])
            if include is not None:
                return source if include else None
        return None

    def ancestor_rules(self, dir_rel: str) -> tuple[IgnoreRules, ...]:
        """The rules of the ignore files in the dirs above ``dir_rel``, from the vault root down."""
        rules: tuple[IgnoreRules, ...] = ()
        if not dir_rel:
            return rules
        parts = dir_rel.split("/")
        for depth in range(len(parts)):
            rel = "/".join(parts[:depth])
            prefix = f"{rel}/" if rel else ""
            rules = self.with_rules(rules, prefix, os.path.join(self.result.vault, rel), None)
        return rules

    def with_rules(
        self, rules: tuple[IgnoreRules, ...], prefix: str, path: str, present: Sequence[str] | None
    ) -> tuple[IgnoreRules, ...]:
        """``rules`` with those of the ignore files in the dir at ``path`` added: the ones
        ``present`` names (``ignore_names`` of its entries; None: each looked for).

        A file whose stat is the one the index keeps (``KeptRules.files``) is not read here:
        whether its rules can match what the walk meets at all is kept with it, and what
        they decide is kept per dir (``_dir_key``), so it is read and compiled only when a
        dir it governs is not kept. Any other file is read now, as it always was, and kept
        when it could be read and its stat can vouch for its bytes (stat'ed before the
        read, and changed before ``racy_from``)."""
        if present is None:
            present = [name for name in IGNORE_FILES if os.path.isfile(os.path.join(path, name))]
        if not present:
            return rules
        files = [(prefix + name, os.path.join(path, name)) for name in IGNORE_FILES if name in present]
        if self.entered is not None:
            self.entered.extend(file_path for _rel_path, file_path in files)
        keys = [_file_key(file_path) if self.racy_from is not None else None for _rel_path, file_path in files]
        held = [self.kept_files.get(rel_path) for rel_path, _file_path in files]
        source = " or ".join(rel_path for rel_path, _file_path in files)
        if all(kept is not None and key is not None and kept[0] == key for kept, key in zip(held, keys, strict=True)):
            for (rel_path, _file_path), kept in zip(files, held, strict=True):
                if kept is not None:
                    self.keep_files[rel_path] = kept
            if all(kept[1] for kept in held if kept is not None):
                return rules  # every rule names hidden paths only (``_spec``)

            def read_kept() -> list[str]:
                return [line for rel_path, file_path in files for line in self._read_ignore_file(rel_path, file_path)]

            return (*rules, (prefix, _LazySpec(read_kept, (prefix, keys)), source))
        lines: list[str] = []
        keepable = self.racy_from is not None
        for (rel_path, file_path), key in zip(files, keys, strict=True):
            warnings = len(self.result.warnings)
            read = self._read_ignore_file(rel_path, file_path)
            lines += read
            if key is None or max(key[2], key[3]) >= (self.racy_from or 0) or len(self.result.warnings) > warnings:
                keepable = False  # unread (warned), or too new for its stat to vouch for it
                continue
            self.keep_files[rel_path] = (key, all(map(_names_only_hidden, read)))
        if all(map(_names_only_hidden, lines)):
            return rules
        return (*rules, (prefix, _LazySpec(lambda: lines, (prefix, keys) if keepable else None), source))

    def _read_ignore_file(self, rel_path: str, path: str) -> list[str]:
        try:
            fd = open_page(path)
            try:
                data = os.read(fd, MAX_IGNORE_FILE_BYTES + 1)
            finally:
                os.close(fd)
        except OSError as error:
            self.result.warnings.append(Diagnostic(rel_path, IGNORE_FILE_UNUSED, str(error.strerror)))
            return []
        if len(data) > MAX_IGNORE_FILE_BYTES:
            detail = f"larger than {MAX_IGNORE_FILE_BYTES} bytes"
            self.result.warnings.append(Diagnostic(rel_path, IGNORE_FILE_UNUSED, detail))
            return []
        return data.decode("utf-8", "replace").splitlines()


def preferred_dirs(pages: Scan) -> tuple[str, ...]:
    """The vault's ``[order] prefer`` (``find.judge``, ``recall.rank``), from the config the
    listing ``pages`` read (or, for a listing made another way, from the vault's file): the
    scan and the index order by the same preference."""
    config = pages.config if pages.config is not None else load_vault_config(pages.vault)
    return config.prefer


def left_out_files(pages: Scan, entered: list[str] | None = None) -> list[tuple[str, str]] | None:
    """The markdown files the layout leaves out in the searched dirs, as ``scan(left_out=...)``
    adds them (in another order), found among what the listing of ``pages`` passed over:
    only the dirs below a flat layout's dirs, which it never entered, are listed. What a
    miss tells about, without listing the searched dirs a second time. None when the vault
    failed under that walk: the miss stands, and its note is the caller's to try or drop.
    ``entered``: a list to add the path of each dir listed and ignore file read to."""
    left_out: list[tuple[str, str]] = []
    if pages.layout is None or not any(entries for _, _, entries, _ in pages.passed_over):
        return left_out
    walk = pages.walk if pages.walk is not None else TreeWalk(pages, pages.layout, pages.memory_dir)
    walk.entered = entered
    try:
        walk.add_left_out(pages.passed_over, left_out)
    except OSError:
        return None
    finally:
        walk.entered = None
    return left_out


def _sort_key(
    layout_key: bytes, rule_keys: list[object], listed_as: os.stat_result, racy_from: int
) -> tuple[bytes, bool]:
    """(what the sort of a dir listed as ``listed_as`` is kept by, whether it may be kept
    now): the layout, the keys of the ignore rules in force, and the dir's stat. The names,
    and whether each is a dir, change only with the dir's mtime and ctime (a name cannot
    change kind in place), which the key holds with the dir's identity. A dir changed at
    or after ``racy_from`` is not kept (git's racy rule: a name added in the same tick
    would leave its mtime as it is)."""
    from _blake2 import blake2b

    digest = blake2b(layout_key, digest_size=16)
    digest.update(repr((rule_keys, _dir_stat(listed_as))).encode("utf-8", "surrogatepass"))
    return digest.digest(), max(listed_as.st_mtime_ns, listed_as.st_ctime_ns) < racy_from


#: An entry's kind as ``_kinds`` keeps it (a name cannot change kind while its dir's stat
#: stays): not followed, as ``_sort_entries`` asks.
_OTHER, _DIR, _SYMLINK, _FILE = 0, 1, 2, 3


def _kinds(entries: Sequence[DirEntry]) -> list[tuple[str, int]]:
    """The name and kind of each entry, as a dir's sort keeps what it passed over."""
    return [
        (
            entry.name,
            _DIR
            if entry.is_dir(follow_symlinks=False)
            else _SYMLINK
            if entry.is_symlink()
            else _FILE
            if entry.is_file(follow_symlinks=False)
            else _OTHER,
        )
        for entry in entries
    ]


class _KeptEntry:
    """An entry a dir's kept sort passed over (``_kinds``), as ``_sort_entries`` asks it
    of an ``os.DirEntry``: the listing met it so, in a dir whose stat has not changed."""

    __slots__ = ("kind", "name", "path")

    def __init__(self, dir_path: str, name: str, kind: int):
        self.name = name
        self.path = os.path.join(dir_path, name)
        self.kind = kind

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        assert not follow_symlinks  # the kind was taken unfollowed
        return self.kind == _DIR

    def is_symlink(self) -> bool:
        return self.kind == _SYMLINK

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        assert not follow_symlinks
        return self.kind == _FILE


def ignore_names(entries: Sequence[DirEntry]) -> list[str]:
    """The names of a dir's ``entries`` that name an ignore file (``IGNORE_FILES``)."""
    return [entry.name for entry in entries if entry.name in IGNORE_FILES]


def _dir_stat(info: os.stat_result) -> DirStat:
    """What a dir's names are kept by: a name added, removed or renamed gives the dir a new
    mtime and ctime, and the inode and device tell one dir from another at its path."""
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


def _file_key(path: str) -> FileKey:
    """An ignore file's ``FileKey``: lstat, as it is opened (O_NOFOLLOW)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class _LazySpec:
    """A dir's ignore rules (or the config's ``exclude``), made (``_spec``: pathspec's
    import and regexes) on the first path asked of them: a call whose every dir's decisions
    are kept (``TreeWalk._dir_key``) asks none, and so imports and compiles nothing."""

    __slots__ = ("_lines", "_made", "_spec", "key")

    def __init__(self, lines: Callable[[], list[str]], key: object):
        self._lines = lines
        self._made = False
        self._spec: _IgnoreSpec | None = None
        #: What the rules are kept by (their files' prefix and stat); None: not to be kept.
        self.key = key

    def include_of(self, path: str) -> bool | None:
        """``_IgnoreSpec.include_of``; None for rules that cannot match (``_spec``)."""
        if not self._made:
            self._spec = _spec(self._lines())
            self._made = True
        return None if self._spec is None else self._spec.include_of(path)


class _IgnoreSpec:
    """A dir's gitignore rules as pathspec compiles them, with a fast answer for the paths no
    rule matches, most of them: asking each rule costs several Python calls per path, a third
    of the walk of a tree of 10,000 notes. ``search`` is one regex made of every rule's, so
    such a path costs one call; a path it finds is asked of each rule (``_names_itself``).
    tests/test_ignore_prefilter.py holds the two answers equal."""

    __slots__ = ("rules", "search")

    def __init__(self, spec: GitIgnoreSpec):
        import re  # pathspec imports it anyway

        rules = [pattern for pattern in spec.patterns if pattern.include is not None]
        regexes = [pattern.regex for pattern in rules]
        #: Each rule's regex and whether it ignores (True) or re-includes (False), in file order.
        self.rules = [(regex, bool(pattern.include)) for pattern, regex in zip(rules, regexes, strict=True) if regex]
        sources = [regex.pattern for regex in regexes if regex is not None and isinstance(regex.pattern, str)]
        self.search: Callable[[str], object] | None = None
        if rules and len(sources) == len(rules):
            # A rule matches a path only where its regex finds it (pathspec matches with
            # ``search``, or ``match`` in older releases: what matches is found by search too).
            # Group names go: the rules share them, and one regex cannot.
            alternatives = (re.sub(r"\(\?P<\w+>", "(?:", source) for source in sources)
            try:
                self.search = re.compile("|".join(f"(?:{part})" for part in alternatives)).search
            except re.error:
                self.search = None

    def include_of(self, path: str) -> bool | None:
        """What the last rule that names ``path`` itself says of it, as git decides: True
        ignored, False re-included by a ``!`` rule, None no rule names it. ``path`` is
        vault-relative (``/`` separators, no leading ``/`` or ``./``), a dir's ending in '/'.

        pathspec's own ``check_file`` also counts a rule that names a dir above ``path``
        (its regexes match a prefix): ``a/`` then ``!Notes`` would re-include ``Notes/a/``,
        which git ignores. The walk asks each dir before it enters it, so a rule that names
        a dir above has had its say there."""
        if self.search is not None and self.search(path) is None:
            return None
        decided = None
        for regex, ignores in self.rules:
            if _names_itself(regex, path):
                decided = ignores
        return decided


def _names_itself(regex: re.Pattern[str], path: str) -> bool:
    """Whether the gitignore rule pathspec compiled to ``regex`` names ``path`` itself, not
    only a dir above it. pathspec's regexes end in one of: its dir mark, ``(?P<ps_d>/)``,
    which names the dir before it (``a/``, or ``Notes`` followed by a '/'), and names
    ``path`` only as its last '/'; a bare '/' after a dir (``docs/**``), which names what
    lies strictly inside it; or nothing more (``*``, ``**``: every path)."""
    found = regex.search(path)
    if found is None:
        return False
    if _DIR_MARK not in regex.groupindex or found.group(_DIR_MARK) is None:
        if regex.pattern == _EVERY_PATH:
            return True
        # Inside a dir, or the whole path: a regex's ``$`` also matches before a last
        # newline, and ``Notes`` names no file called "Notes\n".
        return found.end() < len(path) if regex.pattern.endswith("/") else found.end() == len(path)
    if found.end(_DIR_MARK) == len(path):
        return True
    # The leftmost match stopped at a dir above: the rule may still name ``path`` whole
    # (``**/`` is any dir, its regex the dir mark alone).
    return path.endswith("/") if regex.pattern == _DIR_MARK_ALONE else regex.fullmatch(path) is not None


#: The name of pathspec's dir-mark group in its gitignore regexes, and that group alone:
#: the regex of ``**/`` and ``*/``, any dir.
_DIR_MARK = "ps_d"
_DIR_MARK_ALONE = f"(?P<{_DIR_MARK}>/)"
#: pathspec's regex of ``*`` and ``**``: every path.
_EVERY_PATH = "."


def _names_only_hidden(line: str) -> bool:
    """Whether the gitignore line ``line`` is blank, a comment, or a rule that can match
    only a path through a hidden name (a part of the pattern is a literal name starting
    with '.', as ``.obsidian/``, ``/.trash`` or ``**/.DS_Store``). Each part of a pattern
    matches one part of a path (``**`` apart), so such a rule finds only a path with a
    hidden part, and the walk never meets one: the searched dirs are never hidden
    (``config.check_dir_name``) and hidden names are skipped before any rule is asked."""
    pattern = line.rstrip()
    if not pattern or pattern.startswith("#"):
        return True
    parts = pattern.removeprefix("!").removeprefix("/").removesuffix("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return False
    return any(part.startswith(".") for part in parts)


def _spec(lines: list[str]) -> _IgnoreSpec | None:
    """The gitignore-style spec of ``lines``, a line pathspec cannot read dropped (git
    ignores such a line too); None when no rule is left, or when every rule names only
    hidden paths, which the walk skips anyway: an Obsidian vault's .gitignore lists
    ``.obsidian/`` files and ``.DS_Store``, and pathspec's import costs tens of
    milliseconds."""
    if all(_names_only_hidden(line) for line in lines):
        return None
    import pathspec  # only a tree walk that meets an ignore file, or an exclude, pays for it

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):
        good = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except (ValueError, TypeError):
                continue
            good.append(line)
        spec = pathspec.GitIgnoreSpec.from_lines(good)
    return _IgnoreSpec(spec) if len(spec) else None


#: A dir the walk lists: (vault-relative dir, its path, the ignore rules in force, where it
#: lies: None in a searched dir, else the left-out kind of the markdown files below it).
_Listed = tuple[str, str, "tuple[IgnoreRules, ...]", "str | None"]
