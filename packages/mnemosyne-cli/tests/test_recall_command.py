"""``mnemosyne wiki recall``: exact stdout, stderr and exit codes, one test per rule;
and the layout config (.mnemosyne.toml, --dir) for find and recall alike."""

from __future__ import annotations

import datetime
import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import jsonschema
import pytest
from index_harness import build_index
from vault_pages import no_vault_message

from mnemosyne_cli.app import main
from mnemosyne_cli.environment import Environment
from mnemosyne_contract import load_schema
from mnemosyne_core import page as page_module
from mnemosyne_core import recall as recall_module
from mnemosyne_core.config import MEMORY_DIR_ENV_VAR, VAULT_ENV_VAR
from mnemosyne_core.page import open_page as vault_open_page
from mnemosyne_core.page import read_page_bytes

if TYPE_CHECKING:
    from mnemosyne_core.page import PageRef

HARNESS_FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "vaults" / "harness"
NOW = datetime.datetime(2026, 3, 18, 9, 5, 42, tzinfo=datetime.UTC)
TODAY_LOG = Path("2026-03-18") / "log.md"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """No vault or memory dir from the environment, and a fixed clock for the log."""
    monkeypatch.delenv(VAULT_ENV_VAR, raising=False)
    monkeypatch.delenv(MEMORY_DIR_ENV_VAR, raising=False)
    monkeypatch.setattr(recall_module, "utc_now", lambda: NOW)


@pytest.fixture
def harness(tmp_path: Path) -> Path:
    """A copy of the harness fixture vault: its config logs to <vault>/memory."""
    vault = tmp_path / "harness"
    # Without memory/: running the documented recall example logs into the fixture itself.
    shutil.copytree(HARNESS_FIXTURE, vault, ignore=shutil.ignore_patterns("memory"))
    return vault


def write_page(vault: Path, rel_path: str, frontmatter: str, body: str = "Body.\n") -> Path:
    path = vault / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{textwrap.dedent(frontmatter).strip()}\n---\n\n{body}", encoding="utf-8")
    return path


