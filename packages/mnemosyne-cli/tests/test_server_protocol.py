"""The server's protocol: strict decoding that no bytes can crash, fuzzed; and the import
direction that keeps the server away from the command line."""

from __future__ import annotations

import ast
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_examples import examples
from server_harness import ThreadServer, short_runtime_dir

from mnemosyne_cli import client, protocol
from mnemosyne_cli.environment import Environment
from mnemosyne_cli.server import Server
from mnemosyne_core.changes import VaultWatch

CLI_PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mnemosyne_cli"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Server:
    vault = tmp_path_factory.mktemp("fuzz") / "v"
    (vault / "atlas").mkdir(parents=True)
    (vault / "atlas" / "page.md").write_text("---\ntitle: A page\n---\nalpha beta\n", encoding="utf-8")
    server = Server(VaultWatch(str(vault.resolve())), Environment())
    server.watch.rebuild()
    return server


def _valid(server: Server) -> bytes:
    return protocol.Request(protocol.OP_CHANGES, server.watch.vault, server.watch.token()).encode()


def _check_reply(reply: bytes) -> str:
    """A reply of this version: an error says why in words, an answer is a changes or a
    status body, as its decoder takes it."""
    status, body = protocol.decode_reply(reply)
    assert status in (protocol.STATUS_OK, protocol.STATUS_ERROR)
    if status == protocol.STATUS_ERROR:
        assert isinstance(body, str)
        assert body
    else:
        try:
            protocol.decode_changes(body)
        except protocol.ProtocolError:
            protocol.decode_status(body)
    return status


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.binary(max_size=300))
def test_any_bytes_get_a_reply_never_an_exception(served: Server, payload: bytes) -> None:
    _check_reply(served.reply(payload))


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cut=st.integers(0, 200),
    splice=st.sampled_from(
        [
            "",
            "\0",
            "²",
            "٣",
            "-1",
            "99999999999",
            "=",
            "\udcff",
            ":",
            "0:0",
            "changes",
            "status",
            "/",
            "relative",
            "x" * 70,
            " ",
        ]
    ),
    drop=st.integers(0, 12),
)
def test_requests_close_to_valid_get_a_reply_never_an_exception(
    served: Server, cut: int, splice: str, drop: int
) -> None:
    fields = _valid(served).decode("utf-8").split("\0")
    position = cut % (len(fields) + 1)
    mutated = [*fields[:position], splice, *fields[position + drop % 3 :]]
    payload = "\0".join(mutated).encode("utf-8", "surrogateescape")
    _check_reply(served.reply(payload))


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(st.binary(max_size=64), min_size=1, max_size=4), close_early=st.booleans())
def test_any_bytes_on_the_socket_get_an_error_reply_or_a_closed_connection(
    frames: list[bytes], close_early: bool, socket_server: tuple[Server, dict[str, str]]
) -> None:
    running, environ = socket_server
    data = b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)  # a bound: the server ends a silent peer at its 0.5 s deadline
        sock.connect(running.socket_path)
        try:
            for chunk in frames:
                sock.sendall(chunk)
            if close_early:
                sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(1 << 16):
                data += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered a bad frame and closed: what it sent still counts
    if data:
        assert protocol.frame_length(data) == len(data) - 4
        _check_reply(data[4:])
    # The server is still there and still answers: asked with a peer deadline no loaded
    # machine reaches, so only a server that does not answer fails here, not a slow turn
    # of its thread (the fuzzed peers keep the short one, which ends the silent ones).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("mnemosyne_cli.server.CONNECTION_DEADLINE", 3600.0)
        changes = client.ServerChanges(Environment(environ))
        token = running.watch.token()
        assert changes(running.watch.vault, token) == (token, ())
        assert changes.answered


@pytest.fixture(scope="module")
def socket_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    vault = tmp_path_factory.mktemp("socketfuzz") / "v"
    (vault / "atlas").mkdir(parents=True)
    (vault / "atlas" / "page.md").write_text("alpha\n", encoding="utf-8")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr("mnemosyne_cli.server.CONNECTION_DEADLINE", 0.5)
    try:
        with short_runtime_dir(monkeypatch) as run, ThreadServer(vault) as running:
            yield running, {"XDG_RUNTIME_DIR": str(run), client.TIMEOUT_ENV_VAR: "10"}
    finally:
        monkeypatch.undo()


# --- which module may import which ---


def _module_name(path: Path) -> str:
    parts = path.relative_to(CLI_PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The mnemosyne_cli modules ``path`` imports anywhere (inside functions too): ``from
    P import name`` counts as P.name when that is a module, else as P."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mnemosyne_cli":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "mnemosyne_cli"}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            found.add("importlib")  # a dynamic import hides an edge: not allowed at all
    return found


def _graph() -> dict[str, set[str]]:
    paths = list(CLI_PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imports(path, modules) for path in paths}


def test_the_server_imports_only_the_core_and_the_protocol() -> None:
    graph = _graph()
    # Each takes the call's Environment, a record that imports nothing of the CLI.
    assert graph["mnemosyne_cli.environment"] == set()
    assert graph["mnemosyne_cli.server"] == {"mnemosyne_cli.protocol", "mnemosyne_cli.environment"}
    assert graph["mnemosyne_cli.protocol"] == {"mnemosyne_cli.environment"}
    # The client: the protocol, and the auto-start it falls back on when no server answers.
    assert graph["mnemosyne_cli.client"] == {
        "mnemosyne_cli.protocol",
        "mnemosyne_cli.autostart",
        "mnemosyne_cli.environment",
    }
    assert "mnemosyne_cli.client" not in graph["mnemosyne_cli.autostart"]


def test_no_import_cycle_is_left_in_the_cli_package() -> None:
    graph = _graph()
    assert not any("importlib" in edges for edges in graph.values())
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            raise AssertionError(" -> ".join((*path[path.index(module) :], module)))
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            if imported in graph:
                visit(imported, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
