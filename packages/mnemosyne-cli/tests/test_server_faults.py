"""``wiki serve`` under faults and hostile peers: each case once broke the server or made a
served answer differ from the scan's. The permission cases run as an unprivileged user
(``setpriv``), since the tests themselves may run as root, whom no mode bit stops."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nobody
import pytest
from nobody import NOBODY, NOBODY_WITH_GROUP
from server_harness import (
    ThreadServer,
    make_vault,
    out_of_watches_at,
    run_cli,
    served_and_scanned,
    start_subprocess_server,
)

from mnemosyne_cli import client, protocol
from mnemosyne_cli.client import ServerChanges
from mnemosyne_cli.environment import Environment
from mnemosyne_core import inotify

PAGES = {
    "wiki/alpha.md": "---\ntitle: Alpha GitHub auth\nslug: alpha\nupdated: 2026-01-02\ntags: [github]\n---\nbody\n",
    "wiki/beta.md": "---\ntitle: Beta\ntags: auth\nupdated: 2026-03-01\n---\nno\n",
    ".mnemosyne.toml": 'dirs = ["wiki"]\n',
}


pytestmark = pytest.mark.usefixtures("runtime_dir")  # conftest: a private runtime dir per test


# --- a failed rebuild answers nothing, and says why ---


def test_a_rebuild_that_runs_out_of_watches_answers_rescan_until_one_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", PAGES)
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        assert served_and_scanned(capsysbinary, running, argv)[0][0] == 0
        give_back = out_of_watches_at(monkeypatch, "/wiki")
        (vault / "wiki" / "gamma.md").write_text("alpha again\n", encoding="utf-8")
        assert running.watch.watcher is not None
        running.watch.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))  # the next question rebuilds
        before = running.answered
        served = run_cli(capsysbinary, argv)
        assert running.answered == before  # "rescan", and no token to keep: the caller listed
        assert served == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert b"wiki/gamma.md" in served[1]
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        reason = f"cannot watch the vault: {inotify.out_of_watches_reason()}"
        assert status.failure == reason
        code, out, _err = run_cli(capsysbinary, ["wiki", "serve", "--status", "--vault", str(vault)])
        assert code == 0
        assert out.decode().endswith(f"; every caller lists the vault: {reason}\n")
        code, out, _err = run_cli(capsysbinary, ["wiki", "info", "--vault", str(vault)])
        assert f"; every caller lists the vault: {reason}\n" in out.decode()
        give_back()
        served, scanned = served_and_scanned(capsysbinary, running, argv)  # rebuilt, answering again
        assert served == scanned
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        assert status.failure == ""


def test_a_vault_root_the_server_cannot_read_for_a_moment_is_never_answered_with_changes(tmp_path: Path) -> None:
    """The vault root mode 000 during a rebuild, as an unprivileged user: the server
    answers "rescan" while it cannot read, and changes again once it can."""
    script = """
import os, sys, time
os.environ["XDG_RUNTIME_DIR"] = sys.argv[2]
os.environ["XDG_CACHE_HOME"] = os.path.join(sys.argv[2], "cache")
from mnemosyne_cli.client import ServerChanges
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.server import Server
from mnemosyne_core import inotify
from mnemosyne_core.backend import FindRequest
from mnemosyne_core.cache import IndexedScan
import threading
vault = sys.argv[1]
server = Server.for_vault(vault, Environment())
server.start()
threading.Thread(target=server.serve_forever, daemon=True).start()
backend = IndexedScan(os.environ, ServerChanges(Environment()))
from mnemosyne_core import build, cache
from mnemosyne_core.config import home_dir
cache_dir, _why_not = cache.usable_cache_dir(os.environ, create=True)
build.build(cache.index_path(cache_dir, vault), vault, home_dir(os.environ), wait=True)  # what a served call reads
for _ in range(2):  # the first keeps the token, the second is served
    result = backend.search(FindRequest(vault, ["page"]))
