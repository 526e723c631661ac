"""What the config and the ignore files decide, and how each dir's names were sorted, kept
in the index by the files' and dirs' stat (``vault.KeptRules``): a call whose files are as
they were parses neither, a dir whose stat is as it was is not listed again, and after any
edit to one of them (the same size, the mtime set back, within the same second as the call
before it; a page added, removed, renamed or swapped for a dir or a symlink) every answer
is still the plain scan's, stdout, stderr and exit code alike.

Each edit is made twice over: with the racy rule as it is (``RACY_NS``: files written a
moment ago are never kept, so every call parses them again) and with it off (``RACY_NS``
0: kept from the first call on, so the stat alone must tell the edit)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from index_harness import build_index
from server_harness import run_cli
from test_startup_imports import rules_vault

from mnemosyne_core import config, page, vault

#: The answers held to the scan's: hits, a miss with its note on the files left out, --json.
QUERIES = (["kestrel", "--paths"], ["zyzzyva"], ["kestrel", "--json"], ["diary", "--paths"])


def _rewrite(path: Path, old: str, new: str) -> None:
    """``old`` replaced by ``new`` in the file, its size kept and its mtime set back to what
    it was: only the ctime (and the inode, for a new file) is left to tell the edit."""
    assert len(old) == len(new)
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _symlinked(path: Path) -> None:
    """The ignore file swapped for a symlink to other rules, which the walk refuses to follow."""
    target = path.parent / "elsewhere.txt"
    target.write_text("Notes/\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(target)


EDITS: dict[str, Callable[[Path], object]] = {
    "config, the same size": lambda root: _rewrite(root / ".mnemosyne.toml", "*.draft.md", "Kestrel.md"),
    "config turns the index off": lambda root: (root / ".mnemosyne.toml").write_text(
        'depth = "tree"\n[cache]\nenabled = false\n', encoding="utf-8"
    ),
    "config removed": lambda root: (root / ".mnemosyne.toml").unlink(),
    ".gitignore, the same size": lambda root: _rewrite(root / ".gitignore", "*.tmp.md", "Archive/"),
    "nested .ignore, the same size": lambda root: _rewrite(root / "Notes" / ".ignore", "private/", "!drafts/"),
    "an ignore file added": lambda root: (root / "Archive" / ".gitignore").write_text("*\n", encoding="utf-8"),
    "an ignore file removed": lambda root: (root / "Notes" / ".ignore").unlink(),
    "an ignore file symlinked": lambda root: _symlinked(root / ".gitignore"),
    "a page the rules leave out added": lambda root: (root / "Archive" / "diary.tmp.md").write_text(
        "diary\n", encoding="utf-8"
    ),
    "a dir the rules leave out added": lambda root: (root / "Notes" / "private" / "more").mkdir(),
    # The names of a dir whose sort is kept (``TreeWalk._replay``): each gives it a new stat.
    "a page added": lambda root: (root / "Notes" / "Kestrel two.md").write_text("kestrel\n", encoding="utf-8"),
    "a page removed": lambda root: (root / "Archive" / "Kestrel.md").unlink(),
    "a page renamed": lambda root: (root / "Notes" / "Kestrel.md").rename(root / "Notes" / "Kestrel moved.md"),
    "a page moved to another dir": lambda root: (root / "Notes" / "Kestrel.md").rename(root / "Archive" / "K.md"),
    "a dir with a page added": lambda root: _page_in_new_dir(root / "Archive" / "new", "Kestrel new.md"),
    "a dir removed": lambda root: shutil.rmtree(root / "Archive"),
    "a page swapped for a symlink": lambda root: _swapped_for_symlink(root / "Notes" / "Kestrel.md"),
    "a page swapped for a dir": lambda root: _swapped_for_dir(root / "Archive" / "Kestrel.md"),
    "a page in a suffix find does not search added": lambda root: (root / "Archive" / "zyzzyva.MD").write_text(
        "zyzzyva\n", encoding="utf-8"
    ),
    "a page added, the dir's mtime set back": lambda root: _mtime_kept(
        root / "Notes", lambda: (root / "Notes" / "Kestrel three.md").write_text("kestrel\n", encoding="utf-8")
    ),
}


def _mtime_kept(dir_path: Path, edit: Callable[[], object]) -> None:
    """``edit`` made in the dir, its mtime then set back: only its ctime tells it."""
    before = dir_path.stat()
    edit()
    os.utime(dir_path, ns=(before.st_atime_ns, before.st_mtime_ns))


#: The edits to a dir's names alone, which a flat layout's listing keeps too.
NAME_EDITS = list(EDITS)[list(EDITS).index("a page added") :]


def _page_in_new_dir(dir_path: Path, name: str) -> None:
    dir_path.mkdir()
    (dir_path / name).write_text("kestrel\n", encoding="utf-8")


def _swapped_for_symlink(path: Path) -> None:
    """The page swapped for a symlink to another page: followed, as a listing follows it."""
    path.unlink()
    path.symlink_to(path.parent.parent / "Archive" / "Kestrel.md")


def _swapped_for_dir(path: Path) -> None:
    """The page swapped for a dir of the same name, with a page inside."""
    path.unlink()
    _page_in_new_dir(path, "inside.md")


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the calls from now on parse: the config file, and ignore rules compiled."""
    parsed: list[str] = []
    load, make = config.load_vault_config, vault._spec

    def load_spied(vault_path: str) -> config.VaultConfig:
        parsed.append("config")
        return load(vault_path)

    def make_spied(lines: list[str]) -> object:
        parsed.append("rules")
        return make(lines)

    monkeypatch.setattr(config, "load_vault_config", load_spied)
    monkeypatch.setattr(vault, "_spec", make_spied)
    return parsed


