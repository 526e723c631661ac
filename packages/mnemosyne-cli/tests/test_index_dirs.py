"""The index's kept dirs (index.py's ``dirs`` table): a call takes a listed dir whose names
and stat keys digest as kept without reading its rows, and every answer stays the plain
scan's over the edits that change what a dir holds or what the layout lists: pages and
dirs added and removed, pages edited, ignore files added, edited and removed at several
depths, the vault's config edited. Pages are taken as old at once (``RACY_NS`` 0), so that
the digests are kept and used from the first call on; every edit changes a page's size, so
the stat alone tells it, as it must without the racy rule."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from index_harness import build_index
from property_examples import examples
from server_harness import ensure_index, run_cli

from mnemosyne_core import page
from mnemosyne_core.index import NoteIndex

DIRS = ("", "a", "a/b", "a/b/c", "d")
WORDS = ("kestrel", "falcon", "drafts", "owl")
CONFIGS = (
    None,
    'depth = "tree"\n',
    'depth = "tree"\nexclude = ["a/b/"]\n',
    'dirs = ["a", "d"]\ndepth = "tree"\n',
    'dirs = ["a", "a/b"]\n',
    'depth = "tree"\nsuffixes = [".md", ".txt"]\n',
)
IGNORES = ("drafts*\n", "*.txt\n", "!keep.md\n*\n", "c/\n", "owl*\n!owl-keep.md\n")
OPERATIONS = ["add_page", "remove_page", "edit_page", "add_dir", "remove_dir", "ignore", "unignore", "config"]


class Vault:
    def __init__(self, root: Path, rng: random.Random):
        self.root, self.rng, self.count = root, rng, 0
        for dir_rel in DIRS:
            (root / dir_rel).mkdir(parents=True, exist_ok=True)
        for _ in range(8):
            self.add_page()

    def pages(self) -> list[Path]:
        return sorted(path for path in self.root.rglob("*") if path.is_file() and not path.name.startswith("."))

    def add_page(self) -> None:
        self.count += 1
        dirs = [path for path in self.root.rglob("*") if path.is_dir()] + [self.root]
        name = (
            f"{self.rng.choice(WORDS)}-{self.rng.choice(['keep', str(self.count)])}{self.rng.choice(['.md', '.txt'])}"
        )
        (self.rng.choice(sorted(dirs)) / name).write_text(f"{self.rng.choice(WORDS)} {self.count}\n", encoding="utf-8")

    def apply(self, operation: str) -> None:
        rng, pages = self.rng, self.pages()
        if operation == "add_page" or not pages:
            self.add_page()
        elif operation == "remove_page":
            rng.choice(pages).unlink()
        elif operation == "edit_page":
            target = rng.choice(pages)
            with target.open("a", encoding="utf-8") as file:
                file.write(f"{rng.choice(WORDS)} more\n")  # a new size: the stat tells it
        elif operation == "add_dir":
            dir_path = self.root / rng.choice(DIRS) / f"{rng.choice(WORDS)}{self.count}"
            dir_path.mkdir(parents=True, exist_ok=True)
            self.count += 1
            (dir_path / "owl-keep.md").write_text(f"owl {self.count}\n", encoding="utf-8")
        elif operation == "remove_dir":
            dir_path = self.root / rng.choice(DIRS[1:])
            shutil.rmtree(dir_path, ignore_errors=True)
            dir_path.mkdir(parents=True, exist_ok=True)
        elif operation in ("ignore", "unignore"):
            ignore = self.root / rng.choice(DIRS) / rng.choice([".gitignore", ".ignore"])
            if operation == "unignore":
                ignore.unlink(missing_ok=True)
            elif ignore.parent.is_dir():
                ignore.write_text(rng.choice(IGNORES) * rng.randint(1, 3), encoding="utf-8")
        elif operation == "config":
            config = rng.choice(CONFIGS)
            if config is None:
                (self.root / ".mnemosyne.toml").unlink(missing_ok=True)
            else:
                (self.root / ".mnemosyne.toml").write_text(config, encoding="utf-8")

    def queries(self) -> list[list[str]]:
        flags = ["--vault", str(self.root), "--paths"]
        return [["wiki", "find", word, *flags] for word in WORDS] + [["wiki", "find", "owl", *flags, "--dir", "a"]]


@pytest.mark.slow
@settings(max_examples=examples(12), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(operations=st.lists(st.sampled_from(OPERATIONS), min_size=4, max_size=20), seed=st.integers(0, 2**32 - 1))
@example(operations=["ignore", "edit_page", "config", "remove_dir", "unignore", "add_dir"], seed=3)
def test_every_answer_through_kept_dirs_equals_the_plain_scan(
    operations: list[str], seed: int, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "RACY_NS", 0)
    root = Path(tempfile.mkdtemp(prefix="mnemosyne-dirs-"))
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        vault = Vault(root / "vault", random.Random(seed))
        ensure_index(vault.root)
        for operation in ["query", *operations]:
            if operation != "query":
                vault.apply(operation)
            for argv in vault.queries():
                cached = run_cli(capsysbinary, [*argv, "--no-server"])
                assert cached == run_cli(capsysbinary, [*argv, "--no-cache"]), (operation, argv)
    finally:
        shutil.rmtree(root)


def _dirs_compared_row_by_row(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The dirs whose stored rows the calls from now on read (``NoteIndex.dir_stat_rows``)."""
    compared: list[str] = []
    rows_of = NoteIndex.dir_stat_rows

    def spied(self: NoteIndex, dir_rel: str) -> object:
        compared.append(dir_rel)
        return rows_of(self, dir_rel)

    monkeypatch.setattr(NoteIndex, "dir_stat_rows", spied)
    return compared


