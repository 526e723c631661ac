"""Differential property test of the vault's index: a random vault, random changes between
queries (the server's differential test's, and those an index validated by stat could
miss), and every answer through the index equal to the plain scan's (stdout bytes, stderr,
exit code), each call made with main([...]) with --no-server and with --no-cache. Each
example builds the index first, as ``wiki init`` does: a call that finds none answers by
the scan and leaves the build to a detached builder."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from property_examples import examples
from server_harness import ensure_index, run_cli
from test_server_properties import OPERATIONS, TREE_OPERATIONS, TreeWorld, World, page_text

#: What an index validated by stat could take for unchanged, besides the server test's own.
CACHE_OPERATIONS = [
    "same_tick_rewrite",  # the same size, within the same mtime tick, no utime
    "touch_back",  # touch -r: the mtime set back to an older one
    "rename_over",  # another page renamed over this one
    "inode_reuse",  # deleted and written anew at once: the inode may come back
    "dir_to_symlink",  # a dir replaced by a symlink to another dir
    "chmod_cycle",  # chmod 000, a query, chmod back
]


class CacheWorld(World):
    """The server test's flat vault, with the changes an index validated by stat must see."""

    def apply(self, operation: str) -> None:
        rng = self.rng
        target = self.existing_file()
        if operation == "same_tick_rewrite" and target is not None:
            data = bytearray(target.read_bytes())
            if data:
                data[rng.randrange(len(data))] = ord(rng.choice("abcxyz"))
                target.write_bytes(bytes(data))
        elif operation == "touch_back" and target is not None:
            target.write_bytes(page_text(rng))
            os.utime(target, ns=(1_000_000_000, 1_000_000_000))
        elif operation == "rename_over" and target is not None:
            other = self.existing_file()
            if other is not None and other != target:
                os.replace(other, target)
        elif operation == "inode_reuse" and target is not None:
            size = target.stat().st_size
            target.unlink()
            target.write_bytes(page_text(rng)[:size].ljust(size, b"x"))
        elif operation == "dir_to_symlink":
            dir_path = self.vault / rng.choice(["a", "b"])
            _remove_tree(dir_path)
            os.symlink(self.vault / "store" / rng.choice(["s1", "s2"]), dir_path)
        elif operation == "chmod_cycle" and target is not None:
            target.chmod(0o000)
        else:
            super().apply(operation)


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


#: A few seconds in the default run; ``nox -s properties`` runs ten times as many.
EXAMPLES = examples(15)


def _same_through_the_index(capsysbinary: pytest.CaptureFixture[bytes], argv: list[str]) -> None:
    cached = run_cli(capsysbinary, [*argv, "--no-server"])
    plain = run_cli(capsysbinary, [*argv, "--no-cache"])
    assert cached == plain, argv