def wiki_vault(tmp_path: Path) -> Path:
    """A harness-layout vault without a memory dir: one flat wiki/ dir."""
    vault = tmp_path / "vault"
    (vault / "wiki").mkdir(parents=True)
    (vault / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    return vault


def shown(vault: Path, rel_path: str) -> str:
    """A read entry as recall prints it: the header line, then the file's text."""
    return f"\n==> {rel_path} <==\n" + (vault / rel_path).read_text(encoding="utf-8")


def log_entry(result: str, query: str, count: int, slugs: str, observation: str) -> str:
    return (
        "## /wiki-query -- 09:05 UTC\n"
        f"- **Result**: {result}\n"
        f"- **Query**: {query}\n"
        f"- **Match-Count**: {count}\n"
        f"- **Read-Slugs**: {slugs}\n"
        f"- **Observation**: {observation}\n"
    )


# --- any term matches, and the output format ---


def test_github_auth_on_the_harness_fixture_matches_any_term(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """OR semantics: the entry tagged [auth, sandbox] and the one titled "GitHub Token
    Workflow Scope" both match; 4 matches, newest first, the top 3 read."""
    code = main(["wiki", "recall", "github", "auth", "--vault", str(harness)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out == (
        "wiki/gh-cli-pagination.md\n"
        "wiki/github-token-workflow-scope.md\n"
        "wiki/sandbox-credential-boundaries.md\n"
        "wiki/oauth-device-flow.md\n"
        + shown(harness, "wiki/gh-cli-pagination.md")
        + shown(harness, "wiki/github-token-workflow-scope.md")
        + shown(harness, "wiki/sandbox-credential-boundaries.md")
        + "\n4 matches; read 3: gh-cli-pagination, github-token-workflow-scope, sandbox-credential-boundaries; "
        "1 not read\n"
    )


def test_a_quoted_multi_word_topic_is_split_the_same_way(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "github auth", "--vault", str(harness)]) == 0
    split = capsys.readouterr()
    assert main(["wiki", "recall", "github", "auth", "--vault", str(harness)]) == 0
    assert capsys.readouterr() == split


def test_only_title_slug_and_tags_are_searched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    write_page(vault, "wiki/by-title.md", "title: Kestrel Cache\nupdated: 2026-01-03")
    write_page(vault, "wiki/by-slug.md", "slug: kestrel-notes\nupdated: 2026-01-02")
    write_page(vault, "wiki/by-tags.md", "tags: kestrel\nupdated: 2026-01-01")
    write_page(vault, "wiki/kestrel.md", "title: Named After It")
    write_page(vault, "wiki/body.md", "title: Other\ntype: kestrel", "Kestrel everywhere in the body.\n")
    assert main(["wiki", "recall", "KESTREL", "--vault", str(vault)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[:4] == ["wiki/by-title.md", "wiki/by-slug.md", "wiki/by-tags.md", ""]
    assert out.endswith("\n3 matches; read 3: by-title, by-slug, by-tags; 0 not read\n")
    assert err == ""


def test_unicode_folding_is_finds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    write_page(vault, "wiki/strasse.md", "title: Straße Routing")
    assert main(["wiki", "recall", "STRASSE", "--vault", str(vault)]) == 0
    assert capsys.readouterr().out.startswith("wiki/strasse.md\n\n==> wiki/strasse.md <==\n")


def test_ranking_puts_missing_and_invalid_updated_last_and_ties_by_path(
    harness: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hooks has `updated: last week`, ingest conventions none; gh-cli-pagination and
    github-token-workflow-scope share 2026-03-18."""
    code = main(["wiki", "recall", "hooks", "wiki", "github", "--vault", str(harness)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.split("\n\n", 1)[0].splitlines() == [
        "wiki/gh-cli-pagination.md",
        "wiki/github-token-workflow-scope.md",
        "wiki/claude-code-hooks.md",
        "wiki/wiki-ingest-conventions.md",
    ]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 6])
def test_read_cap_and_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int) -> None:
    vault = wiki_vault(tmp_path)
    for day in range(1, count + 1):
        write_page(vault, f"wiki/note-{day}.md", f"tags: [cap]\nupdated: 2026-02-{day:02d}", f"Note {day}.\n")
    assert main(["wiki", "recall", "cap", "--vault", str(vault)]) == 0
    out, err = capsys.readouterr()
    ranked = [f"note-{day}" for day in range(count, 0, -1)]
    read = ranked[:3]
    noun = "match" if count == 1 else "matches"
    assert out == (
        "".join(f"wiki/{slug}.md\n" for slug in ranked)
        + "".join(shown(vault, f"wiki/{slug}.md") for slug in read)
        + f"\n{count} {noun}; read {len(read)}: {', '.join(read)}; {count - len(read)} not read\n"
    )
    assert err == ""


def test_a_read_entry_without_a_final_newline_gets_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    (vault / "wiki" / "bare.md").write_bytes(b"---\ntags: [bare]\n---\nno newline")
    assert main(["wiki", "recall", "bare", "--vault", str(vault)]) == 0
    assert capsys.readouterr().out == (
        "wiki/bare.md\n\n==> wiki/bare.md <==\n---\ntags: [bare]\n---\nno newline\n"
        "\n1 match; read 1: bare; 0 not read\n"
    )


# --- empty results and errors ---


def test_no_match_is_not_an_error(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "xyzzy", "plugh", "--vault", str(harness)]) == 0
    assert capsys.readouterr() == (
        "No wiki entries matched xyzzy plugh\n",
        # The harness has one page recall cannot see, which find would search.
        "hint: 1 page has no frontmatter title, slug or tags, so recall cannot see it; "
        f"find searches it too: mnemosyne wiki find --vault {harness} xyzzy plugh\n",
    )


def test_the_hint_names_a_find_of_the_same_vault_that_finds_the_unseen_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = wiki_vault(tmp_path)
    (vault / "wiki" / "flags.md").write_text("Pass -v when it's quiet.\n", encoding="utf-8")
    (vault / "wiki" / "other.md").write_text("No frontmatter either.\n", encoding="utf-8")
    assert main(["wiki", "recall", "--vault", str(vault), "--dir", "wiki/", "--", "-v", "it's"]) == 0
    out, err = capsys.readouterr()
    assert out == "No wiki entries matched -v it's\n"
    # Its own --vault and --dir, then '--' for the word that starts with '-', quoted for the shell.
    command = f"mnemosyne wiki find --vault {vault} --dir wiki -- -v 'it'\"'\"'s'"
    assert err == (
        "hint: 2 pages have no frontmatter title, slug or tags, so recall cannot see them; "
        f"find searches them too: {command}\n"
    )
    # Pasted as it is, it finds the page recall could not see.
    assert main(shlex.split(command)[1:]) == 0
    assert capsys.readouterr() == ("wiki/flags.md — flags\n", "")
    # A vault found from the current dir needs no --vault.
    monkeypatch.chdir(vault / "wiki")
    assert main(["wiki", "recall", "quiet"]) == 0
    assert capsys.readouterr()[1] == (
        "hint: 2 pages have no frontmatter title, slug or tags, so recall cannot see them; "
        "find searches them too: mnemosyne wiki find quiet\n"
    )


def test_an_empty_corpus_is_not_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    (vault / "wiki" / "notes.txt").write_text("not an entry\n", encoding="utf-8")
    assert main(["wiki", "recall", "anything", "--vault", str(vault)]) == 0
    assert capsys.readouterr() == ("No wiki entries matched anything\n", "")


def test_a_missing_vault_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["wiki", "recall", "auth", "--vault", str(missing)]) == 3
    assert capsys.readouterr() == (
        "",
        f"mnemosyne: error: vault '{missing}' does not exist: pass --vault PATH to your vault root\n",
    )


def test_no_vault_at_all_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "auth"]) == 3
    assert capsys.readouterr() == ("", f"mnemosyne: error: {no_vault_message()}\n")


def test_a_vault_without_the_scanned_dirs_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its own config names the dir: the vault is wrong, not the call (a --dir is 64).
    (tmp_path / "notes").mkdir()
    (tmp_path / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n')
    assert main(["wiki", "recall", "auth", "--vault", str(tmp_path)]) == 3
    assert capsys.readouterr() == (
        "",
        f"mnemosyne: error: vault '{tmp_path}' has none of the scanned dirs (wiki); its dirs are notes: "
        "pass the vault root with --vault, or name its dirs with --dir\n",
    )


def test_an_invalid_config_file_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    (vault / ".mnemosyne.toml").write_text('dirs = "wiki"\n', encoding="utf-8")
    assert main(["wiki", "recall", "auth", "--vault", str(vault)]) == 3
    assert capsys.readouterr() == (
        "",
        f"mnemosyne: error: {vault}/.mnemosyne.toml: dirs must be a non-empty list of dir names, "
        'e.g. dirs = ["wiki"]\n',
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wiki", "recall"], "the following arguments are required: TOPIC (see 'mnemosyne wiki recall --help')"),
        (
            ["wiki", "recall", "auth", "--limit", "3"],
            "unrecognized arguments: --limit 3 (see 'mnemosyne wiki recall --help')",
        ),
        (["wiki", "recall", " ", "\t"], "no topic given: pass at least one TOPIC word with a non-space character"),
    ],
)
def test_usage_errors_exit_64(harness: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main([*argv, "--vault", str(harness)]) == 64
    assert capsys.readouterr() == ("", f"mnemosyne: error: {message}\n")


@pytest.mark.parametrize("cached", [False, True], ids=["plain", "cached"])
def test_an_unreadable_page_with_no_match_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    vault = wiki_vault(tmp_path)
    write_page(vault, "wiki/locked.md", "tags: [auth]")
    write_page(vault, "wiki/open.md", "tags: [other]")
    real_read = read_page_bytes
    real_open_page = vault_open_page

    def read(page: PageRef) -> bytes:
        if page.name == "locked.md":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_read(page)

    def open_page(read_path: str) -> int:
        if read_path.endswith("/locked.md"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open_page(read_path)

    # The plain scan reads each page whole; a call through the index through the page reader.
    flags = [] if cached else ["--no-cache"]
    if cached:
        build_index(vault)  # before the reader is made to fail: the pages are racy, read again
    monkeypatch.setattr(recall_module, "read_page_bytes", read)
    monkeypatch.setattr(page_module, "open_page", open_page)
    assert main(["wiki", "recall", "auth", "--vault", str(vault), *flags]) == 3
    assert capsys.readouterr() == (
        "",
        "no wiki entry matched 'auth' among the pages that could be read\n"
        "mnemosyne: error: the search was incomplete (see the warnings below): fix them and recall again\n"
        "mnemosyne: warning: wiki/locked.md: cannot read (Permission denied); skipped\n",
    )
    write_page(vault, "wiki/open.md", "tags: [auth]")
    assert main(["wiki", "recall", "auth", "--vault", str(vault), *flags]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("wiki/open.md\n")
    assert err == "mnemosyne: warning: wiki/locked.md: cannot read (Permission denied); skipped\n"


# --- the memory log ---


def test_a_successful_recall_is_logged_in_the_configured_memory_dir(
    harness: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixture's .mnemosyne.toml says memory_dir = "memory", relative to the vault."""
    assert main(["wiki", "recall", "github", "auth", "--vault", str(harness)]) == 0
    capsys.readouterr()
    assert (harness / "memory" / TODAY_LOG).read_text(encoding="utf-8") == log_entry(
        "OP",
        "github auth",
        4,
        "gh-cli-pagination, github-token-workflow-scope, sandbox-credential-boundaries",
        "matched 4 entries on `github auth`; read the 3 most recently updated, 1 not read.",
    )


def test_an_empty_result_is_logged(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "xyzzy", "--vault", str(harness)]) == 0
    capsys.readouterr()
    pages = len(list((harness / "wiki").glob("*.md")))
    assert (harness / "memory" / TODAY_LOG).read_text(encoding="utf-8") == log_entry(
        "OP", "xyzzy", 0, "—", f"no entry among {pages} matched `xyzzy` in its title, slug or tags."
    )


def test_a_failed_call_is_logged_as_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = tmp_path / "memory"
    missing = tmp_path / "nowhere"
    assert main(["wiki", "recall", "auth", "--vault", str(missing), "--memory-dir", str(memory)]) == 3
    capsys.readouterr()
    assert (memory / TODAY_LOG).read_text(encoding="utf-8") == log_entry(
        "FAIL",
        "auth",
        0,
        "—",
        f"recall failed: vault '{missing}' does not exist: pass --vault PATH to your vault root.",
    )


def test_a_blank_topic_is_logged_as_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = tmp_path / "memory"
    assert main(["wiki", "recall", " ", "--vault", str(tmp_path), "--memory-dir", str(memory)]) == 64
    capsys.readouterr()
    assert (memory / TODAY_LOG).read_text(encoding="utf-8") == log_entry(
        "FAIL", "", 0, "—", "recall failed: no topic given: pass at least one TOPIC word with a non-space character."
    )


def test_the_memory_dir_comes_from_flag_then_env_then_config(
    harness: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from_env, from_flag = tmp_path / "env-memory", tmp_path / "flag-memory"
    env = Environment({**os.environ, MEMORY_DIR_ENV_VAR: str(from_env)})
    assert main(["wiki", "recall", "mcp", "--vault", str(harness)], env) == 0
    assert main(["wiki", "recall", "mcp", "--vault", str(harness), "--memory-dir", str(from_flag)], env) == 0
    capsys.readouterr()
    entry = log_entry("OP", "mcp", 1, "mcp-server-registry", "matched 1 entry on `mcp`; it was read into context.")
    assert (from_env / TODAY_LOG).read_text(encoding="utf-8") == entry
    assert (from_flag / TODAY_LOG).read_text(encoding="utf-8") == entry
    assert not (harness / "memory").exists()


def test_calls_append_to_the_same_day_log(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "mcp", "--vault", str(harness)]) == 0
    assert main(["wiki", "recall", "xyzzy", "--vault", str(harness)]) == 0
    capsys.readouterr()
    text = (harness / "memory" / TODAY_LOG).read_text(encoding="utf-8")
    assert text.count("## /wiki-query -- 09:05 UTC\n") == 2
    assert "\n\n## /wiki-query" in text


def test_no_log_without_a_memory_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = wiki_vault(tmp_path)
    write_page(vault, "wiki/entry.md", "tags: [auth]")
    before = sorted(str(path) for path in tmp_path.rglob("*"))
    assert main(["wiki", "recall", "auth", "--vault", str(vault)]) == 0
    assert main(["wiki", "recall", "xyzzy", "--vault", str(vault)]) == 0
    capsys.readouterr()
    assert sorted(str(path) for path in tmp_path.rglob("*")) == before


def test_a_log_that_cannot_be_written_is_a_warning(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = harness / "not-a-dir"
    blocker.write_text("a file\n", encoding="utf-8")
    assert main(["wiki", "recall", "xyzzy", "--vault", str(harness), "--memory-dir", str(blocker)]) == 0
    assert capsys.readouterr() == (
        "No wiki entries matched xyzzy\n",
        f"mnemosyne: warning: cannot open the memory log {blocker}/2026-03-18/log.md: Not a directory; "
        "check --memory-dir; the recall itself is unaffected\n"
        "hint: 1 page has no frontmatter title, slug or tags, so recall cannot see it; "
        f"find searches it too: mnemosyne wiki find --vault {harness} xyzzy\n",
    )


@pytest.mark.slow
def test_concurrent_recalls_log_whole_entries(harness: Path, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    topics = [f"github auth {index}" for index in range(8)]
    environ = {**os.environ, MEMORY_DIR_ENV_VAR: str(memory)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "mnemosyne_cli", "wiki", "recall", topic, "--vault", str(harness)],
            stdout=subprocess.DEVNULL,
            env=environ,
        )
        for topic in topics
    ]
    assert [process.wait(timeout=60) for process in processes] == [0] * len(topics)
    days = list(memory.iterdir())
    assert len(days) == 1  # unless the test straddles UTC midnight
    entries = (days[0] / "log.md").read_text(encoding="utf-8").split("\n\n")
    queries = []
    for entry in entries:
        lines = entry.rstrip("\n").split("\n")
        assert len(lines) == 6
        assert lines[0].startswith("## /wiki-query -- ")
        assert lines[1:4:2] == ["- **Result**: OP", "- **Match-Count**: 4"]
        queries.append(lines[2])
    assert sorted(queries) == sorted(f"- **Query**: {topic}" for topic in topics)


# --- --json ---


def test_json_output_is_schema_valid_and_carries_read_content(
    harness: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["wiki", "recall", "github", "auth", "--json", "--vault", str(harness)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    document = json.loads(out)
    jsonschema.validate(document, load_schema("recall"), cls=jsonschema.Draft202012Validator)
    assert document["query"] == "github auth"
    assert document["terms"] == ["github", "auth"]
    assert (document["match_count"], document["not_read"]) == (4, 1)
    assert document["read_slugs"] == [
        "gh-cli-pagination",
        "github-token-workflow-scope",
        "sandbox-credential-boundaries",
    ]
    sandbox = document["matches"][2]
    assert sandbox == {
        "path": "wiki/sandbox-credential-boundaries.md",
        "title": "Sandbox Credential Boundaries",
        "slug": "sandbox-credential-boundaries",
        "tags": ["auth", "sandbox"],
        "updated": "2026-03-02",
        "content": (harness / "wiki" / "sandbox-credential-boundaries.md").read_text(encoding="utf-8"),
    }
    assert document["matches"][3]["path"] == "wiki/oauth-device-flow.md"
    assert document["matches"][3]["content"] is None


def test_json_reports_string_tags_and_invalid_dates(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "mcp", "hooks", "--json", "--vault", str(harness)]) == 0
    document = json.loads(capsys.readouterr().out)
    jsonschema.validate(document, load_schema("recall"), cls=jsonschema.Draft202012Validator)
    assert [(match["path"], match["tags"], match["updated"]) for match in document["matches"]] == [
        ("wiki/mcp-server-registry.md", ["mcp, tooling"], "2026-02-20"),
        ("wiki/claude-code-hooks.md", ["hooks", "automation"], None),
    ]


def test_json_on_no_match_is_an_empty_list_and_exit_0(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "xyzzy", "--json", "--vault", str(harness)]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    jsonschema.validate(document, load_schema("recall"), cls=jsonschema.Draft202012Validator)
    assert document == {
        "query": "xyzzy",
        "terms": ["xyzzy"],
        "match_count": 0,
        "read_slugs": [],
        "not_read": 0,
        "matches": [],
    }
    assert err == (
        "No wiki entries matched xyzzy\n"
        "hint: 1 page has no frontmatter title, slug or tags, so recall cannot see it; "
        f"find searches it too: mnemosyne wiki find --vault {harness} xyzzy\n"
    )


# --- layout: the config file and --dir, for find and recall alike ---


def test_find_uses_the_config_files_dirs(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "find", "rfc", "8628", "--vault", str(harness)]) == 0
    assert capsys.readouterr() == ("wiki/oauth-device-flow.md — OAuth Device Flow for Headless CLIs\n", "")


def test_find_and_recall_ignore_dirs_the_config_file_does_not_name(
    harness: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_page(harness, "hermes/github-relay.md", "title: GitHub Relay\ntags: [github]")
    assert main(["wiki", "find", "relay", "--vault", str(harness)]) == 1
    assert capsys.readouterr() == ("", "no wiki page matches 'relay'\n")
    assert main(["wiki", "recall", "relay", "--vault", str(harness)]) == 0
    assert capsys.readouterr() == (
        "No wiki entries matched relay\n",
        "hint: 1 page has no frontmatter title, slug or tags, so recall cannot see it; "
        f"find searches it too: mnemosyne wiki find --vault {harness} relay\n",
    )


def test_dir_overrides_the_config_file_for_find_and_recall(harness: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_page(harness, "archive/github-relay.md", "title: GitHub Relay\ntags: [github]\nupdated: 2026-01-01")
    write_page(harness, "notes/auth-notes.md", "title: Auth Notes\ntags: [auth]\nupdated: 2026-01-02")
    assert main(["wiki", "find", "relay", "--vault", str(harness), "--dir", "archive", "--dir", "notes"]) == 0
    assert capsys.readouterr() == ("archive/github-relay.md — GitHub Relay\n", "")
    assert (
        main(["wiki", "recall", "github", "auth", "--vault", str(harness), "--dir", "archive", "--dir", "notes"]) == 0
    )
    out, err = capsys.readouterr()
    assert out == (
        "notes/auth-notes.md\n"
        "archive/github-relay.md\n"
        + shown(harness, "notes/auth-notes.md")
        + shown(harness, "archive/github-relay.md")
        + "\n2 matches; read 2: auth-notes, github-relay; 0 not read\n"
    )
    assert err == ""


def test_recall_works_on_the_aion_layout_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_page(tmp_path, "hermes/slack-bridge.md", "title: Slack Bridge\ntags: [chat]\nupdated: 2026-01-01")
    write_page(tmp_path, "analyses/chat-costs.md", "title: Chat Costs\ntags: [costs]\nupdated: 2026-02-01")
    write_page(tmp_path, "wiki/chat.md", "title: Not Scanned Here")
    assert main(["wiki", "recall", "chat", "--vault", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split("\n\n", 1)[0] == "analyses/chat-costs.md\nhermes/slack-bridge.md"


def test_recall_help_ends_with_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wiki", "recall", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:\n  mnemosyne wiki recall github auth --vault fixtures/vaults/harness\n" in out
    tail = out[out.index("exit codes:") :].splitlines()
    # A meaning too long for the terminal wraps onto lines indented under it (no code).
    assert [line.split()[0] for line in tail[1:] if line[:5].strip().isdigit()] == ["0", "3", "64", "74", "130"]


# --- recall cannot flood: each page read is cut to its share of --max-bytes ---


def long_pages(tmp_path: Path) -> Path:
    """Three pages on rust: a short one dated newest, and two of 3,000 lines each."""
    vault = wiki_vault(tmp_path)
    lines = "".join(f"line {number}: rust\n" for number in range(1, 3001))
    write_page(vault, "wiki/rust-short.md", "title: Rust short\nupdated: 2026-03-03", "Short.\n")
    write_page(vault, "wiki/rust-async.md", "title: Rust async\nupdated: 2026-03-02", lines)
    write_page(vault, "wiki/rust.md", "title: Rust\nupdated: 2026-03-01", lines)
    return vault


def test_a_long_page_shows_its_first_lines_and_the_call_that_prints_it_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = long_pages(tmp_path)
    monkeypatch.chdir(vault)  # the vault found from here: the call names no --vault, nor does its --cat
    code = main(["wiki", "recall", "rust", "--max-bytes", "600"])
    captured = capsys.readouterr()
    # 600 bytes: the list (150 at most) and the summary, then each page its share of the
    # rest; the short page leaves what it does not use to the two after it.
    assert (code, captured.out, captured.err) == (
        0,
        "wiki/rust-short.md\n"
        "wiki/rust-async.md\n"
        "wiki/rust.md\n"
        "\n"
        "==> wiki/rust-short.md <==\n"
        "---\ntitle: Rust short\nupdated: 2026-03-03\n---\n\nShort.\n"
        "\n"
        "==> wiki/rust-async.md <==\n"
        "---\ntitle: Rust async\nupdated: 2026-03-02\n---\n\nline 1: rust\nline 2: rust\n"
        "[… 2998 more lines; to print the whole page: mnemosyne wiki find --cat wiki/rust-async.md]\n"
        "\n"
        "==> wiki/rust.md <==\n"
        "---\ntitle: Rust\nupdated: 2026-03-01\n---\n\nline 1: rust\nline 2: rust\nline 3: rust\nline 4: rust\n"
        "[… 2996 more lines; to print the whole page: mnemosyne wiki find --cat wiki/rust.md]\n"
        "\n"
        "3 matches; read 3: rust-short, rust-async, rust; 0 not read\n",
        "",
    )
    assert len(captured.out.encode()) <= 600
    # The call it names prints that page, byte for byte.
    assert main(["wiki", "find", "--cat", "wiki/rust.md"]) == 0
    assert capsys.readouterr().out == Path("wiki/rust.md").read_text(encoding="utf-8")


def test_the_default_cap_keeps_recall_under_32_kb_and_zero_lifts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = long_pages(tmp_path)
    for name in ("rust-async", "rust"):
        path = vault / "wiki" / f"{name}.md"
        path.write_text(path.read_text(encoding="utf-8") * 10, encoding="utf-8")  # 30,000 lines each
    assert main(["wiki", "recall", "rust", "--vault", str(vault)]) == 0
    out = capsys.readouterr().out
    assert 30_000 < len(out.encode()) <= 32 * 1024
    assert out.count("[… ") == 2
    assert main(["wiki", "recall", "rust", "--vault", str(vault), "--max-bytes", "0"]) == 0
    whole = capsys.readouterr().out
    assert "[… " not in whole
    assert whole.endswith(
        (vault / "wiki/rust.md").read_text(encoding="utf-8")
        + "\n3 matches; read 3: rust-short, rust-async, rust; 0 not read\n"
    )


def test_a_long_match_list_takes_a_quarter_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = wiki_vault(tmp_path)
    for number in range(1, 31):
        write_page(vault, f"wiki/rust-{number:02}.md", f"title: Rust {number}\nupdated: 2026-03-01")
    assert main(["wiki", "recall", "rust", "--vault", str(vault), "--max-bytes", "400"]) == 0
    listed = capsys.readouterr().out.split("\n\n")[0]
    # A quarter of 400 bytes holds 6 lines of 16 bytes.
    assert listed == (
        "wiki/rust-01.md\nwiki/rust-02.md\nwiki/rust-03.md\nwiki/rust-04.md\nwiki/rust-05.md\nwiki/rust-06.md\n"
        "… and 24 more matches (--max-bytes 0 lists them all)"
    )


def test_json_carries_the_same_cut_and_says_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(long_pages(tmp_path))
    assert main(["wiki", "recall", "rust", "--max-bytes", "600", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    jsonschema.validate(document, load_schema("recall"))
    assert [(match["content"], match.get("cut")) for match in document["matches"]] == [
        ("---\ntitle: Rust short\nupdated: 2026-03-03\n---\n\nShort.\n", None),
        (
            "---\ntitle: Rust async\nupdated: 2026-03-02\n---\n\nline 1: rust\nline 2: rust\n",
            {
                "lines_shown": 7,
                "lines_left_out": 2998,
                "command": "mnemosyne wiki find --cat wiki/rust-async.md",
            },
        ),
        (
            "---\ntitle: Rust\nupdated: 2026-03-01\n---\n\nline 1: rust\nline 2: rust\nline 3: rust\nline 4: rust\n",
            {"lines_shown": 9, "lines_left_out": 2996, "command": "mnemosyne wiki find --cat wiki/rust.md"},
        ),
    ]
