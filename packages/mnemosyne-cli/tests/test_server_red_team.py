"""The cases a red team of the old server found, tried again on the server that only says
what changed: each answer through it is the plain scan's (``--no-cache``), a peer can
neither stall nor spin it, no file planted in the runtime dir hangs a call, and the
server never reads a page, so no caller gets an answer it could not get itself."""

from __future__ import annotations

import contextlib
import io
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_harness import (
    ThreadServer,
    make_vault,
    out_of_watches_at,
    run_cli,
    same_as_the_scan,
    served_and_scanned,
    start_subprocess_server,
)

from mnemosyne_cli import autostart, client, protocol, server
from mnemosyne_cli.environment import Environment
from mnemosyne_core import inotify

pytestmark = pytest.mark.usefixtures("runtime_dir")  # conftest: a private runtime dir per test

Answer = tuple[int, bytes, str]


# --- stale forever, once: symlinked parents, symlinked config, mounts ---


def test_a_watch_built_while_a_symlinked_parent_dangles_is_in_doubt(tmp_path: Path) -> None:
    """A rebuild can come between a symlinked parent's target being moved away and made
    again (an event of the move triggers it). Built then, the watch lists no searched dir
    and watches nothing the target's return would report: a caller that lists the vault
    after that return, with this watch's token, would be told of no page made there. The
    symlink on the way is a doubt even while it dangles, as it is while it resolves."""
    from mnemosyne_core.changes import VaultWatch

    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["docs/en"]\n', "store/.keep": ""})
    os.symlink(vault / "store" / "real", vault / "docs")  # its target does not exist (yet)
    watch = VaultWatch(str(vault.resolve()))
    try:
        watch.rebuild()
        assert watch.doubt == "the way to the searched dir docs/en/ goes through a symlink, which no watch follows"
        (vault / "store" / "real" / "en").mkdir(parents=True)
        _, paths = watch.changes_since(watch.token())
        assert paths is None  # rescan: the caller lists the vault itself
    finally:
        watch.close()


def test_a_searched_dir_behind_a_symlinked_parent_whose_target_is_moved_and_remade(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(
        tmp_path / "v", {".mnemosyne.toml": 'dirs = ["docs/en"]\n', "store/real/en/old.md": "alpha old\n"}
    )
    os.symlink(vault / "store" / "real", vault / "docs")
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault):
        assert same_as_the_scan(capsysbinary, argv)[1] == b"docs/en/old.md \xe2\x80\x94 old\n"
        os.rename(vault / "store" / "real", vault / "store" / "moved")
        (vault / "store" / "real" / "en").mkdir(parents=True)
        (vault / "store" / "real" / "en" / "new.md").write_text("alpha new\n", encoding="utf-8")
        assert same_as_the_scan(capsysbinary, argv)[1] == b"docs/en/new.md \xe2\x80\x94 new\n"
        # Written into the dir made anew after a call listed it and kept a token, and into
        # the one moved away (which the old watches may still follow).
        (vault / "store" / "real" / "en" / "later.md").write_text("alpha later\n", encoding="utf-8")
        (vault / "store" / "moved" / "en" / "ghost.md").write_text("alpha ghost\n", encoding="utf-8")
        assert b"docs/en/later.md" in same_as_the_scan(capsysbinary, argv)[1]
        (vault / "store" / "real" / "en" / "new.md").write_text("beta\n", encoding="utf-8")
        assert b"docs/en/new.md" not in same_as_the_scan(capsysbinary, argv)[1]
        # The symlink itself pointed elsewhere.
        os.unlink(vault / "docs")
        os.symlink(vault / "store" / "moved", vault / "docs")
        assert b"docs/en/ghost.md" in same_as_the_scan(capsysbinary, argv)[1]
        (vault / "store" / "moved" / "en" / "ghost.md").unlink()
        assert b"docs/en/ghost.md" not in same_as_the_scan(capsysbinary, argv)[1]