assert [m.path for m in result.matches] == ["atlas/page.md"] and backend.served, backend.served
token = server.watch.token()
os.chmod(vault, 0)
server.watch.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))  # the next question rebuilds
answer = ServerChanges(Environment())(vault, token)
print("ANSWER", answer is not None and answer[1])
print("DOUBT", server.watch.doubt)
os.chmod(vault, 0o755)
# The server retries on the next question (and every RETRY_SECONDS); within a bound.
deadline = time.monotonic() + 120
result = backend.search(FindRequest(vault, ["page"]))
while not backend.served and time.monotonic() < deadline:
    time.sleep(0.05)
    result = backend.search(FindRequest(vault, ["page"]))
print("AFTER", backend.served, [m.path for m in result.matches])
server.stop()
"""
    out = _as_nobody(tmp_path, script, {"atlas/page.md": "a page\n"})
    assert "ANSWER None\n" in out, out
    assert re.search(r"^DOUBT cannot watch the vault: .*Permission denied$", out, re.MULTILINE), out
    assert "AFTER True ['atlas/page.md']" in out, out


# --- a symlinked scanned dir: its target's identity is what counts ---


def test_a_symlinked_dirs_target_moved_away_and_made_anew_is_seen(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", {"atlas/a.md": "alpha\n", "store/hades-real/old.md": "alpha old\n"})
    (vault / "hades").symlink_to(vault / "store" / "hades-real")
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]

    def answers() -> bytes:
        served = run_cli(capsysbinary, argv)
        assert served == run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        return served[1]

    with ThreadServer(vault):
        assert b"hades/old.md" in answers()
        (vault / "store" / "hades-real").rename(vault / "store" / "moved")
        (vault / "store" / "hades-real").mkdir()
        (vault / "store" / "hades-real" / "new.md").write_text("alpha new\n", encoding="utf-8")
        out = answers()
        assert b"hades/new.md" in out
        assert b"hades/old.md" not in out
        # Written into the dir made anew, after a call has listed it and kept a token.
        (vault / "store" / "hades-real" / "later.md").write_text("alpha later\n", encoding="utf-8")
        assert b"hades/later.md" in answers()
        shutil.rmtree(vault / "store" / "hades-real")  # broken for a while
        assert b"hades/" not in answers()
        (vault / "store" / "moved").rename(vault / "store" / "hades-real")  # and back
        assert b"hades/old.md" in answers()
        (vault / "store" / "hades-real" / "old.md").write_text("alpha changed\n", encoding="utf-8")
        answers()


# --- help and errors are the caller's ---


def test_help_through_a_running_server_is_the_callers_own(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", PAGES)
    with ThreadServer(vault) as running:
        code, out, err = run_cli(capsysbinary, ["wiki", "find", "-0h", "--vault", str(vault)])
        assert (code, err) == (0, "")
        assert out.startswith(b"usage: mnemosyne wiki find ")
        assert running.requests == 0  # the server was never asked


def test_no_request_writes_to_the_servers_own_streams(tmp_path: Path, runtime_dir: Path) -> None:
    vault = make_vault(tmp_path / "v", PAGES)
    process = start_subprocess_server(vault, output=subprocess.PIPE)
    try:
        path = protocol.socket_path(str(vault.resolve()), Environment())
        for payload in (b"\xff" * 30, b"5\0changes\0/\x00\xc2\xb2", b"5\0changes\0relative\0-h", b"5\0status\0x"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(path)
                sock.sendall(protocol.frame(payload))
                sock.recv(1 << 16)
        for flags in (["-0h"], ["--help"], ["--json"], ["--cat"]):
            completed = subprocess.run(
                [sys.executable, "-m", "mnemosyne_cli", "wiki", "find", "alpha", *flags, "--vault", str(vault)],
                capture_output=True,
                check=False,
                timeout=60,
            )
            assert completed.returncode == 0
    finally:
        process.terminate()
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0
    assert out == b""
    assert err.decode().splitlines()[0].startswith(f"mnemosyne serve: watching {vault.resolve()}: 1 dirs in ")
    assert len(err.splitlines()) == 1


# --- recall's memory log: once per call, by the caller ---


def test_a_stalled_server_never_adds_a_second_log_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", PAGES)
    memory = tmp_path / "memory"
    argv = ["wiki", "recall", "github", "--vault", str(vault), "--memory-dir", str(memory)]
    with ThreadServer(vault) as running:
        assert run_cli(capsysbinary, argv)[0] == 0  # keeps the token: the next call asks with it
        real = running.watch.changes_since
        scanned = threading.Event()
        answered = threading.Event()

        def stalled(*args: object, **kwargs: object) -> object:
            scanned.wait(10)  # answers only once the caller has given up on it and scanned
            try:
                return real(*args, **kwargs)  # type: ignore[arg-type]
            finally:
                answered.set()

        monkeypatch.setattr(running.watch, "changes_since", stalled)
        monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "0.2")
        code, out, _err = run_cli(capsysbinary, argv)
        scanned.set()
        assert code == 0
        assert b"wiki/alpha.md" in out
        assert answered.wait(30)  # the server did answer, after the caller had scanned
        # One loop answers every peer in turn: a status answered now means the late answer
        # was sent (or found its caller gone) and nothing of that call is left to happen.
        assert client.status(str(vault.resolve()), Environment()) is not None
    logs = list(memory.glob("*/log.md"))
    assert len(logs) == 1
    assert logs[0].read_text(encoding="utf-8").count("- **Query**: github\n") == 2  # the two calls


def test_the_memory_log_is_written_with_the_callers_umask(tmp_path: Path) -> None:
    script = """
