"""Building a vault's whole index: in the foreground (``wiki init``), or by one detached
builder that a call starts when it finds no whole index (``start_detached``), as
``git gc --auto`` detaches. The call answers by the scan meanwhile; later calls use the
index once the build is complete in it.

One builder at a time: each holds ``flock`` on the lock file beside the index for its whole
run, so a killed builder leaves no lock held (the kernel drops it with the process). The
build is one write transaction: until it commits, readers see the index as it was (not
complete: they scan), never part of a build. The lock file holds the builder's progress
(``done total``), which ``wiki info`` shows.

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


def lock_path(index_path: str) -> str:
    from mnemosyne_core.cache import LOCK_SUFFIX

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


def start_detached(index_path: str, vault_real: str, home: str, environ: Mapping[str, str]) -> None:
    """Start a builder of this index in the background unless one is at work; returns at
    once. The builder runs with the call's ``environ`` (it finds its Python's packages
    there, as the call did). Nothing is said when it cannot start: the next call tries
    again."""
    if building(index_path) is not None:
        return
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-m", "mnemosyne_core.build", index_path, vault_real, home]
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
    import fcntl

    from mnemosyne_core.cache import code_key
    from mnemosyne_core.page import read_page

    try:
        lock = _open_lock(index_path)
    except OSError as error:
        raise IndexUnusable(f"cannot make {lock_path(index_path)}: {error.strerror}") from None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
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


def _scan(vault_real: str, home: str) -> Scan:
    from mnemosyne_core.vault import scan

    return scan(vault_real, None, home=home)


@contextlib.contextmanager
def _fresh_index(index_path: str) -> Iterator[NoteIndex]:
    """The index at ``index_path`` to build into; a file there that is no SQLite database
    (truncated, overwritten) is removed first, with its journal files."""
    index = NoteIndex.open(index_path, create=True)
    try:
        index.format()
    except sqlite3.DatabaseError:
        index.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
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
        # answering by the scan, and the next one starts a builder again.
        return 1
    return 0


if TYPE_CHECKING:
    from collections.abc import Iterator

    from mnemosyne_core.vault import Scan

if __name__ == "__main__":
    sys.exit(main())
