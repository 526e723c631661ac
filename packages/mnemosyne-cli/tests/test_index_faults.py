"""The vault's index when something is wrong with it: missing, truncated, random bytes, of
another format or code, not a regular file, not ours, in a dir that must not be used, on a
read-only or full disk, locked by a writer, held by a killed builder, written by 16 calls
at once, edited under 4 writers, or killed mid-write. Every call gives the plain scan's
answer (``main([... "--no-server"])`` against ``main([... "--no-cache"])``: stdout bytes,
stderr and exit code), no traceback, and no warning.

Most cases start from a *poisoned* index: a whole one whose stat keys match the vault but
whose every page's text also holds POISON, a word no page holds. Taken as valid it answers
a find for POISON wrongly (``test_a_poisoned_index_that_is_valid_is_taken``), so a case that
gives the plain answer shows the index was not taken."""

from __future__ import annotations

import _sqlite3 as sqlite3
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from index_harness import build_index, index_file, index_is_complete

from mnemosyne_cli.app import main
from mnemosyne_core import build, cache, index, page
from mnemosyne_core.index import NoteIndex

POISON = "poisonword"
#: Every query is asked of each damaged index: finds with each output, a miss, a recall.
QUERIES = [
    ["wiki", "find", "alpha"],
    ["wiki", "find", "beta", "gamma", "--json"],
    ["wiki", "find", "alpha", "--cat"],
    ["wiki", "find", POISON],
    ["wiki", "recall", "alpha"],
]
PAGES = {
    "a/one.md": "---\ntitle: Alpha One\nupdated: 2026-01-02\n---\nalpha beta\n",
    "a/two.md": "---\ntitle: Two\ntags: [alpha]\n---\nbeta gamma\n",
    "b/three.md": "# Three\n\nalpha gamma beta\n",
    "b/four.md": "---\ntitle: Four\n---\nnothing here\n",
}

Answer = tuple[int, bytes, str]


def run_cli(capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> Answer:
    capsysbinary.readouterr()
    code = main(argv)
    out, err = capsysbinary.readouterr()
    return code, out, err.decode("utf-8", "surrogateescape")


@pytest.fixture
def builders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index paths a call started a detached builder for (none is started here: a
    builder finishing during a case would change what the next call reads)."""
    started: list[str] = []
    monkeypatch.setattr(build, "start_detached", lambda path, *args: started.append(path))
    return started


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builders: list[str]) -> Path:
    """A flat vault of two dirs, a private cache dir, and no racy window: the pages were
    just written, and a racy page is read anew on every call, which would hide whether
    the index was taken."""
    root = tmp_path / "vault"
    for rel_path, text in PAGES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(page, "RACY_NS", 0)
    return root


def answers(capsysbinary: pytest.CaptureFixture[bytes], vault: Path, flag: str) -> list[Answer]:
    return [run_cli(capsysbinary, [*query, "--vault", str(vault), flag]) for query in QUERIES]


def assert_plain(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """Every query through the index answers as the plain scan, and warns of nothing."""
    indexed = answers(capsysbinary, vault, "--no-server")
    plain = answers(capsysbinary, vault, "--no-cache")
    assert indexed == plain
    for _code, _out, err in indexed:
        assert "Traceback" not in err
        assert "warning" not in err


def poison(path: Path) -> None:
    with NoteIndex.open(str(path)) as opened:
        opened.connection.execute("UPDATE text_rows SET body = body || ?", (f" {POISON}",))
        # texts indexes text_rows (external content): told to read it again.
        opened.connection.execute("INSERT INTO texts(texts) VALUES ('rebuild')")


def poisoned(vault: Path) -> Path:
    """A whole index of the vault, poisoned; its path."""
    path = build_index(vault)
    poison(path)
    return path


def find_poison(capsysbinary: pytest.CaptureFixture[bytes], vault: Path, flag: str) -> Answer:
    return run_cli(capsysbinary, ["wiki", "find", POISON, "--paths", "--vault", str(vault), flag])


def test_a_poisoned_index_that_is_valid_is_taken(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """The control for every case below: an undamaged poisoned index is trusted, so those
    cases' plain answers mean the damaged one was refused."""
    poisoned(vault)
    code, out, err = find_poison(capsysbinary, vault, "--no-server")
    assert (code, sorted(out.decode().splitlines()), err) == (0, sorted(PAGES), "")
    assert find_poison(capsysbinary, vault, "--no-cache")[0] == 1


def test_a_missing_index_is_built_by_a_builder(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, builders: list[str]
) -> None:
    assert not index_file(vault).exists()
    assert_plain(capsysbinary, vault)
    assert builders
    assert set(builders) == {str(index_file(vault))}
    # The builder a call starts, run here to its end: the next calls read its index.
    build.build(builders[0], os.path.realpath(vault), os.environ["HOME"])
    poison(index_file(vault))
    assert find_poison(capsysbinary, vault, "--no-server")[0] == 0


@pytest.mark.parametrize("length", [0, 1, 100, 4096, 8192, -1])
def test_a_truncated_index_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path, length: int) -> None:
    path = poisoned(vault)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    size = path.stat().st_size
    os.truncate(path, length % size)
    assert_plain(capsysbinary, vault)


