"""Faults: unreadable pages, a vault or page vanishing mid-scan, a reader that
closes stdout early, Ctrl-C, a full disk during ingest, two ingests racing for one slug,
and concurrent recall log appends."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from index_harness import build_index
from pyfakefs.fake_filesystem_unittest import Patcher

import mnemosyne_core.find
import mnemosyne_core.page
import mnemosyne_core.vault
from mnemosyne_cli.app import main

WARNING = "mnemosyne: warning: "
INCOMPLETE = "mnemosyne: error: the search was incomplete (see the warnings below): fix them and search again\n"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def mnemosyne_command() -> list[str]:
    """The installed console script beside this interpreter (the way agents run it)."""
    script = Path(sys.executable).with_name("mnemosyne")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mnemosyne_cli"]


def write_pages(root: Path, pages: dict[str, str]) -> Path:
    for rel_path, text in pages.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# --- unreadable pages (pyfakefs, as a user who is not root) -----------------------------------


@pytest.fixture
def non_root_fs() -> Any:
    with Patcher(allow_root_user=False) as patcher:
        fs = patcher.fs
        assert fs is not None
        fs.create_file("/vault/atlas/open.md", contents="---\ntitle: Open Page\n---\nshared word\n")
        fs.create_file("/vault/atlas/locked.md", contents="---\ntitle: Locked Page\n---\nshared word, only-locked\n")
        os.chmod("/vault/atlas/locked.md", 0o000)
        yield fs


def test_unreadable_page_is_named_and_the_search_goes_on(non_root_fs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "wiki", "find", "shared", "--vault", "/vault") == (
        0,
        "atlas/open.md — Open Page\n",
        f"{WARNING}atlas/locked.md: cannot read (Permission denied); skipped\n",
    )


def test_unreadable_page_and_no_match_is_exit_3(non_root_fs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "wiki", "find", "only-locked", "--vault", "/vault") == (
        3,
        "",
        "no wiki page matches 'only-locked' among the pages that could be read\n"
        + INCOMPLETE
        + f"{WARNING}atlas/locked.md: cannot read (Permission denied); skipped\n",
    )


def test_unreadable_page_and_no_match_is_exit_3_with_json_too(
    non_root_fs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "wiki", "find", "only-locked", "--vault", "/vault", "--json")
    assert (code, out) == (3, "")


def test_unreadable_dir_makes_the_search_incomplete(non_root_fs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    non_root_fs.create_file("/vault/hades/page.md", contents="nothing to see\n")
    # Search but no read permission: the dir is there, its listing is not. (pyfakefs also
    # hides the type of a 0o000 dir, which a real file system does not.)
    os.chmod("/vault/atlas", 0o100)
    assert run_cli(capsys, "wiki", "find", "shared", "--vault", "/vault") == (
        3,
        "",
        "no wiki page matches 'shared' among the pages that could be read\n"
        + INCOMPLETE
        + f"{WARNING}atlas/: cannot list (Permission denied); its pages were not searched\n",
    )


# --- things vanishing during the scan ---------------------------------------------------------


@pytest.mark.parametrize(
    ("reader", "flags"), [(mnemosyne_core.find, ["--no-cache"]), (mnemosyne_core.page, ["--no-server"])]
)
def test_page_vanishing_mid_scan_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reader: Any, flags: list[str]
) -> None:
    write_pages(tmp_path, {"atlas/gone.md": "kestrel\n", "atlas/stays.md": "kestrel\n"})
    if reader is mnemosyne_core.page:
        build_index(tmp_path)  # the pages were just written: racy, so the call reads them again
    real_open_page = mnemosyne_core.page.open_page

    def open_after_deleting_gone(read_path: str) -> int:
        if read_path.endswith("gone.md"):
            os.remove(read_path)
        return real_open_page(read_path)

    monkeypatch.setattr(reader, "open_page", open_after_deleting_gone)
    assert run_cli(capsys, "wiki", "find", "kestrel", "--vault", str(tmp_path), *flags) == (
        0,
        "atlas/stays.md — stays\n",
        f"{WARNING}atlas/gone.md: cannot read (vanished during the search); skipped\n",
    )


def test_vault_vanishing_mid_scan_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = write_pages(tmp_path / "vault", {"atlas/one.md": "kestrel\n", "hades/two.md": "kestrel\n"})
    real_scan_dir = mnemosyne_core.vault._scan_dir

    def scan_then_delete_the_vault(result: Any, dir_name: str, dir_path: str, racy_from: int) -> None:
        real_scan_dir(result, dir_name, dir_path, racy_from)
        shutil.rmtree(vault, ignore_errors=True)

    monkeypatch.setattr(mnemosyne_core.vault, "_scan_dir", scan_then_delete_the_vault)
    assert run_cli(capsys, "wiki", "find", "kestrel", "--vault", str(vault)) == (
        3,
        "",
        "no wiki page matches 'kestrel' among the pages that could be read\n"
        + INCOMPLETE
        + f"{WARNING}atlas/one.md: cannot read (vanished during the search); skipped\n"
        + f"{WARNING}hades/: cannot list (No such file or directory); its pages were not searched\n",
    )


# --- stdout closed early, Ctrl-C (real processes) ------------------------------------------------


@pytest.fixture(scope="module")
def wide_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3000 pages whose listing (~400 KB) overflows any pipe buffer."""
    vault = tmp_path_factory.mktemp("wide")
    (vault / "atlas").mkdir()
    for number in range(3000):
        (vault / "atlas" / f"page-{number:04d}.md").write_text(
            f"---\ntitle: Kestrel Page {number} {'with a long title ' * 5}\n---\nkestrel\n", encoding="utf-8"
        )
    return vault


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["plain", "json"])
def test_reader_closing_stdout_early_ends_quietly(wide_vault: Path, extra: list[str]) -> None:
    """``mnemosyne wiki find kestrel --limit 0 | head -1``."""
    with subprocess.Popen(
        [*mnemosyne_command(), "wiki", "find", "kestrel", "--limit", "0", "--vault", str(wide_vault), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        try:
            first_line = process.stdout.readline()
            process.stdout.close()
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()  # a child still running would hang the with block's wait
    code = process.returncode
    assert first_line.startswith(b"atlas/page-0000.md" if not extra else b'[{"path": "atlas/page-0000.md"')
    assert (code, stderr) == (0, b"")


def test_reader_closing_stdout_before_cat_ends_quietly(tmp_path: Path) -> None:
    write_pages(tmp_path, {"atlas/big.md": "---\ntitle: Big\n---\n" + "kestrel line\n" * 200_000})
    with subprocess.Popen(
        [*mnemosyne_command(), "wiki", "find", "kestrel", "--cat", "--vault", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        try:
            process.stdout.close()
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()  # a child still running would hang the with block's wait
    assert (process.returncode, stderr) == (0, b"")


# The child signals that the search has started, then blocks inside it until interrupted.
# It takes SIGINT as Python does when started from a terminal: a test run started in the
# background of a non-interactive shell (as a CI runner may start it) passes SIGINT on ignored.
SIGINT_CHILD = """
import signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)
import mnemosyne_core.find as find, mnemosyne_core.page as page
real_open_page = find.open_page
def open_page_after_waiting(read_path):
    sys.stderr.write("searching\\n")
    sys.stderr.flush()
    threading.Event().wait()
    return real_open_page(read_path)
find.open_page = page.open_page = open_page_after_waiting
from mnemosyne_cli.app import run
sys.argv = ["mnemosyne", *sys.argv[1:]]
run()
"""


def test_sigint_during_a_search_exits_130_without_traceback(tmp_path: Path) -> None:
    write_pages(tmp_path, {"atlas/page.md": "kestrel\n"})
    with subprocess.Popen(
        [sys.executable, "-c", SIGINT_CHILD, "wiki", "find", "kestrel", "--vault", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stderr is not None
        try:
            assert process.stderr.readline() == b"searching\n"
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=60)
        finally:
            process.kill()  # a child still running would hang the with block's wait
    assert (process.returncode, stdout, stderr) == (130, b"", b"\n")


# --- ingest: a full disk, two ingests racing ---------------------------------------------------


def test_disk_full_during_ingest_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = write_pages(tmp_path / "vault", {"analyses/existing.md": "---\ntitle: Existing\n---\nbody\n"})
    source = tmp_path / "report.md"
    source.write_text("---\ntitle: Quarterly Kestrel Report\n---\n" + "kestrel data\n" * 10_000, encoding="utf-8")
    before = sorted(os.listdir(vault / "analyses"))
    real_write = os.write

    def write_until_full(fd: int, data: Any) -> int:
        if fd > 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write_until_full)
    code, out, err = run_cli(capsys, "wiki", "ingest", str(source), "--constellation", "hermes", "--vault", str(vault))
    monkeypatch.undo()
    assert (code, out) == (74, "")
    assert err.startswith("mnemosyne: error: ")
    assert err.count("\n") == 1
    assert "No space left on device" in err
    assert sorted(os.listdir(vault / "analyses")) == before


def test_two_ingests_racing_for_one_slug(tmp_path: Path) -> None:
    """Run both at once, several times: one lands, the other refuses with 4, and the page is
    always exactly one of the two."""
    sources = []
    for letter in "AB":
        source = tmp_path / letter / "race.md"
        source.parent.mkdir()
        source.write_text(f"---\ntitle: Race {letter}\n---\n" + f"{letter * 60}\n" * 20_000, encoding="utf-8")
        sources.append(source)
    for round_number in range(3):
        vault = write_pages(tmp_path / f"vault-{round_number}", {"analyses/other.md": "other\n"})
        command = [*mnemosyne_command(), "wiki", "ingest", "--constellation", "hermes", "--vault", str(vault)]
        processes = [
            subprocess.Popen([*command, str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for source in sources
        ]
        errors = [process.communicate(timeout=60)[1] for process in processes]
        assert [error for error in errors if b"Traceback" in error] == []
        assert sorted(process.returncode for process in processes) == [0, 4]
        page = (vault / "analyses" / "race.md").read_text(encoding="utf-8")
        winner = "A" if "title: Race A" in page else "B"
        loser = "B" if winner == "A" else "A"
        assert page.count(winner * 60 + "\n") == 20_000
        assert loser * 60 not in page
        assert f"Race {loser}" not in page
        assert sorted(os.listdir(vault / "analyses")) == ["other.md", "race.md"]


# --- recall: concurrent log appends stay whole --------------------------------------------------


@pytest.mark.slow
def test_concurrent_recall_log_appends_stay_whole(tmp_path: Path) -> None:
    vault = write_pages(tmp_path / "vault", {"atlas/kestrel.md": "---\ntitle: Kestrel\ntags: [kestrel]\n---\nbody\n"})
    memory = tmp_path / "memory"
    callers = 12
    processes = [
        subprocess.Popen(
            [
                *mnemosyne_command(),
                "wiki",
                "recall",
                f"kestrel topic-{number:02d}-" + "x" * 3000,
                "--vault",
                str(vault),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "MNEMOSYNE_MEMORY_DIR": str(memory)},
        )
        for number in range(callers)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=60)
        assert (process.returncode, stderr) == (0, b"")
    (log,) = memory.glob("*/log.md")
    entries = log.read_text(encoding="utf-8").split("\n\n")
    assert len(entries) == callers
    topics = []
    for entry in entries:
        lines = entry.rstrip("\n").split("\n")
        assert lines[0].startswith("## ")
        assert [line.split(":", 1)[0] for line in lines[1:]] == [
            "- **Result**",
            "- **Query**",
            "- **Match-Count**",
            "- **Read-Slugs**",
            "- **Observation**",
        ]
        query = lines[2].removeprefix("- **Query**: ")
        assert query.endswith("x" * 3000)
        topics.append(query.split()[1])
    assert sorted(topics) == [f"topic-{number:02d}-" + "x" * 3000 for number in range(callers)]
