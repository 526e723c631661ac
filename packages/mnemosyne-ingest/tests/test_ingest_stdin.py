"""``mnemosyne wiki ingest -``: the source from standard input, through ``main``
with a monkeypatched stdin. It behaves as for a file (atomic, idempotent, exit 65 for bad
input), and the page's name must come from --slug or --title."""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mnemosyne_cli.app import main
from mnemosyne_ingest import IngestArgumentError, landing, stdin_slug

Snapshot = Callable[[Path], dict[str, bytes | None]]
ERROR = "mnemosyne: error: "
SOURCE = "# Weekly Report\n\nMastra and LangGraph, compared again.\n"
NO_NAME = ERROR + "a source read from stdin ('-') has no file name to name the page: pass --slug NAME or --title T\n"


class Stdin(io.TextIOWrapper):
    """sys.stdin as a pipe holding ``data``; ``tty`` makes it a terminal."""

    def __init__(self, data: bytes, *, tty: bool = False):
        self.pipe = io.BytesIO(data)
        super().__init__(self.pipe, encoding="utf-8")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def unread(self) -> bool:
        return self.pipe.tell() == 0


def ingest_stdin(
    monkeypatch: pytest.MonkeyPatch, vault: Path, data: bytes | Stdin | None, *extra: str
) -> tuple[int, Stdin | None]:
    stdin = Stdin(data) if isinstance(data, bytes) else data
    monkeypatch.setattr("sys.stdin", stdin)
    code = main(["wiki", "ingest", "-", "--constellation", "atlas", "--vault", str(vault), *extra])
    return code, stdin


