"""Where the index lives and the Backend that answers through it: every find and recall
reads the vault's index (``index.NoteIndex``) in place, with or without a ``wiki serve``.

A call lists the vault with the scan's own listing (or, with a server, reuses the listing
the index keeps and asks only what changed), makes every page of it fresh in the index
(``freshness``: stat, git's racy rule, the changed pages read by this process with its own
rights, written in one transaction), then queries: the index picks the candidates and
``find.judge`` decides each one's match and place. So the index never changes an answer:
``--no-cache`` gives the same bytes, reading every page.

With no whole index yet, a call answers by the scan and starts one detached builder
(``build``), as ``git gc --auto`` detaches; later calls use the index once a build is
complete in it. Any doubt (the index missing, of another format or code, corrupt, locked
past its busy timeout, on a read-only or full disk) answers by the scan, silently.

Each index is per user (below ``$XDG_CACHE_HOME/mnemosyne``, mode 0700, files 0600), per
vault, and per set of rights: uid, gids, capabilities and mount namespace are part of its
name, so a process with other rights never takes another's reads as its own. A dir that is
a symlink, not ours, or open to others' writes is never used.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in index.py: without the datetime import of sqlite3's own layer
import contextlib
import os
import stat

from mnemosyne_core.config import home_dir
from mnemosyne_core.freshness import CatchUp, ListingChanged, fresh_listed, fresh_served, keep_listing, served_listing
from mnemosyne_core.index import (
    FORMAT,
    REPLACEABLE_FAULTS,
    IndexUnusable,
    NoteIndex,
    answerable,
    code_key,
    fault_of,
    stored_text,
    written_by,
)
from mnemosyne_core.location import resolve_vault
from mnemosyne_core.page import read_as_judged, unreadable_warning
from mnemosyne_core.results import FindResult, keyword_counts, prepare_query, shown_match
from mnemosyne_core.vault import left_out_files, preferred_dirs, scan

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Protocol, TypeVar

    from mnemosyne_core.backend import FindRequest, RecallRequest
    from mnemosyne_core.freshness import Fresh, ServedListing
    from mnemosyne_core.recall import RecallResult
    from mnemosyne_core.vault import KeptRules, Scan

    T = TypeVar("T")

    class ChangeSource(Protocol):
        """Asks the vault's ``wiki serve`` what changed since a token; the CLI's client
        implements it (``mnemosyne_cli.client.ServerChanges``)."""

        def __call__(self, vault_real: str, token: str | None) -> tuple[str, tuple[str, ...] | None] | None:
            """(the token now, the changed vault-relative paths or None for "rescan"), for
            ``token`` None the token now; None when no server of ours answers."""
            ...

        def available(self, vault_real: str) -> bool:
            """Whether a server of ours may be asked at all (its socket is there, in a dir
            we trust): a cheap look, made before the index is read."""
            ...

        def unanswered(self, vault_real: str, serve_auto: bool | None, pages: int) -> None:
            """No server answered a call that listed the vault's ``pages`` pages, whose
            config says ``[serve] auto`` = ``serve_auto`` (None: absent): one may start now."""
            ...


#: Where the index dir lives below ``$XDG_CACHE_HOME`` (default ``~/.cache``).
CACHE_DIR_NAME = "mnemosyne"
#: Ends ``usable_cache_dir``'s reason for a dir the first call makes.
NOT_MADE_YET = " does not exist yet"
INDEX_SUFFIX = ".sqlite"


# --- where the index lives ---------------------------------------------------------------


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


def usable_cache_dir(
    environ: Mapping[str, str], *, create: bool, vault_real: str | None = None
) -> tuple[str | None, str | None]:
    """(the cache dir, None) when it may be used, made 0700 if ``create``; (None, why not)
    otherwise. A dir that cannot be made (no home, a read-only one) is no cache, quietly:
    the reason is for ``wiki info``. ``vault_real``: the vault a call searches, which the
    cache dir must not change (``inside_vault``)."""
    path = cache_dir_path(environ)
    if path is None:
        return None, "no cache dir: neither XDG_CACHE_HOME nor HOME is an absolute path"
    if vault_real is not None and inside_vault(path, vault_real):
        return None, f"{path} lies inside the vault, where it would change what the vault holds: it is never used"
    try:
        reason = unsafe_dir_reason(path)
    except FileNotFoundError:
        if not create:
            return None, f"{path}{NOT_MADE_YET}"
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
    if not os.access(path, os.R_OK | os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return None, f"cannot use {path}: Permission denied"
    return path, None


def inside_vault(cache_dir: str, vault_real: str) -> bool:
    """Whether ``cache_dir`` lies inside the vault where the vault's listing would see it:
    below the vault, with no hidden component (the listing enters no hidden dir, so a vault
    kept at ``~`` with its ``~/.cache`` is fine).

    Refusing such a dir, rather than teaching the listing to pass over it, is what keeps a
    vault the same with and without the cache: made there, ``mnemosyne/`` (a default Aion
    dir name) would turn a zero-config vault into an Aion one, and a ``--no-cache`` call,
    which knows no cache dir, would then search other pages than the call before it. A
    listing that skipped it would still show it to every other tool reading the vault, and
    to ``git status``."""
    real = os.path.realpath(cache_dir)
    if real == vault_real:
        return True
    if not real.startswith(vault_real.rstrip("/") + "/"):
        return False
    return not any(part.startswith(".") for part in real[len(vault_real.rstrip("/")) + 1 :].split("/"))


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


def index_path(cache_dir: str, vault_real: str) -> str:
    """The index of the vault at ``vault_real`` for this user and these rights."""
    # blake2b from the C module: hashlib's import (OpenSSL) costs milliseconds of start-up.
    from _blake2 import blake2b

    digest = blake2b(vault_real.encode("utf-8", "surrogatepass") + b"\0" + rights_key(), digest_size=16).hexdigest()
    return os.path.join(cache_dir, digest + INDEX_SUFFIX)


# --- the Backend ---------------------------------------------------------------------------

#: The SQLite the index needs: the trigram tokenizer (3.34), ``RETURNING`` and
#: ``MATERIALIZED`` (3.35). An older one (Debian 11, RHEL 9) has no index: every call
#: scans, and ``wiki info`` says why.
SQLITE_NEEDED = (3, 35, 0)
SQLITE_IS_ENOUGH = tuple(map(int, sqlite3.sqlite_version.split("."))) >= SQLITE_NEEDED


def request_home(request: FindRequest | RecallRequest) -> str:
    """The ``~`` of the call that made ``request``: its own, else the one its variables name."""
    return home_dir(request.environ) if request.home is None else request.home


#: What a call through the index may meet that makes the scan answer instead (UnicodeError:
#: text SQLite's Python layer cannot bind, which ``index.storable`` and the BLOB columns are
#: there to prevent, is no reason for a traceback either).
_INDEX_ERRORS = (sqlite3.Error, IndexUnusable, ListingChanged, CatchUp, UnicodeError)


def _miss_note(pages: Scan, served: ServedListing | None) -> tuple[bool, list[tuple[str, str]] | None]:
    """(whether a miss may be answered now, its note on the files the layout leaves out): the
    listing's (None: the vault failed under that walk, and the miss goes without one), or,
    for a served call, the note the last listing kept, which stands only while its stats
    vouch for it: otherwise files no watch sees may have changed, and the listing path answers."""
    if served is None:
        return True, left_out_files(pages)
    left_out = served.left_out()
    return left_out is not None, left_out


class IndexedScan:
    """The Backend that answers through the vault's index; it answers exactly as the plain
    scan (``find.search``, ``recall.recall``) does, and falls back to it whenever the index
    cannot be used. With ``use_index`` false (--no-cache) the scan alone answers every call.

    Without ``changes`` every call lists the vault and stats each listed page. With it (a
    ``wiki serve`` to ask), a call whose index holds the listing and a token asks the server
    what changed since, and when the answer is a list of pages it neither lists the vault
    nor stats the pages it was told are unchanged; any doubt (no answer, "rescan", a listed
    dir that is not the one it was, a changed file that is no longer the listed page, a
    miss whose note on the files the layout leaves out the kept stats cannot vouch for)
    takes the listing path."""

    def __init__(self, environ: Mapping[str, str], changes: ChangeSource | None = None, *, use_index: bool = True):
        self.environ = environ
        self.changes = changes
        self.use_index = use_index
        #: Whether the last call took the pages the server said were unchanged as they were.
        self.served = False
        #: Whether the last call was answered through the index (tests check it).
        self.indexed = False
        #: The server's answer to this call's one question (``_served_pages``), or None;
        #: ``_unanswered``: it was asked and did not answer. One call asks at most once: a
        #: server that did not answer in time would cost the timeout again, and a token
        #: taken before the listing is as good for it as one taken just before.
        self._answer: tuple[str, tuple[str, ...] | None] | None = None
        self._unanswered = False
        #: The builder this call found wanting (index path, vault, home): started once the
        #: call has its answer, so that it does not share the CPU with the call's own scan.
        self._wanted_build: tuple[str, str, str] | None = None

    def search(self, request: FindRequest) -> FindResult:
        """``find.search``'s answer for the request; raises only InvalidQueryError or VaultError."""
        if not self.use_index:
            from mnemosyne_core.find import search

            # The vault as the request names it: a path found already would be expanded again.
            return search(
                request.vault,
                request.keywords,
                limit=request.limit,
                dirs=request.dirs,
                keep_content=request.keep_content,
                environ=request.environ,
                cwd=request.cwd,
                home=request.home,
            )
        folded = prepare_query(request.keywords, request.limit)
        vault_real = resolve_vault(request.vault, request.environ, request.cwd, request.home)
        self.served = self.indexed = self._unanswered = False
        self._answer = self._wanted_build = None
        dirs, keep_content = request.dirs, request.keep_content
        # A server is asked about the vault's own layout only, and only when its socket is there.
        ask = self.changes is not None and not dirs and self.changes.available(vault_real)
        if ask and answerable(folded):
            with self._served(vault_real, request_home(request)) as served:
                if served is not None:
                    result = self._search(*served[:3], folded, request, served=served[3])
                    if result is not None:
                        self.served = self.indexed = True
                        return result
        with self._listed(vault_real, dirs, request_home(request), ask=ask) as (pages, index, fresh):
            if index is not None and fresh is not None and answerable(folded):
                result = self._search(pages, index, fresh, folded, request)
                if result is not None:
                    self.indexed = True
                    return result
        from mnemosyne_core.find import search  # the scan: a call the index answers never imports it

        result = search(
            vault_real, request.keywords, limit=request.limit, dirs=dirs, keep_content=keep_content, listing=pages
        )
        self._start_wanted_build()
        return result

    def _search(
        self,
        pages: Scan,
        index: NoteIndex,
        fresh: Fresh,
        folded: tuple[str, ...],
        request: FindRequest,
        served: ServedListing | None = None,
    ) -> FindResult | None:
        """find's answer from the index; None when the index could not answer, the one page
        --cat prints changed since it was judged, or nothing matches and the note on the
        files the layout leaves out, which ``served`` (the listing a served call reuses)
        keeps, cannot be vouched for."""
        from mnemosyne_core.diagnostics import Diagnostic

        try:
            ranked = index.top(folded, request.limit, preferred_dirs(pages), fresh.ids)
            result = FindResult()
            result.vault = pages.vault
            result.warnings = pages.warnings + [unreadable_warning(path, error) for path, error in fresh.unreadable]
            result.warnings.sort(key=Diagnostic.sort_key)
            result.unreadable = pages.incomplete + len(fresh.unreadable)
            result.pages_searched = fresh.searched
            result.total, result.named, result.exact = ranked.total, ranked.named, ranked.exact
            result.matches = [shown_match(*row) for row in ranked.rows]
            if not ranked.total:
                result.keyword_counts = keyword_counts(request.keywords, ranked.counts or [0] * len(folded))
                result.not_text = fresh.not_text
                if not result.incomplete:
                    vouched, result.left_out = _miss_note(pages, served)
                    if not vouched:
                        return None
                    result.suggestions = _index_suggestions(index, result)
            match = result.the_page
            if request.keep_content and match is not None:
                identity = index.identity(match.path)
                content = read_as_judged(pages.vault, match.path, identity) if identity is not None else None
                if content is None:
                    return None
                match.content = content
        except _INDEX_ERRORS as error:
            self._damaged(error, index, pages.vault, request_home(request))
            return None
        return result

    def recall(self, request: RecallRequest) -> RecallResult:
        """``recall.recall``'s answer for the request; raises only InvalidQueryError or VaultError."""
        from mnemosyne_core.recall import recall, split_topic

        topic, dirs = request.topic, request.dirs
        if not self.use_index:
            return recall(request.vault, topic, dirs=dirs, environ=request.environ, cwd=request.cwd, home=request.home)
        terms = split_topic(topic)
        vault_real = resolve_vault(request.vault, request.environ, request.cwd, request.home)
        self.served = self.indexed = self._unanswered = False
        self._answer = self._wanted_build = None
        ask = self.changes is not None and not dirs and self.changes.available(vault_real)
        if ask:
            with self._served(vault_real, request_home(request)) as served:
                if served is not None:
                    result = self._recall(*served[:3], topic, terms, request_home(request), served=served[3])
                    if result is not None:
                        self.served = self.indexed = True
                        return result
        with self._listed(vault_real, dirs, request_home(request), ask=ask) as (pages, index, fresh):
            if index is not None and fresh is not None:
                result = self._recall(pages, index, fresh, topic, terms, request_home(request))
                if result is not None:
                    self.indexed = True
                    return result
        result = recall(vault_real, topic, dirs=dirs, listing=pages)
        self._start_wanted_build()
        return result

    def listed_through_index(
        self, vault_real: str, dirs: Sequence[str] | None, home: str, answer: Callable[[Scan, NoteIndex, Fresh], T]
    ) -> tuple[Scan, T | None]:
        """The vault listed as find lists it, and ``answer`` of that listing, its index
        and its pages fresh in it, as find makes them (``_listed``); None in place of the
        answer when the index cannot give it (the caller reads the pages instead). For a
        command of its own questions (lint)."""
        self.served = self.indexed = self._unanswered = False
        self._answer = self._wanted_build = None
        result = None
        with self._listed(vault_real, dirs, home, ask=False) as (pages, index, fresh):
            if index is not None and fresh is not None:
                try:
                    result = answer(pages, index, fresh)
                    self.indexed = True
                except _INDEX_ERRORS as error:
                    self._damaged(error, index, vault_real, home)
        self._start_wanted_build()
        return pages, result

    def _start_wanted_build(self) -> None:
        if self._wanted_build is not None:
            from mnemosyne_core import build  # a call whose index is whole never imports the builder

            build.start_detached(*self._wanted_build, self.environ)
            self._wanted_build = None

    def _damaged(self, error: BaseException, index: NoteIndex, vault_real: str, home: str) -> None:
        """The scan answers a call that met ``error`` in the index; when that is a damaged
        database (a page of the FTS table overwritten, say), the index is replaced by a
        builder: left as it is, it would cost every call a failed query and then the scan,
        for good. ``wiki info`` says so meanwhile (``build.mark_damaged``)."""
        if fault_of(error) in ("corrupt", "not a database"):
            from mnemosyne_core import build

            build.mark_damaged(index.path, error)
            self._wanted_build = (index.path, vault_real, home)

    def _recall(
        self,
        pages: Scan,
        index: NoteIndex,
        fresh: Fresh,
        topic: str | Sequence[str],
        terms: tuple[str, ...],
        home: str,
        served: ServedListing | None = None,
    ) -> RecallResult | None:
        """recall's answer from the index; None when the index could not answer, a read
        entry changed since it was judged, or nothing matches and the note on the files the
        layout leaves out, which ``served`` (the listing a served call reuses) keeps, cannot
        be vouched for (as find's, ``_search``)."""
        from mnemosyne_core.page import PageRef
        from mnemosyne_core.recall import RecallResult, entry_if_match, fill_read_entries, fold_terms, rank

        try:
            result = RecallResult(pages, topic, terms)
            for rel_path, error in fresh.unreadable:
                result.unreadable += 1
                result.warnings.append(unreadable_warning(rel_path, error))
            folded_terms = fold_terms(terms)
            identities = {}
            # The index picks the pages a term is in; recall's own rule decides each.
            for page_id, rel_path, fields, identity in index.recall_matches(folded_terms):
                if fresh.holds(page_id):
                    dir_name, _, name = rel_path.rpartition("/")
                    entry = entry_if_match(PageRef(dir_name, name, ""), fields, folded_terms, b"")
                    if entry is not None:
                        identities[rel_path] = identity
                        result.matches.append(entry)
            result.pages_searched = fresh.searched
            result.unseen = index.recall_unseen(fresh.ids)
        except _INDEX_ERRORS as error:
            self._damaged(error, index, pages.vault, home)
            return None
        rank(result, preferred_dirs(pages))
        if not result.matches and not result.incomplete:
            vouched, result.left_out = _miss_note(pages, served)
            if not vouched:
                return None
        if not fill_read_entries(result, [identities[entry.path] for entry in result.read]):
            return None
        return result

    # --- where the pages come from ---

    def _index_file(self, vault_real: str, *, create: bool) -> str | None:
        cache_dir, _why_not = usable_cache_dir(self.environ, create=create, vault_real=vault_real)
        return index_path(cache_dir, vault_real) if cache_dir is not None else None

    @contextlib.contextmanager
    def _listed(
        self, vault_real: str, dirs: Sequence[str] | None, home: str, *, ask: bool
    ) -> Iterator[tuple[Scan, NoteIndex | None, Fresh | None]]:
        """The vault listed as the scan lists it, with its index holding every listed page
        fresh; no index (None) when the scan answers: the index is off, cannot be used, or
        holds no whole build yet (then the call wants a builder). With a server to ask, its token
        is taken before the listing, so every change the listing may have missed is one it
        reports later. ``ask``: a server's socket is there to ask (the answer this call
        already has is used, and one that did not answer is not asked again)."""
        asked = None
        if ask and self.changes is not None and not self._unanswered:
            asked = self._answer or self.changes(vault_real, None)
        # Opened before the listing, which takes what the config and the ignore files
        # decided from it (``KeptRules``) where their stat vouches for it. Not made here:
        # the config may turn the index off, and then none is made.
        index, kept = self._kept(vault_real)
        try:
            pages = scan(vault_real, dirs, home=home, kept=kept)
        except BaseException:
            if index is not None:
                index.close()
            raise
        if self.changes is not None and asked is None and not dirs:
            # No server answered: one may start, as the config the listing read says, or
            # the listing's size where it says nothing.
            serve_auto = pages.config.serve_auto if pages.config is not None else None
            self.changes.unanswered(vault_real, serve_auto, len(pages))
        if not pages.cache_enabled and index is not None:
            index.close()
            index = None
        if pages.cache_enabled and index is None:
            index = self._open(vault_real, home)
        if index is not None and not self._same_title_rule(index, pages):
            # Its titles were made under another title rule (the layout or .obsidian/
            # changed since, no page file with it): a new build titles every page anew.
            index.close()
            self._wanted_build = (index.path, vault_real, home)
            index = None
        if index is None:
            yield pages, None, None
            return
        try:
            index.begin_snapshot()
            fresh = fresh_listed(index, pages, part=bool(dirs))
            if asked is not None and not dirs:
                keep_listing(index, asked[0], pages)
            self._keep_rules(index, pages, part=bool(dirs))
        except _INDEX_ERRORS as error:
            with contextlib.suppress(sqlite3.Error):
                index.rollback()
            self._damaged(error, index, vault_real, home)
            if isinstance(error, CatchUp):
                self._wanted_build = (index.path, vault_real, home)
            fresh = None
        try:
            yield pages, index, fresh
        finally:
            index.end_snapshot()
            index.close()

    def _kept(self, vault_real: str) -> tuple[NoteIndex | None, KeptRules]:
        """The vault's index, when a whole build by this code is in it, and the rules it
        keeps; else (None, none kept), and ``_open`` decides after the listing."""
        from mnemosyne_core.vault import KeptRules

        index = None
        path = self._index_file(vault_real, create=False) if SQLITE_IS_ENOUGH else None
        if path is not None:
            with contextlib.suppress(IndexUnusable):
                index = NoteIndex.open(path)
        if index is None:
            return None, KeptRules()
        try:
            if index.usable(code_key()):
                return index, KeptRules.loads(index.meta("rules"))
        except sqlite3.Error:
            pass  # ``_open`` opens it again, and says what is wrong
        index.close()
        return None, KeptRules()

    @staticmethod
    def _keep_rules(index: NoteIndex, pages: Scan, *, part: bool) -> None:
        """Keep what the listing's config and ignore files decided (``pages.keep``), when
        it differs from what the index kept: only a help to the next call, so a lock held
        by another writer or a full disk costs it nothing but parsing them again. Unless
        the error ended the call's own transaction (SQLite may roll back all of it on a
        full disk or an I/O error): what the call caught up of the index is gone with it,
        so the error goes on and the scan answers."""
        keep = pages.keep.with_others_of(pages.kept) if part else pages.keep
        if keep.same(pages.kept):
            return
        try:
            written_by(lambda index: index.set_meta("rules", keep.dumps()), index)
        except sqlite3.Error:
            if not index.connection.in_transaction:
                raise

    def _open(self, vault_real: str, home: str) -> NoteIndex | None:
        """The vault's index when a whole build by this code is in it; else None, and the
        call wants a builder (``_start_wanted_build``, once it has its answer; none when
        the index cannot be made at all, or this SQLite cannot hold one)."""
        if not SQLITE_IS_ENOUGH:
            return None
        path = self._index_file(vault_real, create=True)
        if path is None:
            return None
        try:
            index = NoteIndex.open(path)
        except IndexUnusable:
            # None yet, or none to use (not a private file of ours): the builder makes one,
            # replacing what lies there (``build._fresh_index``).
            self._wanted_build = (path, vault_real, home)
            return None
        try:
            if index.usable(code_key()):
                return index
        except sqlite3.Error as error:
            # Not a database, or locked past the busy timeout: the builder decides.
            self._damaged(error, index, vault_real, home)
        index.close()
        self._wanted_build = (path, vault_real, home)
        return None

    @staticmethod
    def _same_title_rule(index: NoteIndex, pages: Scan) -> bool:
        try:
            return index.meta("heading_titles") == pages.heading_titles
        except sqlite3.Error:
            return False

    @contextlib.contextmanager
    def _served(self, vault_real: str, home: str) -> Iterator[tuple[Scan, NoteIndex, Fresh, ServedListing] | None]:
        """The pages as the index's listing holds them and the server says they changed,
        without listing the vault; None at any doubt (see the class's docstring). Asked
        only when a server's socket is there."""
        assert self.changes is not None
        path = self._index_file(vault_real, create=False)
        try:
            index = NoteIndex.open(path) if path is not None else None
        except IndexUnusable:
            index = None
        if index is None:
            yield None
            return
        try:
            try:
                index.begin_snapshot()
            except sqlite3.Error:
                served = None
            else:
                served = self._served_pages(index, vault_real, home)
            if served is None:
                with contextlib.suppress(sqlite3.Error):
                    index.rollback()
            yield served
        finally:
            index.end_snapshot()
            index.close()

    def _served_pages(
        self, index: NoteIndex, vault_real: str, home: str
    ) -> tuple[Scan, NoteIndex, Fresh, ServedListing] | None:
        assert self.changes is not None
        try:
            if not index.usable(code_key()):
                return None
            token = index.meta("token")
            if not isinstance(token, str) or not isinstance(index.meta("served"), bytes):
                return None
            answer = self.changes(vault_real, token)
            self._answer, self._unanswered = answer, answer is None
            if answer is None or answer[1] is None:
                return None
            listing = served_listing(vault_real, index, home)
            if listing is None:
                return None
            fresh = fresh_served(index, listing, answer[1])
            if answer[0] != token:
                written_by(lambda index: index.set_meta("token", answer[0]), index)
        except (*_INDEX_ERRORS, ValueError, EOFError, TypeError):
            return None
        return listing.pages, index, fresh, listing


