"""Acceptance criterion 8 (acceptance/README.md): the agent-ecosystem report is in the committed fixture vault under
analyses/, owned by atlas, exactly as ``nox -s ingest-report`` lands it."""

from __future__ import annotations

from pathlib import Path

from mnemosyne_core import search
from mnemosyne_core.frontmatter import loads_bytes
from mnemosyne_core.lint import lint_report
from mnemosyne_core.recall import recall
from mnemosyne_ingest import STATUS_ALREADY_INGESTED, STATUS_DRY_RUN, ingest

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "fixtures" / "sources" / "agent-ecosystem-report-2026-03.md"
VAULT = ROOT / "fixtures" / "vaults" / "aion"
REL_PATH = "analyses/agent-ecosystem-report-2026-03.md"
PAGE = VAULT / REL_PATH


def test_the_report_is_in_the_fixture_vault_owned_by_atlas() -> None:
    page = loads_bytes(PAGE.read_bytes())
    assert page.metadata is not None
    assert page.metadata["constellation"] == "atlas"
    assert page.metadata["type"] == "analysis"
    assert page.metadata["source"] == SOURCE.name
    assert page.metadata["title"] == "Agent Ecosystem Report — March 2026"
    source = loads_bytes(SOURCE.read_bytes())
    assert source.metadata is not None
    assert "updated" not in source.metadata
    assert page.metadata["updated"] == page.metadata["ingested"]  # so ingest dated it
    assert page.body == source.body
    assert "fixture reproduction of the archived original" in source.body
    assert "Mastra" in source.body


def test_the_one_shot_would_write_nothing_more() -> None:
    result = ingest(SOURCE, vault=VAULT, constellation="atlas", dir="analyses", dry_run=True)
    assert (result.status, result.would, result.path) == (
        STATUS_DRY_RUN,
        STATUS_ALREADY_INGESTED,
        "analyses/agent-ecosystem-report-2026-03.md",
    )


def test_find_locates_the_report() -> None:
    paths = [match.path for match in search(VAULT, ["mastra"], limit=0).matches]
    assert "analyses/agent-ecosystem-report-2026-03.md" in paths
    found = search(VAULT, ["agent", "ecosystem", "report"]).matches
    assert [(match.path, match.constellation) for match in found if match.matched != "text"] == [
        ("analyses/agent-ecosystem-report-2026-03.md", "atlas")
    ]


def test_recall_reads_the_report_among_its_top_three() -> None:
    """Undated, the report came last of 12 and was never read in full."""
    result = recall(VAULT, "agent ecosystem")
    assert REL_PATH in [entry.path for entry in result.read]
    assert len(result.read) == 3


def test_lint_has_no_finding_for_the_report() -> None:
    findings = lint_report(VAULT).findings
    assert findings  # the fixture vault has degraded pages on purpose: lint really ran
    assert [finding for finding in findings if finding.path == REL_PATH] == []