def test_a_dir_kept_unchanged_is_taken_without_reading_its_rows(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder keeps every dir it read whole; a call where nothing changed reads no
    dir's rows; a page edited since makes its dir alone compared row by row."""
    monkeypatch.setattr(page, "RACY_NS", 0)
    for dir_name in ("atlas", "hermes"):
        (tmp_path / dir_name).mkdir()
        (tmp_path / dir_name / "kestrel.md").write_text(f"kestrel in {dir_name}\n", encoding="utf-8")
    build_index(tmp_path)
    compared = _dirs_compared_row_by_row(monkeypatch)
    argv = ["wiki", "find", "kestrel", "--paths", "--vault", str(tmp_path), "--no-server"]
    assert run_cli(capsysbinary, argv) == (0, b"atlas/kestrel.md\nhermes/kestrel.md\n", "")
    assert compared == []
    with (tmp_path / "hermes" / "kestrel.md").open("a", encoding="utf-8") as file:
        file.write("falcon\n")
    assert run_cli(capsysbinary, [*argv[:2], "falcon", *argv[3:]]) == (0, b"hermes/kestrel.md\n", "")
    assert compared == ["hermes"]
    assert run_cli(capsysbinary, [*argv[:2], "falcon", *argv[3:]]) == (0, b"hermes/kestrel.md\n", "")
    assert compared == ["hermes"]  # kept again by the call that read it


def test_a_racy_page_keeps_its_dir_compared_row_by_row(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's racy rule: a page changed within ``RACY_NS`` of its read is read again by every
    call, so its dir is never taken whole."""
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "kestrel.md").write_text("kestrel\n", encoding="utf-8")
    build_index(tmp_path)  # a page written a moment ago: racy
    compared = _dirs_compared_row_by_row(monkeypatch)
    argv = ["wiki", "find", "kestrel", "--paths", "--vault", str(tmp_path), "--no-server"]
    for _ in range(2):
        assert run_cli(capsysbinary, argv) == (0, b"atlas/kestrel.md\n", "")
    assert compared == ["atlas", "atlas"]


def test_a_dir_kept_by_a_flat_listing_still_has_its_ignore_files_in_a_tree(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flat listing skips hidden names, yet the dir it keeps still names its ignore files:
    when the config turns to a tree while the dir stays as it was, the tree reads those
    files, and a page they exclude is not found."""
    monkeypatch.setattr(page, "RACY_NS", 0)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / ".ignore").write_text("drafts*\n", encoding="utf-8")
    (tmp_path / "a" / "b" / "drafts-9.md").write_text("drafts 9\n", encoding="utf-8")
    (tmp_path / "falcon.md").write_text("falcon\n", encoding="utf-8")
    config = tmp_path / ".mnemosyne.toml"
    config.write_text('dirs = ["a", "a/b"]\n', encoding="utf-8")
    argv = ["wiki", "find", "drafts", "--paths", "--vault", str(tmp_path)]
    ensure_index(tmp_path)
    assert run_cli(capsysbinary, [*argv, "--no-server"]) == (0, b"a/b/drafts-9.md\n", "")
    config.write_text('depth = "tree"\n', encoding="utf-8")
    plain = run_cli(capsysbinary, [*argv, "--no-cache"])
    assert plain[:2] == (1, b"")
    assert "1 excluded by a/.ignore" in plain[2]
    assert run_cli(capsysbinary, [*argv, "--no-server"]) == plain
