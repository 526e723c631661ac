"""A real ``wiki serve`` for tests: in a thread of the test process, or as a subprocess,
and a way to run the CLI through it and through the scan."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import index_harness
import pytest

from mnemosyne_cli import client, protocol
from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.server import Server
from mnemosyne_core import changes, inotify
from mnemosyne_core.errors import MnemosyneError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


class ThreadServer:
    """A server for ``vault`` answering from a thread of this process."""

    def __init__(self, vault: str | Path):
        self.server = Server.for_vault(os.path.realpath(vault), Environment())
        #: The server's own log, apart from the calls a test captures.
        self.log = io.StringIO()
        self.server.log_stream = self.log
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Server:
        try:
            self.server.start()
        except BaseException:
            self.server.close()  # its lock, its watch: not left open for the tests after it
            raise
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.server

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.server.stop()
        if self.thread is not None:
            self.thread.join(30)
        self.server.close()
        # A loop still running would answer, or fail, in the tests after this one.
        if exc_type is None and self.thread is not None:
            assert not self.thread.is_alive(), "the server's thread did not stop in 30 s"


#: Where private runtime dirs are made: a socket's path holds at most 107 bytes (sun_path),
#: and pytest's own temp dirs (deeper still under pytest-xdist's per-worker dirs) leave too
#: few of them for ``<dir>/mnemosyne/<key>.sock``.
SHORT_TMP = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
#: sun_path's size on Linux, its terminating NUL included.
SUN_PATH_BYTES = 108


def use_runtime_dir(parent: Path, monkeypatch: pytest.MonkeyPatch, timeout: str = "10") -> Path:
    """A private XDG_RUNTIME_DIR under ``parent`` (a short path: see ``short_runtime_dir``)
    for the servers and sockets of a test, and a client timeout (seconds) no loaded machine
    reaches: a served call must never fall back to the scan by slowness."""
    run = parent / "run"
    run.mkdir(mode=0o700)
    sockets = protocol.socket_dir(Environment({"XDG_RUNTIME_DIR": str(run)}))
    longest = os.path.join(sockets, protocol.vault_key("/") + ".sock")
    assert len(os.fsencode(longest)) < SUN_PATH_BYTES, f"a socket path under {run} is too long for AF_UNIX"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv(client.TIMEOUT_ENV_VAR, timeout)
    return run


@contextlib.contextmanager
def short_runtime_dir(monkeypatch: pytest.MonkeyPatch, timeout: str = "10") -> Iterator[Path]:
    """``use_runtime_dir`` in a fresh dir of its own under ``SHORT_TMP``, removed after the
    block: a process's own name, never shared with another test or pytest-xdist worker."""
    parent = Path(tempfile.mkdtemp(prefix="mn-", dir=SHORT_TMP))
    try:
        yield use_runtime_dir(parent, monkeypatch, timeout)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


#: How long a subprocess server may take to answer its first status request before a test
#: fails: an upper bound only, which a loaded machine never reaches.
START_BOUND_SECONDS = 120

#: ``python -m mnemosyne_cli`` with the server's per-peer deadline (seconds) from argv[1].
WITH_CONNECTION_DEADLINE = (
    "import runpy, sys\n"
    "from mnemosyne_cli import server\n"
    "server.CONNECTION_DEADLINE = float(sys.argv.pop(1))\n"
    "runpy.run_module('mnemosyne_cli', run_name='__main__', alter_sys=True)\n"
)


def start_subprocess_server(
    vault: str | Path,
    env: dict[str, str] | None = None,
    output: int = subprocess.DEVNULL,
    connection_deadline: float | None = None,
) -> subprocess.Popen[bytes]:
    """``mnemosyne wiki serve`` in a child process, returned once its socket answers; its
    stdout and stderr go to ``output`` (``subprocess.PIPE`` to read them). A
    ``connection_deadline`` replaces the server's per-peer deadline: an hour makes any
    wait on a peer's deadline a failure, with no clock read by the test."""
    environ = {**os.environ, **(env or {})}
    python = [sys.executable, "-m", "mnemosyne_cli"]
    if connection_deadline is not None:
        python = [sys.executable, "-c", WITH_CONNECTION_DEADLINE, str(connection_deadline)]
    process = subprocess.Popen(
        [*python, "wiki", "serve", "--vault", str(vault)],
        env=environ,
        stdout=output,
        stderr=output,
    )
    path = protocol.socket_path(os.path.realpath(vault), Environment(environ))
    # The state waited on: a status answer, which a server gives only once its watch is
    # built (``Server.start`` listens last); the bound is for a machine at its busiest.
    deadline = time.monotonic() + START_BOUND_SECONDS
    while time.monotonic() < deadline:
        if os.path.exists(path) and client.status(os.path.realpath(vault), Environment(environ)) is not None:
            return process
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}")
        time.sleep(0.02)
    process.kill()
    raise AssertionError(f"the server did not start in {START_BOUND_SECONDS} s")


def make_vault(root: Path, pages: dict[str, str]) -> Path:
    """A vault at ``root`` holding ``pages`` ({vault-relative path: text}); parent dirs are
    made, and its whole index (``ensure_index``), which a served call reads."""
    root.mkdir(parents=True, exist_ok=True)
    for rel_path, text in pages.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    ensure_index(root)
    return root