def test_an_index_of_random_bytes_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(vault)
    size = path.stat().st_size
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    path.write_bytes(random.Random(7).randbytes(size))
    assert_plain(capsysbinary, vault)


def test_an_index_of_another_format_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(vault)
    with NoteIndex.open(str(path)) as opened:
        opened.connection.execute(f"PRAGMA user_version = {index.FORMAT + 1}")
    assert_plain(capsysbinary, vault)


def test_an_index_of_another_code_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """Another install, another Python: what a row holds may differ."""
    path = poisoned(vault)
    with NoteIndex.open(str(path)) as opened:
        opened.connection.execute("UPDATE meta SET value = 'another version of mnemosyne' WHERE name = 'code'")
    assert_plain(capsysbinary, vault)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["dir", "fifo", "symlink", "dangling symlink"])
def test_no_regular_file_at_the_index_path_is_read(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, tmp_path: Path, kind: str
) -> None:
    path = poisoned(vault)
    elsewhere = tmp_path / "elsewhere.sqlite"
    os.replace(path, elsewhere)  # a whole poisoned index, ours, 0600
    if kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path, 0o600)  # opened by SQLite it would hang the call
    elif kind == "symlink":
        path.symlink_to(elsewhere)
    else:
        path.symlink_to(tmp_path / "nowhere")
    assert_plain(capsysbinary, vault)


def test_an_index_others_may_read_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(vault)
    path.chmod(0o644)
    assert_plain(capsysbinary, vault)


