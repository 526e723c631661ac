"""``mnemosyne wiki ingest`` end to end through ``main``: exact stdout, stderr and exit
code for every outcome."""

from __future__ import annotations

import datetime
import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from vault_pages import no_vault_message

from mnemosyne_cli.app import main
from mnemosyne_cli.commands import ingest as ingest_command
from mnemosyne_contract import ExitCode, load_schema
from mnemosyne_core import search
from mnemosyne_core.config import CONSTELLATIONS
from mnemosyne_ingest import DEFAULT_DIR, landing

Snapshot = Callable[[Path], dict[str, bytes | None]]
WriteSource = Callable[..., Path]
LINE = "analyses/report.md — Agent Ecosystem Report — March 2026\n"
ERROR = "mnemosyne: error: "


def ingest_cli(source: Path | str, vault: Path | str, *extra: str) -> int:
    return main(["wiki", "ingest", str(source), "--constellation", "atlas", "--vault", str(vault), *extra])


def outcome(capsys: pytest.CaptureFixture[str], code: int) -> tuple[int, str, str]:
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lands_the_page_and_prints_finds_line(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    assert outcome(capsys, ingest_cli(write_source(), vault)) == (0, LINE, "")
    assert main(["wiki", "find", "ecosystem", "--vault", str(vault)]) == 0
    assert capsys.readouterr().out == LINE


def test_the_same_page_again_is_already_ingested(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_source()
    ingest_cli(source, vault)
    capsys.readouterr()
    page = (vault / "analyses" / "report.md").read_bytes()
    assert outcome(capsys, ingest_cli(source, vault)) == (
        0,
        LINE,
        "already ingested: analyses/report.md has this content; nothing was written\n",
    )
    assert (vault / "analyses" / "report.md").read_bytes() == page


def test_a_killed_ingests_temp_file_is_linted_then_removed_by_the_next_ingest(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    stale, fresh = ".mnemosyne-ingest-0123456789abcdef.tmp", ".mnemosyne-ingest-fedcba9876543210.tmp"
    for name in (stale, fresh):
        (vault / "analyses" / name).write_text("---\ntitle: half", encoding="utf-8")
    two_hours_ago = datetime.datetime.now(datetime.UTC).timestamp() - 7200
    os.utime(vault / "analyses" / stale, (two_hours_ago, two_hours_ago))

    def leftovers() -> list[dict[str, str]]:
        code = main(["wiki", "lint", "--json", "--vault", str(vault)])
        findings = json.loads(capsys.readouterr().out)
        assert code == ExitCode.NO_MATCH  # the fixture's pages have no updated date
        return [finding for finding in findings if finding["code"] == "leftover-temp-file"]

    assert leftovers() == [
        {
            "path": f"analyses/{stale}",
            "code": "leftover-temp-file",
            "message": "a temp file a killed ingest left behind over an hour ago; no page needs it: "
            "remove it (the next ingest into this dir also does)",
        }
    ]
    assert outcome(capsys, ingest_cli(write_source(), vault)) == (
        0,
        LINE,
        f"removed analyses/{stale}: a temp file an interrupted ingest left behind\n",
    )
    assert sorted(os.listdir(vault / "analyses")) == [fresh, "report.md", "vector-stores.md"]
    assert leftovers() == []


def test_different_content_exits_4_and_force_replaces_it(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str], snapshot: Snapshot
) -> None:
    source = write_source()
    ingest_cli(source, vault)
    capsys.readouterr()
    before = snapshot(vault)
    assert outcome(capsys, ingest_cli(source, vault, "--title", "New Title")) == (
        4,
        "",
        ERROR
        + "analyses/report.md already exists with different content: pass --force to replace it, or another --slug\n",
    )
    assert snapshot(vault) == before
    assert outcome(capsys, ingest_cli(source, vault, "--title", "New Title", "--force")) == (
        0,
        "analyses/report.md — New Title\n",
        "replaced analyses/report.md: its previous content differed (--force)\n",
    )


def test_all_options(vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "wiki", "ingest", str(write_source()), "--constellation", "hermes", "--dir", "atlas",
            "--slug", "relay", "--title", "Relay Setup", "--type", "howto", "--vault", str(vault),
        ]
    )  # fmt: skip
    assert outcome(capsys, code) == (0, "atlas/relay.md — Relay Setup\n", "")
    text = (vault / "atlas" / "relay.md").read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: Relay Setup\nauthor: mimir-agent research\n")
    assert "\ntags: [agents, frameworks, mastra]\nconstellation: hermes\ntype: howto\nsource: report.md\n" in text


def test_vault_from_aion_vault(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AION_VAULT", str(vault))
    code = main(["wiki", "ingest", str(write_source()), "--constellation", "atlas"])
    assert outcome(capsys, code) == (0, LINE, "")


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--constellation", "zeus"], 64, "unknown constellation 'zeus': pass one of " + ", ".join(CONSTELLATIONS)),
        (
            ["--dir", "drafts"],
            64,
            "--dir 'drafts' is not a scanned dir of this vault, so find would never list the page: pass one of "
            + ", ".join((*CONSTELLATIONS, "analyses")),
        ),
        (
            ["--slug", "../escape"],
            64,
            "--slug '../escape' contains a path separator: pass a plain file name without .md, e.g. --slug my-report",
        ),
        (["--slug", ".."], 64, "--slug '..' contains '..': pass a plain file name without .md, e.g. --slug my-report"),
        (
            ["--slug", ".dot"],
            64,
            "--slug '.dot' starts with '.' (hidden pages are never listed): "
            "pass a plain file name without .md, e.g. --slug my-report",
        ),
        # main() refuses a NUL in any argument before ingest sees it (the library's own
        # check is in test_ingest_library).
        (["--slug", "a\0b"], 64, "an argument contains a NUL byte: remove it"),
        (["--title", " "], 64, "--title is blank: pass a title with a non-space character, or omit --title"),
        (
            ["--dir", "hermes"],
            64,
            "no type for a page in hermes/: the source's frontmatter has none; pass --type T (e.g. --type analysis)",
        ),
    ],
)
def test_bad_arguments_exit_64_and_write_nothing(
    vault: Path,
    write_source: WriteSource,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    extra: list[str],
    code: int,
    message: str,
) -> None:
    source = write_source()
    before = snapshot(vault)
    assert outcome(capsys, ingest_cli(source, vault, *extra)) == (code, "", ERROR + message + "\n")
    assert snapshot(vault) == before