def test_a_symlinked_config_whose_target_changes(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"wiki/a.md": "alpha wiki\n", "notes/b.md": "alpha notes\n", "outside/config.toml": 'dirs = ["wiki"]\n'},
    )
    os.symlink(vault / "outside" / "config.toml", vault / ".mnemosyne.toml")
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        assert same_as_the_scan(capsysbinary, argv)[1] == b"wiki/a.md \xe2\x80\x94 a\n"
        (vault / "outside" / "config.toml").write_text('dirs = ["notes"]\n', encoding="utf-8")
        assert same_as_the_scan(capsysbinary, argv)[1] == b"notes/b.md \xe2\x80\x94 b\n"
        (vault / "outside" / "config.toml").write_text('dirs = ["wiki", "notes"]\n', encoding="utf-8")
        assert same_as_the_scan(capsysbinary, argv)[1].count(b"\n") == 2
        assert running.watch.doubt == "the vault's .mnemosyne.toml is a symlink, whose target no watch follows"


@contextlib.contextmanager
def mounted_tmpfs(path: Path) -> Iterator[None]:
    """A tmpfs mounted at ``path`` for the block (the tests run as root in a sandbox that
    allows it; a refusal fails the test, it is not skipped)."""
    completed = subprocess.run(["mount", "-t", "tmpfs", "none", str(path)], capture_output=True, check=False)
    assert completed.returncode == 0, f"mount -t tmpfs refused: {completed.stderr!r}"
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.mark.parametrize("layout", ["flat", "tree"])
def test_a_file_system_mounted_inside_the_vault(
    layout: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    config = 'dirs = ["wiki"]\n' if layout == "flat" else 'dirs = ["wiki"]\ndepth = "tree"\n'
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": config, "wiki/a.md": "alpha\n", "wiki/sub/b.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault):
        before = same_as_the_scan(capsysbinary, argv)
        mount_point = vault / "wiki" if layout == "flat" else vault / "wiki" / "sub"
        with mounted_tmpfs(mount_point):
            (mount_point / "mounted.md").write_text("alpha mounted\n", encoding="utf-8")
            during = same_as_the_scan(capsysbinary, argv)
            assert b"mounted.md" in during[1]
            (mount_point / "later.md").write_text("alpha later\n", encoding="utf-8")
            assert b"later.md" in same_as_the_scan(capsysbinary, argv)[1]
            (mount_point / "mounted.md").write_text("beta\n", encoding="utf-8")
            assert b"mounted.md" not in same_as_the_scan(capsysbinary, argv)[1]
        assert same_as_the_scan(capsysbinary, argv) == before  # unmounted: the dir beneath again


def test_a_mount_outside_the_vault_changes_no_answer_and_one_inside_it_does(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Other programs mount and unmount all the time (and parallel tests do): only a mount
    at or below the vault may hide what a watch saw. The vault's path holds a space and a
    backslash, which the mount table escapes."""
    vault = make_vault(tmp_path / "a v\\ault", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    (tmp_path / "elsewhere").mkdir()
    (vault / "wiki" / "under").mkdir()
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        changes = client.ServerChanges(Environment())
        token = changes(running.watch.vault, None)
        assert token is not None
        with mounted_tmpfs(tmp_path / "elsewhere"):
            assert changes(running.watch.vault, token[0]) == (token[0], ())
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned == (0, b"wiki/a.md \xe2\x80\x94 a\n", "")
        token = changes(running.watch.vault, None)
        assert token is not None
        with mounted_tmpfs(vault / "wiki" / "under"):
            answer = changes(running.watch.vault, token[0])
            assert answer is not None
            assert answer[1] is None  # "rescan": a new generation, the old token unknown
            assert answer[0] != token[0]


# --- a rebuild that fails while the old inotify fd is in the same select batch ---


def test_a_rebuild_that_fails_in_the_same_select_batch_as_a_question_does_not_crash_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The server's thread is started only once its inotify fd holds an overflow and a page
    event and a caller waits on the listener: its first select returns both, and the watch
    is rebuilt (and fails, out of watches) while that batch is handled."""
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    vault_real = str(vault.resolve())
    crashes: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)
    running = server.Server.for_vault(vault_real, Environment())
    running.log_stream = io.StringIO()  # apart from the calls the test captures
    running.start()
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    try:
        old_fd = running.watch.fd
        assert running.watch.watcher is not None
        give_back = out_of_watches_at(monkeypatch, "/wiki")
        running.watch.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))
        (vault / "wiki" / "a.md").write_text("alpha changed\n", encoding="utf-8")  # the fd is readable
        answers: list[tuple[str, tuple[str, ...] | None] | None] = []
        caller = threading.Thread(target=lambda: answers.append(client.ServerChanges(Environment())(vault_real, "0:0")))
        caller.start()
        deadline = time.monotonic() + 120
        while not _listener_has_a_peer(running) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _listener_has_a_peer(running), "the caller never connected: no batch holds both"
        thread.start()
        caller.join(10)
        assert len(answers) == 1
        answer = answers[0]
        assert answer is not None  # answered, not dropped
        assert answer[1] is None  # "rescan"
        assert (running.watch.doubt or "").startswith("cannot watch the vault: ")
        assert running.watch.rebuilds >= 2
        assert running.watch.watcher is not None  # a new inotify instance, its build failed
        assert old_fd >= 0
        give_back()
        argv = ["wiki", "find", "alpha", "--vault", str(vault)]
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"wiki/a.md \xe2\x80\x94 a\n", "")
        assert thread.is_alive()
        assert crashes == []
    finally:
        running.stop()
        if thread.is_alive():
            thread.join(10)
        running.close()