def _restore_modes(root: Path) -> None:
    for path in root.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    operations=st.lists(st.sampled_from(OPERATIONS + CACHE_OPERATIONS), min_size=5, max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
@example(operations=["query", "same_tick_rewrite", "touch_back", "rename_over", "inode_reuse"], seed=7)
@example(operations=["query", "dir_to_symlink", "chmod_cycle", "query", "chmod", "write"], seed=11)
def test_every_answer_through_the_index_equals_the_plain_scan(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-cache-"))
    try:
        # Per example: hypothesis shares function fixtures, and each example starts cold.
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        world = CacheWorld(root, random.Random(seed))
        (world.vault / ".mnemosyne.toml").write_text('dirs = ["a", "b", "c"]\n', encoding="utf-8")
        ensure_index(world.vault)
        for operation in operations:
            world.apply(operation)
            for argv in world.queries():
                _same_through_the_index(capsysbinary, argv)
            if operation == "chmod_cycle":
                _restore_modes(world.vault)
                for argv in world.queries():
                    _same_through_the_index(capsysbinary, argv)
    finally:
        _restore_modes(root)
        shutil.rmtree(root)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(operations=st.lists(st.sampled_from(TREE_OPERATIONS), min_size=5, max_size=25), seed=st.integers(0, 2**32 - 1))
@example(operations=["delete", "write", "rename", "tree_config", "rename", "ignore_file"], seed=1_000_000_000)
def test_every_answer_on_a_tree_through_the_index_equals_the_plain_scan(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-cache-tree-"))
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        world = TreeWorld(root, random.Random(seed))
        ensure_index(world.vault)
        for operation in operations:
            world.apply(operation)
            for argv in world.queries():
                _same_through_the_index(capsysbinary, argv)
    finally:
        _restore_modes(root)
        shutil.rmtree(root)


#: Pages that give lint and recall something to say: titles shared across pages and by
#: case, dates valid, invalid and in epoch milliseconds, an unknown constellation, no or
#: broken frontmatter, a heading for a title, bytes that are not UTF-8 or not text.
LINT_PAGES = [
    b"---\ntitle: Alpha\nupdated: 2026-01-02\ntags: [beta]\n---\nalpha text\n",
    b"---\ntitle: ALPHA\nslug: gamma\nupdated: 2026-13-40\nlastmod: 2025-05-05\n---\nother\n",
    b"---\ntitle: alpha\nconstellation: nowhere\ndate: 1700000000000\n---\n",
    b"---\ntitle: Beta\nupdated: 2026-03-04\ntags: alpha\n---\nbeta text\n",
    b"---\ntitle: [unclosed\n---\nbeta\n",
    b"---\ntitle: 7\nupdated: '2026-02-02T10:00'\n---\n# Gamma\n",
    b"# Gamma\n\nno frontmatter, a heading\n",
    b"no frontmatter at all\n",
    b"---\ntitle: Broken \xff bytes\nupdated: 2026-04-04\n---\nbody\n",
    b"---\ntitle: Binary\n---\n\x00\x01\x02",
    b"---\n- a list\n---\n",
    b"---\ntitle: Open\n",
    b"",
]
#: Dirs whose pages lint tells apart as versions (v1, v2, en, fr), copies (a sibling dir
#: of the same bytes), a Docusaurus site's, and a sub-dir of a flat layout.
LINT_DIRS = ["v1", "v2", "en", "fr", "docs", "versioned_docs/version-1.0", "notes", "notes/sub"]
LINT_NAMES = ["one.md", "two.md", "Three.md", ".hidden.md", "four.MD"]
LINT_CONFIGS: list[str | None] = [
    'dirs = ["v1", "v2", "en", "fr", "notes"]\n',
    'dirs = ["v1", "v2", "en", "fr", "docs", "versioned_docs", "notes"]\ndepth = "tree"\n',
    'depth = "tree"\n[lint]\nignore = ["missing-updated"]\n',
    None,  # zero config
]
LINT_OPERATIONS = ["write", "write", "copy", "delete", "chmod", "restore", "config", "query"]


class LintWorld:
    """A vault of pages, their copies and their versions, and the changes made to it."""

    def __init__(self, root: Path, rng: random.Random):
        self.rng = rng
        self.vault = root / "vault"
        for dir_name in LINT_DIRS:
            (self.vault / dir_name).mkdir(parents=True)
        (self.vault / ".mnemosyne.toml").write_text(str(LINT_CONFIGS[0]), encoding="utf-8")
        for _ in range(12):
            self.apply("write")

    def files(self) -> list[Path]:
        return [path for path in self.vault.rglob("*") if path.is_file() and path.name != ".mnemosyne.toml"]

    def apply(self, operation: str) -> None:
        rng = self.rng
        files = self.files()
        target = rng.choice(files) if files else None
        place = self.vault / rng.choice(LINT_DIRS) / rng.choice(LINT_NAMES)
        if operation == "write":
            place.write_bytes(rng.choice(LINT_PAGES))
        elif operation == "copy" and target is not None:
            # The same page under a sibling dir: a copy, or another version of it.
            siblings = [name for name in LINT_DIRS if "/" not in name]
            (self.vault / rng.choice(siblings) / target.name).write_bytes(target.read_bytes())
        elif operation == "delete" and target is not None:
            target.unlink()
        elif operation == "chmod" and target is not None:
            target.chmod(0o000)
        elif operation == "restore":
            _restore_modes(self.vault)
        elif operation == "config":
            config = rng.choice(LINT_CONFIGS)
            if config is None:
                (self.vault / ".mnemosyne.toml").unlink(missing_ok=True)
            else:
                (self.vault / ".mnemosyne.toml").write_text(config, encoding="utf-8")

    def queries(self) -> list[list[str]]:
        rng = self.rng
        vault = str(self.vault)
        flags = rng.choice(
            [
                [],
                ["--json"],
                ["--dir", "notes"],
                ["--select", "duplicate-title,invalid-updated"],
                ["--ignore", "no-frontmatter"],
            ]
        )
        return [
            ["wiki", "lint", *flags, "--vault", vault],
            ["wiki", "recall", rng.choice(["alpha", "BETA", "gam", "a", "ß", "zzz"]), "--vault", vault, "--no-server"],
        ]


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(operations=st.lists(st.sampled_from(LINT_OPERATIONS), min_size=3, max_size=15), seed=st.integers(0, 2**32 - 1))
@example(operations=["copy", "copy", "chmod", "query", "config", "write"], seed=3)
def test_lint_and_recall_through_the_index_equal_their_reading_of_every_page(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """lint and recall answered from what the index keeps of each page (its findings,
    title, digests, recall fields) equal their answers with --no-cache, which read every
    page; the index answers every call (a whole build is made first)."""
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-cache-lint-"))
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        world = LintWorld(root, random.Random(seed))
        ensure_index(world.vault)
        for operation in operations:
            world.apply(operation)
            if operation == "config":
                # Another layout titles pages by another rule: the index is built anew for it.
                ensure_index(world.vault)
            for argv in world.queries():
                cached = run_cli(capsysbinary, argv)
                plain = run_cli(capsysbinary, [*[arg for arg in argv if arg != "--no-server"], "--no-cache"])
                assert cached == plain, argv
    finally:
        _restore_modes(root)
        shutil.rmtree(root)
