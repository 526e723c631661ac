"""``wiki serve``: the lock, the socket dir, the protocol's bounds, the client's fallbacks,
and answers through the server equal to the scan's."""

from __future__ import annotations

import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from server_harness import (
    ThreadServer,
    caller_listings,
    make_vault,
    run_cli,
    served_and_scanned,
    start_subprocess_server,
)

from mnemosyne_cli import client, protocol, server
from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import ExitCode
from mnemosyne_core import inotify
from mnemosyne_core.changes import VaultWatch

pytestmark = pytest.mark.usefixtures("runtime_dir")  # conftest: a private runtime dir per test


HARNESS_PAGES = {
    "wiki/alpha.md": "---\ntitle: Alpha GitHub auth\nslug: alpha\nupdated: 2026-01-02\ntags: [github]\n---\nbody\n",
    "wiki/beta.md": "---\ntitle: Beta\ntags: auth\nupdated: 2026-03-01\n---\nno\n",
    "wiki/gamma.md": "plain page, no frontmatter\n",
    ".mnemosyne.toml": 'dirs = ["wiki"]\n',
}


# --- the lock, the socket dir, status ---


def test_a_second_server_names_the_first_and_exits_with_its_own_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    with ThreadServer(vault):
        code = main(["wiki", "serve", "--vault", str(vault)])
        err = capsys.readouterr().err
        assert code == ExitCode.SERVER_RUNNING
        assert int(ExitCode.SERVER_RUNNING) == 6
        assert err == (
            f"mnemosyne: error: a server is already running for {vault} (pid {os.getpid()}); "
            "it answers find and recall\n"
        )


def test_status_says_pid_watched_dirs_and_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, ".mnemosyne.toml": 'dirs = ["wiki", "notes"]\n'})
    (vault / "notes").mkdir()
    assert main(["wiki", "serve", "--status", "--vault", str(vault)]) == ExitCode.NO_MATCH
    assert capsys.readouterr().out == f"no server is running for {vault}\n"
    with ThreadServer(vault):
        assert main(["wiki", "serve", "--status", "--vault", str(vault)]) == ExitCode.OK
        out = capsys.readouterr().out
    # The status request itself is the one request; the dirs are the listing's two.
    assert re.fullmatch(
        rf"server: pid {os.getpid()}, 2 dirs watched, [0-9.]+ MiB resident, 1 watch builds, "
        r"1 requests since [0-9: -]+ UTC\n",
        out,
    ), out


def test_info_names_the_running_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import jsonschema

    from mnemosyne_contract import load_schema

    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    assert main(["wiki", "info", "--vault", str(vault)]) == ExitCode.OK
    assert (
        "\nserver: none (auto-start is off: the vault lists 3 pages, fewer than 5,000; "
        "'wiki serve' or [serve] auto = true starts one)\n"
    ) in capsys.readouterr().out
    with ThreadServer(vault):
        assert main(["wiki", "info", "--vault", str(vault)]) == ExitCode.OK
        out = capsys.readouterr().out
        assert f"\nserver: pid {os.getpid()}, 1 dirs watched, " in out
        assert "MiB resident; exits after 30 minutes without a call\n" in out
        assert main(["wiki", "find", "zzqx", "--vault", str(vault)]) == ExitCode.NO_MATCH
        assert main(["wiki", "info", "--vault", str(vault)]) == ExitCode.OK
        index_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("index: "))
        pages = len(list(vault.rglob("*.md")))
        # Pages written a moment ago are racy, read again by the next call: not yet fresh.
        assert re.fullmatch(
            rf"index: .*\.sqlite, \d+ KiB, 0 of {pages} pages fresh, written \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
            "; the server below tells each call what changed",
            index_line,
        ), index_line
        assert main(["wiki", "info", "--vault", str(vault), "--json"]) == ExitCode.OK
        report = json.loads(capsys.readouterr().out)
    served = report["server"]
    assert served["pid"] == os.getpid()
    assert served["watched_dirs"] == 1
    assert served["resident_bytes"] > 1 << 20
    assert served["not_answering"] is None
    jsonschema.validate(report, load_schema("info"))  # the contract describes what info prints