def out_of_watches_at(monkeypatch: pytest.MonkeyPatch, path_end: str) -> Callable[[], None]:
    """Make adding a watch on a path ending in ``path_end`` fail as it does when the user's
    fs.inotify.max_user_watches is reached (ENOSPC); lowering the machine's limit instead
    would hit every process of the user. Returns what gives the watches back, and lets the
    next question try the build at once (``changes.RETRY_SECONDS``, which a test would
    otherwise wait out)."""
    real_add_watch = inotify.Inotify.add_watch

    def add_watch(self: inotify.Inotify, path: str, mask: int) -> int:
        if path.endswith(path_end):
            raise inotify.InotifyError(errno.ENOSPC, "No space left on device", path)
        return real_add_watch(self, path, mask)

    monkeypatch.setattr(inotify.Inotify, "add_watch", add_watch)

    def give_back() -> None:
        monkeypatch.setattr(inotify.Inotify, "add_watch", real_add_watch)
        monkeypatch.setattr(changes, "RETRY_SECONDS", 0.0)

    return give_back


#: The modules whose listing of the vault is the caller's own: the page cache's, and the
#: plain scan's and recall's (``vault.listed_vault``); the server's watch lists through
#: ``mnemosyne_core.changes``.
CALLER_LISTINGS = ("mnemosyne_core.cache", "mnemosyne_core.vault")


@contextlib.contextmanager
def caller_listings() -> Iterator[list[str]]:
    """Record each vault this process's calls list (``vault.scan``) while in the block; a
    server in a thread of this process lists through its watch, which is not recorded."""
    import importlib

    from mnemosyne_core import vault as vault_module

    walks: list[str] = []
    real_scan = vault_module.scan

    def scan(vault: str, *args: Any, **kwargs: Any) -> Any:
        walks.append(str(vault))
        return real_scan(vault, *args, **kwargs)

    modules = [importlib.import_module(name) for name in CALLER_LISTINGS]
    saved = [getattr(module, "scan") for module in modules]  # noqa: B009 - each module's own import of it
    for module in modules:
        setattr(module, "scan", scan)  # noqa: B010
    try:
        yield walks
    finally:
        for module, real in zip(modules, saved, strict=True):
            setattr(module, "scan", real)  # noqa: B010


def run_cli(capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> tuple[int, bytes, str]:
    """main(argv): (exit code, stdout bytes, stderr)."""
    capsysbinary.readouterr()
    code = main(argv)
    out, err = capsysbinary.readouterr()
    return code, out, err.decode("utf-8", "surrogateescape")


def same_as_the_scan(capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> tuple[int, bytes, str]:
    """The call made twice (the second asks the server with the token the first kept, if
    the first kept one) and each answer held to the scan's; the scan's answer."""
    first = run_cli(capsysbinary, argv)
    second = run_cli(capsysbinary, argv)
    scanned = run_cli(capsysbinary, [*argv, "--no-cache"])
    assert first == scanned, argv
    assert second == scanned, argv
    return scanned


def is_miss(argv: list[str], answer: tuple[int, bytes, str]) -> bool:
    """Whether ``answer`` (to ``argv``, a find or recall) says no page matched: a miss lists
    the vault for its note, served or not."""
    if argv[1] == "find":
        return answer[0] == 1 or answer[2].startswith("no wiki page matches")
    return answer[1].startswith(b"No wiki entries matched") or b'"matches": []' in answer[1]


def ensure_index(vault: str | Path) -> None:
    """A whole index of ``vault`` for this process's environment, built now unless one is
    complete (a build keeps no server token: the next call lists the vault and keeps one)."""
    if not index_harness.index_is_complete(vault):
        # A vault that cannot be listed yet (its dirs made later by the test) has none.
        with contextlib.suppress(MnemosyneError):
            index_harness.build_index(vault)


def served_and_scanned(
    capsysbinary: pytest.CaptureFixture[bytes], server: Server, argv: list[str], *, skips_listing: bool | None = None
) -> tuple[tuple[int, bytes, str], tuple[int, bytes, str]]:
    """The call's answer through the server and the plain scan's (``--no-cache``).

    A call is served only when its index holds a token of the server's: the first call
    after a start or a doubt lists the vault and keeps the token, so the call is made twice
    and the second is the served one. Both answers, and the index's without the server
    (``--no-server``, made first: a call that asks no server keeps no token), are held to
    the scan's here. The served call must have asked the server, and (``skips_listing``,
    by default unless the scan's answer is a miss, which lists the vault for its note) not
    listed the vault. The cache is left holding the server's token, so the test's next
    call is served."""
    cached = run_cli(capsysbinary, [*argv, "--no-server"])
    # The index a served call reads: a call that finds none answers by the scan and leaves
    # the build to a detached builder, whose moment a test cannot know.
    ensure_index(server.watch.vault)
    first = run_cli(capsysbinary, argv)
    before = server.answered
    with caller_listings() as walks:
        served = run_cli(capsysbinary, argv)
    assert server.answered > before, f"the server did not answer {argv}"
    scanned = run_cli(capsysbinary, [*argv, "--no-cache"])
    if skips_listing is None:
        skips_listing = not is_miss(argv, scanned)
    if skips_listing:
        assert walks == [], f"{argv} listed the vault though the server said what changed"
    assert first == scanned, f"the call before the served one differs from the scan: {argv}: {first!r} != {scanned!r}"
    assert cached == scanned, f"the cache alone differs from the scan: {argv}: {cached!r} != {scanned!r}"
    return served, scanned
