"""Work over a range split between this process and a forked child, on a machine with a
second core: the scan's search (``find``) and the page cache's reads (``cache``) both use
it. The child runs only the work it was given and exits; when it fails in any way, its half
is done here too, so an answer never depends on it."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    Part = TypeVar("Part")


def can_fork() -> bool:
    """Whether a second process may take half: a second core, and no other thread running
    (forking a process with other threads running can deadlock the child)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    if not hasattr(os, "fork") or cores < 2:
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def in_two(
    count: int, run: Callable[[int, int], Part], dump: Callable[[Part], bytes], load: Callable[[bytes], Part]
) -> tuple[Part, Part]:
    """(``run(0, half)`` here, ``run(half, count)`` in a forked child, sent back through a
    pipe as ``dump`` writes it and ``load`` reads it); the second half run here when the
    fork, the child or its bytes fail (``load`` raising ValueError, EOFError or TypeError)."""
    half = count // 2
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return run(0, half), run(half, count)
    if pid == 0:  # the child: never returns, never runs the caller's code
        code = 1
        try:
            os.close(reader)
            payload = dump(run(half, count))
            with open(writer, "wb", closefd=True) as pipe:
                pipe.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    with open(reader, "rb", closefd=True) as pipe:
        try:
            first = run(0, half)
            payload = pipe.read()
            _, status = os.waitpid(pid, 0)
        except BaseException:
            _end_child(pid)
            raise
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            return first, load(payload)
        except (ValueError, EOFError, TypeError):
            pass  # a child that died mid-write: its half is done here
    return first, run(half, count)


def _end_child(pid: int) -> None:
    import signal  # only an interrupted split needs it

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass
