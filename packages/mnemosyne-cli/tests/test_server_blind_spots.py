"""What a differential red team of the served path found: changes no watch of the listed
dirs reported, and a listing kept by one caller reused by another the scan treats apart.
Each answer through the server is held to the plain scan's (``--no-cache``: the same
stdout bytes, stderr and exit code); and what a served call costs when the server cannot
help: one question a call, and no rebuild a question while the watches are used up."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nobody
import pytest
from server_harness import (
    ThreadServer,
    make_vault,
    out_of_watches_at,
    run_cli,
    same_as_the_scan,
    served_and_scanned,
)

from mnemosyne_cli import client, protocol
from mnemosyne_cli.environment import Environment
from mnemosyne_core import changes, inotify

pytestmark = pytest.mark.usefixtures("runtime_dir")  # conftest: a private runtime dir per test

Answer = tuple[int, bytes, str]


@pytest.fixture
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """No racy window: a page read once is taken from the index without a stat next time,
    so what follows shows whether the watch saw the change."""
    import mnemosyne_core.page

    monkeypatch.setattr(mnemosyne_core.page, "RACY_NS", -(10**18))


# --- the vault root's own rights ---


def _as_nobody(python: str, env: dict[str, str], *argv: str) -> Answer:
    completed = subprocess.run(
        [*nobody.NOBODY, python, "-m", "mnemosyne_cli", *argv], env=env, capture_output=True, check=False, timeout=60
    )
    return completed.returncode, completed.stdout, completed.stderr.decode("utf-8", "surrogateescape")


#: Builds the vault's whole index (argv[1]) in the foreground, as the caller it runs as.
BUILD_INDEX = (
    "import os, sys\n"
    "from mnemosyne_core import build, cache\n"
    "from mnemosyne_core.config import home_dir\n"
    "cache_dir, _why_not = cache.usable_cache_dir(os.environ, create=True)\n"
    "build.build(cache.index_path(cache_dir, sys.argv[1]), sys.argv[1], home_dir(os.environ), wait=True)\n"
)


@pytest.fixture
def nobodys_vault() -> Iterator[tuple[Path, str, dict[str, str]]]:
    """A vault nobody owns (``dirs = ["notes"]``), nobody's runtime and cache dirs, the
    interpreter nobody runs and the environment it runs with; nobody's index of the vault
    built. Skipped only where no unprivileged caller can be made (not root, no setpriv)."""
    if os.geteuid() != 0:
        pytest.skip("the test drops privileges to nobody, which needs root")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    python = nobody.python()
    if python is None:
        pytest.skip("nobody can run no interpreter with the CLI")
    base = Path(tempfile.mkdtemp(prefix="mn-nobody-"))
    try:
        base.chmod(0o755)
        vault = make_vault(base / "vault", {".mnemosyne.toml": 'dirs = ["notes"]\n', "notes/a.md": "alpha\n"})
        run = base / "run"
        run.mkdir(mode=0o700)
        for path in [base, run, vault, *vault.rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
        env = {
            **os.environ,
            "PYTHONPATH": nobody.import_path(),
            "HOME": str(run),
            "XDG_RUNTIME_DIR": str(run),
            "XDG_CACHE_HOME": str(run / "cache"),
            client.TIMEOUT_ENV_VAR: "10",
        }
        built = subprocess.run(
            [*nobody.NOBODY, python, "-c", BUILD_INDEX, str(vault)], env=env, capture_output=True, check=False
        )
        assert built.returncode == 0, built.stderr
        yield vault, python, env
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(
    ("mode", "owner"), [(0o311, 65534), (0o711, 0), (0o710, 0)], ids=["311-nobodys", "711-roots", "710-roots"]
)
def test_a_vault_root_its_caller_can_no_longer_list_answers_as_the_scan(
    mode: int, owner: int, nobodys_vault: tuple[Path, str, dict[str, str]]
) -> None:
    """With ``dirs = ["notes"]`` the root is listed by no caller's listing but read first by
    every scan: a chmod or chown of it that takes away the caller's read makes the scan
    exit 3, and the served call with it. The server and its callers run as nobody."""
    vault, python, env = nobodys_vault
    server = subprocess.Popen(
        [*nobody.NOBODY, python, "-m", "mnemosyne_cli", "wiki", "serve", "--vault", str(vault)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        status = ("wiki", "serve", "--status", "--vault", str(vault))
        for _ in range(300):
            if _as_nobody(python, env, *status)[0] == 0:
                break
            assert server.poll() is None, "the server exited"
        find = ("wiki", "find", "alpha", "--vault", str(vault))
        readable = _as_nobody(python, env, *find, "--no-cache")
        assert readable == (0, b"notes/a.md \xe2\x80\x94 a\n", "")
        assert [_as_nobody(python, env, *find) for _ in range(2)] == [readable, readable]  # listed, then served
        os.chown(vault, owner, 65534)
        vault.chmod(mode)
        scanned = _as_nobody(python, env, *find, "--no-cache")
        assert scanned[:2] == (3, b""), scanned
        if mode != 0o710:  # 710: nobody cannot even reach the vault's path
            assert scanned[2].startswith(f"mnemosyne: error: cannot list vault '{vault}': Permission denied"), scanned
        assert [_as_nobody(python, env, *find) for _ in range(2)] == [scanned, scanned]
        os.chown(vault, 65534, 65534)
        vault.chmod(0o755)
        assert [_as_nobody(python, env, *find) for _ in range(2)] == [readable, readable]
    finally:
        server.terminate()
        server.wait(30)


# --- config and ignore files written through another name ---

RULE_FILES = {
    # (where it lies, its text before, after): the answer to "alpha" changes with it.
    ".mnemosyne.toml": (".mnemosyne.toml", 'dirs = ["notes"]\ndepth = "tree"\n', 'dirs = ["other"]\ndepth = "tree"\n'),
    ".gitignore": ("notes/.gitignore", "# nothing left out\n", "b.md\n"),
    ".ignore": ("notes/.ignore", "# nothing left out\n", "b.md\n"),
}


@pytest.mark.parametrize("linked", ["before the server started", "after a served call"])
@pytest.mark.parametrize("rule_file", sorted(RULE_FILES))
def test_a_config_or_ignore_file_written_through_another_hard_link_answers_as_the_scan(
    rule_file: str, linked: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The other name lies in a dir no watch sees: neither the link nor a write through it
    raises an event in the vault's dirs."""
    rel_path, before, after = RULE_FILES[rule_file]
    pages = {
        ".mnemosyne.toml": 'dirs = ["notes"]\ndepth = "tree"\n',
        "notes/a.md": "alpha a\n",
        "notes/b.md": "alpha b\n",
        "other/c.md": "alpha c\n",
        rel_path: before,
    }
    vault = make_vault(tmp_path / "v", pages)
    other_name = tmp_path / "elsewhere" / rule_file
    other_name.parent.mkdir()
    if linked == "before the server started":
        os.link(vault / rel_path, other_name)
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault):
        unchanged = same_as_the_scan(capsysbinary, argv)
        assert unchanged[1].count(b"notes/") == 2
        if linked == "after a served call":
            os.link(vault / rel_path, other_name)
        with other_name.open("r+b") as through_the_other_name:
            through_the_other_name.truncate()
            through_the_other_name.write(after.encode())
        changed = same_as_the_scan(capsysbinary, argv)
        assert changed != unchanged
        assert same_as_the_scan(capsysbinary, argv) == changed