def test_an_index_owned_by_another_user_is_not_read(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(vault)
    os.chown(path, 65534, 65534)
    assert_plain(capsysbinary, vault)


def _info_index_line(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> str:
    code, out, _err = run_cli(capsysbinary, ["wiki", "info", "--vault", str(vault)])
    assert code == 0
    return next(line for line in out.decode().splitlines() if line.startswith("index: "))


UNSAFE_DIRS = {
    "symlink": "is a symlink",
    "group-writable": "is writable by other users",
    "world-writable": "is writable by other users",
    "another owner": "is owned by another user",
}


def _make_unsafe(cache_dir: Path, tmp_path: Path, kind: str) -> None:
    if kind == "symlink":
        target = tmp_path / "real-cache-dir"
        os.replace(cache_dir, target)
        cache_dir.symlink_to(target)
    elif kind == "group-writable":
        cache_dir.chmod(0o770)
    elif kind == "world-writable":
        cache_dir.chmod(0o703)
    else:
        os.chown(cache_dir, 65534, 65534)  # the tests run as root


@pytest.mark.parametrize("kind", list(UNSAFE_DIRS))
def test_an_unsafe_cache_dir_is_never_used(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, tmp_path: Path, kind: str
) -> None:
    path = poisoned(vault)
    cache_dir = path.parent
    _make_unsafe(cache_dir, tmp_path, kind)
    # A page changed: a call that used the dir would write the index again.
    (vault / "a" / "one.md").write_text("---\ntitle: Alpha One\n---\nalpha changed\n", encoding="utf-8")
    before = sorted((entry.name, entry.stat().st_mtime_ns) for entry in os.scandir(cache_dir))
    assert_plain(capsysbinary, vault)
    assert sorted((entry.name, entry.stat().st_mtime_ns) for entry in os.scandir(cache_dir)) == before
    where = cache.cache_dir_path(os.environ)
    assert _info_index_line(capsysbinary, vault) == f"index: not used: {where} {UNSAFE_DIRS[kind]}: it is never used"


def _changed_page(vault: Path) -> None:
    (vault / "b" / "four.md").write_text("---\ntitle: Four\n---\nalpha at last\n", encoding="utf-8")


@pytest.mark.parametrize("fault", ["attempt to write a readonly database", "database or disk is full"])
def test_a_read_only_or_full_disk_answers_by_the_scan(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """SQLite's own error for a disk that takes no write, raised where a call writes."""
    path = poisoned(vault)
    _changed_page(vault)  # so the call writes the index

    def refuse(self: NoteIndex, *args: object) -> None:
        raise sqlite3.OperationalError(fault)

    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "write", refuse)
        assert_plain(capsysbinary, vault)
    poison(path)  # once the disk takes writes again, the index is written and read
    assert find_poison(capsysbinary, vault, "--no-server")[0] == 0


@pytest.mark.timeout(60)
def test_an_index_locked_by_a_writer_does_not_stall_a_call(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path
) -> None:
    """Another process holds the write lock: a call that must write waits at most the
    busy timeout, then answers by the scan; one that needs no write is not held at all."""
    path = poisoned(vault)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(60)",
            str(path),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        started = time.monotonic()
        assert find_poison(capsysbinary, vault, "--no-server")[0] == 0  # read in place, nothing to write
        _changed_page(vault)
        assert_plain(capsysbinary, vault)
        assert time.monotonic() - started < 20
    finally:
        holder.kill()
        holder.communicate()


def _cli(vault: Path, environ: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mnemosyne_cli", *args, "--vault", str(vault)],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _child_env() -> dict[str, str]:
    environ = dict(os.environ)
    environ.pop("PYTHONWARNINGS", None)
    return environ


def _wait_for_a_whole_index(vault: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not index_is_complete(vault):
        assert time.monotonic() < deadline, "no builder finished the index"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sixteen_calls_on_a_cold_vault_answer_as_the_scan_and_start_one_builder(vault: Path) -> None:
    environ = _child_env()
    for number in range(40):
        (vault / "a" / f"page-{number}.md").write_text(f"---\ntitle: Page {number}\n---\nalpha {number}\n")
    query = ("wiki", "find", "alpha", "--limit", "0")
    plain = _cli(vault, environ, *query, "--no-cache").communicate()
    calls = [_cli(vault, environ, *query, "--no-server") for _ in range(16)]
    for call in calls:
        assert call.communicate(timeout=100) == plain
        assert call.returncode == 0
    _wait_for_a_whole_index(vault)
    cache_dir = index_file(vault).parent
    names = sorted(entry.name for entry in cache_dir.iterdir())
    assert names[0] == index_file(vault).name
    assert set(names) <= {index_file(vault).name + suffix for suffix in ("", "-wal", "-shm", build.LOCK_SUFFIX)}
    with NoteIndex.open(str(index_file(vault))) as opened:
        assert opened.page_count() == len(PAGES) + 40
    assert _cli(vault, environ, *query, "--no-server").communicate() == plain


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_four_writers_editing_pages_while_calls_run(vault: Path) -> None:
    """Calls through the index while four processes rewrite pages: each call answers
    without a traceback or a warning, and once the writers stop, as the scan does."""
    environ = _child_env()
    build_index(vault)
    writer = (
        "import random, sys, time\n"
        "rng = random.Random(int(sys.argv[2]))\n"
        "end = time.monotonic() + 3\n"
        "while time.monotonic() < end:\n"
        "    path = f'{sys.argv[1]}/a/edit-{rng.randrange(6)}.md'\n"
        "    open(path, 'w').write(rng.choice(['alpha', 'beta', 'alpha gamma']) + '\\n')\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", writer, str(vault), str(seed)]) for seed in range(4)]
    query = ("wiki", "find", "alpha", "--limit", "0", "--paths")
    try:
        while any(process.poll() is None for process in writers):
            _out, err = _cli(vault, environ, *query, "--no-server").communicate(timeout=60)
            assert b"Traceback" not in err
            assert b"warning" not in err
    finally:
        for process in writers:
            process.wait(30)
    assert (
        _cli(vault, environ, *query, "--no-server").communicate()
        == _cli(vault, environ, *query, "--no-cache").communicate()
    )


@pytest.fixture
def big_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """2,000 small pages: a build and a write that last long enough to be killed inside."""
    root = tmp_path / "big"
    for dir_name in ("a", "b"):
        (root / dir_name).mkdir(parents=True)
    for number in range(2000):
        words = " ".join(random.Random(number).choice(["alpha", "beta", "gamma", "delta"]) for _ in range(8))
        text = f"---\ntitle: Page {number}\ntags: [t{number % 7}]\n---\n{words}\n"
        (root / ("a" if number % 2 else "b") / f"page-{number}.md").write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_builder_killed_at_any_point_leaves_no_index_half_read(
    capsysbinary: pytest.CaptureFixture[bytes], big_vault: Path, builders: list[str]
) -> None:
    """SIGKILL at random points of a build (after a random number of pages read, as its
    progress note says: a state, not a time): no lock stays held (flock dies with the
    builder), no partial build is read (one transaction), and the next builder completes."""
    environ = _child_env()
    query = ["wiki", "find", "alpha", "gamma", "--limit", "5"]
    plain = run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-cache"])
    path = index_file(big_vault)
    path.parent.mkdir(parents=True, mode=0o700)
    argv = [sys.executable, "-m", "mnemosyne_core.build", str(path), os.path.realpath(big_vault), environ["HOME"]]
    rng = random.Random(20261203)
    outcomes = set()
    for _kill in range(6):
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        child = subprocess.Popen(argv, env=environ)
        pages_read = rng.randrange(0, 2000)
        while child.poll() is None:
            progress = build.building(str(path))
            if progress is not None and progress[0] >= pages_read:
                break
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert build.building(str(path)) is None  # no lock left held
        outcomes.add(index_is_complete(big_vault))
        assert run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-server"]) == plain
    subprocess.run(argv, env=environ, check=True)
    assert index_is_complete(big_vault)
    assert run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-server"]) == plain
    assert False in outcomes  # some kills landed inside the build


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_call_killed_mid_write_leaves_the_index_whole(
    capsysbinary: pytest.CaptureFixture[bytes], big_vault: Path
) -> None:
    """A call writing a thousand changed pages, killed at random moments: the next call
    answers as the scan, from an index that holds each page as it is."""
    environ = _child_env()
    build_index(big_vault)
    query = ["wiki", "find", "alpha", "gamma", "--limit", "5"]
    rng = random.Random(20261204)
    for round_number in range(4):
        for number in range(0, 2000, 2):
            text = f"---\ntitle: Page {number}\n---\n{rng.choice(['alpha gamma', 'beta'])} {round_number}\n"
            (big_vault / ("a" if number % 2 else "b") / f"page-{number}.md").write_text(text, encoding="utf-8")
        child = _cli(big_vault, environ, *query, "--no-server")
        time.sleep(rng.uniform(0.05, 0.6))
        child.send_signal(signal.SIGKILL)
        child.communicate()
        plain = run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-cache"])
        assert run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-server"]) == plain


def _size(path: Path) -> str:
    size = sum(os.stat(f"{path}{suffix}").st_size for suffix in ("", "-wal") if os.path.exists(f"{path}{suffix}"))
    return f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _damage_the_fts_table(path: Path) -> None:
    """Overwrite every page of the FTS index's b-tree (``texts_data``) with bytes no page
    holds; the header, ``meta`` and ``pages`` stay as they were."""
    with NoteIndex.open(str(path)) as opened:
        opened.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = opened.connection.execute("PRAGMA page_size").fetchone()[0]
        numbers = [row[0] for row in opened.connection.execute("SELECT pageno FROM dbstat WHERE name = 'texts_data'")]
    assert numbers
    assert 1 not in numbers
    with open(path, "r+b") as database:
        for number in numbers:
            database.seek((number - 1) * page_size)
            database.write(b"\xff" * page_size)


def _wait_for_the_builder_to_end(path: Path, seconds: float = 60) -> None:
    """Until no builder holds the lock and the lock file holds what a builder leaves at its
    end (its progress, or its failure), not the damage a call marked."""
    deadline = time.monotonic() + seconds
    while build.building(str(path)) is not None or build.damage(str(path)) is not None:
        assert time.monotonic() < deadline, "no builder replaced the damaged index"
        time.sleep(0.05)


@pytest.mark.timeout(120)
def test_a_damaged_fts_table_is_rebuilt(
    capsysbinary: pytest.CaptureFixture[bytes],
    vault: Path,
    builders: list[str],
    monkeypatch: pytest.MonkeyPatch,
    start_detached: Callable[..., None],
) -> None:
    """The FTS table's pages overwritten: every query raises SQLite's SQLITE_CORRUPT ("vtable
    constructor failed" here; "database disk image is malformed" where a leaf deeper in a
    bigger index is hit). The call answers by the scan, asks for a builder, and info says the index is
    damaged (its rows alone would say every page is fresh); the builder makes a whole one,
    read by the calls after it."""
    path = poisoned(vault)
    _damage_the_fts_table(path)
    with NoteIndex.open(str(path)) as opened, pytest.raises(sqlite3.DatabaseError) as raised:
        opened.top(("alpha",), 20)
    assert getattr(raised.value, "sqlite_errorname", None) == "SQLITE_CORRUPT"
    assert_plain(capsysbinary, vault)
    assert set(builders) == {str(path)}
    damaged = f"damaged ({raised.value}): find and recall read every page until a builder replaces it"
    assert _info_index_line(capsysbinary, vault) == f"index: {path}, {_size(path)}, {damaged}"
    monkeypatch.setattr(build, "start_detached", start_detached)
    assert find_poison(capsysbinary, vault, "--no-server") == find_poison(capsysbinary, vault, "--no-cache")
    _wait_for_the_builder_to_end(path)
    assert build.Failure.read(str(path)) is None
    assert_plain(capsysbinary, vault)  # reads the builder's racy rows again
    poison(path)
    assert find_poison(capsysbinary, vault, "--no-server")[0] == 0  # through the index again


def _run_builder(vault: Path, path: Path) -> int:
    """The detached builder's own entry point, run here to its end."""
    return build.main([str(path), os.path.realpath(vault), os.environ["HOME"]])


def _grow(vault: Path) -> None:
    """A new page of many distinct words: a whole build needs more pages than the last."""
    words = " ".join(f"w{number:05x}q" for number in range(20000))
    (vault / "b" / "grown.md").write_text(f"# Grown\n\n{words}\n", encoding="utf-8")


def test_a_full_disk_during_a_build_keeps_the_index_and_retries_once_there_is_room(
    capsysbinary: pytest.CaptureFixture[bytes],
    vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    start_detached: Callable[..., None],
) -> None:
    """SQLite's own SQLITE_FULL (``max_page_count`` at the index's size): the build fails and
    says why; the index as it was still answers; the build is tried again once the disk has
    room, not ten minutes later."""
    path = poisoned(vault)
    before = path.read_bytes()
    _grow(vault)
    real_open = NoteIndex.open.__func__  # type: ignore[attr-defined]

    def on_a_full_disk(cls: type[NoteIndex], at: str, /, **kwargs: bool) -> NoteIndex:
        opened: NoteIndex = real_open(cls, at, **kwargs)
        count = opened.connection.execute("PRAGMA page_count").fetchone()[0]
        opened.connection.execute(f"PRAGMA max_page_count = {count}")
        return opened

    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "open", classmethod(on_a_full_disk))
        assert _run_builder(vault, path) == 1
    assert path.read_bytes() == before
    failure = build.Failure.read(str(path))
    assert failure is not None
    assert (failure.fault, failure.reason) == ("full", "database or disk is full")
    # The disk as full as the failure found it: other processes freeing this machine's disk
    # (a test session's tmp dirs) must not make room here.
    monkeypatch.setattr(build, "_free_bytes", lambda _path: failure.free)
    retry = f"a find or recall tries again once the disk has room, or from {_utc(failure.time + 600)} on"
    line = _info_index_line(capsysbinary, vault)
    assert line.endswith(f"; the last build failed {_utc(failure.time)}: database or disk is full; {retry}")
    spawned: list[list[str]] = []
    monkeypatch.setattr(os, "posix_spawn", lambda executable, argv, env, **kwargs: spawned.append(argv))
    start_detached(str(path), os.path.realpath(vault), os.environ["HOME"], os.environ)
    assert spawned == []
    monkeypatch.setattr(build, "_free_bytes", lambda _path: failure.free + len(before) + build.ROOM_NEEDED)
    start_detached(str(path), os.path.realpath(vault), os.environ["HOME"], os.environ)
    assert len(spawned) == 1
    assert _info_index_line(capsysbinary, vault).endswith(
        "database or disk is full; the next find or recall tries again"
    )


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("database or disk is full", "full"),
        ("disk I/O error", "io"),
        ("database is locked", "busy"),
        ("attempt to write a readonly database", "unwritable"),
    ],
)
def test_a_transient_error_opening_the_index_never_deletes_it(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, monkeypatch: pytest.MonkeyPatch, fault: str, kind: str
) -> None:
    """The builder's first look at the index fails for a reason that passes: the index is
    kept, byte for byte, and answers again once the disk does."""
    path = poisoned(vault)
    before = path.read_bytes()

    def refuse(self: NoteIndex) -> int:
        raise sqlite3.OperationalError(fault)

    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "format", refuse)
        assert _run_builder(vault, path) == 1
    assert path.read_bytes() == before
    failure = build.Failure.read(str(path))
    assert failure is not None
    assert (failure.fault, failure.reason) == (kind, fault)
    assert find_poison(capsysbinary, vault, "--no-server")[0] == 0


