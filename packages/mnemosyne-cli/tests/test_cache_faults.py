"""The page cache when something is wrong with it: missing, truncated, corrupt, from another
version, not a regular file, not ours, in a dir that must not be used, on a read-only or
full disk, locked, written by 16 calls at once, or killed mid-write. Every call gives the
plain scan's answer (``main([... "--no-server"])`` against ``main([... "--no-cache"])``:
stdout bytes, stderr and exit code), no traceback, and no warning.

Most cases start from a *poisoned* cache file: one whose stat keys match the vault but
whose every record also holds POISON, a word no page holds. Taken as valid it answers a
find for POISON wrongly (``test_a_poisoned_file_that_is_valid_is_taken``), so a case that
gives the plain answer shows the file was not taken."""

from __future__ import annotations

import errno
import fcntl
import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemosyne_cli.app import main
from mnemosyne_core import cache
from mnemosyne_core.vault import scan

POISON = "poisonword"
#: Every query is asked of each damaged cache: finds with each output, a miss, a recall.
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
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A flat vault of two dirs, a private cache dir, and no racy window: the pages were
    just written, and a racy page is read anew on every call, which would hide whether
    the cache file was taken."""
    root = tmp_path / "vault"
    for rel_path, text in PAGES.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "RACY_NS", 0)
    return root


def cache_path(vault: Path) -> Path:
    cache_dir = cache.cache_dir_path(os.environ)
    assert cache_dir is not None
    return Path(cache.cache_file_path(cache_dir, os.path.realpath(vault)))


def answers(capsysbinary: pytest.CaptureFixture[bytes], vault: Path, flag: str) -> list[Answer]:
    return [run_cli(capsysbinary, [*query, "--vault", str(vault), flag]) for query in QUERIES]


def assert_plain(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """Every query through the cache answers as the plain scan, and warns of nothing."""
    cached = answers(capsysbinary, vault, "--no-server")
    plain = answers(capsysbinary, vault, "--no-cache")
    assert cached == plain
    for _code, _out, err in cached:
        assert "Traceback" not in err
        assert "warning" not in err


def poisoned_pages(path: Path) -> list[tuple[str, cache.Page]]:
    """The pages of the valid cache file at ``path``, POISON added to every record."""
    stored = cache.load(str(path), cache.code_key())
    assert stored is not None, "no valid cache file to poison"
    pages = []
    for rel_path, position in stored.index.items():
        page = stored.page(position)
        page.record += f" {POISON}".encode()
        pages.append((rel_path, page))
    return pages


def poison(path: Path) -> None:
    cache.save(str(path), cache.code_key(), poisoned_pages(path))


def poisoned(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> Path:
    """Warm the cache, poison it; its path."""
    answers(capsysbinary, vault, "--no-server")
    path = cache_path(vault)
    poison(path)
    return path


def find_poison(capsysbinary: pytest.CaptureFixture[bytes], vault: Path, flag: str) -> Answer:
    return run_cli(capsysbinary, ["wiki", "find", POISON, "--paths", "--vault", str(vault), flag])


def test_a_poisoned_file_that_is_valid_is_taken(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """The control for every case below: an undamaged poisoned file is trusted, so those
    cases' plain answers mean the damaged file was refused."""
    poisoned(capsysbinary, vault)
    code, out, err = find_poison(capsysbinary, vault, "--no-server")
    assert (code, sorted(out.decode().splitlines()), err) == (0, sorted(PAGES), "")
    assert find_poison(capsysbinary, vault, "--no-cache")[0] == 1