def test_a_missing_constellation_flag_is_a_usage_error(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["wiki", "ingest", str(write_source()), "--vault", str(vault)])
    assert outcome(capsys, code) == (
        64,
        "",
        ERROR + "the following arguments are required: --constellation (see 'mnemosyne wiki ingest --help')\n",
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.md", b"", "source 'empty.md' is empty: pass a markdown file with content"),
        ("cp1252.md", b"caf\xe9\n", "source 'cp1252.md' is not UTF-8 (invalid byte at offset 3): convert it to UTF-8"),
        (
            "open.md",
            b"---\ntitle: T\n",
            "source 'open.md' opens a frontmatter block that is never closed: add the closing '---' line",
        ),
    ],
)
def test_bad_sources_exit_65_and_write_nothing(
    vault: Path,
    write_source: WriteSource,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    name: str,
    content: bytes,
    message: str,
) -> None:
    source = write_source(name, content)
    before = snapshot(vault)
    assert outcome(capsys, ingest_cli(source, vault)) == (65, "", ERROR + message + "\n")
    assert snapshot(vault) == before


def test_a_missing_or_non_regular_source_exits_65(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.md"
    assert outcome(capsys, ingest_cli(missing, vault)) == (
        65,
        "",
        ERROR + f"source '{missing}' does not exist: pass the path of a markdown file\n",
    )
    assert outcome(capsys, ingest_cli(tmp_path, vault)) == (
        65,
        "",
        ERROR + f"source '{tmp_path}' is not a regular file: pass the path of a markdown file\n",
    )


def test_a_missing_vault_exits_3(tmp_path: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-vault"
    assert outcome(capsys, ingest_cli(write_source(), missing)) == (
        3,
        "",
        ERROR + f"vault '{missing}' does not exist: pass --vault PATH to your vault root\n",
    )
    assert not missing.exists()
    code = main(["wiki", "ingest", str(write_source()), "--constellation", "atlas"])
    assert outcome(capsys, code) == (3, "", ERROR + no_vault_message() + "\n")


def test_a_full_disk_exits_74_and_leaves_nothing(
    vault: Path,
    write_source: WriteSource,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = write_source()
    before = snapshot(vault)

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    code = ingest_cli(source, vault)
    monkeypatch.undo()
    assert outcome(capsys, code) == (
        74,
        "",
        ERROR
        + "cannot write analyses/report.md (No space left on device), nothing was written: "
        + "free some disk space and run it again\n",
    )
    assert snapshot(vault) == before


def test_ctrl_c_during_the_write_exits_130_and_leaves_nothing(
    vault: Path,
    write_source: WriteSource,
    capsys: pytest.CaptureFixture[str],
    snapshot: Snapshot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = write_source()
    before = snapshot(vault)

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    code = ingest_cli(source, vault)
    monkeypatch.undo()
    assert outcome(capsys, code) == (130, "", "\n")
    assert snapshot(vault) == before


def test_a_page_find_cannot_see_exits_5(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_search = search

    def blind(vault_path: Any, keywords: list[str], **options: Any) -> Any:
        result = real_search(vault_path, keywords, **options)
        result.matches = []
        return result

    monkeypatch.setattr(landing, "search", blind)
    assert outcome(capsys, ingest_cli(write_source(), vault)) == (
        5,
        "",
        ERROR
        + "wrote analyses/report.md but 'mnemosyne wiki find Ecosystem' does not list it with its title: "
        + f"run that find with --vault {os.path.realpath(vault)} to see why\n",
    )


def test_dry_run_prints_the_page_and_writes_nothing(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str], snapshot: Snapshot, report: str
) -> None:
    source = write_source()
    before = snapshot(vault)
    code = ingest_cli(source, vault, "--dry-run")
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == f"dry run: would write {LINE.rstrip()}; nothing was written\n"
    assert captured.out.startswith("---\ntitle: Agent Ecosystem Report — March 2026\n")
    assert captured.out.endswith("\nsource: report.md\ningested: " + captured.out.split("ingested: ")[1])
    assert snapshot(vault) == before
    # what it printed is exactly what a real run then writes (same day)
    ingest_cli(source, vault)
    capsys.readouterr()
    assert (vault / "analyses" / "report.md").read_text(encoding="utf-8") == captured.out
    assert report.split("---\n", 2)[2] in captured.out
    assert outcome(capsys, ingest_cli(source, vault, "--dry-run"))[2] == (
        f"dry run: already ingested, a real run would write nothing: {LINE.rstrip()}; nothing was written\n"
    )


def test_json_output_follows_the_schema(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("ingest"))
    source = write_source()
    records = []
    pages = []
    for extra in (["--dry-run"], [], [], ["--title", "T2", "--force"]):
        code, out, err = outcome(capsys, ingest_cli(source, vault, "--json", *extra))
        assert (code, err) == (0, "")
        assert out.endswith("}\n")
        assert out.count("\n") == 1
        record = json.loads(out)
        validator.validate(record)
        records.append(record)
        pages.append((vault / "analyses" / "report.md").read_text(encoding="utf-8") if records[1:] else None)
    base = {
        "path": "analyses/report.md",
        "title": "Agent Ecosystem Report — March 2026",
        "constellation": "atlas",
        "type": "analysis",
    }
    assert records[0]["status"] == "dry-run"
    assert records[0]["would"] == "ingested"
    assert pages[0] is None  # the dry run wrote nothing
    assert records[0]["page"] == pages[1]  # and showed exactly what the real run wrote
    assert records[1] == base | {"status": "ingested"}
    assert records[2] == base | {"status": "already-ingested"}
    assert records[3] == base | {"title": "T2", "status": "replaced"}
    assert not validator.is_valid(base | {"status": "ingested", "page": "x"})
    assert not validator.is_valid(base | {"status": "dry-run"})
    assert not validator.is_valid(base | {"status": "done"})


def test_json_errors_print_no_json(
    tmp_path: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    code = ingest_cli(write_source(), tmp_path / "nope", "--json")
    assert outcome(capsys, code)[:2] == (3, "")


def test_control_characters_in_the_title_are_escaped_on_the_line(
    vault: Path, write_source: WriteSource, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_source(content='---\ntitle: "Bold \\e[1m move"\n---\nbody\n')
    assert outcome(capsys, ingest_cli(source, vault)) == (0, "analyses/report.md — Bold \\x1b[1m move\n", "")


def test_on_pyfakefs(fs: FakeFilesystem, capsys: pytest.CaptureFixture[str]) -> None:
    fs.create_file("/vault/hermes/x.md", contents="---\ntitle: X\n---\n")
    fs.create_file("/in/Notes.md", contents="Plain notes, no heading.\n")
    code = main(["wiki", "ingest", "/in/Notes.md", "--constellation", "hermes", "--vault", "/vault"])
    assert outcome(capsys, code) == (0, "analyses/Notes.md — Notes\n", "")
    with open("/vault/analyses/Notes.md", encoding="utf-8") as handle:
        text = handle.read()
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert text == (
        "---\ntitle: Notes\nconstellation: hermes\ntype: analysis\nsource: Notes.md\n"
        f"ingested: {today}\nupdated: {today}\n---\nPlain notes, no heading.\n"
    )


def test_help_lists_the_real_constellations_and_default_dir() -> None:
    assert ", ".join(CONSTELLATIONS) == ingest_command._CONSTELLATIONS
    assert ingest_command.DEFAULT_DIR == DEFAULT_DIR
    schema = load_schema("ingest")
    assert tuple(schema["properties"]["constellation"]["enum"]) == CONSTELLATIONS


def test_ingest_is_registered_after_find(capsys: pytest.CaptureFixture[str]) -> None:
    from mnemosyne_cli.commands import WIKI_COMMANDS

    assert WIKI_COMMANDS[0].__name__.endswith(".find")
    assert ingest_command in WIKI_COMMANDS
    assert main(["wiki", "ingest", "--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "\nexamples:\n  mnemosyne wiki ingest " in out
    assert "\n   65  the source is missing" in out
