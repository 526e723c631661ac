"""No tracked file points at the issue tracker by number, nor at the seed documents the
project was started from: readers of the repo cannot see either, so a comment, docstring,
doc or name must give the reason or the rule itself (e.g. "docs/spec.md rule 8", "the
start-up targets", "acceptance criterion 2") instead."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]

#: A numbered issue in any spelling ("issue 6", "Issues 3", "issue #12", "ISSUE6_RATIO",
#: "test_of_issue_11"), "issue's" (the tracker's issue, as in "the issue's figure"), and a
#: "(#12)" pull-request or issue reference. A letter just before "issue" is another word
#: ("tissue").
TRACKER_REFERENCE = re.compile(r"(?<![a-z])(?:issues?[ _#-]*\d|issue's)|\(#\d+\)", re.IGNORECASE)
#: A seed document by name or file ("seed 003", "shared/seeds/000_x.txt", "seed criterion
#: 8"), by possession ("the seed's API", "the seeds example") or as the authority ("fixed
#: by the seed"). A random generator's seed is another word ("the seed of the topic
#: words", "--seed 6", "seeded").
SEED_REFERENCE = re.compile(r"\bseed(?:'s| \d{3}| criteri)|\bseeds/|_seeds_|\bthe seed\b(?! of)", re.IGNORECASE)


def tracker_references(text: str) -> list[str]:
    """Each line of text that points at the tracker, numbered from 1 as 'N: line'."""
    return [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if TRACKER_REFERENCE.search(line) or SEED_REFERENCE.search(line)
    ]


def tracked_files() -> list[Path]:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True, timeout=60
    ).stdout
    return [REPO_ROOT / name for name in listing.decode("utf-8", "surrogateescape").split("\0") if name]


@pytest.mark.parametrize(
    "line",
    [
        "lint (issue 8): one test per reason code",
        "(start-up, Issue 6)",
        "Issue 11's order as properties",
        "Issues 3 and 4",
        "see issue #12",
        "ISSUE6_STARTUP_RATIO = 2.5",
        "def test_spec_order_matches_the_examples_of_issue_11() -> None:",
        '"issue6-median": [',
        "every page is missing-updated (the issue's 991).",
        "Fix the parser (#42)",
        "the harness wiki-query contract (seed 003)",
        "(`shared/seeds/000_…txt`)",
        "Seed criterion 8: the report",
        "The seed's API: the matching pages",
        "def test_the_seeds_example_order_holds() -> None:",
        "The read cap of 3 is fixed by the seed; it is not a flag.",
    ],
)
def test_a_reference_to_the_tracker_is_found(line: str) -> None:
    assert tracker_references(f"first line\n{line}\n") == [f"2: {line}"]


@pytest.mark.parametrize(
    "line",
    [
        "Prompt injection via fetched web pages or issue comments",
        '@pytest.mark.quarantine(issue="AION-412", since="2026-01-12")',
        "a credential broker that issues short-lived tokens",
        "tissue 5 of the sample",
        "colour #123456",
        "report wheel issues",
        "#: The seed of the topic words drawn from each page",
        "python fixtures/generate_vault.py 10000 build/bench/vault-10000 --seed 6",
        "def test_topic_words_are_seeded_per_page() -> None:",
        "seed=st.integers(0, 2**32 - 1),",
        "the same bytes for the same seed",
    ],
)
def test_ordinary_words_are_not_a_reference(line: str) -> None:
    assert tracker_references(line) == []


def test_no_tracked_file_mentions_an_issue_number() -> None:
    found: list[str] = []
    files = tracked_files()
    assert REPO_ROOT / "README.md" in files  # the listing is the repo's, not an empty one
    for path in files:
        # Deleted in the worktree and not yet committed, or this file, whose examples above
        # are references on purpose.
        if not path.is_file() or path == Path(__file__).resolve():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        relative = path.relative_to(REPO_ROOT).as_posix()
        found += [f"{relative}:{line}" for line in tracker_references(data.decode("utf-8", "replace"))]
    assert found == [], "say the reason or the rule instead of an issue number or a seed:\n" + "\n".join(found)
