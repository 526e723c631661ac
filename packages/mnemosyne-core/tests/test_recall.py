"""recall: matching, ranking, the read cap and the memory log, one test per rule."""

from __future__ import annotations

import datetime
import errno
import os
import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from mnemosyne_core import recall as recall_module
from mnemosyne_core.config import MEMORY_DIR_ENV_VAR, VAULT_CONFIG_FILE
from mnemosyne_core.diagnostics import CANNOT_READ, Diagnostic
from mnemosyne_core.errors import InvalidQueryError, VaultError
from mnemosyne_core.fold import fold
from mnemosyne_core.frontmatter import collapse_whitespace, loads_bytes
from mnemosyne_core.page import read_page_bytes
from mnemosyne_core.page_recall import tags_of, updated_date
from mnemosyne_core.recall import (
    READ_CAP,
    MemoryLogError,
    RecallResult,
    append_log,
    failure_observation,
    format_log_entry,
    log_path,
    observation,
    one_line,
    recall,
    resolve_memory_dir,
    split_topic,
)

if TYPE_CHECKING:
    from pyfakefs.fake_filesystem import FakeFilesystem

    from mnemosyne_core.page import PageRef

VAULT = "/vault"
HARNESS_FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "vaults" / "harness"
WHEN = datetime.datetime(2026, 3, 18, 9, 5, 42, tzinfo=datetime.UTC)


def page(fs: FakeFilesystem, rel_path: str, frontmatter: str, body: str = "Body text.\n") -> None:
    """A page at VAULT/rel_path with the given frontmatter lines."""
    content = f"---\n{textwrap.dedent(frontmatter).strip()}\n---\n\n{body}"
    fs.create_file(f"{VAULT}/{rel_path}", contents=content.encode("utf-8"))


def harness_vault(fs: FakeFilesystem) -> None:
    """An empty harness-layout vault: one flat wiki/ dir declared in the config file."""
    fs.create_file(f"{VAULT}/{VAULT_CONFIG_FILE}", contents='dirs = ["wiki"]\n')
    fs.create_dir(f"{VAULT}/wiki")


def paths(result: RecallResult) -> list[str]:
    return [entry.path for entry in result.matches]


# --- the topic ---


def test_topic_is_split_on_whitespace_into_terms() -> None:
    assert split_topic("github  auth\tsandbox\n") == ("github", "auth", "sandbox")
    assert split_topic(["github auth", "sandbox"]) == ("github", "auth", "sandbox")


@pytest.mark.parametrize("topic", ["", "   ", [], ["", " \t"]])
def test_a_topic_without_terms_is_an_invalid_query(topic: str | list[str]) -> None:
    with pytest.raises(InvalidQueryError, match="no topic given"):
        split_topic(topic)


# --- matching ---


def test_any_term_matching_is_enough_or_semantics(fs: FakeFilesystem) -> None:
    """Any term is enough: `github auth` finds the entry tagged [auth, sandbox] and the one
    titled GitHub Token Workflow Scope, though neither holds both words."""
    harness_vault(fs)
    page(fs, "wiki/sandbox-credential-boundaries.md", "title: Sandbox Credential Boundaries\ntags: [auth, sandbox]")
    page(fs, "wiki/github-token-workflow-scope.md", "title: GitHub Token Workflow Scope\ntags: [tokens]")
    page(fs, "wiki/docker-networking.md", "title: Docker Networking\ntags: [docker]")
    result = recall(VAULT, "github auth")
    assert sorted(paths(result)) == ["wiki/github-token-workflow-scope.md", "wiki/sandbox-credential-boundaries.md"]