def _listener_has_a_peer(running: server.Server) -> bool:
    """Whether a connection waits in the listener's backlog (a select on it says so)."""
    import select

    assert running.listener is not None
    return bool(select.select([running.listener], [], [], 0)[0])


# --- answers the caller could not get itself ---


def test_the_server_never_opens_a_page(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Every file the server's thread opens, recorded by an audit hook, while it answers
    finds and recalls and sees pages change: no page among them (only its cookie files and
    the mount table)."""
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    title = "---\ntitle: Alpha {}\n---\n{}"
    opened: list[str] = []
    server_thread: list[int] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "open" and server_thread and threading.get_ident() == server_thread[0]:
            opened.append(str(args[0]))

    sys.addaudithook(hook)  # hooks cannot be removed: this one records nothing once the test ends
    harness = ThreadServer(vault)
    with harness as running:
        assert harness.thread is not None
        assert harness.thread.ident is not None
        server_thread.append(harness.thread.ident)
        for text in ("alpha one\n", "alpha two\n"):
            (vault / "wiki" / "a.md").write_text(title.format("a", text), encoding="utf-8")
            (vault / "wiki" / "b.md").write_text(title.format("b", text), encoding="utf-8")
            for argv in (
                ["wiki", "find", "alpha", "--cat", "--vault", str(vault)],
                ["wiki", "find", "alpha", "b", "--cat", "--vault", str(vault)],
                ["wiki", "recall", "alpha", "--vault", str(vault)],
            ):
                served, scanned = served_and_scanned(capsysbinary, running, argv)
                assert served == scanned
        server_thread.clear()
    assert opened, "the hook saw nothing: it would see a page too"
    cookie_dir = protocol.socket_dir(Environment())
    # Besides its cookies, the server reads the mount table before each answer (a mount
    # raises no inotify event): never a page.
    assert [path for path in opened if not path.startswith(cookie_dir) and path != "/proc/self/mountinfo"] == []


def test_a_root_caller_without_capabilities_gets_only_what_it_can_read(tmp_path: Path) -> None:
    """The server runs as root with every capability; the caller is root without any
    (``setpriv --bounding-set=-all``), so a page of another user's, mode 000, is one it
    cannot read. Its served answer is its own scan's: the page is unreadable to it."""
    vault = make_vault(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'dirs = ["wiki"]\n',
            "wiki/secret.md": "kestrel secret\n",
            "wiki/open.md": "kestrel open\n",
        },
    )
    secret = vault / "wiki" / "secret.md"
    os.chown(secret, 65534, 65534)
    secret.chmod(0)
    for path in (tmp_path, vault, vault / "wiki", vault / "wiki" / "open.md"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    process = start_subprocess_server(vault)
    try:
        powerless = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"]
        # The caller's own cache and runtime dir are root's (same uid), readable without caps.
        find = [*powerless, sys.executable, "-m", "mnemosyne_cli", "wiki", "find", "kestrel", "--vault", str(vault)]
        check = subprocess.run(
            [*powerless, "cat", str(secret)], capture_output=True, check=False, timeout=60, env=os.environ.copy()
        )
        assert check.returncode != 0, "the caller without capabilities could read the page: no test"
        before = client.status(str(vault.resolve()), Environment())
        assert before is not None
        answers = [subprocess.run(find, capture_output=True, check=False, timeout=60) for _ in range(2)]
        scanned = subprocess.run([*find, "--no-cache"], capture_output=True, check=False, timeout=60)
        for answer in answers:
            assert (answer.returncode, answer.stdout, answer.stderr) == (
                scanned.returncode,
                scanned.stdout,
                scanned.stderr,
            )
        assert b"wiki/secret.md: cannot read (Permission denied); skipped" in scanned.stderr
        assert b"secret" not in scanned.stdout
        after = client.status(str(vault.resolve()), Environment())
        assert after is not None
        assert after.requests >= before.requests + 3  # both calls asked (the first for a token)
    finally:
        process.terminate()
        process.wait(10)


def test_a_caller_in_another_mount_namespace_is_never_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A caller whose mount namespace hides a dir of the vault (a tmpfs over it, mounted
    in its own namespace by ``unshare -m``) lists the vault itself: the server sees other
    mounts. Its answer is its own scan's."""
    vault = make_vault(
        tmp_path / "v",
        {".mnemosyne.toml": 'dirs = ["wiki", "notes"]\n', "wiki/a.md": "alpha\n", "notes/b.md": "alpha\n"},
    )
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, ["wiki", "find", "alpha", "--vault", str(vault)])
        find = f"{sys.executable} -m mnemosyne_cli wiki find alpha --vault {vault}"
        # Listed, then asked with its token; a page written in the hidden dir, where no
        # watch of the server's sees it; asked again; and the caller's own scan.
        script = (
            f"mount -t tmpfs none {vault / 'notes'} && {find} && {find} && "
            f"echo alpha > {vault / 'notes' / 'new.md'} && {find} && echo -- && {find} --no-cache"
        )
        completed = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, check=False, timeout=60)
        assert completed.returncode == 0, completed.stderr
        before, after = completed.stdout.decode().split("--\n")
        assert before == "wiki/a.md — a\nwiki/a.md — a\nnotes/new.md — new\nwiki/a.md — a\n"
        assert after == "notes/new.md — new\nwiki/a.md — a\n"
        assert (vault / "notes" / "b.md").exists()  # the mount was the caller's alone