def outcome(capsys: pytest.CaptureFixture[str], code: int) -> tuple[int, str, str]:
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lands_the_page_named_by_slug(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = ingest_stdin(monkeypatch, vault, SOURCE.encode(), "--slug", "weekly")
    assert outcome(capsys, code) == (0, "analyses/weekly.md — Weekly Report\n", "")
    assert main(["wiki", "find", "langgraph", "--vault", str(vault)]) == 0
    assert capsys.readouterr().out == "analyses/weekly.md — Weekly Report\n"


def test_the_page_is_the_one_a_file_of_that_name_gives(
    tmp_path: Path,
    vault: Path,
    write_source: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The plain path: the same bytes in weekly.md. Only the source key differs."""
    file_vault = tmp_path / "file-vault"
    (file_vault / "analyses").mkdir(parents=True)
    source = SOURCE.replace("\n\n", "\n\nCafé, naïve — ok.\r\n\n").encode()
    assert main(["wiki", "ingest", str(write_source("weekly.md", source)), "--constellation", "atlas",
                 "--vault", str(file_vault)]) == 0  # fmt: skip
    assert ingest_stdin(monkeypatch, vault, source, "--slug", "weekly")[0] == 0
    capsys.readouterr()
    from_file = (file_vault / "analyses" / "weekly.md").read_bytes()
    from_stdin = (vault / "analyses" / "weekly.md").read_bytes()
    assert from_stdin == from_file.replace(b"\nsource: weekly.md\n", b"\nsource: stdin\n")
    assert b"\nsource: stdin\n" in from_stdin


def test_the_same_input_again_is_already_ingested(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Snapshot
) -> None:
    ingest_stdin(monkeypatch, vault, SOURCE.encode(), "--slug", "weekly")
    capsys.readouterr()
    before = snapshot(vault)
    code, _ = ingest_stdin(monkeypatch, vault, SOURCE.encode(), "--slug", "weekly")
    assert outcome(capsys, code) == (
        0,
        "analyses/weekly.md — Weekly Report\n",
        "already ingested: analyses/weekly.md has this content; nothing was written\n",
    )
    assert snapshot(vault) == before
    code, _ = ingest_stdin(monkeypatch, vault, b"# Weekly Report\n\nOther.\n", "--slug", "weekly")
    assert outcome(capsys, code) == (
        4,
        "",
        ERROR + "analyses/weekly.md already exists with different content: pass --force to replace it, "
        "or another --slug\n",
    )
    assert snapshot(vault) == before


def test_title_names_the_page_when_there_is_no_slug(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = ingest_stdin(monkeypatch, vault, b"No heading here.\n", "--title", "Agent Ecosystem — March 2026")
    assert outcome(capsys, code) == (0, "analyses/agent-ecosystem-march-2026.md — Agent Ecosystem — March 2026\n", "")


def test_without_a_heading_the_slug_is_the_title(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = ingest_stdin(monkeypatch, vault, b"No heading here.\n", "--slug", "loose-notes")
    assert outcome(capsys, code) == (0, "analyses/loose-notes.md — loose-notes\n", "")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), NO_NAME),
        (
            ("--title", "--- !!"),
            ERROR + "--title '--- !!' has no letter or digit to make a file name of: pass --slug NAME\n",
        ),
        (
            ("--slug", "../x"),
            ERROR + "--slug '../x' contains a path separator: pass a plain file name without "
            ".md, e.g. --slug my-report\n",
        ),
    ],
)
def test_no_usable_name_is_a_usage_error_and_stdin_is_left_unread(
    vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    extra: tuple[str, ...],
    message: str,
) -> None:
    before = snapshot(vault)
    code, stdin = ingest_stdin(monkeypatch, vault, SOURCE.encode(), *extra)
    assert outcome(capsys, code) == (64, "", message)
    assert stdin is not None
    assert stdin.unread()
    assert snapshot(vault) == before


def test_a_terminal_is_refused_not_waited_on(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Stdin(SOURCE.encode(), tty=True)
    code, _ = ingest_stdin(monkeypatch, vault, terminal, "--slug", "weekly")
    assert outcome(capsys, code) == (
        64,
        "",
        ERROR + "SOURCE is '-' but stdin is a terminal: pipe the source in "
        "(cat notes.md | mnemosyne wiki ingest - ...) or pass a file\n",
    )
    assert terminal.unread()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "source 'stdin' is empty: pass a markdown file with content"),
        (b" \n\t\n", "source 'stdin' is empty: pass a markdown file with content"),
        (None, "source 'stdin' is empty: pass a markdown file with content"),  # stdin closed (<&-)
        (b"# T\n\xff\n", "source 'stdin' is not UTF-8 (invalid byte at offset 4): convert it to UTF-8"),
        (
            b"---\ntitle: T\n",
            "source 'stdin' opens a frontmatter block that is never closed: add the closing '---' line",
        ),
        (
            b"---\ntitle: [\n---\nx\n",
            "the frontmatter of source 'stdin' is not valid YAML: fix it, or remove the block",
        ),
        (
            b"---\n- a\n---\nx\n",
            "the frontmatter of source 'stdin' is not a mapping of keys: fix it, or remove the block",
        ),
    ],
)
def test_bad_input_exits_65_and_writes_nothing(
    vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    data: bytes | None,
    message: str,
) -> None:
    before = snapshot(vault)
    code, _ = ingest_stdin(monkeypatch, vault, data, "--slug", "weekly")
    assert outcome(capsys, code) == (65, "", ERROR + message + "\n")
    assert snapshot(vault) == before


def test_input_beyond_the_bound_exits_65_without_reading_it_all(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Snapshot
) -> None:
    monkeypatch.setattr(landing, "MAX_STDIN_BYTES", 1 << 20)
    before = snapshot(vault)
    stdin = Stdin(b"x" * (3 << 20))
    code, _ = ingest_stdin(monkeypatch, vault, stdin, "--slug", "weekly")
    assert outcome(capsys, code) == (
        65,
        "",
        ERROR + "the source on stdin is larger than 1 MiB, far more than a page: check what is piped in\n",
    )
    assert stdin.pipe.tell() == (1 << 20) + 1
    assert snapshot(vault) == before
    # At the bound exactly it is a source like any other.
    code, _ = ingest_stdin(monkeypatch, vault, b"# Big\n" + b"x" * ((1 << 20) - 6), "--slug", "big")
    assert outcome(capsys, code) == (0, "analyses/big.md — Big\n", "")


def test_a_failing_read_exits_65(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class FailingPipe(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    class FailingStdin(Stdin):
        @property
        def buffer(self) -> io.BytesIO:
            return FailingPipe()

    code, _ = ingest_stdin(monkeypatch, vault, FailingStdin(b""), "--slug", "weekly")
    assert outcome(capsys, code) == (65, "", ERROR + "cannot read the source from stdin: Input/output error\n")


def test_a_full_disk_exits_74_and_leaves_nothing(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Snapshot
) -> None:
    before = snapshot(vault)

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    code, _ = ingest_stdin(monkeypatch, vault, SOURCE.encode(), "--slug", "weekly")
    monkeypatch.undo()
    assert outcome(capsys, code) == (
        74,
        "",
        ERROR + "cannot write analyses/weekly.md (No space left on device), nothing was written: "
        "free some disk space and run it again\n",
    )
    assert snapshot(vault) == before


def test_dry_run_prints_the_page_and_writes_nothing(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Snapshot
) -> None:
    before = snapshot(vault)
    code, _ = ingest_stdin(monkeypatch, vault, SOURCE.encode(), "--slug", "weekly", "--dry-run")
    code_out, out, err = outcome(capsys, code)
    assert (code_out, err) == (0, "dry run: would write analyses/weekly.md — Weekly Report; nothing was written\n")
    assert out.startswith("---\ntitle: Weekly Report\nconstellation: atlas\ntype: analysis\nsource: stdin\n")
    assert out.endswith("---\n" + SOURCE)
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Weekly Report", "weekly-report"),
        ("  Mastra   vs. LangGraph: 2026!  ", "mastra-vs-langgraph-2026"),
        ("snake_case_title", "snake-case-title"),
        ("Überblick Straße", "überblick-strasse"),
        ("東京メモ", "東京メモ"),
        ("é" * 200, "é" * 126),  # 2 bytes each: 252 + len(".md") fits in 255 bytes
    ],
)
def test_slug_made_from_title(title: str, slug: str) -> None:
    assert stdin_slug(None, title) == slug
    assert stdin_slug("given", title) == "given"


def test_slug_needs_a_name() -> None:
    with pytest.raises(IngestArgumentError, match="pass --slug NAME or --title T"):
        stdin_slug(None, None)