# --- a page given a name no page has, in a watched dir ---


@pytest.mark.usefixtures("trusted_at_once")
@pytest.mark.parametrize("other_name", ["notes/a.md.bak", "notes/.a.md", "a.md"])
def test_a_page_written_through_a_hard_link_of_another_name_in_a_watched_dir_answers_as_the_scan(
    other_name: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The link is made after the page was read (its index row says one link); the
    kernel raises events for the new name only, which is no page's (the root is watched,
    not searched, with ``dirs = ["notes"]``)."""
    vault = make_vault(
        tmp_path / "v",
        {".mnemosyne.toml": 'dirs = ["notes"]\n', "notes/a.md": "kiwi a\n", "notes/b.md": "kiwi b\n"},
    )
    argv = ["wiki", "find", "kiwi", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"notes/a.md \xe2\x80\x94 a\nnotes/b.md \xe2\x80\x94 b\n", "")
        os.link(vault / "notes" / "a.md", vault / other_name)
        with (vault / other_name).open("r+b") as through_the_other_name:
            through_the_other_name.write(b"no fruit")
        assert same_as_the_scan(capsysbinary, argv) == (0, b"notes/b.md \xe2\x80\x94 b\n", "")
        # Read again, the page is known to have another name: stat'ed on every served call.
        with (vault / other_name).open("r+b") as through_the_other_name:
            through_the_other_name.write(b"kiwi and")
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"notes/a.md \xe2\x80\x94 a\nnotes/b.md \xe2\x80\x94 b\n", "")


def test_a_page_renamed_from_a_temporary_name_is_served_without_a_rebuild(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """An editor's atomic save: the temporary name is gone when the server looks, but its
    rename into the watched dir is in the same batch, so no doubt is raised."""
    from mnemosyne_core.changes import VaultWatch

    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["notes"]\n', "notes/a.md": "kiwi\n"})
    watch = VaultWatch(str(vault.resolve()))
    try:
        watch.rebuild()
        assert watch.doubt is None
        token = watch.token()
        (vault / "notes" / ".a.md.tmp").write_text("kiwi, saved\n", encoding="utf-8")
        os.replace(vault / "notes" / ".a.md.tmp", vault / "notes" / "a.md")
        assert watch.changes_since(token)[1] == ("notes/a.md",)
        assert watch.rebuilds == 1
        # The creation read before the rename, the rename's events only after the look that
        # finds the temporary name gone: read then, in the same batch.
        assert watch.watcher is not None
        (vault / "notes" / ".a.md.tmp").write_text("kiwi, saved again\n", encoding="utf-8")
        created = watch.watcher.read()
        os.replace(vault / "notes" / ".a.md.tmp", vault / "notes" / "a.md")
        real_read = watch.watcher.read
        batches = iter([created])
        watch.watcher.read = lambda: next(batches, None) or real_read()  # type: ignore[method-assign]
        token = watch.token()
        watch.take_events()
        assert watch.changes_since(token)[1] == ("notes/a.md",)
        assert watch.rebuilds == 1
        (vault / "notes" / "4913").write_text("", encoding="utf-8")  # made and gone unseen: a doubt
        (vault / "notes" / "4913").unlink()
        assert watch.changes_since(watch.token())[1] is None
        assert watch.rebuilds == 2
    finally:
        watch.close()


# --- an ignore file on the way to a nested searched dir that is a symlink ---


def test_a_symlinked_ignore_file_on_the_way_to_a_nested_searched_dir_answers_as_the_scan(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            ".mnemosyne.toml": 'dirs = ["docs/en"]\ndepth = "tree"\n',
            "docs/en/a.md": "alpha a\n",
            "docs/en/b.md": "alpha b\n",
            "rules/ignore": "b.md\n",
        },
    )
    os.symlink("../rules/ignore", vault / "docs" / ".gitignore")
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    both = b"docs/en/a.md \xe2\x80\x94 a\ndocs/en/b.md \xe2\x80\x94 b\n"
    with ThreadServer(vault) as running:
        # A symlinked ignore file is never followed; the scan says so while its target is there.
        assert same_as_the_scan(capsysbinary, argv) == (
            0,
            both,
            "mnemosyne: warning: docs/.gitignore: cannot use this ignore file (Too many levels of symbolic links);"
            " its rules are not applied\n",
        )
        assert running.watch.doubt == "docs/.gitignore is a symlink, whose target no watch follows"
        (vault / "rules" / "ignore").unlink()
        assert same_as_the_scan(capsysbinary, argv) == (0, both, "")


# --- the home-dir refusal is the caller's, through the index too ---


def test_a_listing_kept_under_another_home_is_not_served_to_a_caller_whose_home_the_vault_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A zero-config vault is searched as a whole tree unless it is the caller's home dir.
    A caller with another HOME (the same cache dir) kept the listing and a token; a caller
    whose HOME the vault is must be refused as its scan refuses it."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(elsewhere))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home = make_vault(tmp_path / "home", {"notes/a.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(home)]
    with ThreadServer(home) as running:
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"notes/a.md \xe2\x80\x94 a\n", "")
        monkeypatch.setenv("HOME", str(home))
        refused = same_as_the_scan(capsysbinary, argv)
        assert refused[:2] == (3, b"")
        assert "is your home dir, not a notes folder" in refused[2]


# --- what a served call costs when the server cannot help ---


@pytest.mark.parametrize("server", ["stopped", "gone"])
def test_a_server_that_does_not_answer_is_asked_once_a_call(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A stopped server (its socket takes the connection, nothing answers) costs a call
    the client's budget once, not once for the served path and again for the listing's
    token; a gone one (nothing listens) is not asked twice either."""
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)  # the index holds a token: the next call asks
    path = protocol.socket_path(str(vault.resolve()), Environment())
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        silent.bind(path)
        if server == "stopped":
            silent.listen(8)  # connections wait in the backlog; none is ever accepted
        monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "0.2")
        asked: list[str] = []
        real_exchange = client.exchange

        def exchange(socket_path: str, request: bytes, timeout: float) -> bytes | None:
            asked.append(socket_path)
            return real_exchange(socket_path, request, timeout)

        monkeypatch.setattr(client, "exchange", exchange)
        for call in (argv, ["wiki", "recall", "alpha", "--vault", str(vault)]):
            asked.clear()
            assert run_cli(capsysbinary, call) == run_cli(capsysbinary, [*call, "--no-cache"])
            assert asked == [path], call
    finally:
        silent.close()