# --- one peer can neither stall nor spin the server ---


def test_a_request_of_4096_terms_is_refused_at_once_and_another_caller_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A peer's deadline an hour away: a reply or answer that waited on it would not come
    # within the sockets' timeouts, so no clock is read here.
    monkeypatch.setattr(server, "CONNECTION_DEADLINE", 3600.0)
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    vault_real = str(vault.resolve())
    version = str(protocol.PROTOCOL_VERSION)
    too_large = "\0".join([version, "changes", vault_real, *(f"term{n}" for n in range(4096))]).encode()
    many_fields = "\0".join([version, "changes", vault_real, *("x" * 4096)]).encode()[: protocol.MAX_REQUEST_BYTES]
    assert len(too_large) > protocol.MAX_REQUEST_BYTES
    with ThreadServer(vault) as running:
        for payload, why in ((too_large, "request too large"), (many_fields, "changes takes a vault and a token")):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hostile:
                hostile.settimeout(10)
                hostile.connect(running.socket_path)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    hostile.sendall(protocol.frame(payload))
                reply = hostile.recv(1 << 16)
                assert protocol.decode_reply(reply[4:]) == (protocol.STATUS_ERROR, why)
                # Meanwhile (the hostile peer still connected), a caller is answered within
                # its budget (runtime_dir: 10 s); None would mean it gave up.
                assert client.ServerChanges(Environment())(vault_real, None) == (running.watch.token(), None)