def test_an_entry_matching_several_terms_is_listed_once(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/github-auth.md", "title: GitHub Auth\nslug: github-auth\ntags: [github, auth]")
    assert paths(recall(VAULT, "github auth GITHUB")) == ["wiki/github-auth.md"]


@pytest.mark.parametrize(
    ("field", "frontmatter"),
    [
        ("title", "title: Rotating the Kestrel Keys"),
        ("slug", "slug: kestrel-keys"),
        ("tags list", "tags: [ci, kestrel]"),
        ("tags block list", "tags:\n  - ci\n  - kestrel"),
        ("tags string", "tags: build, kestrel-cache"),
    ],
)
def test_title_slug_and_tags_are_searched(fs: FakeFilesystem, field: str, frontmatter: str) -> None:
    harness_vault(fs)
    page(fs, "wiki/entry.md", frontmatter)
    assert paths(recall(VAULT, "kestrel")) == ["wiki/entry.md"], field


@pytest.mark.parametrize(
    ("where", "name", "frontmatter", "body"),
    [
        ("body", "entry.md", "title: Build Cache", "Kestrel is the codename of the cache.\n"),
        ("file name", "kestrel.md", "title: Build Cache", "Body.\n"),
        ("other key", "entry.md", "title: Build Cache\ndescription: the kestrel cache", "Body.\n"),
        ("other key type", "entry.md", "title: Build Cache\ntype: kestrel", "Body.\n"),
    ],
)
def test_body_file_name_and_other_keys_are_not_searched(
    fs: FakeFilesystem, where: str, name: str, frontmatter: str, body: str
) -> None:
    harness_vault(fs)
    page(fs, f"wiki/{name}", frontmatter, body)
    assert paths(recall(VAULT, "kestrel")) == [], where


def test_a_page_without_usable_frontmatter_never_matches(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    fs.create_file(f"{VAULT}/wiki/README.md", contents="# Kestrel index\n\ntitle: kestrel\n")
    fs.create_file(f"{VAULT}/wiki/unclosed.md", contents="---\ntitle: Kestrel\n")
    fs.create_file(f"{VAULT}/wiki/not-mapping.md", contents="---\n- kestrel\n---\n")
    assert paths(recall(VAULT, "kestrel")) == []


def test_non_string_tags_and_titles_are_ignored(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/numbers.md", "title: 2026\nslug: 7\ntags: [2026, true, auth]")
    assert paths(recall(VAULT, "2026")) == []
    assert paths(recall(VAULT, "true")) == []
    entry = recall(VAULT, "auth").matches[0]
    assert (entry.title, entry.slug, entry.tags) == (None, None, ["auth"])


def test_tags_of_takes_string_items_or_a_string() -> None:
    assert tags_of(["a", 1, None, "b", ["c"]]) == ["a", "b"]
    assert tags_of("auth, sandbox") == ["auth, sandbox"]
    assert tags_of(None) == []
    assert tags_of({"a": "b"}) == []


@pytest.mark.parametrize(
    ("term", "title"),
    [
        ("STRASSE", "Straße Routing"),
        ("straße", "STRASSE ROUTING"),
        ("\u212a", "kelvin scale"),  # the Kelvin sign folds to k
        ("caf\u00e9", unicodedata.normalize("NFD", "Café Menu")),
        (unicodedata.normalize("NFD", "café"), "Café Menu"),
        ("ΣΊΣΥΦΟΣ", "σίσυφος"),
    ],
)
def test_unicode_matching_is_finds_fold_rule(fs: FakeFilesystem, term: str, title: str) -> None:
    harness_vault(fs)
    page(fs, "wiki/entry.md", f"title: {title}")
    assert fold(term) in fold(title)  # the rule this test holds recall to
    assert paths(recall(VAULT, term)) == ["wiki/entry.md"]


def test_a_complex_yaml_block_is_read_by_the_shared_parser(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/folded.md", 'title: >-\n  Kestrel\n  Build   Cache\ntags: ["ci", {odd: map}]\nupdated: "2026-01-02"')
    entry = recall(VAULT, "cache").matches[0]
    assert (entry.title, entry.tags, entry.updated) == ("Kestrel Build Cache", ["ci"], datetime.date(2026, 1, 2))


def test_matching_agrees_with_the_plain_rule_on_the_harness_fixture() -> None:
    """For every topic word, recall's match set equals the obvious computation: parse each
    wiki/*.md with frontmatter.loads_bytes and test fold(term) in fold(field)."""
    wiki = HARNESS_FIXTURE / "wiki"
    words = {"github", "auth", "sandbox", "GITHUB", "cli", "memory", "hooks", "zzz", "-", "o", "ssh git"}
    for topic in sorted(words):
        expected = set()
        for path in sorted(wiki.glob("*.md")):
            metadata = loads_bytes(path.read_bytes()).metadata or {}
            fields = [metadata.get("title"), metadata.get("slug")]
            tags = metadata.get("tags")
            fields += tags if isinstance(tags, list) else [tags]
            texts = [fold(field) for field in fields if isinstance(field, str)]
            if any(fold(term) in text for term in topic.split() for text in texts):
                expected.add(f"wiki/{path.name}")
        assert set(paths(recall(HARNESS_FIXTURE, topic))) == expected, topic


# --- ranking ---


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime.date(2026, 3, 1), datetime.date(2026, 3, 1)),
        (datetime.datetime(2026, 3, 1, 23, 59), datetime.date(2026, 3, 1)),
        (
            datetime.datetime(2026, 3, 1, 23, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
            datetime.date(2026, 3, 1),
        ),
        ("2026-03-01", datetime.date(2026, 3, 1)),
        (" 2026-03-01 ", datetime.date(2026, 3, 1)),
        ("2026-03-01T10:15:00Z", datetime.date(2026, 3, 1)),
        ("2026-03-01 10:15", datetime.date(2026, 3, 1)),
        ("2026-02-30", None),
        ("2026-3-1", None),
        ("20260301", None),
        ("2026-W09-7", None),
        ("2026-03-01 soon", None),
        ("last week", None),
        ("", None),
        (20260301, None),
        # Dendron's epoch milliseconds, by their UTC date; a year or epoch seconds are not dates.
        (1653409628830, datetime.date(2022, 5, 24)),
        (1772409599999, datetime.date(2026, 3, 1)),
        (1772409600000, datetime.date(2026, 3, 2)),
        (10**11, datetime.date(1973, 3, 3)),
        (10**11 - 1, None),
        (10**13, None),
        (2024, None),
        (1653409628, None),
        (True, None),
        (1653409628830.0, None),
        (None, None),
        ([datetime.date(2026, 3, 1)], None),
    ],
)
def test_updated_date_accepts_dates_datetimes_and_iso_strings(value: object, expected: datetime.date | None) -> None:
    assert updated_date(value) == expected


def test_ranking_is_newest_first_by_updated_else_lastmod_or_date_then_undated_by_path(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    dates = {
        "old": "updated: 2025-01-01",
        "new": "updated: 2026-03-18",
        "string-date": "updated: '2026-02-01'",
        "datetime": "updated: 2026-02-01 23:59:00",
        "missing": "",
        "invalid": "updated: last week",
        "impossible": "updated: '2026-02-30'",
        "hugo": "lastmod: 2026-03-01\ndate: 2020-01-01",
        "jekyll": "date: 2026-02-01 10:00:00 +0100",
        "aion": "updated: 2025-01-01\ndate: 2026-03-18",
        "dendron": "updated: 1772409600000\ncreated: 1653409628830",
        "bad-updated": "updated: last week\ndate: 2024-06-01",
        "undated": "published: 2026-03-18",
    }
    for name, lines in dates.items():
        page(fs, f"wiki/{name}.md", "\n".join(["tags: [t]", *([lines] if lines else [])]))
    assert [(entry.path, entry.updated) for entry in recall(VAULT, "t").matches] == [
        ("wiki/new.md", datetime.date(2026, 3, 18)),
        ("wiki/dendron.md", datetime.date(2026, 3, 2)),  # epoch milliseconds, by their UTC date
        ("wiki/hugo.md", datetime.date(2026, 3, 1)),  # lastmod before date
        ("wiki/datetime.md", datetime.date(2026, 2, 1)),  # the same date: the tie goes by path
        ("wiki/jekyll.md", datetime.date(2026, 2, 1)),
        ("wiki/string-date.md", datetime.date(2026, 2, 1)),
        ("wiki/aion.md", datetime.date(2025, 1, 1)),  # updated, though date is newer
        ("wiki/old.md", datetime.date(2025, 1, 1)),
        ("wiki/bad-updated.md", datetime.date(2024, 6, 1)),  # the next valid one
        ("wiki/impossible.md", None),  # no valid date: last, by path
        ("wiki/invalid.md", None),
        ("wiki/missing.md", None),
        ("wiki/undated.md", None),
    ]


def test_ties_are_broken_by_path_in_code_point_order(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/{VAULT_CONFIG_FILE}", contents='dirs = ["wiki", "Archive"]\n')
    for rel_path in ["wiki/b.md", "wiki/B.md", "wiki/a.md", "wiki/é.md", "Archive/z.md"]:
        page(fs, rel_path, "tags: [t]\nupdated: 2026-01-01")
    expected = sorted(["wiki/b.md", "wiki/B.md", "wiki/a.md", "wiki/é.md", "Archive/z.md"])
    assert expected == ["Archive/z.md", "wiki/B.md", "wiki/a.md", "wiki/b.md", "wiki/é.md"]
    assert paths(recall(VAULT, "t")) == expected


# --- the read cap ---


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_the_top_min_3_matches_keep_their_full_text(fs: FakeFilesystem, count: int) -> None:
    harness_vault(fs)
    for day in range(1, count + 1):
        page(fs, f"wiki/entry-{day}.md", f"tags: [cap]\nupdated: 2026-01-{day:02d}", f"Entry {day}.\n")
    result = recall(VAULT, "cap")
    newest_first = [f"entry-{day}" for day in range(count, 0, -1)]
    assert [entry.file_slug for entry in result.matches] == newest_first
    read = min(READ_CAP, count)
    assert result.read_slugs == newest_first[:read]
    assert result.not_read == count - read
    for entry in result.matches[:read]:
        assert entry.content == Path(f"{VAULT}/{entry.path}").read_bytes()
    assert [entry.content for entry in result.matches[read:]] == [None] * (count - read)


def test_no_match_and_empty_corpus_are_results_not_errors(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    empty = recall(VAULT, "anything")
    assert (empty.matches, empty.pages_searched, empty.incomplete) == ([], 0, False)
    page(fs, "wiki/entry.md", "tags: [other]")
    none = recall(VAULT, "anything")
    assert (none.matches, none.pages_searched) == ([], 1)


# --- the vault and its layout ---


def test_a_missing_vault_is_a_vault_error(fs: FakeFilesystem) -> None:
    with pytest.raises(VaultError, match="does not exist"):
        recall("/nowhere", "topic")


def test_a_vault_without_its_scanned_dirs_is_a_vault_error(fs: FakeFilesystem) -> None:
    fs.create_dir(f"{VAULT}/notes")
    fs.create_file(f"{VAULT}/.mnemosyne.toml", contents='dirs = ["wiki"]\n')
    with pytest.raises(VaultError, match="has none of the scanned dirs"):
        recall(VAULT, "topic")


def test_the_config_file_names_the_scanned_dirs(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/in-wiki.md", "tags: [t]")
    page(fs, "hermes/in-constellation.md", "tags: [t]")
    assert paths(recall(VAULT, "t")) == ["wiki/in-wiki.md"]


def test_dirs_override_the_config_file(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/in-wiki.md", "tags: [t]")
    page(fs, "notes/in-notes.md", "tags: [t]")
    page(fs, "hermes/in-hermes.md", "tags: [t]")
    assert paths(recall(VAULT, "t", dirs=["notes", "hermes"])) == ["hermes/in-hermes.md", "notes/in-notes.md"]


def test_an_unreadable_page_is_a_warning_and_makes_the_result_incomplete(
    fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness_vault(fs)
    page(fs, "wiki/locked.md", "tags: [t]")
    page(fs, "wiki/open.md", "tags: [t]")
    real_read = read_page_bytes

    def read(page_ref: PageRef) -> bytes:
        if page_ref.name == "locked.md":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_read(page_ref)

    monkeypatch.setattr(recall_module, "read_page_bytes", read)
    result = recall(VAULT, "t")
    assert paths(result) == ["wiki/open.md"]
    assert (result.unreadable, result.incomplete) == (1, True)
    assert result.warnings == [Diagnostic("wiki/locked.md", CANNOT_READ, "Permission denied")]


def test_to_dict_reports_fields_and_only_read_content(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    page(fs, "wiki/a.md", "title: A  Title\nslug: a\ntags: x\nupdated: 2026-01-04")
    for day in (1, 2, 3):
        page(fs, f"wiki/n{day}.md", f"tags: [x]\nupdated: 2026-01-0{day}")
    first, *_, last = recall(VAULT, "x").matches
    assert first.to_dict() == {
        "path": "wiki/a.md",
        "title": "A Title",
        "slug": "a",
        "tags": ["x"],
        "updated": "2026-01-04",
        "content": Path(f"{VAULT}/wiki/a.md").read_text(encoding="utf-8"),
    }
    assert last.to_dict() == {
        "path": "wiki/n1.md",
        "title": None,
        "slug": None,
        "tags": ["x"],
        "updated": "2026-01-01",
        "content": None,
    }


# --- the memory log ---


def test_resolve_memory_dir_prefers_flag_then_env_then_vault_config(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/{VAULT_CONFIG_FILE}", contents='dirs = ["wiki"]\nmemory_dir = "memory"\n')
    env = {MEMORY_DIR_ENV_VAR: "/from-env"}
    assert resolve_memory_dir("/from-flag", VAULT, env) == "/from-flag"
    assert resolve_memory_dir(None, VAULT, env) == "/from-env"
    assert resolve_memory_dir(None, VAULT, {}) == f"{VAULT}/memory"
    assert resolve_memory_dir(None, VAULT, {MEMORY_DIR_ENV_VAR: ""}) == f"{VAULT}/memory"


def test_resolve_memory_dir_is_none_when_nothing_configures_one(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/{VAULT_CONFIG_FILE}", contents='dirs = ["wiki"]\n')
    assert resolve_memory_dir(None, VAULT, {}) is None
    assert resolve_memory_dir(None, "/nowhere", {}) is None
    assert resolve_memory_dir(None, None, {}) is None
    fs.create_file("/bad/.mnemosyne.toml", contents="memory_dir = [\n")
    assert resolve_memory_dir(None, "/bad", {}) is None
    assert resolve_memory_dir(None, "/bad", {MEMORY_DIR_ENV_VAR: "/m"}) == "/m"


def test_an_absolute_memory_dir_in_the_config_is_kept(fs: FakeFilesystem) -> None:
    fs.create_file(f"{VAULT}/{VAULT_CONFIG_FILE}", contents='memory_dir = "/var/memory"\n')
    assert resolve_memory_dir(None, VAULT, {}) == "/var/memory"


def test_log_entry_format_for_a_successful_recall() -> None:
    entry = format_log_entry(
        ok=True, query="github auth", match_count=4, read_slugs=["a", "b", "c"], observation="Found.", when=WHEN
    )
    assert entry == (
        "## /wiki-query -- 09:05 UTC\n"
        "- **Result**: OP\n"
        "- **Query**: github auth\n"
        "- **Match-Count**: 4\n"
        "- **Read-Slugs**: a, b, c\n"
        "- **Observation**: Found.\n"
    )


def test_log_entry_format_for_an_empty_result_and_a_failure() -> None:
    empty = format_log_entry(ok=True, query="xyzzy", match_count=0, read_slugs=[], observation="None.", when=WHEN)
    assert empty.splitlines()[1:] == [
        "- **Result**: OP",
        "- **Query**: xyzzy",
        "- **Match-Count**: 0",
        "- **Read-Slugs**: —",
        "- **Observation**: None.",
    ]
    failed = format_log_entry(ok=False, query="q", match_count=0, read_slugs=[], observation="Broke.", when=WHEN)
    assert failed.splitlines()[1] == "- **Result**: FAIL"


def test_log_fields_stay_on_one_line() -> None:
    entry = format_log_entry(
        ok=True,
        query="a\nb\x1b[31m",
        match_count=1,
        read_slugs=["x\ny"],
        observation="two\nlines",
        when=WHEN,
    )
    assert entry.splitlines()[2:] == [
        "- **Query**: a b\\x1b[31m",
        "- **Match-Count**: 1",
        "- **Read-Slugs**: x y",
        "- **Observation**: two lines",
    ]


def test_log_time_and_date_are_utc() -> None:
    eastern = datetime.timezone(datetime.timedelta(hours=-5))
    late_evening = datetime.datetime(2026, 3, 1, 23, 30, tzinfo=eastern)
    assert log_path("/m", late_evening) == "/m/2026-03-02/log.md"
    entry = format_log_entry(ok=True, query="q", match_count=0, read_slugs=[], observation="o", when=late_evening)
    assert entry.startswith("## /wiki-query -- 04:30 UTC\n")


def test_observations_are_one_sentence(fs: FakeFilesystem) -> None:
    harness_vault(fs)
    assert observation(recall(VAULT, "q")) == "the wiki has no entries to search, so nothing matched `q`."
    page(fs, "wiki/one.md", "tags: [one]")
    assert observation(recall(VAULT, "q")) == "no entry among 1 matched `q` in its title, slug or tags."
    assert observation(recall(VAULT, "one")) == "matched 1 entry on `one`; it was read into context."
    page(fs, "wiki/two.md", "tags: [one]")
    assert observation(recall(VAULT, "one")) == "matched 2 entries on `one`; all 2 read into context."
    page(fs, "wiki/three.md", "tags: [one]")
    page(fs, "wiki/four.md", "tags: [one]")
    assert observation(recall(VAULT, "one")) == (
        "matched 4 entries on `one`; read the 3 most recently updated, 1 not read."
    )
    assert failure_observation(VaultError("vault 'x' does not exist: pass --vault PATH.")) == (
        "recall failed: vault 'x' does not exist: pass --vault PATH."
    )


def test_append_log_creates_the_day_dir_and_separates_entries(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    first = format_log_entry(ok=True, query="a", match_count=0, read_slugs=[], observation="o", when=WHEN)
    second = format_log_entry(ok=False, query="b", match_count=0, read_slugs=[], observation="o", when=WHEN)
    append_log(memory, first, WHEN)
    append_log(memory, second, WHEN)
    assert (memory / "2026-03-18" / "log.md").read_text(encoding="utf-8") == first + "\n" + second


def test_append_log_keeps_what_the_log_already_holds(tmp_path: Path) -> None:
    log = tmp_path / "2026-03-18" / "log.md"
    log.parent.mkdir()
    log.write_text("## /wiki-ingest -- 08:00 UTC\n- **Result**: OP\n", encoding="utf-8")
    entry = format_log_entry(ok=True, query="a", match_count=0, read_slugs=[], observation="o", when=WHEN)
    append_log(tmp_path, entry, WHEN)
    assert log.read_text(encoding="utf-8") == "## /wiki-ingest -- 08:00 UTC\n- **Result**: OP\n\n" + entry


def test_append_log_raises_a_typed_error_when_the_dir_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "memory"
    blocker.write_text("a file, not a dir\n", encoding="utf-8")
    with pytest.raises(MemoryLogError, match=r"cannot open the memory log .*memory/2026-03-18/log\.md"):
        append_log(blocker, "entry\n", WHEN)


def test_a_failed_write_leaves_no_partial_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "2026-03-18" / "log.md"
    log.parent.mkdir()
    log.write_bytes(b"earlier entry\n")
    real_write = os.write

    def half_then_full_disk(fd: int, data: bytes) -> int:
        if not set(data) <= set(b"x\n"):  # not the entry: someone else's write (pytest's)
            return real_write(fd, data)
        if len(data) > 10:
            return real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full_disk)
    with pytest.raises(MemoryLogError, match="No space left on device"):
        append_log(tmp_path, "x" * 100 + "\n", WHEN)
    monkeypatch.undo()
    assert log.read_bytes() == b"earlier entry\n"


_APPENDER = """
import datetime, os, sys, time
from mnemosyne_core.recall import append_log, format_log_entry
when = datetime.datetime(2026, 3, 18, 9, 5, tzinfo=datetime.UTC)
writer, count, memory, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
entries = [
    format_log_entry(ok=True, query=f"w{writer} {index}", match_count=index, read_slugs=[writer],
                     observation=f"writer {writer} entry {index} " + writer * 2000 + ".", when=when)
    for index in range(count)
]
while not os.path.exists(go):  # start together, so the appends overlap
    time.sleep(0.001)
for entry in entries:
    append_log(memory, entry, when)
"""


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    """Several processes append many entries at once; every entry comes out whole."""
    writers, per_writer = "abcdefgh", 300
    memory, go = tmp_path / "memory", tmp_path / "go"
    processes = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, writer, str(per_writer), str(memory), str(go)])
        for writer in writers
    ]
    go.touch()
    assert [process.wait(timeout=60) for process in processes] == [0] * len(writers)
    expected = {
        format_log_entry(
            ok=True,
            query=f"w{writer} {index}",
            match_count=index,
            read_slugs=[writer],
            observation=f"writer {writer} entry {index} " + writer * 2000 + ".",
            when=WHEN,
        )
        for writer in writers
        for index in range(per_writer)
    }
    text = (memory / "2026-03-18" / "log.md").read_text(encoding="utf-8")
    entries = text.split("\n\n")
    assert len(entries) == len(writers) * per_writer
    assert {entry if entry.endswith("\n") else entry + "\n" for entry in entries} == expected
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


#: Characters one_line meets: C0 and C1 controls, DEL, whitespace of both kinds, others.
LINE_CHARACTERS = st.sampled_from(
    ["\x00", "\x1b", "\t", "\n", "\r", "\x7f", "\x85", "\x9f", "\xa0", " ", "a", "é", "\u2028"]
)


@settings(max_examples=examples(2000), deadline=None)
@given(text=st.one_of(st.text(LINE_CHARACTERS, max_size=12), st.text(max_size=12)))
def test_one_line_escapes_what_the_regex_it_replaced_escaped(text: str) -> None:
    """one_line's table of escapes is the regex a recall once compiled at import: whitespace
    runs as one space, then every C0 and C1 control and DEL as ``\\xNN``."""
    escaped = re.sub("[\x00-\x1f\x7f-\x9f]", lambda match: f"\\x{ord(match.group()):02x}", collapse_whitespace(text))
    assert one_line(text) == escaped