# --- what wiki info says -------------------------------------------------------------------


class IndexInfo:
    """What ``wiki info`` says of a vault's index (``describe_index``)."""

    __slots__ = (
        "building",
        "bytes",
        "complete",
        "damaged",
        "enabled",
        "failed",
        "fresh",
        "outdated",
        "pages",
        "path",
        "unused",
        "written",
    )

    def __init__(self, enabled: bool, path: str | None, unused: str | None):
        self.enabled = enabled
        self.path = path
        #: Why find and recall do not use it, or None when they do.
        self.unused = unused
        #: The database's size with its write-ahead log.
        self.bytes = 0
        #: The pages it holds, and how many of the listed pages it holds unchanged.
        self.pages = 0
        self.fresh = 0
        #: Whether a whole build by this code is in it (only then do calls read it).
        self.complete = False
        #: Whether a whole build by other code is in it (an older or newer mnemosyne, or a
        #: PyYAML or pathspec install since changed), or an index of another format, whole
        #: or not (its rows cannot be read to tell): the next call rebuilds it.
        self.outdated = False
        #: When a call or a builder last wrote it (seconds since the epoch), or None.
        self.written: float | None = None
        #: (pages done, pages in all) of the builder at work, or None when none is.
        self.building: tuple[int, int] | None = None
        #: SQLite's words for the damage a call found in the index, until a builder
        #: replaces it; None when none was found.
        self.damaged: str | None = None
        #: The last build, when it failed: {"time", "fault", "reason", "retry"} (retry: when
        #: a find or recall starts a builder again, in seconds since the epoch).
        self.failed: dict[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        fields: dict[str, object] = {
            slot: getattr(self, slot)
            for slot in (
                "enabled",
                "path",
                "bytes",
                "pages",
                "fresh",
                "complete",
                "outdated",
                "written",
                "damaged",
                "failed",
                "unused",
            )
        }
        done = self.building
        fields["building"] = None if done is None else {"done": done[0], "total": done[1]}
        return fields


def _index_suggestions(index: NoteIndex, result: FindResult) -> dict[str, list[tuple[str, int]]]:
    """A miss's suggestions (``suggest``) for the keywords in no page, from the index,
    over the pages its ``top`` just searched."""
    from mnemosyne_core.fold import fold
    from mnemosyne_core.suggest import index_suggestions

    found = {}
    for keyword, pages in result.keyword_counts.items():
        if pages == 0:
            words = index_suggestions(index, fold(keyword))
            if words:
                found[keyword] = words
    return found


def describe_index(pages: Scan, environ: Mapping[str, str]) -> IndexInfo:
    """The index of the vault ``pages`` lists: where it is, its size, how many of the listed
    pages a call would take from it unchanged, when it was written, and the builder at
    work. Makes and writes nothing."""
    from mnemosyne_core.freshness import unchanged

    cache_dir, why_not = usable_cache_dir(environ, create=False, vault_real=pages.vault)
    unused = None if pages.cache_enabled else "[cache] enabled = false in the vault's .mnemosyne.toml"
    if not SQLITE_IS_ENOUGH:
        needed = ".".join(map(str, SQLITE_NEEDED))
        unused = unused or f"this Python's SQLite is {sqlite3.sqlite_version}; the index needs {needed} or later"
    if cache_dir is None and why_not is not None and cache_dir_path(environ) and not why_not.endswith(NOT_MADE_YET):
        # A dir the first call would make is no reason; a dir that is there and cannot be
        # used, or no dir at all, is.
        unused = unused or why_not
    # A dir not made yet is made by the first find or recall: name the file it will hold.
    would_be = cache_dir_path(environ) if cache_dir is None and unused is None else cache_dir
    path = index_path(would_be, pages.vault) if would_be is not None else None
    info = IndexInfo(pages.cache_enabled, path, unused)
    if path is None:
        return info
    import time

    from mnemosyne_core.build import Failure, building, damage

    info.building = building(path)
    failure = Failure.read(path)
    if failure is not None and info.building is None:
        retry = failure.retry_at(path, time.time())
        info.failed = {"time": failure.time, "fault": failure.fault, "reason": failure.reason, "retry": retry}
    found = damage(path)
    if found is not None and info.building is None:
        info.damaged = found[1]
    try:
        info.bytes = sum(os.stat(path + suffix).st_size for suffix in ("", "-wal") if os.path.exists(path + suffix))
        index = NoteIndex.open(path, read_only=True)
    except OSError:
        return info
    except IndexUnusable as error:
        if fault_of(error) in REPLACEABLE_FAULTS:
            info.unused = f"{error}: the next find or recall starts a builder that replaces it"
        elif os.path.lexists(path):
            info.unused = f"{error}: find and recall read every page until it can be read again"
        return info
    try:
        info.complete = index.usable(code_key())
        if not info.complete:
            # Format 0 is a file no build has begun; another format's rows cannot be read.
            if index.format() == FORMAT:
                info.outdated = index.meta("complete") == 1 and index.meta("code") != code_key()
            else:
                info.outdated = index.format() != 0
            return info
        written = index.meta("written_ns")
        info.written = written / 1e9 if isinstance(written, int) else None
        held = index.stat_rows()
        info.pages = len(held)
        for _, _, rel_path, read_path in pages.page_paths():
            row = held.get(stored_text(rel_path))
            info.fresh += row is not None and unchanged(row, read_path)
    except sqlite3.Error:
        info.complete = False
    finally:
        index.close()
    return info


__all__ = ["IndexInfo", "IndexedScan", "describe_index", "index_path"]
