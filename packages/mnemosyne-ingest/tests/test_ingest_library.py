"""``mnemosyne_ingest.ingest`` on real (tmp_path) and fake (pyfakefs) file systems: every
refusal writes nothing, the same page twice writes once, writes are atomic and races have
one winner."""

from __future__ import annotations

import datetime
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from vault_pages import no_vault_message

from mnemosyne_core import VaultError, search
from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_ingest import (
    STATUS_ALREADY_INGESTED,
    STATUS_DRY_RUN,
    STATUS_INGESTED,
    STATUS_REPLACED,
    BadSourceError,
    IngestArgumentError,
    IngestResult,
    IngestUnverifiedError,
    TargetExistsError,
    WriteFailedError,
    ingest,
)
from mnemosyne_ingest import landing as ingest_module

#: The injected clock: the page is dated by its UTC date.
TODAY = datetime.datetime(2026, 4, 20, 9, 30, tzinfo=datetime.UTC)
LATER = datetime.datetime(2026, 5, 1, 23, 59, tzinfo=datetime.UTC)
Snapshot = Callable[[Path], dict[str, bytes | None]]
WriteSource = Callable[..., Path]


def run(source: Path, vault: Path, **options: Any) -> IngestResult:
    options.setdefault("constellation", "atlas")
    options.setdefault("now", TODAY)
    return ingest(source, vault=vault, **options)


def expected_page(report: str, *, ingested: str = "2026-04-20") -> bytes:
    head, _, body = report.partition("---\n")[2].partition("---\n")
    return (
        "---\n"
        + head
        + "constellation: atlas\ntype: analysis\nsource: report.md\n"
        + f"ingested: {ingested}\nupdated: {ingested}\n---\n"
        + body
    ).encode()


def test_lands_the_page_and_find_locates_it(vault: Path, write_source: WriteSource, report: str) -> None:
    result = run(write_source(), vault)
    assert (result.path, result.title, result.constellation, result.type, result.status) == (
        "analyses/report.md",
        "Agent Ecosystem Report — March 2026",
        "atlas",
        "analysis",
        STATUS_INGESTED,
    )
    assert result.target == str(vault / "analyses" / "report.md")
    assert (vault / "analyses" / "report.md").read_bytes() == expected_page(report)
    assert [match.path for match in search(vault, ["mastra"]).matches] == ["analyses/report.md"]
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]


def test_vault_defaults_to_aion_vault(vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AION_VAULT", str(vault))
    result = ingest(write_source(), constellation="atlas", now=TODAY)
    assert result.status == STATUS_INGESTED
    assert (vault / "analyses" / "report.md").exists()


def test_default_date_is_today_in_utc(vault: Path, write_source: WriteSource) -> None:
    before = datetime.datetime.now(datetime.UTC).date()
    ingest(write_source(), vault=vault, constellation="atlas")
    after = datetime.datetime.now(datetime.UTC).date()
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    assert f"\ningested: {before.isoformat()}\n" in text or f"\ningested: {after.isoformat()}\n" in text


@pytest.mark.parametrize(
    ("now", "date"),
    [
        (datetime.datetime(2026, 4, 20, 23, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))), "2026-04-21"),
        (datetime.datetime(2026, 4, 21, 1, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=5))), "2026-04-20"),
        (datetime.datetime(2026, 4, 20, 23, 30), "2026-04-20"),  # naive: taken as UTC
    ],
)
def test_the_injected_clock_dates_the_page_by_its_utc_date(
    vault: Path, write_source: WriteSource, report: str, now: datetime.datetime, date: str
) -> None:
    run(write_source(), vault, now=now)
    assert (vault / "analyses" / "report.md").read_bytes() == expected_page(report, ingested=date)


def test_slug_dir_title_and_type_options(vault: Path, write_source: WriteSource) -> None:
    result = run(write_source(), vault, dir="atlas", slug="ecosystem", title="Ecosystem Notes", type="howto")
    assert (result.path, result.title, result.type) == ("atlas/ecosystem.md", "Ecosystem Notes", "howto")
    text = (vault / "atlas" / "ecosystem.md").read_text(encoding="utf-8")
    assert "\ntitle: Ecosystem Notes\n" in text
    assert "\ntype: howto\n" in text


def test_a_scanned_dir_that_does_not_exist_yet_is_created(vault: Path, write_source: WriteSource) -> None:
    result = run(write_source(), vault, dir="hermes", type="note")
    assert result.path == "hermes/report.md"
    assert (vault / "hermes" / "report.md").is_file()


