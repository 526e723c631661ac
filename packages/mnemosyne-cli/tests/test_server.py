"""``wiki serve``: the lock, the socket dir, the protocol's bounds, the client's fallbacks,
and answers through the server equal to the scan's."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from server_harness import ThreadServer, make_vault, run_cli, served_and_scanned, start_subprocess_server

from mnemosyne_cli import client, protocol, server
from mnemosyne_cli.app import main
from mnemosyne_contract import ExitCode
from mnemosyne_core import inotify
from mnemosyne_core.config import Layout
from mnemosyne_core.index import VaultIndex

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


def test_status_says_pid_pages_and_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    assert main(["wiki", "serve", "--status", "--vault", str(vault)]) == ExitCode.NO_MATCH
    assert capsys.readouterr().out == f"no server is running for {vault}\n"
    with ThreadServer(vault):
        assert main(["wiki", "serve", "--status", "--vault", str(vault)]) == ExitCode.OK
        out = capsys.readouterr().out
    assert out.startswith(f"server: pid {os.getpid()}, 3 pages, ")
    assert " MiB resident, 1 index builds, 1 requests since " in out


def test_info_names_the_running_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    assert main(["wiki", "info", "--vault", str(vault)]) == ExitCode.OK
    assert "\nserver: none ('wiki serve' starts one)\n" in capsys.readouterr().out
    with ThreadServer(vault):
        assert main(["wiki", "info", "--vault", str(vault)]) == ExitCode.OK
        assert f"\nserver: pid {os.getpid()}, 3 pages, " in capsys.readouterr().out
        assert main(["wiki", "info", "--vault", str(vault), "--json"]) == ExitCode.OK
        served = json.loads(capsys.readouterr().out)["server"]
    assert served["pid"] == os.getpid()
    assert served["pages"] == 3
    assert served["resident_bytes"] > 1 << 20


def test_the_socket_dir_must_be_ours_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    with pytest.raises(server.ServerError, match="unsafe XDG_RUNTIME_DIR"):
        server.prepare_socket_dir()
    shared.chmod(0o700)
    (shared / "mnemosyne").mkdir(mode=0o755)
    (shared / "mnemosyne").chmod(0o755)
    with pytest.raises(server.ServerError, match="has mode 755"):
        server.prepare_socket_dir()
    (shared / "mnemosyne").chmod(0o700)
    assert server.prepare_socket_dir() == str(shared / "mnemosyne")


def test_without_xdg_runtime_dir_the_sockets_live_in_the_cache_dir(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert protocol.socket_dir(environ) == str(tmp_path / "cache" / "mnemosyne" / "run")
    path = server.prepare_socket_dir(environ)
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
        "change to inotify; find and recall scan it instead\n"
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

        def status_of(raw: bytes) -> str:
            return protocol.decode_reply(_raw_exchange(path, raw)[4:])[0]

        version = str(protocol.PROTOCOL_VERSION).encode()
        good = f"find\0{real}\x004\0depth=flat\0dir=wiki\0suffix=.md\0dirs-given=0\x0020\0\0github".encode()
        assert status_of(protocol.frame(version + b"\0" + good)) == protocol.STATUS_OK
        for bad in (
            b"garbage",
            b"1\0" + good,  # another version
            b"2\0" + good,
            *(
                version + b"\0" + fields
                for fields in (
                    b"dance\0/v\x000\x0020\0\0x",
                    b"find\0relative\x000\x0020\0\0x",
                    b"find\0/v\x009\x0020\0\0x",  # more layout items than fields
                    b"find\0/v\x00\xc2\xb2\x0020\0\0x",  # a superscript two: isdigit, not a count
                    b"find\0/v\x001\0noequals\x0020\0\0x",
                    b"find\0/v\x000\x0020\0\0x",  # no layout
                    b"find\0/v\x004\0depth=deep\0dir=wiki\0suffix=.md\0dirs-given=0\x0020\0\0x",
                    b"find\0/v\x004\0depth=flat\0dir=wiki\0suffix=.md\0dirs-given=0\x00-1\0\0x",
                    b"find\0/v\x004\0depth=flat\0dir=wiki\0suffix=.md\0dirs-given=0\x0020\0everything\0x",
                    b"find\0/v\x004\0depth=flat\0dir=wiki\0suffix=.md\0dirs-given=0\x0020\0",  # no term
                    b"status\0extra",
                )
            ),
            version,
            b"\xff\xfe" * 10,
        ):
            assert status_of(protocol.frame(bad)) == protocol.STATUS_ERROR, bad
        too_long = (protocol.MAX_REQUEST_BYTES + 1).to_bytes(4, "big") + b"x" * 100
        assert status_of(too_long) == protocol.STATUS_ERROR  # refused unread
        assert _raw_exchange(path, b"\0\0") == b""  # a peer that stops mid-frame
        served, scanned = served_and_scanned(capsysbinary, running, ["wiki", "recall", "github", "--vault", str(vault)])
        assert served == scanned


@pytest.mark.parametrize(
    ("layout", "dirs_given"),
    [
        (Layout(("atlas", "hades")), False),
        (Layout(("wiki",)), True),
        (Layout((".",), "tree", (".md", ".markdown", ".mdx")), False),
        (Layout(("docs/en", "n o"), "tree", (".mdx",), ("drafts/", "*.tmp.md", "!keep=me.md")), True),
    ],
)
def test_a_layout_crosses_the_socket_whole(layout: Layout, dirs_given: bool) -> None:
    items = protocol.layout_items(layout, dirs_given)
    request = protocol.Request(protocol.OP_FIND, "/v", items, 20, False, ("x",))
    decoded = protocol.decode_request(request.encode())
    assert decoded == request
    assert protocol.decode_layout(decoded.layout) == (layout, dirs_given)


@pytest.mark.parametrize(
    "items",
    [
        (),
        (("kind", "flat"), ("dir", "wiki"), ("dirs-given", "0")),  # the old shape
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".md")),  # no dirs-given
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "yes")),
        (("depth", "deep"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("suffix", ".md"), ("dirs-given", "0")),  # no dir
        (("depth", "flat"), ("dir", "wiki"), ("dirs-given", "0")),  # no suffix
        (("depth", "flat"), ("dir", "wiki"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "../etc"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "/etc"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", ".hidden"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "wiki"), ("suffix", "md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".m d"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".md"), ("exclude", "a\nb"), ("dirs-given", "0")),
        (("depth", "flat"), ("suffix", ".md"), ("dir", "wiki"), ("dirs-given", "0")),  # out of order
        (("dir", "wiki"), ("depth", "flat"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("depth", "tree"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "0")),
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "0"), ("dirs-given", "1")),
        (("depth", "flat"), ("dir", "wiki"), ("suffix", ".md"), ("dirs-given", "0"), ("color", "red")),
    ],
)
def test_the_decoder_refuses_a_layout_it_cannot_take_whole(items: tuple[tuple[str, str], ...]) -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_layout(items)
    request = protocol.Request(protocol.OP_FIND, "/v", items, 20, False, ("x",))
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_request(request.encode())


def test_the_reply_decoder_refuses_what_it_does_not_understand() -> None:
    import marshal

    assert protocol.decode_reply(protocol.encode_reply(protocol.STATUS_OK, (1, 2))) == ("ok", (1, 2))
    for bad in (
        b"",
        b"junk",
        marshal.dumps((1, "ok", None)),  # another version
        marshal.dumps((protocol.PROTOCOL_VERSION, "maybe", None)),
        marshal.dumps([protocol.PROTOCOL_VERSION, "ok", None]),
        marshal.dumps((protocol.PROTOCOL_VERSION, "ok")),
    ):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode_reply(bad)
    fields, slots = protocol._result_slots(), protocol._match_slots()
    values = tuple("/v" if field == "vault" else 0 for field in fields)
    assert protocol.find_result((fields, values, (), slots, (), (), None, None))[0].vault == "/v"
    left_out = (("suffix", "n o/Note.MD"), ("nested", "wiki/sub/a.md"))
    decoded = protocol.find_result((fields, values, (), slots, (), (), None, left_out))[0]
    assert decoded.left_out == list(left_out)
    for body in (
        None,
        (),
        ("x",) * 8,
        (fields, values, (), slots, (), (), None),  # a body of the version before
        (("total",), (1,), (), slots, (), (), None, None),  # other fields
        (fields, tuple(None for _ in fields), (), slots, (), (), None, None),  # not numbers
        (fields, values, (), slots, (("path",),), (), None, None),  # a match short of fields
        (fields, values, (), slots, (), (("p", "code", "detail", "yes"),), None, None),  # a bad diagnostic
        (fields, values, (), slots, (), (), (1, 2, 3), None),  # a bad identity
        (fields, values, (), slots, (), (), None, [("suffix", "a.MD")]),  # files left out: not a tuple
        (fields, values, (), slots, (), (), None, (("other", "a.MD"),)),  # an unknown kind
        (fields, values, (), slots, (), (), None, (("suffix", "d.x/README"),)),  # a suffix-less name
        (fields, values, (), slots, (), (), None, (("suffix",),)),  # short of a path
        (fields, values, (), slots, (), (), None, (("suffix", 3),)),  # a path that is not text
    ):
        with pytest.raises(protocol.ProtocolError):
            protocol.find_result(body)


# --- fallbacks ---


def test_a_server_that_never_answers_costs_at_most_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    expected = run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault), "--no-server"])
    path = protocol.socket_path(str(vault.resolve()))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(path)
    stuck.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(stuck.accept()[0]), daemon=True).start()
    monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "0.3")
    try:
        began = time.monotonic()
        assert run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault)]) == expected
        assert time.monotonic() - began < 0.3 + 1.0
        assert accepted  # it did connect, and gave up waiting
    finally:
        stuck.close()
        for connection in accepted:
            connection.close()


def test_a_server_that_hangs_up_mid_query_means_a_scan(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    expected = run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", str(vault), "--no-server"])
    path = protocol.socket_path(str(vault.resolve()))
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
    expected = run_cli(capsysbinary, [*argv, "--no-server"])
    process = start_subprocess_server(vault)
    try:
        assert run_cli(capsysbinary, argv) == expected
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        assert os.path.exists(protocol.socket_path(str(vault.resolve())))  # left behind
        (vault / "wiki" / "delta.md").write_text("---\ntitle: Delta auth\n---\n", encoding="utf-8")
        expected = run_cli(capsysbinary, [*argv, "--no-server"])
        assert run_cli(capsysbinary, argv) == expected
        process = start_subprocess_server(vault)
        status = client.status(str(vault.resolve()))
        assert status is not None
        assert (status.pid, status.pages) == (process.pid, 4)
        assert run_cli(capsysbinary, argv) == expected
    finally:
        process.terminate()
        assert process.wait(10) == 0
    assert not os.path.exists(protocol.socket_path(str(vault.resolve())))  # SIGTERM cleans up


def test_an_overflowed_queue_rebuilds_before_answering(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "recall", "auth", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert running.index.watcher is not None
        # A real overflow needs more than max_queued_events (16384) unread events; the
        # handling is the same for an injected one.
        running.index.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))
        (vault / "wiki" / "beta.md").write_text("---\ntitle: Beta\n---\n", encoding="utf-8")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert running.index.rebuilds == 2


def test_another_vault_or_other_dirs_are_scanned_not_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, "notes/n.md": "---\ntitle: github notes\n---\n"})
    with ThreadServer(vault) as running:
        argv = ["wiki", "recall", "github", "--vault", str(vault), "--dir", "notes"]
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-server"])
        assert running.answered == 0
        assert running.requests == 1  # asked, and told to scan


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
    with ThreadServer(vault) as running:
        before = running.answered
        code, _out, _err = run_cli(capsysbinary, ["wiki", "recall", "github", "--vault", "v", "--memory-dir", "mem"])
        assert code == 0
        assert running.answered == before + 1
    logs = list((tmp_path / "mem").glob("*/log.md"))
    assert len(logs) == 1
    assert "- **Query**: github\n" in logs[0].read_text(encoding="utf-8")


def test_the_request_carries_the_query_and_nothing_of_the_caller() -> None:
    layout = protocol.layout_items(Layout(("atlas", "hades")), True)
    request = protocol.Request(protocol.OP_FIND, "/v", layout, 20, True, ("mastra", "slack"))
    payload = request.encode()
    assert protocol.decode_request(payload) == request
    assert payload.split(b"\0") == [
        str(protocol.PROTOCOL_VERSION).encode(),
        b"find",
        b"/v",
        b"5",
        b"depth=flat",
        b"dir=atlas",
        b"dir=hades",
        b"suffix=.md",
        b"dirs-given=1",
        b"20",
        b"content",
        b"mastra",
        b"slack",
    ]
    assert struct.unpack(">I", protocol.frame(payload)[:4])[0] == len(payload)
    assert protocol.decode_request(protocol.Request(protocol.OP_STATUS).encode()).op == protocol.OP_STATUS


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
        served = modules()
        assert running.answered == 1
    heavy = {
        "typing",
        "json",
        "argparse",
        "socket",
        "selectors",
        "tomllib",
        "mnemosyne_cli.server",
        "mnemosyne_cli.app",
    }
    assert sorted(served & heavy) == []


def test_an_index_sees_a_change_made_just_before_the_query(tmp_path: Path) -> None:
    """The kernel queues the event before the write returns: no sleep is needed."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    index = VaultIndex(str(vault.resolve()))
    index.rebuild()
    try:
        for round_number in range(50):
            (vault / "wiki" / "alpha.md").write_text(f"---\ntitle: round{round_number}\n---\n", encoding="utf-8")
            result = index.recall(str(vault), f"round{round_number}")
            assert [entry.path for entry in result.matches] == ["wiki/alpha.md"]
    finally:
        index.close()