def test_65_idle_connections_do_not_spin_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MAX_CONNECTIONS peers that send nothing, and one more waiting in the backlog: the
    server sleeps until their deadline. Its loop's turns are counted while it holds them
    all, a stretch its own deadline ends, not the test's clock: an idle loop wakes only to
    drop peers (about one turn a peer at most), a spinning one thousands of times a second,
    however loaded the machine."""
    monkeypatch.setattr(server, "CONNECTION_DEADLINE", 1.0)
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    holding_turns: list[int] = []

    class CountingSelector(selectors.DefaultSelector):
        """Notes each turn of the loop taken while it holds MAX_CONNECTIONS peers."""

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            peers = [
                key
                for key in self.get_map().values()
                if isinstance(key.fileobj, socket.socket)
                and not key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
            ]
            if len(peers) == server.MAX_CONNECTIONS:
                holding_turns.append(len(peers))
            return super().select(timeout)

    monkeypatch.setattr(selectors, "DefaultSelector", CountingSelector)  # the module server.py uses
    idle = []
    with ThreadServer(vault) as running:
        try:
            for _ in range(server.MAX_CONNECTIONS + 1):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(running.socket_path)
                idle.append(sock)
            for sock in idle:  # each dropped at its deadline, the one from the backlog last
                sock.settimeout(30)
                assert sock.recv(1) == b""
        finally:
            for sock in idle:
                sock.close()
        assert client.status(str(vault.resolve()), Environment()) is not None  # and it still answers
    assert holding_turns, "the server never held MAX_CONNECTIONS peers"
    assert len(holding_turns) <= 2 * (server.MAX_CONNECTIONS + 1), f"{len(holding_turns)} turns: it spins"


# --- no file in the runtime dir hangs a call ---


@pytest.mark.parametrize("planted", ["log", "lock", "autostart"])
def test_a_fifo_in_the_runtime_dir_never_hangs_a_find(
    planted: str, tmp_path: Path, runtime_dir: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(
        tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n\n[serve]\nauto = true\n', "wiki/a.md": "alpha\n"}
    )
    vault_real = str(vault.resolve())
    sockets = runtime_dir / "mnemosyne"
    sockets.mkdir(mode=0o700)
    paths = {
        "log": autostart.log_path(vault_real, Environment()),
        "lock": protocol.lock_path(vault_real, Environment()),
        "autostart": autostart.record_path(vault_real, Environment()),
    }
    os.mkfifo(paths[planted], 0o600)
    argv = [sys.executable, "-m", "mnemosyne_cli", "wiki", "find", "alpha", "--vault", str(vault)]
    expected = subprocess.run([*argv, "--no-cache"], capture_output=True, check=False, timeout=60)
    assert (expected.returncode, expected.stdout) == (0, b"wiki/a.md \xe2\x80\x94 a\n")
    for _ in range(2):
        # A FIFO opened for reading blocks until a writer comes, which none does: a call that
        # opened it would hang past this deadline.
        answer = subprocess.run(argv, capture_output=True, check=False, timeout=60)
        assert (answer.returncode, answer.stdout, answer.stderr) == (
            expected.returncode,
            expected.stdout,
            expected.stderr,
        )
    assert Path(paths[planted]).is_fifo()  # neither followed nor replaced
    _stop_autostarted(vault_real)


def _stop_autostarted(vault_real: str) -> None:
    """Stop a server a call may have started for the vault (bounded)."""
    status = client.status(vault_real, Environment())
    if status is not None:
        os.kill(status.pid, 15)
        deadline = time.monotonic() + 120
        while Path(f"/proc/{status.pid}").exists() and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(status.pid, os.WNOHANG)
            time.sleep(0.02)


# --- the socket dir's checks ---


def test_an_xdg_runtime_dir_with_a_trailing_slash_still_gets_the_dir_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    shared = Path(tempfile.mkdtemp(prefix="mn-"))
    try:
        shared.chmod(0o777)
        for spelled in (str(shared), f"{shared}/", f"{shared}//"):
            monkeypatch.setenv("XDG_RUNTIME_DIR", spelled)
            with pytest.raises(server.ServerError, match="unsafe XDG_RUNTIME_DIR"):
                server.prepare_socket_dir(Environment())
            assert protocol.runtime_parent(Environment()) is not None, spelled
        monkeypatch.setenv("XDG_RUNTIME_DIR", f"{shared}/")
        (shared / "mnemosyne").mkdir(mode=0o700)
        vault = make_vault(tmp_path / "v", {"wiki/a.md": "alpha\n", ".mnemosyne.toml": 'dirs = ["wiki"]\n'})
        open(protocol.socket_path(str(vault.resolve()), Environment()), "w").close()  # something at the socket's path
        assert (
            client.trusted_socket(str(vault.resolve()), Environment()) is None
        )  # a world-writable runtime dir: not asked
    finally:
        shutil.rmtree(shared)


def test_the_home_dir_refusal_is_the_callers_whatever_the_servers_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A vault with no config and no default dir is searched as a whole tree, unless it is
    the caller's home dir. The server, started with another HOME, has no say in that."""
    home = make_vault(tmp_path / "home", {"notes/a.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(home)]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for server_home, caller_home in ((elsewhere, home), (home, elsewhere)):
        process = start_subprocess_server(home, env={"HOME": str(server_home)})
        try:
            monkeypatch.setenv("HOME", str(caller_home))
            monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
            answer = same_as_the_scan(capsysbinary, argv)
            if caller_home == home:
                assert answer[0] == 3
                assert "your home dir" in answer[2]
            else:
                assert answer == (0, b"notes/a.md \xe2\x80\x94 a\n", "")
        finally:
            process.terminate()
            process.wait(10)


# --- what a watch of the listed dirs cannot see, which the caller checks itself ---


@pytest.fixture
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """No racy window: a page read once is taken from the cache without a stat next time,
    so what follows shows whether the caller's own checks see what no watch sees."""
    import mnemosyne_core.page

    monkeypatch.setattr(mnemosyne_core.page, "RACY_NS", -(10**18))


@pytest.mark.usefixtures("trusted_at_once")
@pytest.mark.parametrize("change", ["retarget", "made_a_file", "target_rewritten", "broken_target_appears"])
def test_a_symlinked_page_whose_target_changes_out_of_sight_answers_as_the_scan(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], change: str
) -> None:
    """A page-named symlink whose target lies in a hidden dir no watch sees: retargeted,
    replaced by a file, its target rewritten, or a broken one whose target appears."""
    vault = make_vault(
        tmp_path / "v",
        # notes/a.md holds the keyword too: no answer is a miss (which lists the vault anyway).
        {"notes/a.md": "kiwi too\n", ".store/one.md": "kiwi\n", ".store/two.md": "mango\n"},
    )
    link = vault / "notes" / "linked.md"
    link.symlink_to("../.store/four.md" if change == "broken_target_appears" else "../.store/one.md")
    argv = ["wiki", "find", "kiwi", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        if change == "retarget":
            link.unlink()
            link.symlink_to("../.store/two.md")
        elif change == "made_a_file":
            link.unlink()
            link.write_text("papaya\n", encoding="utf-8")
        elif change == "target_rewritten":
            (vault / ".store" / "one.md").write_text("no fruit\n", encoding="utf-8")
        else:
            (vault / ".store" / "four.md").write_text("kiwi\n", encoding="utf-8")
        for _call in range(2):
            assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])


