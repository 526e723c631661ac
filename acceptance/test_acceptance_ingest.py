"""Criterion 8: the research report that triggered the design is in the vault, under
analyses/, owned by atlas, and ``mnemosyne wiki ingest`` reproduces that page from the
source: the committed page is the helper's output, not a hand edit."""

from __future__ import annotations

import datetime
import json
import re
import shutil
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator

import mnemosyne_contract

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from acceptance.conftest import Installed

REPORT_PAGE = "analyses/agent-ecosystem-report-2026-03.md"
SOURCE = "fixtures/sources/agent-ecosystem-report-2026-03.md"
#: A keyword from the report's title ("Agent Ecosystem Report — March 2026").
TITLE_KEYWORD = "agent ecosystem report"
INGEST_ARGS = ("--constellation", "atlas", "--dir", "analyses")
#: The keys ingest dates (the source has no updated of its own): set aside when comparing.
INGEST_DATE_KEYS = (b"ingested", b"updated")


def split_ingest_dates(page: bytes) -> tuple[list[bytes], dict[str, str]]:
    """The page's lines without the frontmatter's ``ingested:`` and ``updated:`` lines, and
    each of those lines' date by key."""
    lines = page.splitlines(keepends=True)
    assert lines
    assert lines[0].rstrip(b"\r\n") == b"---", "the page has no frontmatter"
    end = next(index for index, line in enumerate(lines[1:], 1) if line.rstrip(b"\r\n") == b"---")
    dates: dict[str, str] = {}
    dated: list[int] = []
    for key in INGEST_DATE_KEYS:
        pattern = re.compile(rb"^" + key + rb": *['\"]?(\d{4}-\d{2}-\d{2})['\"]? *\r?\n?$")
        found = [(index, match) for index in range(1, end) if (match := pattern.match(lines[index]))]
        assert len(found) == 1, f"expected one '{key.decode()}: YYYY-MM-DD' line in the frontmatter, found {len(found)}"
        dated.append(found[0][0])
        dates[key.decode()] = found[0][1].group(1).decode()
    return [line for index, line in enumerate(lines) if index not in dated], dates


def find_report(mnemosyne: Installed, vault: Path) -> list[dict[str, object]]:
    """The report's entries in ``find TITLE_KEYWORD --json`` on ``vault``."""
    result = mnemosyne.run("wiki", "find", TITLE_KEYWORD, "--json", "--limit", "0", "--vault", vault)
    assert result.returncode == 0, result.stderr.decode()
    document: list[dict[str, object]] = json.loads(result.stdout)
    return [item for item in document if item["path"] == REPORT_PAGE]


def vault_files(vault: Path) -> dict[str, bytes]:
    return {path.relative_to(vault).as_posix(): path.read_bytes() for path in vault.rglob("*") if path.is_file()}


def test_criterion_8_committed_vault_holds_the_report_owned_by_atlas(
    mnemosyne: Installed, aion_vault: Path, record_figure: Callable[[str], None]
) -> None:
    page = aion_vault / REPORT_PAGE
    assert page.is_file(), (
        f"{REPORT_PAGE} is not in the committed vault: land it with "
        f"'mnemosyne wiki ingest {SOURCE} {' '.join(INGEST_ARGS)} --vault fixtures/vaults/aion'"
    )
    (entry,) = find_report(mnemosyne, aion_vault)
    # analyses/ is no constellation dir, so "atlas" can only come from the page's frontmatter.
    assert entry["constellation"] == "atlas"
    record_figure(f"{REPORT_PAGE}: constellation {entry['constellation']}, type {entry['type']}")


def test_criterion_8_reingesting_the_source_reproduces_the_committed_page(
    mnemosyne: Installed, aion_vault: Path, repo_root: Path, tmp_path: Path, record_figure: Callable[[str], None]
) -> None:
    assert (aion_vault / REPORT_PAGE).is_file(), f"{REPORT_PAGE} is not in the committed vault"
    committed = (aion_vault / REPORT_PAGE).read_bytes()
    vault = tmp_path / "aion"
    shutil.copytree(aion_vault, vault)
    (vault / REPORT_PAGE).unlink()
    before = vault_files(vault)
    assert find_report(mnemosyne, vault) == []

    today_before = datetime.datetime.now(datetime.UTC).date().isoformat()
    result = mnemosyne.run("wiki", "ingest", repo_root / SOURCE, *INGEST_ARGS, "--vault", vault, "--json")
    today_after = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert result.returncode == 0, f"ingest failed (exit {result.returncode}): {result.stderr.decode()}"

    landed = json.loads(result.stdout)
    ingest_schema = Draft202012Validator(mnemosyne_contract.load_schema("ingest"))
    assert [error.message for error in ingest_schema.iter_errors(landed)] == []
    assert (landed["path"], landed["constellation"]) == (REPORT_PAGE, "atlas")

    reingested = (vault / REPORT_PAGE).read_bytes()
    reingested_lines, dates = split_ingest_dates(reingested)
    committed_lines, committed_dates = split_ingest_dates(committed)
    assert reingested_lines == committed_lines, "the re-ingested page differs from the committed one"
    assert dates["ingested"] in {today_before, today_after}
    # One clock dates both, so recall ranks a fresh page first.
    assert dates["updated"] == dates["ingested"]
    assert committed_dates["updated"] == committed_dates["ingested"]
    # The helper wrote that one page and touched nothing else.
    assert vault_files(vault) == {**before, REPORT_PAGE: reingested}

    (entry,) = find_report(mnemosyne, vault)
    assert entry["constellation"] == "atlas"
    record_figure(
        f"re-ingest = committed page except 'ingested/updated: {committed_dates['ingested']}' "
        f"({len(committed_lines)} lines); found as atlas"
    )