@pytest.mark.parametrize("content", [False, True])
def test_a_dir_at_the_index_path_is_replaced_and_its_content_kept(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, content: bool
) -> None:
    """A dir where the index belongs: removed when empty, moved aside when it holds
    anything (put there by hand, it is not ours to delete), and a whole index built there."""
    path = index_file(vault)
    path.parent.mkdir(parents=True, mode=0o700)
    path.mkdir()
    if content:
        (path / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert_plain(capsysbinary, vault)
    assert _run_builder(vault, path) == 0
    assert index_is_complete(vault)
    displaced = sorted(entry.name for entry in path.parent.iterdir() if ".displaced-" in entry.name)
    if content:
        assert len(displaced) == 1
        assert (path.parent / displaced[0] / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    else:
        assert displaced == []
    poison(path)
    assert find_poison(capsysbinary, vault, "--no-server")[0] == 0


def test_a_failed_build_says_why_in_info(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = index_file(vault)
    path.parent.mkdir(parents=True, mode=0o700)
    priority = os.nice(0)
    assert build.main([str(path), str(vault / "gone"), os.environ["HOME"]]) == 1
    # Only the detached process lowers its priority: this process ran every later test
    # niced, and on a busy machine a property test then outlasted the run's time limit.
    assert os.nice(0) == priority
    failure = build.Failure.read(str(path))
    assert failure is not None
    reason = f"cannot list vault {str(vault / 'gone')!r}: No such file or directory; check its permissions"
    assert (failure.fault, failure.reason) == ("other", reason)
    assert _info_index_line(capsysbinary, vault) == (
        f"index: {path}, not built yet (the next find, recall or wiki init builds it); the last build failed"
        f" {_utc(failure.time)}: {reason}; a find or recall tries again from {_utc(failure.time + 600)} on"
    )


def test_a_cache_dir_that_cannot_be_entered_is_not_used(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$XDG_CACHE_HOME`` a file: no call can make the index, and info says so, not "not
    built yet"."""
    (tmp_path / "cache-file").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-file"))
    assert_plain(capsysbinary, vault)
    where = tmp_path / "cache-file" / "mnemosyne"
    assert _info_index_line(capsysbinary, vault) == f"index: not used: cannot use {where}: Not a directory"


@pytest.mark.parametrize("cache_home", ["", "notes", ".hidden"])
def test_a_cache_dir_inside_a_zero_config_vault_never_changes_what_it_holds(
    capsysbinary: pytest.CaptureFixture[bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    builders: list[str],
    cache_home: str,
) -> None:
    """``$XDG_CACHE_HOME`` at the vault or in one of its dirs: a cache dir made there would be
    ``mnemosyne/``, a default Aion dir name, and the vault would read as an Aion vault from
    the second call on. It is never made or used there; below a hidden dir (which no
    listing enters) it is."""
    root = tmp_path / "zero"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "page.md").write_text("# Page\n\nzeta word\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / cache_home) if cache_home else str(root))
    monkeypatch.setattr(page, "RACY_NS", 0)
    query = ["wiki", "find", "zeta", "--vault", str(root)]
    expected = (0, b"notes/page.md \xe2\x80\x94 Page\n", "")
    assert run_cli(capsysbinary, [*query, "--no-server"]) == expected
    assert run_cli(capsysbinary, [*query, "--no-server"]) == expected
    assert run_cli(capsysbinary, [*query, "--no-cache"]) == expected
    made = sorted(str(path.relative_to(root)) for path in root.rglob("*"))
    if cache_home == ".hidden":
        assert set(builders) == {str(index_file(root))}
        assert ".hidden/mnemosyne" in made
    else:
        assert builders == []
        assert made == ["notes", "notes/page.md"]
        where = cache.cache_dir_path(os.environ)
        reason = "lies inside the vault, where it would change what the vault holds: it is never used"
        assert _info_index_line(capsysbinary, root) == f"index: not used: {where} {reason}"
