"""Put a vault's index back to "no call has built it yet": stop the detached builders of
that one index (``python -P -m mnemosyne_core.build INDEX VAULT HOME``, found by their command
line, so no other index's builder and no other program is touched) and remove the index's
files (``.sqlite``, ``-wal``, ``-shm``, ``.build``). hyperfine's ``--prepare`` of the bench's
"first call, no index" row runs it before each run, so no builder a timed call started is
left running into the next run.

    python bench/reset_index.py INDEX
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

#: The builder's lock file beside the index (``build.LOCK_SUFFIX``), made by a builder alone.
LOCK_SUFFIX = ".build"
#: The files of one index, by their suffix after the index path (``cache.INDEX_SUFFIX``
#: is part of the path).
SUFFIXES = ("", "-wal", "-shm", LOCK_SUFFIX)
#: How long a killed builder may take to be gone, in seconds.
WAIT_SECONDS = 10.0


def builders(index_path: str, proc: str = "/proc") -> list[int]:
    """The pids of the builders at work on ``index_path``: processes whose command line is
    ``PYTHON [OPTIONS] -m mnemosyne_core.build INDEX ...`` with this very INDEX."""
    wanted = os.fsencode(index_path)
    pids = []
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "cmdline"), "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # The interpreter's own options may come first (the builder is started with -P).
        module = argv.index(b"-m", 1) if b"-m" in argv[1:] else -1
        if module > 0 and argv[module + 1 : module + 3] == [b"mnemosyne_core.build", wanted]:
            pids.append(int(entry))
    return pids


def gone(pid: int, proc: str = "/proc") -> bool:
    """Whether ``pid`` has ended: no such process, or a zombie its new parent has not reaped."""
    try:
        with open(os.path.join(proc, str(pid), "stat"), "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def reset(index_path: str) -> list[int]:
    """Kill the builders of ``index_path``, wait until they are gone, then remove the
    index's files. Returns the pids killed. SIGKILL: the build is one transaction, and the
    files it was writing are removed right after."""
    killed = builders(index_path)
    for pid in killed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + WAIT_SECONDS
    while not all(gone(pid) for pid in killed):
        if time.monotonic() > deadline:
            raise SystemExit(f"builders of {index_path} still running after SIGKILL: {killed}")
        time.sleep(0.01)
    for suffix in SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index_path + suffix)
    return killed


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1:
        print("usage: python bench/reset_index.py INDEX", file=sys.stderr)
        return 2
    reset(arguments[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