def test_the_vault_config_decides_the_scanned_dirs(vault: Path, write_source: WriteSource) -> None:
    (vault / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (vault / "wiki").mkdir()
    result = run(write_source(), vault, dir="wiki", type="note")
    assert result.path == "wiki/report.md"
    with pytest.raises(IngestArgumentError, match=r"^--dir 'analyses' is not a scanned dir .*: pass one of wiki$"):
        run(write_source(), vault)


# --- refusals: each one leaves the vault exactly as it was ---


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"constellation": "atlaz"},
            IngestArgumentError,
            "^unknown constellation 'atlaz': pass one of " + ", ".join(CONSTELLATIONS) + "$",
        ),
        ({"constellation": "Atlas"}, IngestArgumentError, "^unknown constellation 'Atlas'"),
        (
            {"dir": "nowhere"},
            IngestArgumentError,
            r"^--dir 'nowhere' is not a scanned dir of this vault, so find would never list the page: "
            r"pass one of atlas, .*, analyses$",
        ),
        ({"dir": "../analyses"}, IngestArgumentError, r"^--dir '\.\./analyses' has a part starting with '\.'"),
        ({"dir": ".git"}, IngestArgumentError, r"^--dir '\.git' has a part starting with '\.'"),
        ({"dir": ""}, IngestArgumentError, r"^--dir '' is empty"),
        ({"slug": "a/b"}, IngestArgumentError, r"^--slug 'a/b' contains a path separator: pass a plain file name"),
        ({"slug": "a\\b"}, IngestArgumentError, r"^--slug 'a\\\\b' contains a path separator"),
        ({"slug": ".."}, IngestArgumentError, r"^--slug '\.\.' contains '\.\.'"),
        ({"slug": "a..b"}, IngestArgumentError, r"^--slug 'a\.\.b' contains '\.\.'"),
        ({"slug": ".hidden"}, IngestArgumentError, r"^--slug '\.hidden' starts with '\.'"),
        ({"slug": "nul\0byte"}, IngestArgumentError, r"^--slug 'nul\\x00byte' contains NUL"),
        ({"slug": "a" * 253}, IngestArgumentError, r"is too long: with \.md it must fit in 255 bytes"),
        ({"slug": "bell\a"}, IngestArgumentError, r"contains a control character"),
        ({"slug": ""}, IngestArgumentError, r"^--slug '' is blank"),
        ({"slug": " padded"}, IngestArgumentError, r"^--slug ' padded' is blank or has surrounding spaces"),
        ({"slug": "page.md"}, IngestArgumentError, r"^--slug 'page\.md' ends in '\.md'"),
        ({"title": " "}, IngestArgumentError, r"^--title is blank"),
        ({"type": ""}, IngestArgumentError, r"^--type is blank"),
        ({"dir": "hermes"}, IngestArgumentError, r"^no type for a page in hermes/"),
    ],
)
def test_bad_arguments_are_refused_and_nothing_is_written(
    vault: Path,
    write_source: WriteSource,
    snapshot: Snapshot,
    options: dict[str, str],
    error: type[Exception],
    message: str,
) -> None:
    source = write_source()
    before = snapshot(vault)
    with pytest.raises(error, match=message):
        run(source, vault, **options)
    assert snapshot(vault) == before


def test_a_hidden_source_stem_needs_a_slug(vault: Path, write_source: WriteSource, snapshot: Snapshot) -> None:
    source = write_source(".draft.md")
    before = snapshot(vault)
    with pytest.raises(
        IngestArgumentError, match=r"^the source's stem '\.draft' starts with '\.' .*: pass --slug NAME$"
    ):
        run(source, vault)
    assert snapshot(vault) == before
    assert run(source, vault, slug="draft").path == "analyses/draft.md"