def test_a_socket_path_too_long_to_bind_leaves_no_socket_open(
    tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bind fails (sun_path holds 107 bytes): the error is the caller's to report, and
    the unbound socket is closed, not left for the garbage collector to warn about in
    whatever test runs next."""
    deep = runtime_dir / ("d" * 100)
    deep.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    running = server.Server.for_vault(str(vault.resolve()), Environment())
    fds_before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError, match="AF_UNIX path too long"):
        running.start()
    running.close()
    assert running.listener is None
    assert set(os.listdir("/proc/self/fd")) - fds_before == set()


def test_the_socket_dir_must_be_ours_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    with pytest.raises(server.ServerError, match="unsafe XDG_RUNTIME_DIR"):
        server.prepare_socket_dir(Environment())
    shared.chmod(0o700)
    (shared / "mnemosyne").mkdir(mode=0o755)
    (shared / "mnemosyne").chmod(0o755)
    with pytest.raises(server.ServerError, match="has mode 755"):
        server.prepare_socket_dir(Environment())
    (shared / "mnemosyne").chmod(0o700)
    assert server.prepare_socket_dir(Environment()) == str(shared / "mnemosyne")


def test_without_xdg_runtime_dir_the_sockets_live_in_the_cache_dir(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert protocol.socket_dir(Environment(environ)) == str(tmp_path / "cache" / "mnemosyne" / "run")
    path = server.prepare_socket_dir(Environment(environ))
    assert os.stat(path).st_mode & 0o777 == 0o700


def test_a_symlinked_socket_dir_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    assert protocol.unsafe_dir_reason(str(tmp_path / "link")) == f"{tmp_path / 'link'} is not a directory"


def test_only_our_own_uid_may_ask() -> None:
    assert server.peer_allowed(os.geteuid())
    assert not server.peer_allowed(os.geteuid() + 1)
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert server.peer_uid(left) == os.geteuid()


def test_a_file_system_without_events_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    assert inotify.no_event_reason(str(vault)) is None  # the test's own tmp is local
    monkeypatch.setattr(inotify, "file_system_type", lambda path: 0x6969)
    assert main(["wiki", "serve", "--vault", str(vault)]) == ExitCode.VAULT_ERROR
    assert capsys.readouterr().err == (
        f"mnemosyne: error: cannot serve {vault}: it is on NFS, a file system that does not report every "
        "change to inotify; find and recall list it instead\n"
    )


# --- the protocol's bounds ---


def _raw_exchange(path: str, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(path)
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass  # the server closed with our bytes unread: what it sent still counts
    return b"".join(chunks)


def test_malformed_and_oversized_requests_get_an_error_and_the_server_goes_on(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The peer that stops mid-frame is dropped at its deadline: 2 s, not 5, still ample for
    # each whole request to arrive (test_server_faults holds the deadline itself).
    monkeypatch.setattr(server, "CONNECTION_DEADLINE", 2.0)
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    real = str(vault.resolve())
    with ThreadServer(vault) as running:
        path = running.socket_path

        def reply_to(raw: bytes) -> tuple[str, object]:
            return protocol.decode_reply(_raw_exchange(path, raw)[4:])

        version = str(protocol.PROTOCOL_VERSION).encode()
        status, body = reply_to(protocol.frame(version + f"\0changes\0{real}\0".encode()))
        assert status == protocol.STATUS_OK
        token, paths, _namespace, _root = protocol.decode_changes(body)
        assert (token, paths) == (running.watch.token(), None)  # no token given: the token now
        status, body = reply_to(protocol.frame(version + f"\0changes\0{real}\0{token}".encode()))
        assert protocol.decode_changes(body)[:2] == (token, ())
        for bad, why in (
            (b"garbage", "protocol version 'garbage', not 5"),
            (b"4\0changes\0" + real.encode() + b"\0", "protocol version '4', not 5"),
            (version, "no operation"),
            (version + b"\0dance\0/v\0", "unknown operation 'dance'"),
            (version + b"\0find\0/v\0github", "unknown operation 'find'"),
            (version + b"\0changes\0relative\0", "the vault is not an absolute path"),
            (version + b"\0changes\0/v", "changes takes a vault and a token"),
            (version + b"\0changes\0/v\0\0", "changes takes a vault and a token"),
            (version + b"\0changes\0/v\0x y", "not a token"),
            (version + b"\0changes\0/v\0" + b"a" * (protocol.MAX_TOKEN_CHARS + 1), "not a token"),
            (version + b"\0changes\0/v\0\xc2\xb2", "not a token"),  # a superscript two: isalnum, not ASCII
            (version + b"\0changes\0/other\0", "this server watches another vault"),
            (version + b"\0status\0extra", "status takes no field"),
            (b"\xff\xfe" * 10, "protocol version '\\udcff\\udcfe\\udcff"),
        ):
            status, body = reply_to(protocol.frame(bad))
            assert status == protocol.STATUS_ERROR, bad
            assert isinstance(body, str)
            assert body.startswith(why), (bad, body)
        too_long = (protocol.MAX_REQUEST_BYTES + 1).to_bytes(4, "big") + b"x" * 100
        assert reply_to(too_long) == (protocol.STATUS_ERROR, "request too large")  # refused unread
        two = protocol.frame(version + b"\0status") * 2
        assert reply_to(two) == (protocol.STATUS_ERROR, "one request only")
        assert _raw_exchange(path, b"\0\0") == b""  # a peer that stops mid-frame
        served, scanned = served_and_scanned(capsysbinary, running, ["wiki", "recall", "github", "--vault", str(vault)])
        assert served == scanned


def test_the_request_carries_a_vault_and_a_token_and_nothing_of_the_caller() -> None:
    """No query, no layout, no environment crosses the socket: the caller matches itself."""
    request = protocol.Request(protocol.OP_CHANGES, "/v", "0123abcd:17")
    payload = request.encode()
    assert payload == f"{protocol.PROTOCOL_VERSION}\0changes\0/v\x000123abcd:17".encode()
    assert protocol.decode_request(payload) == request
    assert struct.unpack(">I", protocol.frame(payload)[:4])[0] == len(payload)
    assert protocol.Request(protocol.OP_CHANGES, "/v").encode().endswith(b"\0/v\0")  # no token yet
    assert protocol.decode_request(protocol.Request(protocol.OP_STATUS).encode()) == protocol.Request("status")
    undecodable = protocol.Request(protocol.OP_CHANGES, "/v\udcff", "")
    assert protocol.decode_request(undecodable.encode()) == undecodable


def test_the_reply_decoder_refuses_what_it_does_not_understand() -> None:
    import marshal

    assert protocol.decode_reply(protocol.encode_reply(protocol.STATUS_OK, (1, 2))) == ("ok", (1, 2))
    for bad in (
        b"",
        b"junk",
        marshal.dumps((4, "ok", None)),  # another version
        marshal.dumps((protocol.PROTOCOL_VERSION, "maybe", None)),
        marshal.dumps([protocol.PROTOCOL_VERSION, "ok", None]),
        marshal.dumps((protocol.PROTOCOL_VERSION, "ok")),
    ):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode_reply(bad)
    good = protocol.changes_body("g:3", ("wiki/a.md",), 7, (1, 2))
    assert protocol.decode_changes(good) == ("g:3", ("wiki/a.md",), 7, (1, 2))
    assert protocol.decode_changes(protocol.changes_body("g:3", None, 7, (1, 2)))[1] is None
    for body in (
        None,
        (),
        ("g:3", (), 7),  # short of the vault's identity
        (3, (), 7, (1, 2)),  # a token that is not text
        ("g:3", ["wiki/a.md"], 7, (1, 2)),  # paths: not a tuple
        ("g:3", (b"wiki/a.md",), 7, (1, 2)),  # a path that is not text
        ("g:3", (), "7", (1, 2)),  # a namespace that is not a number
        ("g:3", (), 7, (1, 2, 3)),  # a bad identity
        ("g:3", (), 7, ("1", 2)),
    ):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode_changes(body)


def test_each_reply_body_decodes_to_what_its_encoder_was_given() -> None:
    """Each body's encoder and decoder are a pair (protocol.py): every field comes back, in
    place, through a whole reply (marshal); a status body short of a field or with a field
    of another type is refused."""
    changes = protocol.changes_body("g:3", ("wiki/a.md", "b/ü.md"), 7, (1, 2))
    status, body = protocol.decode_reply(protocol.encode_reply(protocol.STATUS_OK, changes))
    assert (status, protocol.decode_changes(body)) == ("ok", ("g:3", ("wiki/a.md", "b/ü.md"), 7, (1, 2)))
    good = protocol.status_body(
        pid=41, dirs=3, resident_bytes=5 << 20, builds=2, requests=9, started=1767225600, failure="watch: why"
    )
    status, body = protocol.decode_reply(protocol.encode_reply(protocol.STATUS_OK, good))
    assert (status, protocol.decode_status(body)) == ("ok", (41, 3, 5 << 20, 2, 9, 1767225600, "watch: why"))
    decoded = client.Status(body)
    assert (decoded.pid, decoded.dirs, decoded.resident_bytes, decoded.builds) == (41, 3, 5 << 20, 2)
    assert (decoded.requests, decoded.started, decoded.failure) == (9, 1767225600, "watch: why")
    for bad in (None, (), good[:6], (*good, 0), ("41", *good[1:]), (*good[:6], None), list(good)):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode_status(bad)


def test_a_running_servers_status_reply_is_its_own_state(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    with ThreadServer(vault) as running:
        answer = client.status(str(vault.resolve()), Environment())
        assert answer is not None
        assert (answer.pid, answer.dirs, answer.builds, answer.requests, answer.failure) == (
            os.getpid(),
            running.watch.watched_dirs,
            running.watch.rebuilds,
            1,  # this status request
            "",
        )
        assert answer.started == int(running.started)
        assert answer.resident_bytes > 1 << 20


# --- fallbacks ---


def test_a_server_that_never_answers_costs_at_most_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    expected = run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault), "--no-server"])
    path = protocol.socket_path(str(vault.resolve()), Environment())
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(path)
    stuck.listen(8)
    accepted: list[socket.socket] = []
    asked = threading.Event()

    def take_the_question_and_never_answer() -> None:
        connection, _ = stuck.accept()
        accepted.append(connection)
        connection.settimeout(30)
        head = connection.recv(4)
        if len(head) == 4 and len(connection.recv(protocol.frame_length(head))) > 0:
            asked.set()

    threading.Thread(target=take_the_question_and_never_answer, daemon=True).start()
    monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "0.3")
    budgets: list[float] = []
    real_exchange = client.exchange

    def exchange(path: str, request: bytes, timeout: float) -> bytes | None:
        budgets.append(timeout)
        return real_exchange(path, request, timeout)

    monkeypatch.setattr(client, "exchange", exchange)
    try:
        began = time.monotonic()
        assert run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault)]) == expected
        took = time.monotonic() - began
        assert asked.wait(30)  # it did connect and ask
        assert budgets == [0.3]  # with the budget the environment set
        # The peer still holds its end and has sent nothing, yet the caller closed its own:
        # it gave up by its own clock, which it ran to the end (a lower bound: no luck in it).
        assert accepted[0].recv(1) == b""
        assert took >= 0.3
    finally:
        stuck.close()
        for connection in accepted:
            connection.close()


def test_a_server_that_hangs_up_mid_query_means_a_scan(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    expected = run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault), "--no-server"])
    path = protocol.socket_path(str(vault.resolve()), Environment())
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dying:
        dying.bind(path)
        dying.listen(8)

        def hang_up() -> None:
            connection, _ = dying.accept()
            connection.recv(4)
            connection.sendall(b"\0\0\0\x10partial")  # half a reply, then gone
            connection.close()

        threading.Thread(target=hang_up, daemon=True).start()
        assert run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault)]) == expected


def test_a_killed_server_means_a_scan_and_a_restarted_one_answers(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "recall", "github", "auth", "--vault", str(vault)]
    expected = run_cli(capsysbinary, [*argv, "--no-cache"])
    process = start_subprocess_server(vault)
    try:
        assert run_cli(capsysbinary, argv) == expected  # lists the vault, keeps the token
        with caller_listings() as walks:
            assert run_cli(capsysbinary, argv) == expected
        assert walks == []  # served
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        assert os.path.exists(protocol.socket_path(str(vault.resolve()), Environment()))  # left behind
        (vault / "wiki" / "delta.md").write_text("---\ntitle: Delta auth\n---\n", encoding="utf-8")
        expected = run_cli(capsysbinary, [*argv, "--no-cache"])
        with caller_listings() as walks:
            assert run_cli(capsysbinary, argv) == expected
        assert walks == [str(vault.resolve())]  # nobody to ask: listed
        process = start_subprocess_server(vault)
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        assert (status.pid, status.dirs, status.failure) == (process.pid, 1, "")
        # The cache's token is the dead server's: the new one does not know it, so listed.
        with caller_listings() as walks:
            assert run_cli(capsysbinary, argv) == expected
        assert walks == [str(vault.resolve())]
        (vault / "wiki" / "delta.md").write_text("---\ntitle: Delta\n---\n", encoding="utf-8")
        expected = run_cli(capsysbinary, [*argv, "--no-cache"])
        with caller_listings() as walks:
            assert run_cli(capsysbinary, argv) == expected
        assert walks == []  # the new server's token: served, the changed page read again
    finally:
        process.terminate()
        assert process.wait(10) == 0
    assert not os.path.exists(protocol.socket_path(str(vault.resolve()), Environment()))  # SIGTERM cleans up


def test_an_overflowed_queue_rebuilds_before_answering(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "recall", "auth", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert running.watch.watcher is not None
        token = running.watch.token()
        # A real overflow needs more than max_queued_events (16384) unread events (see the
        # test at the end); the handling is the same for an injected one.
        running.watch.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))
        (vault / "wiki" / "beta.md").write_text("---\ntitle: Beta\n---\n", encoding="utf-8")
        answered, requests = running.answered, running.requests
        with caller_listings() as walks:
            answer = run_cli(capsysbinary, argv)
        assert answer == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert walks == [str(vault.resolve())]  # told to rescan: listed
        # One question: the "rescan" came with the token the listing keeps.
        assert (running.requests, running.answered) == (requests + 1, answered)
        assert running.watch.rebuilds == 2
        assert running.watch.token().split(":")[0] != token.split(":")[0]  # a new generation
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned


def test_other_dirs_and_another_vault_are_listed_not_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, "notes/n.md": "---\ntitle: github notes\n---\n"})
    other = make_vault(tmp_path / "other", HARNESS_PAGES)
    with ThreadServer(vault) as running:
        argv = ["wiki", "recall", "github", "--vault", str(vault), "--dir", "notes"]
        for _ in range(2):
            assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert (running.requests, running.answered) == (0, 0)  # --dir lists part: never asked
        argv = ["wiki", "recall", "github", "--vault", str(other)]
        for _ in range(2):
            with caller_listings() as walks:
                answer = run_cli(capsysbinary, argv)
            assert answer == run_cli(capsysbinary, [*argv, "--no-cache"])
            assert walks == [str(other.resolve())]
        assert running.requests == 0  # no socket of that vault's: nobody asked


def test_the_caller_resolves_a_relative_vault_and_its_own_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AION_VAULT", "v")
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, ["wiki", "recall", "github"])
        assert served == scanned
        assert served[0] == 0
        assert b"wiki/alpha.md" in served[1]
        served, scanned = served_and_scanned(capsysbinary, running, ["wiki", "recall", "github", "--vault", "v"])
        assert served == scanned


def test_recall_logs_to_the_memory_dir_the_caller_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    monkeypatch.chdir(tmp_path)
    argv = ["wiki", "recall", "github", "--vault", "v", "--memory-dir", "mem"]
    with ThreadServer(vault) as running:
        assert run_cli(capsysbinary, argv)[0] == 0  # lists, keeps the token
        before = running.answered
        with caller_listings() as walks:
            code, _out, _err = run_cli(capsysbinary, argv)
        assert (code, walks) == (0, [])
        assert running.answered == before + 1
    logs = list((tmp_path / "mem").glob("*/log.md"))
    assert len(logs) == 1
    assert logs[0].read_text(encoding="utf-8").count("- **Query**: github\n") == 2  # once per call


def test_the_client_path_imports_no_heavy_module(tmp_path: Path, runtime_dir: Path) -> None:
    """A served find imports no module that costs milliseconds (a vault without a config
    file: reading one costs a TOML parser, served or not)."""
    vault = make_vault(tmp_path / "v", {"atlas/alpha.md": HARNESS_PAGES["wiki/alpha.md"]})
    probe = (
        "import sys; from mnemosyne_cli.console_script import main; main(sys.argv[1:]); "
        "print(' '.join(sys.modules), file=sys.stderr)"
    )

    def modules(*flags: str) -> set[str]:
        argv = [sys.executable, "-c", probe, "wiki", "find", "alpha", "--vault", str(vault), *flags]
        completed = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
        assert completed.stdout == "atlas/alpha.md — Alpha GitHub auth\n"
        return set(completed.stderr.split())

    with ThreadServer(vault) as running:
        modules()  # lists the vault, keeps the token
        answered = running.answered
        served = modules()
        assert running.answered == answered + 1
    heavy = {
        "typing",
        "json",
        "argparse",
        "socket",
        "selectors",
        "tomllib",
        "mnemosyne_cli.server",
        "mnemosyne_cli.app",
        "mnemosyne_core.changes",
    }
    assert sorted(served & heavy) == []


def test_the_watch_sees_a_change_made_just_before_the_question(tmp_path: Path) -> None:
    """The cookie: every event of a write that returned before the question is read
    before the answer, with no sleep."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    cookies = tmp_path / "cookies"
    cookies.mkdir(mode=0o700)
    watch = VaultWatch(str(vault.resolve()), str(cookies))
    watch.rebuild()
    try:
        assert watch.doubt is None
        token = watch.token()
        for round_number in range(50):
            (vault / "wiki" / "alpha.md").write_text(f"---\ntitle: round{round_number}\n---\n", encoding="utf-8")
            now, paths = watch.changes_since(token)
            assert paths == ("wiki/alpha.md",), round_number
            assert now != token
            assert watch.changes_since(now) == (now, ())
            token = now
        assert list(cookies.iterdir()) == []  # each cookie removed after its answer
        assert watch.rebuilds == 1
    finally:
        watch.close()


def test_a_changed_page_the_caller_cannot_stat_lists_the_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A page the server named as changed whose stat fails on the served path is no page
    to take or drop: the caller lists the vault and answers as the scan does."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "find", "kestrel", "--vault", str(vault)]
    page = vault / "wiki" / "alpha.md"
    real_lstat = os.lstat
    failures = [f"{vault.resolve()}/wiki/alpha.md"]

    def failing_lstat(path: str) -> os.stat_result:
        # Only the page cache's own look at the page: the listing's is another matter.
        if failures and str(path) == failures[0] and sys._getframe(1).f_code.co_name == "fresh_served":
            failures.pop()
            raise OSError(5, "Input/output error", str(path))
        return real_lstat(path)

    # Not racy: a page read within RACY_NS of its change is read again, never stat'ed.
    monkeypatch.setattr("mnemosyne_core.page.RACY_NS", 0)
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, ["wiki", "find", "alpha", "--vault", str(vault)])
        page.write_text("---\ntitle: Kestrel\n---\n", encoding="utf-8")
        monkeypatch.setattr(os, "lstat", failing_lstat)
        with caller_listings() as walks:
            served = run_cli(capsysbinary, argv)
        monkeypatch.setattr(os, "lstat", real_lstat)
        assert failures == []  # the served path met the failure
        assert walks == [str(vault.resolve())]
        assert (
            served == run_cli(capsysbinary, [*argv, "--no-cache"]) == (0, b"wiki/alpha.md \xe2\x80\x94 Kestrel\n", "")
        )


