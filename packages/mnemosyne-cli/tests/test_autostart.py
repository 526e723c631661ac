"""Auto-start: the first find or recall starts ``wiki serve`` for the vault (with ``[serve]
auto = true``, or without the key on a vault of ``autostart.AUTO_START_PAGES``), detached,
and answers by its scan; one server however many calls arrive at once; none below the size,
with ``auto = false``, ``--no-server`` or MNEMOSYNE_NO_SERVER; the server's exit when idle;
the settings' errors; what ``wiki info`` says.

Every server a test starts is stopped and reaped before the test ends (``servers``): the
test process is made a child subreaper, so a server orphaned by its double fork becomes
this process's child, and every wait is bounded.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import server_harness

from mnemosyne_cli import autostart, client, protocol
from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import load_schema

PAGES = {
    "wiki/alpha.md": "---\ntitle: Alpha auth\nupdated: 2026-01-02\n---\nbody\n",
    "wiki/beta.md": "---\ntitle: Beta\nupdated: 2026-03-01\n---\nalpha in the body\n",
}
AUTO_CONFIG = 'dirs = ["wiki"]\n\n[serve]\nauto = true\n'
#: How long a test waits for a server to appear or go before it fails: an upper bound on
#: a state awaited (a pid, a log line, a status answer), never the thing tested.
WAIT_SECONDS = 120.0
PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(autouse=True)
def servers(tmp_path: Path, runtime_dir: Path) -> Iterator[None]:
    """Adopt the servers this test's calls start, and stop and reap them all at its end."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, os.strerror(ctypes.get_errno())
    try:
        yield
    finally:
        for pid in dict.fromkeys(serve_pids(under=tmp_path) + adopted(runtime_dir)):
            stop(pid)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def adopted(runtime_dir: Path) -> list[int]:
    """The processes auto-start records name (stand-ins for the server included) that are
    still this process's children."""
    pids = []
    for record in (runtime_dir / "mnemosyne").glob("*.autostart"):
        fields = record.read_text(encoding="ascii").split()
        if fields:
            try:
                if os.waitpid(int(fields[0]), os.WNOHANG)[0] == 0:
                    pids.append(int(fields[0]))
            except ChildProcessError:
                pass  # not ours, or already reaped
    return pids


def make_vault(root: Path, config: str | None = AUTO_CONFIG) -> Path:
    """The PAGES vault at ``root``, with ``config`` as its .mnemosyne.toml (None: none)."""
    return server_harness.make_vault(root, PAGES if config is None else {**PAGES, ".mnemosyne.toml": config})


def serve_pids(vault: Path | None = None, under: Path | None = None) -> list[int]:
    """The live ``wiki serve`` processes of ``vault``, or of any vault ``under`` a dir;
    zombies excluded."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state == b"Z" or b"serve" not in words or b"--vault" not in words:
            continue
        served = words[words.index(b"--vault") + 1].decode()
        if served == str(vault) or (under is not None and served.startswith(f"{under}/")):
            found.append(int(entry))
    return found


def stop(pid: int) -> None:
    """SIGTERM, then SIGKILL after WAIT_SECONDS; reaped when it is our child."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    assert wait_gone(pid), f"server {pid} ignored SIGTERM"


def wait_gone(pid: int, seconds: float = WAIT_SECONDS) -> bool:
    """Wait until ``pid`` has exited (reaping it if it is our child); False on timeout,
    after killing it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            if not Path(f"/proc/{pid}").exists() or b"Z" in Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")")[-1][:3]:
                return True
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    return False


def wait_for_server(vault: Path) -> client.Status:
    """The vault's server's status once it answers."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        answer = client.status(str(vault), Environment())
        if answer is not None:
            return answer
        time.sleep(0.02)
    raise AssertionError(f"no server answered for {vault} in {WAIT_SECONDS} s")


def recorded_pid(vault: Path) -> int:
    """The pid in the vault's auto-start record, once there: the started process writes it
    itself, between fork and exec, so it may come after the call that started it returned."""
    path = Path(autostart.record_path(str(vault), Environment()))
    deadline = time.monotonic() + WAIT_SECONDS
    while not (fields := path.read_text(encoding="ascii").split()):
        assert time.monotonic() < deadline, f"no pid in {path} after {WAIT_SECONDS} s"
        time.sleep(0.02)
    return int(fields[0])