def test_an_entry_that_cannot_be_re_classified_rebuilds_before_the_query_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An lstat failing on a changed entry loses its state: the same query rebuilds, rather
    than answering without the page."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    index = VaultIndex(str(vault.resolve()))
    index.rebuild()
    page = vault / "wiki" / "alpha.md"
    real_lstat = os.lstat
    failures = [str(page.resolve())]

    def failing_lstat(path: str) -> os.stat_result:
        if failures and str(path) == failures[0]:
            failures.pop()
            raise OSError(5, "Input/output error", str(path))
        return real_lstat(path)

    try:
        page.write_text("---\ntitle: Kestrel\n---\n", encoding="utf-8")
        monkeypatch.setattr(os, "lstat", failing_lstat)
        result = index.search(str(vault), ["kestrel"])
        assert failures == []
        assert [match.path for match in result.matches] == ["wiki/alpha.md"]
        assert index.rebuilds == 2
    finally:
        index.close()


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
]


@pytest.mark.parametrize("vault_name", ["aion", "edge", "known-item", "harness"])
def test_find_and_recall_through_the_server_print_what_the_scan_prints(
    vault_name: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    import shutil

    vault = tmp_path / vault_name
    shutil.copytree(FIXTURES / vault_name, vault, symlinks=True)
    with ThreadServer(vault) as running:
        for call in [*FIND_CALLS, ["--", "-v"]]:
            argv = ["wiki", "find", *call, "--vault", str(vault)]
            if call[0] == "--":
                argv = ["wiki", "find", "--vault", str(vault), *call]
                assert run_cli(capsysbinary, argv)[0] in (0, 1)
                continue
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned, argv
        for topic in (["github", "auth"], ["agent"], ["zyzzyva"]):
            argv = ["wiki", "recall", *topic, "--vault", str(vault)]
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned, topic


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
            assert "warning" in served[2]
            assert ("\x1b[" in served[2]) == ("NO_COLOR" not in environment)


def test_a_page_written_through_another_hard_link_is_seen(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A write through a name outside the watched dirs raises no event on them: such pages
    are re-read on every call."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    outside = tmp_path / "elsewhere.md"
    os.link(vault / "wiki" / "gamma.md", outside)
    argv = ["wiki", "find", "zebra", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[0] == 1
        with outside.open("ab") as page:
            page.write(b"zebra\n")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        assert served[1] == b"wiki/gamma.md \xe2\x80\x94 gamma\n"


def test_a_symlinked_page_re_read_unchanged_keeps_its_answers_and_a_change_is_seen(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Symlinked pages are re-read on every call; one that reads as before keeps the index's
    snapshot (no rebuild of it per call), one whose target changed is answered anew."""
    vault = make_vault(tmp_path / "v", {**HARNESS_PAGES, "notes/delta.md": "---\ntitle: Delta\ntags: [github]\n---\n"})
    os.symlink("../notes/delta.md", vault / "wiki" / "delta.md")
    finds = ["wiki", "find", "delta", "--vault", str(vault)]
    recalls = ["wiki", "recall", "github", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        for argv in (finds, recalls, finds):
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
        assert served[1] == b"wiki/delta.md \xe2\x80\x94 Delta\n"
        snapshot = running.index._snapshot
        assert snapshot is not None
        assert running.index.search(str(vault), ["delta"]).total == 1
        assert running.index._snapshot is snapshot
        (vault / "notes" / "delta.md").write_text("---\ntitle: Epsilon\ntags: [gitlab]\n---\n", encoding="utf-8")
        for argv in (finds, recalls):
            served, scanned = served_and_scanned(capsysbinary, running, argv)
            assert served == scanned
        assert served[1].count(b"delta") == 0
        assert running.index._snapshot is not snapshot


def test_a_vault_replaced_at_the_same_path_is_indexed_anew(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    argv = ["wiki", "recall", "github", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned
        os.rename(vault, tmp_path / "old")
        make_vault(vault, {**HARNESS_PAGES, "wiki/alpha.md": "---\ntitle: nothing\n---\n"})
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-server"])
        assert running.index.rebuilds == 2


def test_a_real_queue_overflow_is_seen_and_rebuilds(tmp_path: Path) -> None:
    """More unread events than max_queued_events: the kernel drops the rest and queues
    IN_Q_OVERFLOW, and the index starts over before answering."""
    vault = make_vault(tmp_path / "v", HARNESS_PAGES)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text(encoding="ascii"))
    index = VaultIndex(str(vault.resolve()))
    index.rebuild()
    try:
        pages = [vault / "wiki" / "alpha.md", vault / "wiki" / "beta.md"]
        for turn in range(limit + 10):
            # Alternating pages: the kernel merges an event equal to the last one queued.
            os.utime(pages[turn % 2], ns=(turn, turn))
        (vault / "wiki" / "alpha.md").write_text("---\ntitle: after the flood\n---\n", encoding="utf-8")
        result = index.recall(str(vault), "flood")
        assert [entry.path for entry in result.matches] == ["wiki/alpha.md"]
        assert index.rebuilds == 2  # page events alone re-read pages; only the overflow rebuilds
    finally:
        index.close()