import os, sys
os.environ["XDG_RUNTIME_DIR"] = sys.argv[2]
import threading
from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.server import Server
os.environ["XDG_CACHE_HOME"] = os.path.join(sys.argv[2], "cache")
vault = sys.argv[1]
os.umask(0o022)  # the server's: it would write 0644
server = Server.for_vault(vault, Environment())
server.start()
threading.Thread(target=server.serve_forever, daemon=True).start()
os.umask(0o077)  # the caller's
memory = os.path.join(sys.argv[2], "memory")
code = main(["wiki", "recall", "github", "--vault", vault, "--memory-dir", memory])
log = [os.path.join(d, f) for d, _, files in os.walk(memory) for f in files][0]
print("CODE", code, "ANSWERED", server.answered, "MODE", oct(os.stat(log).st_mode & 0o777))
server.stop()
"""
    out = _as_nobody(tmp_path, script, PAGES)
    assert "CODE 0 ANSWERED 1 MODE 0o600" in out, out


# --- trust before sending anything ---


class FakeServer:
    """A socket at ``path`` that records whatever a client sends it and answers with a
    forged page line. ``close()`` ends it at once, without a wait for a client that never
    comes: a connection the client made before then is still taken and read."""

    def __init__(self, path: str):
        self.received = b""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self._wake_reader, self._wake_writer = os.pipe()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        # Until a client connects or close() is called. A connect on a Unix socket is done
        # once it is queued, so a client that connected before close() is in the queue now.
        select.select([self.sock.fileno(), self._wake_reader], [], [], 30)
        self.sock.setblocking(False)
        try:
            connection, _ = self.sock.accept()
        except OSError:  # none queued
            return
        with connection:
            connection.settimeout(2)
            try:
                self.received += connection.recv(1 << 16)
                # "Nothing changed", and a vault identity no caller sees: never believed.
                body = protocol.changes_body("0:0", (), 0, (0, 0))
                connection.sendall(protocol.frame(protocol.encode_reply(protocol.STATUS_OK, body)))
            except OSError:
                pass

    def close(self) -> None:
        os.write(self._wake_writer, b"x")
        self.thread.join(10)
        self.sock.close()
        os.close(self._wake_reader)
        os.close(self._wake_writer)


@pytest.mark.parametrize("kind", ["shared runtime dir", "socket dir of another user", "open socket dir", "ours"])
def test_the_client_sends_nothing_to_a_socket_in_a_dir_it_cannot_trust(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A forged socket where the client looks: it receives nothing unless the dir is ours
    (the last case, which shows the check is what stops it; its forged reply is still not
    believed)."""
    vault = make_vault(tmp_path / "v", PAGES)
    shared = Path(tempfile.mkdtemp(prefix="mn-"))  # short: a socket path holds 107 bytes
    shared.chmod(0o1777 if kind == "shared runtime dir" else 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    sockets = shared / "mnemosyne"
    sockets.mkdir(mode=0o700)
    if kind == "socket dir of another user":
        os.chown(sockets, 65534, 65534)
    if kind == "open socket dir":
        sockets.chmod(0o777)
    fake = FakeServer(protocol.socket_path(str(vault.resolve()), Environment()))
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    try:
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-server"])
    finally:
        fake.close()
        shutil.rmtree(shared)
    assert (fake.received != b"") == (kind == "ours")


def test_the_client_sends_nothing_to_a_server_of_another_uid(
    tmp_path: Path, runtime_dir: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    python = _require_privilege_drop()
    vault = make_vault(tmp_path / "v", PAGES)
    theirs = Path(tempfile.mkdtemp(prefix="mnemosyne-other-"))
    try:
        os.chown(theirs, 65534, 65534)
        # Listens until a client connects or the test closes its stdin (after the calls: a
        # connection made by then is queued), then takes what is queued.
        listen = (
            "import select, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(8)\n"
            "print('ready', flush=True)\n"
            "select.select([s, sys.stdin], [], [], 30); s.setblocking(False)\n"
            "try:\n    c, _ = s.accept(); c.settimeout(2); print('GOT', len(c.recv(65536)), flush=True)\n"
            "except OSError:\n    print('NOTHING', flush=True)\n"
        )
        process = subprocess.Popen(
            [*NOBODY, python, "-c", listen, str(theirs / "s.sock")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n"
            (runtime_dir / "mnemosyne").mkdir(mode=0o700)
            os.rename(theirs / "s.sock", protocol.socket_path(str(vault.resolve()), Environment()))  # in our own dir
            argv = ["wiki", "find", "alpha", "--vault", str(vault)]
            assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-server"])
            out, _ = process.communicate(timeout=10)
            assert "GOT 0" in out or "NOTHING" in out  # connected at most, never sent a byte
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=10)
    finally:
        shutil.rmtree(theirs, ignore_errors=True)


# --- the caller's groups ---


def test_a_caller_without_the_servers_groups_is_told_to_scan(tmp_path: Path) -> None:
    """Same uid, fewer groups: the scan says Permission denied, and so does a served call
    (the server declines), never the page."""
    python = _require_privilege_drop()
    base = Path(tempfile.mkdtemp(prefix="mnemosyne-groups-"))
    try:
        vault, run = _nobody_tree(base, {"atlas/secret.md": "kestrel secret\n", "atlas/open.md": "other\n"})
        secret = vault / "atlas" / "secret.md"
        os.chown(secret, 0, 4242)  # not nobody's: the group bits decide
        secret.chmod(0o640)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "PYTHONPATH": nobody.import_path()}
        server = subprocess.Popen(
            [
                *NOBODY_WITH_GROUP,
                python,
                "-m",
                "mnemosyne_cli",
                "wiki",
                "serve",
                "--vault",
                str(vault),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            probe = [*NOBODY, python, "-m", "mnemosyne_cli", "wiki", "serve", "--status", "--vault", str(vault)]
            deadline = time.monotonic() + 120
            while subprocess.run(probe, env=env, capture_output=True, check=False, timeout=60).returncode != 0:
                assert time.monotonic() < deadline
                assert server.poll() is None
                time.sleep(0.05)
            find = [*NOBODY, python, "-m", "mnemosyne_cli", "wiki", "find", "kestrel", "--vault", str(vault)]
            for flags in ([], ["--cat"]):
                # Listed by a server that read it with its own groups, the page would show
                # here without the scan's warning; --cat would print it.
                served = subprocess.run([*find, *flags], env=env, capture_output=True, check=False, timeout=60)
                scanned = subprocess.run(
                    [*find, *flags, "--no-server"], env=env, capture_output=True, check=False, timeout=60
                )
                assert (served.returncode, served.stdout, served.stderr) == (
                    scanned.returncode,
                    scanned.stdout,
                    scanned.stderr,
                )
                assert b"kestrel secret" not in served.stdout
                assert b"atlas/secret.md: cannot read (Permission denied); skipped" in served.stderr
            status = subprocess.run(probe, env=env, capture_output=True, check=False, timeout=60)
            assert b"requests" in status.stdout
        finally:
            server.terminate()
            server.wait(10)
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- no peer delays another ---


def test_a_silent_peer_never_delays_another_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemosyne_cli import server

    # Held to their deadline, the silent peers would delay each call by 30 s.
    monkeypatch.setattr(server, "CONNECTION_DEADLINE", 30.0)
    vault = make_vault(tmp_path / "v", PAGES)
    with ThreadServer(vault) as running:
        silent = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
        try:
            for sock in silent:
                sock.connect(running.socket_path)
            silent[0].sendall(b"\0\0")  # half a frame head, then nothing
            silent[1].sendall(b"\0\0\0\x50" + b"2\0find")  # half a request
            for _ in range(5):
                changes = ServerChanges(Environment())
                answer = changes(str(vault.resolve()), None)
                assert changes.answered  # within the client's budget (runtime_dir: 10 s)
                assert answer == (running.watch.token(), None)
            # Answered while the silent peers were still held, not once they were dropped.
            for sock in silent:
                sock.setblocking(False)
                with pytest.raises(BlockingIOError):
                    sock.recv(1)
        finally:
            for sock in silent:
                sock.close()


def test_a_silent_peer_is_dropped_at_its_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemosyne_cli import server

    monkeypatch.setattr(server, "CONNECTION_DEADLINE", 0.3)
    vault = make_vault(tmp_path / "v", PAGES)
    with ThreadServer(vault) as running, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        began = time.monotonic()  # before the connect, so its deadline is at least 0.3 s away
        silent.connect(running.socket_path)
        silent.settimeout(30)  # far past its deadline: a server that never drops it fails here
        assert silent.recv(10) == b""  # closed by the server
        assert time.monotonic() - began >= 0.3  # not before its deadline


# --- running as another user ---


def _require_privilege_drop() -> str:
    """The permission cases need a uid that mode bits stop: root can drop to nobody with
    setpriv. The interpreter nobody runs them with (``nobody.python``, importing from
    ``nobody.import_path()``); skipped only where that is impossible (not root, no
    setpriv, no Python nobody may run)."""
    if os.geteuid() != 0:
        pytest.skip("the test drops privileges to nobody, which needs root")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    python = nobody.python()
    if python is None:
        pytest.skip(f"nobody can run neither this interpreter ({sys.executable}) nor its base installation's")
    return python


def _nobody_tree(base: Path, pages: dict[str, str]) -> tuple[Path, Path]:
    """A vault and a runtime dir under ``base`` that nobody owns, reachable by nobody."""
    base.chmod(0o755)
    vault = make_vault(base / "vault", pages)
    run = base / "run"
    run.mkdir(mode=0o700)
    for path in [base, run, *vault.rglob("*"), vault]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return vault, run


def _as_nobody(tmp_path: Path, script: str, pages: dict[str, str]) -> str:
    """Run ``script`` (argv: vault, runtime dir) as nobody over a vault of ``pages``."""
    python = _require_privilege_drop()
    base = Path(tempfile.mkdtemp(prefix="mnemosyne-nobody-"))
    try:
        vault, run = _nobody_tree(base, pages)
        completed = subprocess.run(
            [*NOBODY, python, "-c", script, str(vault), str(run)],
            env={**os.environ, "PYTHONPATH": nobody.import_path()},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert completed.returncode == 0, completed.stderr
        return completed.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- the server's own signal handling ---


@pytest.mark.parametrize(("signal_number", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_a_signal_stops_the_server_even_while_a_peer_holds_a_connection(
    signal_number: int, code: int, tmp_path: Path, runtime_dir: Path
) -> None:
    vault = make_vault(tmp_path / "v", PAGES)
    # The peer's deadline an hour away: a server that waited for it would not end in time.
    process = start_subprocess_server(vault, output=subprocess.PIPE, connection_deadline=3600)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.connect(protocol.socket_path(str(vault.resolve()), Environment()))
            silent.sendall(b"\0\0\0\x40" + b"2\0find")  # a request that never ends
            # Peers are accepted in the order they connect: once a later one is answered,
            # the server holds the silent one.
            assert client.status(str(vault.resolve()), Environment()) is not None
            process.send_signal(signal_number)
            out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == code
    assert out == b""
    assert b"Traceback" not in err
    assert not os.path.exists(protocol.socket_path(str(vault.resolve()), Environment()))