def wait_for_log(vault: Path, start: str) -> list[str]:
    """The auto-start log's lines once one starts with ``start``."""
    path = Path(autostart.log_path(str(vault), Environment()))
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        lines = path.read_text(encoding="utf-8").splitlines()
        if any(line.startswith(start) for line in lines):
            return lines
        assert time.monotonic() < deadline, lines
        time.sleep(0.02)


def entry_point() -> list[str]:
    """The installed ``mnemosyne`` script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).parent / "mnemosyne"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mnemosyne_cli"]


def run_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- the first calls ---


def test_concurrent_first_calls_start_exactly_one_server_and_later_calls_are_its(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    find = [*entry_point(), "wiki", "find", "alpha", "--vault", str(vault)]
    scanned = subprocess.run([*find, "--no-server"], capture_output=True, text=True, timeout=60, check=False)
    assert (scanned.returncode, scanned.stdout, scanned.stderr) == (
        0,
        "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n",
        "",
    )
    # --no-server never starts one: not even its record, which a spawn creates before it forks.
    assert not Path(autostart.record_path(str(vault), Environment())).exists()
    assert serve_pids(vault) == []

    calls = [subprocess.Popen(find, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    # communicate() waits for EOF on both pipes: a server holding them would hang it here.
    answers = [(call.communicate(timeout=60), call.returncode) for call in calls]
    assert answers == [((scanned.stdout, ""), 0)] * len(calls)

    status = wait_for_server(vault)
    assert serve_pids(vault) == [status.pid]
    record = Path(autostart.record_path(str(vault), Environment())).read_text(encoding="ascii").split()
    assert int(record[0]) == status.pid
    log = wait_for_log(vault, "mnemosyne serve: watching ")
    assert len(log) == 2, log  # no second server's "already running" or anything else
    assert log[0].startswith(f"mnemosyne: auto-started for {vault} at ")
    assert log[1].startswith(f"mnemosyne serve: watching {vault}: 1 dirs in ")

    later = subprocess.run(find, capture_output=True, text=True, timeout=60, check=False)
    assert (later.returncode, later.stdout, later.stderr) == (0, scanned.stdout, "")
    assert wait_for_server(vault).requests > status.requests  # the server answered it
    recall = subprocess.run(
        [*entry_point(), "wiki", "recall", "alpha", "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "MNEMOSYNE_MEMORY_DIR": str(tmp_path / "memory")},
    )
    assert recall.returncode == 0, recall.stderr
    assert serve_pids(vault) == [status.pid]


def test_a_first_recall_starts_the_server_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = make_vault(tmp_path / "v")
    argv = ["wiki", "recall", "alpha", "--vault", str(vault), "--memory-dir", str(tmp_path / "memory")]
    scanned = run_cli(capsys, [*argv, "--no-server"])
    assert not Path(autostart.record_path(str(vault), Environment())).exists()  # created before any fork
    assert serve_pids(vault) == []
    assert run_cli(capsys, argv)[:2] == scanned[:2]
    # The server is waited for before its processes are listed: it may still be starting.
    server_pid = wait_for_server(vault).pid
    assert serve_pids(vault) == [server_pid]


def test_a_first_find_on_a_tree_starts_a_server_that_serves_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vault searched as a whole tree (no dirs: the zero-config root) auto-starts a server
    like any other, and the calls after it are answered by it, nested pages included."""
    vault = make_vault(tmp_path / "v", 'depth = "tree"\n\n[serve]\nauto = true\n')
    (vault / "wiki" / "deep er").mkdir()
    (vault / "wiki" / "deep er" / "gamma.mdx").write_text("alpha nested\n", encoding="utf-8")
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    scanned = run_cli(capsys, [*argv, "--no-server"])
    assert scanned == (0, "wiki/alpha.md — Alpha auth\nwiki/deep er/gamma.mdx — gamma\nwiki/beta.md — Beta\n", "")
    assert run_cli(capsys, argv) == scanned
    status = wait_for_server(vault)
    assert (status.dirs, status.failure) == (3, "")  # the root, wiki and wiki/deep er
    assert run_cli(capsys, argv) == scanned
    assert wait_for_server(vault).requests > status.requests  # the server answered it