# --- find through the server: the same bytes as the scan ---

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "vaults"
FIND_CALLS = [
    ["mastra"],
    ["agent", "--limit", "0"],
    ["agent", "--json", "--limit", "3"],
    ["kestrel", "--cat"],
    ["a", "--cat"],
    ["zyzzyva"],
    ["zyzzyva", "agent"],
    ["STRASSE"],
    ["tar"],
    ["contains", "--limit", "2"],
    ["md", "--paths"],
    ["page", "--json"],
    ["e", "--limit", "0", "--json"],
    ["e", "--matched"],
]


@pytest.mark.parametrize("vault_name", ["aion", "edge", "known-item", "harness"])
def test_find_and_recall_through_the_server_print_what_the_scan_prints(
    vault_name: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    import shutil

    vault = tmp_path / vault_name
    shutil.copytree(FIXTURES / vault_name, vault, symlinks=True)
    calls = [["find", *call] for call in FIND_CALLS]
    calls += [["recall", *topic] for topic in (["github", "auth"], ["agent"], ["zyzzyva"], ["agent", "--json"])]
    with ThreadServer(vault) as running:
        assert running.watch.doubt is None
        argv = ["wiki", "find", "--vault", str(vault), "--", "-v"]
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv[:-2], "--no-cache", *argv[-2:]])
        for call in calls:
            argv = ["wiki", *call, "--vault", str(vault)]
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned, argv


