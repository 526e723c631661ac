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
``wiki info`` shows, or, after a build that failed, ``failed TIME``: no builder is started
again for ``RETRY_AFTER_S`` seconds (a disk that stays full must not cost every call a
builder reading the whole vault).

Run as ``python -m mnemosyne_core.build INDEX VAULT HOME``: nice'd, its output to
/dev/null, in a session of its own.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in index.py: without the datetime import of sqlite3's own layer
import contextlib
import os
import sys

from mnemosyne_core.index import IndexUnusable, NoteIndex, written_by

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

#: A builder's CPU priority: below the calls it works for.
NICENESS = 10
#: How many pages a builder reads between two progress notes.
PROGRESS_EVERY = 500
#: Beside each index: held (flock) by the one builder at work, and holding its progress.
LOCK_SUFFIX = ".build"
#: How long after a failed build no builder is started again.
RETRY_AFTER_S = 600
#: How often, and how far apart, a builder tries the lock before it leaves the build to
#: another: a ``building`` probe holds it shared for a moment.
LOCK_TRIES, LOCK_TRY_S = 5, 0.02


def lock_path(index_path: str) -> str:
    return index_path + LOCK_SUFFIX


def _open_lock(index_path: str) -> int:
    return os.open(lock_path(index_path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


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
            words = os.pread(fd, 64, 0).split()
            if len(words) == 2 and all(word.isdigit() for word in words):
                return int(words[0]), int(words[1])
            return 0, 0
        except OSError:
            return None
        return None
    finally:
        os.close(fd)


def failed_recently(index_path: str) -> bool:
    """Whether the last build of this index failed less than ``RETRY_AFTER_S`` ago."""
    import time

    try:
        fd = os.open(lock_path(index_path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        words = os.pread(fd, 64, 0).split()
    except OSError:
        return False
    finally:
        os.close(fd)
    return (
        len(words) == 2 and words[0] == b"failed" and words[1].isdigit() and time.time() - int(words[1]) < RETRY_AFTER_S
    )


def start_detached(index_path: str, vault_real: str, home: str, environ: Mapping[str, str]) -> None:
    """Start a builder of this index in the background unless one is at work; returns at
    once. The builder runs with the call's ``environ`` (it finds its Python's packages
    there, as the call did) but not its current dir on its ``sys.path`` (``-P``: a vault
    holding a package named as ours must not run as the user). Nothing is said when it
    cannot start: the next call tries again, unless the last build failed a moment ago."""
    if not index_path or building(index_path) is not None or failed_recently(index_path):
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
) -> int | None:
    """Build the whole index of the vault at ``vault_real`` in one transaction; returns the
    pages it holds, or None when another builder is at work (``wait``: wait for it, then
    build). ``progress(done, total)`` is told as pages are read. Raises IndexUnusable or
    sqlite3.Error when the index cannot be written."""

    from mnemosyne_core.cache import code_key
    from mnemosyne_core.page import read_page

    try:
        lock = _open_lock(index_path)
    except OSError as error:
        raise IndexUnusable(f"cannot make {lock_path(index_path)}: {error.strerror}") from None
    try:
        if not _take(lock, wait):
            return None
        pages = _scan(vault_real, home)
        refs = [
            (pages.links.get(prefix + name) or f"{dir_path}/{name}", prefix + name)
            for dir_name, dir_path, names in pages.listing
            for prefix in [f"{dir_name}/" if dir_name else ""]
            for name in names
        ]
        total = len(refs)

        def note(done: int) -> None:
            with contextlib.suppress(OSError):
                os.pwrite(lock, f"{done} {total}".ljust(40).encode(), 0)
            if progress is not None:
                progress(done, total)

        def write(index: NoteIndex) -> None:
            index.reset(code_key())
            read = []
            for done, (read_path, rel_path) in enumerate(refs):
                if done % PROGRESS_EVERY == 0:
                    note(done)
                page = read_page(read_path, rel_path, heading_titles=pages.heading_titles)
                if page.error is None:
                    read.append(page)
                if len(read) >= PROGRESS_EVERY:
                    index.write(read)
                    read = []
            index.write(read)
            index.set_meta("heading_titles", pages.heading_titles)
            index.set_meta("complete", 1)
            note(total)

        with _fresh_index(index_path) as index:
            written_by(write, index)
            # The whole build sits in the write-ahead log until a checkpoint: moved into the
            # database now, and the log truncated, so the index takes its own size on disk.
            with contextlib.suppress(sqlite3.Error):
                index.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return index.page_count()
    finally:
        os.close(lock)


def _take(lock: int, wait: bool) -> bool:
    """Take the build lock: waiting for it (``wait``), else trying a few times, since a
    ``building`` probe holds it shared for a moment; False when another builder has it."""
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


def _scan(vault_real: str, home: str) -> Scan:
    from mnemosyne_core.vault import scan

    return scan(vault_real, None, home=home)


@contextlib.contextmanager
def _fresh_index(index_path: str) -> Iterator[NoteIndex]:
    """The index at ``index_path`` to build into. What lies there and is not one to use (no
    SQLite database: truncated, overwritten; or no private file of ours: a copy with wider
    rights, one a ``sudo`` call left owned by root, a symlink) is removed first, with its
    journal files: the dir is ours and private, so nobody else's file is."""
    index = None
    try:
        index = NoteIndex.open(index_path, create=True)
        index.format()
    except (IndexUnusable, sqlite3.DatabaseError):
        if index is not None:
            index.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(index_path + suffix)
        index = NoteIndex.open(index_path, create=True)
    try:
        yield index
    finally:
        index.close()


def main(argv: Sequence[str] | None = None) -> int:
    """The detached builder: ``INDEX VAULT HOME``. Exits 0 when it built the index or found
    another builder at work, 1 when the index could not be written."""
    index_path, vault_real, home = sys.argv[1:] if argv is None else argv
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    try:
        build(index_path, vault_real, home)
    except Exception:
        # A vault that cannot be listed, an index that cannot be written: the calls go on
        # answering by the scan, and none starts a builder again for a while.
        _note_failure(index_path)
        return 1
    return 0


def _note_failure(index_path: str) -> None:
    import time

    with contextlib.suppress(OSError):
        lock = _open_lock(index_path)
        try:
            os.pwrite(lock, f"failed {int(time.time())}".ljust(40).encode(), 0)
        finally:
            os.close(lock)


if TYPE_CHECKING:
    from collections.abc import Iterator

    from mnemosyne_core.vault import Scan

if __name__ == "__main__":
    sys.exit(main())