def test_a_target_symlink_that_resolves_elsewhere_is_refused(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("precious\n", encoding="utf-8")
    (vault / "analyses" / "report.md").symlink_to(outside)
    before = snapshot(vault)
    for force in (False, True):
        with pytest.raises(
            IngestArgumentError, match=r"^analyses/report\.md is a symlink, so the page would resolve outside analyses/"
        ):
            run(write_source(), vault, force=force)
    assert snapshot(vault) == before
    assert outside.read_text(encoding="utf-8") == "precious\n"


def test_a_dir_symlink_leaving_the_vault_is_refused(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (vault / "hermes").symlink_to(tmp_path / "elsewhere")
    before = snapshot(tmp_path / "elsewhere")
    with pytest.raises(IngestArgumentError, match=r"^hermes/ is a symlink that leaves the vault, so find skips it"):
        run(write_source(), vault, dir="hermes", type="note")
    assert snapshot(tmp_path / "elsewhere") == before


def test_a_dir_that_is_a_file_is_refused(vault: Path, write_source: WriteSource, snapshot: Snapshot) -> None:
    (vault / "hermes").write_text("not a dir\n", encoding="utf-8")
    before = snapshot(vault)
    with pytest.raises(IngestArgumentError, match=r"^hermes/ in the vault is not a directory"):
        run(write_source(), vault, dir="hermes", type="note")
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda root: root / "missing.md",
            r"^source '.*missing\.md' does not exist: pass the path of a markdown file$",
        ),
        (lambda root: root, r"^source '.*' is not a regular file: pass the path of a markdown file$"),
        (lambda root: _fifo(root / "pipe.md"), r"^source '.*pipe\.md' is not a regular file"),
        (lambda root: _file(root / "empty.md", b""), r"^source 'empty\.md' is empty: "),
        (lambda root: _file(root / "blank.md", b"\n \n"), r"^source 'blank\.md' is empty: "),
        (
            lambda root: _file(root / "latin1.md", "café\n".encode("latin-1")),
            r"^source 'latin1\.md' is not UTF-8 \(invalid byte at offset 3\)",
        ),
        (
            lambda root: _file(root / "open.md", b"---\ntitle: x\n"),
            r"^source 'open\.md' opens a frontmatter block that is never closed",
        ),
        (
            lambda root: _file(root / "broken.md", b"---\ntitle: [x\n---\n"),
            r"^the frontmatter of source 'broken\.md' is not valid YAML",
        ),
    ],
)
def test_bad_sources_are_refused_and_nothing_is_written(
    vault: Path, tmp_path: Path, snapshot: Snapshot, make: Callable[[Path], Path], message: str
) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    source = make(sources)
    before = snapshot(vault)
    with pytest.raises(BadSourceError, match=message):
        run(source, vault)
    assert snapshot(vault) == before


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def test_an_unreadable_source_is_refused(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source()
    real_open = os.open

    def denied(path: Any, *args: Any) -> int:
        if os.fspath(path) == str(source):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", denied)
    before = snapshot(vault)
    with pytest.raises(
        BadSourceError, match=r"^cannot read source '.*report\.md': Permission denied; check its permissions$"
    ):
        run(source, vault)
    assert snapshot(vault) == before


@pytest.mark.parametrize(
    ("vault_of", "message"),
    [
        (lambda root: root / "nope", r"^vault '.*nope' does not exist: pass --vault PATH"),
        (lambda root: _file(root / "file", b"x"), r"^vault '.*file' is not a directory"),
        (lambda root: _empty_dir(root / "bare"), r"^--dir 'analyses' would create analyses/, one of the default dirs"),
    ],
)
def test_a_missing_vault_is_refused_and_nothing_is_written(
    tmp_path: Path, write_source: WriteSource, snapshot: Snapshot, vault_of: Callable[[Path], Path], message: str
) -> None:
    source = write_source()
    before = snapshot(tmp_path)
    with pytest.raises(VaultError, match=message):
        run(source, vault_of(tmp_path))
    after = snapshot(tmp_path)
    after.pop("file", None)
    after.pop("bare", None)
    assert after == before


def _empty_dir(path: Path) -> Path:
    path.mkdir()
    return path


def test_no_vault_at_all_is_refused(write_source: WriteSource) -> None:
    with pytest.raises(VaultError) as raised:
        ingest(write_source(), constellation="atlas")
    assert str(raised.value) == no_vault_message()


# --- existing targets: idempotence and --force ---


def test_the_same_page_twice_is_already_ingested_and_not_rewritten(
    vault: Path, write_source: WriteSource, report: str
) -> None:
    source = write_source()
    assert run(source, vault).status == STATUS_INGESTED
    target = vault / "analyses" / "report.md"
    os.utime(target, (1_000_000, 1_000_000))
    inode = target.stat().st_ino
    again = run(source, vault, now=LATER)
    assert again.status == STATUS_ALREADY_INGESTED
    assert target.read_bytes() == expected_page(report)  # the first date stays
    assert (target.stat().st_ino, target.stat().st_mtime) == (inode, 1_000_000)
    assert run(source, vault, now=LATER, force=True).status == STATUS_ALREADY_INGESTED
    assert target.stat().st_ino == inode


def test_a_re_ingest_later_the_same_day_or_on_a_later_day_is_a_no_op(
    vault: Path, write_source: WriteSource, report: str
) -> None:
    """The dates ingest sets (ingested, and updated when the source has none) are set
    aside when comparing, so the clock alone never makes a source look changed."""
    source = write_source()
    run(source, vault)
    target = vault / "analyses" / "report.md"
    os.utime(target, (1_000_000, 1_000_000))
    for later in (TODAY + datetime.timedelta(hours=14), LATER, LATER + datetime.timedelta(days=400)):
        assert run(source, vault, now=later).status == STATUS_ALREADY_INGESTED
        assert run(source, vault, now=later, dry_run=True).would == STATUS_ALREADY_INGESTED
    assert target.read_bytes() == expected_page(report, ingested="2026-04-20")
    assert target.stat().st_mtime == 1_000_000


def test_force_on_a_changed_page_gets_the_new_date(vault: Path, write_source: WriteSource) -> None:
    source = write_source()
    run(source, vault)
    assert run(source, vault, now=LATER, title="Another Title", force=True).status == STATUS_REPLACED
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    assert "\ntitle: Another Title\n" in text
    assert "\ningested: 2026-05-01\nupdated: 2026-05-01\n---\n" in text


def test_a_source_updated_is_kept_and_compared(vault: Path, write_source: WriteSource) -> None:
    dated_report = "---\ntitle: Dated Report\nupdated: 2026-02-01\n---\nbody\n"
    source = write_source(content=dated_report)
    run(source, vault)
    target = vault / "analyses" / "report.md"
    assert target.read_text(encoding="utf-8") == (
        "---\ntitle: Dated Report\nupdated: 2026-02-01\nconstellation: atlas\ntype: analysis\n"
        "source: report.md\ningested: 2026-04-20\n---\nbody\n"
    )
    assert run(source, vault, now=LATER).status == STATUS_ALREADY_INGESTED
    write_source(content=dated_report.replace("2026-02-01", "2026-03-01"))
    with pytest.raises(TargetExistsError):  # the source's own date changed: that is content
        run(source, vault, now=LATER)
    assert run(source, vault, now=LATER, force=True).status == STATUS_REPLACED
    assert "\nupdated: 2026-03-01\n" in target.read_text(encoding="utf-8")


def test_a_page_an_older_ingest_left_undated_needs_force(vault: Path, write_source: WriteSource, report: str) -> None:
    """An older ingest wrote no updated; such a page differs, and --force dates it."""
    target = vault / "analyses" / "report.md"
    target.write_bytes(expected_page(report).replace(b"updated: 2026-04-20\n", b""))
    with pytest.raises(TargetExistsError):
        run(write_source(), vault, now=LATER)
    assert run(write_source(), vault, now=LATER, force=True).status == STATUS_REPLACED
    assert target.read_bytes() == expected_page(report, ingested="2026-05-01")


def test_different_content_is_refused_without_force(vault: Path, write_source: WriteSource, snapshot: Snapshot) -> None:
    run(write_source(), vault)
    before = snapshot(vault)
    for changed in ({"title": "Another Title"}, {"type": "decision"}, {"constellation": "hermes"}):
        with pytest.raises(
            TargetExistsError,
            match=r"^analyses/report\.md already exists with different content: "
            r"pass --force to replace it, or another --slug$",
        ):
            run(write_source(), vault, **changed)
    with pytest.raises(TargetExistsError):
        run(write_source(content="---\ntitle: Agent Ecosystem Report — March 2026\n---\nnew body\n"), vault)
    assert snapshot(vault) == before


def test_an_existing_hand_written_page_is_never_clobbered(
    vault: Path, write_source: WriteSource, snapshot: Snapshot
) -> None:
    before = snapshot(vault)
    with pytest.raises(TargetExistsError):
        run(write_source("vector-stores.md"), vault)
    assert snapshot(vault) == before


def test_force_replaces_different_content(vault: Path, write_source: WriteSource) -> None:
    source = write_source()
    run(source, vault)
    result = run(source, vault, title="Another Title", force=True)
    assert result.status == STATUS_REPLACED
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    assert "\ntitle: Another Title\n" in text
    assert [entry for entry in os.listdir(vault / "analyses") if entry.startswith(".")] == []


def test_a_target_that_is_not_a_file_is_refused_even_with_force(
    vault: Path, write_source: WriteSource, snapshot: Snapshot
) -> None:
    (vault / "analyses" / "report.md").mkdir()
    before = snapshot(vault)
    for force in (False, True):
        with pytest.raises(TargetExistsError, match=r"^analyses/report\.md exists and is not a regular file"):
            run(write_source(), vault, force=force)
    assert snapshot(vault) == before


# --- dry run ---


def test_dry_run_touches_nothing_and_reports_the_plan(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, report: str
) -> None:
    source = write_source()
    before = snapshot(vault)
    result = run(source, vault, dry_run=True)
    assert (result.status, result.would) == (STATUS_DRY_RUN, STATUS_INGESTED)
    assert result.page.content == expected_page(report)
    assert snapshot(vault) == before

    run(source, vault)
    before = snapshot(vault)
    assert run(source, vault, dry_run=True, now=LATER).would == STATUS_ALREADY_INGESTED
    assert run(source, vault, dry_run=True, title="New", force=True).would == STATUS_REPLACED
    with pytest.raises(TargetExistsError):
        run(source, vault, dry_run=True, title="New")
    assert snapshot(vault) == before


def test_dry_run_does_not_create_a_missing_dir(vault: Path, write_source: WriteSource) -> None:
    result = run(write_source(), vault, dir="hermes", type="note", dry_run=True)
    assert result.would == STATUS_INGESTED
    assert not (vault / "hermes").exists()


# --- atomicity ---


@pytest.mark.parametrize("failing", ["fsync", "write"])
@pytest.mark.parametrize("force", [False, True])
def test_a_full_disk_leaves_no_partial_page_and_no_temp_file(
    vault: Path,
    write_source: WriteSource,
    snapshot: Snapshot,
    monkeypatch: pytest.MonkeyPatch,
    failing: str,
    force: bool,
) -> None:
    source = write_source()
    if force:
        (vault / "analyses" / "report.md").write_text("the old page\n", encoding="utf-8")
    before = snapshot(vault)
    real_write = os.write
    calls: list[int] = []

    def full_disk(*args: Any) -> int:
        calls.append(1)
        if failing == "write" and len(calls) == 1:
            return real_write(args[0], bytes(args[1])[:100])  # a partial first write, then the disk fills
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, failing, full_disk)
    with pytest.raises(
        WriteFailedError,
        match=r"^cannot write analyses/report\.md \(No space left on device\), nothing was written: "
        r"free some disk space and run it again$",
    ):
        run(source, vault, force=force)
    monkeypatch.undo()
    assert calls
    assert snapshot(vault) == before


