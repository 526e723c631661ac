"""Building a vault's whole index: in the foreground (``wiki init``), or by one detached
builder that a call starts when it finds no whole index (``start_detached``), as
``git gc --auto`` detaches. The call answers by the scan meanwhile; later calls use the
index once the build is complete in it.

One builder at a time: each holds ``flock`` on the lock file beside the index for its whole
run, so a killed builder leaves no lock held (the kernel drops it with the process). The
build is one write transaction: until it commits, readers see the index as it was, never
part of a build (a first build: no whole index, so they scan; ``wiki init`` rebuilding a
whole one: they read the old one, and a call that must write a changed page waits the busy
timeout, then scans). The lock file holds the builder's progress (``done total``), which
``wiki info`` shows; after a build that failed, ``failed TIME FAULT FREE WRITABLE`` and the
error on a second line (``Failure``): no builder is started again for ``RETRY_AFTER_S``
seconds (a disk that stays full must not cost every call a builder reading the whole
vault), unless what made it fail is gone sooner: the disk has room again, the index or
its dir became writable. A call that finds the index damaged writes ``damaged TIME`` and
the error, and starts a builder (``mark_damaged``).

What lies at the index's path is replaced only when it is no index of ours (not a
database, a damaged one, not a private regular file) or its pages are not of the size the
vault now wants (``SMALL_PAGE_SIZE``): a full disk, an I/O error or a lock never costs a
working index (``index.REPLACEABLE_FAULTS``).

Run as ``python -m mnemosyne_core.build INDEX VAULT HOME``: nice'd, its output to
/dev/null, in a session of its own.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in index.py: without the datetime import of sqlite3's own layer
import contextlib
import os
import sys

from mnemosyne_core.index import (
    REPLACEABLE_FAULTS,
    IndexUnusable,
    NoteIndex,
    code_key,
    fault_of,
    stored_text,
    written_by,
)

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from mnemosyne_core.freshness import Compared
    from mnemosyne_core.page import Page, StatKey

#: A builder's CPU priority: below the calls it works for.
NICENESS = 10
#: How many pages a builder reads between two progress notes.
PROGRESS_EVERY = 500
#: Beside each index: held (flock) by the one builder at work, and holding its progress.
LOCK_SUFFIX = ".build"
#: How long after a failed build no builder is started again, unless its cause is gone.
RETRY_AFTER_S = 600
#: A build that failed on a lock (another writer past the busy timeout) is tried again this
#: much sooner: a lock passes by itself, and nothing on disk tells when.
RETRY_BUSY_S = 30
#: A build that failed on a full disk is tried again once the free space grew by the
#: index's size, and at least this much: a build writes a whole index into the log again.
ROOM_NEEDED = 1 << 20
#: How much of the lock file is read: a state line and the error that made a build fail.
STATE_BYTES = 4096
#: The page size of an index built for a vault of fewer pages than SMALL_VAULT_PAGES.
#: SQLite's default 4 KiB leaves half a page unused, on average, after each text longer than
#: a page, and gives each of the index's two dozen tables a page of its own: on a vault of
#: a hundred notes that made the index a fifth larger than 1 KiB pages do, at no cost to a
#: call. A build into an index of the other size makes a new file (a vault grew or shrank
#: past it): a page's size is fixed when the file is made.
SMALL_PAGE_SIZE = 1024
#: The page size of an index of a larger vault, set as any other: SQLite's usual default,
#: which FTS5's 4,050-byte leaves are sized for.
LARGE_PAGE_SIZE = 4096
SMALL_VAULT_PAGES = 5000
#: How often, and how far apart, a builder tries the lock before it leaves the build to
#: another: a ``building`` probe holds it shared for a moment.
LOCK_TRIES, LOCK_TRY_S = 5, 0.02


def lock_path(index_path: str) -> str:
    return index_path + LOCK_SUFFIX


def _open_lock(index_path: str) -> int:
    return os.open(lock_path(index_path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def _write_state(fd: int, text: str) -> None:
    """Put ``text`` in the lock file in place of what it held (progress, a failure)."""
    data = text.encode("utf-8", "backslashreplace")[:STATE_BYTES]
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def _read_state(index_path: str) -> list[str]:
    """The lock file's lines (the state line first); none when there is no lock file."""
    try:
        fd = os.open(lock_path(index_path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        return os.pread(fd, STATE_BYTES, 0).decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    finally:
        os.close(fd)


def building(index_path: str) -> tuple[int, int] | None:
    """(pages done, pages in all) of the builder at work on this index, or None when none is."""
    import fcntl

    try:
        fd = os.open(lock_path(index_path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            words = os.pread(fd, STATE_BYTES, 0).split(b"\n")[0].split()
            if len(words) == 2 and all(word.isdigit() for word in words):
                return int(words[0]), int(words[1])
            return 0, 0
        except OSError:
            return None
        return None
    finally:
        os.close(fd)


def _free_bytes(index_path: str) -> int:
    """The space left for us on the index's file system, or -1 when it cannot be told."""
    try:
        info = os.statvfs(os.path.dirname(index_path) or ".")
    except OSError:
        return -1
    return info.f_bavail * info.f_frsize


def _writable(index_path: str) -> bool:
    """Whether a builder could write the index: its dir, and the file when there is one."""
    if not os.access(os.path.dirname(index_path) or ".", os.W_OK | os.X_OK):
        return False
    return not os.path.lexists(index_path) or os.access(index_path, os.R_OK | os.W_OK)


class Failure:
    """The last build of an index, which failed: when, what kind of fault (``index.fault_of``),
    SQLite's or the system's words, and what the disk was like then (free bytes, whether the
    index was writable), so that a later call can tell whether the cause is gone."""

    __slots__ = ("fault", "free", "reason", "time", "writable")

    def __init__(self, time: float, fault: str, reason: str, free: int, writable: bool) -> None:
        self.time = time
        self.fault = fault
        self.reason = reason
        self.free = free
        self.writable = writable

    @classmethod
    def read(cls, index_path: str) -> Failure | None:
        """The failure the lock file records, or None when the last build did not fail."""
        lines = _read_state(index_path)
        words = lines[0].split() if lines else []
        if len(words) < 2 or words[0] != "failed" or not words[1].isdigit():
            return None
        fault = words[2].replace("-", " ") if len(words) > 2 else "other"
        free = int(words[3]) if len(words) > 3 and words[3].lstrip("-").isdigit() else -1
        writable = len(words) > 4 and words[4] == "1"
        return cls(int(words[1]), fault, " ".join(lines[1:2]), free, writable)

    def cause_gone(self, index_path: str, now: float) -> bool:
        """Whether what made the build fail is gone by now: the disk has room again, the index
        became writable, a lock had time to pass."""
        if self.fault == "full":
            size = 0
            with contextlib.suppress(OSError):
                size = os.stat(index_path).st_size
            return self.free >= 0 and _free_bytes(index_path) >= self.free + max(ROOM_NEEDED, size)
        if self.fault == "unwritable":
            return not self.writable and _writable(index_path)
        if self.fault == "busy":
            return now - self.time >= RETRY_BUSY_S
        return False

    def retry_at(self, index_path: str, now: float) -> float:
        """When a find or recall starts a builder again: now, if the cause is gone."""
        if now - self.time >= RETRY_AFTER_S or self.cause_gone(index_path, now):
            return now
        return self.time + (RETRY_BUSY_S if self.fault == "busy" else RETRY_AFTER_S)


def damage(index_path: str) -> tuple[float, str] | None:
    """(when, SQLite's words) of the damage a call found in the index, which a builder has not
    replaced yet; None when none was found."""
    lines = _read_state(index_path)
    words = lines[0].split() if lines else []
    if len(words) != 2 or words[0] != "damaged" or not words[1].isdigit():
        return None
    return int(words[1]), " ".join(lines[1:2])


def mark_damaged(index_path: str, error: BaseException) -> None:
    """Record that a call found the index damaged (``wiki info`` says so until a builder
    replaces it). A builder at work, or a failure whose retry is not due, keeps its state:
    the failure says more, and must not be retried by every call that meets the damage."""
    import time

    if Failure.read(index_path) is not None:
        return
    _put_state(index_path, f"damaged {int(time.time())}", error, unless_building=True)


def _put_state(index_path: str, state: str, error: BaseException, *, unless_building: bool = False) -> None:
    """Write the lock file's ``state`` line and ``error`` on one line below it; with
    ``unless_building``, only when no builder holds the lock."""
    with contextlib.suppress(OSError):
        lock = _open_lock(index_path)
        try:
            if unless_building:
                import fcntl

                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _write_state(lock, f"{state}\n{' '.join(str(error).split()) or type(error).__name__}")
        finally:
            os.close(lock)  # drops the flock too


def start_detached(index_path: str, vault_real: str, home: str, environ: Mapping[str, str]) -> None:
    """Start a builder of this index in the background unless one is at work; returns at
    once. The builder runs with the call's ``environ`` (it finds its Python's packages
    there, as the call did) but not its current dir on its ``sys.path`` (``-P``: a vault
    holding a package named as ours must not run as the user). Nothing is said when it
    cannot start: the next call tries again, unless the last build failed a moment ago."""
    import time

    if not index_path or building(index_path) is not None:
        return
    # The last build failed, and its cause is still there (``Failure.cause_gone``): not yet.
    failure, now = Failure.read(index_path), time.time()
    if failure is not None and failure.retry_at(index_path, now) > now:
        return
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-P", "-m", "mnemosyne_core.build", index_path, vault_real, home]
    with contextlib.suppress(OSError):
        os.posix_spawn(sys.executable, argv, dict(environ), file_actions=actions, setsid=True)


def build(
    index_path: str,
    vault_real: str,
    home: str,
    *,
    wait: bool = False,
    progress: Callable[[int, int], None] | None = None,
    catch_up: bool = False,
) -> int | None:
    """Build the whole index of the vault at ``vault_real`` in one transaction; returns the
    pages it holds, or None when another builder is at work (``wait``: wait for it, then
    build). ``progress(done, total)`` is told as pages are read. ``catch_up``: a whole index
    by this code, under the listing's title rule, is made fresh as a call makes it
    (``freshness.fresh_listed``, without a call's limit) instead of built anew: after every
    page was touched, each is read but only its stat written. Raises IndexUnusable or
    sqlite3.Error when the index cannot be written."""

    from mnemosyne_core.freshness import whole_dirs
    from mnemosyne_core.page import read_page
    from mnemosyne_core.vault import scan

    try:
        lock = _open_lock(index_path)
    except OSError as error:
        raise IndexUnusable(f"cannot make {lock_path(index_path)}: {error.strerror}") from None
    try:
        if not _take(lock, wait):
            return None
        pages = scan(vault_real, None, home=home)
        refs = [(read_path, rel_path) for _, _, rel_path, read_path in pages.page_paths()]
        total = len(refs)

        def note(done: int) -> None:
            with contextlib.suppress(OSError):
                _write_state(lock, f"{done} {total}")
            if progress is not None:
                progress(done, total)

        def write(index: NoteIndex) -> None:
            if catch_up and index.usable(code_key()) and index.meta("heading_titles") == pages.heading_titles:
                from mnemosyne_core.freshness import fresh_listed

                fresh_listed(index, pages, part=False, limit=False)
                index.set_meta("rules", pages.keep.dumps())
                note(total)
                return
            index.reset(code_key())
            read = []
            # What the first call would otherwise keep itself (``freshness.whole_dirs``).
            held: dict[str, tuple[int, StatKey, int]] = {}
            for done, (read_path, rel_path) in enumerate(refs):
                if done % PROGRESS_EVERY == 0:
                    note(done)
                page = read_page(read_path, rel_path, heading_titles=pages.heading_titles)
                if page.error is None:
                    read.append(page)
                if len(read) >= PROGRESS_EVERY:
                    _write_holding(index, read, held)
                    read = []
            _write_holding(index, read, held)
            compared: list[Compared] = [
                (stored_text(dir_name), f"{dir_name}/" if dir_name else "", names, {})
                for dir_name, _dir_path, names in pages.listing
            ]
            index.keep_dirs(whole_dirs(compared, held))
            index.set_meta("heading_titles", pages.heading_titles)
            # What the listing's config and ignore files decided (``vault.KeptRules``).
            index.set_meta("rules", pages.keep.dumps())
            index.set_meta("complete", 1)
            note(total)

        note(0)
        for attempt in (1, 2):
            page_size = SMALL_PAGE_SIZE if total < SMALL_VAULT_PAGES else LARGE_PAGE_SIZE
            with _fresh_index(index_path, replace=attempt > 1, page_size=page_size) as index:
                try:
                    written_by(write, index)
                except sqlite3.DatabaseError as error:
                    # A damaged page (of the FTS table, say) fails the build where it drops
                    # the old tables: that index holds nothing worth keeping, and a whole new
                    # one replaces it.
                    if attempt > 1 or fault_of(error) != "corrupt":
                        raise
                    continue
                # The whole build sits in the write-ahead log until a checkpoint: moved into the
                # database now, and the log truncated, so the index takes its own size on disk.
                with contextlib.suppress(sqlite3.Error):
                    index.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                return index.page_count()
        raise AssertionError("unreachable: the second attempt returns or raises")
    finally:
        os.close(lock)


def _write_holding(index: NoteIndex, read: list[Page], held: dict[str, tuple[int, StatKey, int]]) -> None:
    """Write ``read``, and add each page found not racy to ``held`` as ``whole_dirs`` takes it."""
    written = index.write(read)
    held.update((page.path, (written[page.path], page.key, page.not_text)) for page in read if not page.racy)


def _take(lock: int, wait: bool) -> bool:
    """Take the build lock: waiting for it (``wait``), else trying LOCK_TRIES times; False
    when another builder has it."""
    import fcntl
    import time

    if wait:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return True
    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if attempt + 1 < LOCK_TRIES:
                time.sleep(LOCK_TRY_S)
            continue
        return True
    return False


@contextlib.contextmanager
def _fresh_index(index_path: str, *, replace: bool = False, page_size: int = LARGE_PAGE_SIZE) -> Iterator[NoteIndex]:
    """The index at ``index_path`` to build into. What lies there and is no index of ours
    (not an SQLite database: truncated, overwritten; a damaged one; no private regular file
    of ours: a copy with wider rights, one a ``sudo`` call left owned by root, a symlink, a
    dir) is put out of the way first, with its journal files (``_remove``); so is what lies
    there when ``replace``, and an index whose pages are not of ``page_size``. Any other
    error (a full disk, an I/O error, a lock, a read-only disk) is raised and what lies
    there is kept: the index may be whole, and answers again once the disk does."""
    index = None
    try:
        if replace:
            raise IndexUnusable("replaced", "corrupt")
        index = NoteIndex.open(index_path, create=True, page_size=page_size)
        index.format()
    except (IndexUnusable, sqlite3.DatabaseError) as error:
        if index is not None:
            index.close()
        if fault_of(error) not in REPLACEABLE_FAULTS:
            raise
        index = _made_anew(index_path, page_size)
    else:
        if index.page_size() != page_size:
            index.close()
            index = _made_anew(index_path, page_size)
    try:
        yield index
    finally:
        index.close()


def _made_anew(index_path: str, page_size: int) -> NoteIndex:
    """An empty index at ``index_path``, what lay there put out of the way (``_remove``)."""
    _remove(index_path)
    return NoteIndex.open(index_path, create=True, page_size=page_size)


def _remove(index_path: str) -> None:
    """Take what lies at the index's path (and its journals) out of the way. The dir is ours
    and private, so no one else's file is there; but a dir at that path may hold what a
    person put there by hand: an empty one is removed, one with anything in it is renamed
    beside it (``.displaced-TIME``), never deleted."""
    import time

    for suffix in ("", "-wal", "-shm"):
        path = index_path + suffix
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except (IsADirectoryError, PermissionError):
            # Linux says EISDIR for a dir; POSIX allows EPERM.
            if not os.path.isdir(path) or os.path.islink(path):
                raise
            try:
                os.rmdir(path)
            except OSError:
                os.rename(path, f"{path}.displaced-{time.time_ns()}")


def main(argv: Sequence[str] | None = None) -> int:
    """The detached builder: ``INDEX VAULT HOME``. Exits 0 when it built the index or found
    another builder at work, 1 when the index could not be written."""
    index_path, vault_real, home = sys.argv[1:] if argv is None else argv
    try:
        # A damaged index is built anew: catching it up would touch only its rows' stat,
        # never the damaged pages.
        build(index_path, vault_real, home, catch_up=damage(index_path) is None)
    except Exception as error:
        # A vault that cannot be listed, an index that cannot be written: the calls go on
        # answering by the scan, and none starts a builder again until the cause is gone
        # or a while has passed (``start_detached``).
        # Recorded for ``Failure.cause_gone``: when, the fault, the disk's free space, and
        # whether the index was writable.
        import time

        fault = fault_of(error).replace(" ", "-")
        state = f"failed {int(time.time())} {fault} {_free_bytes(index_path)} {int(_writable(index_path))}"
        _put_state(index_path, state, error)
        return 1
    return 0


if __name__ == "__main__":
    # The detached process yields the CPU to the calls it serves. Only here, not in main():
    # a process that calls main() and goes on (a test) would run niced from then on, and on
    # a busy machine everything it did next would crawl.
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    sys.exit(main())