def test_a_vault_dir_replaced_at_its_path_is_watched_anew_and_served(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)
        os.rename(vault, tmp_path / "old")
        make_vault(vault, {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/b.md": "alpha\n"})
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"wiki/b.md \xe2\x80\x94 b\n", "")
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        assert status.failure == ""


def test_a_status_says_when_the_vault_dir_at_its_path_is_not_the_one_watched(tmp_path: Path) -> None:
    from mnemosyne_cli.server import Server

    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    running = Server.for_vault(str(vault.resolve()), Environment())
    try:
        running.start()
        assert running.status_body()[-1] == ""
        os.rename(vault, tmp_path / "old")
        vault.mkdir()  # no event read yet: no loop runs
        assert running.status_body()[-1] == (
            "the vault dir at its path is not the one watched; the next question watches it anew"
        )
    finally:
        running.close()


def test_out_of_watches_a_question_does_not_try_the_build_again_until_the_retry_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Each try walks the vault's dirs up to the one past the limit: meanwhile every
    question is answered "rescan" at once, with no build (``changes.RETRY_SECONDS``, an
    hour here: the test reads no clock)."""
    monkeypatch.setattr(changes, "RETRY_SECONDS", 3600.0)
    vault = make_vault(tmp_path / "v", {".mnemosyne.toml": 'dirs = ["wiki"]\n', "wiki/a.md": "alpha\n"})
    argv = ["wiki", "find", "alpha", "--vault", str(vault)]
    with ThreadServer(vault) as running:
        served_and_scanned(capsysbinary, running, argv)
        give_back = out_of_watches_at(monkeypatch, "/wiki")
        assert running.watch.watcher is not None
        running.watch.watcher.inject(inotify.Event(-1, inotify.IN_Q_OVERFLOW, ""))  # the next question rebuilds
        requests = running.requests
        assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        builds = running.watch.rebuilds
        assert running.watch.failed
        for _ in range(3):
            assert run_cli(capsysbinary, argv) == run_cli(capsysbinary, [*argv, "--no-cache"])
        assert running.watch.rebuilds == builds  # no try for a question
        assert running.requests == requests + 4  # one question a call
        status = client.status(str(vault.resolve()), Environment())
        assert status is not None
        assert status.failure == f"cannot watch the vault: {inotify.out_of_watches_reason()}"
        give_back()
        served, scanned = served_and_scanned(capsysbinary, running, argv)
        assert served == scanned == (0, b"wiki/a.md \xe2\x80\x94 a\n", "")