def test_a_failure_while_linking_leaves_nothing(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(vault)

    def denied(*args: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "link", denied)
    with pytest.raises(WriteFailedError, match=r"\(Permission denied\), nothing was written: make the dir writable"):
        run(write_source(), vault)
    assert snapshot(vault) == before


def test_an_interrupt_during_the_write_leaves_nothing(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source()
    before = snapshot(vault)

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(source, vault, dir="hermes", type="note")
    assert snapshot(vault) == before  # the temp file and the new hermes/ dir are gone


def test_a_failure_in_a_new_dir_removes_the_dir(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(vault)

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(WriteFailedError):
        run(write_source(), vault, dir="hermes", type="note")
    assert snapshot(vault) == before


def test_a_read_only_dir_is_a_write_failure(
    vault: Path, write_source: WriteSource, snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    before = snapshot(vault)
    with pytest.raises(WriteFailedError, match=r"\(Permission denied\), nothing was written: make the dir writable"):
        run(write_source(), vault)
    assert snapshot(vault) == before


def test_the_temp_file_is_hidden_and_not_a_page(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    real_fsync = os.fsync

    def look(fd: int) -> None:
        seen.append(sorted(os.listdir(vault / "analyses")))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", look)
    run(write_source(), vault)
    temp_names = [name for name in seen[0] if name not in {"vector-stores.md"}]
    assert len(temp_names) == 1
    assert temp_names[0].startswith(".mnemosyne-ingest-")
    assert temp_names[0].endswith(".tmp")
    assert not temp_names[0].endswith(".md")


def test_without_hard_links_it_falls_back_to_rename(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch, report: str
) -> None:
    def no_links(*args: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    assert run(write_source(), vault).status == STATUS_INGESTED
    assert (vault / "analyses" / "report.md").read_bytes() == expected_page(report)
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]
    with pytest.raises(TargetExistsError):
        run(write_source(), vault, title="Other")


# --- temp files that killed ingests left behind ---

STALE_TEMP = ".mnemosyne-ingest-0123456789abcdef.tmp"
FRESH_TEMP = ".mnemosyne-ingest-fedcba9876543210.tmp"
#: Near misses of ingest's temp-name shape, and other files: never ingest's to remove.
NOT_INGEST_TEMPS = [
    ".mnemosyne-ingest-notes.tmp",
    ".mnemosyne-ingest-0123456789ABCDEF.tmp",
    ".mnemosyne-ingest-0123456789abcde.tmp",
    ".mnemosyne-ingest-0123456789abcdef.tmp.bak",
    "mnemosyne-ingest-0123456789abcdef.tmp",
    ".other-tool-0123456789abcdef.tmp",
    "draft.tmp",
]


def leave_files(dir_path: Path, names: list[str], *, age: datetime.timedelta) -> None:
    """Files as a killed ingest (or a user) left them, last modified ``age`` before TODAY."""
    dir_path.mkdir(exist_ok=True)
    mtime = (TODAY - age).timestamp()
    for name in names:
        (dir_path / name).write_text("---\ntitle: half a pa", encoding="utf-8")
        os.utime(dir_path / name, (mtime, mtime))


@pytest.mark.parametrize("force", [False, True])
def test_an_ingest_removes_stale_temp_files_and_keeps_fresh_ones(
    vault: Path, write_source: WriteSource, force: bool
) -> None:
    analyses = vault / "analyses"
    leave_files(analyses, [STALE_TEMP, *NOT_INGEST_TEMPS], age=datetime.timedelta(hours=1, seconds=1))
    leave_files(analyses, [FRESH_TEMP], age=datetime.timedelta(minutes=59))
    leave_files(vault / "atlas", [STALE_TEMP], age=datetime.timedelta(days=3))  # not the target dir
    result = run(write_source(), vault, force=force)
    assert result.status == STATUS_INGESTED
    assert result.removed_temp_files == [f"analyses/{STALE_TEMP}"]
    assert sorted(os.listdir(analyses)) == sorted([FRESH_TEMP, *NOT_INGEST_TEMPS, "report.md", "vector-stores.md"])
    assert (vault / "atlas" / STALE_TEMP).exists()


def test_the_next_ingest_cleans_up_even_when_the_page_is_already_there(vault: Path, write_source: WriteSource) -> None:
    source = write_source()
    run(source, vault)
    leave_files(vault / "analyses", [STALE_TEMP], age=datetime.timedelta(minutes=30))
    leave_files(vault / "analyses", [FRESH_TEMP], age=datetime.timedelta(minutes=-20))
    # The injected clock moves on; no sleeping. At 59 minutes nothing is stale yet.
    assert run(source, vault, now=TODAY + datetime.timedelta(minutes=29)).removed_temp_files == []
    result = run(source, vault, now=TODAY + datetime.timedelta(minutes=31))
    assert (result.status, result.removed_temp_files) == (STATUS_ALREADY_INGESTED, [f"analyses/{STALE_TEMP}"])
    assert sorted(os.listdir(vault / "analyses")) == [FRESH_TEMP, "report.md", "vector-stores.md"]


def test_a_dry_run_or_a_refused_ingest_removes_nothing(
    vault: Path, write_source: WriteSource, snapshot: Snapshot
) -> None:
    leave_files(vault / "analyses", [STALE_TEMP], age=datetime.timedelta(days=1))
    before = snapshot(vault)
    assert run(write_source(), vault, dry_run=True).removed_temp_files == []
    with pytest.raises(TargetExistsError):
        run(write_source("vector-stores.md"), vault)
    assert snapshot(vault) == before


def test_a_temp_name_on_a_symlink_or_a_dir_is_never_removed(vault: Path, write_source: WriteSource) -> None:
    analyses = vault / "analyses"
    old = (TODAY - datetime.timedelta(days=1)).timestamp()
    (analyses / STALE_TEMP).symlink_to(analyses / "vector-stores.md")
    (analyses / FRESH_TEMP).mkdir()
    for path in (analyses / "vector-stores.md", analyses / FRESH_TEMP):
        os.utime(path, (old, old))
    os.utime(analyses / STALE_TEMP, (old, old), follow_symlinks=False)
    assert run(write_source(), vault).removed_temp_files == []
    assert sorted(os.listdir(analyses)) == sorted([STALE_TEMP, FRESH_TEMP, "report.md", "vector-stores.md"])


def test_a_temp_file_that_cannot_be_removed_is_left_quietly(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    leave_files(vault / "analyses", [STALE_TEMP], age=datetime.timedelta(days=1))
    real_unlink = os.unlink

    def refuse_the_leftover(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.path.basename(path) == STALE_TEMP:
            raise PermissionError(errno.EACCES, "Permission denied")
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refuse_the_leftover)
    result = run(write_source(), vault)
    assert (result.status, result.removed_temp_files) == (STATUS_INGESTED, [])
    assert (vault / "analyses" / STALE_TEMP).exists()


# --- two ingests racing for one slug ---


def race(vault: Path, sources: list[Path], options: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run one ingest per thread, all past their checks before any of them links or
    renames its temp file, so the no-clobber step itself decides the race."""
    barrier = threading.Barrier(len(sources), timeout=30)
    real_link, real_replace = os.link, os.replace

    def link(*args: Any) -> None:
        barrier.wait()
        real_link(*args)

    def replace(*args: Any) -> None:
        barrier.wait()
        real_replace(*args)

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "replace", replace)
    outcomes: list[Any] = [None] * len(sources)

    def one(index: int) -> None:
        try:
            outcomes[index] = run(sources[index], vault, **options[index]).status
        except (TargetExistsError, IngestUnverifiedError) as error:
            outcomes[index] = error

    threads = [threading.Thread(target=one, args=(index,)) for index in range(len(sources))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    monkeypatch.undo()
    return outcomes


def test_racing_ingests_of_the_same_page_write_it_once(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch, report: str
) -> None:
    source = write_source()
    outcomes = race(vault, [source, source], [{}, {"now": LATER}], monkeypatch)
    assert sorted(outcomes) == [STATUS_ALREADY_INGESTED, STATUS_INGESTED]
    winner = 0 if outcomes[0] == STATUS_INGESTED else 1
    dates = ["2026-04-20", "2026-05-01"]
    assert (vault / "analyses" / "report.md").read_bytes() == expected_page(report, ingested=dates[winner])
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]


def test_racing_ingests_of_different_pages_have_one_winner(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source()
    outcomes = race(vault, [source, source], [{"title": "First Title"}, {"title": "Second Title"}], monkeypatch)
    winners = [index for index, outcome in enumerate(outcomes) if outcome == STATUS_INGESTED]
    losers = [outcome for outcome in outcomes if isinstance(outcome, TargetExistsError)]
    assert len(winners) == 1
    assert len(losers) == 1
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    assert f"\ntitle: {['First Title', 'Second Title'][winners[0]]}\n" in text
    assert text.count("\ntitle: ") == 1
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]


def test_racing_forced_ingests_leave_one_whole_page(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_source()
    options: list[dict[str, Any]] = [{"title": f"Title {index}", "force": True} for index in range(4)]
    outcomes = race(vault, [source] * 4, options, monkeypatch)
    # Last writer wins; an earlier one whose page was replaced before its find check ran
    # says so (exit 5) rather than claim a page that is no longer there.
    assert all(
        outcome in {STATUS_INGESTED, STATUS_REPLACED} or isinstance(outcome, IngestUnverifiedError)
        for outcome in outcomes
    )
    assert any(outcome in {STATUS_INGESTED, STATUS_REPLACED} for outcome in outcomes)
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    candidates = [run(source, vault, dry_run=True, **option).page.content.decode() for option in options]
    assert text in candidates
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]


def test_racing_processes_never_mix_pages(vault: Path, write_source: WriteSource, tmp_path: Path) -> None:
    import subprocess
    import sys

    source = write_source()
    script = (
        "import sys, datetime\n"
        "from mnemosyne_ingest import ingest, TargetExistsError\n"
        "try:\n"
        "    r = ingest(sys.argv[1], vault=sys.argv[2], constellation='atlas', title=sys.argv[3],"
        " now=datetime.datetime(2026, 4, 20, tzinfo=datetime.UTC))\n"
        "    print(r.status)\n"
        "except TargetExistsError:\n"
        "    print('target-exists')\n"
    )
    titles = ["Same Title"] * 3 + ["Other Title"] * 3
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(source), str(vault), title], stdout=subprocess.PIPE, text=True
        )
        for title in titles
    ]
    outputs = [process.communicate(timeout=60)[0].strip() for process in processes]
    assert all(process.returncode == 0 for process in processes)
    assert outputs.count("ingested") == 1
    winner = titles[outputs.index("ingested")]
    for title, output in zip(titles, outputs, strict=True):
        if output != "ingested":
            assert output == ("already-ingested" if title == winner else "target-exists")
    text = (vault / "analyses" / "report.md").read_text(encoding="utf-8")
    assert f"\ntitle: {winner}\n" in text
    assert sorted(os.listdir(vault / "analyses")) == ["report.md", "vector-stores.md"]


# --- the post-write check ---


def test_a_page_find_cannot_locate_is_reported(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_search = search
    keywords: list[list[str]] = []

    def blind_search(vault_path: Any, words: list[str], **options: Any) -> Any:
        keywords.append(list(words))
        result = real_search(vault_path, words, **options)
        result.matches = [match for match in result.matches if match.path != "analyses/report.md"]
        return result

    monkeypatch.setattr(ingest_module, "search", blind_search)
    with pytest.raises(
        IngestUnverifiedError,
        match=r"^wrote analyses/report\.md but 'mnemosyne wiki find Ecosystem' does not list it with its title: ",
    ):
        run(write_source(), vault)
    assert keywords == [["Ecosystem"]]
    assert (vault / "analyses" / "report.md").exists()  # written, and said so


def test_a_page_listed_under_another_title_is_unverified(
    vault: Path, write_source: WriteSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_search = search

    def retitled(vault_path: Any, words: list[str], **options: Any) -> Any:
        result = real_search(vault_path, words, **options)
        for match in result.matches:
            match.title = "Something Else"
        return result

    monkeypatch.setattr(ingest_module, "search", retitled)
    with pytest.raises(IngestUnverifiedError):
        run(write_source(), vault)


def test_the_check_runs_a_real_find_with_a_title_word(vault: Path, write_source: WriteSource) -> None:
    result = run(write_source(), vault, title="Zyxw Quarterly")
    found = search(vault, ["zyxw"])
    assert [(match.path, match.title) for match in found.matches] == [(result.path, "Zyxw Quarterly")]


# --- the same on a fake file system ---


def test_on_pyfakefs_lands_refuses_and_stays_atomic(fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch) -> None:
    fs.create_file("/vault/atlas/a.md", contents="---\ntitle: A\n---\n")
    fs.create_file("/src/Deep Dive.md", contents="# Deep Dive: Queues — Ünïcode\r\nbody\r\n")
    result = ingest("/src/Deep Dive.md", vault="/vault", constellation="metis", now=TODAY)
    assert (result.path, result.title, result.status) == (
        "analyses/Deep Dive.md",
        "Deep Dive: Queues — Ünïcode",
        "ingested",
    )
    with open("/vault/analyses/Deep Dive.md", "rb") as handle:
        assert (
            handle.read()
            == (
                "---\ntitle: 'Deep Dive: Queues — Ünïcode'\nconstellation: metis\ntype: analysis\n"
                "source: Deep Dive.md\ningested: 2026-04-20\nupdated: 2026-04-20\n"
                "---\n# Deep Dive: Queues — Ünïcode\r\nbody\r\n"
            ).encode()
        )
    assert (
        ingest("/src/Deep Dive.md", vault="/vault", constellation="metis", now=LATER).status == STATUS_ALREADY_INGESTED
    )
    with pytest.raises(TargetExistsError):
        ingest("/src/Deep Dive.md", vault="/vault", constellation="hermes")

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(WriteFailedError):
        ingest("/src/Deep Dive.md", vault="/vault", constellation="hermes", force=True)
    with pytest.raises(WriteFailedError):
        ingest("/src/Deep Dive.md", vault="/vault", constellation="hermes", slug="fresh")
    monkeypatch.undo()
    assert sorted(os.listdir("/vault/analyses")) == ["Deep Dive.md"]
    with open("/vault/analyses/Deep Dive.md", "rb") as handle:
        assert b"constellation: metis\n" in handle.read()


def test_on_pyfakefs_refusals_write_nothing(fs: FakeFilesystem) -> None:
    fs.create_file("/vault/analyses/x.md", contents="---\ntitle: X\n---\n")
    fs.create_file("/src/s.md", contents="text\n")
    fs.create_file("/src/bad.md", contents=b"\x80\x81")
    fs.create_dir("/src/dir.md")
    cases: list[tuple[dict[str, Any], type[Exception]]] = [
        ({"constellation": "zeus"}, IngestArgumentError),
        ({"slug": "../../etc/passwd"}, IngestArgumentError),
        ({"dir": "tmp"}, IngestArgumentError),
        ({"source": "/src/missing.md"}, BadSourceError),
        ({"source": "/src/bad.md"}, BadSourceError),
        ({"source": "/src/dir.md"}, BadSourceError),
        ({"vault": "/nowhere"}, VaultError),
        ({"slug": "x"}, TargetExistsError),
    ]
    for case, error in cases:
        options: dict[str, Any] = {"source": "/src/s.md", "vault": "/vault", "constellation": "atlas"} | case
        with pytest.raises(error):
            ingest(options.pop("source"), **options)
    assert sorted(os.listdir("/vault")) == ["analyses"]
    assert sorted(os.listdir("/vault/analyses")) == ["x.md"]