def test_a_missing_cache_file_is_rebuilt(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    assert not cache_path(vault).exists()
    assert_plain(capsysbinary, vault)
    stored = cache.load(str(cache_path(vault)), cache.code_key())
    assert stored is not None
    assert sorted(stored.index) == sorted(PAGES)


def _truncations() -> list[int]:
    header = cache._HEADER_BYTES
    return [0, 1, len(cache.MAGIC) - 1, len(cache.MAGIC), len(cache.MAGIC) + 4, header - 1, header, header + 7, -1]


@pytest.mark.parametrize("length", _truncations())
def test_a_truncated_cache_file_is_ignored(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, length: int
) -> None:
    path = poisoned(capsysbinary, vault)
    size = path.stat().st_size
    os.truncate(path, length % size)
    assert_plain(capsysbinary, vault)


def test_a_cache_file_truncated_at_every_tenth_is_ignored(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path
) -> None:
    path = poisoned(capsysbinary, vault)
    whole = path.read_bytes()
    for tenth in range(1, 10):
        path.write_bytes(whole[: len(whole) * tenth // 10])
        path.chmod(0o600)
        assert find_poison(capsysbinary, vault, "--no-server") == find_poison(capsysbinary, vault, "--no-cache")


@pytest.mark.parametrize("where", ["poison", "first", "middle", "last"])
def test_one_flipped_byte_in_the_payload_is_ignored(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, where: str
) -> None:
    path = poisoned(capsysbinary, vault)
    data = bytearray(path.read_bytes())
    header = cache._HEADER_BYTES
    at = {
        # Inside a poisoned record: the file would still unmarshal, only the CRC tells.
        "poison": data.find(POISON.encode()) + 1,
        "first": header,
        "middle": (header + len(data)) // 2,
        "last": len(data) - 1,
    }[where]
    data[at] ^= 0x20
    path.write_bytes(bytes(data))
    assert_plain(capsysbinary, vault)


def test_a_file_of_another_format_is_ignored(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers(capsysbinary, vault, "--no-server")
    pages = poisoned_pages(cache_path(vault))
    with monkeypatch.context() as patch:
        patch.setattr(cache, "FORMAT", cache.FORMAT + 1)
        cache.save(str(cache_path(vault)), cache.code_key(), pages)
    assert_plain(capsysbinary, vault)


def test_a_file_of_another_code_is_ignored(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """Another install, another Python: what a record holds may differ."""
    answers(capsysbinary, vault, "--no-server")
    path = cache_path(vault)
    cache.save(str(path), b"another version of mnemosyne", poisoned_pages(path))
    assert_plain(capsysbinary, vault)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["dir", "fifo", "symlink", "dangling symlink"])
def test_no_regular_file_at_the_cache_path_is_ignored(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, tmp_path: Path, kind: str
) -> None:
    path = poisoned(capsysbinary, vault)
    elsewhere = tmp_path / "elsewhere.pages"
    os.replace(path, elsewhere)  # a valid poisoned file, ours, 0600
    if kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path, 0o600)  # opened without O_NONBLOCK it would hang the call
    elif kind == "symlink":
        path.symlink_to(elsewhere)
    else:
        path.symlink_to(tmp_path / "nowhere")
    assert_plain(capsysbinary, vault)
    assert cache.load(str(elsewhere), cache.code_key()) is not None, "the symlink's target was written through"
    assert not list(path.parent.glob("*.tmp"))


def test_a_file_others_may_read_is_ignored(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(capsysbinary, vault)
    path.chmod(0o644)
    assert_plain(capsysbinary, vault)


def test_a_file_owned_by_another_user_is_ignored(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    path = poisoned(capsysbinary, vault)
    os.chown(path, 65534, 65534)
    assert_plain(capsysbinary, vault)


def _info_cache_line(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> str:
    code, out, _err = run_cli(capsysbinary, ["wiki", "info", "--vault", str(vault)])
    assert code == 0
    return next(line for line in out.decode().splitlines() if line.startswith("cache: "))


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
    path = poisoned(capsysbinary, vault)
    cache_dir = path.parent
    _make_unsafe(cache_dir, tmp_path, kind)
    # A page changed: a call that used the dir would write the file again.
    (vault / "a" / "one.md").write_text("---\ntitle: Alpha One\n---\nalpha changed\n", encoding="utf-8")
    before = sorted((entry.name, entry.stat().st_mtime_ns) for entry in os.scandir(cache_dir))
    assert_plain(capsysbinary, vault)
    assert sorted((entry.name, entry.stat().st_mtime_ns) for entry in os.scandir(cache_dir)) == before
    where = cache.cache_dir_path(os.environ)
    assert _info_cache_line(capsysbinary, vault) == f"cache: not used: {where} {UNSAFE_DIRS[kind]}: it is never used"


def _changed_page(vault: Path) -> None:
    (vault / "b" / "four.md").write_text("---\ntitle: Four\n---\nalpha at last\n", encoding="utf-8")


def _refuse_temporaries(error: int) -> object:
    real_open = os.open

    def guarded(path: str, flags: int, mode: int = 0o777, **kwargs: object) -> int:
        if str(path).endswith(".tmp"):
            raise OSError(error, os.strerror(error), path)
        return real_open(path, flags, mode, **kwargs)  # type: ignore[arg-type]

    return guarded


class _FullDisk(io.RawIOBase):
    """A file that takes the first bytes written to it, then reports the disk full."""

    def __init__(self, fd: int):
        self.fd = fd

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        os.write(self.fd, bytes(data)[:10])  # type: ignore[call-overload]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self) -> _FullDisk:
        return self


def _full_disk_open(file: object, *args: object, **kwargs: object) -> object:
    """``open`` for the cache module: the temporary it writes (an fd) is on a full disk."""
    if isinstance(file, int):
        return _FullDisk(file)
    return open(file, *args, **kwargs)  # type: ignore[call-overload]


@pytest.mark.parametrize("fault", ["read-only", "full at create", "full mid-file"])
def test_a_read_only_or_full_disk_keeps_the_old_file(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    answers(capsysbinary, vault, "--no-server")
    path = cache_path(vault)
    old = path.read_bytes()
    old_inode = path.stat().st_ino
    _changed_page(vault)  # so the call writes the file again
    with monkeypatch.context() as patch:
        if fault == "full mid-file":
            patch.setattr(cache, "open", _full_disk_open, raising=False)
        else:
            patch.setattr(os, "open", _refuse_temporaries(errno.EROFS if fault == "read-only" else errno.ENOSPC))
        assert_plain(capsysbinary, vault)
    assert path.read_bytes() == old
    assert path.stat().st_ino == old_inode
    assert sorted(entry.name for entry in path.parent.iterdir()) == [path.name]
    assert_plain(capsysbinary, vault)  # and it is written once the disk has room
    assert path.read_bytes() != old


@pytest.mark.timeout(60)
def test_a_locked_cache_file_does_not_stall_a_call(capsysbinary: pytest.CaptureFixture[bytes], vault: Path) -> None:
    """Another process holding flock(LOCK_EX) on the file: the cache takes no locks."""
    answers(capsysbinary, vault, "--no-server")
    path = cache_path(vault)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('locked', flush=True); time.sleep(60)",
            str(path),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        with open(path, "rb") as probe, pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _changed_page(vault)
        started = time.monotonic()
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


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sixteen_calls_on_a_cold_cache_leave_one_consistent_file(vault: Path) -> None:
    environ = _child_env()
    for index in range(40):
        (vault / "a" / f"page-{index}.md").write_text(f"---\ntitle: Page {index}\n---\nalpha {index}\n")
    query = ("wiki", "find", "alpha", "--limit", "0")
    plain = _cli(vault, environ, *query, "--no-cache").communicate()
    calls = [_cli(vault, environ, *query, "--no-server") for _ in range(16)]
    for call in calls:
        assert call.communicate(timeout=100) == plain
        assert call.returncode == 0
    cache_dir = cache_path(vault).parent
    assert sorted(entry.name for entry in cache_dir.iterdir()) == [cache_path(vault).name]
    stored = cache.load(str(cache_path(vault)), cache.code_key())
    assert stored is not None
    listed = scan(os.path.realpath(vault))
    assert sorted(stored.index) == sorted(
        f"{dir_name}/{name}" for dir_name, _, names in listed.listing for name in names
    )


@pytest.fixture
def big_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """2,000 small pages: a cache write that lasts long enough to be killed inside."""
    root = tmp_path / "big"
    for dir_name in ("a", "b"):
        (root / dir_name).mkdir(parents=True)
    for index in range(2000):
        words = " ".join(random.Random(index).choice(["alpha", "beta", "gamma", "delta"]) for _ in range(8))
        text = f"---\ntitle: Page {index}\ntags: [t{index % 7}]\n---\n{words}\n"
        (root / ("a" if index % 2 else "b") / f"page-{index}.md").write_text(text, encoding="utf-8")
    (root / ".mnemosyne.toml").write_text('dirs = ["a", "b"]\n', encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sigkill_at_any_point_leaves_a_usable_or_ignored_cache(
    capsysbinary: pytest.CaptureFixture[bytes], big_vault: Path
) -> None:
    environ = _child_env()
    query = ["wiki", "find", "alpha", "gamma", "--limit", "5"]
    path = cache_path(big_vault)
    started = time.monotonic()
    whole = _cli(big_vault, environ, *query, "--no-server")
    whole.communicate()
    duration = time.monotonic() - started
    plain = run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-cache"])
    rng = random.Random(20260301)
    spent = time.monotonic()
    outcomes: set[str] = set()
    while time.monotonic() - spent < 8 or len(outcomes) < 2:
        path.unlink(missing_ok=True)
        child = _cli(big_vault, environ, *query, "--no-server")
        time.sleep(rng.uniform(0.5, 1.1) * duration)
        child.send_signal(signal.SIGKILL)
        child.communicate()
        stored = cache.load(str(path), cache.code_key())  # never raises
        if stored is not None:
            assert len(stored.index) == 2000
        outcomes.add("absent" if not path.exists() else "loads" if stored is not None else "ignored")
        assert run_cli(capsysbinary, [*query, "--vault", str(big_vault), "--no-server"]) == plain
        if time.monotonic() - spent > 30:
            break
    # Killed before its write and after it, at least: the kills are spread over the call.
    assert len(outcomes) >= 2, outcomes


def test_stale_temporaries_are_removed_by_the_next_write(
    capsysbinary: pytest.CaptureFixture[bytes], vault: Path
) -> None:
    answers(capsysbinary, vault, "--no-server")
    path = cache_path(vault)
    stale = path.parent / f"{path.name}.4242.1.tmp"
    recent = path.parent / f"{path.name}.4243.2.tmp"
    unrelated = path.parent / "someone-elses.pages.1.2.tmp"
    for temporary in (stale, recent, unrelated):
        temporary.write_bytes(b"half a file")
    two_minutes_ago = time.time_ns() - 120_000_000_000
    for temporary in (stale, unrelated):
        os.utime(temporary, ns=(two_minutes_ago, two_minutes_ago))
    _changed_page(vault)
    assert_plain(capsysbinary, vault)
    # A writer may still be writing the recent one; another vault's are its own writer's.
    assert sorted(entry.name for entry in path.parent.iterdir()) == sorted([path.name, recent.name, unrelated.name])