@pytest.mark.parametrize(
    "config",
    [
        None,
        'dirs = ["wiki"]\n',
        'dirs = ["wiki"]\n[serve]\nauto = false\n',
        'dirs = ["wiki"]\n[serve]\n',
    ],
)
def test_a_vault_below_the_size_without_auto_true_never_gets_a_server(
    tmp_path: Path, runtime_dir: Path, capsys: pytest.CaptureFixture[str], config: str | None
) -> None:
    """Below AUTO_START_PAGES nothing changes: no process, nothing in the runtime dir."""
    vault = make_vault(tmp_path / "v", config)
    where = ["--vault", str(vault)] + (["--dir", "wiki"] if config is None else [])
    argv = ["wiki", "find", "alpha", *where]
    code, out, err = run_cli(capsys, argv)
    assert (code, out, err) == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    memory = ["--memory-dir", str(tmp_path / "memory")]
    assert run_cli(capsys, ["wiki", "recall", "alpha", *where, *memory])[0] == 0
    plain = subprocess.run(
        [*entry_point(), *argv], capture_output=True, text=True, timeout=60, check=False, cwd=str(vault)
    )
    assert (plain.returncode, plain.stdout, plain.stderr) == (code, out, err)
    # No spawn: nothing in the runtime dir (no lock, log, record or socket), no process.
    assert list(runtime_dir.iterdir()) == []
    assert serve_pids(vault) == []