def _same_as_the_scan(capsysbinary: pytest.CaptureFixture[bytes], root: Path, parsed: list[str]) -> list[str]:
    """Each query's answer through the index held to the plain scan's; what the calls
    through the index parsed."""
    through_index: list[str] = []
    for words in QUERIES:
        argv = ["wiki", "find", *words, "--vault", str(root)]
        del parsed[:]
        cached = run_cli(capsysbinary, [*argv, "--no-server"])
        through_index += parsed
        assert cached == run_cli(capsysbinary, [*argv, "--no-cache"]), argv
    return through_index


@pytest.mark.parametrize("racy_ns", [page.RACY_NS, 0], ids=["racy rule", "no racy window"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_config_or_ignore_file_answers_as_the_scan(
    edit: str,
    racy_ns: int,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = rules_vault(tmp_path / "vault")
    (root / "Archive" / "diary.md").write_text("diary\n", encoding="utf-8")
    monkeypatch.setattr(page, "RACY_NS", racy_ns)
    build_index(root)
    parsed = _parsed(monkeypatch)
    before = _same_as_the_scan(capsysbinary, root, parsed)
    # Kept from the build on; or, all written a moment ago, parsed again by every call.
    assert (before == []) is (racy_ns == 0), before
    EDITS[edit](root)
    _same_as_the_scan(capsysbinary, root, parsed)
    _same_as_the_scan(capsysbinary, root, parsed)  # and once the edit is kept in turn


def _flat_vault(root: Path) -> Path:
    """A flat layout (the default dirs, no exclude): a dir named like a page, a file of
    another suffix, a page in a sub-dir find does not search."""
    for rel_path in ("Notes/Kestrel.md", "Archive/Kestrel.md", "Archive/old.txt", "Notes/sub/zyzzyva.md"):
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text("kestrel notes\n", encoding="ascii")
    (root / "Notes" / "dir.md").mkdir()
    (root / ".mnemosyne.toml").write_text('dirs = ["Notes", "Archive"]\n', encoding="ascii")
    return root


@pytest.mark.parametrize("make_vault", [rules_vault, _flat_vault], ids=["tree with rules", "flat"])
def test_a_warm_call_lists_again_only_the_dirs_whose_names_changed(
    make_vault: Callable[[Path], Path],
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """git's untracked cache: a dir whose stat and ignore files' stat are as kept is not
    listed again, its pages, the dirs it enters and what it passes over taken as the
    listing last sorted them; a page added lists its own dir anew, and no other. The
    answers, a miss's note on the files left out among them, stay the scan's."""
    root = make_vault(tmp_path / "vault")
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(root)
    listed: list[str] = []
    scandir = os.scandir

    def scandir_spied(path: str) -> Any:
        listed.append(os.path.relpath(path, root))
        return scandir(path)

    for edit, words in ((None, "kestrel"), ("a page added", "kestrel"), (None, "kestrel"), (None, "nowhere")):
        if edit is not None:
            EDITS[edit](root)
        argv = ["wiki", "find", words, "--paths", "--vault", str(root)]
        with monkeypatch.context() as spying:
            spying.setattr(os, "scandir", scandir_spied)
            del listed[:]
            cached = run_cli(capsysbinary, [*argv, "--no-server"])
        assert cached == run_cli(capsysbinary, [*argv, "--no-cache"]), (edit, words)
        if words == "kestrel":
            assert sorted(listed) == (["."] if edit is None else [".", "Notes"]), (edit, listed)
    # A miss finds what the layout leaves out among what each dir's kept sort passed over.
    assert not {"Notes", "Archive"} & set(listed), listed


@pytest.mark.parametrize("racy_ns", [page.RACY_NS, 0], ids=["racy rule", "no racy window"])
@pytest.mark.parametrize("edit", NAME_EDITS)
def test_an_edit_to_a_flat_dir_s_names_answers_as_the_scan(
    edit: str, racy_ns: int, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _flat_vault(tmp_path / "vault")
    monkeypatch.setattr(page, "RACY_NS", racy_ns)
    build_index(root)
    parsed = _parsed(monkeypatch)
    _same_as_the_scan(capsysbinary, root, parsed)
    EDITS[edit](root)
    _same_as_the_scan(capsysbinary, root, parsed)
    _same_as_the_scan(capsysbinary, root, parsed)


def _lint_as_the_scan(capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """lint through the index answers as --no-cache does with nothing kept to take: every
    dir changed a moment ago (the racy window wider than time), so its walk asks the rules
    about every name."""
    argv = ["wiki", "lint", "--vault", str(root)]
    cached = run_cli(capsysbinary, argv)
    with monkeypatch.context() as racy:
        racy.setattr(page, "RACY_NS", 10**19)
        assert cached == run_cli(capsysbinary, [*argv, "--no-cache"])


@pytest.mark.parametrize("edit", [None, *EDITS])
def test_lint_through_the_index_takes_what_the_listing_decided_and_answers_as_the_scan(
    edit: str | None, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """lint's walk for the files find never searches asks the listing's decisions (kept or
    just made) about the names the listing asked the rules about, so a warm lint compiles
    no ignore rule; and after any edit its findings are still those of a walk that asks the
    rules about every name."""
    root = rules_vault(tmp_path / "vault")
    (root / "Notes" / "drafts" / "sub").mkdir()
    (root / "Notes" / "drafts" / "sub" / "deep.md").write_text("deep\n", encoding="ascii")
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(root)
    parsed = _parsed(monkeypatch)
    run_cli(capsysbinary, ["wiki", "lint", "--vault", str(root)])
    assert "rules" not in parsed, parsed
    _lint_as_the_scan(capsysbinary, monkeypatch, root)
    if edit is not None:
        EDITS[edit](root)
        _lint_as_the_scan(capsysbinary, monkeypatch, root)
        _lint_as_the_scan(capsysbinary, monkeypatch, root)


#: Names lint asks about that the listing does not ask the rules about, each left out by a
#: rule and a finding were it not: the config's memory dir when another memory dir is
#: lint's (inside, a name in the wrong case that a rule re-includes, as nothing inside an
#: ignored dir is), and a hidden page of a flat layout; and a dir named like a page.
LINT_ONLY_NAMES = {
    "memory dir": (
        'depth = "tree"\nmemory_dir = "Notes/memory"\n',
        {"Notes/.ignore": "memory/\n!memory/LOG.MD\n", "Notes/memory/LOG.MD": "log\n", "Notes/a.md": "a\n"},
    ),
    "flat, hidden page": (
        'dirs = ["Notes"]\nexclude = ["*.draft.md", ".hidden.md"]\n',
        {"Notes/.hidden.md": "h\n", "Notes/.shown.md": "s\n", "Notes/a.md": "a\n"},
    ),
    "a dir named like a page": (
        'depth = "tree"\n',
        {".gitignore": "x.md/\n", "Notes/x.md/in.md": "in\n", "Notes/y.md/in.md": "in\n", "Notes/a.md": "a\n"},
    ),
}


@pytest.mark.parametrize("case", list(LINT_ONLY_NAMES))
def test_lint_asks_the_rules_about_a_name_the_listing_never_asked_about(
    case: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    config_text, files = LINT_ONLY_NAMES[case]
    root = tmp_path / "vault"
    for rel_path, text in {".mnemosyne.toml": config_text, **files}.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text, encoding="ascii")
    monkeypatch.setenv("MNEMOSYNE_MEMORY_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(page, "RACY_NS", 0)
    build_index(root)
    _lint_as_the_scan(capsysbinary, monkeypatch, root)