@pytest.mark.usefixtures("trusted_at_once")
def test_a_dir_call_then_an_unreadable_page_answers_as_the_scan(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --dir call puts pages from outside the layout into the cache file; a page the
    caller can no longer read is missing from it: neither may pass for the vault's listing."""
    import mnemosyne_core.page
    import mnemosyne_core.vault

    vault = make_vault(
        tmp_path / "v", {"analyses/a.md": "shared\n", "analyses/b.md": "shared\n", "other/x.md": "shared\n"}
    )
    argv = ["wiki", "find", "shared", "--vault", str(vault)]
    real_open_page = mnemosyne_core.page.open_page

    def deny_b(read_path: str) -> int:
        if read_path.endswith("/b.md"):
            raise PermissionError(13, "Permission denied")
        return real_open_page(read_path)

    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)
        (vault / "analyses" / "b.md").write_text("shared, edited\n", encoding="utf-8")
        monkeypatch.setattr(mnemosyne_core.page, "open_page", deny_b)
        monkeypatch.setattr(mnemosyne_core.find, "open_page", deny_b)
        # The server's word taken (b.md changed: read again, and refused), then a --dir call
        # with a dir outside the layout, then calls told that nothing changed since.
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        run_cli(capsysbinary, [*argv, "--dir", "analyses", "--dir", "other"])
        for _call in range(2):
            answer = run_cli(capsysbinary, argv)
            assert answer == run_cli(capsysbinary, [*argv, "--no-cache"])
            assert "analyses/b.md: cannot read (Permission denied)" in answer[2]


@pytest.mark.usefixtures("trusted_at_once")
def test_a_page_with_another_hard_link_is_stated_on_every_served_call(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A write through another name of the page, in a dir no watch sees, raises no event on
    the page's dir: a page read with a link count above one is stat'ed on every served
    call, so the write is seen. (A link made after the page was read raises no event on
    its dir either: docs/server.md names that limit.)"""
    vault = make_vault(tmp_path / "v", {"notes/gamma.md": "---\ntitle: Gamma\n---\ngamma has cherry\n"})
    outside = tmp_path / "outside.md"
    os.link(vault / "notes" / "gamma.md", outside)
    argv = ["wiki", "find", "cherry", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)
        with outside.open("r+b") as through_the_other_name:
            through_the_other_name.write(b"---\ntitle: Gamma\n---\nno fruit at all\n")
        for _call in range(2):
            assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