def test_a_vault_owned_by_another_user_never_gets_a_server(
    tmp_path: Path, runtime_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server we started would watch another user's vault with our inotify watches (and
    our limit): auto-start leaves such a vault to the scan, whatever its config says."""
    vault = make_vault(tmp_path / "v")
    for path in [vault, *vault.rglob("*")]:
        os.chown(path, 65534, 65534)
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    scanned = run_cli(capsys, [*argv, "--no-cache"])
    assert scanned == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    for _ in range(2):
        assert run_cli(capsys, argv) == scanned
    assert list(runtime_dir.iterdir()) == []  # no lock, record, log or socket: nothing spawned
    assert serve_pids(vault) == []
    os.chown(vault, os.geteuid(), os.getegid())  # ours again: the setting is followed
    assert run_cli(capsys, argv) == scanned
    assert wait_for_server(vault).pid == recorded_pid(vault)


def test_a_vault_of_the_threshold_s_size_gets_a_server_and_one_page_fewer_none(
    tmp_path: Path, runtime_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``[serve] auto``, the listing's size decides: the threshold is lowered to
    3 pages here, a vault of 3,000 more pages than a test should write."""
    monkeypatch.setattr(autostart, "AUTO_START_PAGES", 3)
    vault = make_vault(tmp_path / "v", 'dirs = ["wiki"]\n')
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    two = (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    assert run_cli(capsys, argv) == two
    assert list(runtime_dir.iterdir()) == []
    assert serve_pids(vault) == []
    info = ["wiki", "info", "--vault", str(vault)]
    assert (
        "\nserver: none (auto-start is off: the vault lists 2 pages, fewer than 3; "
        "'wiki serve' or [serve] auto = true starts one)\n"
    ) in run_cli(capsys, info)[1]

    (vault / "wiki" / "gamma.md").write_text("no match here\n", encoding="utf-8")
    assert (
        "\nserver: none (auto-start is on: the vault lists 3 pages, at least 3; a find or recall starts one)\n"
        in (run_cli(capsys, info)[1])
    )
    assert run_cli(capsys, argv) == two
    status = wait_for_server(vault)
    assert status.pid == recorded_pid(vault)
    assert serve_pids(vault) == [status.pid]
    assert run_cli(capsys, argv) == two
    assert wait_for_server(vault).requests > status.requests  # the server answered it


@pytest.mark.parametrize("off", ["auto = false", "--no-server", "MNEMOSYNE_NO_SERVER"])
def test_auto_false_no_server_and_the_variable_keep_a_big_vault_without_a_server(
    tmp_path: Path,
    runtime_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    off: str,
) -> None:
    monkeypatch.setattr(autostart, "AUTO_START_PAGES", 1)
    vault = make_vault(
        tmp_path / "v", 'dirs = ["wiki"]\n' + ("[serve]\nauto = false\n" if off == "auto = false" else "")
    )
    flags = ["--no-server"] if off == "--no-server" else []
    if off == autostart.NO_SERVER_ENV_VAR:
        monkeypatch.setenv(off, "1")
    find = run_cli(capsys, ["wiki", "find", "alpha", "--vault", str(vault), *flags])
    assert find == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    memory = ["--memory-dir", str(tmp_path / "memory")]
    assert run_cli(capsys, ["wiki", "recall", "alpha", "--vault", str(vault), *memory, *flags])[0] == 0
    assert list(runtime_dir.iterdir()) == []
    assert serve_pids(vault) == []
    reason = {"auto = false": "[serve] auto = false", "--no-server": None, autostart.NO_SERVER_ENV_VAR: f"{off} is set"}
    if reason[off] is not None:
        expected = (
            f"\nserver: none (auto-start is off: {reason[off]}; 'wiki serve' or [serve] auto = true starts one)\n"
        )
        assert expected in run_cli(capsys, ["wiki", "info", "--vault", str(vault)])[1]


def test_the_variable_asks_no_running_server_either(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(tmp_path / "v")
    process = server_harness.start_subprocess_server(vault)
    try:
        monkeypatch.setenv(autostart.NO_SERVER_ENV_VAR, "1")
        before = wait_for_server(vault).requests
        argv = ["wiki", "find", "alpha", "--vault", str(vault)]
        for _ in range(2):
            assert run_cli(capsys, argv) == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
        # Only the status requests: the one counted in ``before`` and the one asking now.
        assert wait_for_server(vault).requests == before + 1
    finally:
        process.terminate()
        process.wait(WAIT_SECONDS)


# --- the idle exit ---


def test_an_auto_started_server_exits_after_its_idle_minutes_and_removes_its_socket(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v", 'dirs = ["wiki"]\n\n[serve]\nauto = true\nidle_minutes = 0.02\n')
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    assert run_cli(capsys, argv) == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    pid = recorded_pid(vault)
    # The state waited on is the process's end; 1.2 s of idle time is all the test needs.
    assert wait_gone(pid), f"server {pid} was still running after {WAIT_SECONDS} s"
    log = Path(autostart.log_path(str(vault), Environment())).read_text(encoding="utf-8").splitlines()
    assert log[1].startswith(f"mnemosyne serve: watching {vault}: 1 dirs in ")
    assert log[1].endswith("; exits after 0.02 minutes without a call")
    assert log[2:] == ["mnemosyne serve: no call for 0.02 minutes: exiting"]
    assert not Path(protocol.socket_path(str(vault), Environment())).exists()
    assert client.status(str(vault), Environment()) is None


def test_a_call_keeps_a_server_from_its_idle_exit_and_a_status_request_does_not(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    with server_harness.ThreadServer(vault) as running:
        running.idle_seconds = 3600.0
        changes = client.ServerChanges(Environment())
        before = running.last_call
        assert client.status(str(vault), Environment()) is not None
        assert running.last_call == before
        assert changes(str(vault), None) is not None
        assert running.last_call > before


def test_a_server_with_no_idle_time_left_returns_and_says_why(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    threaded = server_harness.ThreadServer(vault)
    threaded.server.idle_seconds = 0.0
    with threaded as running:
        assert threaded.thread is not None
        threaded.thread.join(WAIT_SECONDS)
        assert not threaded.thread.is_alive()
        assert running.exited == "no call for 0 minutes"
        assert threaded.log.getvalue().endswith("mnemosyne serve: no call for 0 minutes: exiting\n")


# --- a server that cannot start, or is slow to ---


@pytest.mark.parametrize(
    ("failing", "logged"),
    [
        (
            [sys.executable, "-c", "import sys; sys.stderr.write('cannot serve: a test says so\\n'); sys.exit(3)"],
            "cannot serve: a test says so",
        ),
        (["/nonexistent/python"], "mnemosyne: cannot run /nonexistent/python: No such file or directory"),
    ],
)
def test_a_server_that_cannot_start_changes_no_answer_and_is_not_retried_at_once(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    failing: list[str],
    logged: str,
) -> None:
    vault = make_vault(tmp_path / "v")
    monkeypatch.setattr(autostart, "server_command", lambda _vault: failing)
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    scanned = run_cli(capsys, [*argv, "--no-server"])
    assert run_cli(capsys, argv) == scanned
    record_path = Path(autostart.record_path(str(vault), Environment()))
    pid = recorded_pid(vault)
    assert wait_gone(pid)
    log = autostart.log_path(str(vault), Environment())
    assert Path(log).read_text(encoding="utf-8").splitlines()[1:] == [logged]
    record = record_path.read_bytes()
    assert run_cli(capsys, argv) == scanned
    assert record_path.read_bytes() == record  # no second try within RETRY_AFTER_SECONDS
    code, out, _ = run_cli(capsys, ["wiki", "info", "--vault", str(vault)])
    assert code == 0
    assert (
        "server: none (auto-start is on: [serve] auto = true; a find or recall starts one; "
        f"the last one's log: {log})\n" in out
    )


def test_a_call_never_waits_for_the_server_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(tmp_path / "v")
    slow = [sys.executable, "-c", "import sys, time; print('ready', file=sys.stderr, flush=True); time.sleep(120)"]
    monkeypatch.setattr(autostart, "server_command", lambda _vault: slow)
    code, out, err = run_cli(capsys, ["wiki", "find", "alpha", "--vault", str(vault)])
    assert (code, out, err) == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
    pid = recorded_pid(vault)
    wait_for_log(vault, "ready")  # past its own start-up's files
    # Still running after the call's answer, so the call did not wait for it to end; no
    # clock is read (the stand-in's 120 s only bound its life should the kill below fail).
    assert Path(f"/proc/{pid}").exists()
    # The stand-in runs in a session of its own (not as its leader, so it can never take
    # a terminal), reading /dev/null, writing the log, holding the spawn lock and nothing
    # else of ours.
    assert os.getsid(pid) != os.getsid(0)
    assert os.getsid(pid) != pid
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert fds == {
        0: "/dev/null",
        1: autostart.log_path(str(vault), Environment()),
        2: autostart.log_path(str(vault), Environment()),
        3: autostart.record_path(str(vault), Environment()),
    }
    os.kill(pid, signal.SIGTERM)
    assert wait_gone(pid)


def test_a_server_started_by_hand_is_not_joined_by_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that the running server does not answer (it is stopped) scans and spawns
    nothing: the server's own lock is held."""
    vault = make_vault(tmp_path / "v")
    process = server_harness.start_subprocess_server(vault)
    try:
        pid = process.pid
        monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "0.2")
        process.send_signal(signal.SIGSTOP)
        try:
            code, out, err = run_cli(capsys, ["wiki", "find", "alpha", "--vault", str(vault)])
        finally:
            process.send_signal(signal.SIGCONT)
        assert (code, out, err) == (0, "wiki/alpha.md — Alpha auth\nwiki/beta.md — Beta\n", "")
        assert serve_pids(vault) == [pid]
        assert not Path(autostart.log_path(str(vault), Environment())).exists()
    finally:
        process.terminate()
        process.wait(WAIT_SECONDS)


# --- the setting's errors ---


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[serve]\nauto = "yes"\n', "serve.auto must be true or false (no quotes), e.g. auto = true"),
        ("[serve]\nauto = 1\n", "serve.auto must be true or false (no quotes), e.g. auto = true"),
        ("serve = true\n", "serve must be a table, e.g. [serve] then auto = true"),
        ("[serve]\nautostart = true\n", "has unknown key(s) serve.autostart; allowed: serve.auto, serve.idle_minutes"),
        *(
            (
                f"[serve]\nidle_minutes = {value}\n",
                f"serve.idle_minutes must be a number of minutes above 0 and at most 10080 (a week), not {shown}; "
                "e.g. idle_minutes = 30",
            )
            for value, shown in (("0", "0"), ("-5", "-5"), ('"30"', "'30'"), ("true", "True"), ("inf", "inf"))
        ),
        (
            "[serves]\nauto = true\n",
            "has unknown key(s) serves; allowed: dirs, depth, suffixes, exclude, memory_dir, [lint], [serve], [cache], "
            "[order]",
        ),
    ],
)
def test_a_bad_serve_setting_is_a_vault_error_naming_the_key_and_the_fix(
    tmp_path: Path, runtime_dir: Path, capsys: pytest.CaptureFixture[str], config: str, message: str
) -> None:
    vault = make_vault(tmp_path / "v", 'dirs = ["wiki"]\n' + config)
    path = vault / ".mnemosyne.toml"
    separator = " " if message.startswith("has ") else ": "
    for command in ("find", "recall", "info"):
        argv = ["wiki", command, *(["alpha"] if command != "info" else []), "--vault", str(vault)]
        assert run_cli(capsys, argv) == (3, "", f"mnemosyne: error: {path}{separator}{message}\n")
    assert list(runtime_dir.iterdir()) == []


# --- wiki info ---


def test_info_says_the_server_was_auto_started_and_where_it_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v")
    code, out, _ = run_cli(capsys, ["wiki", "info", "--vault", str(vault)])
    assert code == 0
    assert "\nserver: none (auto-start is on: [serve] auto = true; a find or recall starts one)\n" in out
    assert json.loads(run_cli(capsys, ["wiki", "info", "--json", "--vault", str(vault)])[1])["auto_start"] == {
        "enabled": True,
        "reason": "[serve] auto = true",
        "idle_minutes": 30,
        "log": None,
    }

    started = subprocess.run(
        [*entry_point(), "wiki", "find", "alpha", "--vault", str(vault)], capture_output=True, timeout=60, check=False
    )
    assert started.returncode == 0
    status = wait_for_server(vault)
    log = autostart.log_path(str(vault), Environment())
    code, out, err = run_cli(capsys, ["wiki", "info", "--vault", str(vault)])
    assert (code, err) == (0, "")
    line = next(line for line in out.splitlines() if line.startswith("server: "))
    assert re.fullmatch(
        rf"server: pid {status.pid}, 1 dirs watched, [0-9.]+ MiB resident; auto-started, log {re.escape(log)}; "
        r"exits after 30 minutes without a call",
        line,
    ), line
    code, out, err = run_cli(capsys, ["wiki", "serve", "--status", "--vault", str(vault)])
    assert (code, err) == (0, "")
    assert re.fullmatch(
        rf"server: pid {status.pid}, 1 dirs watched, [0-9.]+ MiB resident, 1 watch builds, [0-9]+ requests since "
        rf"[0-9: -]+ UTC; auto-started, log {re.escape(log)}\n",
        out,
    ), out
    code, out, err = run_cli(capsys, ["wiki", "info", "--json", "--vault", str(vault)])
    report = json.loads(out)
    jsonschema.validate(report, load_schema("info"))
    assert report["server"]["pid"] == status.pid
    assert report["server"]["auto_started"] is True
    assert report["auto_start"] == {"enabled": True, "reason": "[serve] auto = true", "idle_minutes": 30, "log": log}


def test_info_does_not_call_a_server_started_by_hand_auto_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = make_vault(tmp_path / "v")
    process = server_harness.start_subprocess_server(vault)
    try:
        status = wait_for_server(vault)
        code, out, _ = run_cli(capsys, ["wiki", "info", "--vault", str(vault)])
        assert code == 0
        line = next(line for line in out.splitlines() if line.startswith("server: "))
        assert re.fullmatch(
            rf"server: pid {status.pid}, 1 dirs watched, [0-9.]+ MiB resident; exits after 30 minutes without a call",
            line,
        ), line
        code, out, _ = run_cli(capsys, ["wiki", "serve", "--status", "--vault", str(vault)])
        assert code == 0
        assert out.endswith(" UTC\n"), out  # no "auto-started"
        report = json.loads(run_cli(capsys, ["wiki", "info", "--json", "--vault", str(vault)])[1])
        jsonschema.validate(report, load_schema("info"))
        assert report["server"]["auto_started"] is False
        assert report["auto_start"] == {
            "enabled": True,
            "reason": "[serve] auto = true",
            "idle_minutes": 30,
            "log": None,
        }
    finally:
        process.terminate()
        process.wait(WAIT_SECONDS)