@pytest.mark.parametrize("environment", [{}, {"FORCE_COLOR": "1"}, {"NO_COLOR": "1", "FORCE_COLOR": "1"}])
def test_colour_follows_the_callers_terminal_and_environment(
    environment: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, "wiki/link.md": ""})
    os.unlink(vault / "wiki" / "link.md")
    os.symlink(tmp_path, vault / "wiki" / "link.md")  # a warning, whose prefix may be coloured
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with ThreadServer(vault) as running:
        for argv in (
            ["wiki", "find", "alpha", "--vault", str(vault)],
            ["wiki", "recall", "github", "--vault", str(vault)],
        ):
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
            assert "warning" in served[2]  # the listing's warning, kept with the listing
            assert ("\x1b[" in served[2]) == ("NO_COLOR" not in environment)


def test_a_page_written_through_another_hard_link_is_seen(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A write through a name outside the watched dirs raises no event on them: such pages
    are stat'ed again on every served call."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    outside = tmp_path / "elsewhere.md"
    os.link(vault / "wiki" / "gamma.md", outside)
    argv = ["wiki", "find", "zebra", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, ["wiki", "find", "plain", "--vault", str(vault)])
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        with outside.open("ab") as page:
            page.write(b"zebra\n")
        with caller_listings() as walks:
            served = run_cli(capsysbinary, argv)
        assert walks == []  # served, and the page with another link read again
        assert served == run_cli(capsysbinary, [*argv, "--no-cache"]) == (0, b"wiki/gamma.md \xe2\x80\x94 gamma\n", "")


def test_a_symlinked_page_is_stat_ed_on_every_served_call_and_a_change_is_seen(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A symlinked page's target lies where no watch of the listed dirs sees it: the caller
    stats it on every served call; the watch is not rebuilt for it."""
    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, "notes/delta.md": "---\ntitle: Delta\ntags: [github]\n---\n"})
    os.symlink("../notes/delta.md", vault / "wiki" / "delta.md")
    finds = ["wiki", "find", "delta", "--vault", str(vault)]
    recalls = ["wiki", "recall", "github", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        for argv in (finds, recalls, finds):
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
        assert served[1] == b"wiki/delta.md \xe2\x80\x94 Delta\n"
        (vault / "notes" / "delta.md").write_text("---\ntitle: Epsilon delta\ntags: [gitlab]\n---\n", encoding="utf-8")
        for argv in (finds, recalls):
            with caller_listings() as walks:
                served = run_cli(capsysbinary, argv)
            assert walks == []
            assert served == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert b"wiki/delta.md" not in served[1]  # recall: no github tag now
        assert run_cli(capsysbinary, finds)[1] == b"wiki/delta.md \xe2\x80\x94 Epsilon delta\n"
        assert running.watch.rebuilds == 1


def test_a_vault_replaced_at_the_same_path_is_never_answered_from_the_old_one(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "recall", "github", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        os.rename(vault, tmp_path / "old")
        make_vault(vault, {**HARNESS_PAGES, "wiki/alpha.md": "---\ntitle: nothing\n---\n"})
        for _ in range(2):
            answer = run_cli(capsysbinary, argv)
            assert answer == run_cli(capsysbinary, [*argv, "--no-cache"])
            assert b"wiki/alpha.md" not in answer[1]
        assert running.watch.rebuilds > 1  # the old root's watch was lost


@pytest.mark.parametrize("with_cookies", [True, False])
def test_a_real_queue_overflow_is_seen_and_answers_rescan(tmp_path: Path, with_cookies: bool) -> None:
    """More unread events than max_queued_events: the kernel drops the rest and queues
    IN_Q_OVERFLOW (on no watch: wd -1), and the watch starts over (a new generation)
    before answering, whether or not it watches a cookie dir."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    cookies = tmp_path / "cookies"
    cookies.mkdir(mode=0o700)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text(encoding="ascii"))
    watch = VaultWatch(str(vault.resolve()), str(cookies) if with_cookies else None)
    watch.rebuild()
    try:
        token = watch.token()
        pages = [vault / "wiki" / "alpha.md", vault / "wiki" / "beta.md"]
        for turn in range(limit + 10):
            # Alternating pages: the kernel merges an event equal to the last one queued.
            os.utime(pages[turn % 2], ns=(turn, turn))
        (vault / "wiki" / "alpha.md").write_text("---\ntitle: after the flood\n---\n", encoding="utf-8")
        now, paths = watch.changes_since(token)
        assert paths is None
        assert watch.rebuilds == 2  # page events alone never rebuild; only the overflow did
        assert watch.changes_since(now) == (now, ())
    finally:
        watch.close()


@pytest.mark.parametrize("replaced_by", [None, "nowhere.md", "gamma.md"])
def test_a_page_deleted_or_made_a_symlink_soon_after_it_was_written_answers_as_the_scan(
    replaced_by: str | None, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A page changed within the cache's racy window is read again on every served call.
    Deleted, the served call must drop it as the scan does, not warn that it vanished; made
    a symlink (broken, or to another page), it is what the listing says it is."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    (vault / "wiki" / "delta.md").write_text("alpha delta\n", encoding="utf-8")
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)
        (vault / "wiki" / "delta.md").unlink()
        if replaced_by is not None:
            os.symlink(replaced_by, vault / "wiki" / "delta.md")
        served = run_cli(capsysbinary, argv)
        assert served == run_cli(capsysbinary, [*argv, "--no-cache"])
        if replaced_by is None:
            assert served == (0, b"wiki/alpha.md \xe2\x80\x94 Alpha GitHub auth\n", "")


def test_the_selector_follows_each_new_watch_fd_even_one_with_a_number_just_freed() -> None:
    """A rebuild closes the watch's inotify fd and opens another. The new one may get the
    old number (epoll dropped the old fd when it closed, so the number must be added
    again), and a connection accepted in the same batch may get it (the old registration
    must be gone before the connection's). Pipes stand in for both fds."""
    import selectors
    from types import SimpleNamespace

    selector = selectors.DefaultSelector()
    old_reader, old_writer = os.pipe()
    watch = SimpleNamespace(fd=old_reader, rebuilds=1)
    state = SimpleNamespace(watch=watch, _watched=(-1, -1))
    try:
        assert server.Server._watch_fd(state, selector) == old_reader  # type: ignore[arg-type]
        # Rebuilt, and the new fd has the old number.
        new_reader, new_writer = os.pipe()
        os.dup2(new_reader, old_reader)
        os.close(new_reader)
        watch.rebuilds = 2
        assert server.Server._watch_fd(state, selector) == old_reader  # type: ignore[arg-type]
        os.write(new_writer, b"x")
        assert [key.fd for key, _ in selector.select(5)] == [old_reader]
        # Rebuilt again, to another number; a connection takes the freed one.
        other_reader, other_writer = os.pipe()
        watch.fd, watch.rebuilds = other_reader, 3
        left, right = socket.socketpair()
        os.dup2(left.fileno(), old_reader)
        connection = socket.socket(fileno=old_reader)
        server.Server._watch_fd(state, selector)  # type: ignore[arg-type]  # as _accept does first
        selector.register(connection, selectors.EVENT_READ)
        right.send(b"y")
        os.write(other_writer, b"z")
        ready = {key.fd for key, _ in selector.select(5)}
        assert ready == {old_reader, other_reader}
        assert selector.get_key(old_reader).fileobj is connection
    finally:
        selector.close()
        for fd in (old_writer, new_writer, other_reader, other_writer):
            os.close(fd)
        for sock in (connection, left, right):
            sock.close()


def test_heading_titles_are_served_as_the_scan_titles_them(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A configured layout titles a page by its opening heading: the served call titles a
    page read again as the listing's rule says, and .obsidian/ made at the root (a change
    to the rule, no page changed) is a rescan that titles every page by its file name."""
    vault = make_vault(
        tmp_path / "v", {".mnemosyne.toml": 'dirs = ["notes"]\n', "notes/a.md": "# Osprey Field Notes\n\nosprey\n"}
    )
    argv = ["wiki", "find", "osprey", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[1] == "notes/a.md — Osprey Field Notes\n".encode()
        (vault / "notes" / "b.md").write_text("# Osprey Nests\n\nosprey\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[1] == "notes/b.md — Osprey Nests\nnotes/a.md — Osprey Field Notes\n".encode()  # shortest first
        (vault / ".obsidian").mkdir()
        with caller_listings() as walks:
            answer = run_cli(capsysbinary, argv)
        assert walks == [str(vault.resolve())]  # told to rescan: listed
        assert answer == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert answer[1] == "notes/a.md — a\nnotes/b.md — b\n".encode()
